//! Dominator tree from the super-root (an edge to every strongly rooted
//! object) by Semi-NCA (Georgiadis–Tarjan, as in LLVM), iterative throughout
//! so a chain of millions of objects cannot overflow the stack. Then retained
//! bytes and objects by one pass in reverse DFS preorder, and the tree's
//! preorder numbering and its inverse, which enumerate each node's children
//! (`super::children`).
//!
//! Most objects of a heap have one retainer. Call an object's *reachable
//! predecessors* its reachable retainers other than itself, each counted
//! once, plus the super-root if it is a strong root. Only objects with two
//! or more ("multi-retainer" objects) go through the sequential
//! semidominator search; the others are classified first, in parallel, and
//! skipped. This changes no result, bit for bit:
//!
//! * Let `w` have the single reachable predecessor `u`. The DFS reached `w`
//!   along an edge from a visited object other than `w`, so from `u`:
//!   `parent(w) = u`. The search would take the minimum of `parent(w)` and
//!   of `eval(pre(v))` over `w`'s reachable retainers `v`; those are `u`
//!   (and `w` itself for a self-reference), both numbered at most
//!   `pre(w)`, for which `eval` returns its argument unchanged without
//!   touching the link forest. So `semi(w) = parent(w)`, and the search
//!   for `w` writes nothing but `link[w].1 = parent(w)`. NCA then gives
//!   `idom(w) = parent(w)` (the nearest ancestor of `parent(w)` not above
//!   `semi(w)` is `parent(w)`), as it must: every path from the super-root
//!   to `w` ends with the edge from `u`.
//! * Here `link[w] = (parent(w), parent(w))` is written for every vertex
//!   before the loop, and the loop runs only over the multi-retainer
//!   vertices in the same reverse preorder. `eval` while processing `w`
//!   reads and compresses only entries numbered above `w`, which by then
//!   hold what the full loop would have left there: the skipped vertices'
//!   searches did no compression and wrote the same final `link` value. So
//!   every `eval` sees the same forest as in the full loop and returns the
//!   same semidominators, and NCA (single-retainer vertices first set to
//!   their parent, multi-retainer ones walked in preorder, their
//!   ancestors' `idom` already final) the same `idom`.
//!
//! The DFS marks what it has seen in a bitset (n/8 bytes, cache-resident)
//! rather than testing the preorder array per reference; that bitset is then
//! the reachable set the classification reads retainer lists in object order
//! against, so the classification is cheap and splits across threads. The
//! going back to object order at the end is a parallel scatter: the preorder
//! arrays are read in order and each object's values stored once at its
//! place (the preorder is a permutation). A second parallel pass reads each
//! multi-retainer object's retainers' preorder numbers and keeps only those
//! numbered above the object (for the others `eval` is the identity; their
//! minimum is taken there), so the sequential search walks a compact array
//! and touches only the link forest. The DFS, that search, NCA and the
//! bottom-up retained sums stay sequential. The preorder's inverse comes
//! last, once the preorder arrays are gone, by a parallel scatter over the
//! preorder numbers in object order: no children lists (a node's children
//! are read off the numbering, `super::children`), and no array alive but
//! the tree's own (idom, preorder numbers and their inverse, 12 bytes an
//! object, and the retained sizes in their narrowest forms, `mem::Packed`:
//! 2 or 3 bytes an object on the heaps measured, where they took 8).
//!
//! The scratch, by phase, in bytes a reachable object (`m`) or object
//! (`n`), beside the graph's arrays:
//!
//! * The search: `parent` 4 m, `pre` (each object's preorder number) 4 n,
//!   the path links 8 m, and 12 bytes a multi-retainer vertex (its number,
//!   its object and its semidominator). `vertex` (4 m) is not read there:
//!   it is dropped once `pre` is made and made again from `pre` after the
//!   search (one parallel scatter). The retainers numbered above each
//!   vertex are split out in parallel one chunk of [`SEARCH_CHUNK`]
//!   vertices ahead of the search, not all at once (on V8 they were 62
//!   MiB, the dominators' peak), and a vertex with more than [`LONG`]
//!   such retainers (a few hubs held most of them) has them read from its
//!   retainer list in the search instead of held: 16 bytes a reachable
//!   object in all, `pre` included, where the search held 16 (`vertex`,
//!   `parent`, the links) and all the lists (9 more on V8).
//! * The retained sums and their scatter: `vertex`, `idom_pre` and the
//!   objects each vertex dominates, each packed at the width of `m`
//!   (`mem::Nodes`, `mem::Bits`: 3.1 bytes a reachable object at 20 M
//!   objects, where a `u32` took 4), and the retained bytes in 4 m
//!   (`ByteSums`: a sum of 2^32 − 1 or more in a side table), summed and
//!   scattered first, alone: about 10 bytes a reachable object and the
//!   narrow results, where all four were 16 (the 1.60 GB V8 snapshot's
//!   peak until 2026-11-28).

use rayon::prelude::*;

use super::{Csr, HeapGraph, PackedRows};
use crate::mem::spill::Spill;
use crate::mem::{Bits, Nodes, Packed, Permutation, Scratch};
use crate::model::Sizes;
use crate::progress::{Cancelled, Progress, Stage};

/// `idom` of an object whose immediate dominator is the super-root.
pub const SUPER_ROOT: u32 = u32::MAX - 1;
/// `idom` of an object no strong root reaches.
pub const NOT_REACHABLE: u32 = u32::MAX;
/// [`DominatorTree::preorder_number`] of an object no strong root reaches.
pub const NOT_NUMBERED: u32 = u32::MAX;

const UNSEEN: u32 = u32::MAX;

