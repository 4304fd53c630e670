//! Writes any heap heaptui opens as a .NET gcdump, for timing the gcdump
//! importer on a large file (no .NET runtime is needed):
//!
//!     cargo run --release --example to_gcdump -- /tmp/big.heapsnapshot /tmp/big.gcdump
//!
//! Node `i` is object `i` (its type, shallow size and references in order);
//! one more node, `[.NET Roots]`, is the graph's root, and its children are
//! the heap's roots. A type's size is that of its first object (a node of
//! that size stores none, as in dumps `dotnet-gcdump` writes). Importing the
//! result gives the same objects, sizes, references and roots (ids become
//! node numbers), so its analysis can be checked against the source's.

use std::path::PathBuf;

use heaptui_core::import::import_file;
use heaptui_core::progress::Progress;
use heaptui_testkit::gcdump::Writer;

fn main() {
    let args: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    let [input, output] = &args[..] else {
        eprintln!("usage: to_gcdump HEAP OUT.gcdump");
        std::process::exit(2);
    };
    let m = match import_file(input, &Progress::new()) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("{}: {e}", input.display());
            std::process::exit(2);
        }
    };
    let n = m.objects();
    let size = |o: usize| i32::try_from(m.sizes.get(o)).unwrap_or(i32::MAX);
    // Type 0 is PerfView's UNDEFINED; heap type t is gcdump type t + 1.
    let mut types = vec![("UNDEFINED".to_string(), 0)];
    types.extend(m.type_names.iter().map(|t| (t.to_string(), -1)));
    for o in 0..n {
        let t = &mut types[m.types.get(o).index() + 1].1;
        if *t < 0 {
            *t = size(o);
        }
    }
    for t in &mut types {
        t.1 = t.1.max(0);
    }
    let roots_type = types.len() as u32;
    types.push(("[.NET Roots]".into(), 0));
    let mut w = Writer::new(types);
    for o in 0..n {
        let children = m.refs.neighbors(o as u32).iter();
        w.node(m.types.get(o).index() as u32 + 1, size(o), children);
    }
    let mut roots: Vec<u32> = m.roots.iter().map(|r| r.object.0).collect();
    roots.sort_unstable();
    roots.dedup();
    w.node(roots_type, 0, roots.into_iter());
    let bytes = w.finish(n as u32, (1.0, 1.0));
    if let Err(e) = std::fs::write(output, &bytes) {
        eprintln!("{}: {e}", output.display());
        std::process::exit(1);
    }
    println!(
        "{}: {n} objects, {} references, {} roots, {} bytes",
        output.display(),
        m.refs.targets.len(),
        m.roots.len(),
        bytes.len()
    );
}
