//! Compressed sparse rows: the adjacency of `n` nodes as one offsets array
//! (`n + 1` entries, about 2 bytes each by blocks of 64 nodes, else 4 bytes
//! each where the targets number at most `u32::MAX`, 8 otherwise: see
//! [`Offsets`]) and one targets array of dense u32 indices, bit-packed at
//! the width of the largest ([`Bits`]: `⌈log2 objects⌉` bits a reference
//! for the heap's references, 23–24 on heaps of 6 to 10 million objects,
//! where a `u32` took 32).
//!
//! Every CSR holds its targets so, whatever they index: the heap's
//! references, the transposed rows the retainers are packed from, the
//! duplicates' odd rows, the long rows' label index and the cache's lists.
//! A row is read as a [`BitRow`] (`Copy`: a start bit, a length, the
//! width), decoded sequentially; one form keeps the call sites alike.
//! The builders take `u32` targets and pack them in place once complete
//! ([`Bits::pack`]).

use std::ops::Range;

use rayon::prelude::*;

use crate::mem::words::{ESCAPE, SHORT_BLOCK};
use crate::mem::{BitRow, Bits};

/// The `nodes + 1` cut points of a [`Csr`] into its targets, from 0, never
/// decreasing: in the short form (`Offsets::Short`: a base per block of 64
/// nodes and 2 bytes a node from it, a block of more than 65,535
/// references kept aside) where it takes fewer bytes, which is nearly
/// always; else in 4 bytes each when the last fits a `u32`, in 8 otherwise.
/// Read through `Offsets::get` or [`Csr::range`].
pub type Offsets = crate::mem::Words;

/// The adjacency of `n` nodes in compressed sparse rows: node `i`'s targets are `targets[offsets[i]..offsets[i + 1]]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Csr {
    /// `nodes + 1` cut points into `targets`.
    offsets: Offsets,
    /// Every node's targets, node after node, bit-packed.
    pub targets: Bits,
}

impl Csr {
    /// From offsets (`nodes + 1` of them, from 0, never decreasing, the
    /// last the targets' count: the caller checks) and the targets; offsets
    /// in memory put in the short form where it takes fewer bytes.
    pub fn from_parts(offsets: Offsets, targets: Bits) -> Csr {
        debug_assert_eq!(
            offsets.len().checked_sub(1).map(|l| offsets.get(l)),
            Some(targets.len() as u64)
        );
        Csr {
            offsets: offsets.shortened(),
            targets,
        }
    }

    /// From offsets and targets as they are, unchecked even in a debug
    /// build (tests of the checks that refuse such a pair).
    #[doc(hidden)]
    pub fn from_parts_unchecked(offsets: Offsets, targets: Bits) -> Csr {
        Csr { offsets, targets }
    }

    /// Builds from per-node degrees and the targets laid out in node order.
    pub fn from_degrees(degrees: &[u32], targets: Vec<u32>) -> Csr {
        let offsets = crate::mem::prefix_sums(degrees.len(), |i| degrees[i] as u64);
        assert_eq!(
            offsets[degrees.len()] as usize,
            targets.len(),
            "degrees must sum to targets"
        );
        Csr {
            offsets: Offsets::from_ascending(offsets),
            targets: targets.into(),
        }
    }

    /// [`Csr::from_degrees`] for targets built in a scratch array: the
    /// offsets made in `spill` where given (4 bytes each where the targets
    /// number under 2^32), in one pass over the degrees.
    pub fn from_degrees_in(
        degrees: &[u32],
        targets: crate::mem::Scratch<u32>,
        spill: Option<&crate::mem::spill::Spill>,
    ) -> Csr {
        if spill.is_none() && !targets.is_mapped() {
            return Csr::from_degrees(degrees, targets.into_vec());
        }
        let offsets = Csr::offsets_of_degrees(degrees, spill);
        assert_eq!(
            offsets.get(degrees.len()) as usize,
            targets.len(),
            "degrees must sum to targets"
        );
        Csr {
            offsets,
            targets: Bits::pack(targets),
        }
    }