/// The dominator tree of the heap graph, rooted at a super-root whose children are the strongly rooted objects, with every object's retained size.
#[derive(Debug, Clone, Default)]
pub struct DominatorTree {
    /// Per object: its immediate dominator, [`SUPER_ROOT`] or
    /// [`NOT_REACHABLE`] (bit-packed, `crate::mem::nodes`: 2.9–3 bytes an
    /// object on heaps of 6–10 M objects).
    pub idom: Nodes,
    /// Per object: shallow bytes of its dominator subtree (0 if
    /// unreachable), in the narrowest form their values allow (2 bytes an
    /// object on the text heap measured, 1 on the HPROF; the big
    /// subtrees' in a side table): read through
    /// [`DominatorTree::retained_bytes`].
    pub(crate) retained_bytes: Packed,
    /// Per object: objects in its dominator subtree (0 if unreachable),
    /// likewise (1 byte an object, most objects retaining fewer than 255):
    /// read through [`DominatorTree::retained_objects`].
    pub(crate) retained_objects: Packed,
    /// Per object: its number in a preorder of this tree that takes each
    /// node's children in the order of the DFS from the super-root
    /// ([`NOT_NUMBERED`] if unreachable). The subtree of `v` is numbered
    /// `preorder_number[v] .. preorder_number[v] + retained_objects[v]`, and
    /// every reachable object but the DFS's roots (strong roots) has a
    /// retainer numbered before it, its DFS parent (see `tree_numbers`).
    pub preorder_number: Nodes,
    /// Per preorder number `k < reachable_objects`: the object numbered
    /// `k` (the inverse of `preorder_number`). The children of `v` are
    /// then `at_preorder[preorder_number[v] + 1]`, each next one at the
    /// previous one's number plus its retained objects, up to the end of
    /// `v`'s range; those of the super-root from number 0 to the end (see
    /// [`DominatorTree::children`]).
    pub at_preorder: Nodes,
    /// Objects the strong roots reach.
    pub reachable_objects: u64,
    /// Shallow bytes of those objects (the super-root's retained bytes).
    pub reachable_bytes: u64,
    /// The super-root's largest children, made at the first
    /// [`DominatorTree::largest_roots`].
    pub(crate) largest_roots: std::sync::OnceLock<Vec<u32>>,
}

impl DominatorTree {
    /// Computes the tree over the graph's strong references and roots; stops when `progress` is cancelled.
    /// Where the heap is over its memory budget (the model's spill), the
    /// per-object results are written in spill files.
    pub fn compute(graph: &HeapGraph, progress: &Progress) -> Result<DominatorTree, Cancelled> {
        compute_in(
            graph.objects(),
            (&graph.dump.refs, &graph.retainers),
            graph.strong_roots_raw(),
            &graph.dump.sizes,
            progress,
            graph.dump.spill.as_deref(),
        )
    }

    /// Puts the tree's arrays on disk (`mem::spill`): what the later
    /// stages and the views read of them is read back from there.
    pub fn spill(&mut self, to: &crate::mem::spill::Spill) {
        self.idom.spill(to);
        self.retained_bytes.spill(to);
        self.retained_objects.spill(to);
        self.preorder_number.spill(to);
        self.at_preorder.spill(to);
    }

    /// Shallow bytes of `object`'s dominator subtree (0 if unreachable):
    /// one load, a binary search of a side table for the few large ones.
    #[inline]
    pub fn retained_bytes(&self, object: usize) -> u64 {
        self.retained_bytes.get(object)
    }

    /// Objects in `object`'s dominator subtree, itself included (0 if
    /// unreachable): one load, a binary search of a side table for the
    /// few that retain many.
    #[inline]
    pub fn retained_objects(&self, object: usize) -> u32 {
        // Below the object count: checked where a cache is read back.
        self.retained_objects.get(object) as u32
    }

    /// Asks the CPU for `object`'s retained objects (a hint for walks that
    /// read them at random).
    #[inline]
    pub fn prefetch_retained_objects(&self, object: usize) {
        self.retained_objects.prefetch(object);
    }

    /// The two arrays of retained sizes, bytes then objects, as they are
    /// held (their forms and bytes, for the memory account and the cache).
    pub fn retained_arrays(&self) -> (&Packed, &Packed) {
        (&self.retained_bytes, &self.retained_objects)
    }

    /// Whether a strong root reaches `object`: whether it retains anything
    /// (itself at least), which stays answered while `idom` is set aside
    /// (`super::set_aside`).
    pub fn is_reachable(&self, object: u32) -> bool {
        self.retained_objects.get(object as usize) != 0
    }

    /// The node that stands for the super-root in
    /// [`DominatorTree::children`] and its kin: the object count.
    pub fn super_root(&self) -> u32 {
        self.retained_objects.len() as u32
    }

    /// The object's chain of dominators, nearest first, ending below the
    /// super-root; empty for unreachable objects and the super-root's children.
    pub fn dominators_of(&self, object: u32) -> Vec<u32> {
        let mut path = Vec::new();
        let mut d = self.idom.get(object as usize);
        while d != SUPER_ROOT && d != NOT_REACHABLE {
            path.push(d);
            d = self.idom.get(d as usize);
        }
        path
    }

    /// Whether `a` dominates `b` (every object dominates itself).
    pub fn dominates(&self, a: u32, b: u32) -> bool {
        let mut x = b;
        loop {
            if x == a {
                return true;
            }
            match self.idom.get(x as usize) {
                SUPER_ROOT | NOT_REACHABLE => return false,
                d => x = d,
            }
        }
    }
}

/// The algorithm on plain arrays (also used by tests and benchmarks).
///
/// Phases, each a function whose scratch arrays end with it: the DFS, the
/// classification of multi-retainer objects, the semidominators, NCA, the
/// retained sums, the scatter back to object order and the preorder's
/// inverse. Each runs in a `tracing` span of target `heaptui::profile` (see
/// `crate::log`), and logs the arrays alive at its highest point (target
/// `heaptui::memory`).
pub fn compute(
    n: usize,
    refs: &Csr,
    retainers: &PackedRows,
    strong_roots: &[u32],
    sizes: &Sizes,
    progress: &Progress,
) -> Result<DominatorTree, Cancelled> {
    compute_in(n, (refs, retainers), strong_roots, sizes, progress, None)
}

