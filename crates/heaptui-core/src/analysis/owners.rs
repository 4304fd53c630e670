//! Duplicate waste by owner (docs/duplicates.md, "Who holds the copies"):
//! every extra copy of a duplicate set (each member but the set's first) is
//! charged to the grouped type path of its immediate dominator, cut at the
//! nearest dominator whose row type no exclude pattern matches. Owners are
//! listed by wasted bytes, each with the sets behind it.
//!
//! A copy is charged its own shallow bytes: what a copy reaches beyond
//! itself is either shared or, being paired with an equal object, a member
//! of another set and charged there. So an owner's bytes sum to what the
//! headline's extra instances count, and no byte is counted twice when sets
//! nest (held duplicates). Cost: one walk up the dominator tree per copy,
//! memoised where walks join, so O(objects) time in all; memory a fourth
//! of a byte an object, 6 bytes a join ([`Memo`]), 8 bytes an owner's
//! set ([`OwnerSet`]), and, for the owners with several owner objects, a
//! second walk over their sets' copies in passes ([`OwnerObjects`]), each
//! holding 4 bytes a copy of its owners ([`Charged`]): at most a sixteenth
//! of the objects' worth, or one owner's (on the 6.62 M-object V8
//! snapshot 6 MiB, its biggest owner's 1.6 M copies, where every owner's
//! at once and a sorted copy of one took 26: the stage's peak went from
//! 384 MiB to 365, 2026-11-28).

use std::cmp::Reverse;
use std::collections::binary_heap::PeekMut;
use std::collections::{BinaryHeap, HashMap};

use super::queries::excluded_by_any;
use super::Glob;
use crate::graph::duplicates::Duplicates;
use crate::graph::{DominatorTree, NOT_REACHABLE, SUPER_ROOT};
use crate::mem::RankedBits;
use crate::model::{Format, IntBuild, Model, ObjectIdx, TypeIdx};

/// The exclude patterns owners are cut at by default, per format: the
/// runtime's own packages and namespaces, so that the owner is the
/// program's type that holds a JDK map, not the map.
pub fn default_owner_exclude(format: Format) -> &'static [&'static str] {
    match format {
        Format::Hprof => &["java.*", "javax.*", "jdk.*", "sun.*"],
        Format::Gcdump | Format::Rpm => &["System.*", "Microsoft.*"],
        Format::Heapsnapshot => &["(*)", "system / *", "Array", "Object", "Map", "Set"],
    }
}

/// The [`default_owner_exclude`] patterns of `format`, compiled.
pub fn default_owner_globs(format: Format) -> Vec<Glob> {
    default_owner_exclude(format)
        .iter()
        .map(|p| Glob::new(p))
        .collect()
}

/// One set's share of an owner, 8 bytes (an owner's sets are most of
/// what the owners hold: some 600,000 on a 10 M-object Java heap). Its
/// bytes follow from the set's ([`OwnerSet::bytes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OwnerSet {
    /// The set, a position in [`Duplicates::sets`].
    pub set: u32,
    /// Its extra copies charged to the owner.
    pub copies: u32,
}

impl OwnerSet {
    /// The copies' shallow bytes: each its set's instance bytes (`dups`
    /// being the duplicates the owners were found in).
    pub fn bytes(&self, dups: &Duplicates) -> u64 {
        let each = dups
            .sets
            .get(self.set as usize)
            .map_or(0, |s| s.instance_bytes);
        each.saturating_mul(self.copies as u64)
    }
}

/// An owner: a grouped type path and the extra copies charged to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    /// Row types from the owner down to the copies' immediate dominator,
    /// each type once (a type met again goes back to where it was first
    /// met). Empty: the copies are held by GC roots directly.
    pub path: Vec<TypeIdx>,
    /// Whether `path[0]` is a type no exclude pattern matches; `false`
    /// when the walk reached the roots first (the path then starts at the
    /// topmost dominator).
    pub anchored: bool,
    /// Shallow bytes of the extra copies charged to the owner.
    pub bytes: u64,
    /// How many extra copies.
    pub copies: u64,
    /// The sets those copies belong to, by bytes descending (then set id).
    pub sets: Vec<OwnerSet>,
    /// Distinct owner objects (instances of `path[0]`) holding them.
    pub instances: u64,
    /// The owner object charged most (lowest index on a tie); `None` for
    /// the roots' own copies.
    pub top_instance: Option<ObjectIdx>,
}

