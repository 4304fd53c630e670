//! Object sizes against the JVM's own class histogram: each
//! `fixtures/layouts/NAME.hprof.gz` was dumped by OpenJDK 17 from
//! `fixtures/Layouts.java` at the same idle moment as
//! `NAME.histo.txt` (`jcmd PID GC.class_histogram`), by
//! `scripts/make_layout_pair.sh` under three layouts: `compressed` (the
//! default flags: compressed oops and class pointers), `oops`
//! (`-XX:-UseCompressedOops`) and `uncompressed` (`-XX:-UseCompressedOops
//! -XX:-UseCompressedClassPointers`). With no option, every class the dump
//! holds has the histogram's instance count and bytes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use heaptui_core::import::{import_file, import_file_with, ImportOptions};
use heaptui_core::model::{Model, ObjectIdx};
use heaptui_core::progress::Progress;

/// Left out of the comparison:
/// - `java.lang.Class`: the histogram counts every class mirror, the dump
///   holds the classes it dumps (sized from their statics, docs/hprof-layout.md);
/// - `jdk.internal.ref.CleanerImpl$PhantomCleanableRef`: each jcmd
///   connection registers its socket with the common Cleaner; between the
///   histogram and the dump the cleaner thread runs the cleanables of the
///   first connection (the histogram counts 5, the dump holds 1).
const ASIDE: [&str; 2] = [
    "java.lang.Class",
    "jdk.internal.ref.CleanerImpl$PhantomCleanableRef",
];

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/layouts")
        .join(name)
}

/// A class name as the histogram writes it, as heaptui writes it:
/// `[Ljava.lang.Object;` → `java.lang.Object[]`, `[[I` → `int[][]`, a
/// hidden class `Foo$$Lambda$1/0x…` → `Foo$$Lambda$1+0x…` (its name in
/// the dump).
fn java_name(jvm: &str) -> String {
    let dims = jvm.bytes().take_while(|&b| b == b'[').count();
    let rest = &jvm[dims..];
    let base = if dims == 0 {
        rest.to_string()
    } else {
        match rest {
            "Z" => "boolean".into(),
            "C" => "char".into(),
            "F" => "float".into(),
            "D" => "double".into(),
            "B" => "byte".into(),
            "S" => "short".into(),
            "I" => "int".into(),
            "J" => "long".into(),
            _ => rest
                .strip_prefix('L')
                .and_then(|r| r.strip_suffix(';'))
                .unwrap_or(rest)
                .to_string(),
        }
    };
    base.replace("/0x", "+0x") + &"[]".repeat(dims)
}

/// `jcmd PID GC.class_histogram`: name → (instances, bytes).
fn histogram(name: &str) -> HashMap<String, (u64, u64)> {
    let text = std::fs::read_to_string(fixture(name)).unwrap();
    let mut out = HashMap::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() >= 4 && f[0].ends_with(':') && f[0] != "Total" {
            if let (Ok(n), Ok(b)) = (f[1].parse(), f[2].parse()) {
                out.insert(java_name(f[3]), (n, b));
            }
        }
    }
    assert!(out.len() > 100, "{name}: {} classes read", out.len());
    out
}

/// The dump's types: name → (instances, bytes).
fn types(m: &Model) -> HashMap<String, (u64, u64)> {
    let mut out: HashMap<String, (u64, u64)> = HashMap::new();
    for o in 0..m.objects() {
        let e = out
            .entry(m.type_name(ObjectIdx(o as u32)).to_string())
            .or_default();
        e.0 += 1;
        e.1 += m.sizes.get(o);
    }
    out
}

/// The classes whose count or bytes differ from the histogram's, and how
/// many were compared.
fn differences(m: &Model, histo: &HashMap<String, (u64, u64)>) -> (Vec<String>, usize) {
    let mut bad = Vec::new();
    let mut compared = 0;
    for (name, got) in types(m) {
        if ASIDE.contains(&name.as_str()) {
            continue;
        }
        compared += 1;
        let want = histo.get(&name).copied();
        if want != Some(got) {
            bad.push(format!("{name}: heaptui {got:?}, JVM {want:?}"));
        }
    }
    bad.sort();
    (bad, compared)
}