/// [`compute`] with the per-object results (object order: idom, retained
/// sizes, preorder numbers and their inverse) written in `spill` where
/// given.
fn compute_in(
    n: usize,
    (refs, retainers): (&Csr, &PackedRows),
    strong_roots: &[u32],
    sizes: &Sizes,
    progress: &Progress,
    spill: Option<&Spill>,
) -> Result<DominatorTree, Cancelled> {
    progress.start(Stage::Dominators, 4);
    assert!(n < SUPER_ROOT as usize, "too many objects for u32 indices");
    let _span = tracing::debug_span!(target: "heaptui::profile", "dominators").entered();

    let Dfs {
        vertex,
        parent,
        seen,
    } = dfs(n, refs, strong_roots);
    let m = vertex.len();
    alive(
        "dfs",
        &[("vertex", bytes(&vertex)), ("parent", bytes(&parent))],
    );
    crate::mem::checkpoint("dominators: dfs");
    progress.set_done(1);
    progress.check()?;

    let root_bits = bitset(n, strong_roots);
    let multi = multi_retainer_vertices(&vertex, seen, &root_bits, retainers);
    // Per object its preorder number, for the retainers' numbers; `vertex`,
    // its inverse, is read no more until the retained sums: dropped for
    // the search, made again from `pre` after it (`vertices_of`).
    let pre = preorder_numbers(n, &vertex);
    alive(
        "preorder numbers",
        &[
            ("vertex", bytes(&vertex)),
            ("parent", bytes(&parent)),
            ("multi_pre", bytes(&multi.pre)),
            ("multi_obj", bytes(&multi.obj)),
            ("pre", pre.bytes()),
        ],
    );
    drop(vertex);
    // The classification's per-thread pieces, freed but held per thread
    // (some 20 MiB at 16 threads beside the search's links).
    crate::mem::release_free_memory();
    crate::mem::checkpoint("dominators: classified");
    let semi = semidominators(
        &parent,
        &multi,
        (&root_bits, retainers, &pre),
        (SEARCH_CHUNK, LONG),
        progress,
    )?;
    drop(root_bits);
    // The split's per-thread parts, freed but kept by the allocator.
    crate::mem::release_free_memory();
    crate::mem::checkpoint("dominators: semidominators");
    progress.set_done(2);
    progress.check()?;

    let idom_pre = nca(parent, &multi.pre, semi);
    drop(multi);
    // Packed at the width of the preorder numbers: `tree_numbers` writes
    // its numbers over it, none above `m - 1`.
    let idom_pre = Bits::pack_at(Scratch::from(idom_pre), numbers_width(m));
    let vertex = vertices_of(&pre, m);
    drop(pre);
    let ret_bytes = retained_bytes(&vertex, &idom_pre, sizes);
    alive(
        "retained",
        &[
            ("vertex", vertex.bytes()),
            ("idom_pre", idom_pre.bytes()),
            ("ret_bytes", ret_bytes.bytes()),
        ],
    );
    crate::mem::checkpoint("dominators: nca, retained");
    progress.set_done(3);

    let reachable_bytes = ret_bytes.get(0);
    let scattered = to_object_order(n, vertex, idom_pre, ret_bytes, spill);
    crate::mem::checkpoint("dominators: scatter");
    // Each array written packed (`crate::mem::nodes`): no `u32` array of
    // them beside the others.
    let idom = scattered.idom;
    let preorder_number = scattered.preorder_number;
    let at_preorder = at_preorder_of(&preorder_number, m - 1, spill);
    crate::mem::checkpoint("dominators: at preorder");
    progress.set_done(4);
    Ok(DominatorTree {
        idom,
        retained_bytes: scattered.retained_bytes,
        retained_objects: scattered.retained_objects,
        at_preorder,
        reachable_objects: (m - 1) as u64,
        reachable_bytes,
        preorder_number,
        largest_roots: Default::default(),
    })
}

/// The DFS tree from the super-root: `vertex[k]` the object numbered `k`
/// in preorder (0 = the super-root, [`SUPER_ROOT`]), `parent[k]` its DFS
/// parent's number; `seen` the reached objects as a bitset.
struct Dfs {
    vertex: Vec<u32>,
    parent: Vec<u32>,
    seen: Vec<u64>,
}

/// Phase 1: iterative DFS from the super-root. What was seen is a bitset
/// (n/8 bytes, which stays in cache), not a preorder array: the test per
/// reference is then no memory miss, and the DFS writes only its two output
/// arrays in order.
fn dfs(n: usize, refs: &Csr, strong_roots: &[u32]) -> Dfs {
    let _span = tracing::debug_span!(target: "heaptui::profile", "dfs").entered();
    let mut seen = vec![0u64; n.div_ceil(64)];
    let mut vertex: Vec<u32> = Vec::with_capacity(n + 1);
    let mut parent: Vec<u32> = Vec::with_capacity(n + 1);
    vertex.push(SUPER_ROOT);
    parent.push(0);
    let mut see = |x: u32| {
        let word = &mut seen[x as usize / 64];
        let b = 1u64 << (x % 64);
        let new = *word & b == 0;
        *word |= b;
        new
    };
    // (object, its preorder number, its next reference)
    let mut stack: Vec<(u32, u32, u64)> = Vec::new();
    for &r in strong_roots {
        if !see(r) {
            continue;
        }
        stack.push((r, vertex.len() as u32, refs.offset(r as usize)));
        vertex.push(r);
        parent.push(0);
        while let Some(top) = stack.last_mut() {
            let (v, pv, next) = *top;
            if next == refs.offset(v as usize + 1) {
                stack.pop();
                continue;
            }
            top.2 += 1;
            let w = refs.targets.get(next as usize);
            if see(w) {
                let pw = vertex.len() as u32;
                vertex.push(w);
                parent.push(pv);
                let (from, to) = (refs.offset(w as usize), refs.offset(w as usize + 1));
                if from == to {
                    continue; // a leaf: numbered, nothing to walk
                }
                stack.push((w, pw, from));
                // Its successors are visited next: start their misses
                // together rather than one after another.
                for x in refs
                    .targets
                    .row::<u32>(from as usize..to as usize)
                    .iter()
                    .take(8)
                {
                    refs.prefetch_offsets(x);
                }
            }
        }
    }
    crate::work::add((vertex.len() + refs.targets.len()) as u64);
    Dfs {
        vertex,
        parent,
        seen,
    }
}

/// The given objects as a bitset over `n` objects.
fn bitset(n: usize, members: &[u32]) -> Vec<u64> {
    let mut bits = vec![0u64; n.div_ceil(64)];
    for &r in members {
        bits[r as usize / 64] |= 1 << (r % 64);
    }
    bits
}

/// The multi-retainer vertices (see [`multi_retainer_vertices`]): their
/// preorder numbers, ascending, and their objects (the search reads their
/// retainers with `vertex` dropped), 8 bytes each.
struct Multi {
    pre: Vec<u32>,
    obj: Vec<u32>,
}

/// Phase 2: the preorder numbers, ascending, of the reachable objects with
/// more than one reachable predecessor (the super-root counting for a
/// strong root; self-references and repeated references not counting). The
/// others need no semidominator search (see the module's proof). Parallel,
/// in object order, over bitmaps that stay in cache.
fn multi_retainer_vertices(
    vertex: &[u32],
    reach: Vec<u64>,
    root_bits: &[u64],
    retainers: &PackedRows,
) -> Multi {
    let _span = tracing::debug_span!(target: "heaptui::profile", "classify").entered();
    let multi: Vec<u64> = (0..reach.len())
        .into_par_iter()
        .map(|i| {
            let mut word = 0u64;
            if reach[i] == 0 {
                return word;
            }
            let first = (i * 64) as u32;
            let last = (first + 64).min(retainers.rows() as u32);
            // The word's rows in order: found once, then by their lengths.
            for (b, row) in (0..).zip(retainers.rows_in(first..last)) {
                if reach[i] >> b & 1 == 0 {
                    continue;
                }
                let v = first + b;
                let mut count = (root_bits[i] >> b) as u32 & 1;
                let mut prev = UNSEEN;
                for u in row {
                    if u == prev || u == v {
                        continue;
                    }
                    prev = u;
                    if bit(&reach, u) {
                        count += 1;
                        if count > 1 {
                            word |= 1 << b;
                            break;
                        }
                    }
                }
            }
            word
        })
        .collect();
    drop(reach);
    let multi_pre: Vec<u32> = (1..vertex.len() as u32)
        .into_par_iter()
        .filter(|&w| bit(&multi, vertex[w as usize]))
        .collect();
    let multi_obj: Vec<u32> = multi_pre.par_iter().map(|&w| vertex[w as usize]).collect();
    tracing::debug!(
        target: "heaptui::profile",
        "dominators: {} of {} reachable objects have several reachable predecessors",
        multi_pre.len(),
        vertex.len() - 1
    );
    Multi {
        pre: multi_pre,
        obj: multi_obj,
    }
}

