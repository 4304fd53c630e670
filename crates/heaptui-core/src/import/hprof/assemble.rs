//! Builds the model's arrays from the chunks in file order, in two
//! parallel walks (see `decode`): the ids and each chunk's counts, then the
//! id index (first record of an id wins), then every array written in
//! place with references resolved to dense indices. Records that repeat an
//! id and references to ids not in the dump are left out afterwards (with
//! their labels and values), in one pass that only such dumps pay for;
//! types are compacted to those in use, and the roots resolved.
//!
//! The import peaks at the end of the second walk, with every array
//! written: ids in the model's compact form (made once the id index is
//! built; about 1.4 bytes an object), types 4, sizes 2 (as
//! `model::Sizes::Half` keeps them, the large ones paired on the side),
//! kinds 1, value and reference ends 4 each where they fit a `u32`
//! ([`Ends`]), then 4 bytes a reference for targets and for labels and
//! the value bytes: 37.8 bytes an object on a 9.76 M-object JDK dump
//! (1.8 references and 4.8 value bytes an object), the id index's runs
//! 0.4 more. The targets are then packed in place to the bits of the
//! largest index (24 on that dump: [`crate::mem::Bits`]), the model's
//! form. The file's pages are given back as the walks go
//! (`decode::walk`), so they add at most a few MiB.

use rayon::prelude::*;

use super::classes::Classes;
use super::decode::{
    walk, Context, Count, EndsMut, Loaders, Parts, ReferentMark, StringMark, Undefined, Write,
    Written,
};
use super::decode::{DROPPED, UNDEFINED};
use super::layout::{Evidence, Sizing};
use super::reader::BasicType;
use super::scan::{Chunk, RawRoot};
use super::SizeModel;
use crate::import::source::Source;
use crate::mem::spill::Spill;
use crate::mem::Scratch;
use crate::model::{root_flags, root_kind, Csr, IdSpan, Offsets, Root, ValueKind, Values};
use crate::model::{Collector, Kind, ObjectIdx, Referent, Referents, Strength};
use crate::model::{Ids, Sizes, WideIdIndex};
use crate::progress::{Cancelled, Progress};

/// The model's arrays, before the path and details are added (in spill
/// files where the import spills).
pub(super) struct Assembled {
    pub ids: Ids,
    pub types: Scratch<u32>,
    pub type_names: Vec<Box<str>>,
    pub sizes: Sizes,
    pub refs: Csr,
    pub labels: Scratch<u32>,
    pub values: Values,
    pub roots: Vec<Root>,
    /// The root records of `roots`, in their order.
    pub raw_roots: Vec<RawRoot>,
    /// How the objects were sized.
    pub sizing: Sizing,
    pub referents: Referents,
}

/// Why assembly stopped.
pub(super) enum Stop {
    Cancelled(Cancelled),
    /// A chunk read differently the second time (cannot happen: both
    /// walks run the same code on the same bytes).
    Inconsistent,
}

impl From<Cancelled> for Stop {
    fn from(c: Cancelled) -> Stop {
        Stop::Cancelled(c)
    }
}

/// What the first walk found in one chunk.
struct Counted {
    objects: usize,
    refs: usize,
    value_bytes: usize,
    strings: usize,
    /// The chunk's class loaders (see `Count::loaders`).
    loaders: Vec<(usize, u32)>,
    referents: usize,
    /// Ids past the scan's count of the chunk's objects.
    extra: Vec<u64>,
    /// The span of the chunk's ids.
    span: IdSpan,
    evidence: Evidence,
}

/// The per-object and per-reference arrays, whole: in spill files where
/// the import spills (all but the ids, in their compact form, and the
/// kinds, a byte an object).
struct Arrays {
    ids: Ids,
    types: Scratch<u32>,
    /// 2 bytes an object, `u16::MAX` for the sizes in `big_sizes`.
    sizes: Scratch<u16>,
    /// (object, size) pairs of the sizes of 65,535 or more, by object.
    big_sizes: Vec<u64>,
    kinds: Vec<ValueKind>,
    /// `objects + 1` offsets into `values`.
    value_ends: Ends,
    values: Scratch<u8>,
    /// `objects + 1` offsets into `targets` and `labels`.
    ref_ends: Ends,
    targets: Scratch<u32>,
    labels: Scratch<u32>,
}

