//! Benchmarks of the analysis core on a generated heap (`heaptui_testkit::gen`):
//! parse, graph build, dominators + retained sizes, and petgraph's
//! `simple_fast` (Cooper–Harvey–Kennedy) dominators on the same graph as a
//! baseline. `cargo bench --bench analysis`; set `HEAPTUI_BENCH_OBJECTS`
//! for another heap size (default 1 000 000). petgraph's algorithm is
//! iterative-quadratic in the worst case, so the side-by-side pair runs on a
//! heap a tenth of that size.

use std::path::Path;
use std::sync::OnceLock;

use heaptui_core::graph::{DominatorTree, HeapGraph};
use heaptui_core::model::Model;
use heaptui_core::model::ObjectIdx;
use heaptui_core::progress::Progress;
use heaptui_core::testing::parse_text;
use heaptui_testkit::gen::{generate_bytes, GenOptions};

fn main() {
    divan::main();
}

fn objects() -> u64 {
    std::env::var("HEAPTUI_BENCH_OBJECTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000)
}

fn text() -> &'static [u8] {
    static TEXT: OnceLock<Vec<u8>> = OnceLock::new();
    TEXT.get_or_init(|| {
        generate_bytes(&GenOptions {
            objects: objects(),
            seed: 1,
        })
    })
}

fn dump() -> Model {
    parse_text(Path::new("bench.txt"), text()).expect("generated dumps parse")
}

fn graph() -> &'static HeapGraph {
    static GRAPH: OnceLock<HeapGraph> = OnceLock::new();
    GRAPH.get_or_init(|| HeapGraph::build(dump()))
}

/// The smaller heap of the side-by-side comparison with petgraph.
fn small_graph() -> &'static HeapGraph {
    static GRAPH: OnceLock<HeapGraph> = OnceLock::new();
    GRAPH.get_or_init(|| {
        let text = generate_bytes(&GenOptions {
            objects: objects() / 10,
            seed: 1,
        });
        HeapGraph::build(parse_text(Path::new("small.txt"), &text).unwrap())
    })
}

#[divan::bench(sample_count = 5)]
fn parse(bencher: divan::Bencher) {
    let bytes = text();
    bencher
        .counter(divan::counter::BytesCount::new(bytes.len()))
        .bench(|| parse_text(Path::new("bench.txt"), bytes).unwrap());
}

#[divan::bench(sample_count = 5)]
fn graph_build(bencher: divan::Bencher) {
    bencher.with_inputs(dump).bench_values(HeapGraph::build);
}

#[divan::bench(sample_count = 5)]
fn dominators_and_retained(bencher: divan::Bencher) {
    let g = graph();
    bencher.bench(|| DominatorTree::compute(g, &Progress::new()).unwrap());
}

#[divan::bench(sample_count = 5)]
fn small_heap_dominators(bencher: divan::Bencher) {
    let g = small_graph();
    bencher.bench(|| DominatorTree::compute(g, &Progress::new()).unwrap());
}

/// The same dominator problem solved by petgraph (super-root as node n).
#[divan::bench(sample_count = 3)]
fn small_heap_petgraph_simple_fast(bencher: divan::Bencher) {
    use petgraph::graph::{DiGraph, NodeIndex};
    let g = small_graph();
    let n = g.objects();
    let mut pg: DiGraph<(), ()> =
        DiGraph::with_capacity(n + 1, g.dump.refs.edges() + g.strong_roots.len());
    for _ in 0..=n {
        pg.add_node(());
    }
    for u in 0..n as u32 {
        for v in g.refs(ObjectIdx(u)) {
            pg.add_edge(NodeIndex::new(u as usize), NodeIndex::new(v.index()), ());
        }
    }
    for &r in &g.strong_roots {
        pg.add_edge(NodeIndex::new(n), NodeIndex::new(r.index()), ());
    }
    bencher.bench(|| petgraph::algo::dominators::simple_fast(&pg, NodeIndex::new(n)));
}
