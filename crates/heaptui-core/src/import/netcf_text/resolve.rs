//! Resolving ids: the object ids of all chunks laid end to end and indexed
//! ([`WideIdIndex`]), repeated ids found (the first record wins, the others
//! are dropped and renumbered around), then, per chunk and in parallel,
//! every kept object's type, size and references resolved to dense indices,
//! each chunk writing straight into its own part of the final arrays.
//!
//! The sizes stay in the chunks' 2 bytes an object ([`SIZE_ESCAPE`] and a
//! side table of `index, size` pairs for the large ones), which the model's
//! [`crate::model::Sizes::from_half`] narrows further: 6 bytes an object
//! fewer than `u64`s at the references stage, the import's peak.

use crate::model::Kind;
use rayon::prelude::*;

use super::build::Assembly;
use super::column::Column;
use super::lines::{Chunk, DEGREE_ESCAPE, SIZE_ESCAPE};
use super::sections::{Sections, Types, NO_TYPE};
use crate::mem::scratch::{self, Scratch};
use crate::mem::spill::Spill;
use crate::mem::Array;
use crate::model::{Ids, WideIdIndex, MAX_MESSAGES};
use crate::progress::Cancelled;

/// How many references ahead the resolver prefetches id-index slots.
const PREFETCH_DISTANCE: usize = 16;

/// The chunks' parts laid end to end, copied in parallel (each part is
/// freed as soon as it is copied, and where spilled its copy's pages
/// released).
fn concat<T: bytemuck::Pod + Send + Sync>(
    parts: Vec<Array<T>>,
    spill: Option<&Spill>,
) -> Scratch<T> {
    let total = parts.iter().map(|p| p.len()).sum();
    let mut out: Scratch<T> = Scratch::zeroed(total, spill);
    let slices = out.parts(parts.iter().map(|p| p.len()));
    slices
        .into_par_iter()
        .zip(parts)
        .for_each(|(mut dst, src)| {
            dst.copy_from_slice(&src);
            dst.release();
        });
    out
}

/// Every object record's id, in file order, and what became of it.
pub(super) struct ObjectIds {
    /// One per object record, repeated ones included, in the model's
    /// compact form: the wide ids the index is built from go before the
    /// references are resolved (8 bytes an object beside the index and
    /// the final arrays, the import's peak).
    pub(super) ids: Ids,
    pub(super) wide: WideIdIndex,
    /// Whether each record is the first of its id; `None` when all are.
    pub(super) keep: Option<Vec<bool>>,
    /// The final index of each record (meaningful for kept ones only);
    /// `None` when no record was dropped.
    pub(super) new_index: Option<Vec<u32>>,
}

impl ObjectIds {
    /// Gathers the chunks' ids (taking them), indexes them and finds the
    /// repeated ones, with a message for each of the first.
    pub(super) fn index(
        a: &mut Assembly,
        chunks: &mut [Chunk],
        spill: Option<&Spill>,
    ) -> Result<ObjectIds, Cancelled> {
        let ids = concat(
            chunks
                .iter_mut()
                .map(|c| std::mem::take(&mut c.ids))
                .collect(),
            spill,
        );
        a.progress.set_done(a.file_bytes + a.file_bytes / 4);
        let wide = tracing::debug_span!(target: "heaptui::profile", "id index")
            .in_scope(|| WideIdIndex::build_in(&ids, spill));
        let keep = (wide.repeated != 0).then(|| {
            a.diag.count(Kind::Duplicate, wide.repeated);
            let keep: Vec<bool> = ids
                .par_iter()
                .enumerate()
                .map(|(i, &id)| wide.get(id) == Some(i as u32))
                .collect();
            report_repeated(a, chunks, &ids, &keep);
            keep
        });
        let new_index = keep.as_deref().map(renumber);
        let mut ids = Ids::from(&ids[..]);
        if let Some(s) = spill {
            ids.spill(s);
        }
        a.progress.set_done(a.file_bytes + a.file_bytes * 2 / 4);
        a.progress.check()?;
        Ok(ObjectIds {
            ids,
            wide,
            keep,
            new_index,
        })
    }

    /// Whether raw record `g` is kept.
    #[inline]
    pub(super) fn kept(&self, g: usize) -> bool {
        self.keep.as_ref().is_none_or(|k| k[g])
    }

