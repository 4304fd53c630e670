//! Stitches the decoded chunks into one [`Model`] in file order: the id
//! index (first record of an id wins), references resolved to dense indices
//! (dangling ones dropped and counted, with their labels), values in one
//! arena, types compacted to those in use, and the roots.

use rayon::prelude::*;

use super::classes::Classes;
use super::decode::{Decoded, UNDEFINED};
use super::scan::{Chunk, RawRoot};
use crate::model::{root_flags, root_kind, Csr, Root, ValueKind, Values, WideIdIndex};
use crate::model::{Collector, Kind, ObjectIdx};

/// The model's arrays, before the path and details are added.
pub(super) struct Assembled {
    pub ids: Vec<u64>,
    pub types: Vec<u32>,
    pub type_names: Vec<Box<str>>,
    pub sizes: Vec<u64>,
    pub refs: Csr,
    pub labels: Vec<u32>,
    pub values: Values,
    pub roots: Vec<Root>,
}

/// One chunk after resolution (only objects that are kept).
struct Resolved {
    types: Vec<u32>,
    sizes: Vec<u64>,
    degrees: Vec<u32>,
    targets: Vec<u32>,
    labels: Vec<u32>,
    value_ends: Vec<u64>,
    values: Vec<u8>,
    kinds: Vec<ValueKind>,
    /// (kept object in the chunk, class id, file offset) of objects of
    /// undumped classes.
    undefined: Vec<(u32, u64, u64)>,
    issues: Collector,
}

/// Which objects are kept when an id occurs twice (the first record wins),
/// and their new indices.
struct Keep {
    keep: Vec<bool>,
    new_index: Vec<u32>,
}

pub(super) fn assemble(
    decoded: Vec<Decoded>,
    chunks: &[Chunk],
    raw_roots: &[RawRoot],
    classes: &Classes,
    issues: &mut Collector,
) -> Assembled {
    let first: Vec<usize> = decoded
        .iter()
        .scan(0usize, |acc, d| {
            let s = *acc;
            *acc += d.ids.len();
            Some(s)
        })
        .collect();
    let mut laps = crate::progress::Laps::new("hprof/assemble");
    let mut decoded = decoded;
    let mut ids = par_concat(decoded.iter().map(|d| &d.ids[..]).collect(), 0, |_, x| x);
    decoded.iter_mut().for_each(|d| d.ids = Vec::new());
    laps.lap("ids");
    let wide = WideIdIndex::build(&ids);
    laps.lap("id index");
    let keep = repeated_ids(&wide, &ids, &decoded, chunks, &first, issues);
    let resolved: Vec<Resolved> = decoded
        .into_par_iter()
        .enumerate()
        .map(|(ci, d)| resolve_chunk(d, &ids, first[ci], chunks[ci].start, &wide, keep.as_ref()))
        .collect();
    laps.lap("resolve");
    // Roots resolve through the wide index while it is here; the model's
    // own index is built at its first look-up (the analysis makes none).
    let new_index = |i: u32| keep.as_ref().map_or(i, |k| k.new_index[i as usize]);
    let roots = roots(raw_roots, |id| wide.get(id).map(new_index), issues);
    drop(wide);
    if let Some(k) = &keep {
        let mut i = 0;
        ids.retain(|_| {
            i += 1;
            k.keep[i - 1]
        });
    }
    let mut out = join(resolved, classes, issues, ids);
    laps.lap("join");
    out.roots = roots;
    out
}

