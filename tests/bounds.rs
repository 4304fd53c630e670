//! The bounds of README's "Bad input", counted: for each format the worst
//! shapes found (long superclass chains and cycles, one id in many records,
//! many types, every object a root, deep chains) are crafted here, imported,
//! and the peak of the memory allocated during the import is held against
//! the file's size. Memory is counted by this binary's allocator, not
//! measured from the outside, and no test reads a clock.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use heaptui::import::import_bytes;
use heaptui::model::Model;

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

/// One measurement at a time: the peak is the whole process's.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The peak of the bytes allocated while `f` runs, above those held before.
fn peak_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
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

// ------------------------------------------------------------------ HPROF

/// A minimal HPROF writer with 8-byte ids (tests/hprof.rs has the full one).
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
    let n = 10_000;
    let bytes = superclass_chain(n, false);
    let m = import_within("chain.hprof", &bytes, 24);
    // The instance's every inherited field is read: n references.
    let me = m.index_of(7).unwrap();
    assert_eq!(m.refs_of(me).len() as u64, n + 1, "fields and <class>");
    assert_eq!(
        m.diagnostics.skipped_lines, 0,
        "{:?}",
        m.diagnostics.messages
    );
}

/// The same classes in one cycle: it used to be walked once per class
/// (100 million ops). The chain is cut where it closes, and counted.
#[test]
fn hprof_superclass_cycle_is_linear() {
    let n = 10_000;
    let bytes = superclass_chain(n, true);
    let m = import_within("cycle.hprof", &bytes, 24);
    let me = m.index_of(7).unwrap();
    assert!(m.refs_of(me).len() as u64 <= n + 1);
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
    let (classes, repeats) = (3_000, 3_000);
    let bytes = one_loader_many_records(classes, repeats);
    let m = import_within("loaders.hprof", &bytes, 24);
    let loader = m.index_of(5).unwrap();
    // Its classes and its own class, once.
    assert_eq!(
        m.refs_of(loader).len() as u64,
        classes + 1,
        "{:?}",
        m.diagnostics
    );
    assert_eq!(m.diagnostics.duplicate_objects, repeats - 1);
}

// ------------------------------------------------------------------ text

/// A type name of 32 MiB of right-to-left overrides: its escape
/// (`\u{202e}`, eight bytes for three) used to be made whole before it was
/// shortened to 4 KiB, 85 MiB more (a 2 GB name of NULs in a sparse V8
/// file took 10.5 GB).
#[test]
fn a_huge_name_is_shortened_before_it_is_escaped() {
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