/// Multi-retainer vertices searched per chunk (a multiple of
/// [`SPLIT_PART`]): the retainers numbered above them are split out one
/// chunk ahead of the search, so that two chunks' lists are alive, not
/// all of them (on V8 the lists of all were 62 MiB, the search's largest
/// array).
const SEARCH_CHUNK: usize = 16 * SPLIT_PART;

/// Phase 3: the multi-retainer vertices' semidominators (in `multi.pre`'s
/// order), in reverse preorder with path compression (Semi-NCA only needs
/// the minimum semidominator on a path, not the vertex that has it). A
/// single-retainer object's semidominator is its DFS parent, so its link
/// starts final; only the multi-retainer objects are searched.
///
/// In chunks of `chunk` vertices, from the last: each chunk's retainers
/// are split ([`split_retainers`]) while the chunk after it (in preorder)
/// is searched, on another thread; the search makes the same `eval`
/// calls in the same order as one pass over all the lists. Alive: `parent`,
/// `pre` (per object), `link` (8 bytes a vertex), the multi-retainer
/// vertices' numbers, objects and semidominators (12 bytes each), and two
/// chunks' lists; `vertex` is dropped by then.
fn semidominators(
    parent: &[u32],
    multi: &Multi,
    (root_bits, retainers, pre): (&[u64], &PackedRows, &Nodes),
    (chunk, long): (usize, usize),
    progress: &Progress,
) -> Result<Vec<u32>, Cancelled> {
    let _span = tracing::debug_span!(target: "heaptui::profile", "semi").entered();
    debug_assert!(chunk.is_multiple_of(SPLIT_PART));
    let count = multi.pre.len();
    let reading = Reading {
        parent,
        multi,
        root_bits,
        retainers,
        pre,
        long,
    };
    let split = |c: usize| {
        let range = c * chunk..((c + 1) * chunk).min(count);
        split_retainers(&reading, range)
    };
    // `link[k]` = (compressed ancestor, best semi on the path).
    let mut link: Vec<(u32, u32)> = crate::mem::with_capacity(parent.len());
    link.par_extend(parent.par_iter().map(|&p| (p, p)));
    let mut semi: Vec<u32> = vec![0; count];
    let mut path: Vec<u32> = Vec::new();
    let (mut most_ends, mut most_above, mut entries, mut whole) = (0, 0, 0, 0);
    let chunks = count.div_ceil(chunk);
    let mut next = (chunks > 0).then(|| split(chunks - 1));
    for c in (0..chunks).rev() {
        let this = next.take().expect("split one chunk ahead");
        let from = c * chunk;
        let (searched, ahead) = rayon::join(
            || {
                let part = &mut semi[from..from + this.semi.len()];
                let at = (from, &multi.pre[from..], &reading);
                search(&this, at, part, &mut link, &mut path, progress)
            },
            || c.checked_sub(1).map(split),
        );
        searched?;
        let (ends, above) = this.bytes();
        let (ahead_ends, ahead_above) = ahead.as_ref().map_or((0, 0), Split::bytes);
        most_ends = most_ends.max(ends + ahead_ends);
        most_above = most_above.max(above + ahead_above);
        entries += this.entries();
        whole += this.long.len();
        next = ahead;
    }
    tracing::debug!(
        target: "heaptui::profile",
        "dominators: {entries} retainer entries numbered above their multi-retainer object \
         held, {whole} objects with more than {long} read from their retainers in the search"
    );
    alive(
        "semidominators",
        &[
            ("parent", bytes(parent)),
            ("pre", pre.bytes()),
            ("multi_pre", bytes(&multi.pre)),
            ("multi_obj", bytes(&multi.obj)),
            ("semi", bytes(&semi)),
            ("link", bytes(&link)),
            ("above_end", most_ends),
            ("above", most_above),
        ],
    );
    Ok(semi)
}

/// The search over one chunk's vertices, in reverse: `ws` the chunk's
/// preorder numbers (and those after it), `from` the chunk's first index
/// in `multi.pre` (for the progress checks); writes the chunk's
/// semidominators in `semi` and at their vertices in `link`.
fn search(
    split: &Split,
    (from, ws, reading): (usize, &[u32], &Reading),
    semi: &mut [u32],
    link: &mut [(u32, u32)],
    path: &mut Vec<u32>,
    progress: &Progress,
) -> Result<(), Cancelled> {
    let mut long = split.long.len();
    for i in (0..semi.len()).rev() {
        if (from + i).is_multiple_of(1 << 20) {
            progress.check()?;
        }
        // The links of the coming vertices' retainers, fetched a few
        // iterations before use.
        if i >= 6 {
            for &pv in split.above_of(i - 6).iter().take(6) {
                crate::mem::prefetch(&link[pv as usize]);
            }
        }
        let w = ws[i];
        if long > 0 && split.long[long - 1] as usize == i {
            long -= 1;
            let s = reading.search_long(from + i, w, link, path);
            semi[i] = s;
            link[w as usize].1 = s;
            continue;
        }
        let last_linked = w + 1;
        let mut s = split.semi[i];
        let list = split.above_of(i);
        for (k, &pv) in list.iter().enumerate() {
            // A long list: its later links too, ahead of use.
            if let Some(&ahead) = list.get(k + 8) {
                crate::mem::prefetch(&link[ahead as usize]);
            }
            let best = eval(pv, last_linked, link, path);
            if best < s {
                s = best;
            }
        }
        semi[i] = s;
        link[w as usize].1 = s;
    }
    Ok(())
}

