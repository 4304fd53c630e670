//! The object sub-records of one chunk, read twice. [`walk`] reads each
//! object (id, type, MAT size, references with their labels, value bytes)
//! and hands it to a [`Sink`]: `assemble` walks every chunk first with
//! [`Count`], which writes the ids into the model's id array, gathers
//! their span and counts each chunk's references, value bytes and strings,
//! then, once the id index is built, with [`Write`], which resolves the
//! references, notes the arrays strings point at and writes every array
//! straight into the chunk's own part of the model's. Chunks are
//! independent, so both walks run in parallel; no per-chunk array is built
//! and then copied, which on a machine that zeroes fresh pages slowly was
//! half of the import's time. Both walks run the same code on the same
//! bytes, so the counts of the first are what the second writes.

use super::classes::{label, parse_class_dump, Classes, Layout, Op, StringLayout};
use super::layout::{self, Evidence, Shape, Sizing};
use super::reader::{be_id, BasicType, Reader};
use super::scan::{
    root_extra, Chunk, SUB_CLASS_DUMP, SUB_INSTANCE, SUB_OBJ_ARRAY, SUB_PRIM_ARRAY,
    SUB_PRIM_ARRAY_NODATA,
};
use crate::import::source::Source;
use crate::model::{Collector, Kind, Strength};
use crate::model::{IdIndex, IdSpan, Ids, Labels, ValueKind, WideIdIndex};

/// A type not known yet: the class was never dumped (fixed in `assemble`).
pub(super) const UNDEFINED: u32 = u32::MAX;

/// A reference whose target is not in the dump, or of a record that is
/// dropped: `assemble` leaves these out.
pub(super) const DROPPED: u32 = u32::MAX;

/// What every chunk's walk shares.
pub(super) struct Context<'a> {
    pub bytes: &'a [u8],
    /// Where `bytes` come from: a walk gives back the pages behind it
    /// every [`RELEASE_STEP`] bytes.
    pub source: &'a Source,
    pub classes: &'a Classes,
    pub id_size: usize,
    /// How objects are sized: the model during the first walk (which
    /// gathers the evidence and sizes nothing), the layout found in the
    /// second.
    pub sizing: Sizing,
    /// Type of class objects (`java.lang.Class`).
    pub class_type: u32,
    /// Type of each primitive array, by [`BasicType::prim_index`].
    pub prim_types: [u32; 8],
    /// The class loaders' ids.
    pub loaders: Loaders,
    /// Whether referents are references as well (`--references all`).
    pub strong_referents: bool,
}

/// The ids of the objects that are class loaders, asked about for every
/// instance in both walks: a 4096-bit filter answers "no" for nearly all
/// of them before the index is read (a hash look-up each).
pub(super) struct Loaders {
    pub ids: Vec<u64>,
    index: IdIndex,
    filter: Box<[u64; 64]>,
}

impl Loaders {
    pub fn new(ids: Vec<u64>) -> Loaders {
        let mut filter = Box::new([0u64; 64]);
        for &id in &ids {
            let bit = Self::bit(id);
            filter[bit / 64] |= 1 << (bit % 64);
        }
        Loaders {
            index: IdIndex::build(&ids),
            ids,
            filter,
        }
    }

    #[inline]
    fn bit(id: u64) -> usize {
        (id.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 52) as usize
    }

    /// The loader's position in `ids`, if `id` is a loader's.
    #[inline]
    pub fn get(&self, id: u64) -> Option<u32> {
        let bit = Self::bit(id);
        if self.filter[bit / 64] & (1 << (bit % 64)) == 0 {
            return None;
        }
        self.index.get(self.ids.as_slice(), id)
    }
}

