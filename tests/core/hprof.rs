//! The HPROF importer (docs/formats.md): a small HPROF writer makes the inputs.
//! Random heaps written with 4- and 8-byte ids round-trip to the intended
//! graph, sizes, labels and values; every bad-input case gives counted
//! diagnostics or one clear error, never a panic; the fixture made by a real
//! JVM has its known answers.

use heaptui_testkit::common;

use std::collections::HashMap;
use std::path::Path;

use heaptui_core::graph::duplicates::{find_duplicates, DuplicateOptions};
use heaptui_core::graph::{DominatorTree, HeapGraph};
use heaptui_core::import::{import_bytes, import_bytes_with, import_file, ImportOptions};
use heaptui_core::model::ObjectIdx;
use heaptui_core::model::{root_flags, root_kind, Format, Label, Model, ValueKind};
use heaptui_core::progress::Progress;
use proptest::prelude::*;

// ---------------------------------------------------------------- writer

const OBJECT: u8 = 2;
const BOOLEAN: u8 = 4;
const CHAR: u8 = 5;
const BYTE: u8 = 8;
const INT: u8 = 10;
const LONG: u8 = 11;

fn prim_size(t: u8) -> usize {
    match t {
        BOOLEAN | BYTE => 1,
        CHAR | 9 => 2,
        6 | INT => 4,
        _ => 8,
    }
}

/// Writes HPROF: top-level records into `out`, sub-records into `seg`
/// until `flush` wraps them in a HEAP_DUMP_SEGMENT (or HEAP_DUMP).
struct Writer {
    id: usize,
    out: Vec<u8>,
    seg: Vec<u8>,
}

impl Writer {
    fn new(version: &str, id: usize) -> Writer {
        let mut out = format!("JAVA PROFILE {version}\0").into_bytes();
        out.extend((id as u32).to_be_bytes());
        out.extend(0x0000_018c_0000_0000u64.to_be_bytes());
        Writer {
            id,
            out,
            seg: Vec::new(),
        }
    }

    fn id_bytes(&self, v: u64) -> Vec<u8> {
        if self.id == 4 {
            (v as u32).to_be_bytes().to_vec()
        } else {
            v.to_be_bytes().to_vec()
        }
    }

    fn record(&mut self, tag: u8, body: &[u8]) {
        self.out.push(tag);
        self.out.extend(0u32.to_be_bytes());
        self.out.extend((body.len() as u32).to_be_bytes());
        self.out.extend(body);
    }

    fn string(&mut self, id: u64, text: &str) {
        let mut b = self.id_bytes(id);
        b.extend(text.as_bytes());
        self.record(0x01, &b);
    }

    fn load_class(&mut self, class: u64, name: u64) {
        let mut b = 1u32.to_be_bytes().to_vec();
        b.extend(self.id_bytes(class));
        b.extend(0u32.to_be_bytes());
        b.extend(self.id_bytes(name));
        self.record(0x02, &b);
    }

    fn sub(&mut self, tag: u8, parts: &[&[u8]]) {
        self.seg.push(tag);
        for p in parts {
            self.seg.extend(*p);
        }
    }

    fn idb(&self, v: u64) -> Vec<u8> {
        self.id_bytes(v)
    }

    #[allow(clippy::too_many_arguments)]
    fn class_dump(
        &mut self,
        id: u64,
        sup: u64,
        loader: u64,
        statics: &[(u64, u8, Vec<u8>)],
        fields: &[(u64, u8)],
    ) {
        let mut b = self.idb(id);
        b.extend(0u32.to_be_bytes());
        for v in [sup, loader, 0, 0, 0, 0] {
            b.extend(self.idb(v));
        }
        b.extend(0u32.to_be_bytes()); // instance size
        b.extend(1u16.to_be_bytes()); // one constant pool entry
        b.extend(7u16.to_be_bytes());
        b.push(INT);
        b.extend(42u32.to_be_bytes());
        b.extend((statics.len() as u16).to_be_bytes());
        for (name, t, value) in statics {
            b.extend(self.idb(*name));
            b.push(*t);
            b.extend(value);
        }
        b.extend((fields.len() as u16).to_be_bytes());
        for (name, t) in fields {
            b.extend(self.idb(*name));
            b.push(*t);
        }
        self.sub(0x20, &[&b]);
    }

    fn instance(&mut self, id: u64, class: u64, data: &[u8]) {
        let (i, c) = (self.idb(id), self.idb(class));
        self.sub(
            0x21,
            &[
                &i,
                &0u32.to_be_bytes(),
                &c,
                &(data.len() as u32).to_be_bytes(),
                data,
            ],
        );
    }

    fn object_array(&mut self, id: u64, class: u64, elements: &[u64]) {
        let mut b = self.idb(id);
        b.extend(0u32.to_be_bytes());
        b.extend((elements.len() as u32).to_be_bytes());
        b.extend(self.idb(class));
        for &e in elements {
            b.extend(self.idb(e));
        }
        self.sub(0x22, &[&b]);
    }

    fn primitive_array(&mut self, id: u64, t: u8, data: &[u8]) {
        let i = self.idb(id);
        let len = (data.len() / prim_size(t)) as u32;
        self.sub(
            0x23,
            &[&i, &0u32.to_be_bytes(), &len.to_be_bytes(), &[t], data],
        );
    }

    fn root(&mut self, tag: u8, id: u64) {
        let i = self.idb(id);
        let extra = match tag {
            0x01 => self.id,
            0x04 | 0x06 => 4,
            0x02 | 0x03 | 0x08 | 0x8e => 8,
            _ => 0,
        };
        self.sub(tag, &[&i, &vec![0u8; extra]]);
    }

    fn flush(&mut self, tag: u8) {
        let seg = std::mem::take(&mut self.seg);
        self.record(tag, &seg);
    }

    fn finish(mut self) -> Vec<u8> {
        if !self.seg.is_empty() {
            self.flush(0x1c);
        }
        self.record(0x2c, &[]);
        self.out
    }
}

// ---------------------------------------------------------------- random heaps

/// A tiny deterministic generator (the heap is drawn from proptest's seed).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[derive(Debug, Clone)]
struct Class {
    sup: Option<usize>,
    fields: Vec<u8>,
    /// Static object fields' targets (objects), `None` for null.
    statics: Vec<Option<usize>>,
}

#[derive(Debug, Clone)]
enum Obj {
    /// Per field of the flattened layout (own fields first, then the
    /// superclass's): a target for object fields, bytes for primitives.
    Instance(usize, Vec<Result<Option<usize>, Vec<u8>>>),
    Refs(usize, Vec<Option<usize>>),
    Prims(u8, Vec<u8>),
}

#[derive(Debug, Clone)]
struct Heap {
    id: usize,
    classes: Vec<Class>,
    objects: Vec<Obj>,
    roots: Vec<(u8, usize)>,
    /// Sub-records per heap dump record.
    split: usize,
    old_tag: bool,
}

const ROOT_TAGS: [u8; 16] = [
    0xff, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x89, 0x8a, 0x8b, 0x8c, 0x8d, 0x8e, 0x90,
];

impl Heap {
    fn random(seed: u64, id: usize) -> Heap {
        let mut r = Rng(seed);
        let n = 1 + r.below(14);
        let classes: Vec<Class> = (0..1 + r.below(4))
            .map(|k| Class {
                sup: (k > 0 && r.below(2) == 0).then(|| r.below(k)),
                fields: (0..r.below(4))
                    .map(|_| [OBJECT, INT, BYTE, CHAR, LONG, OBJECT][r.below(6)])
                    .collect(),
                statics: (0..r.below(3))
                    .map(|_| (r.below(3) > 0).then(|| r.below(n)))
                    .collect(),
            })
            .collect();
        let target = |r: &mut Rng| (r.below(4) > 0).then(|| r.below(n));
        let objects = (0..n)
            .map(|_| match r.below(3) {
                0 => {
                    let c = r.below(classes.len());
                    let fields = Heap::chain(&classes, c)
                        .into_iter()
                        .map(|(_, _, t)| match t {
                            OBJECT => Ok(target(&mut r)),
                            t => Err((0..prim_size(t)).map(|_| r.below(3) as u8).collect()),
                        })
                        .collect();
                    Obj::Instance(c, fields)
                }
                1 => Obj::Refs(
                    r.below(classes.len()),
                    (0..r.below(4)).map(|_| target(&mut r)).collect(),
                ),
                _ => {
                    let t = [CHAR, INT, BYTE][r.below(3)];
                    Obj::Prims(
                        t,
                        (0..r.below(4) * prim_size(t))
                            .map(|_| r.below(2) as u8)
                            .collect(),
                    )
                }
            })
            .collect();
        let roots = (0..r.below(5))
            .map(|_| (ROOT_TAGS[r.below(16)], r.below(n)))
            .collect();
        Heap {
            id,
            classes,
            objects,
            roots,
            split: 1 + r.below(8),
            old_tag: r.below(2) == 0,
        }
    }

