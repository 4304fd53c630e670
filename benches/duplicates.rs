//! Duplicate detection (docs/duplicates.md) on a generated heap (`heaptui_testkit::gen`: duplicate
//! lists of duplicate arrays of duplicate strings, shared children, cyclic
//! duplicates, delegates into one huge strongly connected component):
//! full detection including additional bytes and held duplicates, and the
//! trivial mode. `cargo bench --bench duplicates`; `HEAPTUI_BENCH_OBJECTS`
//! sets the heap size (default 1 000 000).

use std::path::Path;
use std::sync::OnceLock;

use heaptui_core::graph::duplicates::{find_duplicates, DuplicateMode, DuplicateOptions};
use heaptui_core::graph::{DominatorTree, HeapGraph};
use heaptui_core::progress::Progress;
use heaptui_core::testing::parse_text;
use heaptui_testkit::gen::{generate_bytes, GenOptions};

fn main() {
    divan::main();
}

fn heap() -> &'static (HeapGraph, DominatorTree) {
    static HEAP: OnceLock<(HeapGraph, DominatorTree)> = OnceLock::new();
    HEAP.get_or_init(|| {
        let objects = std::env::var("HEAPTUI_BENCH_OBJECTS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1_000_000);
        let text = generate_bytes(&GenOptions { objects, seed: 1 });
        let dump = parse_text(Path::new("bench.txt"), &text).expect("generated dumps parse");
        let graph = HeapGraph::build(dump);
        let dom = DominatorTree::compute(&graph, &Progress::new()).unwrap();
        (graph, dom)
    })
}

fn run(mode: DuplicateMode) -> usize {
    let (graph, dom) = heap();
    let options = DuplicateOptions {
        mode,
        budget_per_type: None,
    };
    find_duplicates(graph, dom, &options, &Progress::new())
        .unwrap()
        .sets
        .len()
}

#[divan::bench(sample_count = 5)]
fn full() -> usize {
    run(DuplicateMode::All)
}

#[divan::bench(sample_count = 5)]
fn trivial() -> usize {
    run(DuplicateMode::Trivial)
}