    /// From offsets (checked as [`Csr::from_parts`]) and `u32` targets in
    /// a scratch array, packed there in place.
    pub fn packing(offsets: Offsets, targets: crate::mem::Scratch<u32>) -> Csr {
        Csr::from_parts(offsets, Bits::pack(targets))
    }

    /// The `degrees.len() + 1` offsets of rows of `degrees` targets each,
    /// in the form [`Csr::from_offsets`] would give them (short where it
    /// takes fewer bytes, else 4 bytes each where the total fits a `u32`,
    /// else 8), made in `spill` where given, without a wide array of
    /// running totals between (8 bytes a node).
    pub fn offsets_of_degrees(
        degrees: &[u32],
        spill: Option<&crate::mem::spill::Spill>,
    ) -> Offsets {
        let total: u64 = degrees.par_iter().map(|&d| d as u64).sum();
        let len = |i: usize| degrees[i] as u64;
        let short = Offsets::short_from_lengths(degrees.len(), &len, spill, &|_| {});
        if let Some(short) = short {
            short
        } else if total <= u32::MAX as u64 {
            Offsets::Narrow(running_offsets::<u32>(degrees, spill).into_array())
        } else {
            Offsets::Wide(running_offsets::<u64>(degrees, spill).into_array())
        }
    }

    /// From the `nodes + 1` offsets (starting at 0, never decreasing) and
    /// the targets they cut.
    pub fn from_offsets(offsets: Vec<u64>, targets: Vec<u32>) -> Csr {
        assert_eq!(
            offsets.last().copied(),
            Some(targets.len() as u64),
            "offsets must end at the targets' count"
        );
        debug_assert!(offsets[0] == 0 && offsets.windows(2).all(|w| w[0] <= w[1]));
        Csr {
            offsets: Offsets::from_ascending(offsets),
            targets: targets.into(),
        }
    }

    /// [`Csr::from_offsets`] for arrays built in scratch arrays: where
    /// either is spilled, the offsets' short (or narrow) form is made in
    /// `spill`, and the wide offsets' pages are given back as they are
    /// read.
    pub fn from_offsets_in(
        offsets: crate::mem::Scratch<u64>,
        targets: crate::mem::Scratch<u32>,
        spill: Option<&crate::mem::spill::Spill>,
    ) -> Csr {
        if spill.is_none() && !offsets.is_mapped() && !targets.is_mapped() {
            return Csr::from_offsets(offsets.into_vec(), targets.into_vec());
        }
        assert_eq!(
            offsets.last().copied(),
            Some(targets.len() as u64),
            "offsets must end at the targets' count"
        );
        let n = offsets.len() - 1;
        let len = |i: usize| offsets[i + 1].saturating_sub(offsets[i]);
        let done = |r: Range<usize>| offsets.release(r);
        let short = Offsets::short_from_lengths(n, &len, spill, &done);
        let offsets = match short {
            Some(short) => {
                offsets.release(0..offsets.len());
                short
            }
            None if targets.len() <= u32::MAX as usize => {
                let mut narrow: crate::mem::Scratch<u32> =
                    crate::mem::Scratch::zeroed(offsets.len(), spill);
                narrow
                    .par_chunks_mut(1 << 16)
                    .zip(offsets.par_chunks(1 << 16))
                    .for_each(|(out, o)| {
                        for (n, &x) in out.iter_mut().zip(o) {
                            *n = x as u32;
                        }
                    });
                offsets.release(0..offsets.len());
                Offsets::Narrow(narrow.into_array())
            }
            None => Offsets::Wide(offsets.into_array()),
        };
        Csr {
            offsets,
            targets: Bits::pack(targets),
        }
    }

