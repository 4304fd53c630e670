//! The bounds of README's "Bad input", counted: for each format the worst
//! shapes found (long superclass chains and cycles, one id in many records,
//! many types, every object a root, deep chains) are crafted here, imported,
//! and the peak of the memory allocated during the import is held against
//! the file's size. Memory is counted by this binary's allocator, not
//! measured from the outside, and no test reads a clock. A binary of its
//! own: its allocator counts the whole process.
#![allow(unsafe_code)] // a counting global allocator

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use heaptui_core::import::import_bytes;
use heaptui_core::model::Model;
use heaptui_core::work;

/// The system allocator, counting the bytes held and their peak.
struct Counting;

static HELD: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(n: usize) {
    let now = HELD.fetch_add(n, Ordering::Relaxed) + n;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        System.dealloc(p, layout);
        HELD.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new: usize) -> *mut u8 {
        let q = System.realloc(p, layout, new);
        if !q.is_null() {
            HELD.fetch_sub(layout.size(), Ordering::Relaxed);
            grew(new);
        }
        q
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// One test at a time: the peak is the whole process's, so every test
/// holds this from its start (its input is made while no other runs).
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// The peak of the bytes allocated while `f` runs, above those held before.
fn peak_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = HELD.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let out = f();
    (out, PEAK.load(Ordering::Relaxed) - before)
}

/// Imports `bytes` (named `name`, which picks the format) and checks that
/// the import's peak memory stays within `ratio` times the file's size,
/// plus 8 MiB for the fixed tables (thread pools, the id index's least
/// size). Returns the model.
fn import_within(name: &str, bytes: &[u8], ratio: usize) -> Model {
    let (m, peak) = peak_of(|| import_bytes(Path::new(name), bytes));
    let m = m.unwrap_or_else(|e| panic!("{name}: {e}"));
    let bound = ratio * bytes.len() + (8 << 20);
    eprintln!(
        "{name}: {} bytes, peak {peak} bytes ({:.1} × the file)",
        bytes.len(),
        peak as f64 / bytes.len() as f64
    );
    assert!(
        peak <= bound,
        "{name}: {} bytes took a peak of {peak} bytes, past {ratio} × the file (+ 8 MiB)",
        bytes.len()
    );
    m
}

/// Runs the whole analysis on `m` (what `report` runs after the import)
/// and checks that the units of work counted since `since` (the import's
/// too, when `since` was read before it) stay within `k` times the file's
/// size, plus 64 Ki units for the fixed tables. Returns the units.
fn analysed_within(name: &str, m: Model, file: usize, since: u64, k: u64) -> u64 {
    use heaptui_core::analysis::pipeline;
    use heaptui_core::graph::duplicates::DuplicateOptions;
    let progress = heaptui_core::progress::Progress::new();
    pipeline::analyse(m, 0, &DuplicateOptions::default(), &progress, &mut |_| true)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let units = work::units() - since;
    eprintln!(
        "{name}: {file} bytes, {units} units of work ({:.1} × the file), {} budgeted in all",
        units as f64 / file as f64,
        work::budgeted_units(),
    );
    assert!(
        units <= k * file as u64 + (1 << 16),
        "{name}: {file} bytes took {units} units of work, past {k} × the file (+ 64 Ki)"
    );
    units
}

/// The bounds of docs/bounds.md on work: units counted by
/// `heaptui_core::work` over the import and the whole analysis, per byte of
/// the file (a text dump spends about one unit per byte on its objects'
/// bytes; the binary formats pack more objects and references a byte).
const TEXT_WORK: u64 = 4;
const HPROF_WORK: u64 = 4;
const V8_WORK: u64 = 4;
const GCDUMP_WORK: u64 = 4;

