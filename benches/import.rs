//! Times the native importers alone (no analysis), one import per file:
//!
//!     cargo bench --bench import -- /tmp/big.hprof /tmp/big.heapsnapshot
//!
//! Without files it imports the small fixtures (a smoke run). Wrap it in
//! `/usr/bin/time -v` for CPU time and peak memory of the import alone; the
//! big files are made by `scripts/make_big_hprof.sh` and
//! `scripts/make_big_heapsnapshot.js` (never committed).
//!
//! With `--graph` the heap graph (retainers, strong roots) is built after
//! each import too and timed on its own: parse + graph, the docs/performance.md stage,
//! whose peak memory must not grow with `RAYON_NUM_THREADS`.

use std::path::PathBuf;
use std::time::Instant;

use heaptui_core::graph::HeapGraph;
use heaptui_core::import::import_file;
use heaptui_core::progress::Progress;

fn main() {
    // Stage and phase spans go to the file `HEAPTUI_LOG` names.
    heaptui_core::log::init();
    let graph = std::env::args().any(|a| a == "--graph");
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
        let (t, cpu) = (Instant::now(), cpu_seconds());
        let model = match import_file(f, &Progress::new()) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("{}: {e}", f.display());
                std::process::exit(2);
            }
        };
        let s = t.elapsed().as_secs_f64();
        let cpu = cpu_seconds() - cpu;
        let mb = model.file_bytes as f64 / 1e6;
        println!(
            "{}: {} objects, {} references, {:.0} MB in {s:.2} s wall ({:.3} GB/s), {cpu:.2} s CPU",
            f.display(),
            model.ids.len(),
            model.refs.targets.len(),
            mb,
            mb / 1e3 / s
        );
        if graph {
            let (t, cpu) = (Instant::now(), cpu_seconds());
            let g = HeapGraph::build(model);
            println!(
                "  graph: {} retainers, {} strong roots in {:.2} s wall, {:.2} s CPU",
                g.retainers.values(),
                g.strong_roots.len(),
                t.elapsed().as_secs_f64(),
                cpu_seconds() - cpu
            );
        }
    }
}

/// User and system CPU time of the whole process so far (every thread),
/// from `/proc/self/stat` (clock ticks of 10 ms); 0 where there is none.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name, which ends with the last `)`: utime
    // and stime are the 12th and 13th.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let ticks: f64 = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|f| f.parse::<f64>().ok())
        .sum();
    ticks / 100.0
}
