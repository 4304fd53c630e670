//! The id index's form for ids that come in long ascending runs: a bit per
//! address with a running count, instead of a hash table (the HPROF
//! importer's, see `WideIdIndex::build_in_runs`).
//!
//! A JVM writes its heap dump region by region in address order: the
//! 406 MB HotSpot dump of the benchmarks lists 9.49 M of its 9.76 M ids in
//! one ascending run and 267 K in a second, the rest in a few hundred runs
//! of one to nine objects. Within such a run an object's index is its
//! run's first index plus the count of ids below it, and that count is a
//! rank in a bitmap over the run's addresses: one bit per aligned address,
//! 384 of them per 64-byte block beside the counts of the bits before. At
//! 3.5 addresses per object the bitmap takes 0.6 bytes per object (5.5
//! MB for that dump, against the hash table's 128 MB), so a look-up reads
//! one cache line that is likely cached, where a hash slot is a miss to
//! memory; the build sets bits in address order instead of scattering
//! inserts.
//!
//! Runs are cut where the ids descend or repeat, where two neighbours lie
//! more than [`MAX_GAP`] addresses apart (a sparse heap's free regions take
//! no bitmap) and every [`MAX_LEN`] ids (so the build runs in parallel).
//! Runs shorter than [`MIN_LEN`], runs whose bitmap would cost more than
//! [`MAX_BYTES_PER_ID`] and runs that overlap a longer one keep their ids in
//! a small hash table of their own, asked when the bitmap has no bit. The
//! form is taken only where the ids repeat nowhere (the hash table then
//! decides which record wins) and the short runs hold few of them; the
//! caller falls back to the hash table otherwise.

use std::ops::Range;

use rayon::prelude::*;

/// Addresses one block covers: six words of bits beside the counts.
const KEYS: u64 = 6 * 64;

/// Ids fewer than this in a run go to the hash table of the rest.
const MIN_LEN: usize = 64;

/// Ids more than this many aligned addresses apart end a run.
const MAX_GAP: u64 = 2048;

/// Longest run (so that long runs are built in parallel).
const MAX_LEN: usize = 1 << 20;

/// A run whose blocks cost more per id goes to the hash table.
const MAX_BYTES_PER_ID: u64 = 32;

#[derive(Clone, Copy, bytemuck::Zeroable)]
#[repr(C, align(64))]
struct Block {
    /// The run's ids in its blocks before this one.
    rank: u32,
    /// The block's ids in its words before each word.
    within: [u16; 6],
    bits: [u64; 6],
}

#[derive(Debug, Clone, Copy)]
struct Run {
    first: u64,
    last: u64,
    /// Indices of the run's ids.
    start: u32,
    end: u32,
    /// The run's first block.
    block: u32,
}

impl Run {
    fn ids(&self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }

    /// Blocks its bitmap takes, where ids are `2^align` apart.
    fn blocks(&self, align: u32) -> u64 {
        ((self.last - self.first) >> align) / KEYS + 1
    }
}

/// The long runs' bitmaps (see the module doc).
pub(super) struct Runs {
    /// By first id; they do not overlap.
    runs: Vec<Run>,
    blocks: Vec<Block>,
    align: u32,
    /// The runs' addresses cut into buckets of `2^shift` from `base`
    /// (about four per run): per bucket, how many runs begin at or
    /// before its start, so that finding an id's run reads one or two
    /// runs instead of a binary search among them all.
    base: u64,
    shift: u32,
    buckets: Vec<u32>,
    /// Whether look-ups are worth fetching ahead (see [`Runs::prefetch`]).
    fetch_ahead: bool,
}

/// Bitmaps larger than this are fetched ahead of their look-ups.
const CACHED: usize = 32 << 20;

/// The ids the long runs do not hold: their own ids and indices.
pub(super) struct Rest {
    pub ids: Vec<u64>,
    pub index: Vec<u32>,
}

