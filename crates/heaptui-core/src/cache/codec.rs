//! An [`Analysis`] as cache sections and back. Decoding checks every index
//! against the arrays it points into and that the dominator tree is a tree
//! (each reachable object's idom is numbered before it, each subtree
//! numbered within its dominator's, the stored preorder the numbers'
//! inverse, each node's children as read off the numbering exactly the
//! nodes whose idom it is), that
//! retained sizes add up over that tree, and the duplicate sets' figures
//! against their members (see `check_sets`), so a hostile cache gives no
//! panic, out-of-bounds read or endless walk, and no figure its graph
//! contradicts. What is cheap to recompute (the id index, root groups, type
//! statistics, the largest instances, the summary) is recomputed; the
//! largest instances are compared with what was read.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use rayon::prelude::*;

use super::layout::{corrupt, Corrupt, Element, Input, Reader, Writer};
use crate::analysis::roots::{largest_instances, root_groups, weakly_held};
use crate::analysis::summary::Summary;
use crate::analysis::{Analysis, Timings, TypeStats};
use crate::graph::duplicates::{
    DuplicateMode, DuplicateSet, Duplicates, PossibleDuplicates, SetLists,
};
use crate::graph::{DominatorTree, HeapGraph};
use crate::mem::{Array, Bits, Escapes, IdSet, Nodes, Packed, Words};
use crate::model::{
    AppDomain, Csr, Diagnostics, FieldDecl, Format, IdIndex, Ids, JavaClass, JavaClasses,
    LabelCodes, Labels, Model, ObjectIdx, ObjectTypes, Offsets, PackedRows, RecordCounts, Referent,
    Referents, Root, RootPlaces, RootThread, Sizes, StaticField, Strength, TypeIdx, TypeWord,
    ValueKind, Values,
};

// Section tags; `+n` marks the tags a composite section also takes.
const META: u32 = 1;
const TYPE_NAMES: u32 = 2; // +1
const IDS: u32 = 4; // the id blocks' heads; their bytes: IDS_BYTES
const TYPES: u32 = 5;
const SIZES: u32 = 6;
const REFS: u32 = 7; // +1: targets, packed (see PACKED)
const ROOTS: u32 = 9;
const DOMAINS: u32 = 10; // +1, +2: flags and counts
const MESSAGES: u32 = 13; // +1
const DETAILS: u32 = 15; // +1
const LABEL_NAMES: u32 = 17; // +1
const LABELS: u32 = 19;
const VALUES: u32 = 20; // +1 bytes, +2 kinds
const RETAINERS: u32 = 23; // +1: packed rows' index and bytes; see RETAINER_LONG
const STRONG_ROOTS: u32 = 25;
const IDOM: u32 = 26;
const RETAINED_BYTES: u32 = 27;
const RETAINED_OBJECTS: u32 = 28;
const AT_PREORDER: u32 = 29; // 30: the children lists' targets until version 5
const PREORDER_NUMBER: u32 = 31;
const TYPE_STATS: u32 = 32;
const SETS: u32 = 33;
const SET_MEMBERS: u32 = 34; // +1
const SET_HELD_BY: u32 = 36; // +1
const POSSIBLE: u32 = 38; // +1 offsets, +2 instances
const FINISHED: u32 = 41;
const LARGEST: u32 = 42;
const REFERENTS: u32 = 43; // +1: whether they are strong
const JAVA_CLASSES: u32 = 45; // per class: id, super id, fields, statics
const JAVA_NAMES: u32 = 46; // +1: field names, then static names, per class
const JAVA_TAGS: u32 = 48; // per field and static: type tag, 0x80 kept
const JAVA_STATICS: u32 = 49; // per static: its raw value
const ROOT_THREADS: u32 = 50; // +1: names; +2: their objects
const ROOT_FRAMES: u32 = 53; // +1
const ROOT_PLACES: u32 = 55;
const IDS_BYTES: u32 = 56;
const RETAINED_BIG: u32 = 57; // the narrow retained bytes' side table
const RETAINED_OBJECTS_BIG: u32 = 60; // the narrow retained objects' side table
const RETAINER_LONG: u32 = 58; // +1: the packed retainers' long rows, their lengths
const SIZES_BIG: u32 = 70; // the 1-, 2- or 4-byte sizes' side table
const LABEL_DICT: u32 = 90; // the 1- or 2-byte labels' dictionary
const LABEL_SIDE: u32 = 91; // and their side table
const SHORT_BASES: u32 = 100; // + a CSR's tag: its short offsets' block bases
const SHORT_SIDE: u32 = 200; // + a CSR's tag: its short offsets' escaped blocks
const PACKED: u32 = 300; // + a CSR's tag: its packed targets' count and bit width

const NONE: u64 = u64::MAX;

type W<'a> = Writer<&'a mut dyn Write>;

/// The objects' types in the width they were written in, each checked to
/// name one of the `names` types.
fn decode_types(r: &R, names: usize) -> Result<ObjectTypes, Corrupt> {
    let types = match r.width(TYPES) {
        Some(1) => ObjectTypes::Byte(r.array(TYPES)?),
        Some(2) => ObjectTypes::Half(r.array(TYPES)?),
        _ => ObjectTypes::Full(r.array(TYPES)?),
    };
    let below = crate::model::with_types!(&types, |s| {
        let mut ok = true;
        for chunk in s.chunks(CHUNK) {
            ok &= !chunk.par_iter().any(|&t| t.index() >= names);
            crate::mem::spill::release_all();
        }
        ok
    });
    if !below {
        return corrupt("types: index out of range");
    }
    Ok(types)
}

/// The shallow sizes in the width they were written in; a narrow form's
/// side table checked against them.
fn decode_sizes(r: &R, n: usize) -> Result<Sizes, Corrupt> {
    decode_packed(r, SIZES, SIZES_BIG, n)
}

/// A [`Packed`] array of `n` values as written by [`encode_packed`]: in
/// the width of section `tag`, a narrow form's side table (section
/// `big`) checked against its escapes.
fn decode_packed(r: &R, tag: u32, big: u32, n: usize) -> Result<Packed, Corrupt> {
    Ok(match r.width(tag) {
        Some(1) => Packed::checked_byte(get(r, tag, n)?, side(r, big)?).or_else(corrupt)?,
        Some(2) => Packed::checked_half(get(r, tag, n)?, side(r, big)?).or_else(corrupt)?,
        Some(4) => Packed::checked_narrow(get(r, tag, n)?, side(r, big)?).or_else(corrupt)?,
        _ => Packed::Wide(get(r, tag, n)?),
    })
}

/// A side table's escaped values in index order, 4 or 8 bytes each.
fn side(r: &R, tag: u32) -> Result<Words, Corrupt> {
    Ok(match r.width(tag) {
        Some(4) => Words::Narrow(r.array(tag)?),
        _ => Words::Wide(r.array(tag)?),
    })
}

/// Writes a side table's escaped values as they are held.
fn encode_side(w: &mut W, tag: u32, side: &Escapes) -> std::io::Result<()> {
    match side.values() {
        Words::Narrow(v) => w.array(tag, v),
        Words::Wide(v) => w.array(tag, v),
        Words::Short { .. } => w.array(tag, &side.values().to_vec()),
    }
}

/// A [`Packed`] array as it is held: its values in section `tag` (1, 2,
/// 4 or 8 bytes each), a narrow form's side table in section `big`.
fn encode_packed(w: &mut W, tag: u32, big: u32, p: &Packed) -> std::io::Result<()> {
    match p {
        Packed::Byte { small, big: table } => {
            w.array(tag, small)?;
            encode_side(w, big, table)
        }
        Packed::Half { small, big: table } => {
            w.array(tag, small)?;
            encode_side(w, big, table)
        }
        Packed::Narrow { small, big: table } => {
            w.array(tag, small)?;
            encode_side(w, big, table)
        }
        Packed::Wide(all) => w.array(tag, all),
    }
}

/// Writes the analysis after the header `w` holds.
pub fn encode(w: &mut W, a: &Analysis) -> std::io::Result<()> {
    let d = a.dump();
    let diag = &d.diagnostics;
    let r = &d.records;
    let meta = [
        d.file_bytes,
        d.format as u64,
        r.objects,
        r.types,
        r.roots,
        r.sections,
        diag.skipped_lines,
        diag.dangling_references,
        diag.undefined_types,
        diag.duplicate_objects,
        diag.missing_root_objects,
        a.duplicates.mode.map_or(0, |m| m as u64 + 1),
        a.duplicates.budget_per_type.unwrap_or(NONE),
        diag.clamped_roots,
        a.duplicates.has_values() as u64,
    ];
    w.array(META, &meta)?;
    strings(w, TYPE_NAMES, d.type_names.iter().map(|s| &**s))?;
    let (heads, id_bytes) = d.ids.parts();
    w.array(IDS, heads)?;
    w.array(IDS_BYTES, id_bytes)?;
    match &d.types {
        ObjectTypes::Byte(t) => w.array(TYPES, t)?,
        ObjectTypes::Half(t) => w.array(TYPES, t)?,
        ObjectTypes::Full(t) => w.array(TYPES, t)?,
    }
    encode_packed(w, SIZES, SIZES_BIG, &d.sizes)?;
    csr(w, REFS, &d.refs)?;
    let roots: Vec<u64> = d.roots.iter().flat_map(root_fields).collect();
    w.array(ROOTS, &roots)?;
    domains(w, &d.app_domains)?;
    strings(w, MESSAGES, diag.messages.iter().map(String::as_str))?;
    let details = d.details.iter().flat_map(|(k, v)| [k.as_str(), v.as_str()]);
    strings(w, DETAILS, details)?;
    if let Some(l) = &d.labels {
        strings(w, LABEL_NAMES, l.names.iter().map(|s| &**s))?;
        match &l.codes {
            LabelCodes::Byte { codes, dict, side } => {
                w.array(LABELS, codes)?;
                w.array(LABEL_DICT, dict)?;
                w.array(LABEL_SIDE, side.pairs())?;
            }
            LabelCodes::Half { codes, dict, side } => {
                w.array(LABELS, codes)?;
                w.array(LABEL_DICT, dict)?;
                w.array(LABEL_SIDE, side.pairs())?;
            }
            LabelCodes::Full(a) => w.array(LABELS, a)?,
        }
    }
    if !d.root_places.of_root.is_empty() {
        encode_root_places(w, &d.root_places)?;
    }
    if let Some(v) = &d.values {
        w.array(VALUES, &v.offsets())?;
        w.array(VALUES + 1, &v.bytes)?;
        let kinds: Vec<u8> = v.kind_numbers().collect();
        w.array(VALUES + 2, &kinds)?;
    }
    if let Some(r) = &d.referents {
        let flat: Vec<u32> = r
            .list()
            .iter()
            .flat_map(|r| [r.reference.raw(), r.referent.raw(), r.strength as u32])
            .collect();
        w.array(REFERENTS, &flat)?;
        w.array(REFERENTS + 1, &[r.strong as u8])?;
    }
    if let Some(j) = &d.java_classes {
        encode_java(w, j)?;
    }
    packed(w, &a.graph.retainers)?;
    w.array(STRONG_ROOTS, &a.graph.strong_roots)?;
    encode_dominators(w, &a.dom)?;
    let stats: Vec<u64> = a.types.iter().flat_map(stat_fields).collect();
    w.array(TYPE_STATS, &stats)?;
    encode_duplicates(w, &a.duplicates)?;
    w.array(LARGEST, &a.largest)
}

