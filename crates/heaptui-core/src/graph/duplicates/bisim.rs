//! Candidate classes for duplicate detection: the coarsest partition of the
//! reachable objects in which members of a block have the same label (type,
//! shallow size, reference count, and where the dump has them the value
//! class of `values`) and their i-th references lie in the same
//! block (ordered bisimulation). Duplicates are always in one block, but a
//! block may hold non-duplicates (sharing and aliasing are invisible to
//! bisimulation), so blocks are only candidates that `verify` splits exactly.
//!
//! It starts from the label blocks split by three rounds of parallel hashing
//! (cheap, and equal for duplicates), then refines exactly on a dirty list:
//! only objects one of whose references changed block are re-evaluated, and
//! the part of a block that did not change keeps its id, so a long chain
//! costs one small round per link rather than a pass over the heap per link.

use crate::mem::RankedBits;
use crate::model::IntBuild;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use super::view::View;
use crate::graph::ParentsAside;
use crate::progress::{Cancelled, Progress};

/// Block of an unreachable object.
pub const NO_BLOCK: u32 = u32::MAX;

/// Rounds smaller than this run sequentially (rayon overhead dominates).
const PARALLEL_MIN: usize = 1 << 14;

/// Per reachable object its block; [`NO_BLOCK`] for unreachable objects.
/// `block_size` holds the sizes of the blocks `0..block_size.len()`; an id
/// past them (and not `NO_BLOCK`) is a block of one object ([`Singles`]).
pub struct Partition {
    pub block: Vec<u32>,
    pub block_size: Vec<u32>,
}

/// The initial blocks: one per label among reachable objects. Labels are
/// few, so each thread collects its own set, then ids are looked up in
/// parallel.
fn label_blocks(graph: &View, dom: ParentsAside<'_>) -> Partition {
    let dump = &graph.dump;
    // With values and labels in the dump, they are part of the label, and
    // labels are many: blocks come from a sort instead (see `values`).
    if let Some(block) = super::values::label_blocks(graph, dom) {
        return Partition {
            block,
            block_size: Vec::new(),
        };
    }
    let label = |o: u32| {
        let i = o as usize;
        (
            dump.types.get(i).raw(),
            dump.sizes.get(i),
            graph.refs_raw(o).len() as u32,
        )
    };
    type Labels = HashMap<(u32, u64, u32), u32, IntBuild>;
    let found: Labels = (0..graph.objects() as u32)
        .into_par_iter()
        .filter(|&o| dom.is_reachable(o))
        .fold(Labels::default, |mut m, o| {
            m.insert(label(o), 0);
            m
        })
        .reduce(Labels::default, |mut a, b| {
            a.extend(b);
            a
        });
    let mut sorted: Vec<(u32, u64, u32)> = found.into_keys().collect();
    sorted.sort_unstable();
    let ids: Labels = sorted
        .iter()
        .enumerate()
        .map(|(i, &l)| (l, i as u32))
        .collect();
    let block: Vec<u32> = (0..graph.objects() as u32)
        .into_par_iter()
        .map(|o| {
            if dom.is_reachable(o) {
                ids[&label(o)]
            } else {
                NO_BLOCK
            }
        })
        .collect();
    // Sizes are recounted by `hashed_blocks`.
    Partition {
        block,
        block_size: Vec::new(),
    }
}

/// Rounds of [`hashed_blocks`].
const HASH_ROUNDS: usize = 3;

/// How many objects ahead a hashing round fetches references' hashes.
const HASH_PREFETCH: u32 = 8;

/// Refines the label blocks by a few rounds of hashing (an object's hash
/// mixes its own and its references' previous hashes): each round is one
/// parallel pass with no sorting, and the hash is the same for duplicates,
/// so grouping by it never separates them. The exact refinement then starts
/// from blocks that already tell apart most objects that differ within a
/// few references.
fn hashed_blocks(graph: &View, label: Partition) -> Partition {
    let mut block = label.block;
    let labels = block
        .par_iter()
        .filter(|&&b| b != NO_BLOCK)
        .max()
        .map_or(0, |&b| b as usize + 1);
    let shared = shared_labels(graph, &block, labels);
    // The rounds hold two hashes a moving object beside the blocks: with
    // fewer labels than 2^24 the blocks wait in one, two or three bytes
    // an object meanwhile.
    let rounds = if labels < narrow_none(1) as usize {
        narrowed::<1>(graph, &mut block, &shared)
    } else if labels < narrow_none(2) as usize {
        narrowed::<2>(graph, &mut block, &shared)
    } else if labels < narrow_none(3) as usize {
        narrowed::<3>(graph, &mut block, &shared)
    } else {
        hashes(graph, &block, |b| b, &shared)
    };
    regroup_all(graph, block, labels, RankedBits::new(shared), rounds)
}

/// The labels whose block holds two reachable non-leaves or more, as bits.
/// Only their non-leaves move in the hashing rounds: a non-leaf alone in
/// its label block is apart from every other object already, and its first
/// hash (made from its label) tells its retainers apart as well as any
/// later one would. On the 406 MB HPROF 2.0 M of the 4.76 M non-leaves are
/// alone in theirs, so the rounds' two hashes shrink by as much.
fn shared_labels(graph: &View, block: &[u32], labels: usize) -> Vec<u64> {
    let mut seen = vec![0u64; labels.div_ceil(64)];
    let mut shared = vec![0u64; labels.div_ceil(64)];
    {
        let (seen, twice) = (
            crate::mem::as_atomic_u64(&mut seen),
            crate::mem::as_atomic_u64(&mut shared),
        );
        block.par_iter().enumerate().for_each(|(o, &b)| {
            if b != NO_BLOCK && !graph.refs_raw(o as u32).is_empty() {
                let (w, bit) = (b as usize / 64, 1u64 << (b % 64));
                if seen[w].fetch_or(bit, Ordering::Relaxed) & bit != 0 {
                    twice[w].fetch_or(bit, Ordering::Relaxed);
                }
            }
        });
    }
    shared
}