/// Duplicate waste by owner, by bytes descending.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Owners {
    /// The exclude patterns the owners were cut at.
    pub exclude: Vec<String>,
    /// The owners, by bytes descending (then copies, then path).
    pub owners: Vec<Owner>,
    /// Sum of every owner's bytes (the headline's extra instances).
    pub bytes: u64,
}

impl Owners {
    /// The owner's path as text: type names joined by ` / `.
    pub fn path_text(dump: &Model, owner: &Owner) -> String {
        if owner.path.is_empty() {
            return "<GC roots>".into();
        }
        let names: Vec<&str> = owner
            .path
            .iter()
            .map(|t| &*dump.type_names[t.index()])
            .collect();
        names.join(" / ")
    }
}

/// Interned type paths: a trie over (parent path, type).
struct Paths {
    /// Per path: its parent ([`ANCHORED`] or [`UNANCHORED`] at the top) and
    /// last type.
    nodes: Vec<(u32, TypeIdx)>,
    index: HashMap<(u32, TypeIdx), u32, IntBuild>,
    /// The last children asked for, by a hash of (parent, type): most
    /// steps of a walk (those near its stop, not memoised) ask again for
    /// a child asked for before, and find it here without the loop check
    /// or the map.
    recent: Vec<(u32, TypeIdx, u32)>,
}

/// Entries of [`Paths::recent`] (a power of two), 12 bytes each.
const RECENT: usize = 1 << 12;

/// The parent of a path that starts at a non-excluded type.
const ANCHORED: u32 = u32::MAX;
/// The parent of a path that starts at the topmost dominator.
const UNANCHORED: u32 = u32::MAX - 1;
const UNSET: u32 = u32::MAX;

impl Paths {
    /// The path `parent` extended by `ty`. A type the path already holds
    /// closes a loop (a linked chain, a tree of nodes and child arrays):
    /// the path goes back to where it met the type, so a path holds each
    /// type once and the depth of a recursive structure makes no new
    /// owner. O(path length).
    fn child(&mut self, parent: u32, ty: TypeIdx) -> u32 {
        let key = (parent as u64) << 32 | ty.0 as u64;
        let at = (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 52) as usize % RECENT;
        let (p0, t0, c0) = self.recent[at];
        // A child is a node, never UNSET: an entry not yet set (UNSET,
        // whatever its parent and type) never answers.
        if c0 != UNSET && p0 == parent && t0 == ty {
            return c0;
        }
        let c = self.child_uncached(parent, ty);
        self.recent[at] = (parent, ty, c);
        c
    }

    /// [`Paths::child`] found in the trie.
    fn child_uncached(&mut self, parent: u32, ty: TypeIdx) -> u32 {
        let mut p = parent;
        while p < UNANCHORED {
            let (up, t) = self.nodes[p as usize];
            if t == ty {
                return p;
            }
            p = up;
        }
        let next = self.nodes.len() as u32;
        *self.index.entry((parent, ty)).or_insert_with(|| {
            self.nodes.push((parent, ty));
            next
        })
    }

    /// The types of path `p`, top first, and whether it is anchored.
    fn types(&self, mut p: u32) -> (Vec<TypeIdx>, bool) {
        let mut out = Vec::new();
        while p < UNANCHORED {
            let (parent, ty) = self.nodes[p as usize];
            out.push(ty);
            if parent >= UNANCHORED {
                out.reverse();
                return (out, parent == ANCHORED);
            }
            p = parent;
        }
        (out, false)
    }
}

/// The owner path and owner object of the dominators where walks join:
/// those a later walk reaches after an earlier one passed them (its stop,
/// the rest of its way being the earlier walk's). Only there does a result
/// serve again; every other dominator is passed by one walk at most. They
/// are found first, by marking every dominator the walks meet (one bit an
/// object), then each gets a slot in dense arrays of the joins only,
/// found by its rank among them. A fourth of a byte an object and 6 bytes
/// a join, where a hash map of every dominator met took 13 to 26 bytes a
/// dominator (on a Java or V8 heap the walks meet most objects: the
/// copies' dominators and the runtime's types above them).
///
/// A join at most [`NEAR_STOP`] steps below a stop is not memoised: a
/// walk through it takes those few steps more to the stop, whose path is
/// its type's (see [`Walk::stop_path`]), and a stop is never memoised.
/// On a Java heap cut at the runtime's packages most joins lie there (a
/// map's nodes and table below the program's object that holds the map):
/// 2.03 M joins memoised on a 9.76 M-object HPROF before, 12 MiB; on a
/// V8 snapshot the stops alone left 256 of 1.6 M. Paths are few
/// (hundreds to a few thousand), so a join's path takes two bytes; one
/// past them goes to a side map.
struct Memo {
    /// One bit per object: the joins, ranked.
    joins: RankedBits,
    /// Per join, in object order: its owner path, or [`FAR_PATH`] for one
    /// in `far`.
    paths: Vec<u16>,
    /// Paths of [`FAR_PATH`] or more, by slot.
    far: HashMap<u32, u32>,
    /// Per join, in object order: its owner object, [`UNSET`] until
    /// resolved.
    anchors: Vec<u32>,
}

