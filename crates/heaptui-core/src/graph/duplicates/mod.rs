//! Duplicate instances (docs/duplicates.md, SciTech semantics): two reachable objects
//! are duplicates when pairing their reachability graphs field by field is
//! one-to-one with equal type name, shallow size and reference count at
//! every pair, and, where the dump has them, equal values and reference
//! labels (`values`). Duplicate sets, additional bytes, held duplicates and the
//! holding set.
//!
//! The pipeline (each step exact; see the submodules for the arguments):
//! 1. `bisim`: candidate blocks, the ordered bisimulation classes (equal for
//!    duplicates, but blind to sharing), by parallel hashing then exact
//!    partition refinement on a dirty list.
//! 2. `verify`: per block, the pairing from a representative to each member,
//!    walked over non-identical pairs only, with shared parts checked through
//!    retainers; it yields the classes, objects per copy (a reach walk per
//!    representative, sped up by "hubs" for huge shared regions) and
//!    additional bytes. Types run in parallel, a type's blocks in order, and
//!    a marking walk costs the size of its reach however many objects the
//!    hubs other threads made let it skip, so the per-type budget cuts at
//!    the same place whatever the thread count.
//! 3. `held`: holders from one root path per set, each checked by backward
//!    searches that jump up the dominator tree.
//!
//! Beside them: `sets` holds what detection returns (the sets, the possible
//! duplicates, the totals), `classes` the verified classes as they are
//! written and their assembly into sets, `hubs` the huge shared regions
//! `verify` walks once, `workspace` its per-thread scratch and per-type
//! budget, `values` the comparison of values and labels.
//!
//! Steps 1 and 2 read of the dominator tree only which objects are
//! reachable: where the caller holds the tree alone
//! ([`find_duplicates`] given `&mut`, the report), its idom and preorder numbers
//! are set aside meanwhile and its preorder during step 3
//! (`graph::set_aside`).
//!
//! Cost: near-linear on the shapes of real heaps. Known quadratic case: long
//! chains copied several times (each position is its own set, and each set's
//! pairing and reach walk run to the end of the chain); the per-type budget
//! bounds it and leaves the rest as possible duplicates.

mod bisim;
/// A type's sets as the verification writes them, and their assembly.
mod classes;
mod held;
mod hubs;
mod sets;
mod values;
mod verify;
mod view;
mod workspace;

use std::sync::Mutex;

use rayon::prelude::*;

use crate::graph::{DominatorTree, HeapGraph, ParentsAside};
use crate::mem::IdSet;
use crate::model::{Model, ObjectIdx};
use crate::progress::{Cancelled, Progress, Stage};
use bisim::NO_BLOCK;
use classes::{assemble, Group, TypeClass, TypeClasses};
pub(crate) use held::holding_sets;
pub(crate) use sets::MAX_SETS;
pub use sets::{
    DuplicateMode, DuplicateOptions, DuplicateSet, DuplicateTotals, Duplicates, PossibleDuplicates,
    SetLists,
};
pub(crate) use verify::per_copy;
pub use view::DescriptorRule;
use view::View;
use workspace::{Budget, Stop, Workspace};

/// The per-type work budget by default (`--duplicate-budget`): 50 million
/// object pairs, about a second of work.
pub const DEFAULT_BUDGET_PER_TYPE: u64 = 50_000_000;

/// Sets how large a reach walk grows before it makes a hub (see `verify`).
/// For tests: results are the same for every value.
#[cfg(any(test, feature = "testing"))]
pub(crate) fn set_hub_threshold(objects: usize) {
    hubs::HUB_AFTER.store(objects.max(1), std::sync::atomic::Ordering::Relaxed);
}

/// Sets how many candidate holders a set may have before its held checks
/// are done in order (see `held`); 0 does every set in order. For tests:
/// results are the same for every value.
#[cfg(feature = "testing")]
pub(crate) fn set_many_candidates(sets: usize) {
    held::set_many_candidates(sets);
}