/// Per object, its preorder number (`UNSEEN` if unreachable): the inverse
/// of `vertex`, scattered in parallel straight into its packed form (at
/// the width of the reachable count: 3.1 bytes an object at 20 M objects,
/// where a `u32` took 4 beside the search's arrays, the dominators' peak
/// on the 1.60 GB V8 snapshot).
fn preorder_numbers(n: usize, vertex: &[u32]) -> Nodes {
    Nodes::scattered(n, vertex.len() as u32, UNSEEN, None, |slots| {
        crate::mem::each_place(&vertex[1..], |k, object| slots.set(object, k as u32 + 1))
    })
}

/// `vertex` again, `m` preorder numbers (the super-root's 0 included),
/// from its inverse `pre`: a parallel scatter over the objects (the
/// numbers `1..m` are a permutation of the reachable objects), written
/// straight in packed form.
fn vertices_of(pre: &Nodes, m: usize) -> Nodes {
    let _span = tracing::debug_span!(target: "heaptui::profile", "vertices").entered();
    Nodes::scattered(m, pre.len() as u32, SUPER_ROOT, None, |slots| {
        crate::mem::invert_into(pre, UNSEEN, slots)
    })
}

/// The reachable objects in DFS preorder: `vertex` less the super-root,
/// its `k`th the object numbered `k + 1`.
struct Reached<'a>(&'a Nodes);

impl Permutation for Reached<'_> {
    fn values(&self) -> usize {
        self.0.len() - 1
    }
    #[inline]
    fn at(&self, i: usize) -> Option<u32> {
        self.0.get_checked(i + 1)
    }
    fn run(&self, range: std::ops::Range<usize>) -> impl Iterator<Item = u32> {
        self.0.range(range.start + 1..range.end + 1)
    }
}

/// The width of `m` preorder numbers' packed arrays: each number, and
/// each count of vertices below one, is below `m`.
fn numbers_width(m: usize) -> u32 {
    crate::mem::bits::width_of((m - 1) as u32)
}

/// One chunk's multi-retainer vertices' retainers, split for the
/// sequential search: `semi[i]` the minimum over those numbered at most
/// the vertex (with its DFS parent, and 0 for a strong root), and
/// [`Split::above_of`]`(i)` the preorder numbers of the others, in list
/// order. Those stay in the parts the threads made, [`SPLIT_PART`]
/// vertices each (copied end to end they were held twice at the copy).
struct Split {
    semi: Vec<u32>,
    /// The vertices (ascending) with more than [`LONG`] retainers numbered
    /// above them: none held, their retainers read in the search.
    long: Vec<u32>,
    /// Per part: each vertex's end in the part's list, and the list.
    parts: Vec<(Vec<u32>, Vec<u32>)>,
}

/// Multi-retainer vertices per part of a [`Split`] (a power of two).
const SPLIT_PART: usize = 4096;

impl Split {
    /// The preorder numbers of vertex `i`'s retainers numbered above it.
    #[inline]
    fn above_of(&self, i: usize) -> &[u32] {
        let (ends, above) = &self.parts[i / SPLIT_PART];
        let k = i % SPLIT_PART;
        let from = if k == 0 { 0 } else { ends[k - 1] as usize };
        &above[from..ends[k] as usize]
    }

    /// The bytes of its lists' ends and entries.
    fn bytes(&self) -> (usize, usize) {
        self.parts
            .iter()
            .fold((0, 0), |(e, a), p| (e + bytes(&p.0), a + bytes(&p.1)))
    }

    /// Its lists' entries.
    fn entries(&self) -> usize {
        self.parts.iter().map(|p| p.1.len()).sum()
    }
}

/// A multi-retainer vertex's retainers numbered above it held at most
/// this many: a vertex with more (on V8 a few hubs had most of the 56 MiB
/// of such entries) has them read from its retainer list in the search
/// ([`Reading::search_long`]), once, in the same order.
const LONG: usize = 256;

/// What the split and the search read: the DFS parents, the
/// multi-retainer vertices, the strong roots (a bitset), the retainers and
/// the objects' preorder numbers.
struct Reading<'a> {
    parent: &'a [u32],
    multi: &'a Multi,
    root_bits: &'a [u64],
    retainers: &'a PackedRows,
    pre: &'a Nodes,
    /// Held lists' most entries ([`LONG`]; other values in tests).
    long: usize,
}

impl Reading<'_> {
    /// The semidominator search's start for multi-retainer vertex `i`,
    /// numbered `w`: 0 for a strong root, else its DFS parent.
    #[inline]
    fn start(&self, i: usize, w: u32) -> u32 {
        if bit(self.root_bits, self.multi.obj[i]) {
            0
        } else {
            self.parent[w as usize]
        }
    }

    /// The search for a vertex with a [`LONG`] list: its retainers read
    /// in list order, those numbered at most `w` taken in the minimum
    /// (`eval` returns them unchanged), `eval` called on the others in
    /// the same order as from a held list, their links fetched a few
    /// ahead through a small buffer. Returns its semidominator.
    fn search_long(&self, i: usize, w: u32, link: &mut [(u32, u32)], path: &mut Vec<u32>) -> u32 {
        const AHEAD: usize = 8;
        let mut s = self.start(i, w);
        let mut ring = [0u32; AHEAD];
        let mut held = 0usize;
        for u in self.retainers.row(self.multi.obj[i]) {
            let pu = self.pre.get(u as usize);
            if pu == UNSEEN {
                continue;
            }
            if pu <= w {
                s = s.min(pu);
                continue;
            }
            if held >= AHEAD {
                s = s.min(eval(ring[held % AHEAD], w + 1, link, path));
            }
            crate::mem::prefetch(&link[pu as usize]);
            ring[held % AHEAD] = pu;
            held += 1;
        }
        for k in held.saturating_sub(AHEAD)..held {
            s = s.min(eval(ring[k % AHEAD], w + 1, link, path));
        }
        s
    }
}

/// `eval` of a retainer numbered at most `w` returns its own number and
/// touches nothing, so their minimum is taken here, in parallel; the
/// sequential pass then makes the same `eval` calls in the same order as
/// the full search and gets the same semidominators. Over the
/// multi-retainer vertices `range`.
fn split_retainers(reading: &Reading, range: std::ops::Range<usize>) -> Split {
    let first = range.start;
    let parts: Vec<Part> = range
        .step_by(SPLIT_PART)
        .collect::<Vec<usize>>()
        .into_par_iter()
        // Each part's list is made in the thread's buffer and copied to a
        // block of its size: grown in place, the lists' regrowth left
        // their dropped blocks in the allocator's arenas, beside them.
        .map_init(Vec::new, |above: &mut Vec<u32>, from| {
            let to = (from + SPLIT_PART).min(reading.multi.pre.len());
            split_part(reading, from..to, first, above)
        })
        .collect();
    let mut split = Split {
        semi: Vec::with_capacity(parts.iter().map(|p| p.start.len()).sum()),
        long: Vec::new(),
        parts: Vec::with_capacity(parts.len()),
    };
    for part in parts {
        split.semi.extend_from_slice(&part.start);
        split.long.extend_from_slice(&part.long);
        split.parts.push((part.ends, part.list));
    }
    split
}

