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
//! of a byte an object and 8 bytes a join.

use std::collections::HashMap;

use super::queries::excluded_by_any;
use super::Glob;
use crate::graph::duplicates::{DuplicateSet, Duplicates};
use crate::graph::{DominatorTree, NOT_REACHABLE, SUPER_ROOT};
use crate::mem::RankedBits;
use crate::model::{FastMap, Format, Model, ObjectIdx, TypeIdx};

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

/// One set's share of an owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OwnerSet {
    /// The set, a position in [`Duplicates::sets`].
    pub set: u32,
    /// Its extra copies charged to the owner.
    pub copies: u64,
    /// Their shallow bytes.
    pub bytes: u64,
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
    index: HashMap<(u32, TypeIdx), u32>,
}

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
/// object), then each gets a slot in a dense array of the joins only,
/// found by its rank among them. A fourth of a byte an object and 8 bytes
/// a join, where a hash map of every dominator met took 13 to 26 bytes a
/// dominator (on a Java or V8 heap the walks meet most objects: the
/// copies' dominators and the runtime's types above them).
struct Memo {
    /// One bit per object: the joins, ranked.
    joins: RankedBits,
    /// Per join, in object order: (owner path, owner object), [`UNSET`]
    /// until resolved.
    values: Vec<(u32, u32)>,
}

impl Memo {
    /// The slot of dominator `d`, if it is a join.
    #[inline]
    fn slot(&self, d: u32) -> Option<usize> {
        self.joins.rank(d)
    }
}

/// Per dominator met: its owner path and owner object (memoised walk).
struct Walk<'a> {
    dump: &'a Model,
    dom: &'a DominatorTree,
    excluded: Vec<bool>,
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
            paths: Paths {
                nodes: Vec::new(),
                index: HashMap::new(),
            },
            memo: Memo {
                joins: RankedBits::default(),
                values: Vec::new(),
            },
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
        !self.excluded[self.row(d).index()] || self.dom.idom[d as usize] == SUPER_ROOT
    }

    /// Finds the joins of the walks from `starts` (see [`Memo`]): each
    /// walk marks what [`Walk::resolve`] will pass from its start, up to
    /// where it stops or to a dominator marked already, a join.
    fn mark(&mut self, starts: impl Iterator<Item = u32>) {
        let words = self.dump.objects().div_ceil(64);
        let mut met = vec![0u64; words];
        let mut joins = vec![0u64; words];
        for mut d in starts {
            loop {
                let (w, b) = (d as usize / 64, d % 64);
                if met[w] >> b & 1 != 0 {
                    joins[w] |= 1 << b;
                    break;
                }
                met[w] |= 1 << b;
                if self.stops_at(d) {
                    break;
                }
                d = self.dom.idom[d as usize];
            }
        }
        drop(met);
        self.memo.joins = RankedBits::new(joins);
        self.memo.values = vec![(UNSET, UNSET); self.memo.joins.ones()];
    }

    /// The owner path and owner object of dominator `d0`: up from `d0`
    /// past excluded row types to the first that is not (or to the
    /// topmost dominator). Each join passed is memoised, so each
    /// dominator is walked past once in all: O(1) amortised a call on any
    /// chain.
    fn resolve(&mut self, d0: u32) -> (u32, u32) {
        self.stack.clear();
        let mut d = d0;
        let (mut path, anchor) = loop {
            let slot = self.memo.slot(d);
            if let Some(hit) = slot.map(|s| self.memo.values[s]).filter(|v| v.0 != UNSET) {
                break hit;
            }
            self.steps += 1;
            let ty = self.row(d);
            if self.stops_at(d) {
                let top = if self.excluded[ty.index()] {
                    UNANCHORED
                } else {
                    ANCHORED
                };
                let p = self.paths.child(top, ty);
                if let Some(s) = slot {
                    self.memo.values[s] = (p, d);
                }
                break (p, d);
            }
            self.stack.push(d);
            d = self.dom.idom[d as usize];
        };
        while let Some(x) = self.stack.pop() {
            path = self.paths.child(path, self.row(x));
            if let Some(s) = self.memo.slot(x) {
                self.memo.values[s] = (path, anchor);
            }
        }
        (path, anchor)
    }
}

/// The immediate dominators of the extra copies of `sets` that a walk
/// resolves: reachable, below the roots.
fn walk_starts<'s>(
    dom: &'s DominatorTree,
    sets: impl Iterator<Item = &'s DuplicateSet> + 's,
) -> impl Iterator<Item = u32> + 's {
    sets.flat_map(|s| s.members.iter().skip(1))
        .map(|&m| dom.idom[m as usize])
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
    owners_and_steps(dump, dom, dups, exclude).0
}