/// What [`walk`] finds, in file order.
pub(super) trait Sink {
    /// An object begins at file offset `at`.
    fn object(&mut self, id: u64, ty: u32, size: u64, at: usize);
    /// What the object just begun is, for the distance to the next one
    /// (see `layout`).
    #[inline]
    fn shape(&mut self, _shape: Shape) {}
    /// The object just begun has a class the dump never defines.
    fn undefined(&mut self, _class_id: u64) {}
    /// The object just begun is class loader `l` (its place in
    /// [`Loaders::ids`]): whether its references to the classes it defined
    /// follow. Only the record of its id that is kept has them: a loader's
    /// id in M records must not cost M times its classes.
    fn loader(&mut self, l: u32) -> bool;
    /// A non-null reference of the current object.
    fn reference(&mut self, target: u64, label: u32);
    /// The current object's reference to its class, whose class index
    /// (into [`Classes`]) is known.
    #[inline]
    fn class_reference(&mut self, class_id: u64, _class: u32) {
        self.reference(class_id, label::CLASS);
    }
    /// The current object's non-null referent (it is a
    /// `java.lang.ref.Reference`).
    fn referent(&mut self, target: u64, label: u32, strength: Strength);
    /// Bytes of the current object's value.
    fn value(&mut self, bytes: &[u8]);
    /// The current object, whose references and value are all given, is
    /// a `java.lang.String`.
    #[inline]
    fn string(&mut self, _layout: StringLayout) {}
    /// The current object ends.
    fn finish(&mut self, kind: ValueKind);
    /// A problem at file offset `at`.
    fn issue(&mut self, kind: Kind, at: u64, why: impl FnOnce() -> String);
}

/// Reads the objects of one chunk (its sub-records were checked by the scan).
pub(super) fn walk<S: Sink>(cx: &Context, chunk: &Chunk, s: &mut S) {
    let id_size = cx.id_size;
    let mut r = Reader::new(&cx.bytes[..chunk.end], chunk.start, id_size);
    let mut kept = chunk.start;
    while r.remaining() > 0 {
        let at = r.pos();
        if at - kept >= RELEASE_STEP {
            cx.source.release(kept, at - kept);
            kept = at;
        }
        let Some(tag) = r.u1() else { break };
        let ok = match tag {
            SUB_INSTANCE => instance(cx, &mut r, s, at),
            SUB_OBJ_ARRAY => object_array(cx, &mut r, s, at),
            SUB_PRIM_ARRAY | SUB_PRIM_ARRAY_NODATA => {
                primitive_array(cx, &mut r, s, at, tag == SUB_PRIM_ARRAY)
            }
            SUB_CLASS_DUMP => class_object(cx, &mut r, s, at),
            0xfe => r.skip(4 + id_size),
            t => root_extra(t, id_size).and_then(|e| r.skip(id_size + e)),
        };
        if ok.is_none() {
            // The scan read these bytes without trouble, so this cannot
            // happen; stop the chunk rather than misread it.
            s.issue(Kind::Skipped, at as u64, || {
                format!(
                    "sub-record 0x{tag:02x} could not be decoded; the rest of its chunk is skipped"
                )
            });
            break;
        }
    }
}

/// How far a walk reads before it gives back the pages behind it (mapped
/// pages count in the resident set): each walk in flight holds about
/// this much of the file beside the record it reads, whatever the chunk
/// size.
/// The pages between two releases are given back with the whole chunk
/// (`assemble`).
const RELEASE_STEP: usize = 256 << 10;

#[inline]
fn reference<S: Sink>(s: &mut S, target: u64, label: u32) {
    if target != 0 {
        s.reference(target, label);
    }
}

/// The reference to an object's class: through the class's index `class`
/// (its look-up, made once per object) where the class was dumped (half of
/// all references, to a few thousand objects).
#[inline]
fn class_reference<S: Sink>(s: &mut S, class_id: u64, class: Option<u32>) {
    match class {
        Some(c) => s.class_reference(class_id, c),
        None => reference(s, class_id, label::CLASS),
    }
}