/// How near its stop a dominator where walks join goes unmemoised: a walk
/// through it takes at most this many steps more (see [`Memo`]). Tests
/// read it as `testing::OWNER_WALK_NEAR_STOP`.
pub(crate) const NEAR_STOP: usize = 4;

/// A [`Memo::paths`] entry whose path is in [`Memo::far`].
const FAR_PATH: u16 = u16::MAX;

impl Memo {
    /// Room for the joins `joins` marks, none resolved.
    fn new(joins: RankedBits) -> Memo {
        let n = joins.ones();
        Memo {
            joins,
            paths: crate::mem::zeroed(n),
            far: HashMap::new(),
            anchors: vec![UNSET; n],
        }
    }

    /// The slot of dominator `d`, if it is a join.
    #[inline]
    fn slot(&self, d: u32) -> Option<usize> {
        self.joins.rank(d)
    }

    /// The owner path and owner object of slot `s`, once resolved.
    #[inline]
    fn get(&self, s: usize) -> Option<(u32, u32)> {
        let anchor = self.anchors[s];
        if anchor == UNSET {
            return None;
        }
        let path = match self.paths[s] {
            FAR_PATH => self.far[&(s as u32)],
            p => p as u32,
        };
        Some((path, anchor))
    }

    /// Resolves slot `s`.
    fn set(&mut self, s: usize, (path, anchor): (u32, u32)) {
        self.anchors[s] = anchor;
        self.paths[s] = match u16::try_from(path) {
            Ok(p) if p != FAR_PATH => p,
            _ => {
                self.far.insert(s as u32, path);
                FAR_PATH
            }
        };
    }

    /// The memo's heap bytes (the side map at 12 bytes an entry).
    fn heap_bytes(&self) -> usize {
        self.paths.capacity() * 2 + self.anchors.capacity() * 4 + self.far.capacity() * 12
    }
}

/// Per dominator met: its owner path and owner object (memoised walk).
struct Walk<'a> {
    dump: &'a Model,
    dom: &'a DominatorTree,
    excluded: Vec<bool>,
    /// Per row type: the path of a walk that stops at it, or [`UNSET`].
    stop_paths: Vec<u32>,
    paths: Paths,
    memo: Memo,
    stack: Vec<u32>,
    /// Dominators resolved (each passed once in all).
    steps: u64,
}

