//! Compressed sparse rows: the adjacency of `n` nodes as one offsets array
//! (u64, `n + 1` entries) and one targets array of dense u32 indices.

use rayon::prelude::*;

use crate::mem::Array;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Csr {
    pub offsets: Array<u64>,
    pub targets: Array<u32>,
}

impl Csr {
    /// Builds from per-node degrees and the targets laid out in node order.
    pub fn from_degrees(degrees: &[u32], targets: Vec<u32>) -> Csr {
        let mut offsets = Vec::with_capacity(degrees.len() + 1);
        let mut acc = 0u64;
        offsets.push(0);
        for &d in degrees {
            acc += d as u64;
            offsets.push(acc);
        }
        assert_eq!(acc as usize, targets.len(), "degrees must sum to targets");
        Csr {
            offsets: offsets.into(),
            targets: targets.into(),
        }
    }

    /// Builds from an edge list, keeping for each source the edges' order.
    pub fn from_edges(nodes: usize, edges: &[(u32, u32)]) -> Csr {
        let mut degrees = vec![0u32; nodes];
        for &(s, _) in edges {
            degrees[s as usize] += 1;
        }
        let mut offsets = Vec::with_capacity(nodes + 1);
        let mut acc = 0u64;
        offsets.push(0);
        for &d in &degrees {
            acc += d as u64;
            offsets.push(acc);
        }
        let mut fill: Vec<u64> = offsets[..nodes].to_vec();
        let mut targets = vec![0u32; edges.len()];
        for &(s, t) in edges {
            targets[fill[s as usize] as usize] = t;
            fill[s as usize] += 1;
        }
        Csr {
            offsets: offsets.into(),
            targets: targets.into(),
        }
    }

    pub fn nodes(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    pub fn edges(&self) -> usize {
        self.targets.len()
    }

    #[inline]
    pub fn neighbors(&self, node: u32) -> &[u32] {
        let i = node as usize;
        &self.targets[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// Hints the CPU to fetch `node`'s entry of the offsets, for a later
    /// `neighbors(node)`.
    #[inline]
    pub fn prefetch_offsets(&self, node: u32) {
        crate::mem::prefetch(&self.offsets[node as usize]);
    }

    /// Hints the CPU to fetch the start of `node`'s targets (its offsets
    /// entry should be in cache already, see `prefetch_offsets`).
    #[inline]
    pub fn prefetch_targets(&self, node: u32) {
        if let Some(t) = self.targets.get(self.offsets[node as usize] as usize) {
            crate::mem::prefetch(t);
        }
    }

    #[inline]
    pub fn degree(&self, node: u32) -> usize {
        let i = node as usize;
        (self.offsets[i + 1] - self.offsets[i]) as usize
    }

    /// The reverse adjacency (for every edge `u → v`, an edge `v → u`), with
    /// each node's sources in ascending order. A parallel counting sort:
    /// each thread takes a contiguous range of sources and writes into its own
    /// part of every target's list, so the result is deterministic.
    pub fn transpose(&self) -> Csr {
        let n = self.nodes();
        let edges = self.targets.len() as u64;
        let parts = rayon::current_num_threads().clamp(1, 8);
        // Source ranges with about equal numbers of edges.
        let mut bounds = vec![0usize];
        for p in 1..parts {
            let want = edges * p as u64 / parts as u64;
            bounds.push(self.offsets.partition_point(|&o| o < want).min(n));
        }
        bounds.push(n);
        let ranges: Vec<(usize, usize)> =
            bounds.windows(2).map(|w| (w[0], w[1].max(w[0]))).collect();
        let mut cursors: Vec<Vec<u32>> = ranges
            .par_iter()
            .map(|&(from, to)| {
                let mut count = crate::mem::filled(n, 0u32);
                for &v in &self.targets[self.offsets[from] as usize..self.offsets[to] as usize] {
                    count[v as usize] += 1;
                }
                count
            })
            .collect();
        // Offsets, and each part's first slot in every list (64-bit slots are
        // kept as offsets within the list so cursors stay u32).
        // In parallel over blocks of nodes: each block's in-degrees and
        // cursors, then the blocks' totals summed in order, then offsets.
        const BLOCK: usize = 1 << 16;
        let mut degree: Vec<u32> = crate::mem::filled(n, 0u32);
        {
            let mut columns: Vec<&mut [u32]> = cursors.iter_mut().map(|c| &mut c[..]).collect();
            let mut per_block: Vec<Vec<&mut [u32]>> = Vec::with_capacity(n.div_ceil(BLOCK));
            let mut start = 0;
            while start < n {
                let len = BLOCK.min(n - start);
                per_block.push(
                    columns
                        .iter_mut()
                        .map(|c| {
                            let (head, tail) = std::mem::take(c).split_at_mut(len);
                            *c = tail;
                            head
                        })
                        .collect(),
                );
                start += len;
            }
            per_block
                .into_par_iter()
                .zip(degree.par_chunks_mut(BLOCK))
                .for_each(|(mut parts, degree)| {
                    for (v, d) in degree.iter_mut().enumerate() {
                        let mut within = 0u32;
                        for c in parts.iter_mut() {
                            let k = c[v];
                            c[v] = within;
                            within += k;
                        }
                        *d = within;
                    }
                });
        }
        let block_totals: Vec<u64> = degree
            .par_chunks(BLOCK)
            .map(|b| b.iter().map(|&d| d as u64).sum())
            .collect();
        let mut offsets: Vec<u64> = crate::mem::filled(n + 1, 0u64);
        let mut block_start = Vec::with_capacity(block_totals.len());
        let mut acc = 0u64;
        for t in &block_totals {
            block_start.push(acc);
            acc += t;
        }
        offsets[n] = acc;
        offsets[..n]
            .par_chunks_mut(BLOCK)
            .zip(degree.par_chunks(BLOCK))
            .zip(block_start)
            .for_each(|((out, degree), mut acc)| {
                for (o, &d) in out.iter_mut().zip(degree) {
                    *o = acc;
                    acc += d as u64;
                }
            });
        drop(degree);
        let mut targets: Vec<u32> = crate::mem::filled(self.targets.len(), 0u32);
        {
            let out = crate::mem::as_atomic(&mut targets);
            let offsets = &offsets;
            ranges
                .par_iter()
                .zip(cursors.par_iter_mut())
                .for_each(|(&(from, to), cursor)| {
                    for u in from..to {
                        for &v in self.neighbors(u as u32) {
                            let slot = &mut cursor[v as usize];
                            // Disjoint slots per part: relaxed stores suffice.
                            out[(offsets[v as usize] + *slot as u64) as usize]
                                .store(u as u32, std::sync::atomic::Ordering::Relaxed);
                            *slot += 1;
                        }
                    }
                });
        }
        Csr {
            offsets: offsets.into(),
            targets: targets.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Csr;

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
    }
}