/// [`hashes`] over the label blocks held in `K` bytes an object (`K` < 4),
/// [`narrow_none`] for objects in no block: narrowed in place in `block`'s
/// own allocation, its tail's pages handed back while the rounds run, and
/// widened back in place. Shrinking and growing the vector instead copied
/// it on growing (the narrow and wide blocks resident at once: 28 MiB
/// above the rounds on the 406 MB HPROF, the terminal UI's peak).
fn narrowed<const K: usize>(
    graph: &View,
    block: &mut [u32],
    shared: &[u64],
) -> (RankedBits, Vec<u32>)
where
    [u8; K]: bytemuck::Pod,
{
    let n = block.len();
    let none = narrow_none(K);
    let bytes: &mut [u8] = bytemuck::cast_slice_mut(block);
    for o in 0..n {
        let b = u32::from_le_bytes(bytes[4 * o..4 * o + 4].try_into().expect("4 bytes"));
        let b = if b == NO_BLOCK { none } else { b };
        bytes[K * o..K * (o + 1)].copy_from_slice(&b.to_le_bytes()[..K]);
    }
    crate::mem::release_tail(block, K * n);
    let small: &[[u8; K]] = bytemuck::cast_slice(&bytemuck::cast_slice::<u32, u8>(block)[..K * n]);
    let rounds = hashes(graph, small, widen::<K>, shared);
    // From the last object back: object `o`'s four bytes lie at or past
    // every narrow object's after it, and before none of those before it.
    let bytes: &mut [u8] = bytemuck::cast_slice_mut(block);
    for o in (0..n).rev() {
        let b = widen::<K>(bytes[K * o..K * (o + 1)].try_into().expect("K bytes"));
        bytes[4 * o..4 * o + 4].copy_from_slice(&b.to_le_bytes());
    }
    rounds
}

/// Regroups the non-leaves of the label blocks by their hash (`h`, by
/// rank among the `moving` objects): each group of equal hashes in one
/// label block a block (a label fixes the reference count, so a label
/// block is all leaves or none), and the leaves of a label one block.
/// Blocks of one object take no size (see [`Singles`]); the others are
/// numbered densely, the non-leaves' groups first.
fn regroup_all(
    graph: &View,
    mut block: Vec<u32>,
    labels: usize,
    shared: RankedBits,
    (moving, h): (RankedBits, Vec<u32>),
) -> Partition {
    let mut singles = Singles::new(block.len(), labels);
    let mut block_size = Vec::new();
    let offset = counts_by_label(
        graph,
        &mut block,
        labels,
        &shared,
        &mut singles,
        &mut block_size,
    );
    let kept = shared.ones();
    if tracing::enabled!(target: "heaptui::memory", tracing::Level::DEBUG) {
        let reachable = block.iter().filter(|&&b| b != NO_BLOCK).count();
        tracing::debug!(target: "heaptui::memory",
            "duplicates: hashed blocks: {} objects, {reachable} reachable, {} non-leaves in {kept} label blocks of two or more, {labels} labels",
            block.len(), offset[kept]);
    }
    // A few pieces of whole label blocks, each with its (hash, object)
    // pairs only: 8 bytes a non-leaf at once would be the stage's peak. A
    // label block larger than a piece is regrouped in parts by hash (a
    // group of equal hashes never split): on the 406 MB HPROF one label
    // holds 1.9 M of the 2.76 M objects that move, whose pairs (15 MiB)
    // set the terminal UI's peak.
    let total = offset[kept] as usize;
    let target = (total / HASH_PIECES).max(1 << 16);
    let count = |from: usize, to: usize| (offset[to] - offset[from]) as usize;
    let mut from = 0;
    while from < kept {
        let mut to = from + 1;
        while to < kept && count(from, to + 1) <= target {
            to += 1;
        }
        let parts = count(from, to).div_ceil(target).max(1) as u64;
        for part in 0..parts {
            let piece = Piece {
                shared: (&shared, from, to),
                hashes: ((part << 32) / parts, ((part + 1) << 32) / parts),
                // Past every label id while pieces remain.
                first: labels + block_size.len(),
            };
            regroup(
                &mut block,
                (&moving, &h),
                piece,
                &mut block_size,
                &mut singles,
            );
        }
        from = to;
    }
    drop((moving, h, offset));
    let block_size = settle(&mut block, labels, block_size, &mut singles);
    Partition { block, block_size }
}

/// Ids of blocks of one object: such a block never splits nor becomes a
/// candidate, and most hashed blocks are single objects (half the objects
/// or more on large heaps), so they take no size in the partition's
/// `block_size`: their ids count down from below [`NO_BLOCK`], past every
/// dense id (a block id `b` with `b >= block_size.len()` is a single
/// object's). Off where the ids might meet (some 2^31 objects).
struct Singles {
    /// The next single's id.
    next: u32,
    on: bool,
}

impl Singles {
    fn new(objects: usize, labels: usize) -> Singles {
        Singles {
            next: NO_BLOCK - 1,
            // Dense ids stay below labels + objects.
            on: (labels as u64 + objects as u64) < (NO_BLOCK - 1) as u64,
        }
    }

    /// Whether a block of `len` objects takes a single's id.
    fn takes(&self, len: usize) -> bool {
        self.on && len == 1
    }

    /// The next `count` ids, from the highest.
    fn take(&mut self, count: usize) -> u32 {
        let top = self.next;
        self.next -= count as u32;
        top
    }
}