/// The bounds of README's "Bad input" (docs/bounds.md): an import's peak
/// memory, as a multiple of the file it reads (plus 8 MiB). The file's own
/// bytes count once here (the tests hand the importer a copy; a file on
/// disk is mapped instead).
const TEXT: usize = 16;
const HPROF: usize = 12;
const V8: usize = 8;
const GCDUMP: usize = 20;

// ------------------------------------------------------------------ HPROF

/// A minimal HPROF writer with 8-byte ids (tests/core/hprof.rs has the full one).
struct Hprof {
    out: Vec<u8>,
    seg: Vec<u8>,
}

const OBJECT: u8 = 2;

impl Hprof {
    fn new() -> Hprof {
        let mut out = b"JAVA PROFILE 1.0.2\0".to_vec();
        out.extend(8u32.to_be_bytes());
        out.extend(0u64.to_be_bytes());
        Hprof {
            out,
            seg: Vec::new(),
        }
    }

    fn record(&mut self, tag: u8, body: &[u8]) {
        self.out.push(tag);
        self.out.extend(0u32.to_be_bytes());
        self.out.extend((body.len() as u32).to_be_bytes());
        self.out.extend(body);
    }

    fn string(&mut self, id: u64, text: &str) {
        let mut b = id.to_be_bytes().to_vec();
        b.extend(text.as_bytes());
        self.record(0x01, &b);
    }

    fn load_class(&mut self, class: u64, name: u64) {
        let mut b = 1u32.to_be_bytes().to_vec();
        b.extend(class.to_be_bytes());
        b.extend(0u32.to_be_bytes());
        b.extend(name.to_be_bytes());
        self.record(0x02, &b);
    }

    /// A class dump with instance fields `fields` (name string id, type).
    fn class_dump(&mut self, id: u64, sup: u64, loader: u64, fields: &[(u64, u8)]) {
        self.seg.push(0x20);
        self.seg.extend(id.to_be_bytes());
        self.seg.extend(0u32.to_be_bytes());
        for v in [sup, loader, 0, 0, 0, 0] {
            self.seg.extend(v.to_be_bytes());
        }
        self.seg.extend(0u32.to_be_bytes()); // instance size
        self.seg.extend(0u16.to_be_bytes()); // constant pool
        self.seg.extend(0u16.to_be_bytes()); // statics
        self.seg.extend((fields.len() as u16).to_be_bytes());
        for &(name, t) in fields {
            self.seg.extend(name.to_be_bytes());
            self.seg.push(t);
        }
    }

    fn instance(&mut self, id: u64, class: u64, data: &[u8]) {
        self.seg.push(0x21);
        self.seg.extend(id.to_be_bytes());
        self.seg.extend(0u32.to_be_bytes());
        self.seg.extend(class.to_be_bytes());
        self.seg.extend((data.len() as u32).to_be_bytes());
        self.seg.extend(data);
    }

    fn root(&mut self, id: u64) {
        self.seg.push(0xff);
        self.seg.extend(id.to_be_bytes());
    }

    fn finish(mut self) -> Vec<u8> {
        let seg = std::mem::take(&mut self.seg);
        self.record(0x1c, &seg);
        self.record(0x2c, &[]);
        self.out
    }
}

/// Classes 1..=n, class k extending class k - 1 (class 1 extending class n
/// where `cycle`), each with one object field; one instance of the last
/// class holding every inherited field, pointing at itself.
fn superclass_chain(n: u64, cycle: bool) -> Vec<u8> {
    let mut h = Hprof::new();
    h.string(1, "f");
    for k in 1..=n {
        h.string(1000 + k, &format!("C{k}"));
        h.load_class(k << 8, 1000 + k);
    }
    for k in 1..=n {
        let sup = match k {
            1 if cycle => n << 8,
            1 => 0,
            k => (k - 1) << 8,
        };
        h.class_dump(k << 8, sup, 0, &[(1, OBJECT)]);
    }
    let me = 7u64;
    let data: Vec<u8> = (0..n).flat_map(|_| me.to_be_bytes()).collect();
    h.instance(me, n << 8, &data);
    h.root(me);
    h.finish()
}