    /// Builds from an edge list, keeping for each source the edges' order.
    pub fn from_edges(nodes: usize, edges: &[(u32, u32)]) -> Csr {
        let mut degrees = vec![0u32; nodes];
        for &(s, _) in edges {
            degrees[s as usize] += 1;
        }
        let offsets = crate::mem::prefix_sums(nodes, |i| degrees[i] as u64);
        let mut fill: Vec<u64> = offsets[..nodes].to_vec();
        let mut targets = vec![0u32; edges.len()];
        for &(s, t) in edges {
            targets[fill[s as usize] as usize] = t;
            fill[s as usize] += 1;
        }
        Csr {
            offsets: Offsets::from_ascending(offsets),
            targets: targets.into(),
        }
    }

    /// Puts the offsets and the targets on disk (`mem::spill`).
    pub fn spill(&mut self, to: &crate::mem::spill::Spill) {
        to.words(&mut self.offsets);
        self.targets.spill(to);
    }

    /// The cut points into the targets.
    pub fn offsets(&self) -> &Offsets {
        &self.offsets
    }

    /// Where `node`'s targets start in `targets` (`offset(nodes())` is the
    /// targets' count).
    #[inline]
    pub fn offset(&self, node: usize) -> u64 {
        self.offsets.get(node)
    }

    /// The positions of `node`'s targets in `targets`.
    #[inline]
    pub fn range(&self, node: u32) -> Range<usize> {
        let i = node as usize;
        match &self.offsets {
            Offsets::Short { bases, within, .. } => {
                let (b0, b1) = (bases[i / SHORT_BLOCK], bases[(i + 1) / SHORT_BLOCK]);
                if (b0 | b1) & ESCAPE != 0 {
                    return self.offset(i) as usize..self.offset(i + 1) as usize;
                }
                (b0 + within[i] as u64) as usize..(b1 + within[i + 1] as u64) as usize
            }
            Offsets::Narrow(o) => o[i] as usize..o[i + 1] as usize,
            Offsets::Wide(o) => o[i] as usize..o[i + 1] as usize,
        }
    }

    /// How many nodes.
    pub fn nodes(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// How many edges (targets).
    pub fn edges(&self) -> usize {
        self.targets.len()
    }

    /// The targets of `node`, in stored order.
    #[inline]
    pub fn neighbors(&self, node: u32) -> BitRow<'_> {
        self.targets.row(self.range(node))
    }

    /// Hints the CPU to fetch `node`'s entry of the offsets, for a later
    /// `neighbors(node)`.
    #[inline]
    pub fn prefetch_offsets(&self, node: u32) {
        match &self.offsets {
            Offsets::Short { within, .. } => crate::mem::prefetch(&within[node as usize]),
            Offsets::Narrow(o) => crate::mem::prefetch(&o[node as usize]),
            Offsets::Wide(o) => crate::mem::prefetch(&o[node as usize]),
        }
    }

    /// Hints the CPU to fetch the start of `node`'s targets (its offsets
    /// entry should be in cache already, see `prefetch_offsets`).
    #[inline]
    pub fn prefetch_targets(&self, node: u32) {
        self.targets.prefetch(self.offset(node as usize) as usize);
    }

    /// How many targets `node` has.
    #[inline]
    pub fn degree(&self, node: u32) -> usize {
        self.range(node).len()
    }

    /// The reverse adjacency (for every edge `u → v`, an edge `v → u`), with
    /// each node's sources in ascending order.
    ///
    /// A parallel counting sort by blocks of targets: each thread owns a
    /// contiguous block of target nodes (so a contiguous part of the result)
    /// and scans every edge twice, once counting its targets' in-degrees and
    /// once placing their sources in ascending order. The scans read memory
    /// in order; only the block's own counters are written at random, so
    /// the scratch memory is one counter per node whatever the number of
    /// threads, and the result is the same for any number of blocks.
    pub fn transpose(&self) -> Csr {
        self.transpose_in(None)
    }