/// Counts repeated ids and decides which records are kept.
fn repeated_ids(
    wide: &WideIdIndex,
    ids: &[u64],
    decoded: &[Decoded],
    chunks: &[Chunk],
    first: &[usize],
    issues: &mut Collector,
) -> Option<Keep> {
    if wide.repeated == 0 {
        return None;
    }
    let keep: Vec<bool> = ids
        .par_iter()
        .enumerate()
        .map(|(i, &id)| wide.get(id) == Some(i as u32))
        .collect();
    for (ci, d) in decoded.iter().enumerate() {
        for (j, &at) in d.at.iter().enumerate() {
            let g = first[ci] + j;
            if !keep[g] {
                let offset = (chunks[ci].start + at as usize) as u64;
                issues.push(Kind::Duplicate, offset, || {
                    format!(
                        "object {:x} appears again; the first record is kept",
                        ids[g]
                    )
                });
            }
        }
    }
    let mut next = 0u32;
    let new_index = keep
        .iter()
        .map(|&k| {
            let v = next;
            next += k as u32;
            v
        })
        .collect();
    Some(Keep { keep, new_index })
}

fn resolve_chunk(
    mut d: Decoded,
    ids: &[u64],
    first: usize,
    chunk_start: usize,
    wide: &WideIdIndex,
    keep: Option<&Keep>,
) -> Resolved {
    let n = d.types.len();
    let mut r = Resolved {
        types: Vec::new(),
        sizes: Vec::new(),
        degrees: Vec::with_capacity(n),
        targets: Vec::with_capacity(d.refs.len()),
        labels: Vec::with_capacity(d.labels.len()),
        value_ends: Vec::new(),
        values: Vec::new(),
        kinds: Vec::new(),
        undefined: Vec::new(),
        issues: std::mem::take(&mut d.issues),
    };
    let kept = |j: usize| keep.is_none_or(|k| k.keep[first + j]);
    let mut pos = 0usize;
    for j in 0..n {
        let degree = d.degrees[j] as usize;
        let (refs, labels) = (&d.refs[pos..pos + degree], &d.labels[pos..pos + degree]);
        pos += degree;
        if !kept(j) {
            continue;
        }
        let before = r.targets.len();
        for (k, (&target, &label)) in refs.iter().zip(labels).enumerate() {
            if let Some(&ahead) = d.refs.get(pos - degree + k + 16) {
                wide.prefetch(ahead);
            }
            match wide.get(target) {
                Some(t) => {
                    r.targets.push(keep.map_or(t, |k| k.new_index[t as usize]));
                    r.labels.push(label);
                }
                None => r.issues.push(
                    Kind::Dangling,
                    (chunk_start + d.at[j] as usize) as u64,
                    || {
                        format!(
                            "reference from {:x} to {target:x}, which is not in the dump; dropped",
                            ids[first + j]
                        )
                    },
                ),
            }
        }
        r.degrees.push((r.targets.len() - before) as u32);
    }
    d.refs = Vec::new();
    d.labels = Vec::new();
    let undefined = std::mem::take(&mut d.undefined);
    let at = std::mem::take(&mut d.at);
    let out_index = carry_objects(&mut r, d, keep.map(|k| &k.keep[first..first + n]));
    r.undefined = undefined
        .into_iter()
        .filter_map(|(j, c)| {
            let o = out_index
                .as_ref()
                .map_or(Some(j), |m| Some(m[j as usize]).filter(|&o| o != u32::MAX))?;
            Some((o, c, (chunk_start + at[j as usize] as usize) as u64))
        })
        .collect();
    r
}

/// Moves the per-object arrays into `r`, leaving out objects not kept;
/// with `keep`, each object's new position in the chunk (`u32::MAX`: gone).
fn carry_objects(r: &mut Resolved, d: Decoded, keep: Option<&[bool]>) -> Option<Vec<u32>> {
    let Some(keep) = keep else {
        r.types = d.types;
        r.sizes = d.sizes;
        r.value_ends = d.value_ends;
        r.values = d.values;
        r.kinds = d.kinds;
        return None;
    };
    let mut start = 0u64;
    let mut out_index = vec![u32::MAX; keep.len()];
    for (j, &k) in keep.iter().enumerate() {
        let end = d.value_ends[j];
        if k {
            out_index[j] = r.types.len() as u32;
            r.types.push(d.types[j]);
            r.sizes.push(d.sizes[j]);
            r.values
                .extend_from_slice(&d.values[start as usize..end as usize]);
            r.value_ends.push(r.values.len() as u64);
            r.kinds.push(d.kinds[j]);
        }
        start = end;
    }
    Some(out_index)
}

