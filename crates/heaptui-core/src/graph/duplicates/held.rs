//! Held duplicates (docs/duplicates.md): set S is fully held by set H when no member
//! of S is reachable from a strong root without passing through a member of
//! H. A set's `held_by` lists its direct holders (those holding no other of
//! its holders), its `holding_set` is the outermost holder, made from the
//! direct holders' own ([`holding_sets`]). Exact, and local in practice:
//!
//! - Candidates. If H holds S, every root path to a member s of S contains a
//!   member of H; so the holders of S are among the sets met on one root path
//!   to one member (taken greedily towards the roots: each step goes to the
//!   retainer earliest in the dominator tree's preorder numbering,
//!   [`DominatorTree::preorder_number`], which strictly decreases: every
//!   reachable object but the DFS's roots has a retainer numbered before
//!   it). That step is computed once per object on the paths, before the
//!   checks, in parallel ([`UpSteps::new`]): walking it per set would scan
//!   a hub's retainers (a V8 hidden class has millions) for every set whose
//!   path crosses the hub. Only the objects on the paths walked get a step:
//!   every path starts at a set's first member, so they are the objects on
//!   the greedy paths from those (15,178 of the 10.1 M text heap's objects,
//!   1.25 M of the 406 MB HPROF's 9.76 M). The index is a bit an object
//!   (which objects are on a path, with a `u32` of rank a 64 objects:
//!   0.19 bytes an object) and 4 bytes an object on a path (its step, at
//!   its rank), beside the tree's numbering and the sets' member index
//!   (`sets::MemberIndex`, a bit an object); a step of every object took 4
//!   bytes an object. What a path then keeps per object (`up`) is the next
//!   set member on its path, so a path passes the objects in no set once
//!   for all the sets whose paths cross them (the leaves of a long list
//!   that is no set: each leaf's path would walk the list).
//! - Check, per candidate H and member s: "s reachable avoiding H" (RA) by a
//!   backward search that jumps up the dominator tree. If d dominates u then
//!   RA(u) implies RA(d); and if no member of H lies in d's dominator subtree,
//!   RA(d) implies RA(u) too (every root path to u enters the subtree at d
//!   and stays inside after its last visit to d). So the search replaces u by
//!   its highest dominator whose subtree has no H member (an interval query
//!   on that same numbering), stops as unreachable at a dominator in H
//!   (the common positive case: the array's list is in H), and otherwise
//!   continues from that node's retainers outside its own subtree (a simple
//!   root path never enters a node's subtree before the node).
//! - Sets nested deep (more candidates than `MANY_CANDIDATES`) are done in
//!   order, each walk stopping at a holder met at its own first member,
//!   whose path is the rest of this one ([`Pass::walk`]): a nesting of depth
//!   N costs N steps and checks, not N².

use std::collections::HashSet;

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering::Relaxed};

use rayon::prelude::*;

use super::sets::MemberIndex;
use super::{DuplicateSet, SetLists};
use crate::graph::{DominatorTree, HeapGraph, SUPER_ROOT};
use crate::mem::{Nodes, RankedBits};
use crate::model::IntBuild;
use crate::progress::{Cancelled, Progress};

const NONE: u32 = u32::MAX;

/// Steps of one walk or search, added to [`crate::work`] once, when it ends
/// (nothing without the `count-work` feature).
#[derive(Default)]
struct Work(u64);

impl Work {
    #[inline(always)]
    fn step(&mut self) {
        self.steps(1);
    }

    #[inline(always)]
    fn steps(&mut self, n: usize) {
        if crate::work::COUNTED {
            self.0 += n as u64;
        }
    }
}

impl Drop for Work {
    fn drop(&mut self) {
        crate::work::add(self.0);
    }
}

struct Index<'a> {
    graph: &'a HeapGraph,
    dom: &'a DominatorTree,
    /// The set of every member object (NONE for an object in no set).
    members: &'a MemberIndex,
    /// The dominator tree's preorder numbers (NONE if unreachable); the
    /// subtree of v is `tin.get(v) .. tin.get(v) + retained_objects[v]`.
    tin: &'a Nodes,
    /// The objects on the paths walked ([`UpSteps`]): `up` holds theirs at
    /// their rank.
    on_path: &'a RankedBits,
    /// Each object's greedy step up ([`UpSteps`]), or, once a path has
    /// passed it, its next set member on its greedy root path: an object
    /// further on that path with only objects in no set between, NONE
    /// where the path ends ([`Index::up`]). At the object's rank in
    /// `on_path`.
    up: &'a [AtomicU32],
    /// The strongly rooted objects, a bit each.
    strong: Vec<u64>,
    /// The sets' members, each set's sorted by `tin` during the checks
    /// ([`compute_held`]).
    lists: &'a SetLists,
}