/// The objects' `objects + 1` ends among all references (or value
/// bytes): 4 bytes each where the references (value bytes) number at most
/// `u32::MAX` (the first walk counts them), as the model keeps them, else
/// 8. Written narrow, they are not held at 8 bytes an object at the
/// import's peak, the end of its second walk, nor copied to 4 afterwards.
#[derive(Debug)]
enum Ends {
    Narrow(Scratch<u32>),
    Wide(Scratch<u64>),
}

impl Ends {
    /// `objects + 1` zeroed ends, for `refs` references in all (in
    /// `spill` where given).
    fn zeroed(objects: usize, refs: usize, spill: Option<&Spill>) -> Ends {
        match u32::try_from(refs) {
            Ok(_) => Ends::Narrow(Scratch::zeroed(objects + 1, spill)),
            Err(_) => Ends::Wide(Scratch::zeroed(objects + 1, spill)),
        }
    }

    /// The bytes they take.
    fn bytes(&self) -> usize {
        match self {
            Ends::Narrow(v) => v.len() * 4,
            Ends::Wide(v) => v.len() * 8,
        }
    }

    /// End `i`.
    fn get(&self, i: usize) -> u64 {
        match self {
            Ends::Narrow(v) => v[i] as u64,
            Ends::Wide(v) => v[i],
        }
    }

    /// The values' arena with these ends as its offsets.
    fn into_values(self, bytes: Scratch<u8>, kinds: Vec<ValueKind>) -> Values {
        match self {
            Ends::Narrow(ends) => Values::from_scratch(ends, bytes, kinds),
            Ends::Wide(ends) => Values::from_scratch(ends, bytes, kinds),
        }
    }

    /// The ends after the first, cut into consecutive parts of `lens`.
    fn parts(&mut self, lens: impl IntoIterator<Item = usize>) -> Vec<EndsMut<'_>> {
        match self {
            Ends::Narrow(v) => crate::mem::split_by(&mut v[1..], lens)
                .into_iter()
                .map(EndsMut::Narrow)
                .collect(),
            Ends::Wide(v) => crate::mem::split_by(&mut v[1..], lens)
                .into_iter()
                .map(EndsMut::Wide)
                .collect(),
        }
    }

    /// The references' rows with these ends (spilled ones stay in their
    /// files, but for wide ends, which the model holds in memory).
    fn into_csr(self, targets: Scratch<u32>) -> Csr {
        match self {
            Ends::Narrow(ends) => {
                assert_eq!(ends.last().map(|&e| e as usize), Some(targets.len()));
                Csr::packing(Offsets::Narrow(ends.into_array()), targets)
            }
            Ends::Wide(ends) => Csr::from_offsets(ends.into_vec(), targets.into_vec()),
        }
    }
}