fn instance<S: Sink>(cx: &Context, r: &mut Reader, s: &mut S, at: usize) -> Option<()> {
    let id = r.id()?;
    r.u4()?;
    let class_id = r.id()?;
    let n = r.u4()? as usize;
    let data = r.take(n)?;
    let mut kind = ValueKind::None;
    let class = cx.classes.get(class_id);
    let mut string = None;
    match class {
        Some(c) => {
            let layout = &cx.classes.layouts[c as usize];
            let ty = cx.classes.type_of[c as usize];
            string = cx.classes.string.filter(|st| st.ty == ty);
            s.object(id, ty, cx.sizing.instance(c), at);
            s.shape(Shape::Instance(c));
            let strength = layout.referent.unwrap_or(Strength::Weak);
            let (used, kept) = fields(s, &cx.classes.layouts, c, data, cx.id_size, strength);
            if kept {
                kind = ValueKind::Bytes;
            }
            if used != n || used != layout.data_bytes {
                let name = &cx.classes.types.names[ty as usize];
                let want = layout.data_bytes;
                s.issue(Kind::Skipped, at as u64, || {
                    format!("instance {id:x} of {name} holds {n} field bytes, its class layout {want}; fields read as far as they fit")
                });
            }
        }
        None => {
            s.object(id, UNDEFINED, cx.sizing.undefined_instance(n as u64), at);
            s.shape(Shape::Other);
            s.undefined(class_id);
        }
    }
    class_reference(s, class_id, class);
    if let Some(l) = cx.loaders.get(id).filter(|&l| s.loader(l)) {
        for &c in &cx.classes.loaders[&cx.loaders.ids[l as usize]] {
            reference(s, c, label::LOADED_CLASS);
        }
    }
    if let Some(st) = string {
        s.string(st);
    }
    s.finish(kind);
    Some(())
}

/// Applies the ops of class `c`'s layout, then of the layouts it continues
/// in, to an instance's field bytes: the bytes used, and whether any became
/// the value.
#[inline]
fn fields<S: Sink>(
    s: &mut S,
    layouts: &[Layout],
    c: u32,
    data: &[u8],
    id_size: usize,
    strength: Strength,
) -> (usize, bool) {
    let (mut p, mut kept) = (0usize, false);
    let mut ops = layouts[c as usize].ops.iter();
    let mut then = layouts[c as usize].then;
    while let Some(&op) = ops.next().or_else(|| {
        let next = &layouts[then? as usize];
        (ops, then) = (next.ops.iter(), next.then);
        ops.next()
    }) {
        match op {
            Op::Ref(l) => {
                let Some(b) = data.get(p..p + id_size) else {
                    break;
                };
                reference(s, be_id(b), l);
                p += id_size;
            }
            Op::Referent(l) => {
                let Some(b) = data.get(p..p + id_size) else {
                    break;
                };
                let target = be_id(b);
                if target != 0 {
                    s.referent(target, l, strength);
                }
                p += id_size;
            }
            Op::Keep(n) | Op::Skip(n) => {
                let Some(b) = data.get(p..p + n as usize) else {
                    break;
                };
                if matches!(op, Op::Keep(_)) && !b.is_empty() {
                    s.value(b);
                    kept = true;
                }
                p += n as usize;
            }
        }
    }
    (p, kept)
}

fn object_array<S: Sink>(cx: &Context, r: &mut Reader, s: &mut S, at: usize) -> Option<()> {
    let id = r.id()?;
    r.u4()?;
    let len = r.u4()? as usize;
    let class_id = r.id()?;
    let elements = r.take(len.checked_mul(cx.id_size)?)?;
    let size = cx.sizing.array(layout::OBJECT_ARRAY_KIND, len as u64);
    let class = cx.classes.get(class_id);
    match class {
        Some(c) => s.object(id, cx.classes.type_of[c as usize], size, at),
        None => {
            s.object(id, UNDEFINED, size, at);
            s.undefined(class_id);
        }
    }
    s.shape(Shape::Array(layout::OBJECT_ARRAY_KIND, len as u32));
    for (i, e) in elements.chunks_exact(cx.id_size).enumerate() {
        reference(s, be_id(e), Labels::index(i as u64));
    }
    class_reference(s, class_id, class);
    s.finish(ValueKind::None);
    Some(())
}