/// Concatenates the chunks' parts into the model's arrays, in parallel,
/// each array's parts freed once it is built.
fn join(
    mut resolved: Vec<Resolved>,
    classes: &Classes,
    issues: &mut Collector,
    ids: Vec<u64>,
) -> Assembled {
    let mut undefined = Vec::new();
    let mut base_object = 0u32;
    let mut value_base = Vec::with_capacity(resolved.len());
    let mut base_value = 0u64;
    for r in &mut resolved {
        undefined.extend(
            r.undefined
                .iter()
                .map(|&(j, c, at)| (base_object + j, c, at)),
        );
        base_object += r.types.len() as u32;
        value_base.push(base_value);
        base_value += r.values.len() as u64;
        issues.merge(std::mem::take(&mut r.issues));
    }
    macro_rules! gather {
        ($field:ident) => {{
            let out = par_concat(
                resolved.iter().map(|r| &r.$field[..]).collect(),
                0,
                |_, x| x,
            );
            resolved.iter_mut().for_each(|r| r.$field = Vec::new());
            out
        }};
    }
    let mut types = gather!(types);
    let sizes = gather!(sizes);
    let degrees = gather!(degrees);
    let refs = Csr::from_degrees(&degrees, gather!(targets));
    drop(degrees);
    let labels = gather!(labels);
    let bytes = gather!(values);
    let kinds: Vec<ValueKind> = gather!(kinds);
    // Each chunk's value ends, moved past the chunks before it, after the
    // first object's start (0).
    let offsets = par_concat(
        resolved.iter().map(|r| &r.value_ends[..]).collect(),
        1,
        |part, e| value_base[part] + e,
    );
    drop(resolved);
    let type_names = name_types(&mut types, &undefined, classes, issues, &ids);
    Assembled {
        ids,
        types,
        type_names,
        sizes,
        refs,
        labels,
        values: Values::new(offsets, bytes, kinds),
        roots: Vec::new(),
    }
}

/// `lead` zeroes, then the parts one after the other, each element passed
/// through `f(part, element)`; parts are copied in parallel into one
/// allocation.
fn par_concat<T: Copy + Send + Sync + bytemuck::Zeroable>(
    parts: Vec<&[T]>,
    lead: usize,
    f: impl Fn(usize, T) -> T + Sync,
) -> Vec<T> {
    let total: usize = parts.iter().map(|p| p.len()).sum();
    let mut out: Vec<T> = crate::mem::zeroed(lead + total);
    {
        let mut rest = &mut out[lead..];
        let mut slots = Vec::with_capacity(parts.len());
        for p in &parts {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(p.len());
            slots.push(head);
            rest = tail;
        }
        slots
            .into_par_iter()
            .zip(parts.par_iter())
            .enumerate()
            .for_each(|(i, (dst, src))| {
                for (d, &s) in dst.iter_mut().zip(src.iter()) {
                    *d = f(i, s);
                }
            });
    }
    out
}

/// Gives objects of undumped classes a type of their own, then keeps only
/// the type names in use (renumbered in order of first use).
fn name_types(
    types: &mut [u32],
    undefined: &[(u32, u64, u64)],
    classes: &Classes,
    issues: &mut Collector,
    ids: &[u64],
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
                ids[o as usize]
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
    out
}

/// Root records resolved to objects (SPEC §1.1's kind mapping).
fn roots(
    raw: &[RawRoot],
    object_of: impl Fn(u64) -> Option<u32>,
    issues: &mut Collector,
) -> Vec<Root> {
    let mut out = Vec::with_capacity(raw.len());
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
    }
    out
}
