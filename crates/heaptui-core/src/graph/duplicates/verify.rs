//! Exact verification of a candidate block (docs/duplicates.md): splits it into
//! duplicate classes by the field-by-field pairing from a representative to
//! each other member, and measures objects per copy and additional bytes on
//! the way.
//!
//! The pairing from `(a, b)` is walked explicitly only over pairs `x ≠ y`
//! (the set N); a pair `(s, s)` (an object shared by both sides) is not
//! expanded, because everything below it pairs with itself. It conflicts
//! with N exactly when some object below a shared one is also in N, and
//! that is decided from N's retainers instead of walking the shared part:
//! with R0 = reach(a) (marked once per representative), R0 = left(N) ∪
//! reach(shared), so an object reachable from a shared one but in left(N)
//! exists iff some x in left(N) has a retainer in R0 \ left(N); the same
//! argument on the right side, where reach(shared) = R0 \ left(N). A shared
//! sub-graph is therefore walked once per representative, not per member.
//!
//! Additional bytes: on success, the objects of reach(b) outside reach(a)
//! are exactly the right sides of N that are not in R0, so the union over
//! the members is counted with one stamp per object.
//!
//! Hubs: marking R0 once per representative is still quadratic when many
//! sets reach one huge region (delegates whose targets sit in a strongly
//! connected component of most of the heap). When a marking walk grows
//! large, a node deep in it becomes a hub: its strongly connected component
//! and its reach are kept as bitsets (once, at most [`super::hubs::MAX_HUBS`]). A later
//! walk that enters a hub's component takes the hub's whole reach at once;
//! objects inside some hub's reach are set aside and walked only if no such
//! hub is entered. R0 membership is then "stamped, or in an entered hub's
//! reach".

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::bisim::Candidates;
use super::hubs::{hub_after, Hub, Hubs};
use super::view::View;
use super::workspace::{Budget, Stop, Workspace};

const NONE: u32 = u32::MAX;

/// What a marking walk costs the type's budget at most: its reach's size
/// up to this many objects, whatever the walk did. A walk's own work
/// depends on the hubs other threads made before it (a walk entering a
/// hub skips its reach), so a charge that followed the work would move
/// where a type's budget cuts with the thread count (the 10.1 M text heap
/// had a type cut at 8 threads and more and not at 1–4). The reach's size
/// is the same on every run. Where a region many walks cross becomes a
/// hub ([`hub_after`]), walked once, each later walk into it does little
/// work: a price of 4096 objects cut the 100.6 M text heap's delegates
/// (122,305 instances, one walk into a hub each) that the old charge let
/// through, at 256 they pass. Where hubs fail, the backstop in
/// `workspace` bounds the work done.
const MARK_CHARGE: u64 = 256;

/// Work counters, logged at `trace` level (see `crate::log`): representatives, explored, deferred,
/// pairs, retainers scanned, owner-search steps, prefix-signature steps.
pub(crate) static COUNTERS: [AtomicU64; 7] = [
    AtomicU64::new(0),
    AtomicU64::new(0),
    AtomicU64::new(0),
    AtomicU64::new(0),
    AtomicU64::new(0),
    AtomicU64::new(0),
    AtomicU64::new(0),
];
fn count(i: usize, v: u64) {
    COUNTERS[i].fetch_add(v, Ordering::Relaxed);
}

/// One exact duplicate class found in a block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Class {
    pub members: Vec<u32>,
    pub objects_per_copy: u64,
    pub additional_bytes: u64,
}

/// Splits a candidate block (≥ 2 members, all non-leaves) into its
/// duplicate classes of two or more members.
pub(crate) fn split_block(
    graph: &View,
    block: &Candidates,
    hubs: &Hubs,
    ws: &mut Workspace,
    members: &[u32],
    budget: &mut Budget,
) -> Result<Vec<Class>, Stop> {
    // The last representative's walk may leave the workspace holding a
    // place among the big walks: every exit of the splitting, `?`
    // included, returns here, and the place is given back after it.
    let classes = split_classes(graph, block, hubs, ws, members, budget);
    ws.leave_big(hubs);
    classes
}