/// The heap bytes of lists of `u32` of these capacities (for the memory
/// log): the values and the allocator's 8 bytes a block.
fn lists_bytes(capacities: impl Iterator<Item = usize>) -> usize {
    capacities.filter(|&c| c > 0).map(|c| 8 + c * 4).sum()
}

impl Index<'_> {
    /// The index's own arrays, for the memory log.
    fn arrays(&self) -> [(&'static str, usize); 3] {
        [
            ("on path", self.on_path.heap_bytes()),
            ("up", self.up.len() * 4),
            ("strong", self.strong.len() * 8),
        ]
    }

    /// The slot of `up` of `x`, an object on a path walked; `None` for
    /// another (none is met: every path walked was marked).
    #[inline]
    fn up_slot(&self, x: u32) -> Option<&AtomicU32> {
        self.on_path.rank(x).map(|r| &self.up[r])
    }

    #[inline]
    fn in_subtree(&self, node: u32, of: u32) -> bool {
        let (t, r) = (self.tin.get(node as usize), self.tin.get(of as usize));
        t >= r && t - r < self.dom.retained_objects(of as usize)
    }

    /// Whether set `h` has a member in the dominator subtree of `d`.
    #[inline]
    fn subtree_has(&self, h: u32, d: u32) -> bool {
        let members = self.lists.get(h);
        let tin = |i: usize| self.tin.get(members[i] as usize);
        let lo = self.tin.get(d as usize);
        let i = members.partition_point(|&m| self.tin.get(m as usize) < lo);
        i < members.len() && tin(i) - lo < self.dom.retained_objects(d as usize)
    }

    /// Whether `v` (not in set `h`) is reachable from a strong root avoiding
    /// the members of `h`. `seen` may hold objects of earlier searches for
    /// the same `h` that answered no: none of those is reachable avoiding
    /// `h` either (each was expanded completely), so they are skipped.
    fn reachable_avoiding(
        &self,
        v: u32,
        h: u32,
        seen: &mut HashSet<u32, IntBuild>,
        stack: &mut Vec<u32>,
    ) -> bool {
        stack.clear();
        stack.push(v);
        let mut work = Work::default();
        while let Some(u) = stack.pop() {
            if !seen.insert(u) {
                continue;
            }
            let mut x = u;
            let held = loop {
                work.step();
                if self.is_strong(x) {
                    return true;
                }
                let d = self.dom.idom.get(x as usize);
                if d == SUPER_ROOT {
                    break false;
                }
                if self.set_of(d) == h {
                    break true;
                }
                if self.subtree_has(h, d) {
                    break false;
                }
                // d answers as u does: if met before, it is answered, or
                // being answered, already (so each object is climbed
                // through once per check, not once per member below it).
                if !seen.insert(d) {
                    break true;
                }
                x = d;
            };
            if held {
                continue;
            }
            for r in self.graph.retainers_raw(x) {
                work.step();
                if self.tin.get(r as usize) == NONE
                    || self.set_of(r) == h
                    || self.in_subtree(r, x)
                    || seen.contains(&r)
                {
                    continue;
                }
                stack.push(r);
            }
        }
        false
    }

    /// The set of `x`, NONE for none.
    #[inline]
    fn set_of(&self, x: u32) -> u32 {
        self.members.set_of(x)
    }

    /// Whether `x` has a strong root record.
    #[inline]
    fn is_strong(&self, x: u32) -> bool {
        self.strong[x as usize / 64] >> (x % 64) & 1 != 0
    }

    /// The first set member after `x` on its greedy root path (each step
    /// to the retainer numbered first), NONE if none: the
    /// objects in no set between are passed over, and the answer stored
    /// for `x` and every object passed (which have the same), so each
    /// object in no set is passed once however many paths cross it
    /// (threads that race store values that are all further on the path
    /// with objects in no set between).
    fn up(&self, x: u32) -> u32 {
        let load = |o: u32| self.up_slot(o).map_or(NONE, |u| u.load(Relaxed));
        let is_end = |y: u32| y == NONE || self.set_of(y) != NONE;
        let mut y = load(x);
        if is_end(y) {
            return y;
        }
        let mut passed = Vec::new();
        while !is_end(y) {
            passed.push(y);
            y = load(y);
        }
        crate::work::add(passed.len() as u64);
        for o in passed.into_iter().chain([x]) {
            if let Some(u) = self.up_slot(o) {
                u.store(y, Relaxed);
            }
        }
        y
    }

    /// The sets on one root path to `s` (excluding `s`'s own set), each
    /// once, nearest to `s` first; `None` as soon as there are more than
    /// `limit`.
    fn path_candidates(&self, s: u32, own: u32, limit: usize) -> Option<Vec<u32>> {
        let mut out = Vec::new();
        let mut met = HashSet::<u32, IntBuild>::default();
        let mut x = s;
        let mut work = Work::default();
        loop {
            work.step();
            let best = self.up(x);
            if best == NONE {
                break;
            }
            x = best;
            let set = self.set_of(x);
            if set != NONE && set != own && met.insert(set) {
                if out.len() == limit {
                    return None;
                }
                out.push(set);
            }
        }
        Some(out)
    }

    /// Whether set `h` holds set `s`: no member of `s` is reachable
    /// avoiding `h`.
    fn holds(
        &self,
        s: u32,
        h: u32,
        seen: &mut HashSet<u32, IntBuild>,
        stack: &mut Vec<u32>,
    ) -> bool {
        seen.clear();
        if seen.capacity() > 1 << 16 {
            // Clearing costs the capacity: don't keep a huge one.
            *seen = HashSet::default();
        }
        self.lists
            .get(s)
            .iter()
            .all(|&m| !self.reachable_avoiding(m, h, seen, stack))
    }
}