impl Rest {
    /// The ids the runs leave out (`short`, `len` of them), in file order;
    /// `None` where one of them is also in a run (a repeated id).
    fn of(ids: &[u64], mut short: Vec<Range<usize>>, len: usize, runs: &Runs) -> Option<Rest> {
        let mut rest = Rest {
            ids: Vec::with_capacity(len),
            index: Vec::with_capacity(len),
        };
        short.sort_unstable_by_key(|r| r.start);
        for r in short {
            for i in r {
                // An id of the rest that a long run holds too repeats.
                if runs.get(ids[i]).is_some() {
                    return None;
                }
                rest.ids.push(ids[i]);
                rest.index.push(i as u32);
            }
        }
        Some(rest)
    }
}

impl Runs {
    /// The runs of `ids` (whose aligned addresses are multiples of
    /// `2^align` apart), with the ids they leave out; `None` where the
    /// ids are not in long runs (then a hash table serves better) or
    /// where a long run repeats an id.
    pub fn build(ids: &[u64], align: u32) -> Option<(Runs, Rest)> {
        let n = ids.len();
        if n < MIN_LEN || n >= u32::MAX as usize {
            return None;
        }
        let cuts = cuts(ids, align)?;
        let (long, mut short) = Self::between(ids, &cuts, align);
        let mut kept = Self::without_overlaps(long, &mut short);
        let rest_len: usize = short.iter().map(|r| r.len()).sum();
        if kept.is_empty() || rest_len > n / 4 {
            return None;
        }
        let blocks = Self::blocks_of(ids, &mut kept, align)?;
        let blocks_len = blocks.len();
        let base = kept[0].first;
        let (shift, buckets) = Self::buckets(&kept);
        let runs = Runs {
            runs: kept,
            blocks,
            align,
            base,
            shift,
            buckets,
            fetch_ahead: blocks_len * 64 > CACHED,
        };
        let rest = Rest::of(ids, short, rest_len, &runs)?;
        Some((runs, rest))
    }

    /// The runs between `cuts`: the long ones, by first id, and the short
    /// ones (and those too sparse for their bitmaps) as ranges of `ids`.
    fn between(ids: &[u64], cuts: &[usize], align: u32) -> (Vec<Run>, Vec<Range<usize>>) {
        let mut long: Vec<Run> = Vec::new();
        let mut short: Vec<Range<usize>> = Vec::new();
        for w in cuts.windows(2) {
            let (s, e) = (w[0], w[1]);
            let r = Run {
                first: ids[s],
                last: ids[e - 1],
                start: s as u32,
                end: e as u32,
                block: 0,
            };
            if e - s < MIN_LEN || r.blocks(align) * 64 > MAX_BYTES_PER_ID * (e - s) as u64 {
                short.push(r.ids());
            } else {
                long.push(r);
            }
        }
        long.sort_unstable_by_key(|r| r.first);
        (long, short)
    }

    /// `long` (by first id) without overlaps: of two overlapping runs the
    /// shorter goes to `short`.
    fn without_overlaps(long: Vec<Run>, short: &mut Vec<Range<usize>>) -> Vec<Run> {
        let mut kept: Vec<Run> = Vec::with_capacity(long.len());
        for r in long {
            let mut r = Some(r);
            while let (Some(cur), Some(prev)) = (r, kept.last().copied()) {
                if prev.last < cur.first {
                    break;
                }
                if prev.ids().len() >= cur.ids().len() {
                    short.push(cur.ids());
                    r = None;
                } else {
                    short.push(prev.ids());
                    kept.pop();
                }
            }
            kept.extend(r);
        }
        kept
    }