/// Detects duplicates as `options` say, on the tree `dom`: shared
/// (`&DominatorTree`, read as it is) or held alone (`&mut DominatorTree`,
/// the report's once no view shares it: its idom and preorder numbers, 8
/// bytes an object, are set aside while the candidates are found and
/// verified, the stage's highest point, and made again, exactly, before
/// the held duplicates need them; `DominatorTree::with_parents_aside`).
pub fn find_duplicates<'a>(
    graph: &HeapGraph,
    dom: impl Into<Tree<'a>>,
    options: &DuplicateOptions,
    progress: &Progress,
) -> Result<Duplicates, Cancelled> {
    detect(
        graph,
        dom.into(),
        options.mode,
        options.budget_per_type,
        &[],
        progress,
    )
}

/// Finishes detection for one type whose detection was cut short (or not
/// run, in the `trivial` and `none` modes): the result `dups` with that
/// type detected without a work budget. Other types keep their earlier
/// outcome (detection is deterministic); held duplicates are recomputed.
pub fn detect_type(
    graph: &HeapGraph,
    dom: &DominatorTree,
    dups: &Duplicates,
    type_index: u32,
    progress: &Progress,
) -> Result<Duplicates, Cancelled> {
    let mut finished = dups.finished_types.clone();
    if let Err(i) = finished.binary_search(&type_index) {
        finished.insert(i, type_index);
    }
    detect(
        graph,
        Tree::Shared(dom),
        dups.mode.unwrap_or(DuplicateMode::None),
        dups.budget_per_type,
        &finished,
        progress,
    )
}

/// How one type is detected.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Depth {
    /// Nothing.
    Skip,
    /// Leaves only; other candidates are possible duplicates.
    Trivial,
    /// Full, within the work budget.
    Full(Option<u64>),
}