    /// [`Csr::transpose`] with its offsets, targets and cursors in `spill`
    /// where given.
    pub fn transpose_in(&self, spill: Option<&crate::mem::spill::Spill>) -> Csr {
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        // More blocks than cores only repeats the scans.
        self.transpose_in_blocks(rayon::current_num_threads().min(cores), spill)
    }

    /// Rows `rows` of [`Csr::transpose`] (row `r` of the result is row
    /// `rows.start + r` of the transpose: the sources of the edges into
    /// it, ascending), with its offsets, targets and cursors in `spill`
    /// where given. Reads every row of `self` twice whatever `rows` is.
    pub fn transpose_rows_in(
        &self,
        rows: std::ops::Range<usize>,
        spill: Option<&crate::mem::spill::Spill>,
    ) -> Csr {
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        self.transpose_rows_in_blocks(rows, rayon::current_num_threads().min(cores), spill)
    }

    /// [`Csr::transpose`] with the targets cut into `parts` blocks.
    fn transpose_in_blocks(&self, parts: usize, spill: Option<&crate::mem::spill::Spill>) -> Csr {
        self.transpose_rows_in_blocks(0..self.nodes(), parts, spill)
    }

    /// Rows `rows` of [`Csr::transpose`] with them cut into `parts`
    /// blocks, each block's placed by one scan of the edges.
    fn transpose_rows_in_blocks(
        &self,
        rows: std::ops::Range<usize>,
        parts: usize,
        spill: Option<&crate::mem::spill::Spill>,
    ) -> Csr {
        use crate::mem::Scratch;
        let (first, n) = (rows.start, rows.len());
        let parts = parts.clamp(1, n.max(1));
        let bounds: Vec<(usize, usize)> = (0..parts)
            .map(|p| (first + n * p / parts, first + n * (p + 1) / parts))
            .collect();
        let counts = self.block_in_degrees(&bounds);
        let (offsets, block_start) = transposed_offsets(n, &bounds, counts, spill);
        // Sources, per block into its own part of the targets.
        let mut targets: Scratch<u32> = Scratch::zeroed(block_start[parts] as usize, spill);
        let part_lens = block_start.windows(2).map(|w| (w[1] - w[0]) as usize);
        targets
            .parts(part_lens)
            .into_par_iter()
            .zip(&bounds)
            .zip(&block_start)
            .for_each(|((mut part, &(lo, hi)), &start)| {
                if !part.is_empty() {
                    let local = &offsets[lo - first..hi - first];
                    self.place_sources(&mut part, (lo, hi), local, start, spill);
                }
            });
        let offsets = match spill {
            Some(_) => Offsets::from_scratch(offsets, spill),
            None => Offsets::plain_ascending(offsets.into_vec()),
        };
        Csr {
            offsets,
            targets: Bits::pack(targets),
        }
    }

    /// In-degrees, per block: a block's counters and one spare slot that
    /// takes every edge to another block (no branch to mispredict).
    fn block_in_degrees(&self, bounds: &[(usize, usize)]) -> Vec<Vec<u32>> {
        bounds
            .par_iter()
            .map(|&(lo, hi)| {
                let len = hi - lo;
                let mut count = crate::mem::filled(len + 1, 0u32);
                for v in self.targets.iter() {
                    count[(v as usize).wrapping_sub(lo).min(len)] += 1;
                }
                count.truncate(len);
                count
            })
            .collect()
    }