    /// Each run's bitmap blocks, in order, with their ranks; sets each
    /// run's first block. `None` where the blocks would not fit a `u32`.
    fn blocks_of(ids: &[u64], kept: &mut [Run], align: u32) -> Option<Vec<Block>> {
        let mut sizes = Vec::with_capacity(kept.len());
        let mut total = 0u64;
        for r in kept.iter_mut() {
            let blocks = r.blocks(align);
            r.block = u32::try_from(total).ok()?;
            sizes.push(blocks as usize);
            total += blocks;
        }
        let mut blocks: Vec<Block> = crate::mem::zeroed(usize::try_from(total).ok()?);
        crate::mem::split_by(&mut blocks, sizes)
            .into_par_iter()
            .zip(kept.par_iter())
            .for_each(|(blocks, r)| {
                for &id in &ids[r.ids()] {
                    let k = (id - r.first) >> align;
                    let b = &mut blocks[(k / KEYS) as usize];
                    let k = k % KEYS;
                    b.bits[(k / 64) as usize] |= 1 << (k % 64);
                }
                let mut rank = 0;
                for b in blocks.iter_mut() {
                    b.rank = rank;
                    let mut within = 0;
                    for (w, count) in b.bits.iter().zip(b.within.iter_mut()) {
                        *count = within;
                        within += w.count_ones() as u16;
                    }
                    rank += within as u32;
                }
            });
        Some(blocks)
    }

    /// The buckets that find a run by its first id: the shift that makes
    /// them about four per run, and the first run of each bucket.
    fn buckets(kept: &[Run]) -> (u32, Vec<u32>) {
        let base = kept[0].first;
        let span = kept[kept.len() - 1].last - base;
        let mut shift = 0;
        while (span >> shift) as usize >= 4 * kept.len() {
            shift += 1;
        }
        let buckets = (0..=(span >> shift) as usize + 1)
            .map(|b| {
                let start = base as u128 + ((b as u128) << shift);
                kept.partition_point(|r| (r.first as u128) <= start) as u32
            })
            .collect();
        (shift, buckets)
    }

    /// The run whose addresses cover `id`'s, and the id's block and bit.
    #[inline]
    fn place(&self, id: u64) -> Option<(&Run, usize, u64)> {
        let b = (id.checked_sub(self.base)? >> self.shift) as usize;
        let (&lo, &hi) = (self.buckets.get(b)?, self.buckets.get(b + 1)?);
        let (lo, hi) = (lo as usize, hi as usize);
        // Runs before `lo` begin at or before the bucket's start, those in
        // `lo..hi` within it: the id's run is the last to begin at or
        // before the id.
        let at = if hi - lo > 8 {
            lo + self.runs[lo..hi].partition_point(|r| r.first <= id)
        } else {
            let mut at = lo;
            while at < hi && self.runs[at].first <= id {
                at += 1;
            }
            at
        };
        let r = self.runs.get(at.checked_sub(1)?)?;
        if id > r.last {
            return None;
        }
        let d = id - r.first;
        if d & ((1 << self.align) - 1) != 0 {
            return None;
        }
        let k = d >> self.align;
        Some((r, r.block as usize + (k / KEYS) as usize, k % KEYS))
    }

    /// Hints the CPU to fetch the block of `id`, where the bitmaps are
    /// too large to stay in the caches: smaller ones (those of heaps up to
    /// about fifty million objects) mostly are, and finding the block
    /// twice cost more than the fetch saved (the 3 M-object text heap's
    /// resolving 313–356 ms with it, 263–302 without; the 406 MB HPROF's
    /// import 1.28–1.39 s against 1.21–1.25).
    #[inline]
    pub fn prefetch(&self, id: u64) {
        if !self.fetch_ahead {
            return;
        }
        if let Some((_, b, _)) = self.place(id) {
            crate::mem::prefetch(&self.blocks[b]);
        }
    }

    /// The bytes of its bitmaps, runs and buckets.
    pub fn bytes(&self) -> usize {
        std::mem::size_of_val(&self.runs[..])
            + std::mem::size_of_val(&self.blocks[..])
            + std::mem::size_of_val(&self.buckets[..])
    }

    /// Whether [`Runs::prefetch`] fetches anything.
    pub fn fetches_ahead(&self) -> bool {
        self.fetch_ahead
    }