/// A chain of 10,000 classes each adding one field: the layouts used to
/// copy every superclass's fields into each class (50 million ops, 400 MB).
#[test]
fn hprof_long_superclass_chain_is_linear() {
    let _one = one_at_a_time();
    let n = 10_000;
    let bytes = superclass_chain(n, false);
    let since = work::units();
    let m = import_within("chain.hprof", &bytes, HPROF);
    // The instance's every inherited field is read: n references.
    let me = m.index_of(7).unwrap();
    assert_eq!(m.refs_of(me).len() as u64, n + 1, "fields and <class>");
    assert_eq!(
        m.diagnostics.skipped_lines, 0,
        "{:?}",
        m.diagnostics.messages
    );
    analysed_within("chain.hprof", m, bytes.len(), since, HPROF_WORK);
}

/// The same classes in one cycle: it used to be walked once per class
/// (100 million ops). The chain is cut where it closes, and counted.
#[test]
fn hprof_superclass_cycle_is_linear() {
    let _one = one_at_a_time();
    let n = 10_000;
    let bytes = superclass_chain(n, true);
    let since = work::units();
    let m = import_within("cycle.hprof", &bytes, HPROF);
    let me = m.index_of(7).unwrap();
    assert!(m.refs_of(me).len() as u64 <= n + 1);
    analysed_within("cycle.hprof", m, bytes.len(), since, HPROF_WORK);
}

/// `loaders` class dumps naming one loader, whose id `repeats` instance
/// dumps reuse: every repeat used to get a reference to every class
/// before repeats were dropped (loaders × repeats references).
fn one_loader_many_records(classes: u64, repeats: u64) -> Vec<u8> {
    let mut h = Hprof::new();
    h.string(1, "java.lang.ClassLoader");
    h.load_class(1 << 8, 1);
    h.class_dump(1 << 8, 0, 0, &[]);
    let loader = 5u64;
    for k in 2..classes + 2 {
        h.class_dump(k << 8, 0, loader, &[]);
    }
    for _ in 0..repeats {
        h.instance(loader, 1 << 8, &[]);
    }
    h.root(loader);
    h.finish()
}

#[test]
fn hprof_one_loader_id_in_many_records_is_linear() {
    let _one = one_at_a_time();
    let (classes, repeats) = (3_000, 3_000);
    let bytes = one_loader_many_records(classes, repeats);
    let since = work::units();
    let m = import_within("loaders.hprof", &bytes, HPROF);
    let loader = m.index_of(5).unwrap();
    // Its classes and its own class, once.
    assert_eq!(
        m.refs_of(loader).len() as u64,
        classes + 1,
        "{:?}",
        m.diagnostics
    );
    assert_eq!(m.diagnostics.duplicate_objects, repeats - 1);
    analysed_within("loaders.hprof", m, bytes.len(), since, HPROF_WORK);
}

// ------------------------------------------------------------------ text

/// A type name of 32 MiB of right-to-left overrides: its escape
/// (`\u{202e}`, eight bytes for three) used to be made whole before it was
/// shortened to 4 KiB, 85 MiB more (a 2 GB name of NULs in a sparse V8
/// file took 10.5 GB).
#[test]
fn a_huge_name_is_shortened_before_it_is_escaped() {
    let _one = one_at_a_time();
    let mut dump = b"t 1 ".to_vec();
    while dump.len() < 32 << 20 {
        dump.extend("\u{202e}".as_bytes());
    }
    dump.extend(b"\no 10 1 20\nr 10 1 0\n");
    // The text importer holds a name about four times (the file, its line,
    // the type table, the model); its escape used to add four more.
    let m = import_within("huge_name.txt", &dump, 5);
    let name = &m.type_names[0];
    assert!(
        name.len() <= 4096 && name.starts_with("\\u{202e}"),
        "{name:.40}"
    );
}