fn primitive_array<S: Sink>(
    cx: &Context,
    r: &mut Reader,
    s: &mut S,
    at: usize,
    with_data: bool,
) -> Option<()> {
    let id = r.id()?;
    r.u4()?;
    let len = r.u4()? as u64;
    let ty = BasicType::from_tag(r.u1()?).filter(|t| *t != BasicType::Object)?;
    let esize = ty.file_size(1) as u64;
    let data = if with_data {
        Some(r.take(usize::try_from(len * esize).ok()?)?)
    } else {
        None
    };
    let kind_of = layout::prim_kind(ty);
    s.object(
        id,
        cx.prim_types[ty.prim_index()],
        cx.sizing.array(kind_of, len),
        at,
    );
    s.shape(Shape::Array(kind_of, len as u32));
    let kind = match data {
        Some(b) => {
            s.value(b);
            if ty == BasicType::Char {
                ValueKind::Utf16Be
            } else {
                ValueKind::Bytes
            }
        }
        None => ValueKind::None,
    };
    s.finish(kind);
    Some(())
}

fn class_object<S: Sink>(cx: &Context, r: &mut Reader, s: &mut S, at: usize) -> Option<()> {
    let c = parse_class_dump(r).ok()?;
    let index = cx.classes.get(c.id);
    let (refs, prims) = c.statics.iter().fold((0, 0), |(r, p), s| match s.1 {
        BasicType::Object => (r + 1, p),
        t => (r, p + t.file_size(1) as u64),
    });
    // HotSpot lists its constant pool's resolved references as a static
    // field `<resolved_references>`, which the class object does not hold.
    let synthetic = index.map_or(0, |i| {
        cx.classes.static_labels[i as usize]
            .iter()
            .filter(|&&l| cx.classes.labels.names[l as usize].starts_with('<'))
            .count() as u64
    });
    let size = cx.sizing.class_object(prims, refs, synthetic);
    s.object(c.id, cx.class_type, size, at);
    s.shape(Shape::Other);
    reference(s, c.super_id, label::SUPER);
    reference(s, c.loader, label::LOADER);
    reference(s, c.signers, label::SIGNERS);
    reference(s, c.protection_domain, label::PROTECTION_DOMAIN);
    for (k, st) in c.statics.iter().enumerate() {
        let l = index
            .and_then(|i| cx.classes.static_labels[i as usize].get(k).copied())
            .unwrap_or(Labels::NONE);
        if st.1 == BasicType::Object {
            reference(s, st.2, l);
        }
    }
    // The class's name is its value: it tells classes apart (two classes
    // with the same shape are not copies of each other) and the inspector
    // shows it.
    if let Some(i) = index {
        let name = &cx.classes.types.names[cx.classes.type_of[i as usize] as usize];
        s.value(name.as_bytes());
    }
    s.finish(ValueKind::Utf8);
    Some(())
}

/// The first walk: ids into the chunk's part of the id array (the scan's
/// count of objects sized it; any beyond go to `extra`), their span (for
/// the id index), and the counts.
pub(super) struct Count<'a> {
    ids: &'a mut [u64],
    /// The distances between the chunk's objects.
    pub evidence: Evidence,
    id: u64,
    pub extra: Vec<u64>,
    pub span: IdSpan,
    pub objects: usize,
    pub refs: usize,
    pub value_bytes: usize,
    pub strings: usize,
    /// The chunk's class loaders: (object in the chunk, loader), whose
    /// references to their classes are not counted in `refs` (`assemble`
    /// adds them to the chunk of the record kept).
    pub loaders: Vec<(usize, u32)>,
    pub referents: usize,
    /// Whether referents are counted among the references.
    strong_referents: bool,
}