    /// The index of `id` if a long run holds it.
    #[inline]
    pub fn get(&self, id: u64) -> Option<u32> {
        let (r, b, k) = self.place(id)?;
        let b = &self.blocks[b];
        let (word, bit) = ((k / 64) as usize, k % 64);
        if b.bits[word] >> bit & 1 == 0 {
            return None;
        }
        let below = (b.bits[word] & ((1 << bit) - 1)).count_ones();
        Some(r.start + b.rank + b.within[word] as u32 + below)
    }
}

/// Where runs begin, and `ids.len()` last: where an id is not above the
/// one before, lies more than [`MAX_GAP`] addresses past it, or would make
/// its run longer than [`MAX_LEN`]. `None` when there are so many that the
/// runs would be short (found part by part, in parallel).
fn cuts(ids: &[u64], align: u32) -> Option<Vec<usize>> {
    const PART: usize = 1 << 16;
    let parts: Vec<Vec<usize>> = ids
        .par_chunks(PART)
        .enumerate()
        .map(|(p, part)| {
            let base = p * PART;
            let mut out = Vec::new();
            let mut prev = if base == 0 { None } else { Some(ids[base - 1]) };
            for (i, &id) in part.iter().enumerate() {
                let cut = match prev {
                    None => true,
                    Some(prev) => id <= prev || (id - prev) >> align > MAX_GAP,
                };
                if cut {
                    out.push(base + i);
                    if out.len() > part.len() / 16 + 16 {
                        return None;
                    }
                }
                prev = Some(id);
            }
            Some(out)
        })
        .collect::<Option<_>>()?;
    let mut cuts = Vec::new();
    for c in parts.into_iter().flatten() {
        // Long runs are cut every MAX_LEN ids.
        if let Some(&last) = cuts.last() {
            let mut at = last + MAX_LEN;
            while at < c {
                cuts.push(at);
                at += MAX_LEN;
            }
        }
        cuts.push(c);
    }
    if let Some(&last) = cuts.last() {
        let mut at = last + MAX_LEN;
        while at < ids.len() {
            cuts.push(at);
            at += MAX_LEN;
        }
    }
    cuts.push(ids.len());
    Some(cuts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::idmap::tests::xorshift;

    /// Ids as a heap dump lists them: a few long ascending runs of
    /// addresses in 8-byte steps (some gaps past a run's limit), in
    /// shuffled order, and short runs scattered among and inside them.
    fn heap_ids(rand: &mut impl FnMut(u64) -> u64, regions: usize) -> Vec<u64> {
        let mut runs: Vec<Vec<u64>> = Vec::new();
        for r in 0..regions {
            let mut at = 0x7_0000_0000 + (r as u64) * (1 << 28);
            let mut run = Vec::new();
            for _ in 0..100 + rand(3000) {
                at += 8
                    * (1 + match rand(100) {
                        0 => rand(10_000),
                        1..=9 => rand(64),
                        _ => rand(4),
                    });
                run.push(at);
            }
            runs.push(run);
        }
        for _ in 0..rand(40) {
            let around = runs[rand(regions as u64) as usize].clone();
            let Some(&base) = around.get(rand(around.len() as u64 + 1) as usize) else {
                continue;
            };
            // Addresses between the run's (4 past a multiple of 8, where
            // long runs have none), or past every run.
            let short: Vec<u64> = (0..1 + rand(5))
                .map(|j| base + 8 * j + 4 + (1 << 34) * rand(2))
                .collect();
            runs.push(short);
        }
        let mut order: Vec<usize> = (0..runs.len()).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, rand(i as u64 + 1) as usize);
        }
        order.into_iter().flat_map(|r| runs[r].clone()).collect()
    }

    #[test]
    fn look_ups_agree_with_a_map() {
        let mut rand = xorshift(0x9E37_79B9_7F4A_7C15);
        let mut built = 0;
        for case in 0..300 {
            let ids = heap_ids(&mut rand, 1 + case % 5);
            let mut first = std::collections::HashMap::new();
            for (i, &id) in ids.iter().enumerate() {
                first.entry(id).or_insert(i as u32);
            }
            let Some((runs, rest)) = Runs::build(&ids, 2) else {
                continue;
            };
            built += 1;
            // The rest in index order, the first of a repeated id winning
            // (as the caller's hash table of the rest decides).
            assert!(rest.index.windows(2).all(|w| w[0] < w[1]));
            let mut rest_map = std::collections::HashMap::new();
            for (&id, &i) in rest.ids.iter().zip(&rest.index) {
                rest_map.entry(id).or_insert(i);
            }
            let get = |id: u64| runs.get(id).or_else(|| rest_map.get(&id).copied());
            for &id in &ids {
                assert_eq!(get(id), first.get(&id).copied(), "{id:x}");
                for probe in [id + 8, id - 8, id + 4, id - 4, id + 1, id ^ (1 << 40)] {
                    assert_eq!(get(probe), first.get(&probe).copied(), "{probe:x}");
                }
            }
            // Every id in one place only.
            for &id in &rest.ids {
                assert_eq!(runs.get(id), None);
            }
        }
        eprintln!("{built}");
        assert!(built > 200, "only {built} cases took the runs");
    }

    /// The whole index over heap-like ids, some short runs repeated (the
    /// first record wins, the repeats counted): as a map of first records.
    #[test]
    fn the_index_in_runs_agrees_with_a_map() {
        use crate::model::{IdSpan, WideIdIndex};
        let mut rand = xorshift(0x2545_F491_4F6C_DD1D);
        let mut in_runs = 0;
        for case in 0..100 {
            let mut ids = heap_ids(&mut rand, 1 + case % 4);
            // Repeat a few ids of short runs (4 past a multiple of 8).
            let short: Vec<u64> = ids.iter().copied().filter(|id| id % 8 == 4).collect();
            for _ in 0..rand(4) {
                if let Some(&id) = short.get(rand(short.len() as u64 + 1) as usize) {
                    ids.insert(rand(ids.len() as u64) as usize, id);
                }
            }
            let mut first = std::collections::HashMap::new();
            for (i, &id) in ids.iter().enumerate() {
                first.entry(id).or_insert(i as u32);
            }
            let index = WideIdIndex::build_in_runs(&ids, IdSpan::of(&ids), None);
            in_runs += index.in_runs() as u32;
            assert_eq!(index.repeated as usize, ids.len() - first.len());
            for &id in &ids {
                for probe in [id, id + 4, id - 4, id + 8, id + 2] {
                    assert_eq!(index.get(probe), first.get(&probe).copied(), "{probe:x}");
                }
            }
        }
        assert!(in_runs > 60, "only {in_runs} indices in runs");
    }

    #[test]
    fn unordered_or_repeated_ids_take_the_hash_table() {
        let mut rand = xorshift(0x1234_5678_9ABC_DEF1);
        let shuffled: Vec<u64> = (0..10_000).map(|_| 8 * rand(1 << 30)).collect();
        assert!(Runs::build(&shuffled, 3).is_none());
        // One long run, then one of its ids again.
        let mut ids: Vec<u64> = (0..1000).map(|i| 0x1000 + 8 * i).collect();
        ids.push(0x1000 + 8 * 500);
        assert!(Runs::build(&ids, 3).is_none());
        // A second long run over the same addresses.
        let again: Vec<u64> = (0..2000).map(|i| 0x1000 + 8 * (i % 1000)).collect();
        assert!(Runs::build(&again, 3).is_none());
    }

    #[test]
    fn runs_longer_than_the_limit_are_cut_and_found() {
        let n = MAX_LEN * 2 + 12345;
        let ids: Vec<u64> = (0..n as u64).map(|i| 0x10 + 16 * i).collect();
        let (runs, rest) = Runs::build(&ids, 4).expect("one long run");
        assert_eq!(runs.runs.len(), 3);
        assert!(rest.ids.is_empty());
        for i in (0..n).step_by(997).chain([0, MAX_LEN - 1, MAX_LEN, n - 1]) {
            assert_eq!(runs.get(ids[i]), Some(i as u32));
            assert_eq!(runs.get(ids[i] + 8), None);
        }
    }
}