/// One part of a [`Split`] as a thread makes it: its vertices' starts,
/// list ends, list and [`LONG`] vertices (numbered from the chunk's first).
struct Part {
    start: Vec<u32>,
    ends: Vec<u32>,
    list: Vec<u32>,
    long: Vec<u32>,
}

/// One part of [`split_retainers`], the vertices `range` (a chunk's
/// from `first`), its list copied out of `above`.
fn split_part(
    reading: &Reading,
    range: std::ops::Range<usize>,
    first: usize,
    above: &mut Vec<u32>,
) -> Part {
    let Reading {
        multi,
        retainers,
        pre,
        ..
    } = *reading;
    let mut start = Vec::with_capacity(range.len());
    let mut ends = Vec::with_capacity(range.len());
    let mut long = Vec::new();
    above.clear();
    for i in range.clone() {
        if let Some(&next) = multi.obj.get(i + 4).filter(|_| i + 4 < range.end) {
            retainers.prefetch(next);
        }
        let w = multi.pre[i];
        let mut s = reading.start(i, w);
        let held = above.len();
        for u in retainers.row(multi.obj[i]) {
            let pu = pre.get(u as usize);
            if pu == UNSEEN {
                continue; // unreachable retainers do not count
            }
            if pu <= w {
                s = s.min(pu);
            } else if above.len() - held < reading.long {
                above.push(pu);
            } else {
                // Read again in the search, whole.
                above.truncate(held);
                long.push((i - first) as u32);
                break;
            }
        }
        start.push(s);
        ends.push(above.len() as u32);
    }
    Part {
        start,
        ends,
        list: above.to_vec(),
        long,
    }
}

/// Phase 4, NCA: idom (in preorder numbers) is the nearest ancestor of the
/// DFS parent not below semi; a single-retainer object's is its parent.
fn nca(parent: Vec<u32>, multi_pre: &[u32], semi: Vec<u32>) -> Vec<u32> {
    let _span = tracing::debug_span!(target: "heaptui::profile", "nca").entered();
    let mut idom_pre: Vec<u32> = parent;
    let mut steps = multi_pre.len() as u64;
    for (i, &w) in multi_pre.iter().enumerate() {
        let mut d = idom_pre[w as usize];
        while d > semi[i] {
            d = idom_pre[d as usize];
            if crate::work::COUNTED {
                steps += 1;
            }
        }
        idom_pre[w as usize] = d;
    }
    crate::work::add(steps);
    idom_pre
}

/// Phase 5: retained bytes per preorder number, bottom-up in reverse
/// preorder (number 0, the super-root, holds the reachable total).
fn retained_bytes(vertex: &Nodes, idom_pre: &Bits, sizes: &Sizes) -> ByteSums {
    let _span = tracing::debug_span!(target: "heaptui::profile", "retained").entered();
    let m = vertex.len();
    let mut ret_bytes = ByteSums::new(m, |k| match k {
        0 => 0,
        k => sizes.get(vertex.get(k) as usize),
    });
    for w in (1..m).rev() {
        ret_bytes.add_to(idom_pre.get(w) as usize, w);
    }
    ret_bytes
}

/// Phase 5, once the retained bytes are scattered: per preorder number,
/// the vertices it dominates besides itself (its retained objects less
/// one; the super-root's, all `m - 1`), bottom-up in reverse preorder,
/// packed at `idom_pre`'s width.
fn dominated(idom_pre: &Bits) -> Bits {
    let _span = tracing::debug_span!(target: "heaptui::profile", "dominated").entered();
    let m = idom_pre.len();
    let mut below = Bits::zeroed(m, idom_pre.width());
    let mut counts = below.edit();
    for w in (1..m).rev() {
        let d = idom_pre.get(w) as usize;
        counts.set(d, counts.get(d) + counts.get(w) + 1);
    }
    below
}

/// Retained bytes per preorder number, summed in 4 bytes each: a sum of
/// [`ByteSums::WIDE`] or more is marked so, and held in a side table
/// (none on the heaps measured, whose total is under 4 GiB; a heap over
/// it has there the few ancestors of its large subtrees). Half the bytes
/// of `u64` sums (8 bytes an object where the retained sums and their
/// scatter set the dominators' peak), for one compare per step.
struct ByteSums {
    /// Per preorder number: the sum, or [`ByteSums::WIDE`] where it is in
    /// `wide`.
    narrow: Vec<u32>,
    /// The sums of [`ByteSums::WIDE`] or more, by preorder number.
    wide: std::collections::HashMap<u32, u64>,
}

impl ByteSums {
    /// The mark of a sum held in the side table.
    const WIDE: u32 = u32::MAX;

    /// `m` sums, the `k`th `first(k)`, made in parallel.
    fn new(m: usize, first: impl Fn(usize) -> u64 + Sync) -> ByteSums {
        let mut narrow: Vec<u32> = crate::mem::with_capacity(m);
        narrow.par_extend(
            (0..m)
                .into_par_iter()
                .map(|k| first(k).try_into().unwrap_or(Self::WIDE)),
        );
        let wide = (0..m)
            .filter(|&k| narrow[k] == Self::WIDE)
            .map(|k| (k as u32, first(k)))
            .collect();
        ByteSums { narrow, wide }
    }

    /// The `k`th sum.
    #[inline]
    fn get(&self, k: usize) -> u64 {
        match self.narrow[k] {
            Self::WIDE => self.wide[&(k as u32)],
            s => u64::from(s),
        }
    }

    /// Adds the `w`th sum to the `d`th.
    #[inline]
    fn add_to(&mut self, d: usize, w: usize) {
        let sum = u64::from(self.narrow[d]) + u64::from(self.narrow[w]);
        if sum < u64::from(Self::WIDE) {
            self.narrow[d] = sum as u32;
        } else {
            // One of them wide, or their sum.
            let sum = self.get(d) + self.get(w);
            self.narrow[d] = Self::WIDE;
            self.wide.insert(d as u32, sum);
        }
    }

    /// The bytes held: the narrow sums and the side table's entries.
    fn bytes(&self) -> usize {
        bytes(&self.narrow) + self.wide.capacity() * 16
    }
}

/// The per-object results.
struct ObjectOrder {
    idom: Nodes,
    retained_objects: Packed,
    retained_bytes: Packed,
    preorder_number: Nodes,
}