    /// The flattened instance fields of class `c`: (class, field index, type).
    fn chain(classes: &[Class], c: usize) -> Vec<(usize, usize, u8)> {
        let mut out = Vec::new();
        let mut cur = Some(c);
        while let Some(k) = cur {
            out.extend(
                classes[k]
                    .fields
                    .iter()
                    .enumerate()
                    .map(|(j, &t)| (k, j, t)),
            );
            cur = classes[k].sup;
        }
        out
    }

    fn base(&self) -> u64 {
        if self.id == 4 {
            0x1000_0000
        } else {
            0x7_0000_0000
        }
    }
    fn obj_id(&self, i: usize) -> u64 {
        self.base() + 0x100 + 16 * i as u64
    }
    fn class_id(&self, k: usize) -> u64 {
        self.base() + 0x10_0000 + 16 * k as u64
    }
    fn array_class_id(&self, k: usize) -> u64 {
        self.base() + 0x20_0000 + 16 * k as u64
    }
    fn target(&self, t: Option<usize>) -> u64 {
        t.map_or(0, |i| self.obj_id(i))
    }

    fn write(&self) -> Vec<u8> {
        let mut w = Writer::new("1.0.2", self.id);
        for k in 0..self.classes.len() {
            w.string(0x50_0000 + k as u64, &format!("pkg/C{k}"));
            w.string(0x51_0000 + k as u64, &format!("[Lpkg/C{k};"));
            w.string(0x52_0000 + k as u64, &format!("s{k}"));
            for j in 0..self.classes[k].fields.len() {
                w.string(0x53_0000 + 16 * k as u64 + j as u64, &format!("f{k}_{j}"));
            }
            w.load_class(self.class_id(k), 0x50_0000 + k as u64);
            w.load_class(self.array_class_id(k), 0x51_0000 + k as u64);
        }
        let mut subs = 0;
        let mut step = |w: &mut Writer| {
            subs += 1;
            if subs % self.split == 0 {
                w.flush(if self.old_tag { 0x0c } else { 0x1c });
            }
        };
        for (k, c) in self.classes.iter().enumerate() {
            let statics: Vec<(u64, u8, Vec<u8>)> = c
                .statics
                .iter()
                .map(|&t| (0x52_0000 + k as u64, OBJECT, w.idb(self.target(t))))
                .collect();
            let fields: Vec<(u64, u8)> = c
                .fields
                .iter()
                .enumerate()
                .map(|(j, &t)| (0x53_0000 + 16 * k as u64 + j as u64, t))
                .collect();
            let sup = c.sup.map_or(0, |s| self.class_id(s));
            w.class_dump(self.class_id(k), sup, 0, &statics, &fields);
            step(&mut w);
            w.class_dump(self.array_class_id(k), 0, 0, &[], &[]);
            step(&mut w);
        }
        for (i, o) in self.objects.iter().enumerate() {
            match o {
                Obj::Instance(c, fields) => {
                    let mut data = Vec::new();
                    for f in fields {
                        match f {
                            Ok(t) => data.extend(w.idb(self.target(*t))),
                            Err(b) => data.extend(b),
                        }
                    }
                    w.instance(self.obj_id(i), self.class_id(*c), &data);
                }
                Obj::Refs(c, elems) => {
                    let e: Vec<u64> = elems.iter().map(|&t| self.target(t)).collect();
                    w.object_array(self.obj_id(i), self.array_class_id(*c), &e);
                }
                Obj::Prims(t, data) => w.primitive_array(self.obj_id(i), *t, data),
            }
            step(&mut w);
        }
        for &(tag, o) in &self.roots {
            w.root(tag, self.obj_id(o));
            step(&mut w);
        }
        w.finish()
    }
}

/// What the importer should make of one object: type, size, references
/// (target id, label) and value.
#[derive(Debug, PartialEq, Eq)]
struct Want {
    ty: String,
    size: u64,
    refs: Vec<(u64, String)>,
    value: Option<(Vec<u8>, ValueKind)>,
}

fn align8(n: u64) -> u64 {
    n.div_ceil(8) * 8
}

fn expected(h: &Heap, compressed: bool) -> HashMap<u64, Want> {
    let (hdr, ahdr, rs) = match (h.id, compressed) {
        (_, true) => (12, 16, 4),
        (4, _) => (8, 12, 4),
        _ => (16, 24, 8),
    };
    let heap_size = |t: u8| if t == OBJECT { rs } else { prim_size(t) as u64 };
    let mut out = HashMap::new();
    for (k, c) in h.classes.iter().enumerate() {
        let mut refs = Vec::new();
        if let Some(s) = c.sup {
            refs.push((h.class_id(s), "<super>".to_string()));
        }
        refs.extend(
            c.statics
                .iter()
                .flatten()
                .map(|&t| (h.obj_id(t), format!("s{k}"))),
        );
        let size = align8(hdr + rs * c.statics.len() as u64);
        let name = format!("pkg.C{k}").into_bytes();
        out.insert(
            h.class_id(k),
            Want {
                ty: "java.lang.Class".into(),
                size,
                refs,
                value: Some((name, ValueKind::Utf8)),
            },
        );
        let name = format!("pkg.C{k}[]").into_bytes();
        out.insert(
            h.array_class_id(k),
            Want {
                ty: "java.lang.Class".into(),
                size: align8(hdr),
                refs: vec![],
                value: Some((name, ValueKind::Utf8)),
            },
        );
    }
    for (i, o) in h.objects.iter().enumerate() {
        let want = match o {
            Obj::Instance(c, fields) => {
                let chain = Heap::chain(&h.classes, *c);
                let mut refs = Vec::new();
                let mut value = Vec::new();
                for ((k, j, t), f) in chain.iter().zip(fields) {
                    let _ = t;
                    match f {
                        Ok(Some(target)) => refs.push((h.obj_id(*target), format!("f{k}_{j}"))),
                        Ok(None) => {}
                        Err(b) => value.extend(b),
                    }
                }
                refs.push((h.class_id(*c), "<class>".into()));
                let size = align8(hdr + chain.iter().map(|c| heap_size(c.2)).sum::<u64>());
                let value = (!value.is_empty()).then_some((value, ValueKind::Bytes));
                Want {
                    ty: format!("pkg.C{c}"),
                    size,
                    refs,
                    value,
                }
            }
            Obj::Refs(c, elems) => {
                let mut refs: Vec<(u64, String)> = elems
                    .iter()
                    .enumerate()
                    .filter_map(|(j, t)| t.map(|t| (h.obj_id(t), format!("[{j}]"))))
                    .collect();
                refs.push((h.array_class_id(*c), "<class>".into()));
                Want {
                    ty: format!("pkg.C{c}[]"),
                    size: align8(ahdr + rs * elems.len() as u64),
                    refs,
                    value: None,
                }
            }
            Obj::Prims(t, data) => {
                let (ty, kind) = match *t {
                    CHAR => ("char[]", ValueKind::Utf16Be),
                    INT => ("int[]", ValueKind::Bytes),
                    _ => ("byte[]", ValueKind::Bytes),
                };
                Want {
                    ty: ty.into(),
                    size: align8(ahdr + data.len() as u64),
                    refs: vec![],
                    value: Some((data.clone(), kind)),
                }
            }
        };
        out.insert(h.obj_id(i), want);
    }
    out
}

fn label_text(m: &Model, start: usize, edge: usize) -> String {
    match m.labels.as_ref().and_then(|l| l.get(start, edge)) {
        Some(Label::Name(n)) => n.to_string(),
        Some(Label::Index(i)) => format!("[{i}]"),
        None => "-".into(),
    }
}