pub(super) fn assemble(
    source: &Source,
    chunks: &[Chunk],
    raw_roots: &[RawRoot],
    classes: &Classes,
    (sizes, infer, strong_referents): (SizeModel, bool, bool),
    (progress, spill): (&Progress, Option<&Spill>),
    issues: &mut Collector,
) -> Result<Assembled, Stop> {
    let loader_ids: Vec<u64> = classes.loaders.keys().copied().collect();
    let mut cx = Context {
        bytes: source.bytes(),
        source,
        classes,
        id_size: sizes.id_size,
        sizing: Sizing::model(&sizes, classes),
        class_type: classes.class_type,
        prim_types: classes.prim_types,
        loaders: Loaders::new(loader_ids),
        strong_referents,
    };
    let _span = tracing::debug_span!(target: "heaptui::profile", "assemble").entered();
    let (ids, mut counts) = tracing::debug_span!(target: "heaptui::profile", "ids")
        .in_scope(|| ids_and_counts(&cx, (source, chunks), progress, spill))?;
    if infer {
        cx.sizing = tracing::debug_span!(target: "heaptui::profile", "layout")
            .in_scope(|| infer_sizing(&mut counts, classes, &sizes));
    }
    let span = counts
        .iter()
        .fold(IdSpan::default(), |s, k| s.merge(k.span));
    crate::mem::checkpoint("import: ids");
    let wide = tracing::debug_span!(target: "heaptui::profile", "id index")
        .in_scope(|| WideIdIndex::build_in_runs(&ids, span, spill));
    crate::mem::checkpoint("import: id index");
    // The ids in the model's compact form before the arrays are written:
    // 8 bytes an object less at the import's peak, the end of that walk.
    let ids = tracing::debug_span!(target: "heaptui::profile", "compact ids").in_scope(move || {
        let compact = Ids::from(&ids[..]);
        ids.release(0..ids.len());
        drop(ids);
        compact
    });
    loader_references(&mut counts, &cx, &wide);
    let write = tracing::debug_span!(target: "heaptui::profile", "write").entered();
    let (mut a, mut undefined, mut strings, mut referents, dangling) = write_all(
        &cx,
        (source, chunks),
        &counts,
        ids,
        &wide,
        (progress, spill),
        issues,
    )?;
    write.exit();
    crate::mem::arrays_alive(
        "import: write",
        &[
            ("ids", a.ids.bytes()),
            ("id index", wide.bytes()),
            ("types", a.types.len() * 4),
            ("sizes", a.sizes.len() * 2 + a.big_sizes.len() * 8),
            ("kinds", a.kinds.len()),
            ("value ends", a.value_ends.bytes()),
            ("values", a.values.len()),
            ("ref ends", a.ref_ends.bytes()),
            ("targets", a.targets.len() * 4),
            ("labels", a.labels.len() * 4),
            (
                "string marks",
                strings.len() * std::mem::size_of::<StringMark>(),
            ),
            (
                "referent marks",
                referents.len() * std::mem::size_of::<ReferentMark>(),
            ),
        ],
    );
    crate::mem::checkpoint("import: write");
    // Roots resolve through the wide index while it is here; the model's
    // own index is built at its first look-up (the analysis makes none).
    let keep = (wide.repeated > 0).then(|| first_records(&wide, &a.ids));
    let new_index = |i: u32| keep.as_ref().map_or(i, |k| k.1[i as usize]);
    let (roots, kept_roots) = roots(raw_roots, |id| wide.get(id).map(new_index), issues);
    drop(wide);
    if keep.is_some() || dangling > 0 {
        let _span = tracing::debug_span!(target: "heaptui::profile", "compact").entered();
        a = compact(a, keep.as_ref());
        if let Some((_, new_index)) = &keep {
            for u in &mut undefined {
                u.0 = new_index[u.0 as usize];
            }
            for s in strings.iter_mut().filter(|s| s.1 != ValueKind::None) {
                s.0 = new_index[s.0 as usize];
            }
            for r in referents.iter_mut().filter(|r| r.1 != DROPPED) {
                (r.0, r.1) = (new_index[r.0 as usize], new_index[r.1 as usize]);
            }
        }
    }
    let byte_array = classes.prim_types[BasicType::Byte.prim_index()];
    super::strings::mark_string_arrays(strings, &a.types, byte_array, &mut a.kinds);
    let type_names = name_types(&mut a.types, &undefined, classes, issues, &a.ids);
    let sizes = Sizes::from_half(a.sizes, a.big_sizes, spill);
    Ok(Assembled {
        ids: a.ids,
        types: a.types,
        type_names,
        sizes,
        refs: a.ref_ends.into_csr(a.targets),
        labels: a.labels,
        values: a.value_ends.into_values(a.values, a.kinds),
        roots,
        raw_roots: kept_roots,
        sizing: cx.sizing,
        referents: Referents::new(kept_referents(referents), strong_referents),
    })
}

/// The object layout inferred from the chunks' evidence (taken).
fn infer_sizing(counts: &mut [Counted], classes: &Classes, sizes: &SizeModel) -> Sizing {
    let mut evidence = Evidence::default();
    for k in counts {
        evidence.merge(std::mem::take(&mut k.evidence));
    }
    let class_class = classes
        .type_of
        .iter()
        .position(|&t| t == classes.class_type)
        .map(|c| c as u32);
    Sizing::infer(&evidence, classes, sizes, class_class)
}

/// The references' referents that were kept, (reference, referent,
/// strength) as written.
fn kept_referents(referents: Vec<ReferentMark>) -> Vec<Referent> {
    referents
        .into_iter()
        .filter(|r| r.1 != DROPPED)
        .filter_map(|(from, to, strength)| {
            Some(Referent {
                reference: ObjectIdx(from),
                referent: ObjectIdx(to),
                strength: Strength::from_u8(strength)?,
            })
        })
        .collect()
}