/// The held-by lists (the direct holders) of every set, by set, and its
/// `holding_set` filled; `lists` their members (set
/// `i`'s list `i`), each set's sorted by id (and left so), and `members`
/// their members' index. During the checks each set's members are sorted
/// by preorder number instead: the first is the member whose path is
/// walked, and "a member in this subtree" is a binary search
/// ([`Index::subtree_has`]), where a copy of every member's number took 4
/// bytes a member and 16 a set.
pub(crate) fn compute_held(
    graph: &HeapGraph,
    dom: &DominatorTree,
    sets: &mut [DuplicateSet],
    lists: &mut SetLists,
    members: &MemberIndex,
    progress: &Progress,
) -> Result<SetLists, Cancelled> {
    if sets.is_empty() {
        return Ok(SetLists::default());
    }
    let n = graph.objects();
    let span = tracing::debug_span!(target: "heaptui::profile", "held index").entered();
    let tin = &dom.preorder_number;
    super::sort_members(lists, |m| tin.get(m as usize));
    let UpSteps { on_path, mut up } = UpSteps::new(graph, tin, lists);
    progress.check()?;
    let mut strong = vec![0u64; n.div_ceil(64)];
    for &r in graph.strong_roots_raw() {
        strong[r as usize / 64] |= 1 << (r % 64);
    }
    let (direct, order) = {
        let index = Index {
            graph,
            dom,
            members,
            tin,
            on_path: &on_path,
            up: crate::mem::as_atomic(&mut up),
            strong,
            lists,
        };
        let pass = Pass {
            index: &index,
            sets,
            many: MANY_CANDIDATES.load(Relaxed),
        };
        span.exit();
        crate::mem::alive("duplicates: held index", &index.arrays());
        let direct = tracing::debug_span!(target: "heaptui::profile", "held checks")
            .in_scope(|| pass.direct_holders(progress));
        (direct, pass.in_order())
    };
    drop((up, on_path));
    progress.check()?;
    crate::mem::alive(
        "duplicates: held checks",
        &[
            ("direct", direct.capacity() * 32),
            (
                "direct lists",
                lists_bytes(direct.iter().map(|d| d.1.capacity())),
            ),
            ("order", order.capacity() * 4),
        ],
    );
    let held_by = flat_holders(sets.len(), direct);
    let holding = holding_sets(&held_by, &order);
    drop(order);
    for (s, h) in sets.iter_mut().zip(holding) {
        s.set_holding_set(h);
    }
    super::sort_members(lists, |m| graph.dump.ids.get(m as usize));
    Ok(held_by)
}

/// The direct holders of the sets that have some (`direct`, per set) as
/// the flat lists of all `sets` sets.
fn flat_holders(sets: usize, direct: Vec<(u32, Vec<u32>)>) -> SetLists {
    let mut lens = vec![0u32; sets];
    for (i, d) in &direct {
        lens[*i as usize] = d.len() as u32;
    }
    let mut held_by = SetLists::with_lengths(lens.iter().map(|&l| l as usize));
    drop(lens);
    for (i, d) in direct {
        held_by.get_mut(i).copy_from_slice(&d);
    }
    held_by
}