// ------------------------------------------------------------------ text dumps

/// Every object a root, each rooted many times over (the gzip of
/// repeated root records took 2.9 GB once decompressed).
#[test]
fn text_every_object_a_root_many_times() {
    let _one = one_at_a_time();
    let mut dump = b"t 1 Foo\n".to_vec();
    for o in 1..=20_000u64 {
        dump.extend(format!("o {o:x} 1 16\n").as_bytes());
    }
    for k in 0..10u64 {
        for o in 1..=20_000u64 {
            dump.extend(format!("r {o:x} {} 0\n", k % 3).as_bytes());
        }
    }
    let since = work::units();
    let m = import_within("roots.txt", &dump, TEXT);
    assert_eq!(m.objects(), 20_000);
    analysed_within("roots.txt", m, dump.len(), since, TEXT_WORK);
}

/// A million types, each with one object; and one chain of 200,000 objects
/// (deep for every walk after the import).
#[test]
fn text_many_types_and_a_deep_chain() {
    let _one = one_at_a_time();
    let mut dump = Vec::new();
    for t in 1..=200_000u64 {
        dump.extend(format!("t {t:x} T{t}\no {t:x} {t:x} 8 {:x}\n", t + 1).as_bytes());
    }
    dump.extend(b"r 1 1 0\n");
    let since = work::units();
    let m = import_within("types.txt", &dump, TEXT);
    assert_eq!(m.type_names.len(), 200_000);
    analysed_within("types.txt", m, dump.len(), since, TEXT_WORK);
}

// ------------------------------------------------------------------ V8

fn v8(node_types: usize, nodes: &[(usize, Vec<usize>)]) -> Vec<u8> {
    let types: Vec<String> = (0..node_types).map(|k| format!("\"t{k}\"")).collect();
    let mut ns = String::new();
    let mut es = String::new();
    for (i, (ty, edges)) in nodes.iter().enumerate() {
        ns.push_str(&format!("{ty},0,{},8,{},", i * 2 + 1, edges.len()));
        for &to in edges {
            es.push_str(&format!("2,0,{},", to * 5));
        }
    }
    ns.pop();
    es.pop();
    let edge_count = nodes.iter().map(|n| n.1.len()).sum::<usize>();
    format!(
        "{{\"snapshot\":{{\"meta\":{{\"node_fields\":[\"type\",\"name\",\"id\",\"self_size\",\"edge_count\"],\"node_types\":[[{}],\"string\",\"number\",\"number\",\"number\"],\"edge_fields\":[\"type\",\"name_or_index\",\"to_node\"],\"edge_types\":[[\"context\",\"element\",\"property\"],\"string_or_number\",\"node\"]}},\"node_count\":{},\"edge_count\":{edge_count}}},\"nodes\":[{ns}],\"edges\":[{es}],\"strings\":[\"x\"]}}",
        types.join(","),
        nodes.len(),
    )
    .into_bytes()
}

/// One object with a million references, and 60,000 node types declared.
#[test]
fn v8_one_object_with_a_million_references_and_many_node_types() {
    let _one = one_at_a_time();
    let mut nodes = vec![(0, (1..1001).collect::<Vec<usize>>())];
    nodes.extend((1..1001).map(|k| (k % 300, vec![0; 1000])));
    let bytes = v8(60_000, &nodes);
    let since = work::units();
    let m = import_within("refs.heapsnapshot", &bytes, V8);
    assert_eq!(m.objects(), 1000);
    analysed_within("refs.heapsnapshot", m, bytes.len(), since, V8_WORK);
}

// ------------------------------------------------------------------ gcdump