/// Phase 6: back to object order, scattered from preorder space: each
/// reachable object's idom, retained sizes and tree preorder number
/// ([`tree_numbers`]) are read in preorder, sequentially, and stored at the
/// object's index (`vertex` is a permutation, so each slot is written
/// once); in parallel over blocks of preorder numbers. A gather in object
/// order instead read the arrays at random per object. In pieces, one array
/// at a time, each preorder array dropped once scattered: the retained
/// bytes first (4 bytes a reachable object in preorder), alone, the
/// objects each vertex dominates summed only then ([`dominated`]), the
/// tree numbers last, written over `idom_pre` and those counts. The
/// retained sizes go straight into their narrow forms
/// ([`Packed::scattered`]: counted in preorder, then cut and scattered, the
/// few large values gathered into a side table), and `idom` and the tree
/// numbers into their packed ones ([`Nodes::scattered`]): no `u32`/`u64`
/// array in object order is made first. The preorder arrays are packed
/// at the width of `m` (`vertex` at that of `n`): the most alive here is
/// at the idom's scatter, three of them (`vertex`, `idom_pre`, the
/// dominated counts: 9.4 bytes a reachable object at 20 M objects) and
/// three results, where the four `u32` arrays the retained bytes' scatter
/// held (16 bytes) were the 1.60 GB V8 snapshot's peak until 2026-11-28.
/// In `spill` where given, each result's written pages released as it is
/// done, so that at most one is resident.
fn to_object_order(
    n: usize,
    vertex: Nodes,
    idom_pre: Bits,
    ret_bytes: ByteSums,
    spill: Option<&Spill>,
) -> ObjectOrder {
    let _span = tracing::debug_span!(target: "heaptui::profile", "object order").entered();
    // Preorder number 0, the super-root, is no object.
    let places = Reached(&vertex);
    let retained_bytes = Packed::scattered(
        "dominators: retained bytes",
        n,
        &places,
        &|k| ret_bytes.get(k + 1),
        spill,
    );
    let preorder = [("vertex", vertex.bytes()), ("idom_pre", idom_pre.bytes())];
    alive(
        "scatter retained bytes",
        &[
            preorder[0],
            preorder[1],
            ("ret_bytes", ret_bytes.bytes()),
            ("retained_bytes", retained_bytes.bytes()),
        ],
    );
    drop(ret_bytes);
    crate::mem::checkpoint("dominators: scatter retained bytes");
    let below = dominated(&idom_pre);
    let retained_objects = Packed::scattered(
        "dominators: retained objects",
        n,
        &places,
        &|k| u64::from(below.get(k + 1)) + 1,
        spill,
    );
    crate::mem::checkpoint("dominators: scatter retained objects");
    let idom = scatter(
        n,
        n,
        &vertex,
        NOT_REACHABLE,
        spill,
        &|w| match idom_pre.get(w) {
            0 => SUPER_ROOT,
            d => vertex.get(d as usize),
        },
    );
    let done = [
        ("retained_bytes", retained_bytes.bytes()),
        ("retained_objects", retained_objects.bytes()),
        ("idom", idom.bytes()),
    ];
    alive(
        "scatter idom",
        &[
            preorder[0],
            preorder[1],
            ("dominated", below.bytes()),
            done[0],
            done[1],
            done[2],
        ],
    );
    crate::mem::checkpoint("dominators: scatter idom");
    let numbers = tree_numbers(idom_pre, below);
    let preorder_number = scatter(n, numbers.len(), &vertex, NOT_NUMBERED, spill, &|w| {
        numbers.get(w)
    });
    alive(
        "scatter preorder numbers",
        &[
            preorder[0],
            ("numbers", numbers.bytes()),
            done[0],
            done[1],
            done[2],
            ("preorder_number", preorder_number.bytes()),
        ],
    );
    ObjectOrder {
        idom,
        retained_objects,
        retained_bytes,
        preorder_number,
    }
}

/// An array in object order (`fill` where no reachable object is) with
/// each reachable object's `value` of its preorder number (below `bound`,
/// or a sentinel), scattered in parallel over blocks of preorder numbers
/// straight into its packed form ([`Nodes::scattered`]).
fn scatter(
    n: usize,
    bound: usize,
    vertex: &Nodes,
    fill: u32,
    spill: Option<&Spill>,
    value: &(dyn Fn(usize) -> u32 + Sync),
) -> Nodes {
    Nodes::scattered(n, bound as u32, fill, spill, |slots| {
        crate::mem::each_place(&Reached(vertex), |k, object| {
            slots.set(object, value(k + 1))
        })
    })
}

/// Phase 6, beside: per DFS preorder number, the object's number in the
/// dominator tree's preorder that takes each node's children in DFS
/// preorder ([`DominatorTree::preorder_number`]; entry 0, the super-root,
/// unused): one pass in DFS preorder, which meets each node's children in
/// that order, each child numbered at its parent's next free number. Every
/// reachable object's DFS parent `p` is then numbered before it: either `p`
/// is its idom `d`, or `p` is in the subtree of a child `c` of `d` other
/// than the object (`d` dominates `p`, and what the object dominates comes
/// after it in the DFS), and `c`, which dominates `p`, comes before `p` in
/// the DFS and so before the object: its whole subtree is numbered first.
///
/// In place: the numbers are written over `idom_pre` and the next free
/// numbers over `below` (the vertices each dominates besides itself: step
/// `w` reads `idom_pre[w]` and `below[w]`, which no earlier step wrote, and
/// writes entry `w` and the entries of `w`'s idom, numbered before `w` and
/// read no more as `idom_pre` or `below`); no scratch array. Every value
/// written is below `m`, within the width both were packed at.
fn tree_numbers(idom_pre: Bits, below: Bits) -> Bits {
    let _span = tracing::debug_span!(target: "heaptui::profile", "tree numbers").entered();
    let m = idom_pre.len();
    let mut numbers = idom_pre;
    let mut number = numbers.edit();
    // Per node, the number its next child takes; the super-root's first is 0.
    let mut below = below;
    let mut next = below.edit();
    next.set(0, 0);
    for w in 1..m {
        let d = number.get(w) as usize;
        let size = next.get(w) + 1;
        let t = next.get(d);
        number.set(w, t);
        next.set(d, t + size);
        next.set(w, t + 1);
    }
    numbers
}