impl<'a> Walk<'a> {
    /// A walk cut at `exclude`, for the copies whose immediate dominators
    /// `starts` lists (each reachable and below the roots): it marks the
    /// dominators their walks will meet.
    fn new(
        dump: &'a Model,
        dom: &'a DominatorTree,
        exclude: &[Glob],
        starts: impl Iterator<Item = u32>,
    ) -> Walk<'a> {
        let mut walk = Walk {
            dump,
            dom,
            excluded: excluded_by_any(dump, exclude),
            stop_paths: vec![UNSET; dump.type_names.len()],
            paths: Paths {
                nodes: Vec::new(),
                index: HashMap::default(),
                // Unset entries (child UNSET) miss.
                recent: vec![(UNSET, TypeIdx(0), UNSET); RECENT],
            },
            memo: Memo::new(RankedBits::default()),
            stack: Vec::new(),
            steps: 0,
        };
        walk.mark(starts);
        walk
    }

    fn row(&self, o: u32) -> TypeIdx {
        self.dump.row_type(ObjectIdx(o))
    }

    /// Whether the walk stops at dominator `d`: a row type no pattern
    /// excludes, or the topmost dominator.
    #[inline]
    fn stops_at(&self, d: u32) -> bool {
        !self.excluded[self.row(d).index()] || self.dom.idom.get(d as usize) == SUPER_ROOT
    }

    /// Whether a walk from dominator `d` (not a stop) stops within
    /// [`NEAR_STOP`] steps up: no join there is memoised.
    fn near_stop(&self, d: u32) -> bool {
        let mut x = d;
        for _ in 0..NEAR_STOP {
            x = self.dom.idom.get(x as usize);
            if self.stops_at(x) {
                return true;
            }
        }
        false
    }

    /// Finds the joins of the walks from `starts` (see [`Memo`]): each
    /// walk marks what [`Walk::resolve`] will pass from its start, up to
    /// where it stops or to a dominator marked already, a join.
    fn mark(&mut self, starts: impl Iterator<Item = u32>) {
        let words = self.dump.objects().div_ceil(64);
        let mut met = vec![0u64; words];
        let mut joins = vec![0u64; words];
        for mut d in starts {
            // A stop resolves in one step (its type's path): never a join.
            while !self.stops_at(d) {
                let (w, b) = (d as usize / 64, d % 64);
                if met[w] >> b & 1 != 0 {
                    if !self.near_stop(d) {
                        joins[w] |= 1 << b;
                    }
                    break;
                }
                met[w] |= 1 << b;
                d = self.dom.idom.get(d as usize);
            }
        }
        drop(met);
        self.memo = Memo::new(RankedBits::new(joins));
    }

    /// The owner path and owner object of dominator `d0`: up from `d0`
    /// past excluded row types to the first that is not (or to the
    /// topmost dominator). Each join passed is memoised, so each
    /// dominator is walked past once in all, but for the stops and those
    /// at most [`NEAR_STOP`] steps below them (that many steps a walk at
    /// most): O(1) amortised a call on any chain.
    /// The path of a walk that stops at a dominator of row type `ty`: the
    /// type alone, anchored unless excluded (the topmost dominator's).
    /// Kept per type, as stops are not memoised.
    fn stop_path(&mut self, ty: TypeIdx) -> u32 {
        let known = self.stop_paths[ty.index()];
        if known != UNSET {
            return known;
        }
        let top = if self.excluded[ty.index()] {
            UNANCHORED
        } else {
            ANCHORED
        };
        let p = self.paths.child(top, ty);
        self.stop_paths[ty.index()] = p;
        p
    }

    fn resolve(&mut self, d0: u32) -> (u32, u32) {
        self.stack.clear();
        let mut d = d0;
        let (mut path, anchor) = loop {
            let slot = self.memo.slot(d);
            if let Some(hit) = slot.and_then(|s| self.memo.get(s)) {
                break hit;
            }
            self.steps += 1;
            let ty = self.row(d);
            if self.stops_at(d) {
                break (self.stop_path(ty), d);
            }
            self.stack.push(d);
            d = self.dom.idom.get(d as usize);
        };
        while let Some(x) = self.stack.pop() {
            path = self.paths.child(path, self.row(x));
            if let Some(s) = self.memo.slot(x) {
                self.memo.set(s, (path, anchor));
            }
        }
        (path, anchor)
    }
}

/// The immediate dominators of the extra copies of `sets` (by number) that
/// a walk resolves: reachable, below the roots.
fn walk_starts<'s>(
    dom: &'s DominatorTree,
    dups: &'s Duplicates,
    sets: impl Iterator<Item = u32> + 's,
) -> impl Iterator<Item = u32> + 's {
    sets.flat_map(|s| dups.members(s).iter().skip(1))
        .map(|&m| dom.idom.get(m as usize))
        .filter(|&d| d != NOT_REACHABLE && d != SUPER_ROOT)
}

/// Path id of the copies GC roots hold directly.
const HELD_BY_ROOTS: u32 = u32::MAX;

/// Duplicate waste by owner: the extra copies of every verified set
/// ([`Duplicates::is_unverified`] sets stay out, as from the headline)
/// charged to their owners, cut at `exclude` (see the module doc).
pub fn duplicate_owners(
    dump: &Model,
    dom: &DominatorTree,
    dups: &Duplicates,
    exclude: &[Glob],
) -> Owners {
    owners_and_steps(dump, dom, dups, exclude, None).0
}