/// [`split_block`] but for giving back the workspace's place among the big
/// walks.
fn split_classes(
    graph: &View,
    block: &Candidates,
    hubs: &Hubs,
    ws: &mut Workspace,
    members: &[u32],
    budget: &mut Budget,
) -> Result<Vec<Class>, Stop> {
    let mut classes = Vec::new();
    let members = without_owned_by_shared(graph, ws, members, budget)?;
    // Groups still to split; `true` once split by the prefix signature.
    let mut groups: Vec<(Vec<u32>, bool)> = vec![(members, false)];
    let mut failed: Vec<u32> = Vec::new();
    while let Some((rest, signed)) = groups.pop() {
        if rest.len() < 2 {
            continue;
        }
        classes.extend(class_of_first(
            graph,
            block,
            hubs,
            ws,
            &rest,
            budget,
            &mut failed,
        )?);
        if failed.len() < 2 {
            continue;
        }
        if signed {
            groups.push((failed.clone(), true));
            continue;
        }
        // The block holds several classes (typically equal objects at
        // different places of one shared structure): split the rest by an
        // invariant that sees sharing, so each class costs one pass.
        let subgroups = by_prefix_signature(graph, block, ws, &failed, budget)?;
        groups.extend(subgroups.into_iter().map(|g| (g, true)));
    }
    Ok(classes)
}

/// The class of `rest[0]` among `rest` (when it has two or more members),
/// the members that are not in it left in `failed`.
fn class_of_first(
    graph: &View,
    block: &Candidates,
    hubs: &Hubs,
    ws: &mut Workspace,
    rest: &[u32],
    budget: &mut Budget,
    failed: &mut Vec<u32>,
) -> Result<Option<Class>, Stop> {
    let rep = rest[0];
    ws.leave_big(hubs);
    let e = ws.next_epoch();
    let in_r0 = 2 * e;
    mark_reach(graph, hubs, ws, rep, in_r0, budget)?;
    let mut class = vec![rep];
    let mut additional = 0u64;
    let mut additional_objects = 0u64;
    failed.clear();
    for &m in &rest[1..] {
        match pair_with(graph, block, ws, rep, m, in_r0, budget)? {
            Some((bytes, objects)) => {
                class.push(m);
                additional += bytes;
                additional_objects += objects;
            }
            None => failed.push(m),
        }
    }
    if class.len() < 2 {
        return Ok(None);
    }
    let copies = class.len() as u64 - 1;
    // Kept with the set to the end: only what it holds.
    class.shrink_to_fit();
    Ok(Some(Class {
        members: class,
        objects_per_copy: per_copy(additional_objects, copies),
        additional_bytes: additional,
    }))
}

/// `failed` grouped by their prefix signature, each group ascending, the
/// groups in descending order of their first member (so that popping them
/// takes the lowest first).
fn by_prefix_signature(
    graph: &View,
    block: &Candidates,
    ws: &mut Workspace,
    failed: &[u32],
    budget: &mut Budget,
) -> Result<Vec<Vec<u32>>, Stop> {
    let mut keyed: Vec<(u64, u32)> = Vec::with_capacity(failed.len());
    for &m in failed {
        keyed.push((prefix_signature(graph, block, ws, m, budget)?, m));
    }
    keyed.sort_unstable();
    let mut subgroups: Vec<Vec<u32>> = keyed
        .chunk_by(|a, b| a.0 == b.0)
        .map(|g| {
            let mut v: Vec<u32> = g.iter().map(|&(_, m)| m).collect();
            v.sort_unstable();
            v
        })
        .collect();
    subgroups.sort_unstable_by_key(|g| std::cmp::Reverse(g[0]));
    Ok(subgroups)
}

/// Backward search limit of [`without_owned_by_shared`], in retainers
/// looked at per member. The owners it is for sit a few steps up (element,
/// array, parent); a larger limit mostly costs members no shared object
/// reaches a long walk each.
const OWNER_SEARCH: usize = 64;