/// One node with a million children, 100,000 types and a deep chain.
#[test]
fn gcdump_one_node_with_a_million_children_many_types_a_deep_chain() {
    let _one = one_at_a_time();
    use heaptui_testkit::gcdump::Writer;
    let types: Vec<(String, i32)> = (0..100_000).map(|t| (format!("T{t}"), 8)).collect();
    let mut w = Writer::new(types);
    let n = 100_000u32;
    let children: Vec<u32> = (1..n).chain(std::iter::repeat_n(1, 900_000)).collect();
    w.node(1, 8, children.into_iter());
    for k in 1..n {
        w.node(k % 100_000, 8, std::iter::once((k + 1) % n));
    }
    let bytes = w.finish(0, (1.0, 1.0));
    let since = work::units();
    let m = import_within("deep.gcdump", &bytes, GCDUMP);
    assert!(m.objects() >= n as usize - 1);
    analysed_within("deep.gcdump", m, bytes.len(), since, GCDUMP_WORK);
}

// ------------------------------------------------------------------ gzip

/// A gzip bomb of text root records (the 1.5 MB one aborted on a
/// 6 GB allocation): refused once the decompressed bytes pass 64 times the
/// file or 64 MiB, before any import; memory stays near that bound.
#[test]
fn gzip_bomb_is_refused_at_its_bound() {
    use std::io::Write;
    let _one = one_at_a_time();
    let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    z.write_all(b"t 1 Foo\no 10 1 20\n").unwrap();
    let line = b"r 10 1 0\n".repeat(1 << 16);
    for _ in 0..256 {
        z.write_all(&line).unwrap(); // 144 MiB in all
    }
    let bytes = z.finish().unwrap();
    let (m, peak) = peak_of(|| import_bytes(Path::new("bomb.txt.gz"), &bytes));
    let Err(e) = m else { panic!("a bomb imported") };
    assert!(e.to_string().contains("decompression bomb"), "{e}");
    let bound = heaptui_core::testing::max_inflated(bytes.len() as u64) as usize;
    assert!(peak <= 2 * bound + (8 << 20), "peak {peak}, bound {bound}");
}

// ------------------------------------------------------------------ nesting

/// Two copies of a list of `len` nodes, each node with a leaf (a string's
/// bytes): `len` duplicate sets nested in one another and `len` sets of
/// leaves, each held by the node above it.
fn duplicated_list(len: u64) -> Vec<u8> {
    let mut dump = b"t 1 Node\nt 2 Leaf\n".to_vec();
    for copy in 0..2u64 {
        let base = (copy + 1) << 24;
        for d in 0..len {
            let (o, leaf) = (base + d, base + (1 << 23) + d);
            let next = if d + 1 < len {
                format!(" {:x}", o + 1)
            } else {
                String::new()
            };
            dump.extend(format!("o {o:x} 1 16 {leaf:x}{next}\no {leaf:x} 2 24\n").as_bytes());
        }
        dump.extend(format!("r {base:x} 1 0\n").as_bytes());
    }
    dump
}

/// The held duplicates of a duplicated list: linear (each set is held
/// directly by the one above it, the walks stop there). The same heap with
/// every set's holders checked apart (the ordered pass off) costs the
/// square of the depth or more, and the count says so.
#[test]
fn text_a_duplicated_deep_list_nests_its_sets_in_linear_work() {
    use heaptui_core::testing::set_many_candidates;
    let _one = one_at_a_time();
    let dump = duplicated_list(5_000);
    let since = work::units();
    let m = import_within("list.txt", &dump, TEXT);
    analysed_within("list.txt", m, dump.len(), since, TEXT_WORK);
    // Shorter: checked apart, the checks themselves walk the depth (cubic).
    let dump = duplicated_list(400);
    set_many_candidates(usize::MAX);
    let since = work::units();
    let m = import_bytes(Path::new("list.txt"), &dump).unwrap();
    let quadratic = std::panic::catch_unwind(|| {
        analysed_within("list.txt, every set apart", m, dump.len(), since, TEXT_WORK)
    });
    set_many_candidates(32);
    assert!(quadratic.is_err(), "the quadratic pass went unnoticed");
}