    /// The final index of the object with this id (the first record of a
    /// repeated id), through the resolving index.
    pub(super) fn index_of(&self, id: u64) -> Option<u32> {
        let record = self.wide.get(id)?;
        Some(
            self.new_index
                .as_ref()
                .map_or(record, |m| m[record as usize]),
        )
    }

    /// The ids of the kept records: the model's ids. The resolving index
    /// goes first (the model's index is built again only if ids are
    /// looked up later).
    pub(super) fn finish(self) -> Ids {
        let ObjectIds {
            ids, wide, keep, ..
        } = self;
        drop(wide);
        match keep {
            None => ids,
            Some(keep) => {
                let kept: Vec<u64> = ids
                    .iter()
                    .zip(keep)
                    .filter_map(|(id, k)| k.then_some(id))
                    .collect();
                Ids::from(&kept[..])
            }
        }
    }
}

/// One message per dropped record, for the first [`MAX_MESSAGES`] of them.
fn report_repeated(a: &mut Assembly, chunks: &[Chunk], ids: &[u64], keep: &[bool]) {
    let mut repeated = 0usize;
    for (ci, c) in chunks.iter().enumerate() {
        for j in 0..c.obj_lines.len() {
            let g = a.first_object[ci] + j;
            if !keep[g] && repeated < MAX_MESSAGES {
                repeated += 1;
                a.diag.note(a.first_line[ci] + c.obj_line(j) as u64, || {
                    format!(
                        "object {:x} appears again; the first record is kept",
                        ids[g]
                    )
                });
            }
        }
    }
}

/// The final index of each raw record when the unkept ones are removed.
fn renumber(keep: &[bool]) -> Vec<u32> {
    let mut next = 0u32;
    keep.iter()
        .map(|&k| {
            let v = next;
            if k {
                next += 1;
            }
            v
        })
        .collect()
}

/// What resolving one chunk found besides the arrays it wrote.
pub(super) struct Resolved {
    /// References written (dangling ones are not).
    pub(super) targets: usize,
    /// `(kept object within the chunk, section, type id)` of objects whose
    /// type id their section never defines.
    pub(super) undefined: Vec<(usize, u32, u64)>,
    pub(super) dangling: u64,
    pub(super) messages: Vec<(u64, String)>,
    /// Kept objects per section.
    pub(super) domain_counts: Vec<u64>,
    /// `index, size` pairs (by index, among all kept objects) of the sizes
    /// of [`SIZE_ESCAPE`] or more, whose slot in the sizes holds
    /// [`SIZE_ESCAPE`].
    big_sizes: Vec<u64>,
}

/// The kept objects' arrays, indexed like the model's objects.
pub(super) struct ObjectArrays {
    pub(super) types: Scratch<u32>,
    /// Sizes below [`SIZE_ESCAPE`], else [`SIZE_ESCAPE`] and the size in
    /// `big_sizes`.
    pub(super) sizes: Scratch<u16>,
    /// `index, size` pairs (by index) of the sizes of [`SIZE_ESCAPE`] or
    /// more.
    pub(super) big_sizes: Vec<u64>,
    pub(super) degrees: Scratch<u32>,
    /// The references' targets, in object order.
    pub(super) targets: Scratch<u32>,
    /// Per chunk: what else it found.
    pub(super) resolved: Vec<Resolved>,
    /// Per chunk: the index of its first kept object.
    pub(super) kept_start: Vec<usize>,
}

/// One chunk's slots in the final arrays.
struct Part<'a> {
    types: scratch::Part<'a, u32>,
    sizes: scratch::Part<'a, u16>,
    degrees: scratch::Part<'a, u32>,
    targets: scratch::Part<'a, u32>,
}

impl Part<'_> {
    /// Drops the written part's pages where it is spilled.
    fn release(&self) {
        self.types.release();
        self.sizes.release();
        self.degrees.release();
        self.targets.release();
    }
}

/// What every chunk's resolver reads.
struct Lookup<'a> {
    objects: &'a ObjectIds,
    sections: &'a Sections,
    types: &'a Types,
    first_object: &'a [usize],
    first_line: &'a [u64],
    /// Per chunk: the index of its first kept object.
    kept_start: &'a [usize],
}