fn encode_java(w: &mut W, j: &JavaClasses) -> std::io::Result<()> {
    let list = j.list();
    let heads: Vec<u64> = list
        .iter()
        .flat_map(|c| {
            [
                c.id,
                c.super_id,
                c.fields.len() as u64,
                c.statics.len() as u64,
            ]
        })
        .collect();
    w.array(JAVA_CLASSES, &heads)?;
    let names = list.iter().flat_map(|c| {
        let f = c.fields.iter().map(|f| &*f.name);
        f.chain(c.statics.iter().map(|s| &*s.name))
    });
    strings(w, JAVA_NAMES, names)?;
    let tags: Vec<u8> = list
        .iter()
        .flat_map(|c| {
            let f = c
                .fields
                .iter()
                .map(|f| f.tag | if f.kept { 0x80 } else { 0 });
            f.chain(c.statics.iter().map(|s| s.tag))
                .collect::<Vec<u8>>()
        })
        .collect();
    w.array(JAVA_TAGS, &tags)?;
    let raw: Vec<u64> = list
        .iter()
        .flat_map(|c| c.statics.iter().map(|s| s.raw))
        .collect();
    w.array(JAVA_STATICS, &raw)
}

fn encode_root_places(w: &mut W, p: &RootPlaces) -> std::io::Result<()> {
    strings(w, ROOT_THREADS, p.threads.iter().map(|t| &*t.name))?;
    let objects: Vec<u32> = p
        .threads
        .iter()
        .map(|t| t.object.map_or(RootPlaces::NONE, |o| o.raw()))
        .collect();
    w.array(ROOT_THREADS + 2, &objects)?;
    strings(w, ROOT_FRAMES, p.frames.iter().map(|f| &**f))?;
    let places: Vec<u32> = p.of_root.iter().flat_map(|&(t, f)| [t, f]).collect();
    w.array(ROOT_PLACES, &places)
}

fn decode_root_places(r: &R, n: usize, roots: usize) -> Result<RootPlaces, Corrupt> {
    if !r.has(ROOT_PLACES) {
        return Ok(RootPlaces::default());
    }
    let names = read_strings(r, ROOT_THREADS)?;
    let objects: Array<u32> = get(r, ROOT_THREADS + 2, names.len())?;
    let frames = read_strings(r, ROOT_FRAMES)?;
    let places: Array<u32> = get(r, ROOT_PLACES, 2 * roots)?;
    let threads = names
        .into_iter()
        .zip(objects.iter())
        .map(|(name, &o)| match o {
            RootPlaces::NONE => Ok(RootThread {
                name: name.into(),
                object: None,
            }),
            o if (o as usize) < n => Ok(RootThread {
                name: name.into(),
                object: Some(ObjectIdx(o)),
            }),
            _ => corrupt("root threads: object out of range"),
        })
        .collect::<Result<Vec<_>, Corrupt>>()?;
    let of_root: Vec<(u32, u32)> = places.chunks_exact(2).map(|p| (p[0], p[1])).collect();
    let fits = |i: u32, len: usize| i == RootPlaces::NONE || (i as usize) < len;
    if !of_root
        .iter()
        .all(|&(t, f)| fits(t, threads.len()) && fits(f, frames.len()))
    {
        return corrupt("root places: index out of range");
    }
    Ok(RootPlaces::new(
        threads,
        frames.into_iter().map(String::into_boxed_str).collect(),
        of_root,
    ))
}

fn root_fields(r: &Root) -> [u64; 7] {
    [
        r.object.raw() as u64,
        r.kind as u64,
        r.flags as u64,
        r.container.unwrap_or(NONE),
        r.container_type.map_or(NONE, |t| t.raw() as u64),
        r.app_domain as u64,
        r.line,
    ]
}

fn stat_fields(t: &TypeStats) -> [u64; 5] {
    [
        t.type_index.raw() as u64,
        t.count,
        t.shallow_bytes,
        t.reachable_count,
        t.min_retained_bytes,
    ]
}

/// A CSR's offsets in their own form (2, 4 or 8 bytes: the reader takes
/// any; the short form's bases and escaped blocks at [`SHORT_BASES`] and
/// [`SHORT_SIDE`] past `tag`), its targets.
fn csr(w: &mut W, tag: u32, c: &Csr) -> std::io::Result<()> {
    match c.offsets() {
        Offsets::Short {
            bases,
            within,
            side,
        } => {
            w.array(tag, within)?;
            w.array(SHORT_BASES + tag, bases)?;
            w.array(SHORT_SIDE + tag, side)?;
        }
        Offsets::Narrow(o) => w.array(tag, o)?,
        Offsets::Wide(o) => w.array(tag, o)?,
    }
    w.array(tag + 1, c.targets.words())?;
    let packed = [c.targets.len() as u64, c.targets.width() as u64];
    w.array(PACKED + tag, &packed)
}

/// The retainers' packed rows: index and bytes (RETAINERS, + 1), the long
/// rows and their lengths (RETAINER_LONG, + 1).
fn packed(w: &mut W, p: &PackedRows) -> std::io::Result<()> {
    let (index, long_rows, long_lens, bytes) = p.parts();
    w.array(RETAINERS, index)?;
    w.array(RETAINERS + 1, bytes)?;
    w.array(RETAINER_LONG, long_rows)?;
    w.array(RETAINER_LONG + 1, long_lens)
}

fn read_packed(r: &R, nodes: usize) -> Result<PackedRows, Corrupt> {
    let rows = PackedRows::from_parts(
        nodes,
        r.array(RETAINERS)?,
        r.array(RETAINER_LONG)?,
        r.array(RETAINER_LONG + 1)?,
        r.array(RETAINERS + 1)?,
    );
    rows.or_else(|e| corrupt(format!("retainers: {}", e.0)))
}

/// Strings as one byte section (tag + 1) and their end offsets (tag).
fn strings<'s>(w: &mut W, tag: u32, items: impl Iterator<Item = &'s str>) -> std::io::Result<()> {
    let mut bytes = Vec::new();
    let mut ends = Vec::new();
    for s in items {
        bytes.extend_from_slice(s.as_bytes());
        ends.push(bytes.len() as u64);
    }
    w.array(tag, &ends)?;
    w.array(tag + 1, &bytes)
}

fn domains(w: &mut W, domains: &[AppDomain]) -> std::io::Result<()> {
    let text = domains.iter().flat_map(|d| {
        [
            d.version.as_str(),
            d.name.as_str(),
            d.stamp.as_deref().unwrap_or(""),
        ]
    });
    strings(w, DOMAINS, text)?;
    let meta: Vec<u64> = domains
        .iter()
        .flat_map(|d| [d.stamp.is_some() as u64, d.closed as u64, d.objects])
        .collect();
    w.array(DOMAINS + 2, &meta)
}

fn encode_dominators(w: &mut W, dom: &DominatorTree) -> std::io::Result<()> {
    bits(w, IDOM, dom.idom.bits())?;
    let (bytes, objects) = dom.retained_arrays();
    encode_packed(w, RETAINED_BYTES, RETAINED_BIG, bytes)?;
    encode_packed(w, RETAINED_OBJECTS, RETAINED_OBJECTS_BIG, objects)?;
    bits(w, PREORDER_NUMBER, dom.preorder_number.bits())?;
    bits(w, AT_PREORDER, dom.at_preorder.bits())
}

/// Bit-packed values: their words at `tag`, their count and width
/// [`PACKED`] past it.
fn bits(w: &mut W, tag: u32, b: &Bits) -> std::io::Result<()> {
    w.array(tag, b.words())?;
    w.array(PACKED + tag, &[b.len() as u64, b.width() as u64])
}

