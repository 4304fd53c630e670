//! Times the native importers alone (no analysis), one import per file:
//!
//!     cargo bench --bench import -- /tmp/big.hprof /tmp/big.heapsnapshot
//!
//! Without files it imports the small fixtures (a smoke run). Wrap it in
//! `/usr/bin/time -v` for CPU time and peak memory of the import alone; the
//! big files are made by `scripts/make_big_hprof.sh` and
//! `scripts/make_big_heapsnapshot.js` (never committed).

use std::path::PathBuf;
use std::time::Instant;

use heaptui::import::import_file;
use heaptui::progress::Progress;

fn main() {
    let mut files: Vec<PathBuf> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .map(PathBuf::from)
        .collect();
    if files.is_empty() {
        let here = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        files = [
            "leaky.hprof.gz",
            "node_leak.heapsnapshot.gz",
            "perfview_test1.gcdump",
        ]
        .iter()
        .map(|f| here.join(f))
        .collect();
    }
    for f in &files {
        let t = Instant::now();
        let model = match import_file(f, &Progress::new()) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("{}: {e}", f.display());
                std::process::exit(2);
            }
        };
        let s = t.elapsed().as_secs_f64();
        let mb = model.file_bytes as f64 / 1e6;
        println!(
            "{}: {} objects, {} references, {:.0} MB in {s:.2} s wall ({:.3} GB/s)",
            f.display(),
            model.ids.len(),
            model.refs.targets.len(),
            mb,
            mb / 1e3 / s
        );
    }
}