fn layout_detail(m: &Model) -> &str {
    &m.details
        .iter()
        .find(|(k, _)| k == "object layout")
        .expect("an object layout detail")
        .1
}

fn check(name: &str, layout: &str) {
    let m = import_file(&fixture(&format!("{name}.hprof.gz")), &Progress::new()).unwrap();
    assert_eq!(m.diagnostics.total(), 0, "{:?}", m.diagnostics.messages);
    let detail = layout_detail(&m);
    assert!(detail.starts_with(layout), "{name}: {detail}");
    assert!(detail.contains("(from the dump: "), "{name}: {detail}");
    let histo = histogram(&format!("{name}.histo.txt"));
    let (bad, compared) = differences(&m, &histo);
    assert!(compared > 250, "{name}: {compared} classes");
    assert!(bad.is_empty(), "{name}: {} differ: {bad:#?}", bad.len());
    // The program's own classes are all there, the padded one with its
    // 128 bytes on either side.
    let t = types(&m);
    for class in [
        "Layouts$Point",
        "Layouts$Mixed",
        "Layouts$Deeper",
        "Layouts$Empty",
        "Layouts$Single",
        "Layouts$Worker",
        "Layouts$Point[]",
        "long[]",
    ] {
        assert!(t.contains_key(class), "{name}: no {class}");
    }
    assert_eq!(t["Layouts$Padded"], (7, 7 * 280), "{name}");
}

#[test]
fn default_flags_compressed_oops_and_class_pointers() {
    check(
        "compressed",
        "compressed oops, 12-byte headers, 8-byte alignment",
    );
}

#[test]
fn uncompressed_oops_with_compressed_class_pointers() {
    check(
        "oops",
        "8-byte references, 12-byte headers, 8-byte alignment",
    );
}

#[test]
fn uncompressed_oops_and_class_pointers() {
    check(
        "uncompressed",
        "8-byte references, 16-byte headers, 8-byte alignment",
    );
}

/// The options that force a model still do: the identifier size's model
/// (MAT's: 16-byte headers, 8-byte references) and compressed references'.
#[test]
fn forced_models_override_the_evidence() {
    let path = fixture("compressed.hprof.gz");
    let histo = histogram("compressed.histo.txt");
    let model = ImportOptions {
        model_sizes: true,
        ..ImportOptions::default()
    };
    let m = import_file_with(&path, &model, &Progress::new()).unwrap();
    assert!(layout_detail(&m).contains("as forced"));
    let t = types(&m);
    // Two ints: 16 + 4 + 4 under the 8-byte-id model, 16 in the JVM.
    assert_eq!(t["Layouts$Point"], (7, 7 * 24));
    let (bad, _) = differences(&m, &histo);
    assert!(bad.len() > 200, "{}", bad.len());
    let compressed = ImportOptions {
        compressed_refs: true,
        ..ImportOptions::default()
    };
    let m = import_file_with(&path, &compressed, &Progress::new()).unwrap();
    let t = types(&m);
    assert_eq!(t["Layouts$Point"], (7, 7 * 24));
    // The model cannot see @Contended's padding: 12 + 8, where the JVM
    // has 280.
    assert_eq!(t["Layouts$Padded"], (7, 7 * 24));
}

#[test]
fn histogram_names_read_as_heaptui_writes_them() {
    assert_eq!(java_name("[Ljava.lang.Object;"), "java.lang.Object[]");
    assert_eq!(java_name("[[I"), "int[][]");
    assert_eq!(java_name("[B"), "byte[]");
    assert_eq!(
        java_name("java.util.HashMap$Node"),
        "java.util.HashMap$Node"
    );
    assert_eq!(
        java_name("Foo$$Lambda$1/0x0000000800c0a000"),
        "Foo$$Lambda$1+0x0000000800c0a000"
    );
}