impl<'a> Count<'a> {
    pub fn new(ids: &'a mut [u64], strong_referents: bool) -> Count<'a> {
        Count {
            ids,
            evidence: Evidence::default(),
            id: 0,
            extra: Vec::new(),
            span: IdSpan::default(),
            objects: 0,
            refs: 0,
            value_bytes: 0,
            strings: 0,
            loaders: Vec::new(),
            referents: 0,
            strong_referents,
        }
    }
}

impl Sink for Count<'_> {
    #[inline]
    fn object(&mut self, id: u64, _ty: u32, _size: u64, _at: usize) {
        match self.ids.get_mut(self.objects) {
            Some(slot) => *slot = id,
            None => self.extra.push(id),
        }
        self.span.add(id);
        self.objects += 1;
        self.id = id;
    }
    #[inline]
    fn shape(&mut self, shape: Shape) {
        self.evidence.add(self.id, shape);
    }
    fn loader(&mut self, l: u32) -> bool {
        self.loaders.push((self.objects - 1, l));
        false
    }
    #[inline]
    fn reference(&mut self, _target: u64, _label: u32) {
        self.refs += 1;
    }
    fn referent(&mut self, _target: u64, _label: u32, _strength: Strength) {
        self.referents += 1;
        self.refs += self.strong_referents as usize;
    }
    #[inline]
    fn value(&mut self, bytes: &[u8]) {
        self.value_bytes += bytes.len();
    }
    #[inline]
    fn string(&mut self, _layout: StringLayout) {
        self.strings += 1;
    }
    #[inline]
    fn finish(&mut self, _kind: ValueKind) {}
    // The second walk reports what the first would.
    fn issue(&mut self, _kind: Kind, _at: u64, _why: impl FnOnce() -> String) {}
}

/// One chunk's parts of the model's arrays, sized by its [`Count`].
pub(super) struct Parts<'a> {
    pub types: &'a mut [u32],
    /// Each object's size, or [`u16::MAX`] for a size of 65,535 or more,
    /// which [`Written::big_sizes`] pairs with its object (as
    /// `Sizes::Half` keeps them).
    pub sizes: &'a mut [u16],
    pub kinds: &'a mut [ValueKind],
    /// End of each object's value in the whole arena.
    pub value_ends: EndsMut<'a>,
    pub values: &'a mut [u8],
    /// End of each object's references among all references.
    pub ref_ends: EndsMut<'a>,
    pub targets: &'a mut [u32],
    pub labels: &'a mut [u32],
    pub strings: &'a mut [StringMark],
    pub referents: &'a mut [ReferentMark],
}

/// One chunk's part of the objects' reference or value ends
/// (`assemble::Ends`): 4 bytes each where the references (value bytes)
/// number at most `u32::MAX`.
pub(super) enum EndsMut<'a> {
    Narrow(&'a mut [u32]),
    Wide(&'a mut [u64]),
}

impl EndsMut<'_> {
    /// Sets end `i` to `v` (which fits the width: the first walk counted
    /// the references); false when `i` is out of the part.
    #[inline]
    pub(super) fn set(&mut self, i: usize, v: u64) -> bool {
        match self {
            EndsMut::Narrow(s) => s.get_mut(i).map(|slot| *slot = v as u32).is_some(),
            EndsMut::Wide(s) => s.get_mut(i).map(|slot| *slot = v).is_some(),
        }
    }
}

/// Per referent met: (its reference object, the referent or [`DROPPED`],
/// its [`Strength`] as a number), object indices before any record is
/// left out.
pub(super) type ReferentMark = (u32, u32, u8);

/// Per `java.lang.String`, the slot of its `value` reference (once the
/// walk ends, the array it points at) and the kind of text its `coder`
/// names; `ValueKind::None` where it marks nothing (a string dropped as a
/// repeat, without a `value`, or whose array is not in the dump).
pub(super) type StringMark = (u32, ValueKind);

/// How many references ahead of its resolution a target's index slot is
/// fetched.
const AHEAD: usize = 16;