/// [`duplicate_owners`] and how many dominators its first walk resolved
/// (what the walks cost: at most one a dominator met), its owner objects
/// counted in passes of at most `per_pass` copies (by default
/// [`copies_per_pass`]).
pub(crate) fn owners_and_steps(
    dump: &Model,
    dom: &DominatorTree,
    dups: &Duplicates,
    exclude: &[Glob],
    per_pass: Option<u64>,
) -> (Owners, u64) {
    let _span = tracing::debug_span!(target: "heaptui::profile", "owners").entered();
    let starts = walk_starts(dom, dups, verified(dups).map(|(i, _)| i));
    let mut walk = Walk::new(dump, dom, exclude, starts);
    // Per owner path: its owner.
    let mut slot: HashMap<u32, usize> = HashMap::new();
    let mut owners: Vec<(u32, Owner)> = Vec::new();
    // Per owner, its one owner object, or MANY.
    let mut anchors: Vec<u32> = Vec::new();
    for (i, s) in verified(dups) {
        for &m in dups.members(i).iter().skip(1) {
            let d0 = dom.idom.get(m as usize);
            if d0 == NOT_REACHABLE {
                // Members are reachable (detection's and the cache's
                // promise); a broken promise charges nothing.
                continue;
            }
            let (path, anchor) = if d0 == SUPER_ROOT {
                (HELD_BY_ROOTS, UNSET)
            } else {
                walk.resolve(d0)
            };
            let at = *slot.entry(path).or_insert_with(|| {
                owners.push((path, empty_owner()));
                anchors.push(anchor);
                owners.len() - 1
            });
            if anchors[at] != anchor {
                anchors[at] = MANY;
            }
            let o = &mut owners[at].1;
            o.bytes += s.instance_bytes;
            o.copies += 1;
            match o.sets.last_mut() {
                Some(last) if last.set == i => last.copies += 1,
                _ => o.sets.push(OwnerSet { set: i, copies: 1 }),
            }
        }
    }
    let steps = walk.steps;
    tracing::debug!(target: "heaptui::memory",
        "owners: {} joins memoised, {} paths, {} owners, {} owner sets, {} copies charged apart, {steps} steps",
        walk.memo.anchors.len(), walk.paths.nodes.len(), owners.len(),
        owners.iter().map(|o| o.1.sets.len()).sum::<usize>(),
        owners.iter().zip(&anchors).filter(|(_, &a)| a == MANY).map(|(o, _)| o.1.copies).sum::<u64>());
    let per_pass = per_pass.unwrap_or_else(|| copies_per_pass(dump.objects()));
    let counted = OwnerObjects {
        walk: &mut walk,
        dups,
        owners: &owners,
        slot: &slot,
        anchors: &anchors,
    }
    .count(per_pass);
    // The memo goes before the owners are finished.
    let Walk { paths, memo, .. } = walk;
    drop(memo);
    (finish(dump, dups, paths, owners, counted, exclude), steps)
}

/// How many copies' owner objects one pass of [`OwnerObjects::count`]
/// holds at most, on a heap of `objects` objects: a sixteenth of the
/// objects (a fourth of a byte an object, 4 bytes a copy), and no fewer
/// than 65,536. An owner with more copies has a pass of its own.
fn copies_per_pass(objects: usize) -> u64 {
    (objects as u64 / 16).max(1 << 16)
}

/// The sets (by number) that a walk charges copies of: the
/// [`Duplicates::is_unverified`] sets stay out, as from the headline.
fn verified(
    dups: &Duplicates,
) -> impl Iterator<Item = (u32, &crate::graph::duplicates::DuplicateSet)> + '_ {
    dups.numbered().filter(|(_, s)| !dups.is_unverified(s))
}

/// The first walk's owner object of an owner with two or more (see
/// [`OwnerObjects::anchors`]).
const MANY: u32 = u32::MAX - 1;

/// Counts the owner objects of the owners with several ([`MANY`]): a
/// second walk over the copies of their sets, in passes of owners whose
/// copies together are at most a bound (or of one owner alone), each
/// holding its owners' copies' owner objects ([`Charged`], 4 bytes a copy)
/// only while it counts them. An owner with one owner object (or none,
/// the roots' own copies) is known from the first walk.
struct OwnerObjects<'w, 'a> {
    walk: &'w mut Walk<'a>,
    dups: &'w Duplicates,
    owners: &'w [(u32, Owner)],
    /// Per owner path: its owner (a position in `owners`).
    slot: &'w HashMap<u32, usize>,
    /// Per owner: its one owner object, [`UNSET`] for the roots' own
    /// copies, or [`MANY`].
    anchors: &'w [u32],
}