/// Drops the members that cannot have a duplicate in the block: when every
/// member's i-th reference is one object c, c pairs with itself in every
/// pairing, and so does all of reach(c); a member that c reaches would pair
/// with itself as well as with its partner. (A cache entry referring to its
/// cache, an element to its parent.) "c reaches x" is looked for backwards
/// from x within a small limit; not finding it only costs time.
fn without_owned_by_shared(
    graph: &View,
    ws: &mut Workspace,
    members: &[u32],
    budget: &mut Budget,
) -> Result<Vec<u32>, Stop> {
    let first = graph.refs_raw(members[0]);
    let shared: Vec<u32> = (0..first.len().min(8))
        .filter(|&i| {
            members
                .iter()
                .all(|&m| graph.refs_raw(m).get(i) == first.get(i))
        })
        .map(|i| first.get(i))
        .collect();
    if shared.is_empty() {
        return Ok(members.to_vec());
    }
    let mut kept = Vec::with_capacity(members.len());
    for &x in members {
        let seen = &mut ws.stack;
        seen.clear();
        seen.push(x);
        ws.bwd.set(x, x);
        let mut next = 0;
        let mut owned = false;
        let mut steps = 0;
        'search: while next < seen.len() {
            let o = seen[next];
            next += 1;
            for p in graph.retainers_raw(o) {
                if shared.contains(&p) {
                    owned = true;
                    break 'search;
                }
                steps += 1;
                if steps >= OWNER_SEARCH {
                    break 'search;
                }
                if ws.bwd.get(p) == NONE {
                    ws.bwd.set(p, p);
                    seen.push(p);
                }
            }
        }
        ws.bwd.clear();
        count(5, steps as u64);
        budget.spend(1 + steps as u64)?;
        if !owned {
            kept.push(x);
        }
    }
    Ok(kept)
}

/// Objects of reach(x) the prefix signature looks at.
const PREFIX: usize = 64;