/// How far around its own object (in file order) a reference's target is
/// looked for before the id index is asked. Most references point to an
/// object dumped just before or after theirs (a string and its array, a
/// map entry and its key and value: three in four on a 10-million-object
/// JDK dump), whose ids the walk has at hand, where a look-up in the index
/// is a cache miss.
const NEAR: usize = 4;

/// Ids [`Write::near`] reads from the compact ids at a time: the ids
/// around 56 objects in a row, so that a window is read every 56 objects
/// (the ids are no longer held 8 bytes each while the arrays are written).
const WINDOW: usize = 64;

/// The second walk: every array written in place, references resolved
/// by the ids around their object (see [`NEAR`]) or through the id index
/// (those to ids not in the dump become [`DROPPED`], with a message).
pub(super) struct Write<'a> {
    out: Parts<'a>,
    index: &'a WideIdIndex,
    /// Every object's id (read for messages and through `near`).
    ids: &'a Ids,
    /// The ids of objects `near_from..` (as many as were left, up to
    /// [`WINDOW`]), read from `ids` for [`Write::near`] a window at a time.
    near_ids: [u64; WINDOW],
    near_from: usize,
    near_len: usize,
    /// Each dumped class's object, by class index (its id's look-up, made
    /// once).
    class_objects: &'a [Option<u32>],
    /// Index of the chunk's first object; where its values and references
    /// start among all.
    first: usize,
    value_base: u64,
    ref_base: u64,
    /// Whether some id occurs twice (then each record is checked).
    repeats: bool,
    /// Whether look-ups wait in `pending` while the index fetches their
    /// slots (see [`WideIdIndex::fetches_ahead`]).
    fetch_ahead: bool,
    /// Objects, value bytes and references written so far.
    o: usize,
    v: usize,
    e: usize,
    /// The current object: its offset, whether it repeats an id (its
    /// references are then not resolved: it is dropped), and where its
    /// references and value begin among the chunk's.
    at: usize,
    dropping: bool,
    object_refs: usize,
    object_value: usize,
    /// Strings written so far (see [`Parts::strings`]).
    s: usize,
    /// Referents written so far (see [`Parts::referents`]).
    r: usize,
    strong_referents: bool,
    /// References waiting for their resolution: (slot, target, their
    /// object and its offset), a ring of [`AHEAD`] entries, the newest
    /// before `head`.
    pending: [(usize, u64, usize, usize); AHEAD],
    head: usize,
    waiting: usize,
    undefined: Vec<Undefined>,
    /// (object, size) pairs of the sizes of 65,535 or more, by object.
    big_sizes: Vec<u64>,
    issues: Collector,
    /// Dangling references' messages, noted after the walk's own.
    dangling_issues: Collector,
}

/// An object of an undumped class: (object, class id, file offset).
pub(super) type Undefined = (u32, u64, u64);

/// What one chunk's second walk leaves besides the arrays.
pub(super) struct Written {
    /// False when the walk wrote other counts than the first one found.
    pub fits: bool,
    pub dangling: u64,
    pub undefined: Vec<Undefined>,
    /// (object, size) pairs of the sizes of 65,535 or more (escaped in
    /// [`Parts::sizes`]), by object.
    pub big_sizes: Vec<u64>,
    pub issues: Collector,
}