fn got(m: &Model) -> HashMap<u64, Want> {
    (0..m.objects() as u32)
        .map(|o| {
            let (s, e) = (
                m.refs.offset(o as usize) as usize,
                m.refs.offset(o as usize + 1) as usize,
            );
            let refs = (s..e)
                .map(|edge| {
                    (
                        m.ids.get(m.refs.targets.get(edge) as usize),
                        label_text(m, s, edge),
                    )
                })
                .collect();
            let value = m
                .values
                .as_ref()
                .unwrap()
                .get(ObjectIdx(o))
                .map(|(b, k)| (b.to_vec(), k));
            (
                m.ids.get(o as usize),
                Want {
                    ty: m.type_name(ObjectIdx(o)).to_string(),
                    size: m.sizes.get(o as usize),
                    refs,
                    value,
                },
            )
        })
        .collect()
}

fn root_kind_of(tag: u8) -> (u32, u32) {
    match tag {
        0x02 | 0x03 => (root_kind::LOCAL, 0),
        0x01 | 0x07 | 0x8e => (root_kind::HANDLE, 0),
        0x05 => (root_kind::STATIC, 0),
        0x8a => (root_kind::FINALIZER, 0),
        0x90 => (root_kind::INTERNAL, root_flags::WEAK),
        _ => (root_kind::INTERNAL, 0),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn random_heaps_round_trip(seed in any::<u64>(), wide in any::<bool>(), compressed in any::<bool>()) {
        let h = Heap::random(seed, if wide { 8 } else { 4 });
        let bytes = h.write();
        let options = ImportOptions {
            compressed_refs: compressed,
            model_sizes: !compressed,
            ..Default::default()
        };
        let m = import_bytes_with(Path::new("r.hprof"), &bytes, &options).unwrap();
        prop_assert_eq!(m.format, Format::Hprof);
        prop_assert_eq!(m.diagnostics.total(), 0, "{:?}", m.diagnostics);
        prop_assert_eq!(got(&m), expected(&h, compressed));
        let roots: Vec<(u64, u32, u32)> = m.roots.iter().map(|r| (m.ids.get(r.object.index()), r.kind, r.flags)).collect();
        let want: Vec<(u64, u32, u32)> = h.roots.iter().map(|&(t, o)| {
            let (k, f) = root_kind_of(t);
            (h.obj_id(o), k, f)
        }).collect();
        prop_assert_eq!(roots, want);
    }

    /// With no option the importer looks for the layout in the ids (here
    /// 16 bytes apart, not the objects' sizes): whatever it finds, the
    /// graph is the one written and every size at least a header's.
    #[test]
    fn random_heaps_sized_from_their_ids_keep_their_graph(seed in any::<u64>(), wide in any::<bool>()) {
        let h = Heap::random(seed, if wide { 8 } else { 4 });
        let bytes = h.write();
        let m = import_bytes(Path::new("r.hprof"), &bytes).unwrap();
        prop_assert_eq!(m.diagnostics.total(), 0, "{:?}", m.diagnostics);
        let want = expected(&h, false);
        let got = got(&m);
        prop_assert_eq!(got.len(), want.len());
        for (id, w) in &want {
            let g = &got[id];
            prop_assert_eq!((&g.ty, &g.refs), (&w.ty, &w.refs));
            prop_assert!(g.size >= 8, "{:x}: {}", id, g.size);
        }
    }

    /// A file cut anywhere imports with diagnostics or fails with one
    /// clear error; it never panics, and never invents objects.
    #[test]
    fn truncated_random_heaps_never_panic(seed in any::<u64>(), wide in any::<bool>(), cut in 0.0f64..1.0) {
        let h = Heap::random(seed, if wide { 8 } else { 4 });
        let bytes = h.write();
        let n = (bytes.len() as f64 * cut) as usize;
        if let Ok(m) = import_bytes(Path::new("t.hprof"), &bytes[..n]) {
            prop_assert!(m.objects() <= h.objects.len() + 2 * h.classes.len());
        }
    }
}

// ---------------------------------------------------------------- bad input

/// A small heap: a String-like class with an object field and an int, two
/// instances, a char[] and a root; ids of `id` bytes.
fn small(id: usize) -> Writer {
    let mut w = Writer::new("1.0.2", id);
    w.string(1, "demo/Node");
    w.string(2, "next");
    w.string(3, "count");
    w.load_class(0x100, 1);
    w.class_dump(0x100, 0, 0, &[], &[(2, OBJECT), (3, INT)]);
    let data = |w: &Writer, next: u64, count: u32| {
        let mut d = w.idb(next);
        d.extend(count.to_be_bytes());
        d
    };
    let d = data(&w, 0x210, 7);
    w.instance(0x200, 0x100, &d);
    let d = data(&w, 0, 7);
    w.instance(0x210, 0x100, &d);
    w.primitive_array(0x300, CHAR, &[0, b'h', 0, b'i']);
    w.root(0x03, 0x200);
    w
}

fn import(bytes: &[u8]) -> Result<Model, String> {
    import_bytes(Path::new("b.hprof"), bytes).map_err(|e| e.to_string())
}

#[test]
fn small_heap_reads_as_written() {
    for id in [4, 8] {
        let m = import(&small(id).finish()).unwrap();
        assert_eq!(m.objects(), 4);
        assert_eq!(m.diagnostics.total(), 0);
        let node = m.index_of(0x200).unwrap();
        assert_eq!(m.type_name(node), "demo.Node");
        let hdr = if id == 4 { 8 } else { 16 };
        assert_eq!(m.size_of(node), align8(hdr + id as u64 + 4));
        assert_eq!(
            m.values
                .as_ref()
                .unwrap()
                .text(m.index_of(0x300).unwrap(), 10)
                .as_deref(),
            Some("hi")
        );
        assert!(m
            .details
            .iter()
            .any(|(k, v)| k == "identifier size" && v == &format!("{id} bytes")));
    }
}

#[test]
fn every_truncation_of_a_small_file_is_diagnosed_or_refused() {
    for id in [4, 8] {
        let bytes = small(id).finish();
        let full = import(&bytes).unwrap();
        for cut in 0..bytes.len() {
            match import(&bytes[..cut]) {
                Ok(m) => {
                    assert!(m.objects() <= full.objects(), "cut {cut}");
                    // Cut inside a record: said so (the last record, the
                    // heap dump end, is 9 bytes).
                    if cut < bytes.len() - 9 {
                        assert!(m.diagnostics.total() > 0, "cut {cut} silently lost data");
                    }
                }
                Err(e) => assert!(e.starts_with("b.hprof: "), "{e}"),
            }
        }
    }
}

#[test]
fn identifier_size_3_and_unknown_versions_are_refused() {
    let mut bytes = small(4).finish();
    bytes[19..23].copy_from_slice(&3u32.to_be_bytes());
    assert!(import(&bytes).unwrap_err().contains("identifier size 3"));
    let mut bytes = small(4).finish();
    bytes[17] = b'4';
    assert!(import(&bytes)
        .unwrap_err()
        .contains("unsupported HPROF version"));
    for v in ["1.0.1", "1.0.3"] {
        let mut w = small(4);
        w.out[17] = v.as_bytes()[4];
        assert_eq!(import(&w.finish()).unwrap().objects(), 4);
    }
    let w = Writer::new("1.0.2", 4);
    assert!(import(&w.finish()).unwrap_err().contains("no objects"));
}

#[test]
fn unknown_record_tag_is_skipped_and_counted() {
    let mut w = small(4);
    w.record(0x77, &[1, 2, 3]);
    let m = import(&w.finish()).unwrap();
    assert_eq!(m.objects(), 4);
    assert_eq!(m.diagnostics.skipped_lines, 1);
    assert!(
        m.diagnostics.messages[0].contains("unknown record tag 0x77"),
        "{:?}",
        m.diagnostics
    );
}

#[test]
fn unknown_sub_record_tag_ends_its_segment_and_is_counted() {
    let mut w = small(4);
    w.sub(0x55, &[&[0u8; 8]]);
    w.flush(0x1c);
    w.primitive_array(0x400, INT, &[0, 0, 0, 1]);
    let m = import(&w.finish()).unwrap();
    assert_eq!(m.objects(), 5, "the next segment is read");
    assert_eq!(m.diagnostics.skipped_lines, 1);
    assert!(m.diagnostics.messages[0].contains("unknown sub-record tag 0x55"));
    assert!(m.diagnostics.messages[0].starts_with("offset 0x"));
}

#[test]
fn segment_longer_than_the_file_is_read_as_far_as_it_goes() {
    let mut w = small(8);
    w.flush(0x1c);
    let mut bytes = w.out.clone();
    bytes.truncate(bytes.len() - 3); // inside the last root
    let m = import(&bytes).unwrap();
    assert_eq!(m.objects(), 4);
    assert!(m.roots.is_empty());
    assert_eq!(
        m.diagnostics.skipped_lines, 2,
        "{:?}",
        m.diagnostics.messages
    );
}

#[test]
fn wrong_instance_length_dangling_repeated_and_missing_are_counted() {
    let mut w = small(4);
    w.instance(0x500, 0x100, &[0, 0, 0]); // 3 field bytes, the class says 8
    let d = [0, 0, 0x0f, 0xff, 0, 0, 0, 1];
    w.instance(0x510, 0x100, &d); // `next` points nowhere
    w.instance(0x200, 0x100, &[0; 8]); // again
    w.instance(0x520, 0x999, &[]); // class never dumped
    w.root(0x01, 0x777); // no such object
    w.root(0x01, 0x520); // after the dropped repeat: its index moves down
    let m = import(&w.finish()).unwrap();
    let d = &m.diagnostics;
    assert_eq!(d.skipped_lines, 1, "{:?}", d.messages);
    assert_eq!(
        d.dangling_references, 2,
        "0xfff and class 0x999: {:?}",
        d.messages
    );
    assert_eq!(d.duplicate_objects, 1);
    assert_eq!(d.undefined_types, 1);
    assert_eq!(d.missing_root_objects, 1);
    assert_eq!(
        m.type_name(m.index_of(0x520).unwrap()),
        "<unknown type 0x999>"
    );
    assert!(d.messages.iter().any(|s| s.contains("holds 3 field bytes")));
    // The first record of 0x200 is the one kept.
    let first = m.index_of(0x200).unwrap();
    assert_eq!(m.refs_of(first).len(), 2);
    assert_eq!(m.objects(), 7);
    let last = m.index_of(0x520).unwrap();
    assert_eq!(m.roots.last().map(|r| r.object), Some(last));
}

#[test]
fn android_sub_records() {
    let mut w = small(4);
    w.sub(0xfe, &[&1u32.to_be_bytes(), &w.idb(2)]);
    let i = w.idb(0x600);
    w.sub(
        0xc3,
        &[&i, &0u32.to_be_bytes(), &10u32.to_be_bytes(), &[INT]],
    );
    for tag in [0x89, 0x8a, 0x8b, 0x8c, 0x8d, 0x8e, 0x90, 0xff] {
        w.root(tag, 0x210);
    }
    let m = import(&w.finish()).unwrap();
    assert_eq!(m.diagnostics.total(), 0, "{:?}", m.diagnostics);
    let nodata = m.index_of(0x600).unwrap();
    assert_eq!(m.type_name(nodata), "int[]");
    assert_eq!(m.size_of(nodata), align8(12 + 40));
    assert_eq!(m.values.as_ref().unwrap().get(nodata), None);
    let kinds: Vec<(u32, u32)> = m.roots[1..].iter().map(|r| (r.kind, r.flags)).collect();
    assert_eq!(
        kinds,
        [0x89, 0x8a, 0x8b, 0x8c, 0x8d, 0x8e, 0x90, 0xff]
            .map(root_kind_of)
            .to_vec()
    );
}

#[test]
fn gzipped_hprof_is_read() {
    use std::io::Write;
    let bytes = small(8).finish();
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(&bytes).unwrap();
    let m = import(&e.finish().unwrap()).unwrap();
    assert_eq!(m.format, Format::Hprof);
    assert_eq!(m.objects(), 4);
}

/// A class loader refers to each class it defined (`<loaded class>`), the
/// classes to it (`<classloader>`); instances that are not loaders refer
/// to their class only. Many loaders, so the filter in front of the
/// loaders' index holds many bits.
#[test]
fn loaders_refer_to_the_classes_they_defined() {
    let mut w = Writer::new("1.0.2", 8);
    w.string(1, "demo/Loader");
    w.string(2, "demo/Thing");
    w.load_class(0x100, 1);
    w.class_dump(0x100, 0, 0, &[], &[]);
    let loaders: Vec<u64> = (0..300).map(|i| 0x10_0000 + 0x40 * i).collect();
    let things: Vec<u64> = (0..300).map(|i| 0x20_0000 + 0x40 * i).collect();
    for (i, (&l, &t)) in loaders.iter().zip(&things).enumerate() {
        let name = 1000 + i as u64;
        w.string(name, &format!("demo/Thing{i}"));
        w.load_class(t, name);
        w.class_dump(t, 0, l, &[], &[]);
    }
    for &l in &loaders {
        w.instance(l, 0x100, &[]);
        w.instance(l + 8, 0x100, &[]);
    }
    let m = import(&w.finish()).unwrap();
    for (&l, &t) in loaders.iter().zip(&things) {
        let named = |o: u64| -> Vec<(String, u64)> {
            let o = m.index_of(o).unwrap();
            (0..m.refs_of(o).len())
                .map(|i| {
                    let label = m.ref_label(o, i).map(|l| l.to_string()).unwrap_or_default();
                    (label, m.ids.get(m.refs_of(o).get(i).index()))
                })
                .collect()
        };
        assert_eq!(
            named(l),
            [
                (".<class>".to_string(), 0x100),
                (".<loaded class>".to_string(), t)
            ]
        );
        assert_eq!(named(l + 8), [(".<class>".to_string(), 0x100)]);
        assert!(named(t).contains(&(".<classloader>".to_string(), l)));
    }
}

/// Compact strings: `value` is a byte[] read as Latin-1; the hash cache
/// does not take part in the value, so equal strings are duplicates
/// whether or not their hash was computed, and different ones are not.
#[test]
fn strings_are_duplicates_by_content() {
    let mut w = Writer::new("1.0.2", 8);
    for (id, s) in [
        (1, "java/lang/String"),
        (2, "value"),
        (3, "coder"),
        (4, "hash"),
        (5, "hashIsZero"),
        (6, "demo/Holder"),
        (7, "items"),
    ] {
        w.string(id, s);
    }
    w.string(8, "[Ljava/lang/String;");
    w.load_class(0x100, 1);
    w.load_class(0x110, 6);
    w.load_class(0x120, 8);
    w.class_dump(
        0x100,
        0,
        0,
        &[],
        &[(2, OBJECT), (3, BYTE), (4, INT), (5, BOOLEAN)],
    );
    w.class_dump(0x110, 0, 0, &[], &[(7, OBJECT)]);
    w.class_dump(0x120, 0, 0, &[], &[]);
    let texts = ["same", "same", "same", "diff"];
    for (i, t) in texts.iter().enumerate() {
        let s = 0x1000 + 0x20 * i as u64;
        let mut d = w.idb(s + 0x10);
        d.push(0); // Latin-1
        d.extend((i as u32 * 7).to_be_bytes()); // hashes differ
        d.push(0);
        w.instance(s, 0x100, &d);
        w.primitive_array(s + 0x10, BYTE, t.as_bytes());
    }
    w.object_array(0x2000, 0x120, &[0x1000, 0x1020, 0x1040, 0x1060]);
    let items = w.idb(0x2000);
    w.instance(0x3000, 0x110, &items);
    w.root(0x05, 0x3000);
    for c in [0x100, 0x110, 0x120] {
        w.root(0x05, c);
    }
    let m = import(&w.finish()).unwrap();
    let bytes0 = m.index_of(0x1010).unwrap();
    assert_eq!(
        m.values.as_ref().unwrap().get(bytes0).unwrap().1,
        ValueKind::Latin1
    );
    let (values, sets) = common::duplicate_sets_by_id(m);
    assert!(values);
    assert_eq!(
        sets,
        vec![
            ("java.lang.String".to_string(), vec![0x1000, 0x1020, 0x1040]),
            ("byte[]".to_string(), vec![0x1010, 0x1030, 0x1050]),
        ]
    );
}

/// A reference is resolved to the first record of its target's id even
/// where a later record of that id lies beside it in the file.
#[test]
fn a_reference_beside_a_repeated_record_finds_the_first() {
    let mut w = Writer::new("1.0.2", 8);
    w.string(1, "demo/Node");
    w.string(2, "next");
    w.load_class(0x100, 1);
    w.class_dump(0x100, 0, 0, &[], &[(2, OBJECT)]);
    let node = |w: &mut Writer, id: u64, next: u64| {
        let d = w.idb(next);
        w.instance(id, 0x100, &d);
    };
    node(&mut w, 0x10, 0x20);
    node(&mut w, 0x20, 0); // the record kept
    for k in 0..8 {
        node(&mut w, 0x1000 + 0x10 * k, 0);
    }
    node(&mut w, 0x20, 0x10); // again: dropped
    node(&mut w, 0x30, 0x20);
    w.root(0x05, 0x30);
    let m = import(&w.finish()).unwrap();
    assert_eq!(m.diagnostics.duplicate_objects, 1);
    let next = |id: u64| -> Vec<u64> {
        let o = m.index_of(id).unwrap();
        (0..m.refs_of(o).len())
            .filter(|&i| m.ref_label(o, i).is_some_and(|l| l.to_string() == ".next"))
            .map(|i| m.ids.get(m.refs_of(o).get(i).index()))
            .collect()
    };
    let first = m.index_of(0x20).unwrap();
    assert_eq!(next(0x30), [0x20]);
    assert_eq!(m.refs_of(m.index_of(0x30).unwrap()).get(0), first);
    assert_eq!(next(0x10), [0x20]);
    // The kept record's own reference is null: it has none.
    assert!(next(0x20).is_empty());
}

/// A string's `byte[]` is read as the text its `coder` names; an array two
/// strings share takes the first string's coder; a string record that
/// repeats an id (dropped) and a string whose array is not in the dump mark
/// nothing.
#[test]
fn string_arrays_take_the_coder_of_their_first_string() {
    let mut w = Writer::new("1.0.2", 8);
    for (id, s) in [(1, "java/lang/String"), (2, "value"), (3, "coder")] {
        w.string(id, s);
    }
    w.load_class(0x100, 1);
    w.class_dump(0x100, 0, 0, &[], &[(2, OBJECT), (3, BYTE)]);
    let mut string = |id: u64, value: u64, coder: u8| {
        let mut d = w.idb(value);
        d.push(coder);
        w.instance(id, 0x100, &d);
    };
    string(0x1000, 0x2000, 1); // UTF-16
    string(0x1010, 0x2000, 0); // the same array: the first string decides
    string(0x1020, 0x2010, 0); // Latin-1
    string(0x1020, 0x2020, 1); // repeats an id: dropped, marks nothing
    string(0x1030, 0x9999, 1); // its array is not in the dump
    w.primitive_array(0x2000, BYTE, &[b'h', 0, b'i', 0]);
    w.primitive_array(0x2010, BYTE, b"hi");
    w.primitive_array(0x2020, BYTE, b"hi");
    w.root(0x05, 0x100);
    let m = import(&w.finish()).unwrap();
    let kind = |id: u64| {
        let o = m.index_of(id).unwrap();
        m.values.as_ref().unwrap().get(o).unwrap().1
    };
    assert_eq!(kind(0x2000), ValueKind::Utf16Le);
    assert_eq!(kind(0x2010), ValueKind::Latin1);
    assert_eq!(kind(0x2020), ValueKind::Bytes);
    assert_eq!(
        m.values
            .as_ref()
            .unwrap()
            .text(m.index_of(0x2000).unwrap(), 10)
            .as_deref(),
        Some("hi")
    );
}

// ---------------------------------------------------------------- real dumps

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}