/// After the regrouping: the non-leaves' groups (ids from `labels` on)
/// become the dense ids `0..`, each label's leaves the block after them
/// (or a single's), in two passes over the objects (count, then renumber;
/// counted here, once the pairs' offsets are gone, where they were 4 bytes
/// a label at the regrouping's peak). Returns the sizes of the dense
/// blocks.
fn settle(
    block: &mut [u32],
    labels: usize,
    mut block_size: Vec<u32>,
    singles: &mut Singles,
) -> Vec<u32> {
    // Only leaves still hold a label id.
    let mut leaves: Vec<u32> = vec![0; labels];
    for &b in block.iter() {
        if (b as usize) < labels {
            leaves[b as usize] += 1;
        }
    }
    let labels = labels as u32;
    let groups = block_size.len() as u32;
    let dense = leaves
        .iter()
        .filter(|&&c| c > 0 && !singles.takes(c as usize))
        .count();
    block_size.reserve_exact(dense);
    // Each label's count becomes its leaves' block.
    for c in &mut leaves {
        if *c == 0 {
            continue;
        }
        if singles.takes(*c as usize) {
            *c = singles.take(1);
        } else {
            block_size.push(*c);
            *c = (block_size.len() - 1) as u32;
        }
    }
    block.par_iter_mut().for_each(|b| {
        if *b < labels {
            *b = leaves[*b as usize];
        } else if *b < labels + groups {
            *b -= labels;
        }
    });
    block_size
}

/// [`NO_BLOCK`] among label blocks held in `k` bytes (`k` < 4): their
/// highest value.
const fn narrow_none(k: usize) -> u32 {
    (1 << (8 * k)) - 1
}

/// A label block held in `K` bytes, as the block id.
#[inline]
fn widen<const K: usize>(b: [u8; K]) -> u32 {
    let mut w = [0u8; 4];
    w[..K].copy_from_slice(&b);
    match u32::from_le_bytes(w) {
        b if b == narrow_none(K) => NO_BLOCK,
        b => b,
    }
}

/// Pieces [`hashed_blocks`] regroups the non-leaves in, of about equal
/// numbers of them.
const HASH_PIECES: usize = 8;

/// What [`regroup`] takes of the labels: the objects of the label blocks
/// of two or more ranked `from..to` among them (`shared`) whose hashes lie
/// in `hashes` (`lo..hi`, `hi` at most 2^32), and the first id the piece
/// gives.
struct Piece<'a> {
    shared: (&'a RankedBits, usize, usize),
    hashes: (u64, u64),
    first: usize,
}

/// The non-leaves of a piece's label blocks regrouped by hash: each group
/// of equal hashes a block, of a single's id (`singles`) or numbered from
/// `first` in (block, hash) order with its size appended to `block_size`.
/// Objects given a new block are past every label id, so later pieces do
/// not take them.
fn regroup(
    block: &mut [u32],
    (moving, h): (&RankedBits, &[u32]),
    piece: Piece,
    block_size: &mut Vec<u32>,
    singles: &mut Singles,
) {
    let Piece {
        shared: (shared, from, to),
        hashes: (lo, hi),
        first,
    } = piece;
    // An object still holding a label id of a block of two or more (a
    // label's objects are all leaves or none: one of the moving objects),
    // and its hash in range: its label block's place in the piece, and the
    // hash.
    let taken = |o: usize, bo: u32| -> Option<(usize, u32)> {
        let r = shared.rank(bo).filter(|r| (from..to).contains(r))?;
        let hash = h[moving.rank(o as u32)?];
        (lo..hi)
            .contains(&u64::from(hash))
            .then_some((r - from, hash))
    };
    // A counting sort by label block: counts, offsets, then the pairs.
    let mut offset: Vec<u32> = vec![0; to - from + 1];
    for (o, &bo) in block.iter().enumerate() {
        if let Some((r, _)) = taken(o, bo) {
            offset[r + 1] += 1;
        }
    }
    for r in 0..to - from {
        offset[r + 1] += offset[r];
    }
    let mut pairs: Vec<(u32, u32)> = crate::mem::zeroed(offset[to - from] as usize);
    let mut cursor: Vec<u32> = offset[..to - from].to_vec();
    for (o, &bo) in block.iter().enumerate() {
        if let Some((r, hash)) = taken(o, bo) {
            pairs[cursor[r] as usize] = (hash, o as u32);
            cursor[r] += 1;
        }
    }
    crate::mem::arrays_alive(
        "duplicates: regroup",
        &[
            ("block", std::mem::size_of_val(block)),
            ("hashes", std::mem::size_of_val(h) + moving.heap_bytes()),
            ("pairs", bytes(&pairs)),
            ("cursor", bytes(&cursor)),
            ("block_size", bytes(block_size)),
        ],
    );
    drop(cursor);
    number_groups(&mut pairs, &offset, block, first, block_size, singles);
}

/// Objects a part of a hashing round takes at once.
const HASH_RANGE: usize = 1 << 16;