impl<'a> Write<'a> {
    pub fn new(
        out: Parts<'a>,
        (index, class_objects): (&'a WideIdIndex, &'a [Option<u32>]),
        ids: &'a Ids,
        first: usize,
        (value_base, ref_base): (u64, u64),
        strong_referents: bool,
    ) -> Write<'a> {
        Write {
            out,
            index,
            ids,
            near_ids: [0; WINDOW],
            near_from: 0,
            near_len: 0,
            class_objects,
            first,
            value_base,
            ref_base,
            repeats: index.repeated > 0,
            fetch_ahead: index.fetches_ahead(),
            o: 0,
            v: 0,
            e: 0,
            at: 0,
            dropping: false,
            object_refs: 0,
            object_value: 0,
            s: 0,
            r: 0,
            strong_referents,
            pending: [(0, 0, 0, 0); AHEAD],
            head: 0,
            waiting: 0,
            undefined: Vec::new(),
            big_sizes: Vec::new(),
            issues: Collector::default(),
            dangling_issues: Collector::default(),
        }
    }

    /// Resolves the waiting references, checks the counts and merges the
    /// messages.
    pub fn end(mut self) -> Written {
        while self.waiting > 0 {
            self.resolve_oldest();
        }
        let fits = self.o == self.out.types.len()
            && self.v == self.out.values.len()
            && self.e == self.out.targets.len()
            && self.r == self.out.referents.len();
        let dangling = self.dangling_issues.counted(Kind::Dangling);
        self.issues.merge(self.dangling_issues);
        // The strings' slots become their arrays (a dangling one marks
        // nothing).
        let targets = &self.out.targets;
        for mark in self.out.strings.iter_mut().take(self.s) {
            match targets.get(mark.0 as usize) {
                Some(&t) if t != DROPPED => mark.0 = t,
                _ => *mark = (0, ValueKind::None),
            }
        }
        Written {
            fits,
            dangling,
            undefined: self.undefined,
            big_sizes: self.big_sizes,
            issues: self.issues,
        }
    }

    /// The record of `target` if it is within [`NEAR`] records of
    /// `object`'s. Only where no id repeats: then the record found is the
    /// one the index has.
    #[inline]
    fn near(&mut self, object: usize, target: u64) -> Option<u32> {
        if self.repeats {
            return None;
        }
        let from = object.saturating_sub(NEAR);
        let to = (object + NEAR + 1).min(self.ids.len());
        if from < self.near_from || to > self.near_from + self.near_len {
            self.read_window(from);
        }
        let around = self
            .near_ids
            .get(from - self.near_from..to.checked_sub(self.near_from)?)?;
        let mut found = None;
        for (k, &id) in around.iter().enumerate() {
            if id == target {
                found = Some((from + k) as u32);
            }
        }
        found
    }

    /// Reads the ids of objects `from..` into the window of `near`.
    #[cold]
    fn read_window(&mut self, from: usize) {
        let len = WINDOW.min(self.ids.len().saturating_sub(from));
        for (k, slot) in self.near_ids[..len].iter_mut().enumerate() {
            *slot = self.ids.get(from + k);
        }
        (self.near_from, self.near_len) = (from, len);
    }

    fn resolve_oldest(&mut self) {
        let i = (self.head + AHEAD - self.waiting) % AHEAD;
        self.waiting -= 1;
        let (slot, target, object, at) = self.pending[i];
        let t = match self.index.get(target) {
            Some(t) => t,
            None => {
                let from = self.ids.get(object);
                self.dangling_issues.push(Kind::Dangling, at as u64, || {
                    format!(
                        "reference from {from:x} to {target:x}, which is not in the dump; dropped"
                    )
                });
                DROPPED
            }
        };
        if let Some(s) = self.out.targets.get_mut(slot) {
            *s = t;
        }
    }
}