fn encode_duplicates(w: &mut W, dups: &Duplicates) -> std::io::Result<()> {
    let sets: Vec<u64> = dups
        .sets
        .iter()
        .flat_map(|s| {
            [
                s.type_index as u64,
                s.instance_bytes,
                s.objects_per_copy,
                s.additional_bytes,
                s.trivial() as u64,
                s.holding_set().map_or(NONE, |h| h as u64),
            ]
        })
        .collect();
    w.array(SETS, &sets)?;
    // The lists in the records' order: a set's number is its position, in
    // the file as in memory (no number is written).
    lists(
        w,
        SET_MEMBERS,
        dups.member_lists().iter().map(|l| l.iter().copied()),
    )?;
    lists(
        w,
        SET_HELD_BY,
        dups.holder_lists().iter().map(|l| l.iter().copied()),
    )?;
    let types: Vec<u32> = dups.possible.iter().map(|p| p.type_index).collect();
    w.array(POSSIBLE, &types)?;
    lists(
        w,
        POSSIBLE + 1,
        dups.possible.iter().map(|p| p.instances.iter()),
    )?;
    w.array(FINISHED, &dups.finished_types)
}

/// Lists of u32 as a CSR: offsets (tag), items (tag + 1).
fn lists<L: Iterator<Item = u32>>(
    w: &mut W,
    tag: u32,
    items: impl Iterator<Item = L>,
) -> std::io::Result<()> {
    let mut offsets = vec![0u64];
    let mut all = Vec::new();
    for l in items {
        all.extend(l);
        offsets.push(all.len() as u64);
    }
    csr(w, tag, &Csr::from_offsets(offsets, all))
}

pub type R<'a, 'i> = Reader<'i, dyn Input + 'a>;

/// Elements a check reads before the pages of a cache file over the
/// memory budget are dropped ([`crate::mem::checkpoint`]): 64 MiB of u32.
pub(super) const CHUNK: usize = 16 << 20;

/// Every index below `bound`; a long section in chunks, each one's pages
/// dropped once read where the file is over the memory budget.
fn check_below(what: &str, values: &[u32], bound: usize) -> Result<(), Corrupt> {
    for chunk in values.chunks(CHUNK) {
        if chunk.par_iter().any(|&v| v as usize >= bound) {
            return corrupt(format!("{what}: index out of range"));
        }
        crate::mem::spill::release_all();
    }
    Ok(())
}

fn read_csr(r: &R, tag: u32, nodes: usize, bound: usize) -> Result<Csr, Corrupt> {
    let offsets = match r.width(tag) {
        Some(2) => {
            let (bases, side) = (r.array(SHORT_BASES + tag)?, r.array(SHORT_SIDE + tag)?);
            Offsets::checked_short(bases, r.array(tag)?, side)
                .or_else(|e| corrupt(format!("section {tag}: {e}")))?
        }
        Some(4) => Offsets::Narrow(r.array(tag)?),
        _ => Offsets::Wide(r.array(tag)?),
    };
    let targets = read_packed_targets(r, tag)?;
    let ok = offsets.len() == nodes + 1
        && offsets.get(0) == 0
        && offsets.get(nodes) == targets.len() as u64
        && offsets.ascending();
    if !ok {
        return corrupt(format!("section {tag}: bad offsets"));
    }
    check_packed_below(&format!("section {tag}"), &targets, bound)?;
    Ok(Csr::from_parts(offsets, targets))
}

/// A CSR's targets: the packed words (tag + 1), their count and width
/// ([`PACKED`] past `tag`), refused unless the words are exactly as long
/// as that many values of that width take.
fn read_packed_targets(r: &R, tag: u32) -> Result<Bits, Corrupt> {
    read_bits(r, tag, (tag + 1, PACKED + tag))
}

/// Bit-packed values: their words at `words`, their count and width at
/// `shape`, refused unless the words are exactly as long as that many
/// values of that width take (the message naming section `tag`).
fn read_bits(r: &R, tag: u32, (words, shape): (u32, u32)) -> Result<Bits, Corrupt> {
    let words: Array<u32> = r.array(words)?;
    let shape: Array<u64> = r.array(shape)?;
    let &[len, width] = &shape[..] else {
        return corrupt(format!("section {tag}: not a count and a width"));
    };
    let (Ok(len), Ok(width)) = (usize::try_from(len), u32::try_from(width)) else {
        return corrupt(format!("section {tag}: packed values too long or too wide"));
    };
    Bits::from_words(words, len, width).or_else(|e| corrupt(format!("section {tag}: {e}")))
}

/// [`check_below`] for packed values, decoded a chunk at a time.
fn check_packed_below(what: &str, values: &Bits, bound: usize) -> Result<(), Corrupt> {
    for start in (0..values.len()).step_by(CHUNK) {
        let end = (start + CHUNK).min(values.len());
        let above = (start..end).into_par_iter().step_by(1 << 16).any(|from| {
            let to = (from + (1 << 16)).min(end);
            values
                .row::<u32>(from..to)
                .iter()
                .any(|v| v as usize >= bound)
        });
        if above {
            return corrupt(format!("{what}: index out of range"));
        }
        crate::mem::spill::release_all();
    }
    Ok(())
}

fn read_strings(r: &R, tag: u32) -> Result<Vec<String>, Corrupt> {
    let ends: Array<u64> = r.array(tag)?;
    let bytes: Array<u8> = r.array(tag + 1)?;
    let mut out = Vec::with_capacity(ends.len());
    let mut start = 0usize;
    for &e in &ends {
        let end = usize::try_from(e).unwrap_or(usize::MAX);
        let Some(s) = bytes.get(start..end) else {
            return corrupt(format!("section {tag}: bad string offsets"));
        };
        out.push(String::from_utf8_lossy(s).into_owned());
        start = end;
    }
    Ok(out)
}

fn get<T: Element>(r: &R, tag: u32, len: usize) -> Result<Array<T>, Corrupt> {
    let v: Array<T> = r.array(tag)?;
    if v.len() != len {
        return corrupt(format!(
            "section {tag}: {} entries, expected {len}",
            v.len()
        ));
    }
    Ok(v)
}

/// Reads the analysis of `path` back in one step; every index checked
/// (the fuzz target's and the tests' way in; a load reads in two steps).
#[cfg(any(test, feature = "testing"))]
pub fn decode(r: &R, path: &Path) -> Result<Analysis, Corrupt> {
    let _span = tracing::debug_span!(target: "heaptui::profile", "cache").entered();
    let d = decode_dominated(r, path)?;
    let duplicates = decode_duplicates_of(r, &d)?;
    Ok(d.with(Arc::new(duplicates)))
}

/// What the first screen needs, read back and checked: the graph, the
/// dominator tree and what is made with it (everything but the duplicate
/// sets, which [`decode_duplicates_of`] reads after).
pub struct Dominated {
    pub graph: Arc<HeapGraph>,
    pub dom: Arc<DominatorTree>,
    pub types: Arc<Vec<TypeStats>>,
    pub roots: Arc<Vec<crate::analysis::roots::RootGroup>>,
    pub largest: Arc<Vec<u32>>,
    pub summary: Arc<Summary>,
    meta: Array<u64>,
}

impl Dominated {
    /// The whole analysis, with its duplicate sets.
    pub fn with(self, duplicates: Arc<Duplicates>) -> Analysis {
        Analysis {
            graph: self.graph,
            dom: self.dom,
            types: self.types,
            duplicates,
            roots: self.roots,
            largest: self.largest,
            summary: self.summary,
            memory: crate::analysis::memory::MemoryUse {
                budget: crate::mem::budget::get(),
                ..Default::default()
            },
            timings: Timings::default(),
        }
    }
}

/// Reads back and checks every section but the duplicate sets'.
pub fn decode_dominated(r: &R, path: &Path) -> Result<Dominated, Corrupt> {
    let meta: Array<u64> = get(r, META, 15)?;
    let dump = tracing::debug_span!(target: "heaptui::profile", "model")
        .in_scope(|| decode_model(r, path, &meta))?;
    crate::mem::checkpoint("cache: model");
    let n = dump.objects();
    let retainers = read_packed(r, n)?;
    let strong_roots: Array<ObjectIdx> = r.array(STRONG_ROOTS)?;
    check_below("strong roots", ObjectIdx::raw_slice(&strong_roots), n)?;
    let graph = HeapGraph::from_parts(dump, retainers, strong_roots.into_vec());
    let dom = tracing::debug_span!(target: "heaptui::profile", "dominators")
        .in_scope(|| decode_dominators(r, &graph))?;
    // Checked for its form, then made again from the tree (its figures
    // are not checked otherwise, and a pass over the objects is cheap).
    decode_type_stats(r, graph.dump.type_names.len())?;
    let types = crate::analysis::type_stats(&graph, &dom);
    crate::mem::checkpoint("cache: type statistics");
    // Made again in one pass over the objects and compared: a list that
    // differs was not written by this analysis.
    let largest: Array<u32> = get(r, LARGEST, graph.dump.type_names.len())?;
    let fresh = largest_instances(&graph, &dom);
    if largest[..] != fresh[..] {
        return corrupt("largest instances: not the graph's");
    }
    crate::mem::checkpoint("cache: largest instances");
    let roots = Arc::new(root_groups(&graph, &dom));
    let weak = weakly_held(&graph, &dom);
    let summary = Arc::new(Summary::new(&graph, &dom, &types, weak));
    crate::mem::checkpoint("cache: summary");
    Ok(Dominated {
        graph: Arc::new(graph),
        dom: Arc::new(dom),
        types: Arc::new(types),
        roots,
        largest: Arc::new(fresh),
        summary,
        meta,
    })
}

/// Reads back and checks the duplicate sets of `d`'s graph.
pub fn decode_duplicates_of(r: &R, d: &Dominated) -> Result<Duplicates, Corrupt> {
    tracing::debug_span!(target: "heaptui::profile", "duplicates")
        .in_scope(|| decode_duplicates(r, &d.graph, &d.dom, &d.meta))
}