/// The first walk: every object's id in file order, and each chunk's
/// counts. Where it spills, the ids go to a spill file and each chunk's
/// pages of the file leave the resident set once walked.
fn ids_and_counts(
    cx: &Context,
    (source, chunks): (&Source, &[Chunk]),
    progress: &Progress,
    spill: Option<&Spill>,
) -> Result<(Scratch<u64>, Vec<Counted>), Cancelled> {
    let expected = chunks.iter().map(|c| c.objects as usize);
    let mut ids: Scratch<u64> = Scratch::zeroed(expected.clone().sum(), spill);
    let counts = crate::mem::split_by(&mut ids, expected)
        .into_par_iter()
        .zip(chunks.par_iter())
        .map(|(part, c)| {
            progress.check()?;
            let mut k = Count::new(part, cx.strong_referents);
            walk(cx, c, &mut k);
            // Mapped pages count in our resident set: give them back once
            // read (the second walk fetches them again from the page
            // cache), else the whole file is resident when that walk
            // writes the arrays.
            source.release(c.start, c.end - c.start);
            progress.advance(((c.end - c.start) / 2) as u64);
            Ok(Counted {
                objects: k.objects,
                refs: k.refs,
                value_bytes: k.value_bytes,
                strings: k.strings,
                loaders: k.loaders,
                referents: k.referents,
                extra: k.extra,
                span: k.span,
                evidence: k.evidence,
            })
        })
        .collect::<Result<Vec<Counted>, Cancelled>>()?;
    if counts
        .iter()
        .zip(chunks)
        .all(|(k, c)| k.objects == c.objects as usize)
    {
        return Ok((ids, counts));
    }
    // The walk found other counts than the scan (it should not): gather
    // each chunk's ids as the walk found them.
    let mut out = Vec::with_capacity(counts.iter().map(|k| k.objects).sum());
    let mut start = 0;
    for (k, c) in counts.iter().zip(chunks) {
        let had = c.objects as usize;
        out.extend_from_slice(&ids[start..start + k.objects.min(had)]);
        out.extend_from_slice(&k.extra);
        start += had;
    }
    Ok((Scratch::from(out), counts))
}

/// Counts each class loader's references to its classes in the chunk of
/// its record that is kept (the first of its id), as `Write` gives them.
fn loader_references(counts: &mut [Counted], cx: &Context, wide: &WideIdIndex) {
    let mut first = 0;
    for k in counts {
        for &(o, l) in &k.loaders {
            let id = cx.loaders.ids[l as usize];
            if wide.repeated == 0 || wide.get(id) == Some((first + o) as u32) {
                k.refs += cx.classes.loaders[&id].len();
            }
        }
        first += k.objects;
    }
}

/// What [`write_all`] gives back.
type AllWritten = (
    Arrays,
    Vec<Undefined>,
    Vec<StringMark>,
    Vec<ReferentMark>,
    u64,
);

