//! Compressed sparse rows: the adjacency of `n` nodes as one offsets array
//! (u64, `n + 1` entries) and one targets array of dense u32 indices.

use rayon::prelude::*;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Csr {
    pub offsets: Vec<u64>,
    pub targets: Vec<u32>,
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
        Csr { offsets, targets }
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
        Csr { offsets, targets }
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

    #[inline]
    pub fn degree(&self, node: u32) -> usize {
        let i = node as usize;
        (self.offsets[i + 1] - self.offsets[i]) as usize
    }

    /// The reverse adjacency (for every edge `u → v`, an edge `v → u`), with
    /// each node's sources in ascending order. Parallel counting sort.
    pub fn transpose(&self) -> Csr {
        let n = self.nodes();
        let counts: Vec<std::sync::atomic::AtomicU32> = (0..n)
            .into_par_iter()
            .map(|_| std::sync::atomic::AtomicU32::new(0))
            .collect();
        self.targets.par_iter().for_each(|&t| {
            counts[t as usize].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        });
        let mut offsets = Vec::with_capacity(n + 1);
        let mut acc = 0u64;
        offsets.push(0);
        for c in &counts {
            acc += c.load(std::sync::atomic::Ordering::Relaxed) as u64;
            offsets.push(acc);
        }
        drop(counts);
        // Sequential fill keeps sources sorted and is cache-friendly enough:
        // sources are visited in order, targets are scattered.
        let mut fill: Vec<u64> = offsets[..n].to_vec();
        let mut targets = vec![0u32; self.targets.len()];
        for u in 0..n {
            for &v in self.neighbors(u as u32) {
                let slot = &mut fill[v as usize];
                targets[*slot as usize] = u as u32;
                *slot += 1;
            }
        }
        Csr { offsets, targets }
    }
}