impl OwnerObjects<'_, '_> {
    /// Per owner: its distinct owner objects and the one charged most
    /// (lowest index on a tie), in passes of at most `per_pass` copies.
    fn count(mut self, per_pass: u64) -> Vec<(u64, Option<ObjectIdx>)> {
        let mut counted: Vec<(u64, Option<ObjectIdx>)> = self
            .anchors
            .iter()
            .map(|&a| match a {
                UNSET | MANY => (0, None),
                one => (1, Some(ObjectIdx(one))),
            })
            .collect();
        for pass in self.passes(per_pass) {
            let start = pass.start;
            for (k, c) in self.pass(pass) {
                counted[start + k] = c;
            }
        }
        counted
    }

    /// The owners of each pass: consecutive owners whose copies, those of
    /// owners with several owner objects, are at most `per_pass` together
    /// (or one owner's alone, when more).
    fn passes(&self, per_pass: u64) -> Vec<std::ops::Range<usize>> {
        let mut out = Vec::new();
        let (mut start, mut copies) = (0, 0u64);
        for (i, ((_, o), &a)) in self.owners.iter().zip(self.anchors).enumerate() {
            if a != MANY {
                continue;
            }
            if copies > 0 && copies.saturating_add(o.copies) > per_pass {
                out.push(start..i);
                (start, copies) = (i, 0);
            }
            copies = copies.saturating_add(o.copies);
        }
        if copies > 0 {
            out.push(start..self.owners.len());
        }
        out
    }

    /// One pass: the owners `pass` with several owner objects, by their
    /// position in `pass`, with their owner objects counted.
    fn pass(&mut self, pass: std::ops::Range<usize>) -> Vec<(usize, (u64, Option<ObjectIdx>))> {
        let owners = &self.owners[pass.clone()];
        let anchors = &self.anchors[pass.clone()];
        let many = sets_of_many(owners, anchors);
        let of_many = |&(i, _): &(u32, _)| {
            many.get(i as usize / 64)
                .is_some_and(|w| w >> (i % 64) & 1 != 0)
        };
        let mut charged = Charged::new(owners, anchors);
        // The last path's owner: a set's copies mostly share their path.
        let mut last = (UNSET, 0);
        let dom = self.walk.dom;
        for (i, _) in verified(self.dups).filter(of_many) {
            for &m in self.dups.members(i).iter().skip(1) {
                let d0 = dom.idom.get(m as usize);
                if d0 == NOT_REACHABLE || d0 == SUPER_ROOT {
                    continue;
                }
                let (path, anchor) = self.walk.resolve(d0);
                if last.0 != path {
                    last = (path, self.slot[&path]);
                }
                if pass.contains(&last.1) && self.anchors[last.1] == MANY {
                    charged.push(last.1 - pass.start, anchor);
                }
            }
        }
        crate::mem::alive(
            "owners: charged",
            &[
                ("joins", self.walk.memo.joins.heap_bytes()),
                ("memo", self.walk.memo.heap_bytes()),
                (
                    "paths",
                    self.walk.paths.nodes.capacity() * 8 + self.walk.paths.index.capacity() * 13,
                ),
                ("owners", std::mem::size_of_val(self.owners)),
                (
                    "owner sets",
                    (self.owners.iter())
                        .map(|o| o.1.sets.capacity() * std::mem::size_of::<OwnerSet>())
                        .sum(),
                ),
                ("charged", charged.objects.capacity() * 4),
            ],
        );
        (0..owners.len())
            .filter(|&k| anchors[k] == MANY)
            .map(|k| (k, charged.count(k, &owners[k].1, self.dups)))
            .collect()
    }
}

/// One bit a set: whether some of its copies are charged to one of
/// `owners` with several owner objects ([`MANY`] in `anchors`), whose
/// pass walks only those sets' copies.
fn sets_of_many(owners: &[(u32, Owner)], anchors: &[u32]) -> Vec<u64> {
    let ids = owners.iter().flat_map(|o| o.1.sets.iter().map(|s| s.set));
    let words = ids.max().map_or(0, |m| m as usize + 1).div_ceil(64);
    let mut bits = vec![0u64; words];
    for ((_, o), &a) in owners.iter().zip(anchors) {
        if a == MANY {
            for share in &o.sets {
                bits[share.set as usize / 64] |= 1 << (share.set % 64);
            }
        }
    }
    bits
}