/// The second walk: every array written in its place. Returns the arrays,
/// the objects of undumped classes, the arrays strings point at and how
/// many references dangle.
fn write_all(
    cx: &Context,
    (source, chunks): (&Source, &[Chunk]),
    counts: &[Counted],
    ids: Ids,
    wide: &WideIdIndex,
    (progress, spill): (&Progress, Option<&Spill>),
    issues: &mut Collector,
) -> Result<AllWritten, Stop> {
    let objects = || counts.iter().map(|k| k.objects);
    let (mut a, mut strings, mut referents) = zeroed_arrays(counts, ids, spill);
    let starts = chunk_starts(counts);
    let parts: Vec<Parts> = {
        let mut types = crate::mem::split_by(&mut a.types, objects()).into_iter();
        let mut sizes = crate::mem::split_by(&mut a.sizes, objects()).into_iter();
        let mut kinds = crate::mem::split_by(&mut a.kinds, objects()).into_iter();
        let mut value_ends = a.value_ends.parts(objects()).into_iter();
        let mut values =
            crate::mem::split_by(&mut a.values, counts.iter().map(|k| k.value_bytes)).into_iter();
        let mut ref_ends = a.ref_ends.parts(objects()).into_iter();
        let mut targets =
            crate::mem::split_by(&mut a.targets, counts.iter().map(|k| k.refs)).into_iter();
        let mut labels =
            crate::mem::split_by(&mut a.labels, counts.iter().map(|k| k.refs)).into_iter();
        let mut marks =
            crate::mem::split_by(&mut strings, counts.iter().map(|k| k.strings)).into_iter();
        let mut referent_marks =
            crate::mem::split_by(&mut referents, counts.iter().map(|k| k.referents)).into_iter();
        let mut next = || -> Option<Parts> {
            Some(Parts {
                types: types.next()?,
                sizes: sizes.next()?,
                kinds: kinds.next()?,
                value_ends: value_ends.next()?,
                values: values.next()?,
                ref_ends: ref_ends.next()?,
                targets: targets.next()?,
                labels: labels.next()?,
                strings: marks.next()?,
                referents: referent_marks.next()?,
            })
        };
        std::iter::from_fn(&mut next).collect()
    };
    let ids = &a.ids;
    let class_objects: Vec<Option<u32>> = cx.classes.ids.iter().map(|&c| wide.get(c)).collect();
    let written = parts
        .into_par_iter()
        .zip(chunks.par_iter())
        .zip(starts.par_iter())
        .map(|((p, c), &(first, vb, rb))| {
            progress.check()?;
            let mut w = Write::new(
                p,
                (wide, &class_objects),
                ids,
                first,
                (vb, rb),
                cx.strong_referents,
            );
            walk(cx, c, &mut w);
            // Mapped pages count in our resident set: give them back once
            // read (a later read would fetch them from the page cache).
            source.release(c.start, c.end - c.start);
            progress.advance(((c.end - c.start) / 2) as u64);
            Ok(w.end())
        })
        .collect::<Result<Vec<_>, Cancelled>>()?;
    let (undefined, dangling);
    (undefined, dangling, a.big_sizes) = merge_written(written, issues)?;
    Ok((a, undefined, strings, referents, dangling))
}

/// The arrays of the whole dump, zeroed, sized by the first walk's counts:
/// the objects' columns, the value bytes, the references, and the marks of
/// strings and referents (a mark no string wrote reads `(0,
/// ValueKind::None)`, none). All but the kinds and marks in `spill` where
/// given.
fn zeroed_arrays(
    counts: &[Counted],
    ids: Ids,
    spill: Option<&Spill>,
) -> (Arrays, Vec<StringMark>, Vec<ReferentMark>) {
    let n = ids.len();
    let (total_refs, total_values) = counts
        .iter()
        .fold((0, 0), |(r, v), k| (r + k.refs, v + k.value_bytes));
    let strings = crate::mem::zeroed(counts.iter().map(|k| k.strings).sum());
    let referents = crate::mem::zeroed(counts.iter().map(|k| k.referents).sum());
    let a = Arrays {
        types: Scratch::zeroed(n, spill),
        sizes: Scratch::zeroed(n, spill),
        big_sizes: Vec::new(),
        kinds: crate::mem::zeroed(n),
        value_ends: Ends::zeroed(n, total_values, spill),
        values: Scratch::zeroed(total_values, spill),
        ref_ends: Ends::zeroed(n, total_refs, spill),
        targets: Scratch::zeroed(total_refs, spill),
        labels: Scratch::zeroed(total_refs, spill),
        ids,
    };
    (a, strings, referents)
}

/// Where each chunk's objects, value bytes and references start in the
/// arrays of the whole dump.
fn chunk_starts(counts: &[Counted]) -> Vec<(usize, u64, u64)> {
    let mut starts = Vec::with_capacity(counts.len());
    let (mut first, mut value_base, mut ref_base) = (0usize, 0u64, 0u64);
    for k in counts {
        starts.push((first, value_base, ref_base));
        first += k.objects;
        value_base += k.value_bytes as u64;
        ref_base += k.refs as u64;
    }
    starts
}