/// `fixtures/leaky.hprof.gz`, dumped by JDK 17 from `fixtures/Leaky.java`
/// (see fixtures/README.md): 50 copies of one string made from a char[],
/// 50 distinct strings of the same length, and a HashMap of 1000 entries.
#[test]
fn jdk17_fixture_has_its_known_answers() {
    let m = import_file(&fixture("leaky.hprof.gz"), &Progress::new()).unwrap();
    assert_eq!(m.format, Format::Hprof);
    assert_eq!(m.diagnostics.total(), 0, "{:?}", m.diagnostics.messages);
    let g = HeapGraph::build(m);
    let dom = DominatorTree::compute(&g, &Progress::new()).unwrap();
    let d = find_duplicates(&g, &dom, &DuplicateOptions::default(), &Progress::new()).unwrap();
    let values = g.dump.values.as_ref().unwrap();
    let text_of = |string: u32| {
        let value = g.refs(ObjectIdx(string)).get(0);
        values.text(value, 100)
    };
    let set = d
        .member_lists()
        .iter()
        .find(|members| {
            g.dump.type_name(ObjectIdx(members[0])) == "java.lang.String"
                && text_of(members[0]).as_deref() == Some("duplicate me please")
        })
        .expect("the duplicated string is a set");
    // The 50 copies plus the literal they were made from.
    assert_eq!(set.len(), 51);
    for &m in set {
        assert_eq!(text_of(m).as_deref(), Some("duplicate me please"));
    }
    // The distinct strings of equal length are in no set.
    let uniques = (0..g.objects() as u32)
        .filter(|&o| g.dump.type_name(ObjectIdx(o)) == "java.lang.String")
        .filter(|&o| text_of(o).is_some_and(|t| t.starts_with("unique 0000")))
        .collect::<Vec<_>>();
    assert_eq!(uniques.len(), 50);
    assert!(uniques.iter().all(|&o| d.set_of(o).is_none()));
    // The leak: the class Leaky's static map retains its 1000 entries.
    let leaky = (0..g.objects() as u32)
        .find(|&o| values.text(ObjectIdx(o), 100).as_deref() == Some("Leaky"))
        .expect("class Leaky");
    let map = g
        .refs(ObjectIdx(leaky))
        .iter()
        .find(|&t| g.dump.type_name(t) == "java.util.HashMap")
        .expect("LEAK");
    assert!(dom.retained_objects(map.index()) > 3000);
}