/// Phase 7: [`DominatorTree::at_preorder`], the inverse of the tree's
/// preorder numbering, by a parallel scatter over `preorder_number` in
/// object order (each reachable object stores its index at its number; the
/// numbers are a permutation of `0..reachable`), written straight in its
/// packed form ([`Nodes::scattered`]). Built once the preorder arrays are
/// gone: the tree's results are then all that is alive, all packed.
pub(super) fn at_preorder_of(
    preorder_number: &(impl crate::mem::Permutation + ?Sized),
    reachable: usize,
    spill: Option<&Spill>,
) -> Nodes {
    let _span = tracing::debug_span!(target: "heaptui::profile", "at preorder").entered();
    let bound = preorder_number.values() as u32;
    let at = Nodes::scattered(reachable, bound, SUPER_ROOT, spill, |slots| {
        crate::mem::invert_into(preorder_number, NOT_NUMBERED, slots)
    });
    alive("at preorder", &[("at_preorder", at.bytes())]);
    at
}

/// The bytes of an array's values.
fn bytes<T>(values: &[T]) -> usize {
    std::mem::size_of_val(values)
}

/// Logs (target `heaptui::memory`, when on) the arrays of a step of the
/// dominators alive at its highest point, beside the graph's: where the
/// peak of the dominators is and what makes it.
fn alive(step: &str, arrays: &[(&str, usize)]) {
    crate::mem::arrays_alive(&format!("dominators: {step}"), arrays);
}

#[inline]
fn bit(bits: &[u64], i: u32) -> bool {
    bits[i as usize / 64] >> (i % 64) & 1 != 0
}

/// The minimum semidominator on the compressed forest path from `v` up to
/// (not including) the first unlinked ancestor; compresses the path. An
/// unlinked `v` is its own semidominator.
#[inline]
fn eval(v: u32, last_linked: u32, link: &mut [(u32, u32)], path: &mut Vec<u32>) -> u32 {
    if v < last_linked {
        return v;
    }
    let (anc, best) = link[v as usize];
    if anc < last_linked {
        return best;
    }
    path.clear();
    let mut x = v;
    while link[x as usize].0 >= last_linked {
        path.push(x);
        x = link[x as usize].0;
    }
    crate::work::add(path.len() as u64);
    // x's ancestor is unlinked; fold the minimum downwards.
    let mut p = x;
    while let Some(y) = path.pop() {
        let (p_anc, p_best) = link[p as usize];
        let entry = &mut link[y as usize];
        entry.0 = p_anc;
        if p_best < entry.1 {
            entry.1 = p_best;
        }
        p = y;
    }
    link[v as usize].1
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// A pseudo-random graph of `n` objects, about `degree` references
    /// each, some to a few hubs (so that some vertices have long lists of
    /// retainers numbered above them), and its roots.
    fn graph(n: usize, degree: u64, seed: u64) -> (Csr, PackedRows, Vec<u32>) {
        let mut x = seed | 1;
        let mut next = move |below: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % below
        };
        let mut offsets = vec![0u64];
        let mut targets = Vec::new();
        for _ in 0..n {
            let mut row: Vec<u32> = (0..next(2 * degree + 1))
                .map(|_| match next(10) {
                    0 => next(4) as u32,
                    _ => next(n as u64) as u32,
                })
                .collect();
            row.sort_unstable();
            targets.extend_from_slice(&row);
            offsets.push(targets.len() as u64);
        }
        let refs = Csr::from_offsets(offsets, targets);
        let retainers = PackedRows::from_csr(&refs.transpose());
        let roots: Vec<u32> = (0..n as u32).filter(|_| next(50) == 0).collect();
        (refs, retainers, roots)
    }

    /// The semidominators with the given chunk and held list's most
    /// entries, and the count of multi-retainer vertices.
    fn semis(
        g: &(Csr, PackedRows, Vec<u32>),
        n: usize,
        (chunk, long): (usize, usize),
    ) -> (Vec<u32>, usize) {
        let (refs, retainers, roots) = g;
        let Dfs {
            vertex,
            parent,
            seen,
        } = dfs(n, refs, roots);
        let root_bits = bitset(n, roots);
        let multi = multi_retainer_vertices(&vertex, seen, &root_bits, retainers);
        let pre = preorder_numbers(n, &vertex);
        let progress = Progress::default();
        let semi = semidominators(
            &parent,
            &multi,
            (&root_bits, retainers, &pre),
            (chunk, long),
            &progress,
        )
        .unwrap();
        (semi, multi.pre.len())
    }

    /// Several chunks, the next split beside each search, and lists read
    /// whole in the search, give the semidominators of one held pass over
    /// all the lists.
    #[test]
    fn chunks_and_long_lists_give_the_same_semidominators() {
        let n = 40_000;
        let g = graph(n, 3, 0x9e37_79b9_7f4a_7c15);
        let (one_pass, multi) = semis(&g, n, (SPLIT_PART << 10, usize::MAX));
        assert!(multi > 3 * SPLIT_PART, "{multi} multi-retainer vertices");
        for long in [0, 1, 3, LONG] {
            assert_eq!(semis(&g, n, (SPLIT_PART, long)).0, one_pass, "long {long}");
        }
    }

    /// `vertices_of` inverts `preorder_numbers`.
    #[test]
    fn vertices_from_preorder_numbers() {
        let n = 5_000;
        let (refs, _, roots) = graph(n, 1, 7);
        let vertex = dfs(n, &refs, &roots).vertex;
        let pre = preorder_numbers(n, &vertex);
        assert_eq!(vertices_of(&pre, vertex.len()).to_vec(), vertex);
    }

    /// Sums of sizes near and over `u32::MAX` up a random tree.
    fn sizes_and_tree() -> impl Strategy<Value = (Vec<u64>, Vec<u32>)> {
        let size = prop_oneof![
            0u64..1000,
            (u64::from(u32::MAX) - 1000)..(u64::from(u32::MAX) + 1000),
            0u64..(1 << 40),
        ];
        proptest::collection::vec((size, any::<u32>()), 1..200).prop_map(|v| {
            let sizes = v.iter().map(|p| p.0).collect();
            // Each number's parent numbered before it (0 for the first).
            let tree = (0..v.len())
                .map(|k| if k == 0 { 0 } else { v[k].1 % k as u32 })
                .collect();
            (sizes, tree)
        })
    }

    proptest! {
        /// [`ByteSums`] sums as `u64`s do.
        #[test]
        fn byte_sums_agree_with_u64((sizes, tree) in sizes_and_tree()) {
            let mut want = sizes.clone();
            let mut got = ByteSums::new(sizes.len(), |k| sizes[k]);
            for w in (1..sizes.len()).rev() {
                let d = tree[w] as usize;
                want[d] += want[w];
                got.add_to(d, w);
            }
            for (k, &s) in want.iter().enumerate() {
                prop_assert_eq!(got.get(k), s);
            }
        }
    }
}