/// The dominator tree detection reads: shared with others, or held alone
/// (then its idom and preorder numbers are set aside while the candidates
/// are found and verified, which read only which objects are reachable).
/// [`find_duplicates`] takes either reference and makes this of it.
pub enum Tree<'a> {
    /// Read as it is.
    Shared(&'a DominatorTree),
    /// Parts set aside while they are not read, made again after.
    Alone(&'a mut DominatorTree),
}

impl<'a> From<&'a DominatorTree> for Tree<'a> {
    fn from(dom: &'a DominatorTree) -> Tree<'a> {
        Tree::Shared(dom)
    }
}

impl<'a> From<&'a mut DominatorTree> for Tree<'a> {
    fn from(dom: &'a mut DominatorTree) -> Tree<'a> {
        Tree::Alone(dom)
    }
}

fn detect(
    graph: &HeapGraph,
    tree: Tree<'_>,
    mode: DuplicateMode,
    budget: Option<u64>,
    finished: &[u32],
    progress: &Progress,
) -> Result<Duplicates, Cancelled> {
    progress.start(Stage::Duplicates, 3);
    let _span = tracing::debug_span!(target: "heaptui::profile", "duplicates").entered();
    let depth = |t: u32| {
        if finished.binary_search(&t).is_ok() {
            return Depth::Full(None);
        }
        match mode {
            DuplicateMode::None => Depth::Skip,
            DuplicateMode::Trivial => Depth::Trivial,
            DuplicateMode::All => Depth::Full(budget),
        }
    };
    let refine = mode == DuplicateMode::All || !finished.is_empty();
    let sets_of = |dom: ParentsAside<'_>| sets(graph, dom, mode, refine, &depth, progress);
    let held_in = |dom: &DominatorTree, dups: &mut Duplicates| {
        let _span = tracing::debug_span!(target: "heaptui::profile", "held").entered();
        held::compute_held(
            graph,
            dom,
            &mut dups.sets,
            &mut dups.set_members,
            &dups.index,
            progress,
        )
    };
    let mut dups;
    match tree {
        Tree::Shared(dom) => {
            dups = sets_of(dom.parents_aside())?;
            dups.set_holders = held_in(dom, &mut dups)?;
        }
        Tree::Alone(dom) => {
            dups = dom.with_parents_aside(sets_of)?;
            let holders = dom.with_preorder_aside(|dom| held_in(dom, &mut dups));
            dups.set_holders = holders?;
        }
    }
    dups.budget_per_type = budget;
    dups.finished_types = finished.to_vec();
    dups.values_compared = graph.dump.values.is_some() || graph.dump.labels.is_some();
    progress.set_done(3);
    Ok(dups)
}

/// The duplicate sets and possible duplicates, without their holders:
/// candidates (refined where `refine`, else objects of one label), their
/// verification per type to the `Depth` it says, and the sets laid out.
/// Reads of the tree only which objects are reachable.
fn sets(
    graph: &HeapGraph,
    dom: ParentsAside<'_>,
    mode: DuplicateMode,
    refine: bool,
    depth: &(dyn Fn(u32) -> Depth + Sync),
    progress: &Progress,
) -> Result<Duplicates, Cancelled> {
    let dump = &graph.dump;
    let view = View::new(graph);
    crate::mem::checkpoint("duplicates: view");
    let (groups, possible) = if !refine {
        // Cheap path: no refinement; candidates are objects of one label.
        label_classes(&view, dom, mode == DuplicateMode::Trivial)
    } else {
        let part = tracing::debug_span!(target: "heaptui::profile", "candidates")
            .in_scope(|| bisim::refine(&view, dom, progress))?;
        crate::mem::checkpoint("duplicates: candidates");
        // The refinement threads' scratch, freed but held per thread
        // (some 20 MiB at 16 threads beside the verification's peak).
        crate::mem::release_free_memory();
        progress.set_done(1);
        let found = tracing::debug_span!(target: "heaptui::profile", "verify")
            .in_scope(|| classes(&view, part, depth, progress))?;
        // The verification threads' scratch, freed but held per thread.
        crate::mem::release_free_memory();
        crate::mem::checkpoint("duplicates: verify");
        found
    };
    // The sets' records are made while the view still answers which
    // members are leaves.
    let (sets, mut members) = assemble(&view, groups);
    drop(view);
    if tracing::enabled!(target: "heaptui::duplicates", tracing::Level::TRACE) {
        let c: Vec<u64> = verify::COUNTERS
            .iter()
            .map(|c| c.load(std::sync::atomic::Ordering::Relaxed))
            .collect();
        tracing::debug!(target: "heaptui::duplicates",
            "verify: reps {} explored {} deferred {} pairs {} retainers {} owner search {} prefix {}",
            c[0], c[1], c[2], c[3], c[4], c[5], c[6]
        );
    }
    progress.set_done(2);
    sort_members(&mut members, |m| dump.ids.get(m as usize));
    let dups = finish(dump, sets, members, possible, mode);
    crate::mem::checkpoint("duplicates: sets");
    Ok(dups)
}

/// Sorts each set's members by `key` (then by index), on keys fetched
/// once per member: a comparator reading them at random would miss the
/// cache twice per comparison. A pair (most sets) is two reads.
fn sort_members<K: Ord + Copy + Send>(sets: &mut SetLists, key: impl Fn(u32) -> K + Sync) {
    sets.par_for_each_mut(|_, members| {
        if let [a, b] = members[..] {
            if (key(b), b) < (key(a), a) {
                members.swap(0, 1);
            }
            return;
        }
        let mut keyed: Vec<(K, u32)> = members.iter().map(|&m| (key(m), m)).collect();
        // The largest sets (strings) would otherwise sort on one thread.
        if keyed.len() >= 1 << 16 {
            keyed.par_sort_unstable();
        } else {
            keyed.sort_unstable();
        }
        for (slot, (_, m)) in members.iter_mut().zip(keyed) {
            *slot = m;
        }
    });
}

/// Modes `trivial`/`none` without refinement: reachable leaves of one label
/// are exactly duplicates; non-leaves sharing a label with another reachable
/// object are possible duplicates (trivial mode only).
fn label_classes(
    graph: &View,
    dom: ParentsAside<'_>,
    trivial: bool,
) -> (Vec<Group>, Vec<PossibleDuplicates>) {
    if !trivial {
        return (Vec::new(), Vec::new());
    }
    let dump = graph.dump;
    let classes = values::value_classes(graph, dom);
    let classes = classes.as_deref();
    let mut keyed: Vec<(u32, u64, u32, u32, u32)> = (0..dump.objects() as u32)
        .into_par_iter()
        .filter(|&o| dom.is_reachable(o))
        .map(|o| {
            let i = o as usize;
            let class = classes.map_or(0, |c| c[i]);
            (
                dump.types.get(i).raw(),
                dump.sizes.get(i),
                graph.refs_raw(o).len() as u32,
                class,
                o,
            )
        })
        .collect();
    keyed.par_sort_unstable();
    let mut sets: Vec<Group> = Vec::new();
    let mut possible: Vec<(u32, Vec<u32>)> = Vec::new();
    for class in keyed.chunk_by(|a, b| a.0 == b.0 && a.1 == b.1 && a.2 == b.2 && a.3 == b.3) {
        if class.len() < 2 {
            continue;
        }
        let members: Vec<u32> = class.iter().map(|c| c.4).collect();
        if class[0].2 == 0 {
            // One label and no references: exactly duplicates, each
            // member one object of its shallow size.
            let bytes = dump.sizes.get(members[0] as usize);
            let additional = bytes * (members.len() as u64 - 1);
            match sets.last_mut() {
                Some((t, found)) if *t == class[0].0 => found.append(&members, 1, additional),
                _ => {
                    let mut found = TypeClasses::over(Vec::new());
                    found.append(&members, 1, additional);
                    sets.push((class[0].0, found));
                }
            }
        } else {
            add_possible(&mut possible, class[0].0, members);
        }
    }
    (sets, sort_possible(possible))
}

/// Appends `members` of `type_index` to `possible`, to the last entry where
/// it is of that type.
fn add_possible(possible: &mut Vec<(u32, Vec<u32>)>, type_index: u32, members: Vec<u32>) {
    match possible.last_mut() {
        Some((t, instances)) if *t == type_index => instances.extend(members),
        _ => possible.push((type_index, members)),
    }
}

/// The possible duplicates by type, one entry a type (entries of one type
/// that were not adjacent merged), each type's instances ascending and
/// held as an [`IdSet`].
fn sort_possible(mut possible: Vec<(u32, Vec<u32>)>) -> Vec<PossibleDuplicates> {
    possible.sort_by_key(|p| p.0);
    let mut merged: Vec<(u32, Vec<u32>)> = Vec::with_capacity(possible.len());
    for (t, instances) in possible {
        add_possible(&mut merged, t, instances);
    }
    merged
        .into_iter()
        .map(|(type_index, mut instances)| {
            instances.sort_unstable();
            PossibleDuplicates {
                type_index,
                instances: crate::mem::IdSet::from_sorted(instances),
            }
        })
        .collect()
}

/// One type's candidate blocks of two or more members, members ascending,
/// blocks by first member: block `i`'s members are
/// `members[starts[i]..starts[i + 1]]`. Flat, where a vector per block held
/// some 40 bytes a block more (its header, the allocator's overhead); one
/// per type, whose members become its sets' ([`TypeClasses`]: every class
/// is some of a block's members; the HPROF's verification peaked with
/// both, 24 MiB of blocks beside 43 of classes, before the types' blocks
/// went as their verification ended, and before the sets took the blocks'
/// place).
struct TypeBlocks {
    type_index: u32,
    starts: Vec<u32>,
    members: Vec<u32>,
}

impl TypeBlocks {
    /// The candidate blocks (`cands`, see [`bisim::Candidates`]),
    /// `block_size` their sizes, per type by type index: two passes over
    /// the candidates in object order, the first finding each block's
    /// first member (its type and its place in the order), the second
    /// writing the members in place (a block's members are of one type).
    fn all(graph: &View, cands: &bisim::Candidates, block_size: &[u32]) -> Vec<TypeBlocks> {
        let dump = &graph.dump;
        // Per candidate block: (type, first member, block).
        let mut firsts: Vec<(u32, u32, u32)> = Vec::new();
        let mut slot: Vec<u32> = vec![NO_BLOCK; block_size.len()];
        for (o, b) in cands.iter() {
            if slot[b as usize] == NO_BLOCK {
                slot[b as usize] = 0;
                firsts.push((dump.types.get(o as usize).raw(), o, b));
            }
        }
        firsts.par_sort_unstable();
        // `slot` becomes each block's write cursor in its type's members,
        // `part` each type's place in the output.
        let mut part: Vec<u32> = vec![NO_BLOCK; dump.type_names.len()];
        let mut out: Vec<TypeBlocks> = Vec::new();
        for typed in firsts.chunk_by(|a, b| a.0 == b.0) {
            part[typed[0].0 as usize] = out.len() as u32;
            let mut starts: Vec<u32> = Vec::with_capacity(typed.len() + 1);
            let mut end = 0u32;
            for &(_, _, b) in typed {
                starts.push(end);
                slot[b as usize] = end;
                end += block_size[b as usize];
            }
            starts.push(end);
            out.push(TypeBlocks {
                type_index: typed[0].0,
                starts,
                members: crate::mem::zeroed(end as usize),
            });
        }
        drop(firsts);
        for (o, b) in cands.iter() {
            let t = &mut out[part[dump.types.get(o as usize).index()] as usize];
            let at = &mut slot[b as usize];
            t.members[*at as usize] = o;
            *at += 1;
        }
        out
    }

    /// The bytes of the arrays (for the memory log).
    fn bytes(&self) -> usize {
        (self.starts.capacity() + self.members.capacity()) * 4
    }
}

/// A type's blocks' starts in its members ([`TypeBlocks::starts`]), once
/// the members are [`TypeClasses`]'.
struct FlatBlocks(Vec<u32>);

impl FlatBlocks {
    fn len(&self) -> usize {
        self.0.len() - 1
    }

    /// Where block `i`'s members are.
    fn range(&self, i: usize) -> std::ops::Range<usize> {
        self.0[i] as usize..self.0[i + 1] as usize
    }
}

/// Turns candidate blocks into exact classes, by type (per type as
/// `depth` says), and possible duplicates. Types run in parallel, each
/// type's blocks in order, so the budget cuts at the same place on every
/// run.
fn classes(
    graph: &View,
    part: bisim::Partition,
    depth: &(dyn Fn(u32) -> Depth + Sync),
    progress: &Progress,
) -> Result<(Vec<Group>, Vec<PossibleDuplicates>), Cancelled> {
    let phase_start = std::time::Instant::now();
    let bisim::Partition { block, block_size } = part;
    // The verification reads blocks only of candidates: the rest go.
    let cands = bisim::Candidates::of(&block, &block_size);
    drop(block);
    let mut by_type = TypeBlocks::all(graph, &cands, &block_size);
    // The sizes are in the blocks now.
    drop(block_size);
    // Largest types first, so one big type does not start last.
    by_type.sort_by_key(|t| std::cmp::Reverse(t.members.len()));
    let types: Vec<u32> = by_type.iter().map(|t| t.type_index).collect();
    let cx = Verifier {
        graph,
        block: &cands,
        hubs: hubs::Hubs::new(graph.objects()),
        pool: Mutex::new(Vec::new()),
        progress,
        phase_start,
    };
    crate::mem::alive(
        "duplicates: blocks",
        &[
            ("candidates", cands.heap_bytes()),
            ("blocks", by_type.iter().map(TypeBlocks::bytes).sum()),
        ],
    );
    let outcomes: Vec<Result<_, Cancelled>> = by_type
        .into_par_iter()
        .map(|t| {
            let d = depth(t.type_index);
            cx.type_classes(t, d)
        })
        .collect();
    if tracing::enabled!(target: "heaptui::memory", tracing::Level::DEBUG) {
        let (mut records, mut lists) = (0, 0);
        for (found, p) in outcomes.iter().flatten() {
            records += found.classes.capacity() * std::mem::size_of::<TypeClass>();
            lists += found.members.capacity() * 4;
            lists += p.bytes();
        }
        crate::mem::alive(
            "duplicates: verified",
            &[
                ("candidates", cands.heap_bytes()),
                ("classes", records),
                ("class lists", lists),
            ],
        );
    }
    // The verification's scratch goes before the sets come.
    drop(cx);
    drop(cands);
    let mut groups = Vec::with_capacity(types.len());
    let mut possible = Vec::new();
    for (o, t) in outcomes.into_iter().zip(types) {
        let (found, p) = o?;
        if !found.is_empty() {
            groups.push((t, found));
        }
        if !p.is_empty() {
            possible.push(PossibleDuplicates {
                type_index: t,
                instances: p,
            });
        }
    }
    // One entry a type: the blocks were grouped by type.
    possible.sort_by_key(|p| p.type_index);
    Ok((groups, possible))
}

/// What the verification of every type shares.
struct Verifier<'a> {
    graph: &'a View<'a>,
    block: &'a bisim::Candidates,
    hubs: hubs::Hubs,
    /// Workspaces of finished types, for the next ones.
    pool: Mutex<Vec<Workspace>>,
    progress: &'a Progress,
    phase_start: std::time::Instant,
}

