//! The second pass: the object sub-records of one chunk decoded into
//! struct-of-arrays parts (ids, types, MAT sizes, references as raw ids with
//! their labels, value bytes). Chunks are independent, so they run in
//! parallel; `assemble` stitches them together in file order.

use super::classes::{label, parse_class_dump, Classes, Op};
use super::reader::{align8, be_id, BasicType, Reader};
use super::scan::{
    root_extra, Chunk, SUB_CLASS_DUMP, SUB_INSTANCE, SUB_OBJ_ARRAY, SUB_PRIM_ARRAY,
    SUB_PRIM_ARRAY_NODATA,
};
use super::SizeModel;
use crate::model::{Collector, Kind};
use crate::model::{IdIndex, Labels, ValueKind};

/// A type not known yet: the class was never dumped (fixed in `assemble`).
pub(super) const UNDEFINED: u32 = u32::MAX;

/// What every chunk's decoder shares.
pub(super) struct Context<'a> {
    pub bytes: &'a [u8],
    pub classes: &'a Classes,
    pub sizes: SizeModel,
    /// Type of class objects (`java.lang.Class`).
    pub class_type: u32,
    /// Type of each primitive array, by [`BasicType::prim_index`].
    pub prim_types: [u32; 8],
    /// Class loader ids and, per loader, the classes it defined.
    pub loader_ids: Vec<u64>,
    pub loader_index: IdIndex,
}

/// One chunk's objects.
#[derive(Default)]
pub(super) struct Decoded {
    pub ids: Vec<u64>,
    pub types: Vec<u32>,
    pub sizes: Vec<u64>,
    pub degrees: Vec<u32>,
    /// Referenced ids (nulls left out), in object order.
    pub refs: Vec<u64>,
    /// One label per entry of `refs`.
    pub labels: Vec<u32>,
    /// End of each object's value in `values` (chunk-local).
    pub value_ends: Vec<u64>,
    pub values: Vec<u8>,
    pub kinds: Vec<ValueKind>,
    /// Each object's offset from the chunk's start (for messages).
    pub at: Vec<u32>,
    /// (object in the chunk, class id) of objects whose class was never dumped.
    pub undefined: Vec<(u32, u64)>,
    pub issues: Collector,
}

impl Decoded {
    fn with_capacity(objects: usize) -> Self {
        // `objects` was counted by the scan, never read from the file.
        Decoded {
            ids: Vec::with_capacity(objects),
            types: Vec::with_capacity(objects),
            sizes: Vec::with_capacity(objects),
            degrees: Vec::with_capacity(objects),
            value_ends: Vec::with_capacity(objects),
            kinds: Vec::with_capacity(objects),
            at: Vec::with_capacity(objects),
            ..Decoded::default()
        }
    }

    /// Closes the current object: its degree and value end.
    fn finish(&mut self, refs_before: usize, kind: ValueKind) {
        self.degrees.push((self.refs.len() - refs_before) as u32);
        self.value_ends.push(self.values.len() as u64);
        self.kinds.push(kind);
    }

    fn begin(&mut self, id: u64, ty: u32, size: u64, at: usize, chunk: &Chunk) {
        self.ids.push(id);
        self.types.push(ty);
        self.sizes.push(size);
        self.at
            .push((at - chunk.start).min(u32::MAX as usize) as u32);
    }

    #[inline]
    fn reference(&mut self, target: u64, label: u32) {
        if target != 0 {
            self.refs.push(target);
            self.labels.push(label);
        }
    }
}

/// Decodes the objects of one chunk (its sub-records were checked by the scan).
pub(super) fn decode_chunk(cx: &Context, chunk: &Chunk) -> Decoded {
    let mut d = Decoded::with_capacity(chunk.objects as usize);
    let id_size = cx.sizes.id_size;
    let mut r = Reader::new(&cx.bytes[..chunk.end], chunk.start, id_size);
    while r.remaining() > 0 {
        let at = r.pos();
        let Some(tag) = r.u1() else { break };
        let ok = match tag {
            SUB_INSTANCE => instance(cx, &mut r, &mut d, at, chunk),
            SUB_OBJ_ARRAY => object_array(cx, &mut r, &mut d, at, chunk),
            SUB_PRIM_ARRAY | SUB_PRIM_ARRAY_NODATA => {
                primitive_array(cx, &mut r, &mut d, at, chunk, tag == SUB_PRIM_ARRAY)
            }
            SUB_CLASS_DUMP => class_object(cx, &mut r, &mut d, at, chunk),
            0xfe => r.skip(4 + id_size),
            t => root_extra(t, id_size).and_then(|e| r.skip(id_size + e)),
        };
        if ok.is_none() {
            // The scan read these bytes without trouble, so this cannot
            // happen; stop the chunk rather than misread it.
            d.issues.push(Kind::Skipped, at as u64, || {
                format!(
                    "sub-record 0x{tag:02x} could not be decoded; the rest of its chunk is skipped"
                )
            });
            break;
        }
    }
    // These grew by doubling: give back the slack before all chunks wait
    // together for assembly.
    d.refs.shrink_to_fit();
    d.labels.shrink_to_fit();
    d.values.shrink_to_fit();
    d
}