/// The owner objects charged (the dominators the walks stopped at) to the
/// owners of one pass with several: an owner's together and in the order
/// they were charged (that of its `sets` before they are sorted, each
/// set's copies one run), 4 bytes a copy. A map of every (owner, owner
/// object) pair with its bytes, beside the first owner of each owner
/// object (16 bytes an owner object), set the V8 snapshot's peak: 12 MiB
/// and 29 of table and, as it grew, the old table too; the copies of
/// every owner at once, 14 MiB there, and a sorted copy of one owner's
/// beside them (8 bytes a copy), 12 more.
struct Charged {
    /// Per owner, where its copies' owner objects start, and past the last
    /// the end (none for an owner with one owner object).
    starts: Vec<usize>,
    /// Per owner, where its next copy's owner object goes.
    next: Vec<usize>,
    objects: Vec<u32>,
}

impl Charged {
    /// Room for the copies `owners` counted of those with several owner
    /// objects (`anchors`).
    fn new(owners: &[(u32, Owner)], anchors: &[u32]) -> Charged {
        let mut starts = Vec::with_capacity(owners.len() + 1);
        let mut end = 0;
        for ((_, o), &a) in owners.iter().zip(anchors) {
            starts.push(end);
            if a == MANY {
                end += o.copies as usize;
            }
        }
        starts.push(end);
        Charged {
            next: starts[..owners.len()].to_vec(),
            objects: crate::mem::zeroed(end),
            starts,
        }
    }

    /// Charges owner `k`'s next copy to owner object `anchor`.
    fn push(&mut self, k: usize, anchor: u32) {
        let at = self.next[k];
        // Both walks charge the same copies: an owner has room for each.
        if at < self.starts[k + 1] {
            self.objects[at] = anchor;
            self.next[k] = at + 1;
        }
    }

    /// Owner `owner` (the `k`th)'s distinct owner objects and the one
    /// charged most (see [`count_objects`]).
    fn count(&mut self, k: usize, owner: &Owner, dups: &Duplicates) -> (u64, Option<ObjectIdx>) {
        let objects = &mut self.objects[self.starts[k]..self.next[k]];
        let each = |share: &OwnerSet| {
            OwnerSet {
                copies: 1,
                ..*share
            }
            .bytes(dups)
        };
        let shares = owner.sets.iter().map(|s| (s.copies as usize, each(s)));
        count_objects(objects, shares)
    }
}

/// The distinct owner objects of an owner and the one charged most
/// (lowest index on a tie, the sum of its copies' bytes): `objects` are
/// its copies' owner objects, in runs of `shares` (how many copies, the
/// bytes of each) in their order. Each run is sorted in place (a run's
/// copies weigh the same), then the runs are merged by owner object
/// through a heap of one entry a run: 32 bytes a run beside the copies,
/// where sorting (owner object, run) pairs took 8 bytes a copy.
fn count_objects(
    objects: &mut [u32],
    shares: impl Iterator<Item = (usize, u64)>,
) -> (u64, Option<ObjectIdx>) {
    // Per run: its next copy, its end and the bytes of each copy.
    let mut runs: Vec<(usize, usize, u64)> = Vec::with_capacity(shares.size_hint().0);
    let mut at = 0usize;
    for (copies, each) in shares {
        let end = at.saturating_add(copies).min(objects.len());
        objects[at..end].sort_unstable();
        runs.push((at, end, each));
        at = end;
    }
    let mut heap: BinaryHeap<Reverse<(u32, u32)>> = (runs.iter().enumerate())
        .filter(|(_, r)| r.0 < r.1)
        .map(|(k, r)| Reverse((objects[r.0], k as u32)))
        .collect();
    let mut count = 0;
    let mut best: Option<(u64, Reverse<u32>)> = None;
    // The owner object being summed and its bytes so far.
    let mut current: Option<(u32, u64)> = None;
    while let Some(mut top) = heap.peek_mut() {
        let Reverse((object, k)) = *top;
        let run = &mut runs[k as usize];
        let mut bytes = 0u64;
        while run.0 < run.1 && objects[run.0] == object {
            bytes += run.2;
            run.0 += 1;
        }
        if run.0 < run.1 {
            *top = Reverse((objects[run.0], k));
        } else {
            PeekMut::pop(top);
        }
        match &mut current {
            Some((o, sum)) if *o == object => *sum += bytes,
            _ => {
                if let Some((o, sum)) = current.replace((object, bytes)) {
                    count += 1;
                    best = best.max(Some((sum, Reverse(o))));
                }
            }
        }
    }
    if let Some((o, sum)) = current {
        count += 1;
        best = best.max(Some((sum, Reverse(o))));
    }
    (count, best.map(|(_, a)| ObjectIdx(a.0)))
}