fn decode_model(r: &R, path: &Path, meta: &[u64]) -> Result<Model, Corrupt> {
    let type_names: Vec<Box<str>> = read_strings(r, TYPE_NAMES)?
        .into_iter()
        .map(String::into_boxed_str)
        .collect();
    let types = decode_types(r, type_names.len())?;
    let n = types.len();
    if n > u32::MAX as usize - 2 {
        return corrupt("too many objects");
    }
    let ids = Ids::from_parts(n, r.array(IDS)?, r.array(IDS_BYTES)?).or_else(corrupt)?;
    let sizes = decode_sizes(r, n)?;
    let total: u128 = sizes.total_wide();
    if total > u64::MAX as u128 {
        return corrupt("sizes overflow");
    }
    let refs = read_csr(r, REFS, n, n)?;
    let app_domains = decode_domains(r)?;
    let roots = decode_roots(r, n, app_domains.len(), type_names.len())?;
    let labels = decode_labels(r, refs.targets.len())?;
    let values = decode_values(r, n)?;
    let referents = decode_referents(r, n)?;
    let java_classes = decode_java(r)?;
    let root_places = decode_root_places(r, n, roots.len())?;
    let details = read_strings(r, DETAILS)?;
    let messages = read_strings(r, MESSAGES)?;
    // Nothing looks ids up after an import but tests and tools: built on
    // demand, not on every reopen.
    let id_index = IdIndex::lazy();
    let mut model = Model {
        path: path.to_path_buf(),
        file_bytes: meta[0],
        app_domains,
        type_names,
        ids,
        types,
        sizes,
        refs,
        roots,
        id_index,
        spill: None,
        diagnostics: decode_diagnostics(meta, messages),
        records: decode_records(meta),
        format: decode_format(meta)?,
        details: details
            .chunks_exact(2)
            .map(|p| (p[0].clone(), p[1].clone()))
            .collect(),
        labels,
        values,
        referents,
        java_classes,
        root_places,
        row_types: Default::default(),
    };
    // Text read back is escaped and shortened as the importers do: a cache
    // file is input like a dump.
    crate::import::make_printable(&mut model);
    Ok(model)
}

/// The diagnostics the meta section counts, with their messages.
fn decode_diagnostics(meta: &[u64], messages: Vec<String>) -> Diagnostics {
    Diagnostics {
        skipped_lines: meta[6],
        dangling_references: meta[7],
        undefined_types: meta[8],
        duplicate_objects: meta[9],
        missing_root_objects: meta[10],
        clamped_roots: meta[13],
        messages,
    }
}

/// The dump's record counts, from the meta section.
fn decode_records(meta: &[u64]) -> RecordCounts {
    RecordCounts {
        objects: meta[2],
        types: meta[3],
        roots: meta[4],
        sections: meta[5],
    }
}

/// The dump's format, from the meta section.
fn decode_format(meta: &[u64]) -> Result<Format, Corrupt> {
    match meta[1] {
        0 => Ok(Format::Rpm),
        1 => Ok(Format::Gcdump),
        2 => Ok(Format::Hprof),
        3 => Ok(Format::Heapsnapshot),
        _ => corrupt("unknown format"),
    }
}

fn decode_java(r: &R) -> Result<Option<JavaClasses>, Corrupt> {
    if !r.has(JAVA_CLASSES) {
        return Ok(None);
    }
    let heads: Array<u64> = r.array(JAVA_CLASSES)?;
    let names = read_strings(r, JAVA_NAMES)?;
    let tags: Array<u8> = r.array(JAVA_TAGS)?;
    let raw: Array<u64> = r.array(JAVA_STATICS)?;
    if !heads.len().is_multiple_of(4) || names.len() != tags.len() {
        return corrupt("java classes: bad lengths");
    }
    let (mut at, mut at_static) = (0usize, 0usize);
    let mut classes = Vec::with_capacity(heads.len() / 4);
    for h in heads.chunks_exact(4) {
        let (nf, ns) = (h[2] as usize, h[3] as usize);
        let (Some(end), Some(end_static)) = (
            at.checked_add(nf).and_then(|e| e.checked_add(ns)),
            at_static.checked_add(ns),
        ) else {
            return corrupt("java classes: bad counts");
        };
        if end > names.len() || end_static > raw.len() {
            return corrupt("java classes: bad counts");
        }
        let fields = (at..at + nf)
            .map(|i| FieldDecl {
                name: names[i].as_str().into(),
                tag: tags[i] & 0x7f,
                kept: tags[i] & 0x80 != 0,
            })
            .collect();
        let statics = (0..ns)
            .map(|k| StaticField {
                name: names[at + nf + k].as_str().into(),
                tag: tags[at + nf + k],
                raw: raw[at_static + k],
            })
            .collect();
        classes.push(JavaClass {
            id: h[0],
            super_id: h[1],
            fields,
            statics,
        });
        (at, at_static) = (end, end_static);
    }
    if at != names.len() || at_static != raw.len() {
        return corrupt("java classes: bad counts");
    }
    Ok(Some(JavaClasses::new(classes)))
}

fn decode_referents(r: &R, n: usize) -> Result<Option<Referents>, Corrupt> {
    if !r.has(REFERENTS) {
        return Ok(None);
    }
    let flat: Array<u32> = r.array(REFERENTS)?;
    let strong: Array<u8> = get(r, REFERENTS + 1, 1)?;
    if !flat.len().is_multiple_of(3) {
        return corrupt("referents: bad length");
    }
    let list = flat
        .chunks_exact(3)
        .map(|f| {
            let strength = u8::try_from(f[2]).ok().and_then(Strength::from_u8);
            match strength {
                Some(strength) if (f[0] as usize) < n && (f[1] as usize) < n => Ok(Referent {
                    reference: ObjectIdx(f[0]),
                    referent: ObjectIdx(f[1]),
                    strength,
                }),
                _ => corrupt("referents: index out of range"),
            }
        })
        .collect::<Result<Vec<_>, Corrupt>>()?;
    Ok(Some(Referents::new(list, strong[0] != 0)))
}

fn decode_domains(r: &R) -> Result<Vec<AppDomain>, Corrupt> {
    let text = read_strings(r, DOMAINS)?;
    let meta: Array<u64> = r.array(DOMAINS + 2)?;
    if text.len() != meta.len() || !text.len().is_multiple_of(3) || text.is_empty() {
        return corrupt("AppDomains: bad lengths");
    }
    Ok(text
        .chunks_exact(3)
        .zip(meta.chunks_exact(3))
        .map(|(t, m)| AppDomain {
            version: t[0].clone(),
            name: t[1].clone(),
            stamp: (m[0] != 0).then(|| t[2].clone()),
            closed: m[1] != 0,
            objects: m[2],
        })
        .collect())
}

fn decode_roots(r: &R, n: usize, domains: usize, names: usize) -> Result<Vec<Root>, Corrupt> {
    let raw: Array<u64> = r.array(ROOTS)?;
    if !raw.len().is_multiple_of(7) {
        return corrupt("roots: bad length");
    }
    raw.chunks_exact(7)
        .map(|f| {
            let in_range = (f[0] as usize) < n
                && f[1] <= u32::MAX as u64
                && f[2] <= u32::MAX as u64
                && (f[4] == NONE || (f[4] as usize) < names)
                && (f[5] as usize) < domains;
            if !in_range {
                return corrupt("roots: index out of range");
            }
            Ok(Root {
                object: ObjectIdx(f[0] as u32),
                kind: f[1] as u32,
                flags: f[2] as u32,
                container: (f[3] != NONE).then_some(f[3]),
                container_type: (f[4] != NONE).then_some(TypeIdx(f[4] as u32)),
                app_domain: f[5] as u32,
                line: f[6],
            })
        })
        .collect()
}

fn decode_labels(r: &R, edges: usize) -> Result<Option<Labels>, Corrupt> {
    if !r.has(LABELS) {
        return Ok(None);
    }
    let names: Vec<Box<str>> = read_strings(r, LABEL_NAMES)?
        .into_iter()
        .map(String::into_boxed_str)
        .collect();
    // In the width they were written in; names and array indices are told
    // apart by the top bit (see Labels).
    let n = names.len();
    let codes = match r.width(LABELS) {
        Some(1) => {
            let dict: Array<u32> = r.array(LABEL_DICT)?;
            let side = r.array(LABEL_SIDE)?;
            LabelCodes::checked_byte(get(r, LABELS, edges)?, dict.into_vec(), side, n)
        }
        Some(2) => {
            let dict: Array<u32> = r.array(LABEL_DICT)?;
            let side = r.array(LABEL_SIDE)?;
            LabelCodes::checked_half(get(r, LABELS, edges)?, dict.into_vec(), side, n)
        }
        _ => LabelCodes::checked_full(get(r, LABELS, edges)?, n),
    };
    Ok(Some(Labels::with_codes(names, codes.or_else(corrupt)?)))
}

fn decode_values(r: &R, n: usize) -> Result<Option<Values>, Corrupt> {
    if !r.has(VALUES) {
        return Ok(None);
    }
    let offsets: Array<u64> = get(r, VALUES, n + 1)?;
    let bytes: Array<u8> = r.array(VALUES + 1)?;
    let raw: Array<u8> = get(r, VALUES + 2, n)?;
    let ok = offsets[0] == 0
        && offsets[n] == bytes.len() as u64
        && offsets.par_windows(2).all(|w| w[0] <= w[1]);
    if !ok {
        return corrupt("values: bad offsets");
    }
    let kinds = raw
        .iter()
        .map(|&k| ValueKind::from_u8(k))
        .collect::<Option<Vec<_>>>();
    let Some(kinds) = kinds else {
        return corrupt("values: unknown kind");
    };
    Ok(Some(Values::new(
        offsets.into_vec(),
        bytes.into_vec(),
        kinds,
    )))
}

