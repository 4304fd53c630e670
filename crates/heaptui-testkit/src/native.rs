//! Shared by the native-format tests: comparing an import with the text
//! conversion of the same heap, and reading gzipped real dumps.

use heaptui_core::model::Model;
use heaptui_core::model::ObjectIdx;

/// Objects (id, type, size, references), roots, and each object's
/// immediate dominator and retained size, compared by id between a native
/// import and the text conversion of the same heap. Type names are
/// compared with runs of blanks collapsed (the text format splits on them).
pub fn compare_with_text(native: Model, text: Model) -> Vec<String> {
    use heaptui_core::analysis::Analysis;
    use heaptui_core::graph::duplicates::DuplicateOptions;
    use heaptui_core::progress::Progress;
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut bad = Vec::new();
    if native.objects() != text.objects() || native.total_bytes() != text.total_bytes() {
        bad.push(format!(
            "objects {} vs {}, bytes {} vs {}",
            native.objects(),
            text.objects(),
            native.total_bytes(),
            text.total_bytes()
        ));
    }
    let opts = DuplicateOptions::default();
    let n = Analysis::from_dump(native, &opts, &Progress::new()).unwrap();
    let t = Analysis::from_dump(text, &opts, &Progress::new()).unwrap();
    let (nd, td) = (n.dump(), t.dump());
    let roots = |d: &Model| {
        let mut r: Vec<u64> = d
            .roots
            .iter()
            .map(|r| d.ids.get(r.object.index()))
            .collect();
        r.sort();
        r
    };
    if roots(nd) != roots(td) {
        bad.push("roots differ".into());
    }
    let id_of = |d: &Model, o: u32| (o != u32::MAX).then(|| d.ids.try_get(o as usize));
    for o in 0..nd.objects() as u32 {
        let id = nd.ids.get(o as usize);
        let Some(p) = td.index_of(id) else {
            bad.push(format!("{id:x} missing from the text"));
            continue;
        };
        let refs = |d: &Model, x: u32| -> Vec<u64> {
            d.refs
                .neighbors(x)
                .iter()
                .map(|r| d.ids.get(r as usize))
                .collect()
        };
        let row = |a: &Analysis, d: &Model, x: u32| {
            let x = x as usize;
            (
                squash(d.type_name(ObjectIdx(x as u32))),
                d.sizes.get(x),
                refs(d, x as u32),
                a.dom.retained_bytes(x),
                id_of(d, a.dom.idom.get(x)),
            )
        };
        let (mut a, b) = (row(&n, nd, o), row(&t, td, p.raw()));
        // The conversions name every V8 closure `(closure)`; heaptui names
        // it by its function (`handleMessage()`, `(anonymous)()`).
        if b.0 == "(closure)" && a.0.contains("()") {
            a.0 = b.0.clone();
        }
        if a != b && bad.len() < 20 {
            bad.push(format!("{id:x}: {a:?} vs {b:?}"));
        }
    }
    bad
}

pub fn gunzip(path: &std::path::Path) -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_end(&mut out)
        .unwrap();
    out
}