/// A hash of the first [`PREFIX`] objects of reach(x) in breadth-first
/// order: each object's block (its [`Candidates::key`]) and, per reference,
/// the discovery number of its target (so shared and repeated targets
/// count). Duplicates have equal signatures: the pairing is an
/// order-preserving isomorphism of their reach, so both walks discover
/// matching objects in the same order. Only which members' signatures are
/// equal matters ([`by_prefix_signature`] orders the groups by their first
/// member), so the keys need the partition's equalities, not its ids.
fn prefix_signature(
    graph: &View,
    block: &Candidates,
    ws: &mut Workspace,
    x: u32,
    budget: &mut Budget,
) -> Result<u64, Stop> {
    // `fwd` holds discovery numbers here; reset before returning.
    let order = &mut ws.stack;
    order.clear();
    order.push(x);
    ws.fwd.set(x, 0);
    let mut h: u64 = 0x243f_6a88_85a3_08d3;
    let mix = |h: u64, v: u64| (h ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(23);
    let mut next = 0;
    while next < order.len() {
        let o = order[next];
        next += 1;
        h = mix(h, block.key(o));
        // Bounded per object too (huge arrays); the same cut for duplicates.
        for c in graph.refs_raw(o).iter().take(PREFIX / 2) {
            let d = ws.fwd.get(c);
            if d != NONE {
                h = mix(h, d as u64);
            } else if order.len() < PREFIX {
                ws.fwd.set(c, order.len() as u32);
                h = mix(h, order.len() as u64 | 1 << 40);
                order.push(c);
            } else {
                h = mix(h, 1 << 41);
            }
        }
    }
    ws.fwd.clear();
    count(6, order.len() as u64);
    budget.spend(order.len() as u64)?;
    Ok(h)
}

/// Stamps reach(from), entering hubs where it can; returns its object count,
/// which is what the walk costs the budget.
///
/// A walk tries to make a hub when it grows past `hub_after` objects
/// (explored or waiting: one large array can put millions in the
/// frontier at once), and again each time it grows fourfold, since a
/// first try can find only a small component. While another thread
/// builds a hub, the walk gives its scratch back, waits, and starts
/// again with that hub: many threads entering one huge region at once
/// would otherwise each hold a heap-sized scratch meanwhile (the
/// 9.8 M-object HPROF: 1.19 GB with one thread, 2.0 GB with sixteen).
/// Nor may more than `BIG_WALKS` walks go on past `hub_after` at once,
/// whatever the thread count: a walk's first tries can find only small
/// components, and each walk that goes on holds heap-sized scratch
/// until its representative is done (sixteen threads on that dump:
/// 1.93 GB before this limit, 1.51 GB with it).
fn mark_reach(
    graph: &View,
    hubs: &Hubs,
    ws: &mut Workspace,
    from: u32,
    stamp: u32,
    budget: &mut Budget,
) -> Result<u64, Stop> {
    let hub_after = hub_after(graph.objects());
    let mut next_try = hub_after;
    let mut known;
    'walk: loop {
        known = hubs.snapshot();
        ws.reached.clear();
        ws.explored.clear();
        ws.deferred.clear();
        ws.stack.clear();
        ws.stack.push(from);
        ws.stamp.set(from, stamp);
        loop {
            while let Some(x) = ws.stack.pop() {
                if hubs.in_any_reach(x) {
                    match known.iter().find(|h| h.scc.get(x)) {
                        Some(h) => {
                            if !ws.reached.iter().any(|r| Arc::ptr_eq(r, h)) {
                                ws.reached.push(h.clone());
                            }
                        }
                        None => ws.deferred.push(x),
                    }
                    continue;
                }
                expand(graph, ws, x, stamp, budget)?;
                if let Grown::Restart = grown(graph, hubs, ws, &mut next_try, &mut known) {
                    continue 'walk;
                }
            }
            let more = walk_deferred(graph, ws, stamp, budget)?;
            if !more && ws.stack.is_empty() {
                break;
            }
            // A walk through a hub's reach that enters none of the hubs'
            // components expands its objects here, one at a time: it must
            // try to make a hub as it grows too. A hub whose component is
            // one object (the best of a first walk's tries) covers a whole
            // region without any walk entering it; on the 100.6 M text heap
            // at 16 threads the delegates' walks then crossed 88 M objects
            // each, 50 s a block, without trying for the component that
            // their targets sit in.
            if let Grown::Restart = grown(graph, hubs, ws, &mut next_try, &mut known) {
                continue 'walk;
            }
        }
        break;
    }
    drop_nested_hubs(ws);
    count(0, 1);
    count(1, ws.explored.len() as u64);
    count(2, ws.deferred.len() as u64);
    // Charged its reach's size up to `MARK_CHARGE`, not the objects it
    // walked (see there). It stopped early above only where the objects it
    // walked, all in the reach, were already over the limit.
    let reach = reach_size(ws);
    budget.settle(reach.min(MARK_CHARGE))?;
    Ok(reach)
}

/// What a walk does after it grew: go on, or start again (it gave its
/// scratch back and waited for a place among the big walks or for a hub
/// another thread was building).
enum Grown {
    Go,
    Restart,
}

/// [`mark_reach`]'s look after each object it expands: past `next_try`
/// objects, a place among the big walks and a try for a hub (see there);
/// the hubs made meanwhile, by it or another thread, may hold objects it
/// walked already: it enters them, and the rest of the walk takes their
/// reach instead of walking it again.
fn grown(
    graph: &View,
    hubs: &Hubs,
    ws: &mut Workspace,
    next_try: &mut usize,
    known: &mut Vec<Arc<Hub>>,
) -> Grown {
    if ws.explored.len() + ws.stack.len() < *next_try {
        return Grown::Go;
    }
    // Only a few big walks at once: the others give their scratch back
    // and wait for a place, then start again with the hubs made meanwhile.
    if !ws.big && !hubs.try_enter_big() {
        ws.release();
        hubs.enter_big();
        ws.big = true;
        return Grown::Restart;
    }
    ws.big = true;
    *next_try = next_try.saturating_mul(4);
    if hubs
        .add(graph, &hub_candidates(ws), hub_after(graph.objects()))
        .is_err()
    {
        ws.leave_big(hubs);
        hubs.wait_built();
        return Grown::Restart;
    }
    let fresh = hubs.snapshot();
    for h in &fresh[known.len()..] {
        if ws.explored.iter().any(|&e| h.scc.get(e)) {
            ws.reached.push(h.clone());
        }
    }
    *known = fresh;
    Grown::Go
}