/// The tree's node numbers, bit-packed at `tag` ([`bits`]); `len` values
/// where given. Their values are checked with the tree.
fn read_nodes(r: &R, tag: u32, len: Option<usize>) -> Result<Nodes, Corrupt> {
    let b = read_bits(r, tag, (tag, PACKED + tag))?;
    if len.is_some_and(|n| n != b.len()) {
        return corrupt(format!(
            "section {tag}: {} values, not one an object",
            b.len()
        ));
    }
    Ok(Nodes::from_bits(b))
}

fn decode_dominators(r: &R, graph: &HeapGraph) -> Result<DominatorTree, Corrupt> {
    let n = graph.objects();
    let idom = read_nodes(r, IDOM, Some(n))?;
    let retained_bytes = decode_packed(r, RETAINED_BYTES, RETAINED_BIG, n)?;
    // Retained objects past the object count are refused by the tree's
    // check (each object's range within the preorder's).
    let retained_objects = decode_packed(r, RETAINED_OBJECTS, RETAINED_OBJECTS_BIG, n)?;
    let number = read_nodes(r, PREORDER_NUMBER, Some(n))?;
    let at_preorder = read_nodes(r, AT_PREORDER, None)?;
    let t = std::time::Instant::now();
    let mut dom = DominatorTree {
        idom,
        retained_bytes,
        retained_objects,
        preorder_number: number,
        at_preorder,
        reachable_objects: 0,
        reachable_bytes: 0,
        largest_roots: Default::default(),
    };
    super::tree::check(&mut dom, &graph.dump.sizes)?;
    tracing::debug!(target: "heaptui::profile", "cache/check_tree: {} ms", t.elapsed().as_millis());
    Ok(dom)
}

fn decode_type_stats(r: &R, names: usize) -> Result<Vec<TypeStats>, Corrupt> {
    let raw: Array<u64> = r.array(TYPE_STATS)?;
    if !raw.len().is_multiple_of(5) || raw.chunks_exact(5).any(|f| f[0] as usize >= names) {
        return corrupt("type statistics: bad entries");
    }
    Ok(raw
        .chunks_exact(5)
        .map(|f| TypeStats {
            type_index: TypeIdx(f[0] as u32),
            count: f[1],
            shallow_bytes: f[2],
            reachable_count: f[3],
            min_retained_bytes: f[4],
        })
        .collect())
}

fn read_lists(r: &R, tag: u32, count: usize, bound: usize) -> Result<Vec<Vec<u32>>, Corrupt> {
    let c = read_csr(r, tag, count, bound)?;
    Ok((0..count as u32)
        .into_par_iter()
        .map(|i| c.neighbors(i).to_vec())
        .collect())
}

/// [`read_lists`] into the sets' flat lists (a list per set, no vector
/// each); more than 2^32 entries in all are refused.
fn read_set_lists(r: &R, tag: u32, count: usize, bound: usize) -> Result<SetLists, Corrupt> {
    let c = read_csr(r, tag, count, bound)?;
    if u32::try_from(c.targets.len()).is_err() {
        return corrupt(format!("section {tag}: too many entries"));
    }
    let mut starts = Vec::with_capacity(count + 1);
    starts.push(0u32);
    let mut items = Vec::with_capacity(c.targets.len());
    for i in 0..count as u32 {
        items.extend(c.neighbors(i));
        starts.push(items.len() as u32);
    }
    drop(c);
    SetLists::from_parts(starts, items)
        .map_or_else(|| corrupt(format!("section {tag}: bad offsets")), Ok)
}

fn decode_duplicates(
    r: &R,
    graph: &HeapGraph,
    dom: &DominatorTree,
    meta: &[u64],
) -> Result<Duplicates, Corrupt> {
    let dump = &graph.dump;
    let (n, names) = (dump.objects(), dump.type_names.len());
    let raw: Array<u64> = r.array(SETS)?;
    if !raw.len().is_multiple_of(6) {
        return corrupt("duplicate sets: bad length");
    }
    let count = raw.len() / 6;
    if count > crate::graph::duplicates::MAX_SETS {
        return corrupt("duplicate sets: too many");
    }
    let members = read_set_lists(r, SET_MEMBERS, count, n)?;
    let held_by = read_set_lists(r, SET_HELD_BY, count, count)?;
    let mut sets = Vec::with_capacity(count);
    for (f, m) in raw.chunks_exact(6).zip(members.iter()) {
        let holder_ok = f[5] == NONE || (f[5] as usize) < count;
        if f[0] as usize >= names || !holder_ok || m.len() < 2 {
            return corrupt("duplicate sets: bad entries");
        }
        let mut s = DuplicateSet::new(f[0] as u32, f[1], f[2], f[3], f[4] != 0);
        s.set_holding_set((f[5] != NONE).then_some(f[5] as u32));
        sets.push(s);
    }
    let t = std::time::Instant::now();
    check_sets(dump, dom, &sets, &members, &held_by)?;
    crate::mem::checkpoint("cache: duplicate sets");
    tracing::debug!(target: "heaptui::profile", "cache/check_sets: {} ms", t.elapsed().as_millis());
    let types: Array<u32> = r.array(POSSIBLE)?;
    check_below("possible duplicates", &types, names)?;
    let instances = read_lists(r, POSSIBLE + 1, types.len(), n)?;
    check_possible(dump, dom, &types, &instances)?;
    let possible = types
        .iter()
        .copied()
        .zip(instances)
        .map(|(type_index, instances)| PossibleDuplicates {
            type_index,
            instances: IdSet::from_sorted(instances),
        })
        .collect();
    let finished: Array<u32> = r.array(FINISHED)?;
    check_below("finished types", &finished, names)?;
    if !finished.windows(2).all(|w| w[0] < w[1]) {
        return corrupt("finished types: not ascending");
    }
    let mode = match meta[11] {
        0 => None,
        1 => Some(DuplicateMode::None),
        2 => Some(DuplicateMode::Trivial),
        3 => Some(DuplicateMode::All),
        _ => return corrupt("unknown duplicates mode"),
    };
    let budget = (meta[12] != NONE).then_some(meta[12]);
    Ok(Duplicates::from_parts(
        n,
        meta[14] != 0,
        mode,
        sets,
        members,
        held_by,
        possible,
        budget,
        finished.into_vec(),
    ))
}

/// The duplicate sets' figures against the graph, in one pass over their
/// members and held-by lists (each member and each reference read once):
/// - members: reachable, in no other set, in the detector's order (by id,
///   so no member twice), all of the set's type and instance size;
/// - a trivial set's figures are its members' sizes (one object per copy,
///   all but one member as additional bytes); another's are bounded by the
///   reachable heap (its additional objects are distinct reachable ones);
/// - sets in the detector's order (additional bytes descending, then the
///   first member's id);
/// - held-by lists ascending, without the set itself, and each holder met
///   on every root path to the held members: a holder has a member numbered
///   before every member of the held set (`DominatorTree::preorder_number`:
///   the path from a held member stepping to the retainer numbered first
///   passes through one), which also makes held-by
///   acyclic; the holding sets are made again from the lists (in that
///   order) and must be those read.
fn check_sets(
    dump: &Model,
    dom: &DominatorTree,
    sets: &[DuplicateSet],
    members: &SetLists,
    held_by: &SetLists,
) -> Result<(), Corrupt> {
    let n = dump.objects();
    let position = &dom.preorder_number;
    let mut in_set = vec![false; n];
    // Per set: the number of its member numbered first.
    let mut first = Vec::with_capacity(sets.len());
    let id = |o: u32| dump.ids.get(o as usize);
    for (s, list) in sets.iter().zip(members.iter()) {
        let mut earliest = u32::MAX;
        let mut prev: Option<u64> = None;
        for &m in list {
            let o = m as usize;
            let ok = dom.is_reachable(m)
                && !std::mem::replace(&mut in_set[o], true)
                && prev.is_none_or(|p| p <= id(m))
                && dump.types.get(o).raw() == s.type_index
                && dump.sizes.get(o) == s.instance_bytes;
            if !ok {
                return corrupt("duplicate sets: members unlike each other or the graph");
            }
            prev = Some(id(m));
            earliest = earliest.min(position.get(o));
        }
        first.push(earliest);
        let copies = list.len() as u64 - 1;
        let figures_ok = if s.trivial() {
            s.objects_per_copy == 1
                && Some(s.additional_bytes) == s.instance_bytes.checked_mul(copies)
        } else {
            s.objects_per_copy <= crate::graph::duplicates::per_copy(dom.reachable_objects, copies)
                && s.additional_bytes <= dom.reachable_bytes
        };
        if !figures_ok {
            return corrupt("duplicate sets: figures not their members'");
        }
    }
    let key = |i: usize| {
        let s = &sets[i];
        (
            std::cmp::Reverse(s.additional_bytes),
            id(members.get(i as u32)[0]),
        )
    };
    let ordered = (1..sets.len()).all(|i| key(i - 1) <= key(i));
    if !ordered {
        return corrupt("duplicate sets: out of order");
    }
    for (i, held) in held_by.iter().enumerate() {
        let held_ok = held.windows(2).all(|w| w[0] < w[1])
            && held.iter().all(|&h| first[h as usize] < first[i]);
        if !held_ok {
            return corrupt("duplicate sets: held by sets that cannot hold them");
        }
    }
    // The holding sets follow from the held-by lists: made again, they must
    // be those read.
    let mut order: Vec<u32> = (0..sets.len() as u32).collect();
    order.sort_unstable_by_key(|&i| first[i as usize]);
    let holding = crate::graph::duplicates::holding_sets(held_by, &order);
    if sets.iter().zip(holding).any(|(s, h)| s.holding_set() != h) {
        return corrupt("duplicate sets: a holding set not the outermost holder");
    }
    Ok(())
}