    /// Places the sources of the edges into the block of targets `lo..hi`,
    /// into `part`, its own part of the transposed targets (which starts at
    /// `start`; `offsets` are the block's lists' offsets): `cursor` is where
    /// each of the block's lists takes its next source, relative to the
    /// part.
    fn place_sources(
        &self,
        part: &mut [u32],
        (lo, hi): (usize, usize),
        offsets: &[u64],
        start: u64,
        spill: Option<&crate::mem::spill::Spill>,
    ) {
        let n = self.nodes();
        let len = hi - lo;
        let mut cursor: crate::mem::Scratch<u64> = crate::mem::Scratch::zeroed(len, spill);
        for (c, &o) in cursor.iter_mut().zip(offsets) {
            *c = o - start;
        }
        let last = part.len() - 1;
        // The edges in order, decoded three times: at the edge, and
        // PLACE_AHEAD and twice that ahead of it.
        let mut edges = self.targets.iter();
        let mut near = self.targets.iter().skip(PLACE_AHEAD);
        let mut far = self.targets.iter().skip(2 * PLACE_AHEAD);
        for u in 0..n {
            for _ in self.range(u as u32) {
                // The counter of a later edge's target, and the slot
                // of a nearer one, are fetched ahead (clamped into
                // the block rather than tested: no branch).
                if let Some(ahead) = far.next() {
                    let j = (ahead as usize).wrapping_sub(lo).min(len - 1);
                    crate::mem::prefetch(&cursor[j]);
                }
                if let Some(ahead) = near.next() {
                    let j = (ahead as usize).wrapping_sub(lo).min(len - 1);
                    crate::mem::prefetch(&part[(cursor[j] as usize).min(last)]);
                }
                let edge = edges.next().unwrap_or_default();
                let i = (edge as usize).wrapping_sub(lo);
                if i < len {
                    part[cursor[i] as usize] = u as u32;
                    cursor[i] += 1;
                }
            }
        }
    }
}

/// The transposed lists' offsets (`n + 1`) from the blocks' in-degrees,
/// and where each block's part of the targets starts (`parts + 1`).
fn transposed_offsets(
    n: usize,
    bounds: &[(usize, usize)],
    counts: Vec<Vec<u32>>,
    spill: Option<&crate::mem::spill::Spill>,
) -> (crate::mem::Scratch<u64>, Vec<u64>) {
    let mut offsets: crate::mem::Scratch<u64> = crate::mem::Scratch::zeroed(n + 1, spill);
    let mut block_start = Vec::with_capacity(bounds.len() + 1);
    let mut acc = 0u64;
    for c in &counts {
        block_start.push(acc);
        acc += c.iter().map(|&d| d as u64).sum::<u64>();
    }
    block_start.push(acc);
    offsets[n] = acc;
    crate::mem::split_by(&mut offsets[..n], bounds.iter().map(|&(lo, hi)| hi - lo))
        .into_par_iter()
        .zip(counts)
        .zip(&block_start)
        .for_each(|((out, count), &start)| {
            let mut acc = start;
            for (o, d) in out.iter_mut().zip(count) {
                *o = acc;
                acc += d as u64;
            }
        });
    (offsets, block_start)
}

/// The `degrees.len() + 1` running totals of `degrees` from 0, in `spill`
/// where given, written in one sequential pass (the pages of each block
/// released after it where spilled).
fn running_offsets<T>(
    degrees: &[u32],
    spill: Option<&crate::mem::spill::Spill>,
) -> crate::mem::Scratch<T>
where
    T: bytemuck::Pod + TryFrom<u64>,
{
    const BLOCK: usize = 1 << 20;
    let mut out: crate::mem::Scratch<T> = crate::mem::Scratch::zeroed(degrees.len() + 1, spill);
    let mut acc = 0u64;
    let mut at = 1;
    while at < out.len() {
        let end = (at + BLOCK).min(out.len());
        for (slot, &d) in out[at..end].iter_mut().zip(&degrees[at - 1..end - 1]) {
            acc += d as u64;
            *slot = T::try_from(acc).unwrap_or_else(|_| unreachable!("the total fits T"));
        }
        out.release(at..end);
        at = end;
    }
    out
}

/// How many edges ahead `transpose` fetches a list's slot (its counter twice
/// as far).
const PLACE_AHEAD: usize = 16;

#[cfg(test)]
mod tests {
    use super::{Csr, Offsets};