/// Where a big walk tries to make a hub: the references of the walk's
/// start (the region other walks enter too), objects from the second half
/// of the walk and its frontier (inside the large region it is crossing).
fn hub_candidates(ws: &Workspace) -> Vec<u32> {
    let n = ws.explored.len();
    let end = n.min(4);
    let mut candidates: Vec<u32> = ws.explored[1.min(end - 1)..end].to_vec();
    candidates.extend([n / 2, n * 3 / 4, n - 1].map(|i| ws.explored[i]));
    candidates.extend(ws.stack.last());
    candidates
}

/// Walks on from the next object set aside that no entered hub covers;
/// whether there was one.
fn walk_deferred(
    graph: &View,
    ws: &mut Workspace,
    stamp: u32,
    budget: &mut Budget,
) -> Result<bool, Stop> {
    while let Some(x) = ws.deferred.pop() {
        if !ws.reached.iter().any(|h| h.reach.get(x)) {
            expand(graph, ws, x, stamp, budget)?;
            return Ok(true);
        }
    }
    Ok(false)
}

/// Keeps of the entered hubs those no other entered hub holds: a hub whose
/// pivot another entered hub reaches adds nothing.
fn drop_nested_hubs(ws: &mut Workspace) {
    let all = std::mem::take(&mut ws.reached);
    for (i, h) in all.iter().enumerate() {
        let inside_other = all
            .iter()
            .enumerate()
            .any(|(j, o)| j != i && o.reach.get(h.pivot) && !(h.reach.get(o.pivot) && j > i));
        if !inside_other {
            ws.reached.push(h.clone());
        }
    }
}

/// The objects a walk reached: those it explored outside every entered
/// hub, and the union of the entered hubs' reaches.
fn reach_size(ws: &Workspace) -> u64 {
    let covered = |x: u32| ws.reached.iter().any(|h| h.reach.get(x));
    let outside = ws.explored.iter().filter(|&&x| !covered(x)).count() as u64;
    let inside = match ws.reached.len() {
        0 => 0,
        1 => ws.reached[0].reach_objects,
        _ => {
            let words = ws.reached[0].reach.0.len();
            (0..words)
                .map(|i| {
                    ws.reached
                        .iter()
                        .fold(0u64, |acc, h| acc | h.reach.0[i])
                        .count_ones() as u64
                })
                .sum()
        }
    };
    outside + inside
}

/// Walks one object of a marking walk: pushes its unstamped references.
#[inline]
fn expand(
    graph: &View,
    ws: &mut Workspace,
    x: u32,
    stamp: u32,
    budget: &mut Budget,
) -> Result<(), Stop> {
    ws.explored.push(x);
    let refs = graph.refs_raw(x);
    let pending = (ws.explored.len() as u64).min(MARK_CHARGE);
    budget.tick(1 + refs.len() as u64 / 8, pending)?;
    for c in refs {
        if ws.stamp.set_if_not(c, stamp) {
            ws.stack.push(c);
        }
    }
    Ok(())
}

/// Objects per copy: the objects reachable from some member but not from
/// the representative, per member beyond it, to the nearest whole (exact
/// where copies share nothing among themselves; 0 where every member
/// reaches every other, as in a cycle, whose additional bytes are 0 too).
pub(crate) fn per_copy(additional_objects: u64, copies: u64) -> u64 {
    (additional_objects + copies / 2) / copies.max(1)
}