/// Possible duplicates: types ascending, each type's instances reachable,
/// of that type and ascending (the detector's order).
fn check_possible(
    dump: &Model,
    dom: &DominatorTree,
    types: &[u32],
    instances: &[Vec<u32>],
) -> Result<(), Corrupt> {
    let ok = types.windows(2).all(|w| w[0] < w[1])
        && types.iter().zip(instances).all(|(&t, list)| {
            list.windows(2).all(|w| w[0] < w[1])
                && list
                    .iter()
                    .all(|&o| dom.is_reachable(o) && dump.types.get(o as usize).raw() == t)
        });
    if !ok {
        return corrupt("possible duplicates: not of their type or out of order");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::duplicates::DuplicateOptions;
    use crate::model::Side;

    fn demo() -> Analysis {
        let text =
            "t 1 A\nt 2 B\no 1 1 10 2 3\no 2 2 20 3\no 3 2 20\no 4 1 8 4\nr 1 1 0\nr 4 3 2\n";
        Analysis::from_bytes("t.txt", text.as_bytes(), &DuplicateOptions::default()).unwrap()
    }

    fn encoded(a: &Analysis) -> Vec<u8> {
        let mut out = Vec::new();
        let sink: &mut dyn Write = &mut out;
        let mut w = Writer::new(sink, b"k").unwrap();
        encode(&mut w, a).unwrap();
        w.finish().unwrap();
        out
    }

    fn decoded(bytes: &[u8]) -> Result<Analysis, Corrupt> {
        let bytes = bytes.to_vec();
        let input: &dyn Input = &bytes;
        let r = Reader::open(input, b"k")?;
        decode(&r, Path::new("t.txt"))
    }

    #[test]
    fn round_trip() {
        let a = demo();
        let b = decoded(&encoded(&a)).unwrap();
        assert_eq!(a.dom.idom, b.dom.idom);
        assert_eq!(a.dom.retained_bytes, b.dom.retained_bytes);
        assert_eq!(a.dom.reachable_bytes, b.dom.reachable_bytes);
        assert_eq!(a.graph.dump.refs, b.graph.dump.refs);
        assert_eq!(a.duplicates.sets, b.duplicates.sets);
        assert_eq!(a.duplicates.member_lists(), b.duplicates.member_lists());
        assert_eq!(a.duplicates.holder_lists(), b.duplicates.holder_lists());
        assert_eq!(a.summary, b.summary);
    }

    /// CSR offsets are written in their own form: short ones (nearly every
    /// heap) in 2 bytes an entry and a base per block, narrow ones (spilled
    /// ones) in 4, wide ones in 8; each is read back (in the short form
    /// where read into memory); a short form whose blocks lie is refused.
    #[test]
    fn csr_offsets_keep_their_form() {
        let mut a = demo();
        let short = decoded(&encoded(&a)).unwrap();
        let is_short = |c: &Csr| matches!(c.offsets(), Offsets::Short { .. });
        assert!(is_short(&short.graph.dump.refs));
        assert_eq!(short.graph.retainers, a.graph.retainers);
        let dir = tempfile::tempdir().unwrap();
        let spill = crate::mem::spill::Spill::open(dir.path(), 1 << 20).unwrap();
        let r = a.graph.dump.refs.clone();
        let cuts: Vec<u64> = (0..=r.nodes()).map(|i| r.offset(i)).collect();
        let narrow = cuts.iter().map(|&c| c as u32).collect::<Vec<_>>();
        let forms = [
            Offsets::Narrow(narrow.into()),
            Offsets::Wide(cuts.clone().into()),
        ];
        for mut offsets in forms {
            // Spilled, so that `from_parts` keeps the form.
            spill.words(&mut offsets);
            let wide = matches!(offsets, Offsets::Wide(_));
            let g = Arc::get_mut(&mut a.graph).expect("held once");
            g.dump.refs = Csr::from_parts(offsets, r.targets.clone());
            let bytes = encoded(&a);
            let r = Reader::open(&bytes as &dyn Input, b"k").unwrap();
            assert_eq!(r.width(REFS), Some(if wide { 8 } else { 4 }));
            // Read into memory (not mapped in place), made short.
            let b = decoded(&bytes).unwrap();
            assert!(is_short(&b.graph.dump.refs));
            assert_eq!(b.graph.dump.refs, short.graph.dump.refs);
        }
        type Lie = fn(&mut Vec<u64>, &mut Vec<u16>);
        let lies: [(&str, Lie); 3] = [
            ("a base too many", |b, _| b.push(0)),
            ("a base too few", |b, _| b.clear()),
            ("values out of order", |_, w| w[1] = w[2] + 1),
        ];
        for (what, lie) in lies {
            let (mut bases, mut within) = (vec![0u64], narrowed(&cuts));
            lie(&mut bases, &mut within);
            let offsets = Offsets::Short {
                bases: bases.into(),
                within: within.into(),
                side: Vec::new().into(),
            };
            let g = Arc::get_mut(&mut a.graph).expect("held once");
            g.dump.refs = Csr::from_parts_unchecked(offsets, r.targets.clone());
            let Err(e) = decoded(&encoded(&a)) else {
                panic!("{what}: accepted");
            };
            assert!(e.to_string().contains("section 7"), "{what}: {e}");
        }
    }

    /// Packed targets whose words, count or width disagree, or whose
    /// values pass the objects, are refused with the section's number,
    /// never read out of bounds.
    #[test]
    fn packed_targets_that_lie_are_refused() {
        let mut a = demo();
        let r = a.graph.dump.refs.clone();
        let (len, width) = (r.targets.len(), r.targets.width());
        let words = r.targets.words().clone();
        let mut longer = words.to_vec();
        longer.push(0);
        let lies = [
            ("a width of 0", words.clone(), len, 0),
            ("a width of 33", words.clone(), len, 33),
            ("a width of 64", words.clone(), len, 64),
            (
                "more values than the words hold",
                words.clone(),
                len + 200,
                width,
            ),
            ("a word too many", longer.into(), len, width),
            ("no word", Vec::new().into(), len, width),
            ("a width 20 bits wider", words.clone(), len, width + 20),
        ];
        for (what, words, len, width) in lies {
            let bits = crate::mem::Bits::from_words_unchecked(words, len, width);
            let g = Arc::get_mut(&mut a.graph).expect("held once");
            g.dump.refs = Csr::from_parts_unchecked(r.offsets().clone(), bits);
            let Err(e) = decoded(&encoded(&a)) else {
                panic!("{what}: accepted");
            };
            assert!(e.to_string().contains("section 7"), "{what}: {e}");
        }
        // Well formed, but a target one past the objects.
        let mut past = r.targets.to_vec();
        past[0] = a.graph.dump.objects() as u32;
        let g = Arc::get_mut(&mut a.graph).expect("held once");
        g.dump.refs = Csr::from_parts_unchecked(r.offsets().clone(), past.into());
        let Err(e) = decoded(&encoded(&a)) else {
            panic!("a target past the objects: accepted");
        };
        assert!(e.to_string().contains("index out of range"), "{e}");
        let g = Arc::get_mut(&mut a.graph).expect("held once");
        g.dump.refs = r;
        assert!(decoded(&encoded(&a)).is_ok());
    }

    /// Cut points under 65,536 in 2 bytes each.
    fn narrowed(cuts: &[u64]) -> Vec<u16> {
        cuts.iter().map(|&c| c as u16).collect()
    }

    /// The sizes of `all` in the 1- or 2-byte form with every size from
    /// `limit` in the side table (`escape` in place).
    fn escaped_sizes(all: &[u64], limit: u64) -> (Vec<u64>, Words) {
        let small = all.iter().map(|&x| x.min(limit)).collect();
        let big: Vec<u64> = all.iter().copied().filter(|&x| x >= limit).collect();
        (small, Words::from(big))
    }

    /// A heap with sizes past 1 and 2 bytes (0x1000 and 0x20000).
    fn demo_with_large_sizes() -> Analysis {
        let text =
            "t 1 A\nt 2 B\no 1 1 10 2 3\no 2 2 1000 3\no 3 2 20000\no 4 1 8 4\nr 1 1 0\nr 4 3 2\n";
        Analysis::from_bytes("t.txt", text.as_bytes(), &DuplicateOptions::default()).unwrap()
    }

    /// Sizes too: in each of their forms, read back in it.
    #[test]
    fn sizes_keep_their_width() {
        let mut a = demo_with_large_sizes();
        let all = a.dump().sizes.to_vec();
        let (b8, big8) = escaped_sizes(&all, 255);
        let (b16, big16) = escaped_sizes(&all, 65535);
        assert!(!big8.is_empty(), "the demo has sizes past a byte: {all:?}");
        for (sizes, form) in [
            (
                Sizes::checked_byte(b8.iter().map(|&x| x as u8).collect(), big8).unwrap(),
                "byte",
            ),
            (
                Sizes::checked_half(b16.iter().map(|&x| x as u16).collect(), big16).unwrap(),
                "half",
            ),
            (
                Sizes::checked_narrow(all.iter().map(|&x| x as u32).collect(), Words::default())
                    .unwrap(),
                "narrow",
            ),
            (Sizes::Wide(all.clone().into()), "wide"),
        ] {
            let g = Arc::get_mut(&mut a.graph).expect("held once");
            g.dump.sizes = sizes.clone();
            let b = decoded(&encoded(&a)).unwrap();
            let got = match &b.graph.dump.sizes {
                Sizes::Byte { .. } => "byte",
                Sizes::Half { .. } => "half",
                Sizes::Narrow { .. } => "narrow",
                Sizes::Wide(_) => "wide",
            };
            assert_eq!(got, form);
            assert_eq!(b.graph.dump.sizes, sizes);
            assert_eq!(b.graph.dump.sizes.to_vec(), all);
        }
    }

    /// The retained sizes too: each of retained bytes and objects in each
    /// width, its side table beside it, read back in it.
    #[test]
    fn retained_sizes_keep_their_width() {
        let a = demo_with_large_sizes();
        let (bytes, objects) = a.dom.retained_arrays();
        let (bytes, objects) = (bytes.to_vec(), objects.to_vec());
        let forms = |v: &[u64]| -> Vec<Packed> {
            let (b8, big8) = escaped_sizes(v, 255);
            let (b16, big16) = escaped_sizes(v, 65535);
            vec![
                Packed::checked_byte(b8.iter().map(|&x| x as u8).collect(), big8).unwrap(),
                Packed::checked_half(b16.iter().map(|&x| x as u16).collect(), big16).unwrap(),
                Packed::checked_narrow(v.iter().map(|&x| x as u32).collect(), Words::default())
                    .unwrap(),
                Packed::Wide(v.to_vec().into()),
            ]
        };
        for (b, o) in forms(&bytes)
            .into_iter()
            .zip(forms(&objects).into_iter().rev())
        {
            let mut c = a.clone();
            let mut dom = (*c.dom).clone();
            dom.retained_bytes = b.clone();
            dom.retained_objects = o.clone();
            c.dom = Arc::new(dom);
            let back = decoded(&encoded(&c)).unwrap();
            let (b2, o2) = back.dom.retained_arrays();
            assert_eq!((b2.width(), o2.width()), (b.width(), o.width()));
            assert_eq!((b2.to_vec(), o2.to_vec()), (bytes.clone(), objects.clone()));
            assert_eq!(b2.large(), b.large());
        }
    }

    /// Types too: in 1, 2 or 4 bytes, read back in their width; one past
    /// the type names in any width is refused.
    #[test]
    fn types_keep_their_width_and_are_checked() {
        let mut a = demo();
        let all = a.dump().types.to_vec();
        assert_eq!(a.dump().types.width(), 1, "two types fit a byte");
        let raw = |t: &TypeIdx| t.raw();
        for types in [
            ObjectTypes::Byte(all.iter().map(|t| raw(t) as u8).collect()),
            ObjectTypes::Half(all.iter().map(|t| raw(t) as u16).collect()),
            ObjectTypes::Full(all.clone().into()),
        ] {
            let width = types.width();
            let g = Arc::get_mut(&mut a.graph).expect("held once");
            g.dump.types = types;
            let b = decoded(&encoded(&a)).unwrap();
            assert_eq!(b.graph.dump.types.width(), width);
            assert_eq!(b.graph.dump.types.to_vec(), all);
            let mut bad: Vec<u32> = all.iter().map(raw).collect();
            bad[1] = 2;
            let g = Arc::get_mut(&mut a.graph).expect("held once");
            g.dump.types = match width {
                1 => ObjectTypes::Byte(bad.iter().map(|&t| t as u8).collect()),
                2 => ObjectTypes::Half(bad.iter().map(|&t| t as u16).collect()),
                _ => ObjectTypes::Full(bad.iter().map(|&t| TypeIdx(t)).collect()),
            };
            assert!(decoded(&encoded(&a)).is_err(), "width {width}");
        }
    }

    /// A 1-byte form whose side table disagrees with it (checksums
    /// rewritten to match) is refused, never read past its end.
    #[test]
    fn a_lying_side_table_of_sizes_is_refused() {
        let mut a = demo_with_large_sizes();
        let all = a.dump().sizes.to_vec();
        let (small, big) = escaped_sizes(&all, 255);
        let small: Vec<u8> = small.iter().map(|&x| x as u8).collect();
        let big = big.to_vec();
        let first = small.iter().position(|&x| x == u8::MAX).unwrap();
        type Lie = fn(&mut Vec<u8>, &mut Vec<u64>, usize);
        let lies: [(&str, Lie); 4] = [
            ("an escape without its value", |_, big, _| {
                big.pop();
            }),
            ("a value too many", |_, big, _| big.push(300)),
            ("a small value in the table", |_, big, _| big[0] = 3),
            ("an escape replaced", |small, _, first| small[first] = 7),
        ];
        for (what, lie) in lies {
            let (mut s, mut b) = (small.clone(), big.clone());
            lie(&mut s, &mut b, first);
            let g = Arc::get_mut(&mut a.graph).expect("held once");
            g.dump.sizes = Sizes::Byte {
                small: s.into(),
                big: Escapes::forged(Words::from(b)),
            };
            assert!(decoded(&encoded(&a)).is_err(), "{what}");
        }
    }

    /// Labels in each form (a name, an index at its position, one off it,
    /// none) read back in it; a form whose codes or tables lie (checksums
    /// rewritten to match) is refused with a reason, never read past.
    #[test]
    fn labels_keep_their_form_and_lies_are_refused() {
        let mut a = demo();
        let raw = vec![0, Labels::index(1), Labels::index(70_000), Labels::NONE];
        assert_eq!(a.dump().refs.edges(), raw.len());
        let names: Vec<Box<str>> = vec!["a".into(), "b".into()];
        // (Four labels take fewer bytes as they are: the form is made by hand.)
        let (codes, dict, side) = (
            vec![0u8, u8::MAX - 1, u8::MAX, 1],
            vec![0, Labels::NONE],
            vec![2u64, raw[2] as u64],
        );
        let byte = LabelCodes::Byte {
            codes: codes.clone().into(),
            dict: dict.clone(),
            side: Side::new(side.clone().into(), 4),
        };
        let half = LabelCodes::Half {
            codes: codes
                .iter()
                .map(|&c| {
                    if c >= 254 {
                        c as u16 + 0xff00
                    } else {
                        c as u16
                    }
                })
                .collect(),
            dict: dict.clone(),
            side: Side::new(side.clone().into(), 4),
        };
        for codes in [byte, half, LabelCodes::Full(raw.clone().into())] {
            let g = Arc::get_mut(&mut a.graph).expect("held once");
            g.dump.labels = Some(Labels::with_codes(names.clone(), codes.clone()));
            let b = decoded(&encoded(&a)).unwrap();
            let l = b.dump().labels.as_ref().unwrap();
            assert_eq!(l.codes, codes);
            let starts = [0, 0, 2, 3];
            let got: Vec<u32> = (0..4).map(|e| l.raw(starts[e], e).unwrap()).collect();
            assert_eq!(got, raw);
        }
        type Lie = fn(&mut Vec<u8>, &mut Vec<u32>, &mut Vec<u64>);
        let lies: [(&str, Lie); 5] = [
            ("a code past the dictionary", |c, d, _| c[0] = d.len() as u8),
            ("a dictionary label naming no name", |_, d, _| d[0] = 7),
            ("an escape without its pair", |_, _, s| s.clear()),
            ("a pair past the end", |_, _, s| s[0] = 1 << 40),
            ("an escape replaced", |c, _, s| c[s[0] as usize] = 0),
        ];
        for (what, lie) in lies {
            let (mut c, mut d, mut s) = (codes.clone(), dict.clone(), side.clone());
            lie(&mut c, &mut d, &mut s);
            let g = Arc::get_mut(&mut a.graph).expect("held once");
            let codes = LabelCodes::Byte {
                codes: c.into(),
                dict: d,
                side: Side::new(s.into(), 4),
            };
            g.dump.labels = Some(Labels::with_codes(names.clone(), codes));
            let Err(e) = decoded(&encoded(&a)) else {
                panic!("{what}: accepted");
            };
            assert!(e.to_string().contains("labels"), "{what}: {e}");
        }
    }

    /// Text read back is escaped and shortened as an importer's: a cache
    /// file written by someone else once retitled the terminal.
    #[test]
    fn text_read_back_is_escaped_and_shortened() {
        let mut a = demo();
        let g = Arc::get_mut(&mut a.graph).expect("held once");
        let huge = format!("\x1b]2;retitled\x07{}", "\u{202e}x".repeat(5 << 20));
        g.dump.type_names[0] = huge.into();
        g.dump.diagnostics.messages.push("line 1: \x1b[2J".into());
        let b = decoded(&encoded(&a)).unwrap();
        let name = &b.graph.dump.type_names[0];
        assert!(
            name.len() <= crate::import::MAX_NAME_BYTES,
            "{}",
            name.len()
        );
        assert!(
            name.starts_with("\\x1b]2;retitled\\x07\\u{202e}x"),
            "{name:.40}"
        );
        assert!(!name.contains(['\x1b', '\u{202e}']));
        let msg = b.graph.dump.diagnostics.messages.last().unwrap();
        assert_eq!(msg, "line 1: \\x1b[2J");
    }

    fn fixture(name: &str) -> Analysis {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures")
            .join(name);
        let bytes = std::fs::read(&path).unwrap();
        Analysis::from_bytes(name, &bytes, &DuplicateOptions::default()).unwrap()
    }

    /// Caches written by the analysis pass every check of their figures,
    /// on fixtures with non-trivial, held and holding sets of every format.
    #[test]
    fn honest_figures_of_every_format_are_accepted() {
        for name in [
            "dup_seed_held.txt",
            "dup_held_collective.txt",
            "dup_cycles.txt",
            "dup_aliasing.txt",
            "demo.dump.txt",
            "leaky.hprof.gz",
            "node_duplicates.heapsnapshot.gz",
            "perfview_test1.gcdump",
        ] {
            let a = fixture(name);
            let b = decoded(&encoded(&a)).unwrap_or_else(|e| panic!("{name}: {e:?}"));
            assert_eq!(a.duplicates.sets, b.duplicates.sets, "{name}");
            let (x, y) = (&a.duplicates, &b.duplicates);
            assert_eq!(x.member_lists(), y.member_lists(), "{name}");
            assert_eq!(x.holder_lists(), y.holder_lists(), "{name}");
            assert_eq!(a.duplicates.possible, b.duplicates.possible, "{name}");
            assert_eq!(a.largest, b.largest, "{name}");
        }
    }

    type Lie = Box<dyn Fn(&mut Duplicates)>;

    /// Sets of each kind among a fixture's duplicates, by index.
    #[derive(Clone, Copy)]
    struct Picks {
        trivial: usize,
        full: usize,
        held: usize,
        unheld: usize,
    }

    fn picks(d: &Duplicates) -> Picks {
        let set = |what: &str, f: &dyn Fn(u32, &DuplicateSet) -> bool| {
            d.numbered()
                .position(|(i, s)| f(i, s))
                .unwrap_or_else(|| panic!("{what}"))
        };
        Picks {
            trivial: set("a trivial set", &|_, s| s.trivial()),
            full: set("a full set", &|_, s| !s.trivial()),
            held: set("a held set", &|i, _| !d.held_by(i).is_empty()),
            unheld: set("an unheld set", &|i, _| d.held_by(i).is_empty()),
        }
    }

    /// Lies about the sets' figures, members and order.
    fn figure_lies(a: &Analysis, p: Picks) -> Vec<(&'static str, Lie)> {
        let reachable_bytes = a.dom.reachable_bytes;
        let reachable_objects = a.dom.reachable_objects;
        vec![
            (
                "instance size",
                Box::new(move |d| d.sets[p.full].instance_bytes += 1),
            ),
            (
                "trivial objects per copy",
                Box::new(move |d| d.sets[p.trivial].objects_per_copy = 2),
            ),
            (
                "trivial additional bytes",
                Box::new(move |d| d.sets[p.trivial].additional_bytes += 1),
            ),
            (
                "additional bytes past the heap",
                Box::new(move |d| d.sets[p.full].additional_bytes = reachable_bytes + 1),
            ),
            (
                "objects per copy past the heap",
                Box::new(move |d| d.sets[p.full].objects_per_copy = reachable_objects + 1),
            ),
            (
                "a member of another type",
                Box::new(move |d| {
                    let other = d.members(p.trivial as u32)[0];
                    d.members_mut(p.full as u32)[1] = other;
                }),
            ),
            (
                "a member twice",
                Box::new(move |d| {
                    let m = d.members(p.full as u32)[0];
                    d.members_mut(p.full as u32)[1] = m;
                }),
            ),
            (
                "members out of order",
                Box::new(move |d| d.members_mut(p.full as u32).reverse()),
            ),
            ("sets out of order", Box::new(|d| d.sets.swap(0, 1))),
        ]
    }

    /// Lies about which sets hold which, and about possible duplicates.
    fn holder_lies(p: Picks) -> Vec<(&'static str, Lie)> {
        vec![
            (
                "held by itself",
                Box::new(move |d| {
                    d.replace_held_by(p.held as u32, &[p.held as u32]);
                    d.sets[p.held].set_holding_set(Some(p.held as u32));
                }),
            ),
            (
                "held by a set it holds",
                Box::new(move |d| {
                    let h = d.held_by(p.held as u32)[0] as usize;
                    d.replace_held_by(h as u32, &[p.held as u32]);
                    d.sets[h].set_holding_set(Some(p.held as u32));
                }),
            ),
            (
                "holding set not among the holders",
                Box::new(move |d| {
                    d.sets[p.held].set_holding_set(None);
                }),
            ),
            (
                "a holding set other than the outermost holder",
                Box::new(move |d| {
                    let h = d.sets[p.held].holding_set().unwrap();
                    d.sets[p.held].set_holding_set(Some(if h == 0 { 1 } else { 0 }));
                }),
            ),
            (
                "a holding set without holders",
                Box::new(move |d| d.sets[p.unheld].set_holding_set(Some(p.held as u32))),
            ),
            (
                "possible duplicates of another type",
                Box::new(move |d| {
                    let (t, m) = (d.sets[p.full].type_index, d.members(p.trivial as u32)[0]);
                    d.possible = vec![PossibleDuplicates {
                        type_index: t,
                        instances: IdSet::from_sorted(vec![m]),
                    }];
                }),
            ),
        ]
    }

    /// Duplicate figures with good checksums but values the graph does not
    /// give are refused.
    #[test]
    fn consistent_checksums_do_not_make_lying_figures_trusted() {
        let a = fixture("dup_held_collective.txt");
        let p = picks(&a.duplicates);
        for (what, lie) in figure_lies(&a, p).into_iter().chain(holder_lies(p)) {
            let mut bad = a.clone();
            let mut dups = (*bad.duplicates).clone();
            lie(&mut dups);
            assert_ne!(dups, *a.duplicates, "{what}: no lie");
            bad.duplicates = Arc::new(dups);
            assert!(decoded(&encoded(&bad)).is_err(), "{what}");
        }
    }

    /// The largest instance of a type with two reachable instances, swapped
    /// for the other, is refused.
    #[test]
    fn consistent_checksums_do_not_make_a_lying_largest_instance_trusted() {
        let a = fixture("dup_held_collective.txt");
        let d = &a.duplicates;
        let full = picks(d).full;
        let t = d.sets[full].type_index as usize;
        let mut bad = a.clone();
        let mut largest = (*bad.largest).clone();
        let other = d
            .members(full as u32)
            .iter()
            .copied()
            .find(|&m| m != largest[t])
            .unwrap();
        largest[t] = other;
        bad.largest = Arc::new(largest);
        assert!(decoded(&encoded(&bad)).is_err(), "largest instance");
    }

    /// An unreachable object of the same type and size as the members of a
    /// set (and in their order), for the first one, is refused.
    #[test]
    fn consistent_checksums_do_not_make_an_unreachable_member_trusted() {
        let a = fixture("dup_unreachable.txt");
        let d = a.dump();
        let unreachable = d.index_of(0x50).unwrap().raw();
        assert!(!a.dom.is_reachable(unreachable));
        let mut dups = (*a.duplicates).clone();
        let boxes = d.index_of(0x80).unwrap().raw();
        let set = (0..dups.sets.len() as u32)
            .find(|&s| dups.members(s)[0] == boxes)
            .expect("the boxes' set");
        dups.members_mut(set)[0] = unreachable;
        let mut bad = a.clone();
        bad.duplicates = Arc::new(dups);
        assert!(decoded(&encoded(&bad)).is_err(), "an unreachable member");
    }

    /// Arrays with good checksums but lying indices are refused.
    #[test]
    fn consistent_checksums_do_not_make_bad_indices_trusted() {
        let a = demo();
        type Lie = Box<dyn Fn(&mut DominatorTree)>;
        let lies: Vec<(&str, Lie)> = vec![
            ("idom cycle", Box::new(|d| d.idom.edit(|v| v[1] = 1))),
            (
                "idom out of range",
                Box::new(|d| d.idom.edit(|v| v[0] = 77)),
            ),
            (
                "preorder entry out of range",
                Box::new(|d| d.at_preorder.edit(|v| v[0] = 99)),
            ),
            (
                "preorder not the numbers' inverse",
                Box::new(|d| {
                    let last = d.at_preorder.len() - 1;
                    d.at_preorder.edit(|v| v.swap(0, last));
                }),
            ),
            (
                "short preorder",
                Box::new(|d| {
                    let mut v = d.at_preorder.to_vec();
                    v.pop();
                    d.at_preorder = v.into();
                }),
            ),
            (
                "a reachable object retains no object (an endless walk)",
                Box::new(|d| {
                    let leaf = (0..d.idom.len())
                        .find(|&o| d.retained_objects(o) == 1)
                        .expect("a leaf");
                    let mut v = d.retained_objects.to_vec();
                    v[leaf] = 0;
                    d.retained_objects = v.into();
                }),
            ),
            (
                "a leaf's range over its next sibling",
                Box::new(|d| {
                    let leaf = (0..d.idom.len())
                        .find(|&o| {
                            let next = d.preorder_number.get(o) as usize + 1;
                            d.retained_objects(o) == 1
                                && d.at_preorder
                                    .get_checked(next)
                                    .is_some_and(|s| d.idom.get(s as usize) == d.idom.get(o))
                        })
                        .expect("a leaf with a next sibling");
                    let mut v = d.retained_objects.to_vec();
                    v[leaf] = 2;
                    d.retained_objects = v.into();
                }),
            ),
            (
                "preorder number repeats",
                Box::new(|d| {
                    let first = d.preorder_number.get(0);
                    d.preorder_number.edit(|v| v[1] = first)
                }),
            ),
            (
                "preorder number past the reachable objects",
                Box::new(|d| {
                    let past = d.reachable_objects as u32;
                    d.preorder_number.edit(|v| v[0] = past)
                }),
            ),
            (
                "retained sizes past the heap",
                Box::new(|d| {
                    let mut v = d.retained_bytes.to_vec();
                    v.iter_mut().for_each(|b| *b = u64::MAX);
                    d.retained_bytes = v.into();
                }),
            ),
            (
                "one retained size off",
                Box::new(|d| {
                    let mut v = d.retained_bytes.to_vec();
                    v[1] += 1;
                    d.retained_bytes = v.into();
                }),
            ),
            (
                "retained objects off",
                Box::new(|d| {
                    let mut v = d.retained_objects.to_vec();
                    v[0] += 1;
                    d.retained_objects = v.into();
                }),
            ),
            (
                "short retained sizes",
                Box::new(|d| {
                    let mut v = d.retained_bytes.to_vec();
                    v.pop();
                    d.retained_bytes = v.into();
                }),
            ),
        ];
        for (what, lie) in lies {
            let mut bad = a.clone();
            let mut dom = (*bad.dom).clone();
            lie(&mut dom);
            bad.dom = Arc::new(dom);
            assert!(decoded(&encoded(&bad)).is_err(), "{what}");
        }
    }
}