impl Verifier<'_> {
    /// One type's candidate blocks (in order) as exact sets, and the
    /// members of those it did not verify (possible duplicates). The sets'
    /// members are written over the blocks' (see [`TypeClasses`]).
    fn type_classes(
        &self,
        blocks: TypeBlocks,
        d: Depth,
    ) -> Result<(TypeClasses, IdSet), Cancelled> {
        let (graph, dump) = (self.graph, &self.graph.dump);
        let mut sets = TypeClasses::over(blocks.members);
        let blocks = FlatBlocks(blocks.starts);
        let mut possible = Vec::new();
        if d == Depth::Skip {
            return Ok((sets.done(), IdSet::default()));
        }
        let mut ws: Option<Workspace> = None;
        let limit = match d {
            Depth::Full(b) => b,
            _ => None,
        };
        let mut budget = Budget::new(limit, self.progress);
        let mut exhausted = false;
        for i in 0..blocks.len() {
            let block = blocks.range(i);
            let members = &sets.members[block.clone()];
            let leaf = graph.refs_raw(members[0]).is_empty();
            if leaf {
                // One label and no references: exactly duplicates, each
                // member one object of its shallow size.
                let bytes = dump.sizes.get(members[0] as usize);
                sets.push_block(block, 1, bytes * (members.len() as u64 - 1));
                continue;
            }
            if d == Depth::Trivial || exhausted {
                possible.extend_from_slice(members);
                continue;
            }
            let w = ws.get_or_insert_with(|| {
                self.pool
                    .lock()
                    .unwrap()
                    .pop()
                    .unwrap_or_else(|| Workspace::new(graph.objects()))
            });
            match self.split_block(w, members, &mut budget) {
                Ok(found) => sets.extend(found),
                Err(Stop::Cancelled) => return Err(Cancelled),
                Err(Stop::Budget) => {
                    // The workspace was reset by the aborted pairing
                    // except for stamps, which epochs make harmless.
                    exhausted = true;
                    possible.extend_from_slice(members);
                }
            }
        }
        if let Some(mut w) = ws {
            w.release();
            self.pool.lock().unwrap().push(w);
        }
        // Held from here to the heap's end: ascending, in the fewer bytes
        // of a bitmap or packed values.
        possible.sort_unstable();
        Ok((sets.done(), IdSet::from_sorted(possible)))
    }

    /// [`verify::split_block`], a slow block logged at `trace` level.
    fn split_block(
        &self,
        w: &mut Workspace,
        members: &[u32],
        budget: &mut Budget,
    ) -> Result<Vec<verify::Class>, Stop> {
        let started = tracing::enabled!(target: "heaptui::duplicates", tracing::Level::TRACE)
            .then(std::time::Instant::now);
        let outcome = verify::split_block(self.graph, self.block, &self.hubs, w, members, budget);
        if let Some(t) = started.filter(|t| t.elapsed().as_millis() >= 100) {
            tracing::debug!(target: "heaptui::duplicates",
                "duplicates: block of {} x {} took {} ms, from {} ms into verification",
                members.len(),
                self.graph.dump.type_name(ObjectIdx(members[0])),
                t.elapsed().as_millis(),
                (t - self.phase_start).as_millis()
            );
        }
        outcome
    }
}