/// Resolves every chunk's objects in parallel (taking their per-object
/// vectors) into the final arrays.
pub(super) fn resolve_objects(
    a: &mut Assembly,
    chunks: &mut [Chunk],
    sections: &Sections,
    types: &Types,
    objects: &ObjectIds,
    spill: Option<&Spill>,
) -> Result<ObjectArrays, Cancelled> {
    let kept_counts: Vec<usize> = chunks
        .iter()
        .enumerate()
        .map(|(ci, c)| match &objects.keep {
            None => c.type_ids.len(),
            Some(k) => k[a.first_object[ci]..a.first_object[ci] + c.type_ids.len()]
                .iter()
                .filter(|&&k| k)
                .count(),
        })
        .collect();
    let kept_total: usize = kept_counts.iter().sum();
    let kept_start = starts(&kept_counts);
    let reserved: Vec<usize> = chunks.iter().map(|c| c.refs.len()).collect();
    let refs_total: usize = reserved.iter().sum();
    let mut out = ObjectArrays {
        types: Scratch::zeroed(kept_total, spill),
        sizes: Scratch::zeroed(kept_total, spill),
        big_sizes: Vec::new(),
        degrees: Scratch::zeroed(kept_total, spill),
        targets: Scratch::zeroed(refs_total, spill),
        resolved: Vec::new(),
        kept_start: kept_start.clone(),
    };
    let lookup = Lookup {
        objects,
        sections,
        types,
        first_object: &a.first_object,
        first_line: &a.first_line,
        kept_start: &kept_start,
    };
    out.resolved = {
        let parts = split_all(&mut out, &kept_counts, &reserved, kept_total, refs_total);
        chunks
            .par_iter_mut()
            .zip(parts)
            .enumerate()
            .map(|(ci, (c, part))| lookup.resolve_chunk(ci, c, part))
            .collect()
    };
    close_gaps(&mut out.targets, &reserved, &out.resolved);
    out.big_sizes = out
        .resolved
        .iter_mut()
        .flat_map(|r| std::mem::take(&mut r.big_sizes))
        .collect();
    a.progress.set_done(a.file_bytes + a.file_bytes * 3 / 4);
    a.progress.check()?;
    Ok(out)
}

/// The running sums before each count.
fn starts(counts: &[usize]) -> Vec<usize> {
    counts
        .iter()
        .scan(0, |acc, &n| {
            let start = *acc;
            *acc += n;
            Some(start)
        })
        .collect()
}

/// Each chunk's part of the four arrays.
fn split_all<'a>(
    out: &'a mut ObjectArrays,
    kept_counts: &[usize],
    reserved: &[usize],
    kept_total: usize,
    refs_total: usize,
) -> Vec<Part<'a>> {
    debug_assert_eq!(out.types.len(), kept_total);
    debug_assert_eq!(out.targets.len(), refs_total);
    let types = out.types.parts(kept_counts.iter().copied());
    let sizes = out.sizes.parts(kept_counts.iter().copied());
    let degrees = out.degrees.parts(kept_counts.iter().copied());
    let targets = out.targets.parts(reserved.iter().copied());
    types
        .into_iter()
        .zip(sizes)
        .zip(degrees)
        .zip(targets)
        .map(|(((types, sizes), degrees), targets)| Part {
            types,
            sizes,
            degrees,
            targets,
        })
        .collect()
}

/// Chunks with dangling references or repeated objects used less than
/// their part of `targets`: closes the gaps (rare, sequential) and cuts
/// the unused tail.
fn close_gaps(targets: &mut Scratch<u32>, reserved: &[usize], resolved: &[Resolved]) {
    let mut used = 0usize;
    let mut start = 0usize;
    for (&reserved, r) in reserved.iter().zip(resolved) {
        if used != start {
            targets.copy_within(start..start + r.targets, used);
        }
        used += r.targets;
        start += reserved;
    }
    targets.truncate(used);
}