/// The holding set of every set from its direct holders (`held_by`): the
/// lowest id among its outermost holders, those nothing holds. Every
/// holder of S is a direct holder of S or a holder of one, so S's
/// outermost holders are its direct holders that nothing holds and the
/// outermost holders of its other direct holders: the lowest of them is
/// the lowest over the direct holders D of "D if nothing holds D, else
/// D's holding set". `order` lists every set after its holders (by the
/// earliest DFS position of a member); a holder out of that order counts
/// as outermost.
pub(crate) fn holding_sets(held_by: &SetLists, order: &[u32]) -> Vec<Option<u32>> {
    let mut holding: Vec<Option<u32>> = vec![None; held_by.len()];
    for &i in order {
        holding[i as usize] = held_by
            .get(i)
            .iter()
            .map(|&d| holding[d as usize].unwrap_or(d))
            .min();
    }
    holding
}

/// Sets with more candidate holders than this are done by
/// [`Pass::found_in_order`]; a set's candidates that do not hold it are kept
/// (for that pass to jump over its path) when there are at most this many.
static MANY_CANDIDATES: AtomicUsize = AtomicUsize::new(32);

/// Sets [`MANY_CANDIDATES`]. For tests: results are the same for every value.
#[cfg(feature = "testing")]
pub(crate) fn set_many_candidates(n: usize) {
    MANY_CANDIDATES.store(n, Relaxed);
}

/// What the checks found for one set.
struct Found {
    /// Holders, ascending: every direct holder is among them, and every
    /// holder when `complete`.
    holders: Vec<u32>,
    /// Whether `holders` is every holder of the set.
    complete: bool,
    /// The candidates on the set's path that do not hold it, when there are
    /// at most `many`.
    not_holding: Option<Vec<u32>>,
}

/// A [`Found`] as [`Findings`] keep it.
#[derive(Clone, Copy)]
struct FoundRef<'a> {
    holders: &'a [u32],
    complete: bool,
    not_holding: Option<&'a [u32]>,
}

/// Sets checked together, and the records of one such chunk in
/// [`Findings::chunks`].
const CHUNK: usize = 256;
/// [`Findings::at`] of a set nothing holds because a member is strongly
/// rooted (or left undone when the analysis was cancelled): no holder, no
/// candidates known.
const UNHELD: u32 = u32::MAX;
/// The bit of [`Findings::at`] that says "in `deep`".
const DEEP: u32 = 1 << 31;

/// What the checks found for every set, in few bytes a set: most sets have
/// no holder and a few candidates (500,040 of the HPROF's 502,108 sets
/// are pairs), and a [`Found`] per set, 56 bytes and up to two lists, took
/// some 100 bytes a set at the held checks' peak. The first pass's
/// findings (complete, their candidates known) are records in their
/// chunk's arena: the holders' count, the other candidates' count, the
/// holders, the other candidates; the arena starts with the record of no
/// candidates, which most sets share.
struct Findings {
    /// Per [`CHUNK`] sets, their records.
    chunks: Vec<Vec<u32>>,
    /// Per set: where its record starts in its chunk's, [`UNHELD`], or
    /// [`DEEP`] and its place in `deep`.
    at: Vec<u32>,
    /// What the walks in order found ([`Pass::found_in_order`]).
    deep: Vec<Found>,
}

impl Findings {
    /// Set `set`'s.
    fn get(&self, set: u32) -> FoundRef<'_> {
        let at = self.at[set as usize];
        if at == UNHELD {
            return FoundRef {
                holders: &[],
                complete: true,
                not_holding: None,
            };
        }
        if at & DEEP != 0 {
            let f = &self.deep[(at & !DEEP) as usize];
            return FoundRef {
                holders: &f.holders,
                complete: f.complete,
                not_holding: f.not_holding.as_deref(),
            };
        }
        let record = &self.chunks[set as usize / CHUNK][at as usize..];
        let (h, c) = (record[0] as usize, record[1] as usize);
        FoundRef {
            holders: &record[2..2 + h],
            complete: true,
            not_holding: Some(&record[2 + h..2 + h + c]),
        }
    }

    /// Records what the walk of set `set` found.
    fn set_deep(&mut self, set: u32, found: Found) {
        self.at[set as usize] = DEEP | self.deep.len() as u32;
        self.deep.push(found);
    }

    /// The bytes of the findings, for the memory log.
    fn arrays(&self) -> [(&'static str, usize); 2] {
        let records: usize = self.chunks.iter().map(|c| 24 + c.capacity() * 4).sum();
        [
            ("found at", self.at.capacity() * 4),
            ("found records", records),
        ]
    }
}

/// The held checks of all sets.
struct Pass<'a> {
    index: &'a Index<'a>,
    /// The sets, each one's members sorted by preorder number.
    sets: &'a [DuplicateSet],
    /// [`MANY_CANDIDATES`] for this pass.
    many: usize,
}