/// The chunks' writes summed: the objects of undumped classes, the
/// dangling references, their messages merged into `issues`, and the
/// large sizes' pairs; inconsistent when a chunk did not fit the room the
/// first walk counted.
fn merge_written(
    written: Vec<Written>,
    issues: &mut Collector,
) -> Result<(Vec<Undefined>, u64, Vec<u64>), Stop> {
    let mut undefined = Vec::new();
    let mut big_sizes = Vec::new();
    let mut dangling = 0;
    let mut fits = true;
    for w in written {
        fits &= w.fits;
        dangling += w.dangling;
        undefined.extend(w.undefined);
        big_sizes.extend(w.big_sizes);
        issues.merge(w.issues);
    }
    if !fits {
        return Err(Stop::Inconsistent);
    }
    Ok((undefined, dangling, big_sizes))
}

/// Which records are kept when an id occurs twice (the first record wins),
/// and each record's index once the others are gone.
fn first_records(wide: &WideIdIndex, ids: &Ids) -> (Vec<bool>, Vec<u32>) {
    let keep: Vec<bool> = (0..ids.len())
        .into_par_iter()
        .map(|i| wide.get(ids.get(i)) == Some(i as u32))
        .collect();
    let mut next = 0u32;
    let new_index = keep
        .iter()
        .map(|&k| {
            let v = next;
            next += k as u32;
            v
        })
        .collect();
    (keep, new_index)
}

/// Leaves out the records not kept and the references marked [`DROPPED`],
/// renumbering the targets when records go.
/// The result is in memory (only dumps with repeated ids or dangling
/// references pay for it).
fn compact(a: Arrays, keep: Option<&(Vec<bool>, Vec<u32>)>) -> Arrays {
    let n = a.ids.len();
    let mut ids = Vec::with_capacity(n);
    let mut types = Vec::with_capacity(n);
    let mut sizes = Vec::with_capacity(n);
    let mut big_sizes = Vec::new();
    let mut kinds = Vec::with_capacity(n);
    let mut value_ends = Vec::with_capacity(n + 1);
    let mut values = Vec::with_capacity(a.values.len());
    let mut targets = Vec::with_capacity(a.targets.len());
    let mut labels = Vec::with_capacity(a.labels.len());
    value_ends.push(0);
    let mut ref_ends = vec![0u64];
    for o in 0..n {
        if keep.is_some_and(|(k, _)| !k[o]) {
            continue;
        }
        ids.push(a.ids.get(o));
        types.push(a.types[o]);
        if a.sizes[o] == u16::MAX {
            big_sizes.extend([sizes.len() as u64, big_size(&a.big_sizes, o)]);
        }
        sizes.push(a.sizes[o]);
        kinds.push(a.kinds[o]);
        values.extend_from_slice(
            &a.values[a.value_ends.get(o) as usize..a.value_ends.get(o + 1) as usize],
        );
        value_ends.push(values.len() as u64);
        for e in a.ref_ends.get(o) as usize..a.ref_ends.get(o + 1) as usize {
            let t = a.targets[e];
            if t != DROPPED {
                targets.push(keep.map_or(t, |(_, m)| m[t as usize]));
                labels.push(a.labels[e]);
            }
        }
        ref_ends.push(targets.len() as u64);
    }
    Arrays {
        ids: ids.into(),
        types: types.into(),
        sizes: sizes.into(),
        big_sizes,
        kinds,
        value_ends: Ends::Wide(value_ends.into()),
        values: values.into(),
        ref_ends: Ends::Wide(ref_ends.into()),
        targets: targets.into(),
        labels: labels.into(),
    }
}

/// The size paired with object `o` in `big` ((object, size) pairs by
/// object), `u16::MAX` where none is (`Write` pairs every escape).
fn big_size(big: &[u64], o: usize) -> u64 {
    let (pairs, _) = big.as_chunks::<2>();
    match pairs.binary_search_by_key(&(o as u64), |p| p[0]) {
        Ok(k) => pairs[k][1],
        Err(_) => u16::MAX as u64,
    }
}