/// [`duplicate_owners`] and how many dominators its walks resolved (what
/// the walks cost: at most one a dominator met).
pub(crate) fn owners_and_steps(
    dump: &Model,
    dom: &DominatorTree,
    dups: &Duplicates,
    exclude: &[Glob],
) -> (Owners, u64) {
    let _span = tracing::debug_span!(target: "heaptui::profile", "owners").entered();
    let verified = || dups.sets.iter().filter(|s| !dups.is_unverified(s));
    let mut walk = Walk::new(dump, dom, exclude, walk_starts(dom, verified()));
    // Per owner path: its owner and, per owner object, the bytes charged.
    let mut slot: HashMap<u32, usize> = HashMap::new();
    let mut owners: Vec<(u32, Owner)> = Vec::new();
    let mut anchors = vec![0u64; dump.objects().div_ceil(64)];
    for s in verified() {
        for &m in s.members.iter().skip(1) {
            let d0 = dom.idom[m as usize];
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
            let i = *slot.entry(path).or_insert_with(|| {
                owners.push((path, empty_owner()));
                owners.len() - 1
            });
            let o = &mut owners[i].1;
            o.bytes += s.instance_bytes;
            o.copies += 1;
            match o.sets.last_mut() {
                Some(last) if last.set == s.id => {
                    last.copies += 1;
                    last.bytes += s.instance_bytes;
                }
                _ => o.sets.push(OwnerSet {
                    set: s.id,
                    copies: 1,
                    bytes: s.instance_bytes,
                }),
            }
            if anchor != UNSET {
                anchors[anchor as usize / 64] |= 1 << (anchor % 64);
            }
        }
    }
    let steps = walk.steps;
    // The bytes per owner object, in a second pass over the copies (the
    // walks memoised now).
    let mut charged = Charged::new(anchors);
    // The last path's owner: a set's copies mostly share their path.
    let mut last = (UNSET, 0);
    for s in verified() {
        for &m in s.members.iter().skip(1) {
            let d0 = dom.idom[m as usize];
            if d0 == NOT_REACHABLE || d0 == SUPER_ROOT {
                continue;
            }
            let (path, anchor) = walk.resolve(d0);
            if anchor != UNSET {
                if last.0 != path {
                    last = (path, slot[&path] as u32);
                }
                charged.add(last.1, anchor, s.instance_bytes);
            }
        }
    }
    (finish(dump, walk.paths, owners, charged, exclude), steps)
}

/// The bytes charged per (owner, owner object): for each owner object
/// (a bit an object, ranked as in [`Memo`]) its first owner and bytes,
/// other owners of the same object in a map. A map of every pair (16
/// bytes an entry, and old and new table at once as it grew) was the
/// whole analysis's peak on a V8 snapshot: 2.3 M owner objects, 107 MiB.
struct Charged {
    anchors: RankedBits,
    /// Per owner object in object order: its first owner ([`UNSET`]
    /// before any) and the bytes charged to that pair.
    first: Vec<(u32, u64)>,
    /// Keyed by (owner << 32 | owner object), the pairs of the other
    /// owners.
    other: FastMap<u64, u64>,
}

impl Charged {
    fn new(anchors: Vec<u64>) -> Charged {
        let anchors = RankedBits::new(anchors);
        Charged {
            first: vec![(UNSET, 0); anchors.ones()],
            anchors,
            other: FastMap::default(),
        }
    }

    /// Charges `bytes` to owner `i` at owner object `anchor` (marked).
    fn add(&mut self, i: u32, anchor: u32, bytes: u64) {
        let at = self.anchors.rank(anchor).expect("marked in the first pass");
        let f = &mut self.first[at];
        if f.0 == UNSET || f.0 == i {
            *f = (i, f.1 + bytes);
        } else {
            *self
                .other
                .entry((i as u64) << 32 | anchor as u64)
                .or_default() += bytes;
        }
    }

    /// Every (owner, owner object, bytes) charged, in no set order.
    fn pairs(&self) -> impl Iterator<Item = (usize, u32, u64)> + '_ {
        let firsts = self
            .anchors
            .iter_ones()
            .zip(&self.first)
            .map(|(a, &(i, bytes))| (i as usize, a, bytes));
        let others = self
            .other
            .iter()
            .map(|(&k, &bytes)| ((k >> 32) as usize, k as u32, bytes));
        firsts.chain(others)
    }
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
            .filter_map(|share| dups.sets.get(share.set as usize))
    };
    let starts = walk_starts(dom, sets()).filter(|_| !owner.path.is_empty());
    let mut walk = Walk::new(dump, dom, exclude, starts);
    let mut is_owner: HashMap<u32, bool> = HashMap::new();
    let mut out = Vec::with_capacity(owner.copies as usize);
    for s in sets() {
        for &m in s.members.iter().skip(1) {
            let charged = match dom.idom[m as usize] {
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
    paths: Paths,
    owners: Vec<(u32, Owner)>,
    charged: Charged,
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
    // Per owner, the object charged most: (bytes, lowest index).
    let mut best: Vec<Option<(u64, std::cmp::Reverse<u32>)>> = vec![None; owners.len()];
    for (i, anchor, bytes) in charged.pairs() {
        owners[i].instances += 1;
        let key = Some((bytes, std::cmp::Reverse(anchor)));
        if key > best[i] {
            best[i] = key;
        }
    }
    for (o, b) in owners.iter_mut().zip(best) {
        o.top_instance = b.map(|(_, a)| ObjectIdx(a.0));
    }
    for o in &mut owners {
        o.sets
            .sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.set.cmp(&b.set)));
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