impl Pass<'_> {
    /// The member whose greedy root path is walked: the one earliest in
    /// the DFS preorder. Every set met on that path has a member earlier
    /// still, which orders the sets for [`Pass::found_in_order`].
    fn first_member(&self, set: u32) -> u32 {
        self.index.lists.get(set).first().copied().unwrap_or(NONE)
    }

    /// The number of set `set`'s first member.
    fn first_pos(&self, set: u32) -> u32 {
        match self.first_member(set) {
            NONE => NONE,
            m => self.index.tin.get(m as usize),
        }
    }

    /// Every set after its holders: by the number of its first member
    /// (then by id), each number read once.
    fn in_order(&self) -> Vec<u32> {
        let mut keyed: Vec<(u32, u32)> = (0..self.sets.len() as u32)
            .into_par_iter()
            .map(|i| (self.first_pos(i), i))
            .collect();
        keyed.par_sort_unstable();
        keyed.into_iter().map(|(_, i)| i).collect()
    }

    /// Per set with a direct holder, its direct holders, ascending: the
    /// holders H of S such that H holds no other holder of S. None for a
    /// set with a strongly rooted member, and for all once cancelled.
    ///
    /// A set with few candidates has each checked on its own, in parallel.
    /// The others are nested deep in other sets (a duplicated linked list:
    /// each node's set is held by every set above it); they are done in
    /// order by [`Pass::found_in_order`]. A holder found is direct unless
    /// it holds another holder found.
    fn direct_holders(&self, progress: &Progress) -> Vec<(u32, Vec<u32>)> {
        let (mut found, deep) = self.check_all(progress);
        if tracing::enabled!(target: "heaptui::memory", tracing::Level::DEBUG) {
            crate::mem::alive("duplicates: held candidates", &found.arrays());
        }
        self.found_in_order(&mut found, deep, progress);
        let found = &found;
        (0..self.sets.len() as u32)
            .into_par_iter()
            .filter(|&s| !found.get(s).holders.is_empty())
            .map_init(
                || (HashSet::<u32, IntBuild>::default(), Vec::new()),
                |(seen, stack), s| {
                    let c = found.get(s).holders;
                    let direct = c
                        .iter()
                        .copied()
                        .filter(|&x| {
                            !progress.is_cancelled()
                                && !c
                                    .iter()
                                    .any(|&y| y != x && self.set_holds(found, x, y, seen, stack))
                        })
                        .collect();
                    (s, direct)
                },
            )
            .filter(|(_, direct): &(u32, Vec<u32>)| !direct.is_empty())
            .collect()
    }

    /// The checks of every set with few candidates, in parallel by
    /// [`CHUNK`], and the sets left out (in order of id).
    fn check_all(&self, progress: &Progress) -> (Findings, Vec<u32>) {
        let parts: Vec<(Vec<u32>, Vec<u32>, Vec<u32>)> = self
            .sets
            .par_chunks(CHUNK)
            .enumerate()
            .map_init(
                || (HashSet::<u32, IntBuild>::default(), Vec::new()),
                |(seen, stack), (k, chunk)| {
                    let (mut records, mut undone) = (vec![0, 0], Vec::new());
                    let first = (k * CHUNK) as u32;
                    let at = (first..first + chunk.len() as u32)
                        .map(|s| match self.check(s, progress, seen, stack) {
                            None => {
                                undone.push(s);
                                UNHELD
                            }
                            Some(None) => UNHELD,
                            Some(Some((h, n))) if h.is_empty() && n.is_empty() => 0,
                            Some(Some((holders, not_holding))) => {
                                let at = records.len() as u32;
                                records.extend([holders.len() as u32, not_holding.len() as u32]);
                                records.extend(holders);
                                records.extend(not_holding);
                                at
                            }
                        })
                        .collect();
                    records.shrink_to_fit();
                    (records, at, undone)
                },
            )
            .collect();
        let mut at = Vec::with_capacity(self.sets.len());
        let mut undone = Vec::new();
        let chunks = parts
            .into_iter()
            .map(|(records, a, u)| {
                at.extend(a);
                undone.extend(u);
                records
            })
            .collect();
        let found = Findings {
            chunks,
            at,
            deep: Vec::new(),
        };
        (found, undone)
    }

    /// The check of set `s` on its own: `None` when it has more than
    /// `many` candidates, `Some(None)` when nothing holds it (or when
    /// cancelled), else its holders (ascending) and the other candidates.
    #[allow(clippy::type_complexity)]
    fn check(
        &self,
        s: u32,
        progress: &Progress,
        seen: &mut HashSet<u32, IntBuild>,
        stack: &mut Vec<u32>,
    ) -> Option<Option<(Vec<u32>, Vec<u32>)>> {
        let members = self.index.lists.get(s);
        if progress.is_cancelled() || members.iter().any(|&m| self.index.is_strong(m)) {
            // A strongly rooted member is reachable whatever is removed.
            return Some(None);
        }
        let candidates = self
            .index
            .path_candidates(self.first_member(s), s, self.many)?;
        let (mut holders, not_holding): (Vec<u32>, Vec<u32>) = candidates
            .into_iter()
            .partition(|&h| self.index.holds(s, h, seen, stack));
        holders.sort_unstable();
        Some(Some((holders, not_holding)))
    }

    /// Whether set `x` holds set `y`.
    fn set_holds(
        &self,
        found: &Findings,
        x: u32,
        y: u32,
        seen: &mut HashSet<u32, IntBuild>,
        stack: &mut Vec<u32>,
    ) -> bool {
        // A holder has a member before every member of what it holds (the
        // DFS tree path to that member passes through one).
        if self.first_pos(x) >= self.first_pos(y) {
            return false;
        }
        let f = found.get(y);
        f.holders.binary_search(&x).is_ok() || (!f.complete && self.index.holds(y, x, seen, stack))
    }

    /// What the checks find for the sets left out (`deep`), in the order of
    /// their first members' DFS positions. The sets met on a set's path have
    /// members earlier in that order than its first member (the greedy path
    /// only goes back), so they are done when it comes.
    fn found_in_order(&self, found: &mut Findings, mut deep: Vec<u32>, progress: &Progress) {
        deep.sort_unstable_by_key(|&i| self.first_pos(i));
        let (mut seen, mut stack) = (HashSet::<u32, IntBuild>::default(), Vec::new());
        for i in deep {
            if progress.is_cancelled() {
                return;
            }
            let f = self.walk(i, found, &mut seen, &mut stack);
            found.set_deep(i, f);
        }
    }

    /// Set `i`'s holders, walking its path up to the first holder H met at
    /// H's own first member whose non-holding candidates are known. The
    /// path beyond is then H's, so its sets are H's candidates: H's holders,
    /// which hold `i` through H (not directly: they need no check), and
    /// those that do not hold H, checked here.
    fn walk(
        &self,
        i: u32,
        found: &Findings,
        seen: &mut HashSet<u32, IntBuild>,
        stack: &mut Vec<u32>,
    ) -> Found {
        let (index, s) = (self.index, i);
        let mut met = HashSet::<u32, IntBuild>::default();
        let (mut holders, mut not_holding) = (Vec::new(), Vec::new());
        let mut complete = true;
        let mut x = self.first_member(i);
        let mut work = Work::default();
        loop {
            work.step();
            x = index.up(x);
            if x == NONE {
                break;
            }
            let h = index.set_of(x);
            if h == NONE || h == i || !met.insert(h) {
                continue;
            }
            if !index.holds(s, h, seen, stack) {
                not_holding.push(h);
                continue;
            }
            holders.push(h);
            let rest = Some(found.get(h))
                .filter(|_| x == self.first_member(h))
                .and_then(|f| f.not_holding);
            if let Some(rest) = rest {
                for &g in rest.iter().filter(|&&g| met.insert(g)) {
                    if index.holds(s, g, seen, stack) {
                        holders.push(g);
                    } else {
                        not_holding.push(g);
                    }
                }
                complete = false;
                break;
            }
        }
        holders.sort_unstable();
        Found {
            holders,
            complete,
            not_holding: (not_holding.len() <= self.many).then_some(not_holding),
        }
    }
}