    #[test]
    fn offsets_are_narrow_up_to_u32_max_and_wide_beyond() {
        let max = u32::MAX as u64;
        for (last, narrow) in [(0, true), (max - 1, true), (max, true), (max + 1, false)] {
            let o = Offsets::from_ascending(vec![0, last / 2, last]);
            assert_eq!(matches!(o, Offsets::Narrow(_)), narrow, "{last}");
            assert_eq!((o.get(0), o.get(1), o.get(2)), (0, last / 2, last));
            assert_eq!((o.len(), o.bytes()), (3, if narrow { 12 } else { 24 }));
            assert!(o.ascending());
        }
        assert!(!Offsets::plain_ascending(vec![0, 5, 3]).ascending());
        assert!(!Offsets::Wide(vec![0, max + 2, max + 1].into()).ascending());
        assert!(Offsets::from_ascending(Vec::new()).is_empty());
    }

    /// The three forms read alike and compare by value.
    #[test]
    fn a_wide_csr_reads_as_the_short_and_narrow_ones() {
        let g = Csr::from_edges(4, &[(0, 1), (0, 2), (2, 3), (3, 0)]);
        assert!(matches!(g.offsets(), Offsets::Short { .. }));
        let wide: Vec<u64> = (0..=4).map(|i| g.offset(i)).collect();
        let targets = g.targets.clone();
        let w = Csr {
            offsets: Offsets::Wide(wide.clone().into()),
            targets: targets.clone(),
        };
        let narrow = wide.iter().map(|&o| o as u32).collect::<Vec<_>>();
        let n = Csr {
            offsets: Offsets::Narrow(narrow.into()),
            targets,
        };
        for c in [&w, &n] {
            assert_eq!(*c, g);
            for v in 0..4 {
                assert_eq!(c.neighbors(v), g.neighbors(v));
                assert_eq!((c.range(v), c.degree(v)), (g.range(v), g.degree(v)));
            }
        }
        let from_wide = Csr::from_parts(Offsets::Wide(wide.into()), g.targets.clone());
        assert!(matches!(from_wide.offsets(), Offsets::Short { .. }));
        assert_eq!(w.transpose(), g.transpose());
        let other = Csr::from_edges(4, &[(0, 1), (0, 2), (2, 3), (3, 1)]);
        assert_ne!(w, other);
        let shifted = Offsets::Wide(vec![0, 1, 2, 3, 4].into());
        assert_ne!(Csr::from_parts(shifted, g.targets.clone()), g);
    }

    proptest::proptest! {
        /// Rows of a few references, none, or 65,536 and more (escaped
        /// blocks, at a block's start, middle or end): every form's rows
        /// are the plain cut points' ones.
        #[test]
        fn rows_read_as_the_plain_cut_points(
            degrees in proptest::collection::vec(
                proptest::prop_oneof![
                    150 => 0u32..30,
                    50 => proptest::strategy::Just(0u32),
                    1 => 65_500u32..66_000,
                ],
                0..700,
            )
        ) {
            let mut cuts = vec![0u64];
            for &d in &degrees {
                cuts.push(cuts[cuts.len() - 1] + d as u64);
            }
            let total = cuts[cuts.len() - 1] as usize;
            let targets: Vec<u32> = (0..total as u32).collect();
            let plain = Csr {
                offsets: Offsets::plain_ascending(cuts.clone()),
                targets: targets.clone().into(),
            };
            let dir = tempfile::tempdir().unwrap();
            let spill = crate::mem::spill::Spill::open(dir.path(), 1 << 20).unwrap();
            let mut in_scratch = spill.scratch::<u32>(total);
            in_scratch.copy_from_slice(&targets);
            let forms = [
                Csr::from_offsets(cuts.clone(), targets.clone()),
                Csr::from_degrees(&degrees, targets.clone()),
                Csr::from_degrees_in(&degrees, in_scratch, Some(&spill)),
            ];
            let huge = degrees.iter().filter(|&&d| d > 60_000).count();
            if degrees.len() >= 300 && huge <= 1 {
                let short = matches!(forms[0].offsets(), Offsets::Short { .. });
                proptest::prop_assert!(short && forms[2].offsets().is_mapped());
            }
            for c in &forms {
                proptest::prop_assert_eq!(c.nodes(), degrees.len());
                for v in 0..degrees.len() {
                    let want = cuts[v] as usize..cuts[v + 1] as usize;
                    proptest::prop_assert_eq!(c.range(v as u32), want.clone());
                    proptest::prop_assert_eq!(c.neighbors(v as u32), &targets[want]);
                }
                proptest::prop_assert_eq!(c, &plain);
            }
        }
    }