impl Lookup<'_> {
    /// Resolves chunk `ci`'s kept objects into `part`, then frees the
    /// chunk's per-object vectors.
    fn resolve_chunk(&self, ci: usize, c: &mut Chunk, mut part: Part) -> Resolved {
        let base = self.first_object[ci];
        let sections = self.sections.of_chunk(ci);
        let mut r = Resolved {
            targets: 0,
            undefined: Vec::new(),
            dangling: 0,
            messages: Vec::new(),
            domain_counts: vec![0; self.types.tables.len()],
            big_sizes: Vec::new(),
        };
        let mut ref_pos = 0usize;
        let mut run = 0usize;
        let mut out = 0usize;
        let mut big = c.big_sizes.chunks_exact(2);
        let mut big_degrees = c.big_degrees.chunks_exact(2);
        for j in 0..c.type_ids.len() {
            while run + 1 < c.obj_markers.len() && c.obj_markers[run + 1].0 as usize <= j {
                run += 1;
            }
            let degree = match c.degrees[j] {
                DEGREE_ESCAPE => {
                    let pair = big_degrees.next();
                    debug_assert_eq!(pair.map(|p| p[0]), Some(j as u32));
                    pair.map_or(0, |p| p[1] as usize)
                }
                d => d as usize,
            };
            let refs_at = ref_pos;
            ref_pos += degree;
            let size = match c.sizes[j] {
                SIZE_ESCAPE => {
                    let pair = big.next();
                    debug_assert_eq!(pair.map(|p| p[0]), Some(j as u64));
                    Some(pair.map_or(0, |p| p[1]))
                }
                _ => None,
            };
            if !self.objects.kept(base + j) {
                continue;
            }
            let section = sections[c.obj_markers[run].1 as usize];
            r.domain_counts[section as usize] += 1;
            let type_id = c.type_ids.get(j);
            let ty = match self.types.tables[section as usize].get(type_id) {
                Some(t) => t,
                None => {
                    r.undefined.push((out, section, type_id));
                    NO_TYPE
                }
            };
            part.types[out] = ty;
            part.sizes[out] = match size {
                Some(big) if big >= SIZE_ESCAPE as u64 => {
                    r.big_sizes
                        .extend([(self.kept_start[ci] + out) as u64, big]);
                    SIZE_ESCAPE
                }
                Some(small) => small as u16,
                None => c.sizes[j],
            };
            let before = r.targets;
            self.resolve_references(
                ci,
                c,
                j,
                refs_at..refs_at + degree,
                &mut part.targets,
                &mut r,
            );
            part.degrees[out] = (r.targets - before) as u32;
            out += 1;
        }
        debug_assert_eq!(out, part.types.len());
        part.release();
        c.refs = Column::default();
        c.type_ids = Column::default();
        c.sizes = Array::default();
        c.big_sizes = Array::default();
        c.degrees = Array::default();
        c.big_degrees = Array::default();
        r
    }

    /// Resolves the references of chunk `ci`'s object `j`, at `at` in the
    /// chunk's references: found ones are written to `targets`, dangling
    /// ones counted.
    #[inline(always)]
    fn resolve_references(
        &self,
        ci: usize,
        c: &Chunk,
        j: usize,
        at: std::ops::Range<usize>,
        targets: &mut [u32],
        r: &mut Resolved,
    ) {
        let wide = &self.objects.wide;
        let new_index = self.objects.new_index.as_deref();
        let refs = &c.refs;
        for k in at {
            // Look-ups miss the cache; ask for a later one's slot now so
            // several misses are in flight at once.
            if k + PREFETCH_DISTANCE < refs.len() {
                wide.prefetch(refs.get(k + PREFETCH_DISTANCE));
            }
            let target = refs.get(k);
            match wide.get(target) {
                Some(t) => {
                    targets[r.targets] = match new_index {
                        Some(m) => m[t as usize],
                        None => t,
                    };
                    r.targets += 1;
                }
                None => {
                    r.dangling += 1;
                    if r.messages.len() < MAX_MESSAGES {
                        r.messages.push(self.dangling_message(ci, c, j, target));
                    }
                }
            }
        }
    }

    #[cold]
    fn dangling_message(&self, ci: usize, c: &Chunk, j: usize, target: u64) -> (u64, String) {
        (
            self.first_line[ci] + c.obj_line(j) as u64,
            format!(
                "reference from {:x} to {target:x}, which is not in the dump; dropped",
                self.objects.ids.get(self.first_object[ci] + j)
            ),
        )
    }
}