/// Pairs `rep` (whose reach is stamped `in_r0`) with `m`. On success
/// returns the bytes and the objects of reach(m) outside reach(rep) not yet
/// counted for this class, and stamps them counted; `None` when they are
/// not duplicates.
fn pair_with(
    graph: &View,
    block: &Candidates,
    ws: &mut Workspace,
    rep: u32,
    m: u32,
    in_r0: u32,
    budget: &mut Budget,
) -> Result<Option<(u64, u64)>, Stop> {
    let ok = walk_pairs(graph, block, ws, rep, m, budget).and_then(|ok| {
        if ok {
            shared_part_consistent(graph, ws, in_r0, budget)
        } else {
            Ok(false)
        }
    });
    let result = match ok {
        Ok(true) => {
            let counted = in_r0 + 1;
            let sizes = &graph.dump.sizes;
            let (mut extra, mut objects) = (0u64, 0u64);
            for &(x, y) in &ws.pairs {
                // Not in R0 (see the module doc) and not yet counted.
                if x != y && ws.stamp.get(y) != counted && !ws.in_r0(y, in_r0) {
                    ws.stamp.set(y, counted);
                    extra += sizes.get(y as usize);
                    objects += 1;
                }
            }
            Ok(Some((extra, objects)))
        }
        Ok(false) => Ok(None),
        Err(stop) => Err(stop),
    };
    ws.fwd.clear();
    ws.bwd.clear();
    ws.pairs.clear();
    result
}

/// Walks the pairing over non-identical pairs; false on a conflict. Labels
/// are compared through the blocks (their [`Candidates::key`]s, equal
/// exactly within a block): every block has a single label, and a
/// hash collision in the refinement only makes blocks coarser, so this
/// check (not the partition) is what makes the answer exact.
fn walk_pairs(
    graph: &View,
    block: &Candidates,
    ws: &mut Workspace,
    a: u32,
    b: u32,
    budget: &mut Budget,
) -> Result<bool, Stop> {
    ws.fwd.set(a, b);
    ws.bwd.set(b, a);
    ws.pairs.push((a, b));
    let mut next = 0;
    let result = walk_pairs_from(graph, block, ws, &mut next, budget);
    count(3, next as u64);
    result
}

fn walk_pairs_from(
    graph: &View,
    block: &Candidates,
    ws: &mut Workspace,
    next: &mut usize,
    budget: &mut Budget,
) -> Result<bool, Stop> {
    while *next < ws.pairs.len() {
        let (x, y) = ws.pairs[*next];
        *next += 1;
        if x == y {
            continue;
        }
        let (rx, ry) = (graph.refs_raw(x), graph.refs_raw(y));
        budget.spend(1 + rx.len() as u64 / 8)?;
        if rx.len() != ry.len() {
            return Ok(false);
        }
        for (cx, cy) in rx.iter().zip(ry) {
            if block.key(cx) != block.key(cy) {
                return Ok(false);
            }
            let f = ws.fwd.get(cx);
            if f != NONE {
                if f != cy {
                    return Ok(false);
                }
                continue;
            }
            if ws.bwd.get(cy) != NONE {
                return Ok(false);
            }
            ws.fwd.set(cx, cy);
            ws.bwd.set(cy, cx);
            ws.pairs.push((cx, cy));
        }
    }
    Ok(true)
}