fn instance(cx: &Context, r: &mut Reader, d: &mut Decoded, at: usize, chunk: &Chunk) -> Option<()> {
    let id = r.id()?;
    r.u4()?;
    let class_id = r.id()?;
    let n = r.u4()? as usize;
    let data = r.take(n)?;
    let refs_before = d.refs.len();
    let values_before = d.values.len();
    match cx.classes.get(class_id) {
        Some(c) => {
            let layout = &cx.classes.layouts[c as usize];
            d.begin(
                id,
                cx.classes.type_of[c as usize],
                layout.shallow,
                at,
                chunk,
            );
            let used = fields(d, &layout.ops, data, cx.sizes.id_size);
            if used != n || used != layout.data_bytes {
                let name = &cx.classes.types.names[cx.classes.type_of[c as usize] as usize];
                let want = layout.data_bytes;
                d.issues.push(Kind::Skipped, at as u64, || {
                    format!("instance {id:x} of {name} holds {n} field bytes, its class layout {want}; fields read as far as they fit")
                });
            }
        }
        None => {
            d.undefined.push((d.ids.len() as u32, class_id));
            let size = align8(cx.sizes.header + n as u64);
            d.begin(id, UNDEFINED, size, at, chunk);
        }
    }
    d.reference(class_id, label::CLASS);
    if let Some(l) = cx.loader_index.get(&cx.loader_ids, id) {
        for &c in &cx.classes.loaders[&cx.loader_ids[l as usize]] {
            d.reference(c, label::LOADED_CLASS);
        }
    }
    let kind = if d.values.len() > values_before {
        ValueKind::Bytes
    } else {
        ValueKind::None
    };
    d.finish(refs_before, kind);
    Some(())
}

/// Applies a layout's ops to an instance's field bytes; the bytes used.
#[inline]
fn fields(d: &mut Decoded, ops: &[Op], data: &[u8], id_size: usize) -> usize {
    let mut p = 0usize;
    for &op in ops {
        match op {
            Op::Ref(l) => {
                let Some(b) = data.get(p..p + id_size) else {
                    break;
                };
                d.reference(be_id(b), l);
                p += id_size;
            }
            Op::Keep(n) | Op::Skip(n) => {
                let Some(b) = data.get(p..p + n as usize) else {
                    break;
                };
                if matches!(op, Op::Keep(_)) {
                    d.values.extend_from_slice(b);
                }
                p += n as usize;
            }
        }
    }
    p
}

fn object_array(
    cx: &Context,
    r: &mut Reader,
    d: &mut Decoded,
    at: usize,
    chunk: &Chunk,
) -> Option<()> {
    let id = r.id()?;
    r.u4()?;
    let len = r.u4()? as usize;
    let class_id = r.id()?;
    let elements = r.take(len.checked_mul(cx.sizes.id_size)?)?;
    let size = align8(cx.sizes.array_header + len as u64 * cx.sizes.ref_size);
    let ty = match cx.classes.get(class_id) {
        Some(c) => cx.classes.type_of[c as usize],
        None => {
            d.undefined.push((d.ids.len() as u32, class_id));
            UNDEFINED
        }
    };
    d.begin(id, ty, size, at, chunk);
    let refs_before = d.refs.len();
    for (i, e) in elements.chunks_exact(cx.sizes.id_size).enumerate() {
        d.reference(be_id(e), Labels::index(i as u64));
    }
    d.reference(class_id, label::CLASS);
    d.finish(refs_before, ValueKind::None);
    Some(())
}

fn primitive_array(
    cx: &Context,
    r: &mut Reader,
    d: &mut Decoded,
    at: usize,
    chunk: &Chunk,
    with_data: bool,
) -> Option<()> {
    let id = r.id()?;
    r.u4()?;
    let len = r.u4()? as u64;
    let ty = BasicType::from_tag(r.u1()?).filter(|t| *t != BasicType::Object)?;
    let esize = ty.file_size(1) as u64;
    let size = align8(cx.sizes.array_header + len * esize);
    d.begin(id, cx.prim_types[ty.prim_index()], size, at, chunk);
    let kind = if with_data {
        d.values
            .extend_from_slice(r.take(usize::try_from(len * esize).ok()?)?);
        if ty == BasicType::Char {
            ValueKind::Utf16Be
        } else {
            ValueKind::Bytes
        }
    } else {
        ValueKind::None
    };
    let refs_before = d.refs.len();
    d.finish(refs_before, kind);
    Some(())
}

fn class_object(
    cx: &Context,
    r: &mut Reader,
    d: &mut Decoded,
    at: usize,
    chunk: &Chunk,
) -> Option<()> {
    let c = parse_class_dump(r).ok()?;
    let heap: u64 = c
        .statics
        .iter()
        .map(|s| s.1.heap_size(cx.sizes.ref_size))
        .sum();
    d.begin(
        c.id,
        cx.class_type,
        align8(cx.sizes.header + heap),
        at,
        chunk,
    );
    let refs_before = d.refs.len();
    d.reference(c.super_id, label::SUPER);
    d.reference(c.loader, label::LOADER);
    d.reference(c.signers, label::SIGNERS);
    d.reference(c.protection_domain, label::PROTECTION_DOMAIN);
    let index = cx.classes.get(c.id);
    for (k, s) in c.statics.iter().enumerate() {
        let l = index
            .and_then(|i| cx.classes.static_labels[i as usize].get(k).copied())
            .unwrap_or(Labels::NONE);
        d.reference(s.2, l);
    }
    // The class's name is its value: it tells classes apart (two classes
    // with the same shape are not copies of each other) and the inspector
    // shows it.
    if let Some(i) = index {
        let name = &cx.classes.types.names[cx.classes.type_of[i as usize] as usize];
        d.values.extend_from_slice(name.as_bytes());
    }
    d.finish(refs_before, ValueKind::Utf8);
    Some(())
}