    #[test]
    fn transpose_reverses_every_edge_with_sorted_sources() {
        let edges = [
            (0, 1),
            (0, 2),
            (1, 2),
            (2, 0),
            (2, 2),
            (3, 1),
            (3, 1),
            (4, 0),
        ];
        let g = Csr::from_edges(5, &edges);
        let t = g.transpose();
        assert_eq!(t.neighbors(0), &[2, 4]);
        assert_eq!(t.neighbors(1), &[0, 3, 3]);
        assert_eq!(t.neighbors(2), &[0, 1, 2]);
        assert_eq!(t.neighbors(3), &[] as &[u32]);
        assert_eq!(t.neighbors(4), &[] as &[u32]);
        assert_eq!(t.transpose(), g);
    }

    /// Several blocks of the parallel offsets and several parts of the
    /// scatter: the same lists as reversing the edges one by one.
    #[test]
    fn transpose_of_a_large_random_graph_matches_the_edge_by_edge_one() {
        let n = 200_003u32;
        let mut x = 7u64;
        let mut edges = Vec::new();
        for s in 0..n {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            for k in 0..(x >> 61) {
                // Skewed: low targets get most edges.
                let t = ((x >> (10 + k)) % (n as u64 >> (k % 8))) as u32;
                edges.push((s, t));
            }
        }
        let g = Csr::from_edges(n as usize, &edges);
        let reversed: Vec<(u32, u32)> = edges.iter().map(|&(s, t)| (t, s)).collect();
        let mut by_target = reversed.clone();
        by_target.sort_by_key(|&(t, s)| (t, s));
        let want = Csr::from_edges(n as usize, &by_target);
        assert_eq!(g.transpose(), want);
        // Any number of blocks, more than the nodes included.
        for parts in [1, 2, 3, 7, 64] {
            assert_eq!(g.transpose_in_blocks(parts, None), want, "{parts} blocks");
        }
        // Built in spill files, the same lists (and no file left behind).
        let dir = tempfile::tempdir().unwrap();
        let spill = crate::mem::spill::Spill::open(dir.path(), 1 << 20).unwrap();
        for parts in [1, 3] {
            let t = g.transpose_in_blocks(parts, Some(&spill));
            assert!(t.targets.is_mapped() && t.offsets().is_mapped());
            assert_eq!(t, want, "{parts} blocks, spilled");
        }
        assert!(spill.failure().is_none() && spill.files() > 0);
        let degrees: Vec<u32> = (0..g.nodes() as u32)
            .map(|v| g.neighbors(v).len() as u32)
            .collect();
        let mut targets = spill.scratch::<u32>(g.edges());
        targets.copy_from_slice(&g.targets.to_vec());
        let rebuilt = Csr::from_degrees_in(&degrees, targets, Some(&spill));
        assert!(rebuilt.offsets().is_mapped());
        assert_eq!(rebuilt, g);
        let tiny = Csr::from_edges(3, &[(0, 2), (2, 2), (1, 0)]);
        for parts in [1, 2, 3, 4, 9] {
            assert_eq!(tiny.transpose_in_blocks(parts, None).transpose(), tiny);
        }
        let empty = Csr::from_edges(0, &[]);
        assert_eq!(empty.transpose_in_blocks(4, None), empty.transpose());
        assert_eq!(empty.transpose().nodes(), 0);
    }
}