/// The greedy steps up of the objects on the paths walked: those on the
/// greedy root path of some set's first member, the first member
/// included. An object's step is its retainer numbered first in `tin` when
/// before the object itself, else NONE (the DFS's roots and unreachable
/// objects: an unreachable object's retainers are unreachable too).
struct UpSteps {
    /// The objects on the paths, a bit each, ranked.
    on_path: RankedBits,
    /// Their steps, at their ranks.
    up: Vec<u32>,
}

impl UpSteps {
    /// Marks the paths from every set's first member (`members[0]`) in
    /// parallel: a walk stops at an object another walk has marked (that
    /// one goes on from there), so each object's retainers are read once
    /// to mark, and once more for its step, written at its rank: the
    /// objects in rank order, each replaced by its step in place.
    fn new(graph: &HeapGraph, tin: &Nodes, sets: &SetLists) -> UpSteps {
        let _span = tracing::debug_span!(target: "heaptui::profile", "held steps up").entered();
        let mut bits = vec![0u64; graph.objects().div_ceil(64)];
        let marked = crate::mem::as_atomic_u64(&mut bits);
        let mark = |x: u32| {
            let bit = 1u64 << (x % 64);
            marked[x as usize / 64].fetch_or(bit, Relaxed) & bit == 0
        };
        (0..sets.len() as u32)
            .into_par_iter()
            .filter_map(|s| sets.get(s).first().copied())
            .for_each(|first| {
                let mut x = first;
                while x != NONE && mark(x) {
                    x = step_up(graph, tin, x);
                }
            });
        let on_path = RankedBits::new(bits);
        let mut up: Vec<u32> = on_path.iter_ones().collect();
        up.par_iter_mut()
            .with_min_len(1 << 10)
            .for_each(|x| *x = step_up(graph, tin, *x));
        UpSteps { on_path, up }
    }
}