/// The retainer test of the module doc: no object reachable from a shared
/// (self-paired) object is paired with another object.
fn shared_part_consistent(
    graph: &View,
    ws: &Workspace,
    in_r0: u32,
    budget: &mut Budget,
) -> Result<bool, Stop> {
    let in_left = |p: u32| {
        let f = ws.fwd.get(p);
        f != NONE && f != p
    };
    let in_right = |p: u32| {
        let b = ws.bwd.get(p);
        b != NONE && b != p
    };
    let in_shared = |p: u32| ws.in_r0(p, in_r0) && !in_left(p);
    for &(x, y) in &ws.pairs {
        if x == y {
            continue;
        }
        let mut scanned = 0u64;
        let shared = graph.retainers_raw(x).any(|p| {
            scanned += 1;
            in_shared(p)
        });
        count(4, scanned);
        budget.spend(1 + scanned / 8)?;
        if shared {
            return Ok(false);
        }
    }
    for &(x, y) in &ws.pairs {
        if x == y {
            continue;
        }
        let mut scanned = 0u64;
        let shared = graph.retainers_raw(y).any(|p| {
            scanned += 1;
            in_shared(p) && !in_right(p)
        });
        budget.spend(1 + scanned / 8)?;
        if shared {
            return Ok(false);
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use std::fmt::Write;
    use std::path::Path;
    use std::sync::atomic::AtomicBool;

    use super::*;
    use crate::graph::duplicates::set_hub_threshold;
    use crate::graph::HeapGraph;
    use crate::progress::Progress;

    /// The graph of a test's text dump.
    fn graph_of(text: &str) -> HeapGraph {
        let dump =
            crate::import::netcf_text::parse_bytes(Path::new("t.txt"), text.as_bytes()).unwrap();
        HeapGraph::build(dump)
    }

    /// The reach of `from` as a marking walk counts it, with fresh scratch
    /// and no budget, and the objects the walk explored itself.
    fn walk(view: &View, hubs: &Hubs, from: u32) -> (u64, usize) {
        let progress = Progress::new();
        let mut ws = Workspace::new(view.objects());
        let mut budget = Budget::new(None, &progress);
        let reach = mark_reach(view, hubs, &mut ws, from, 2, &mut budget).unwrap();
        (reach, ws.explored.len())
    }

    /// A walk that finds another thread building a hub gives its scratch
    /// back, waits for the build, starts again and counts the same reach
    /// as a walk alone.
    #[test]
    fn a_walk_waits_for_a_hub_being_built_and_counts_the_same() {
        // A chain of 20 objects into a ring of 40 (a component).
        let mut text = String::from("t 1 Node\n");
        for i in 1..=60u32 {
            let next = match i {
                60 => 21,
                _ => i + 1,
            };
            writeln!(text, "o {i:x} 1 10 {next:x}").unwrap();
        }
        text.push_str("r 1 1 0\n");
        let graph = graph_of(&text);
        let (n, view) = (graph.objects(), View::plain(&graph));
        set_hub_threshold(4);
        let walk = |hubs: &Hubs| walk(&view, hubs, 0).0;
        let alone = walk(&Hubs::new(n));
        assert_eq!(alone, 60);
        let hubs = Hubs::new(n);
        let released = AtomicBool::new(false);
        std::thread::scope(|s| {
            let building = hubs.building.lock().unwrap();
            let waiter = s.spawn(|| {
                let reached = walk(&hubs);
                (reached, released.load(Ordering::SeqCst))
            });
            std::thread::sleep(std::time::Duration::from_millis(100));
            released.store(true, Ordering::SeqCst);
            drop(building);
            let (reached, after_release) = waiter.join().unwrap();
            assert!(after_release, "the walk did not wait for the build");
            assert_eq!(reached, alone);
        });
        // It made the hub once the lock was free.
        assert_eq!(hubs.snapshot().len(), 1);
    }

    /// A walk through a hub's reach that enters none of the hubs'
    /// components still makes a hub as it grows: a first hub whose
    /// component is one object (a pivot outside the ring it leads to)
    /// must not leave every later walk into the ring walking it whole.
    #[test]
    fn a_walk_in_a_hubs_reach_outside_its_component_makes_a_hub() {
        // P (object 0) leads into a ring of 40 (objects 1-40); S (object
        // 41) enters the ring elsewhere, not through P.
        let mut text = String::from("t 1 Node\no 1 1 10 2\n");
        for i in 2..=41u32 {
            let next = if i == 41 { 2 } else { i + 1 };
            writeln!(text, "o {i:x} 1 10 {next:x}").unwrap();
        }
        text.push_str("o 32 1 10 3\nr 1 1 0\nr 32 1 0\n");
        let graph = graph_of(&text);
        let (n, view) = (graph.objects(), View::plain(&graph));
        set_hub_threshold(4);
        let walk = |hubs: &Hubs| walk(&view, hubs, 41);
        let (alone, _) = walk(&Hubs::new(n));
        assert_eq!(alone, 41);
        let hubs = Hubs::new(n);
        let first = hubs.add(&view, &[0], 4).ok().flatten().unwrap();
        assert_eq!((first.scc_objects, first.reach_objects), (1, 41));
        let (reach, explored) = walk(&hubs);
        assert_eq!(reach, alone);
        let made = hubs.snapshot();
        assert_eq!(made.len(), 2, "the walk made no hub of the ring");
        assert_eq!(made[1].scc_objects, 40);
        assert!(explored < 8, "walked {explored} objects of the ring");
    }
}