/// The extra copies charged to `owner`, an owner of
/// [`duplicate_owners`]`(dump, dom, dups, exclude)`: the members after the
/// first of its sets whose owner path is its path. Walks only its sets'
/// members (memoised as [`duplicate_owners`]'s walks). What a what-if of
/// "the owner's copies gone" cuts.
pub fn owner_copies(
    dump: &Model,
    dom: &DominatorTree,
    dups: &Duplicates,
    exclude: &[Glob],
    owner: &Owner,
) -> Vec<ObjectIdx> {
    let sets = || {
        owner
            .sets
            .iter()
            .map(|share| share.set)
            .filter(|&i| (i as usize) < dups.sets.len())
    };
    let starts = walk_starts(dom, dups, sets()).filter(|_| !owner.path.is_empty());
    let mut walk = Walk::new(dump, dom, exclude, starts);
    let mut is_owner: HashMap<u32, bool> = HashMap::new();
    let mut out = Vec::with_capacity(owner.copies as usize);
    for i in sets() {
        for &m in dups.members(i).iter().skip(1) {
            let charged = match dom.idom.get(m as usize) {
                NOT_REACHABLE => false,
                SUPER_ROOT => owner.path.is_empty(),
                _ if owner.path.is_empty() => false,
                d0 => {
                    let (path, _) = walk.resolve(d0);
                    *is_owner.entry(path).or_insert_with(|| {
                        walk.paths.types(path) == (owner.path.clone(), owner.anchored)
                    })
                }
            };
            if charged {
                out.push(ObjectIdx(m));
            }
        }
    }
    out
}

fn empty_owner() -> Owner {
    Owner {
        path: Vec::new(),
        anchored: false,
        bytes: 0,
        copies: 0,
        sets: Vec::new(),
        instances: 0,
        top_instance: None,
    }
}

/// Paths spelled out, owner objects counted, everything sorted.
fn finish(
    dump: &Model,
    dups: &Duplicates,
    paths: Paths,
    owners: Vec<(u32, Owner)>,
    counted: Vec<(u64, Option<ObjectIdx>)>,
    exclude: &[Glob],
) -> Owners {
    let mut owners: Vec<Owner> = owners
        .into_iter()
        .map(|(p, mut o)| {
            if p != HELD_BY_ROOTS {
                (o.path, o.anchored) = paths.types(p);
            }
            o
        })
        .collect();
    for (o, c) in owners.iter_mut().zip(counted) {
        (o.instances, o.top_instance) = c;
    }
    for o in &mut owners {
        o.sets.shrink_to_fit();
        o.sets
            .sort_by(|a, b| (b.bytes(dups).cmp(&a.bytes(dups))).then(a.set.cmp(&b.set)));
    }
    let names = |o: &Owner| Owners::path_text(dump, o);
    owners.sort_by(|a, b| {
        b.bytes
            .cmp(&a.bytes)
            .then(b.copies.cmp(&a.copies))
            .then_with(|| names(a).cmp(&names(b)))
            .then(b.anchored.cmp(&a.anchored))
    });
    Owners {
        exclude: exclude.iter().map(|g| g.as_str()).collect(),
        bytes: owners.iter().map(|o| o.bytes).sum(),
        owners,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// [`count_objects`] by definition: every copy's (owner object,
    /// bytes), summed per owner object.
    fn oracle(objects: &[u32], shares: &[(usize, u64)]) -> (u64, Option<ObjectIdx>) {
        let each = shares.iter().flat_map(|&(n, b)| std::iter::repeat_n(b, n));
        let mut per: std::collections::BTreeMap<u32, u64> = Default::default();
        for (&o, b) in objects.iter().zip(each) {
            *per.entry(o).or_default() += b;
        }
        let top = per.iter().max_by_key(|&(&o, &b)| (b, Reverse(o)));
        (per.len() as u64, top.map(|(&o, _)| ObjectIdx(o)))
    }

    proptest! {
        #[test]
        fn owner_objects_merged_from_runs_are_counted_by_definition(
            shares in prop::collection::vec((0usize..6, 0u64..5), 0..8),
            seed in prop::collection::vec(0u32..6, 0..40),
        ) {
            let copies: usize = shares.iter().map(|s| s.0).sum();
            let objects: Vec<u32> = (0..copies).map(|c| seed.get(c).copied().unwrap_or(c as u32)).collect();
            let want = oracle(&objects, &shares);
            let mut sorted = objects.clone();
            prop_assert_eq!(count_objects(&mut sorted, shares.iter().copied()), want);
        }
    }
}