/// The sorted sets (numbered by position) with their members indexed ([`sets::MemberIndex`]).
fn finish(
    dump: &Model,
    sets: Vec<DuplicateSet>,
    members: SetLists,
    possible: Vec<PossibleDuplicates>,
    mode: DuplicateMode,
) -> Duplicates {
    let holders = SetLists::with_lengths(std::iter::repeat_n(0, sets.len()));
    Duplicates::from_parts(
        dump.objects(),
        false,
        Some(mode),
        sets,
        members,
        holders,
        possible,
        None,
        Vec::new(),
    )
}

/// `f(o)` for each `o < n` that `keep` accepts, in order: gathered in two
/// parallel passes over fixed ranges (count, then fill each range's part),
/// which a filtered parallel collect would copy twice.
fn gather<T: bytemuck::Zeroable + Send>(
    n: usize,
    keep: impl Fn(usize) -> bool + Sync,
    f: impl Fn(usize) -> T + Sync,
) -> Vec<T> {
    const RANGE: usize = 1 << 16;
    let counts: Vec<usize> = (0..n.div_ceil(RANGE))
        .into_par_iter()
        .map(|r| {
            (r * RANGE..((r + 1) * RANGE).min(n))
                .filter(|&o| keep(o))
                .count()
        })
        .collect();
    let mut out: Vec<T> = crate::mem::zeroed(counts.iter().sum());
    let mut parts = Vec::with_capacity(counts.len());
    let mut rest = &mut out[..];
    for &c in &counts {
        let (part, tail) = std::mem::take(&mut rest).split_at_mut(c);
        parts.push(part);
        rest = tail;
    }
    parts.into_par_iter().enumerate().for_each(|(r, part)| {
        let objects = (r * RANGE..((r + 1) * RANGE).min(n)).filter(|&o| keep(o));
        for (slot, o) in part.iter_mut().zip(objects) {
            *slot = f(o);
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(members: &[u32], instance_bytes: u64, trivial: bool) -> (DuplicateSet, Vec<u32>) {
        let copies = members.len() as u64 - 1;
        let opc = if trivial { 1 } else { 2 };
        let s = DuplicateSet::new(0, instance_bytes, opc, copies * instance_bytes, trivial);
        (s, members.to_vec())
    }

    fn dups(values: bool) -> Duplicates {
        let (sets, members): (Vec<_>, Vec<_>) = [
            // Three 36-byte leaves: without values, equal only in size.
            set(&[0, 1, 2], 36, true),
            // Two copies of an object with a reference: structural.
            set(&[3, 4], 24, false),
            // Two 16-byte leaves.
            set(&[5, 6], 16, true),
        ]
        .into_iter()
        .unzip();
        let holders = SetLists::from_lists(vec![Vec::<u32>::new(); 3]);
        Duplicates::from_parts(
            10,
            values,
            Some(DuplicateMode::All),
            sets,
            SetLists::from_lists(members),
            holders,
            vec![],
            None,
            vec![],
        )
    }

    #[test]
    fn lone_leaves_without_values_are_unverified_and_counted_apart() {
        let d = dups(false);
        let unverified: Vec<bool> = d.sets.iter().map(|s| d.is_unverified(s)).collect();
        assert_eq!(unverified, [true, false, true]);
        assert_eq!(
            d.all_totals(),
            DuplicateTotals {
                sets: 1,
                bytes: 24,
                unverified_sets: 2,
                unverified_bytes: 2 * 36 + 16,
            }
        );
        // The totals of some sets (a filter's rows).
        let t = d.totals([0, 1]);
        assert_eq!((t.sets, t.bytes, t.unverified_sets), (1, 24, 1));
        assert_eq!(t.unverified_bytes, 72);
        // The whole waste is unchanged.
        assert_eq!(d.total_additional_bytes(), 24 + 72 + 16);
    }

    #[test]
    fn with_values_every_set_is_verified() {
        let d = dups(true);
        assert!(d.sets.iter().all(|s| !d.is_unverified(s)));
        let t = d.all_totals();
        assert_eq!((t.sets, t.bytes, t.unverified_sets), (3, 24 + 72 + 16, 0));
    }
}