/// [`HASH_ROUNDS`] rounds of hashing from the label blocks (`block`, each
/// made a block id by `id`), each one parallel pass. Only the reachable
/// non-leaves (`moving`, returned) change: theirs are the hashes kept, by
/// rank; every other object's hash is its first one, made from its label
/// block whenever it is read. Two hashes a moving object, where two an
/// object took up to twice as much.
fn hashes<B: Copy + Send + Sync>(
    graph: &View,
    block: &[B],
    id: impl Fn(B) -> u32 + Sync + Send,
    shared: &[u64],
) -> (RankedBits, Vec<u32>) {
    let n = block.len();
    let seed = |b: B| {
        (id(b) as u64)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(29) as u32
    };
    let moving = |o: usize| {
        let b = id(block[o]);
        b != NO_BLOCK
            && shared[b as usize / 64] >> (b % 64) & 1 != 0
            && !graph.refs_raw(o as u32).is_empty()
    };
    let mut bits = vec![0u64; n.div_ceil(64)];
    bits.par_iter_mut().enumerate().for_each(|(w, word)| {
        for o in w * 64..((w + 1) * 64).min(n) {
            if moving(o) {
                *word |= 1 << (o % 64);
            }
        }
    });
    let ranked = RankedBits::new(bits);
    let mut h: Vec<u32> = super::gather(n, moving, |o| seed(block[o]));
    // Two buffers, swapped each round (no fresh pages per round).
    let mut next: Vec<u32> = crate::mem::zeroed(h.len());
    let ranges = n.div_ceil(HASH_RANGE);
    for _ in 0..HASH_ROUNDS {
        let prev = &h[..];
        let value = |c: u32| match ranked.rank(c) {
            Some(r) => prev[r],
            None => seed(block[c as usize]),
        };
        let lens = (0..ranges).map(|r| {
            let end = ((r + 1) * HASH_RANGE).min(n) as u32;
            ranked.ones_before(end) - ranked.ones_before((r * HASH_RANGE) as u32)
        });
        let parts = crate::mem::split_by(&mut next, lens);
        parts.into_par_iter().enumerate().for_each(|(r, part)| {
            let end = ((r + 1) * HASH_RANGE).min(n);
            let mut slots = part.iter_mut();
            for o in r * HASH_RANGE..end {
                // The previous hashes of a later object's references miss
                // the cache: ask for them now.
                let ahead = o + HASH_PREFETCH as usize;
                if ahead < n {
                    for c in graph.refs_raw(ahead as u32) {
                        match ranked.rank(c) {
                            Some(r) => crate::mem::prefetch(&prev[r]),
                            None => crate::mem::prefetch(&block[c as usize]),
                        }
                    }
                }
                let Some(r) = ranked.rank(o as u32) else {
                    continue;
                };
                let mut x = prev[r] as u64 | 1 << 40;
                for c in graph.refs_raw(o as u32) {
                    x = (x ^ value(c) as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                    x ^= x >> 29;
                }
                *slots.next().unwrap() = (x >> 32) as u32;
            }
        });
        std::mem::swap(&mut h, &mut next);
    }
    crate::mem::arrays_alive(
        "duplicates: hash rounds",
        &[
            ("labels", std::mem::size_of_val(block)),
            ("hashes", bytes(&h) + ranked.heap_bytes()),
            ("next", bytes(&next)),
        ],
    );
    (ranked, h)
}

/// The bytes of a vector's allocation, for the memory account.
fn bytes<T>(v: &Vec<T>) -> usize {
    v.capacity() * std::mem::size_of::<T>()
}

/// One pass: the non-leaves per label block of two or more (by rank among
/// `shared`), as offsets of a counting sort (those non-leaves as (hash,
/// object) pairs grouped by label block, which sorting each block's part by
/// hash puts in (block, hash, object) order). A non-leaf alone in its label
/// block takes its block here: a single's id, or the next dense one where
/// singles are off. Offsets for those labels only: on the 406 MB HPROF 4.0
/// M labels took 16 MiB of offsets, at the regrouping's peak.
fn counts_by_label(
    graph: &View,
    block: &mut [u32],
    labels: usize,
    shared: &RankedBits,
    singles: &mut Singles,
    block_size: &mut Vec<u32>,
) -> Vec<u32> {
    let mut offset: Vec<u32> = vec![0; shared.ones() + 1];
    for (o, b) in block.iter_mut().enumerate() {
        if *b as usize >= labels || graph.refs_raw(o as u32).is_empty() {
            continue;
        }
        match shared.rank(*b) {
            Some(r) => offset[r + 1] += 1,
            None if singles.takes(1) => *b = singles.take(1),
            None => {
                block_size.push(1);
                *b = (labels + block_size.len() - 1) as u32;
            }
        }
    }
    for r in 0..offset.len() - 1 {
        offset[r + 1] += offset[r];
    }
    offset
}

/// Sorts each label block's part of `pairs` (where `offset` says, from
/// `offset[0]`) by hash and makes each group of equal hashes a block: a
/// single object's id from `singles`, or ids from `first` in (block, hash)
/// order with sizes appended to `block_size`; set in `block` for the
/// group's objects. Two parallel passes over jobs of whole label blocks
/// (sort and count the groups, then number them), with no list of where
/// groups start: 8 bytes a group beside the pairs were the stage's peak.
fn number_groups(
    pairs: &mut [(u32, u32)],
    offset: &[u32],
    block: &mut [u32],
    first: usize,
    block_size: &mut Vec<u32>,
    singles: &mut Singles,
) {
    let labels = offset.len() - 1;
    let total = pairs.len();
    let target = (total / (8 * rayon::current_num_threads())).max(1 << 14);
    // (a part of `pairs`, its first label block, the block after its last)
    type Job<'a> = (&'a mut [(u32, u32)], usize, usize);
    let mut jobs: Vec<Job> = Vec::new();
    {
        let mut rest = pairs;
        let mut b = 0;
        while b < labels {
            let mut e = b + 1;
            while e < labels && ((offset[e + 1] - offset[b]) as usize) < target {
                e += 1;
            }
            let len = (offset[e] - offset[b]) as usize;
            let (part, tail) = std::mem::take(&mut rest).split_at_mut(len);
            rest = tail;
            jobs.push((part, b, e));
            b = e;
        }
    }
    // A job's part of the pairs, one label block at a time.
    let segments = |from: usize, to: usize| {
        let base = offset[from];
        (from..to).map(move |b| (offset[b] - base) as usize..(offset[b + 1] - base) as usize)
    };
    let one = &*singles;
    // Per job: its groups of two or more, and its single objects.
    let counts: Vec<(usize, usize)> = jobs
        .par_iter_mut()
        .map(|(part, from, to)| {
            let (mut groups, mut single) = (0, 0);
            for r in segments(*from, *to) {
                let seg = &mut part[r];
                if seg.len() >= 1 << 16 {
                    seg.par_sort_unstable();
                } else {
                    seg.sort_unstable();
                }
                for g in seg.chunk_by(|x, y| x.0 == y.0) {
                    if one.takes(g.len()) {
                        single += 1;
                    } else {
                        groups += 1;
                    }
                }
            }
            (groups, single)
        })
        .collect();
    let old = block_size.len();
    block_size.resize(old + counts.iter().map(|c| c.0).sum::<usize>(), 0);
    // Per job: its sizes, its first id, its first single's id.
    let mut ids: Vec<(&mut [u32], u32, u32)> = Vec::with_capacity(jobs.len());
    {
        let (mut rest, mut id) = (&mut block_size[old..], first as u32);
        for &(g, single) in &counts {
            let (mine, tail) = std::mem::take(&mut rest).split_at_mut(g);
            rest = tail;
            ids.push((mine, id, singles.take(single)));
            id += g as u32;
        }
    }
    let (out, one) = (crate::mem::as_atomic(block), &*singles);
    jobs.into_par_iter()
        .zip(ids)
        .for_each(|((part, from, to), (sizes, id, mut single))| {
            let mut g = 0;
            for r in segments(from, to) {
                for group in part[r].chunk_by(|x, y| x.0 == y.0) {
                    let b = if one.takes(group.len()) {
                        single -= 1;
                        single + 1
                    } else {
                        sizes[g] = group.len() as u32;
                        g += 1;
                        id + g as u32 - 1
                    };
                    for &(_, o) in group {
                        out[o as usize].store(b, Ordering::Relaxed);
                    }
                }
            }
        });
}