/// The real HPROF dumps in `$HEAPTUI_REAL_HEAPS/raw` (`*.hprof.gz`,
/// `*.bin.gz`) import without a skipped record (nothing checked where it is
/// not set).
#[test]
fn real_hprof_dumps_import_without_error() {
    let Some(dir) = common::real_heaps("real_hprof_dumps_import_without_error") else {
        return;
    };
    let mut checked = 0;
    for e in std::fs::read_dir(dir.join("raw")).unwrap() {
        let p = e.unwrap().path();
        if !p.to_string_lossy().ends_with(".hprof.gz") && !p.to_string_lossy().ends_with(".bin.gz")
        {
            continue;
        }
        let m = import_file(&p, &Progress::new()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(m.format, Format::Hprof, "{p:?}");
        assert_eq!(
            m.diagnostics.skipped_lines, 0,
            "{p:?}: {:?}",
            m.diagnostics.messages
        );
        eprintln!(
            "{}: {} objects, {} bytes",
            p.display(),
            m.objects(),
            m.total_bytes()
        );
        checked += 1;
    }
    assert!(checked > 0);
}

/// A cache holding a WeakReference, a SoftReference and a
/// PhantomReference: 0x200 (rooted) → 0x210 weak ⇢ 0x300 → 0x310,
/// 0x200 → 0x220 soft ⇢ 0x300, 0x200 → 0x230 weak ⇢ 0x320 and
/// 0x200 → 0x240 phantom ⇢ 0x330; `demo/Mine` extends WeakReference.
fn referents_heap(id: usize) -> Vec<u8> {
    let mut w = Writer::new("1.0.2", id);
    let names = [
        (1, "java/lang/Object"),
        (2, "java/lang/ref/Reference"),
        (3, "java/lang/ref/WeakReference"),
        (4, "java/lang/ref/SoftReference"),
        (5, "java/lang/ref/PhantomReference"),
        (6, "demo/Cache"),
        (7, "demo/Payload"),
        (8, "demo/Mine"),
    ];
    for (i, n) in names {
        w.string(i, n);
    }
    for (i, n) in [(20, "referent"), (21, "queue"), (22, "a"), (23, "b")] {
        w.string(i, n);
    }
    for (i, n) in [(24, "c"), (25, "d"), (26, "next"), (27, "n")] {
        w.string(i, n);
    }
    for (c, n) in [(0x100, 1), (0x110, 2), (0x120, 3), (0x130, 4)] {
        w.load_class(c, n);
    }
    for (c, n) in [(0x140, 5), (0x150, 6), (0x160, 7), (0x170, 8)] {
        w.load_class(c, n);
    }
    w.class_dump(0x100, 0, 0, &[], &[]);
    w.class_dump(0x110, 0x100, 0, &[], &[(20, OBJECT), (21, OBJECT)]);
    w.class_dump(0x120, 0x110, 0, &[], &[]);
    w.class_dump(0x130, 0x110, 0, &[], &[]);
    w.class_dump(0x140, 0x110, 0, &[], &[]);
    let fields = [(22, OBJECT), (23, OBJECT), (24, OBJECT), (25, OBJECT)];
    w.class_dump(0x150, 0x100, 0, &[], &fields);
    w.class_dump(0x160, 0x100, 0, &[], &[(26, OBJECT), (27, INT)]);
    w.class_dump(0x170, 0x120, 0, &[], &[(26, OBJECT)]);
    let ids = |w: &Writer, v: &[u64]| v.iter().flat_map(|&x| w.idb(x)).collect::<Vec<u8>>();
    let d = ids(&w, &[0x210, 0x220, 0x230, 0x240]);
    w.instance(0x200, 0x150, &d);
    // Instance data: own fields first, then the superclass's.
    let d = ids(&w, &[0x300, 0]);
    w.instance(0x210, 0x120, &d);
    w.instance(0x220, 0x130, &d);
    let d = ids(&w, &[0, 0x320, 0]);
    w.instance(0x230, 0x170, &d);
    let d = ids(&w, &[0x330, 0]);
    w.instance(0x240, 0x140, &d);
    for (o, next) in [(0x300, 0x310), (0x310, 0), (0x320, 0), (0x330, 0)] {
        let mut d = w.idb(next);
        d.extend(5u32.to_be_bytes());
        w.instance(o, 0x160, &d);
    }
    w.root(0x03, 0x200);
    for c in (0x100..=0x170).step_by(0x10) {
        w.root(0x05, c); // the classes are system classes
    }
    w.finish()
}

#[test]
fn an_object_held_only_by_a_weak_reference_is_not_retained_by_it() {
    use heaptui_core::analysis::Analysis;
    use heaptui_core::import::References;
    for id in [4, 8] {
        let bytes = referents_heap(id);
        let analyse = |references| {
            let options = ImportOptions {
                references,
                ..Default::default()
            };
            let m = import_bytes_with(Path::new("r.hprof"), &bytes, &options).unwrap();
            assert_eq!(m.diagnostics.total(), 0, "{:?}", m.diagnostics.messages);
            Analysis::from_dump(m, &DuplicateOptions::default(), &Progress::new()).unwrap()
        };
        let at = |a: &Analysis, id: u64| a.dump().index_of(id).unwrap();

        // By default referents retain nothing.
        let a = analyse(References::Strong);
        let r = a.dump().referents.as_ref().unwrap();
        assert_eq!(r.len(), 4);
        assert!(!r.strong);
        let weak = at(&a, 0x210);
        assert_eq!(r.of(weak).unwrap().referent, at(&a, 0x300));
        assert!(
            a.graph.refs(weak).iter().all(|t| t != at(&a, 0x300)),
            "the referent is not a reference"
        );
        assert_eq!(
            a.dom.retained_objects(weak.index()),
            1,
            "a weak reference retains only itself"
        );
        for held in [0x300, 0x310, 0x320, 0x330] {
            assert!(!a.dom.is_reachable(at(&a, held).raw()), "{held:x}");
        }
        let mine = at(&a, 0x230);
        assert_eq!(
            r.of(mine).unwrap().strength,
            heaptui_core::model::Strength::Weak,
            "a subclass of WeakReference"
        );
        let h = a.summary.held_by_references.unwrap();
        let payload = a.dump().size_of(at(&a, 0x300));
        // 0x300 is softly and weakly held: soft, the stronger, counts; so
        // does 0x310 behind it.
        assert_eq!(h.by_strength[0], (2, 2 * payload));
        assert_eq!(h.by_strength[1], (1, payload));
        assert_eq!(h.by_strength[2], (0, 0));
        assert_eq!(h.by_strength[3], (1, payload));
        assert_eq!(a.summary.unreachable_objects, 4, "part of the unreachable");
        assert!(
            a.duplicates.set_of(at(&a, 0x320).raw()).is_none(),
            "left out of duplicates"
        );

        // `--references all`: the referents retain as fields do.
        let b = analyse(References::All);
        assert!(b.dump().referents.as_ref().unwrap().strong);
        let mine = at(&b, 0x230);
        assert_eq!(b.dom.retained_objects(mine.index()), 2, "it retains 0x320");
        assert_eq!(b.dom.idom.get(at(&b, 0x300).index()), at(&b, 0x200).raw());
        let h = b.summary.held_by_references.unwrap();
        assert_eq!((h.objects(), h.bytes()), (0, 0));
        assert_eq!(b.summary.unreachable_objects, 0);
        assert_eq!(
            b.summary.references,
            a.summary.references + 4,
            "the four referents are references"
        );
    }
}

/// Every primitive type, a superclass, a String's skipped hash, statics
/// with values and primitive arrays, decoded as the inspector shows them.
#[test]
fn every_field_is_decoded_with_its_value() {
    use heaptui_core::model::{FieldValue, ObjectFields};
    for id in [4, 8] {
        let mut w = Writer::new("1.0.2", id);
        let names = [
            (1, "demo/Base"),
            (2, "demo/Child"),
            (3, "java/lang/String"),
            (4, "[Ljava/lang/String;"),
            (10, "flag"),
            (11, "letter"),
            (12, "ratio"),
            (13, "big"),
            (14, "small"),
            (15, "short"),
            (16, "count"),
            (17, "stamp"),
            (18, "other"),
            (19, "base"),
            (20, "value"),
            (21, "hash"),
            (22, "COUNTER"),
            (23, "SELF"),
        ];
        for (i, n) in names {
            w.string(i, n);
        }
        for (c, n) in [(0x100, 1), (0x110, 2), (0x120, 3), (0x130, 4)] {
            w.load_class(c, n);
        }
        w.class_dump(0x130, 0, 0, &[], &[]);
        w.class_dump(0x100, 0, 0, &[], &[(19, INT), (18, OBJECT)]);
        let statics = [
            (22, LONG, (-7i64).to_be_bytes().to_vec()),
            (23, OBJECT, w.idb(0x200)),
        ];
        let fields = [
            (10, BOOLEAN),
            (11, CHAR),
            (12, 6),
            (13, 7),
            (14, BYTE),
            (15, 9),
            (16, INT),
            (17, LONG),
        ];
        w.class_dump(0x110, 0x100, 0, &statics, &fields);
        w.class_dump(0x120, 0, 0, &[], &[(20, OBJECT), (21, INT)]);
        // Own fields first, then the superclass's.
        let mut d = vec![1u8, 0, b'x'];
        d.extend(0.75f32.to_be_bytes());
        d.extend((-2.5f64).to_be_bytes());
        d.push(0xfe);
        d.extend((-3i16).to_be_bytes());
        d.extend(1000i32.to_be_bytes());
        d.extend(i64::MAX.to_be_bytes());
        d.extend(42i32.to_be_bytes());
        d.extend(w.idb(0x300));
        w.instance(0x200, 0x110, &d);
        let mut d = w.idb(0x310);
        d.extend(12345i32.to_be_bytes());
        w.instance(0x300, 0x120, &d);
        w.primitive_array(0x310, CHAR, &[0, b'h', 0, b'\n']);
        let ints: Vec<u8> = (1..=20i32).flat_map(|i| i.to_be_bytes()).collect();
        w.primitive_array(0x320, INT, &ints);
        w.object_array(0x330, 0x130, &[0x300]);
        w.root(0x03, 0x200);
        let m = import(&w.finish()).unwrap();
        let at = |id: u64| m.index_of(id).unwrap();
        let Some(ObjectFields::Instance(f)) = m.fields(at(0x200)) else {
            panic!("an instance")
        };
        let shown: Vec<String> = f
            .iter()
            .map(|f| match &f.value {
                FieldValue::Primitive(v) => format!("{} {} = {v}", f.ty, f.name),
                FieldValue::Ref(Some(o)) => {
                    format!("{} {} → {:x}", f.ty, f.name, m.ids.get(o.index()))
                }
                other => format!("{} {} {other:?}", f.ty, f.name),
            })
            .collect();
        assert_eq!(
            shown,
            [
                "boolean flag = true",
                "char letter = 'x'",
                "float ratio = 0.75",
                "double big = -2.5",
                "byte small = -2",
                "short short = -3",
                "int count = 1000",
                &format!("long stamp = {}", i64::MAX),
                "int base = 42",
                "ref other → 300",
            ],
            "{id}-byte ids"
        );
        assert_eq!(f[0].declared_by, Some(at(0x110)));
        assert_eq!(f[9].declared_by, Some(at(0x100)), "the superclass's");
        // A String's cached hash is not kept.
        let Some(ObjectFields::Instance(s)) = m.fields(at(0x300)) else {
            panic!("a string")
        };
        assert_eq!(s[0].value, FieldValue::Ref(Some(at(0x310))));
        assert_eq!(s[1].value, FieldValue::NotKept);
        // A class shows its statics.
        let Some(ObjectFields::Class(st)) = m.fields(at(0x110)) else {
            panic!("a class")
        };
        assert_eq!(st[0].value, FieldValue::Primitive("-7".into()));
        assert_eq!(st[1].value, FieldValue::Ref(Some(at(0x200))));
        // Primitive arrays: length, first elements, text escaped.
        let Some(ObjectFields::PrimitiveArray {
            element,
            length,
            first,
            text,
        }) = m.fields(at(0x310))
        else {
            panic!("a char[]")
        };
        assert_eq!((element, length), ("char", Some(2)));
        assert_eq!(first, ["'h'", "'\\u000a'"]);
        assert_eq!(text.as_deref(), Some("h\\x0a"));
        assert_eq!(m.fields(at(0x330)), None, "an object array");
        let Some(ObjectFields::PrimitiveArray { length, first, .. }) = m.fields(at(0x320)) else {
            panic!("an int[]")
        };
        assert_eq!(length, Some(20));
        assert_eq!(first.len(), 16);
        assert_eq!(first[15], "16");
    }
}

/// `fixtures/leaky.hprof.gz`: the main thread sleeps in `Leaky.main` (line
/// 27 of `fixtures/Leaky.java`, `Thread.sleep`), so its locals are Java
/// frame roots of thread `main` in frame `Leaky.main(Leaky.java:27)`, the
/// frame below `java.lang.Thread.sleep(Native Method)`.
#[test]
fn java_frame_roots_name_their_thread_and_frame() {
    let m = import_file(&fixture("leaky.hprof.gz"), &Progress::new()).unwrap();
    let p = &m.root_places;
    assert_eq!(p.of_root.len(), m.roots.len());
    let mut seen: Vec<(String, String, String)> = (0..m.roots.len())
        .filter(|&r| m.roots[r].kind == root_kind::LOCAL)
        .map(|r| {
            (
                p.thread(r).map_or("-".into(), |t| t.name.to_string()),
                p.frame(r).unwrap_or("-").to_string(),
                m.type_name(m.roots[r].object).to_string(),
            )
        })
        .collect();
    seen.sort();
    seen.dedup();
    eprintln!("{seen:#?}");
    assert!(
        seen.iter().any(|(t, f, ty)| t == "main"
            && f == "Leaky.main(Leaky.java:27)"
            && ty == "java.lang.String[]"),
        "{seen:#?}"
    );
    // Every Java frame root names a thread; the thread object roots name
    // theirs, and the main thread's object is the Thread named main.
    assert!((0..m.roots.len())
        .filter(|&r| m.roots[r].kind == root_kind::LOCAL)
        .all(|r| p.thread(r).is_some() && p.frame(r).is_some()));
    let main = p.threads.iter().find(|t| &*t.name == "main").unwrap();
    let o = main.object.expect("the main thread's object");
    assert_eq!(m.type_name(o), "java.lang.Thread");
    // Roots outside threads have no place.
    assert!((0..m.roots.len())
        .filter(|&r| m.roots[r].kind == root_kind::STATIC)
        .all(|r| p.thread(r).is_none() && p.frame(r).is_none()));
}

/// A thread's name and its frames' names come from the dump: control
/// characters in them reach the model (and so the terminal) escaped.
#[test]
fn thread_names_and_frames_from_the_dump_are_escaped() {
    let mut w = Writer::new("1.0.2", 8);
    for (id, text) in [
        (1, "java/lang/Thread"),
        (2, "java/lang/String"),
        (3, "name"),
        (4, "value"),
        (5, "run\x1b[2J"),
        (6, "()V"),
        (7, "Evil.java"),
        (8, "app/Evil\x07"),
    ] {
        w.string(id, text);
    }
    w.load_class(0x100, 1);
    w.load_class(0x200, 2);
    // LOAD_CLASS serial 9: app/Evil; STACK FRAME 0x50 in it, line 12;
    // STACK TRACE 3 of thread 5: that frame.
    let mut b = 9u32.to_be_bytes().to_vec();
    b.extend(w.idb(0x300));
    b.extend(0u32.to_be_bytes());
    b.extend(w.idb(8));
    w.record(0x02, &b);
    let mut f = w.idb(0x50);
    for s in [5, 6, 7] {
        f.extend(w.idb(s));
    }
    f.extend(9u32.to_be_bytes());
    f.extend(12u32.to_be_bytes());
    w.record(0x04, &f);
    let mut t = 3u32.to_be_bytes().to_vec();
    t.extend(5u32.to_be_bytes());
    t.extend(1u32.to_be_bytes());
    t.extend(w.idb(0x50));
    w.record(0x05, &t);
    w.class_dump(0x100, 0, 0, &[], &[(3, OBJECT)]);
    w.class_dump(0x200, 0, 0, &[], &[(4, OBJECT)]);
    w.class_dump(0x300, 0, 0, &[], &[]);
    let (thread, string, chars, local) =
        (w.idb(0x1000), w.idb(0x2000), w.idb(0x3000), w.idb(0x4000));
    w.instance(0x1000, 0x100, &string);
    w.instance(0x2000, 0x200, &chars);
    let name: Vec<u8> = "main\x1b[31m"
        .encode_utf16()
        .flat_map(u16::to_be_bytes)
        .collect();
    w.primitive_array(0x3000, CHAR, &name);
    w.instance(0x4000, 0x300, &[]);
    // ROOT THREAD OBJECT (serial 5, trace 3), ROOT JAVA FRAME (thread 5,
    // frame 0).
    w.sub(0x08, &[&thread, &5u32.to_be_bytes(), &3u32.to_be_bytes()]);
    w.sub(0x03, &[&local, &5u32.to_be_bytes(), &0u32.to_be_bytes()]);
    let m = import(&w.finish()).unwrap();
    let p = &m.root_places;
    let frame_root = (0..m.roots.len())
        .find(|&r| m.roots[r].kind == root_kind::LOCAL)
        .unwrap();
    assert_eq!(&*p.thread(frame_root).unwrap().name, "main\\x1b[31m");
    assert_eq!(
        p.frame(frame_root),
        Some("app.Evil\\x07.run\\x1b[2J(Evil.java:12)")
    );
    assert_eq!(
        p.describe(frame_root).as_deref(),
        Some("thread main\\x1b[31m, frame app.Evil\\x07.run\\x1b[2J:12")
    );
}

/// Referents are not references by default, so two weak references are
/// copies only when they refer to the same object: 0x210 and 0x220 both
/// refer to 0x300, 0x230 to 0x310 (all three rooted, as are 0x300, 0x310).
#[test]
fn weak_references_are_duplicates_only_with_the_same_referent() {
    use heaptui_core::analysis::Analysis;
    let mut w = Writer::new("1.0.2", 8);
    for (i, n) in [
        (1, "java/lang/Object"),
        (2, "java/lang/ref/Reference"),
        (3, "java/lang/ref/WeakReference"),
        (4, "demo/Key"),
        (20, "referent"),
        (21, "n"),
    ] {
        w.string(i, n);
    }
    for (c, n) in [(0x100, 1), (0x110, 2), (0x120, 3), (0x130, 4)] {
        w.load_class(c, n);
    }
    w.class_dump(0x100, 0, 0, &[], &[]);
    w.class_dump(0x110, 0x100, 0, &[], &[(20, OBJECT)]);
    w.class_dump(0x120, 0x110, 0, &[], &[]);
    w.class_dump(0x130, 0x100, 0, &[], &[(21, INT)]);
    for (o, to) in [(0x210, 0x300), (0x220, 0x300), (0x230, 0x310)] {
        let d = w.idb(to);
        w.instance(o, 0x120, &d);
        w.root(0x05, o);
    }
    for (o, n) in [(0x300, 1u32), (0x310, 2)] {
        w.instance(o, 0x130, &n.to_be_bytes());
        w.root(0x05, o);
    }
    for c in (0x100..=0x130).step_by(0x10) {
        w.root(0x05, c);
    }
    let m = import(&w.finish()).unwrap();
    let ids = |m: &Model, o: u32| m.ids.get(o as usize);
    let a = Analysis::from_dump(m, &DuplicateOptions::default(), &Progress::new()).unwrap();
    let d = a.dump();
    let sets: Vec<Vec<u64>> = a
        .duplicates
        .numbered()
        .filter(|(_, s)| {
            d.name_of_type(heaptui_core::model::TypeIdx(s.type_index))
                == "java.lang.ref.WeakReference"
        })
        .map(|(i, _)| a.duplicates.members(i).iter().map(|&o| ids(d, o)).collect())
        .collect();
    assert_eq!(sets, vec![vec![0x210, 0x220]]);
}

/// A dump cut short (`head -c`) says so in its first message, however many
/// references to the objects cut off come before the cut in the file.
#[test]
fn a_cut_dump_says_so_first() {
    let bytes = {
        use std::io::Read;
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(std::fs::File::open(fixture("leaky.hprof.gz")).unwrap())
            .read_to_end(&mut out)
            .unwrap();
        out
    };
    for cut in [2_000_000, bytes.len() / 2, bytes.len() - 1000] {
        let m = match import_bytes(Path::new("cut.hprof"), &bytes[..cut]) {
            Ok(m) => m,
            // Cut before the first object: the error says why.
            Err(e) => {
                assert!(e.to_string().contains("the file ended early"), "{cut}: {e}");
                continue;
            }
        };
        let d = &m.diagnostics;
        assert!(
            d.messages[0].contains("the file ended early"),
            "{cut}: {:?}",
            &d.messages[..3.min(d.messages.len())]
        );
    }
}

// ---------------------------------------------------------------- layouts

/// A heap laid out as a JVM with header `h`, references of `r` bytes and
/// 8-byte alignment would: ids are addresses, each object right after the
/// one before; array elements start after the 4-byte length, aligned to 8
/// bytes (12- and 16-byte headers) or to the element size (8-byte
/// headers). One class without subclasses (of three or more) may carry
/// bytes no field explains (as `@Contended` does). Returns the dump and
/// every object's size by that layout.
fn laid_out_heap(seed: u64, h: u64, r: u64) -> (Vec<u8>, HashMap<u64, u64>) {
    let mut rng = Rng(seed);
    let align = |n: u64| n.div_ceil(8) * 8;
    let mut w = Writer::new("1.0.2", 8);
    let k = 2 + rng.below(5);
    // (superclass, fields, padding)
    let mut classes: Vec<(Option<usize>, Vec<u8>, u64)> = Vec::new();
    for c in 0..k {
        let sup = (c > 0 && rng.below(3) == 0).then(|| rng.below(c));
        let fields = (0..rng.below(5))
            .map(|_| [OBJECT, INT, BYTE, CHAR, LONG, BOOLEAN][rng.below(6)])
            .collect();
        classes.push((sup, fields, 0));
    }
    let padded = rng.below(k);
    if k >= 3 && !classes.iter().any(|x| x.0 == Some(padded)) {
        classes[padded].2 = 16 * (1 + rng.below(3)) as u64;
    }
    let chain = |c: usize| {
        let mut out = Vec::new();
        let mut cur = Some(c);
        while let Some(x) = cur {
            out.extend(classes[x].1.iter().copied());
            cur = classes[x].0;
        }
        out
    };
    let class_id = |c: usize| 0x7000_0000u64 + 0x100 * c as u64;
    let object_array_class = 0x7100_0000u64;
    w.string(0x900, "java/lang/Object[]");
    w.string(0x901, "f");
    for c in 0..k {
        w.string(0x800 + c as u64, &format!("pkg/C{c}"));
        w.load_class(class_id(c), 0x800 + c as u64);
    }
    w.load_class(object_array_class, 0x900);
    for (c, (sup, fields, _)) in classes.iter().enumerate() {
        let fields: Vec<(u64, u8)> = fields.iter().map(|&t| (0x901, t)).collect();
        w.class_dump(class_id(c), sup.map_or(0, class_id), 0, &[], &fields);
    }
    w.class_dump(object_array_class, 0, 0, &[], &[]);
    let mut sizes = HashMap::new();
    let mut at = 0x1_0000_0000u64;
    let n = 60 + rng.below(100);
    for i in 0..n {
        let id = at;
        // Every class has two instances or more (a padded class's size is
        // known from two equal distances): the first ones go round. Then
        // int and object arrays of lengths 1 and 3, which tell the four
        // layouts apart, as a real heap's thousands of arrays do.
        let fixed = i.checked_sub(2 * k).filter(|&j| j < 4);
        let shape = match fixed {
            _ if i < 2 * k => 0,
            Some(j) => 2 + j / 2,
            None => rng.below(4),
        };
        let len_of = |rng: &mut Rng, max: usize| match fixed {
            Some(j) => 1 + 2 * (j % 2),
            None => rng.below(max),
        };
        let size = match shape {
            0 | 1 => {
                let c = if i < 2 * k { i % k } else { rng.below(k) };
                let fields = chain(c);
                let data: Vec<u8> = fields
                    .iter()
                    .flat_map(|&t| vec![0u8; prim_size(t)])
                    .collect();
                w.instance(id, class_id(c), &data);
                let refs = fields.iter().filter(|&&t| t == OBJECT).count() as u64;
                let prims: u64 = fields
                    .iter()
                    .filter(|&&t| t != OBJECT)
                    .map(|&t| prim_size(t) as u64)
                    .sum();
                align(h + prims + refs * r) + classes[c].2
            }
            2 => {
                let t = match fixed {
                    Some(_) => INT,
                    None => [BOOLEAN, CHAR, BYTE, INT, LONG][rng.below(5)],
                };
                let len = len_of(&mut rng, 9);
                let e = prim_size(t) as u64;
                w.primitive_array(id, t, &vec![0u8; len * prim_size(t)]);
                let base = if h >= 12 {
                    align(h + 4)
                } else {
                    (h + 4).div_ceil(e.max(4)) * e.max(4)
                };
                align(base + len as u64 * e)
            }
            _ => {
                let len = len_of(&mut rng, 7);
                w.object_array(id, object_array_class, &vec![0u64; len]);
                let base = if h >= 12 {
                    align(h + 4)
                } else {
                    (h + 4).div_ceil(r.max(4)) * r.max(4)
                };
                align(base + len as u64 * r)
            }
        };
        sizes.insert(id, size);
        at += size;
    }
    (w.finish(), sizes)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    /// The layout found from the distances between ids sizes every object
    /// as the layout that placed them, padding included.
    #[test]
    fn sizes_follow_the_layout_that_placed_the_objects(
        seed in any::<u64>(),
        layout in 0usize..4,
    ) {
        let (h, r) = [(12, 4), (12, 8), (16, 8), (8, 4)][layout];
        let (bytes, want) = laid_out_heap(seed, h, r);
        let m = import(&bytes).unwrap();
        let detail = &m.details.iter().find(|(k, _)| k == "object layout").unwrap().1;
        prop_assert!(detail.contains("(from the dump: "), "{}", detail);
        for o in 0..m.objects() {
            if let Some(&size) = want.get(&m.ids.get(o)) {
                prop_assert_eq!(
                    m.sizes.get(o), size,
                    "{:x} {} ({})", m.ids.get(o), m.type_name(ObjectIdx(o as u32)), detail
                );
            }
        }
    }
}