/// The greedy step up of `x`: its retainer numbered first in `tin` when
/// before `x` itself, else NONE.
fn step_up(graph: &HeapGraph, tin: &Nodes, x: u32) -> u32 {
    let mut work = Work::default();
    let mut best = NONE;
    let mut best_pos = tin.get(x as usize);
    if best_pos != NONE {
        work.step();
        for r in graph.retainers_raw(x) {
            work.step();
            let p = tin.get(r as usize);
            if p < best_pos {
                best_pos = p;
                best = r;
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use std::fmt::Write;
    use std::path::Path;

    use super::{SetLists, UpSteps, NONE};
    use crate::graph::{DominatorTree, HeapGraph, SUPER_ROOT};
    use crate::progress::Progress;

    /// Two copies of a linked list, one more root into the first copy at
    /// `bypass`: the set of the nodes at depth d is held by the sets above
    /// it, but from `bypass` on only by those at or below `bypass` (the
    /// extra root reaches the first copy's tail past them); directly by the
    /// one just above. Deep enough for the ordered pass (more than
    /// `MANY_CANDIDATES` sets above).
    #[test]
    fn a_duplicated_list_nests_each_set_in_those_above_it() {
        let (len, bypass) = (120u32, 70u32);
        let mut text = String::from("t 1 Node\n");
        for (base, copy) in [(0x1000u32, 0), (0x2000, 1)] {
            for d in 0..len {
                write!(text, "o {:x} 1 10", base + d).unwrap();
                if d + 1 < len {
                    write!(text, " {:x}", base + d + 1).unwrap();
                }
                text.push('\n');
            }
            writeln!(text, "r {base:x} 1 0").unwrap();
            if copy == 0 {
                writeln!(text, "r {:x} 1 0", base + bypass).unwrap();
            }
        }
        let dump =
            crate::import::netcf_text::parse_bytes(Path::new("t.txt"), text.as_bytes()).unwrap();
        let graph = HeapGraph::build(dump);
        let progress = Progress::new();
        let dom = DominatorTree::compute(&graph, &progress).unwrap();
        let options = crate::graph::duplicates::DuplicateOptions::default();
        let dups =
            crate::graph::duplicates::find_duplicates(&graph, &dom, &options, &progress).unwrap();
        // Each set's depth, from its first copy's id.
        let depth = |set: u32| {
            let ids: Vec<u64> = dups
                .members(set)
                .iter()
                .map(|&m| graph.dump.ids.get(m as usize))
                .collect();
            let first = *ids.iter().min().unwrap();
            assert_eq!(
                ids,
                vec![first, first + 0x1000],
                "a set is one depth's two nodes"
            );
            (first - 0x1000) as u32
        };
        let mut seen = 0;
        for (i, s) in dups.numbered() {
            let d = depth(i);
            let direct: Vec<u32> = dups.held_by(i).iter().map(|&h| depth(h)).collect();
            let from = if d >= bypass { bypass } else { 0 };
            // Held by every set from `from` down, directly by the one above.
            let above = (d > from).then(|| d - 1);
            assert_eq!(direct, Vec::from_iter(above), "depth {d}");
            let outer = s.holding_set().map(depth);
            assert_eq!(outer, (d > from).then_some(from), "depth {d}");
            seen += 1;
        }
        // The head pairs may form no set of their own (the bypass root
        // makes the copies differ in nothing); every deeper depth does.
        assert!(seen >= len as usize - 1, "{seen} sets");
    }

    /// A heap of `n` objects from `refs` (object, target) and `roots`, as
    /// the text format writes it.
    fn heap(n: u32, refs: &[(u32, u32)], roots: &[u32]) -> (HeapGraph, DominatorTree) {
        let mut text = String::from("t 1 Node\n");
        for o in 0..n {
            write!(text, "o {:x} 1 10", o + 1).unwrap();
            for &(_, t) in refs.iter().filter(|&&(f, t)| f == o && t < n) {
                write!(text, " {:x}", t + 1).unwrap();
            }
            text.push('\n');
        }
        for &r in roots.iter().filter(|&&r| r < n) {
            writeln!(text, "r {:x} 1 0", r + 1).unwrap();
        }
        let dump =
            crate::import::netcf_text::parse_bytes(Path::new("t.txt"), text.as_bytes()).unwrap();
        let graph = HeapGraph::build(dump);
        let dom = DominatorTree::compute(&graph, &Progress::new()).unwrap();
        (graph, dom)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 256, ..proptest::prelude::ProptestConfig::default()
        })]

        /// The steps kept for the objects on the paths only agree with a
        /// step of every object (the index before): the objects marked
        /// are those on the greedy paths from the sets' first members, and
        /// each one's step at its rank is its retainer numbered first, if
        /// before it.
        #[test]
        fn steps_on_the_paths_agree_with_a_step_of_every_object(
            n in 1u32..120,
            refs in proptest::collection::vec((0u32..120, 0u32..120), 0..400),
            roots in proptest::collection::vec(0u32..120, 1..6),
            firsts in proptest::collection::vec(0u32..120, 0..30),
        ) {
            let (graph, dom) = heap(n, &refs, &roots);
            let tin = &dom.preorder_number;
            let objects = graph.objects() as u32;
            // The index before: every object's step.
            let every: Vec<u32> = (0..objects)
                .map(|x| {
                    let t = tin.get(x as usize);
                    if t == NONE {
                        return NONE;
                    }
                    graph
                        .retainers_raw(x)
                        .filter(|&r| tin.get(r as usize) < t)
                        .min_by_key(|&r| tin.get(r as usize))
                        .unwrap_or(NONE)
                })
                .collect();
            let sets = SetLists::from_lists(firsts.iter().filter(|&&f| f < objects).map(|&f| [f]));
            let mut on_paths = std::collections::BTreeSet::new();
            for s in sets.iter() {
                let mut x = s[0];
                while x != NONE && on_paths.insert(x) {
                    x = every[x as usize];
                }
            }
            let steps = UpSteps::new(&graph, tin, &sets);
            let marked: Vec<u32> = steps.on_path.iter_ones().collect();
            proptest::prop_assert_eq!(&marked, &on_paths.into_iter().collect::<Vec<_>>());
            proptest::prop_assert_eq!(steps.up.len(), marked.len());
            for (r, &x) in marked.iter().enumerate() {
                proptest::prop_assert_eq!(steps.on_path.rank(x), Some(r));
                proptest::prop_assert_eq!(steps.up[r], every[x as usize], "object {}", x);
            }
        }
    }

    /// Long chains with skips ahead (idoms above the parents): the tree's
    /// numbering is a preorder of the dominator tree, and every reachable
    /// object but a strong root has a retainer numbered before it.
    #[test]
    fn preorder_numbers_nest_every_subtree_and_step_up() {
        let mut text = String::from("t 1 Node\n");
        let n = 40_000u32;
        let mut x = 12345u64;
        for i in 1..=n {
            // Chains of 14,000 (i -> i+1), roots at their starts.
            write!(text, "o {i:x} 1 10").unwrap();
            if i < n && i % 14_000 != 0 {
                write!(text, " {:x}", i + 1).unwrap();
            }
            // Skips a little ahead within the segment: idoms above the parent.
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let ahead = i + 2 + (x >> 33) as u32 % 4;
            if i % 3 != 0 && ahead <= n && (i - 1) / 14_000 == (ahead - 1) / 14_000 {
                write!(text, " {ahead:x}").unwrap();
            }
            text.push('\n');
        }
        for r in [1u32, 14_001, 28_001] {
            writeln!(text, "r {r:x} 1 0").unwrap();
        }
        let dump =
            crate::import::netcf_text::parse_bytes(Path::new("t.txt"), text.as_bytes()).unwrap();
        let graph = HeapGraph::build(dump);
        let dom = DominatorTree::compute(&graph, &Progress::new()).unwrap();
        let tin = &dom.preorder_number;
        let reachable = dom.reachable_objects as usize;
        let mut seen = vec![false; reachable];
        for v in 0..n {
            let t = tin.get(v as usize);
            let p = dom.idom.get(v as usize);
            if !dom.is_reachable(v) {
                assert_eq!(t, NONE);
                continue;
            }
            assert!(
                !std::mem::replace(&mut seen[t as usize], true),
                "number {t} twice"
            );
            if p != SUPER_ROOT {
                let (tp, sp) = (tin.get(p as usize), dom.retained_objects(p as usize));
                assert!(tp < t && t - tp < sp, "{v} outside its dominator {p}");
            }
            let stepped = graph.retainers_raw(v).any(|r| tin.get(r as usize) < t);
            assert!(stepped || graph.strong_roots_raw().contains(&v), "{v}");
        }
        assert!(seen.iter().all(|&s| s));
        assert!((0..dom.idom.len()).any(|o| dom.retained_objects(o) > 4096 * 2));
    }
}