/// Mixes the blocks of an object's references, in order.
#[inline]
fn signature(graph: &View, block: &[u32], o: u32) -> u64 {
    let mut h: u64 = 0x2545_f491_4f6c_dd1d;
    for c in graph.refs_raw(o) {
        h = (h ^ block[c as usize] as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        h ^= h >> 31;
    }
    h
}

/// Pieces the first refinement round is cut into (by block id, of about
/// equal numbers of objects).
const FIRST_ROUND_PIECES: usize = 8;

/// Splits the blocks of `keyed` (sorted (block, signature, object) keys)
/// by signature: each group but one gets a new block id, in key order, and
/// its objects are listed in `moves` with it. The part of a block that was
/// not evaluated keeps the id; when all of the block was, its largest
/// group keeps it.
fn split_blocks(keyed: &[(u32, u64, u32)], block_size: &mut Vec<u32>, moves: &mut Vec<(u32, u32)>) {
    for seg in keyed.chunk_by(|a, b| a.0 == b.0) {
        let b = seg[0].0;
        let rest = block_size[b as usize] as usize - seg.len();
        let groups: Vec<&[(u32, u64, u32)]> = seg.chunk_by(|x, y| x.1 == y.1).collect();
        if rest == 0 && groups.len() == 1 {
            continue;
        }
        let keep = if rest > 0 {
            usize::MAX
        } else {
            (0..groups.len()).max_by_key(|&g| groups[g].len()).unwrap()
        };
        for (gi, g) in groups.iter().enumerate() {
            if gi == keep {
                continue;
            }
            let id = block_size.len() as u32;
            block_size.push(g.len() as u32);
            block_size[b as usize] -= g.len() as u32;
            moves.extend(g.iter().map(|&(_, _, o)| (o, id)));
        }
    }
}

/// Refines the label partition until it is stable.
pub fn refine(
    graph: &View,
    dom: ParentsAside<'_>,
    progress: &Progress,
) -> Result<Partition, Cancelled> {
    let clock = Clock {
        trace: tracing::enabled!(target: "heaptui::duplicates", tracing::Level::TRACE),
        t0: std::time::Instant::now(),
    };
    let mut partition = initial_blocks(graph, dom, clock);
    progress.check()?;
    let (rounds, evaluated) = refine_rounds(graph, &mut partition, progress, clock)?;
    crate::work::add(evaluated);
    if clock.trace {
        tracing::debug!(target: "heaptui::duplicates",
            "refine: {rounds} rounds, {evaluated} evaluations, {} blocks at {} ms",
            partition.block_size.len(),
            clock.t0.elapsed().as_millis()
        );
    }
    Ok(partition)
}

/// Whether [`refine`] traces its rounds (`HEAPTUI_TRACE`), and since when.
#[derive(Clone, Copy)]
struct Clock {
    trace: bool,
    t0: std::time::Instant,
}

/// The partition refinement starts from: the label blocks, split by the
/// hash of each object's references.
fn initial_blocks(graph: &View, dom: ParentsAside<'_>, clock: Clock) -> Partition {
    let labels = label_blocks(graph, dom);
    crate::mem::checkpoint("duplicates: label blocks");
    if clock.trace {
        tracing::debug!(target: "heaptui::duplicates", "refine: labels at {} ms", clock.t0.elapsed().as_millis());
    }
    let partition = hashed_blocks(graph, labels);
    crate::mem::checkpoint("duplicates: hashed blocks");
    if clock.trace {
        tracing::debug!(target: "heaptui::duplicates",
            "refine: {} hashed blocks at {} ms",
            partition.block_size.len(),
            clock.t0.elapsed().as_millis()
        );
    }
    partition
}

/// The rounds of refinement until no block splits: the first evaluates
/// every object that can split, each later one only the retainers of the
/// objects the round before moved. Returns the rounds and evaluations.
fn refine_rounds(
    graph: &View,
    Partition { block, block_size }: &mut Partition,
    progress: &Progress,
    clock: Clock,
) -> Result<(u64, u64), Cancelled> {
    // Objects in singleton blocks can never split, nor can leaves (their
    // signature is empty): never evaluate them.
    // A bit an object: a byte each was 10 MiB at the first round's peak
    // on a 10 M-object heap.
    let queued: Vec<AtomicU64> = (0..graph.objects().div_ceil(64))
        .into_par_iter()
        .map(|_| AtomicU64::new(0))
        .collect();
    let mut dirty: Vec<u32> = Vec::new();
    let mut keyed: Vec<(u32, u64, u32)> = Vec::new();
    // (object, its new block), applied when the round ends.
    let mut moves: Vec<(u32, u32)> = Vec::new();
    let mut rounds = 0u64;
    let mut evaluated = 0u64;
    loop {
        rounds += 1;
        for &o in &dirty {
            queued[o as usize / 64].fetch_and(!(1 << (o % 64)), Ordering::Relaxed);
        }
        moves.clear();
        if rounds == 1 {
            let partition = (&block[..], &mut *block_size);
            evaluated += first_round(graph, partition, &mut moves, progress, clock.t0)?;
            crate::mem::checkpoint("duplicates: first round");
        } else {
            let evaluating = keyed.len();
            evaluated += evaluating as u64;
            if rounds.is_multiple_of(64) || evaluating >= PARALLEL_MIN {
                progress.check()?;
            }
            if clock.trace && evaluating >= PARALLEL_MIN {
                tracing::debug!(target: "heaptui::duplicates",
                    "refine: round {rounds} dirty {evaluating} at {} ms",
                    clock.t0.elapsed().as_millis()
                );
            }
            split_blocks(&keyed, block_size, &mut moves);
            drop(std::mem::take(&mut keyed));
        }
        for &(o, id) in &moves {
            block[o as usize] = id;
        }
        if clock.trace && moves.len() >= PARALLEL_MIN {
            tracing::debug!(target: "heaptui::duplicates",
                "refine: moved {} at {} ms",
                moves.len(),
                clock.t0.elapsed().as_millis()
            );
        }
        dirty = dirty_retainers(graph, (block, block_size), &moves, &queued);
        crate::work::add(1 + moves.len() as u64 + dirty.len() as u64);
        if dirty.is_empty() {
            return Ok((rounds, evaluated));
        }
        keyed = keys(graph, block, &dirty);
    }
}

/// Whether object `o` of block `b` is evaluated: not in a singleton
/// block, and not a leaf.
fn evaluate(graph: &View, b: u32, block_size: &[u32], o: usize) -> bool {
    many(block_size, b) && !graph.refs_raw(o as u32).is_empty()
}

/// Whether block `b` holds two objects or more (not [`NO_BLOCK`], nor a
/// single object's id, see [`Singles`]).
#[inline]
pub fn many(block_size: &[u32], b: u32) -> bool {
    block_size.get(b as usize).is_some_and(|&s| s > 1)
}

/// The refined partition as the verification reads it: the block of each
/// object in a block of two or more (a candidate), by its rank among them,
/// where the partition held 4 bytes for every object (37 MiB on the HPROF
/// test dump, through the whole verification, at its peak). An object
/// outside the candidates is the only one of its block, or unreachable,
/// and the verification reads only objects that candidates reach (all
/// reachable), so its block's id is not kept: [`Candidates::key`] stands
/// for it with a key of its own. A bit an object, 0.06 bytes of ranks and
/// 4 bytes a candidate.
pub struct Candidates {
    members: RankedBits,
    /// Per candidate, by rank, its block.
    block: Vec<u32>,
}

impl Candidates {
    /// The candidates of `block` (per object its block), `block_size` its
    /// blocks' sizes.
    pub fn of(block: &[u32], block_size: &[u32]) -> Candidates {
        let n = block.len();
        let candidate = |o: usize| many(block_size, block[o]);
        let mut bits = vec![0u64; n.div_ceil(64)];
        bits.par_iter_mut().enumerate().for_each(|(w, word)| {
            for o in w * 64..((w + 1) * 64).min(n) {
                if candidate(o) {
                    *word |= 1 << (o % 64);
                }
            }
        });
        Candidates {
            members: RankedBits::new(bits),
            block: super::gather(n, candidate, |o| block[o]),
        }
    }

    /// A key per reachable object, equal for two objects exactly where
    /// the partition puts them in one block: a candidate's block id, else
    /// (the only object of its block) a key past every block id, the
    /// object's own. Its values are not the partition's ids, only its
    /// equalities.
    #[inline]
    pub fn key(&self, o: u32) -> u64 {
        match self.members.rank(o) {
            Some(r) => self.block[r] as u64,
            None => 1 << 32 | o as u64,
        }
    }

    /// The candidates in object order with their blocks.
    pub fn iter(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.members.iter_ones().zip(self.block.iter().copied())
    }

    /// The bytes of its arrays (for the memory log).
    pub fn heap_bytes(&self) -> usize {
        self.members.heap_bytes() + bytes(&self.block)
    }
}

/// The first round, which evaluates nearly every object: its moves, and
/// the number of objects evaluated. Its keys are built straight from
/// object order (no list of them beside the keys), a piece of the block
/// ids at a time: 16 bytes an object at once were the peak of the whole
/// analysis on a 20 M-object V8 snapshot. Moves wait for the round's end,
/// so every piece reads the blocks the round started with and the result
/// is the one of a single sort.
fn first_round(
    graph: &View,
    (block, block_size): (&[u32], &mut Vec<u32>),
    moves: &mut Vec<(u32, u32)>,
    progress: &Progress,
    t0: std::time::Instant,
) -> Result<u64, Cancelled> {
    let trace = tracing::enabled!(target: "heaptui::duplicates", tracing::Level::TRACE);
    let target = (graph.objects() / FIRST_ROUND_PIECES).max(1) as u64;
    let mut evaluated = 0;
    let mut from = 0usize;
    while from < block_size.len() {
        let mut to = from;
        let mut objects = 0u64;
        while to < block_size.len() && (objects < target || to == from) {
            objects += block_size[to] as u64;
            to += 1;
        }
        let (b, bs) = (block, &block_size[..]);
        let piece = from as u32..to as u32;
        let mut keyed = super::gather(
            b.len(),
            |o| piece.contains(&b[o]) && evaluate(graph, b[o], bs, o),
            |o| (b[o], signature(graph, b, o as u32), o as u32),
        );
        keyed.par_sort_unstable();
        progress.check()?;
        evaluated += keyed.len() as u64;
        if trace {
            tracing::debug!(target: "heaptui::duplicates",
                "refine: round 1, blocks {from}..{to}: {} keyed at {} ms",
                keyed.len(),
                t0.elapsed().as_millis()
            );
        }
        split_blocks(&keyed, block_size, moves);
        crate::mem::arrays_alive(
            "duplicates: first round",
            &[
                ("block", std::mem::size_of_val(block)),
                ("block_size", bytes(block_size)),
                ("queued", graph.objects().div_ceil(64) * 8),
                ("keyed", bytes(&keyed)),
                ("moves", bytes(moves)),
            ],
        );
        from = to;
    }
    Ok(evaluated)
}

/// The retainers of the moved objects that the next round evaluates (in a
/// block of two or more, not queued yet: each is queued as it is listed).
fn dirty_retainers(
    graph: &View,
    (block, block_size): (&[u32], &[u32]),
    moves: &[(u32, u32)],
    queued: &[AtomicU64],
) -> Vec<u32> {
    let wants = |p: u32| {
        many(block_size, block[p as usize])
            && queued[p as usize / 64].fetch_or(1 << (p % 64), Ordering::Relaxed) >> (p % 64) & 1
                == 0
    };
    if moves.len() >= PARALLEL_MIN {
        moves
            .par_iter()
            .flat_map_iter(|&(m, _)| graph.retainers_raw(m).filter(|&p| wants(p)))
            .collect()
    } else {
        let mut dirty = Vec::new();
        for &(m, _) in moves {
            dirty.extend(graph.retainers_raw(m).filter(|&p| wants(p)));
        }
        dirty
    }
}

/// The sorted (block, signature, object) keys of the `dirty` objects.
fn keys(graph: &View, block: &[u32], dirty: &[u32]) -> Vec<(u32, u64, u32)> {
    if dirty.len() >= PARALLEL_MIN {
        let mut k: Vec<_> = dirty
            .par_iter()
            .map(|&o| (block[o as usize], signature(graph, block, o), o))
            .collect();
        k.par_sort_unstable();
        k
    } else {
        let mut k: Vec<_> = dirty
            .iter()
            .map(|&o| (block[o as usize], signature(graph, block, o), o))
            .collect();
        k.sort_unstable();
        k
    }
}

#[cfg(test)]
mod tests {
    use std::fmt::Write;
    use std::path::Path;

    use super::{
        hashes, label_blocks, narrowed, regroup_all, shared_labels, HASH_PIECES, NO_BLOCK,
    };
    use crate::graph::duplicates::view::View;
    use crate::graph::{DominatorTree, HeapGraph};
    use crate::mem::RankedBits;
    use crate::progress::Progress;

    /// The graph and dominator tree of a text heap.
    fn analysed(text: &str) -> (HeapGraph, DominatorTree) {
        let dump =
            crate::import::netcf_text::parse_bytes(Path::new("t.txt"), text.as_bytes()).unwrap();
        let graph = HeapGraph::build(dump);
        let dom = DominatorTree::compute(&graph, &Progress::new()).unwrap();
        (graph, dom)
    }

    /// A heap's label blocks, how many labels, and the labels of two
    /// non-leaves or more as bits.
    fn labelled(view: &View, dom: &DominatorTree) -> (Vec<u32>, usize, Vec<u64>) {
        let block = label_blocks(view, dom.parents_aside()).block;
        let labels = *block.iter().filter(|&&b| b != NO_BLOCK).max().unwrap() as usize + 1;
        let shared = shared_labels(view, &block, labels);
        (block, labels, shared)
    }

    /// A label block of more objects than a piece takes is regrouped in
    /// parts by hash, and each group of equal hashes is one block: 70,000
    /// Nodes of one label (each referring to one Leaf), given hashes of
    /// 7,919 values (collisions within and across the parts).
    #[test]
    fn a_label_block_larger_than_a_piece_is_regrouped_in_parts_by_hash() {
        let nodes = 70_000u32;
        assert!(nodes as usize > (nodes as usize / HASH_PIECES).max(1 << 16));
        let mut text = String::from("t 1 Node\nt 2 Leaf\no 1 2 4\n");
        for i in 0..nodes {
            writeln!(text, "o {:x} 1 10 1\nr {:x} 1 0", i + 2, i + 2).unwrap();
        }
        let (graph, dom) = analysed(&text);
        let view = View::new(&graph);
        let (block, labels, shared) = labelled(&view, &dom);
        let (moving, h) = hashes(&view, &block, |b| b, &shared);
        assert_eq!(moving.ones(), nodes as usize);
        let hash = |r: usize| (r as u32 % 7919).wrapping_mul(0x9e37_79b9);
        let given: Vec<u32> = (0..h.len()).map(hash).collect();
        let part = regroup_all(
            &view,
            block,
            labels,
            RankedBits::new(shared),
            (moving.clone(), given),
        );
        let mut block_of_hash = std::collections::HashMap::new();
        let mut hash_of_block = std::collections::HashMap::new();
        for o in moving.iter_ones() {
            let (b, x) = (part.block[o as usize], hash(moving.rank(o).unwrap()));
            assert_eq!(*block_of_hash.entry(x).or_insert(b), b, "one block a hash");
            assert_eq!(*hash_of_block.entry(b).or_insert(x), x, "one hash a block");
        }
        assert_eq!(block_of_hash.len(), 7919);
    }

    /// The rounds over label blocks held in one or two bytes give the
    /// hashes of the rounds over the blocks themselves, and those are the
    /// hashes of rounds over every object.
    #[test]
    fn narrow_label_blocks_hash_as_the_wide_ones() {
        let mut text = String::from("t 1 Node\nt 2 Leaf\n");
        for i in 0..200u32 {
            let (a, b) = (0x1000 + (i * 7) % 200, 0x1000 + (i * 13 + 5) % 200);
            writeln!(
                text,
                "o {:x} 1 {} {a:x} {b:x} {:x}",
                0x1000 + i,
                10 + i % 3,
                0x5000 + i % 9
            )
            .unwrap();
        }
        for i in 0..9u32 {
            writeln!(text, "o {:x} 2 {}", 0x5000 + i, 4 + i % 2).unwrap();
        }
        // Unreachable: no root reaches them.
        writeln!(text, "o 9000 1 10 9001 5000\no 9001 2 4").unwrap();
        // Alone in its label block (the only Node of 99 bytes).
        writeln!(text, "o 2000 1 99 1000 1001 5000").unwrap();
        writeln!(text, "r 1000 1 0\nr 1063 1 0\nr 2000 1 0").unwrap();
        let (graph, dom) = analysed(&text);
        let view = View::new(&graph);
        let (block, _, shared) = labelled(&view, &dom);
        assert!(block.contains(&NO_BLOCK));
        let alone = block[view.dump.index_of(0x2000).unwrap().index()];
        assert_eq!(shared[alone as usize / 64] >> (alone % 64) & 1, 0);
        let wide = hashes(&view, &block, |b| b, &shared);
        let mut narrow = block.clone();
        assert_eq!(narrowed::<1>(&view, &mut narrow, &shared), wide);
        assert_eq!(narrow, block, "widened back");
        assert_eq!(narrowed::<2>(&view, &mut narrow, &shared), wide);
        assert_eq!(narrow, block, "widened back");
        assert_eq!(narrowed::<3>(&view, &mut narrow, &shared), wide);
        assert_eq!(narrow, block, "widened back");
        let distinct: std::collections::HashSet<u32> = wide.1.iter().copied().collect();
        assert!(distinct.len() > 3, "the rounds tell objects apart");
        // The hashes kept, of the reachable non-leaves, are those of the
        // rounds over every object; the others never change.
        let full = every_hash(&view, &block, &shared);
        let (moving, h) = wide;
        for (o, &f) in full.iter().enumerate() {
            match moving.rank(o as u32) {
                Some(r) => assert_eq!(h[r], f, "{o}"),
                None => {
                    assert!(
                        block[o] == NO_BLOCK
                            || view.refs_raw(o as u32).is_empty()
                            || block[o] == alone
                    );
                    assert_eq!(f, seed(block[o]), "{o}");
                }
            }
        }
    }

    /// A heap of `nodes` Nodes (shallow 10 + i % `sizes` bytes), each
    /// referring to two others and to one of `leaves` Leaves (4 + i % 3
    /// bytes), rooted at the first Node, with the `extra` lines before the
    /// root; its graph.
    fn woven(nodes: u32, leaves: u32, sizes: u32, extra: &str) -> HeapGraph {
        let mut text = String::from("t 1 Node\nt 2 Leaf\n");
        for i in 0..nodes {
            let (a, b) = (0x1000 + (i * 7) % nodes, 0x1000 + (i * 3 + 1) % nodes);
            let leaf = 0x5000 + i % leaves;
            let size = 10 + i % sizes;
            writeln!(text, "o {:x} 1 {size} {a:x} {b:x} {leaf:x}", 0x1000 + i).unwrap();
        }
        for i in 0..leaves {
            writeln!(text, "o {:x} 2 {}", 0x5000 + i, 4 + i % 3).unwrap();
        }
        writeln!(text, "{extra}r 1000 1 0").unwrap();
        let dump =
            crate::import::netcf_text::parse_bytes(Path::new("t.txt"), text.as_bytes()).unwrap();
        HeapGraph::build(dump)
    }

    /// The refined partition of `graph`, its dominator tree shared.
    fn refined(graph: &HeapGraph) -> super::Partition {
        let dom = DominatorTree::compute(graph, &Progress::new()).unwrap();
        super::refine(&View::new(graph), dom.parents_aside(), &Progress::new()).unwrap()
    }

    /// The refined partition's sizes count its blocks' members, and an
    /// id past them is one object's.
    #[test]
    fn block_sizes_count_members_and_singles_are_single() {
        let part = refined(&woven(300, 5, 2, ""));
        let mut count = std::collections::HashMap::new();
        for &b in &part.block {
            if b != NO_BLOCK {
                *count.entry(b).or_insert(0u32) += 1;
            }
        }
        let (mut dense, mut single) = (0, 0);
        for (&b, &c) in &count {
            match part.block_size.get(b as usize) {
                Some(&s) => {
                    assert_eq!(s, c, "block {b}");
                    dense += 1;
                }
                None => {
                    assert_eq!(c, 1, "single {b}");
                    single += 1;
                }
            }
        }
        assert!(dense > 0 && single > 0, "{dense} dense, {single} single");
    }

    /// The candidates' keys are equal for two reachable objects exactly
    /// where the partition puts them in one block, and the candidates
    /// listed are the objects of blocks of two or more, with their blocks.
    #[test]
    fn candidate_keys_are_equal_exactly_within_a_block() {
        // Two objects no root reaches.
        let part = refined(&woven(120, 7, 3, "o 9000 1 10 9001 5000\no 9001 2 4\n"));
        let cands = super::Candidates::of(&part.block, &part.block_size);
        let many = |b: u32| super::many(&part.block_size, b);
        let listed: Vec<(u32, u32)> = cands.iter().collect();
        let expected: Vec<(u32, u32)> = (0..part.block.len() as u32)
            .filter(|&o| many(part.block[o as usize]))
            .map(|o| (o, part.block[o as usize]))
            .collect();
        assert_eq!(listed, expected);
        assert!(!listed.is_empty() && listed.len() < part.block.len());
        let reachable: Vec<u32> = (0..part.block.len() as u32)
            .filter(|&o| part.block[o as usize] != NO_BLOCK)
            .collect();
        for &x in &reachable {
            for &y in &reachable {
                let same = part.block[x as usize] == part.block[y as usize];
                assert_eq!(cands.key(x) == cands.key(y), same, "{x} {y}");
            }
        }
    }

    fn seed(b: u32) -> u32 {
        (b as u64)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(29) as u32
    }

    /// The rounds over an array of every object's hash, one object at a
    /// time.
    fn every_hash(view: &View, block: &[u32], shared: &[u64]) -> Vec<u32> {
        let mut h: Vec<u32> = block.iter().map(|&b| seed(b)).collect();
        for _ in 0..super::HASH_ROUNDS {
            let prev = h.clone();
            for (o, out) in h.iter_mut().enumerate() {
                let refs = view.refs_raw(o as u32);
                let b = block[o];
                if b == NO_BLOCK || refs.is_empty() || shared[b as usize / 64] >> (b % 64) & 1 == 0
                {
                    continue;
                }
                let mut x = prev[o] as u64 | 1 << 40;
                for c in refs {
                    x = (x ^ prev[c as usize] as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                    x ^= x >> 29;
                }
                *out = (x >> 32) as u32;
            }
        }
        h
    }
}