impl Sink for Write<'_> {
    #[inline]
    fn object(&mut self, id: u64, ty: u32, size: u64, at: usize) {
        let o = self.o;
        self.o += 1;
        self.at = at;
        let global = self.first + o;
        (self.object_refs, self.object_value) = (self.e, self.v);
        self.dropping = self.repeats && self.index.get(id) != Some(global as u32);
        if self.dropping {
            self.issues.push(Kind::Duplicate, at as u64, || {
                format!("object {id:x} appears again; the first record is kept")
            });
        }
        if let (Some(t), Some(s)) = (self.out.types.get_mut(o), self.out.sizes.get_mut(o)) {
            *t = ty;
            *s = u16::try_from(size).unwrap_or(u16::MAX);
            if size >= u16::MAX as u64 {
                self.big_sizes.extend([global as u64, size]);
            }
        }
    }

    fn loader(&mut self, _l: u32) -> bool {
        !self.dropping
    }

    fn undefined(&mut self, class_id: u64) {
        if !self.dropping {
            let object = (self.first + self.o - 1) as u32;
            self.undefined.push((object, class_id, self.at as u64));
        }
    }

    #[inline]
    fn reference(&mut self, target: u64, label: u32) {
        let slot = self.e;
        self.e += 1;
        if let Some(l) = self.out.labels.get_mut(slot) {
            *l = label;
        }
        if self.dropping {
            if let Some(t) = self.out.targets.get_mut(slot) {
                *t = DROPPED;
            }
            return;
        }
        let object = self.first + self.o - 1;
        if let Some(t) = self.near(object, target) {
            if let Some(s) = self.out.targets.get_mut(slot) {
                *s = t;
            }
            return;
        }
        self.pending[self.head] = (slot, target, object, self.at);
        self.head = (self.head + 1) % AHEAD;
        self.waiting += 1;
        if !self.fetch_ahead {
            // A look-up that would not wait for memory: resolved now.
            self.resolve_oldest();
            return;
        }
        self.index.prefetch(target);
        if self.waiting == AHEAD {
            self.resolve_oldest();
        }
    }

    #[inline]
    fn class_reference(&mut self, class_id: u64, class: u32) {
        match self.class_objects.get(class as usize) {
            // A class object that is in the dump needs no look-up.
            Some(&Some(t)) if !self.dropping => {
                let slot = self.e;
                self.e += 1;
                if let (Some(l), Some(s)) = (
                    self.out.labels.get_mut(slot),
                    self.out.targets.get_mut(slot),
                ) {
                    *l = label::CLASS;
                    *s = t;
                }
            }
            _ => self.reference(class_id, label::CLASS),
        }
    }

    fn referent(&mut self, target: u64, label: u32, strength: Strength) {
        if self.strong_referents {
            self.reference(target, label);
        }
        let r = self.r;
        self.r += 1;
        let object = self.first + self.o - 1;
        let to = if self.dropping {
            DROPPED
        } else if let Some(t) = self.near(object, target).or_else(|| self.index.get(target)) {
            t
        } else {
            if !self.strong_referents {
                // (with referents strong, `reference` told it already)
                let from = self.ids.get(object);
                self.dangling_issues.push(Kind::Dangling, self.at as u64, || {
                    format!("reference from {from:x} to {target:x}, which is not in the dump; dropped")
                });
            }
            DROPPED
        };
        if let Some(m) = self.out.referents.get_mut(r) {
            *m = (object as u32, to, strength as u8);
        }
    }

    #[inline]
    fn value(&mut self, bytes: &[u8]) {
        let v = self.v;
        self.v += bytes.len();
        if let Some(dst) = self.out.values.get_mut(v..v + bytes.len()) {
            dst.copy_from_slice(bytes);
        }
    }

    fn string(&mut self, layout: StringLayout) {
        if self.dropping {
            return;
        }
        let labels = &self.out.labels;
        let Some(slot) = (self.object_refs..self.e).find(|&e| labels.get(e) == Some(&layout.value))
        else {
            return;
        };
        let coder = layout
            .coder_at
            .map(|c| self.object_value + c)
            .filter(|&at| at < self.v)
            .and_then(|at| self.out.values.get(at).copied());
        if let Some(mark) = self.out.strings.get_mut(self.s) {
            *mark = (slot as u32, super::strings::kind(coder));
        }
        self.s += 1;
    }

    #[inline]
    fn finish(&mut self, kind: ValueKind) {
        let o = self.o - 1;
        let re = self.ref_base + self.e as u64;
        let ve = self.value_base + self.v as u64;
        if let Some(k) = self.out.kinds.get_mut(o) {
            if self.out.ref_ends.set(o, re) && self.out.value_ends.set(o, ve) {
                *k = kind;
            }
        }
    }

    fn issue(&mut self, kind: Kind, at: u64, why: impl FnOnce() -> String) {
        self.issues.push(kind, at, why);
    }
}