/// Gives objects of undumped classes a type of their own, then keeps only
/// the type names in use (renumbered in order of first use).
fn name_types(
    types: &mut [u32],
    undefined: &[(u32, u64, u64)],
    classes: &Classes,
    issues: &mut Collector,
    ids: &Ids,
) -> Vec<Box<str>> {
    let mut names = classes.types.names.clone();
    let mut extra: std::collections::HashMap<u64, u32> = Default::default();
    for &(o, class_id, at) in undefined {
        let t = *extra.entry(class_id).or_insert_with(|| {
            names.push(format!("<unknown type 0x{class_id:x}>").into());
            (names.len() - 1) as u32
        });
        types[o as usize] = t;
        issues.push(Kind::Undefined, at, || {
            format!(
                "object {:x} has class {class_id:x}, which the dump never defines",
                ids.get(o as usize)
            )
        });
    }
    let mut remap = vec![UNDEFINED; names.len()];
    let mut out: Vec<Box<str>> = Vec::new();
    let mut by_name: std::collections::HashMap<Box<str>, u32> = Default::default();
    for t in types.iter_mut() {
        let slot = &mut remap[*t as usize];
        if *slot == UNDEFINED {
            let name = &names[*t as usize];
            *slot = *by_name.entry(name.clone()).or_insert_with(|| {
                out.push(name.clone());
                (out.len() - 1) as u32
            });
        }
        *t = *slot;
    }
    // The types class objects' rows are named by (`class X`, see
    // `model::RowTypes`), after the objects' own: no object has one.
    for &t in &classes.type_of {
        let name = format!("{}{}", crate::model::CLASS_ROW_PREFIX, names[t as usize]);
        if !by_name.contains_key(name.as_str()) {
            by_name.insert(name.as_str().into(), out.len() as u32);
            out.push(name.into());
        }
    }
    out
}

/// Root records resolved to objects (docs/formats.md's kind mapping), and the
/// records kept.
fn roots(
    raw: &[RawRoot],
    object_of: impl Fn(u64) -> Option<u32>,
    issues: &mut Collector,
) -> (Vec<Root>, Vec<RawRoot>) {
    let mut out = Vec::with_capacity(raw.len());
    let mut kept = Vec::with_capacity(raw.len());
    for r in raw {
        let Some(object) = object_of(r.id) else {
            issues.push(Kind::MissingRoot, r.offset, || {
                format!(
                    "root (sub-record 0x{:02x}) for object {:x}, which is not in the dump; ignored",
                    r.tag, r.id
                )
            });
            continue;
        };
        let (kind, flags) = match r.tag {
            0x02 | 0x03 => (root_kind::LOCAL, 0),
            0x01 | 0x07 | 0x8e => (root_kind::HANDLE, 0),
            0x05 => (root_kind::STATIC, 0),
            0x8a => (root_kind::FINALIZER, 0),
            // Android's "unreachable" marks objects nothing holds: shown
            // as a root, but it keeps nothing alive.
            0x90 => (root_kind::INTERNAL, root_flags::WEAK),
            _ => (root_kind::INTERNAL, 0),
        };
        out.push(Root {
            object: ObjectIdx(object),
            kind,
            flags,
            container: None,
            container_type: None,
            app_domain: 0,
            line: r.offset,
        });
        kept.push(*r);
    }
    (out, kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_and_wide_ends_give_one_csr() {
        // Three chunks of 2, 0 and 3 objects, with 1 and 0, none, then 2,
        // 0 and 3 references.
        let degrees = [vec![1u64, 0], vec![], vec![2, 0, 3]];
        let targets: Vec<u32> = (0..6).collect();
        let fill = |mut ends: Ends| {
            let mut total = 0;
            let lens = degrees.iter().map(Vec::len);
            for (part, d) in ends.parts(lens).iter_mut().zip(&degrees) {
                for (i, &n) in d.iter().enumerate() {
                    total += n;
                    assert!(part.set(i, total));
                }
                assert!(!part.set(d.len(), total), "past the part");
            }
            ends
        };
        let narrow = fill(Ends::zeroed(5, 6, None));
        assert!(matches!(narrow, Ends::Narrow(_)));
        let wide = fill(Ends::Wide(vec![0; 6].into()));
        let got: Vec<u64> = (0..6).map(|i| narrow.get(i)).collect();
        assert_eq!(got, [0, 1, 1, 3, 3, 6]);
        assert_eq!(got, (0..6).map(|i| wide.get(i)).collect::<Vec<_>>());
        assert_eq!(
            narrow.into_csr(targets.clone().into()),
            wide.into_csr(targets.into())
        );
        assert!(matches!(
            Ends::zeroed(0, u32::MAX as usize + 1, None),
            Ends::Wide(_)
        ));
    }
}
