//! The grouped dominator rows of one snapshot (docs/analyses.md) as a table keyed
//! by type path, and the merge of several snapshots' tables (docs/analyses.md).
//!
//! A row of the grouped tree is identified by its type path: the row
//! `[T1, …, Tk]` holds exactly the reachable objects of row type `Tk`
//! (`Model::row_type`: the type, or `class X` for a Java class object)
//! whose immediate dominator is in the row `[T1, …, Tk-1]` (the empty path
//! is the super-root). So every reachable object belongs to exactly one row, and a
//! snapshot has at most as many rows as reachable objects.
//!
//! [`PathTable::build`] expands rows the way the UI does (the members'
//! dominator children, bucketed by type through an array indexed by type:
//! no hashing per object), depth first over an arena that holds each
//! pending object once, so its memory is linear in the reachable objects.
//! The subtrees of the top-level rows are independent and run in parallel.
//!
//! Paths are numbered so that a parent precedes its children; the merge
//! ([`MergedRows::merge`]) maps each snapshot's paths in that order through
//! a hash-consing table `(merged parent, shared type id) → merged path`:
//! one hash operation per path per snapshot, never a string per row.

use rayon::prelude::*;

use crate::graph::{DominatorTree, Rank};
use crate::model::{Model, ObjectIdx};

/// No path (a parent of the empty path, or a member in a missing snapshot).
pub const NO_PATH: u32 = u32::MAX;
/// No object.
pub const NO_OBJECT: u32 = u32::MAX;

/// One snapshot's grouped dominator rows. Path 0 is the empty path (the
/// super-root); every other path's parent has a smaller number.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathTable {
    /// Per path, the path it extends by one type ([`NO_PATH`] for path 0).
    pub parent: Vec<u32>,
    /// The last type of the path (index into the snapshot's type names).
    pub type_index: Vec<u32>,
    /// Objects in the row.
    pub count: Vec<u32>,
    /// Per path, the retained bytes of its objects added up.
    pub retained_bytes: Vec<u64>,
    /// Per path, the objects its objects retain (themselves included).
    pub retained_objects: Vec<u32>,
    /// The member with the largest retained bytes (ties: first met).
    pub largest: Vec<u32>,
}

impl PathTable {
    fn with_root() -> PathTable {
        let mut t = PathTable::default();
        t.push(NO_PATH, u32::MAX);
        t
    }

    /// How many paths, the empty one included.
    pub fn len(&self) -> usize {
        self.parent.len()
    }

    /// Whether the table has no path at all (not even the empty one).
    pub fn is_empty(&self) -> bool {
        self.parent.is_empty()
    }

    fn push(&mut self, parent: u32, type_index: u32) -> u32 {
        self.parent.push(parent);
        self.type_index.push(type_index);
        self.count.push(0);
        self.retained_bytes.push(0);
        self.retained_objects.push(0);
        self.largest.push(NO_OBJECT);
        (self.parent.len() - 1) as u32
    }

    fn add_member(&mut self, path: u32, object: u32, dom: &DominatorTree) {
        let p = path as usize;
        let bytes = dom.retained_bytes(object as usize);
        self.count[p] += 1;
        self.retained_bytes[p] += bytes;
        self.retained_objects[p] += dom.retained_objects(object as usize);
        let l = self.largest[p];
        if l == NO_OBJECT || bytes > dom.retained_bytes(l as usize) {
            self.largest[p] = object;
        }
    }

    /// The type path of `path`, root-most first (type indices).
    pub fn types_of(&self, mut path: u32) -> Vec<u32> {
        let mut types = Vec::new();
        while path != 0 && path != NO_PATH {
            types.push(self.type_index[path as usize]);
            path = self.parent[path as usize];
        }
        types.reverse();
        types
    }

    /// Builds the table of a snapshot: O(reachable objects), parallel over
    /// the top-level rows.
    pub fn build(dump: &Model, dom: &DominatorTree) -> PathTable {
        let types = dump.type_names.len();
        let mut table = PathTable::with_root();
        let mut expander = Expander::new(types);
        // The top-level rows: the super-root's children by type.
        let top = expander.expand_one(dump, dom, &mut table, 0, &[dom.super_root()]);
        let subtables: Vec<(u32, PathTable)> = top
            .into_par_iter()
            .map_init(
                || Expander::new(types),
                |ex, (path, members)| {
                    let mut local = PathTable::default();
                    ex.expand_subtree(dump, dom, &mut local, members);
                    (path, local)
                },
            )
            .collect();
        for (top, local) in subtables {
            table.append(top, local);
        }
        table
    }

    /// Appends the subtable of the rows below the top-level row `top`: its
    /// parents are [`TOP`] (that row) or its own path numbers.
    fn append(&mut self, top: u32, local: PathTable) {
        let offset = self.len() as u32;
        self.parent.extend(
            local
                .parent
                .iter()
                .map(|&p| if p == TOP { top } else { p + offset }),
        );
        self.type_index.extend(local.type_index);
        self.count.extend(local.count);
        self.retained_bytes.extend(local.retained_bytes);
        self.retained_objects.extend(local.retained_objects);
        self.largest.extend(local.largest);
    }
}

/// The parent of a subtable's first rows: the top-level row it expands.
const TOP: u32 = u32::MAX - 1;

/// Scratch state of row expansion: a slot per type and a stack arena.
struct Expander {
    /// Per type: its bucket in the row being expanded, or u32::MAX.
    slot: Vec<u32>,
    /// `(type, members)` of the buckets of the row being expanded.
    buckets: Vec<(u32, u32)>,
    /// `(bucket, child)` of the row being expanded.
    pairs: Vec<(u32, u32)>,
    arena: Vec<u32>,
    /// One member's children by rank.
    ranked: Vec<Rank>,
}

impl Expander {
    fn new(types: usize) -> Expander {
        Expander {
            slot: vec![u32::MAX; types],
            buckets: Vec::new(),
            pairs: Vec::new(),
            arena: Vec::new(),
            ranked: Vec::new(),
        }
    }

    /// Expands one row (members given) into its child rows; returns each
    /// child row's number in `table` and its members.
    fn expand_one(
        &mut self,
        dump: &Model,
        dom: &DominatorTree,
        table: &mut PathTable,
        path: u32,
        members: &[u32],
    ) -> Vec<(u32, Vec<u32>)> {
        self.arena.clear();
        self.arena.extend_from_slice(members);
        let rows = self.bucket(dump, dom, table, path, 0);
        let out = rows
            .iter()
            .map(|&(p, start, end)| (p, self.arena[start..end].to_vec()))
            .collect();
        self.arena.clear();
        out
    }

    /// Expands a top-level row with `members` and everything below it
    /// into `local`, whose first rows get the parent [`TOP`].
    fn expand_subtree(
        &mut self,
        dump: &Model,
        dom: &DominatorTree,
        local: &mut PathTable,
        members: Vec<u32>,
    ) {
        self.arena.clear();
        self.arena.extend_from_slice(&members);
        drop(members);
        // Invariant: the row on top of the stack owns the arena's tail.
        let mut stack: Vec<(u32, usize)> = vec![(TOP, 0)];
        while let Some((p, start)) = stack.pop() {
            let rows = self.bucket(dump, dom, local, p, start);
            stack.extend(rows.into_iter().map(|(p, s, _)| (p, s)));
        }
        self.arena.clear();
    }

    /// Buckets the dominator children of `arena[start..]` (the members of
    /// row `path`) by type into new rows of `table`, replacing the members
    /// with the children; returns `(row, start, end)` of each new row.
    /// `path` is stored as the new rows' parent.
    fn bucket(
        &mut self,
        dump: &Model,
        dom: &DominatorTree,
        table: &mut PathTable,
        path: u32,
        start: usize,
    ) -> Vec<(u32, usize, usize)> {
        let end = self.arena.len();
        self.buckets.clear();
        self.pairs.clear();
        let first = table.len() as u32;
        let rows = dump.row_types();
        // One pass over the children: each child's type, retained bytes and
        // objects are read together (independent misses overlap), and the
        // child is remembered with its bucket for the placement below.
        for i in start..end {
            // By retained bytes, as the views list them: the rows' order
            // and their largest members (ties: first met) follow from it.
            dom.children_sorted_into(self.arena[i], &mut self.ranked);
            for &(_, c) in &self.ranked {
                let ty = rows.of(ObjectIdx(c), dump.types.get(c as usize)).raw();
                let s = &mut self.slot[ty as usize];
                if *s == u32::MAX {
                    *s = self.buckets.len() as u32;
                    self.buckets.push((ty, 0));
                    table.push(path, ty);
                }
                let b = *s;
                self.buckets[b as usize].1 += 1;
                table.add_member(first + b, c, dom);
                self.pairs.push((b, c));
            }
        }
        for &(ty, _) in &self.buckets {
            self.slot[ty as usize] = u32::MAX;
        }
        // The members are consumed: their children take their place,
        // bucket by bucket.
        let mut rows = Vec::with_capacity(self.buckets.len());
        let mut next = Vec::with_capacity(self.buckets.len());
        let mut at = start;
        for (i, &(_, n)) in self.buckets.iter().enumerate() {
            next.push(at);
            rows.push((first + i as u32, at, at + n as usize));
            at += n as usize;
        }
        self.arena.truncate(start);
        self.arena.resize(at, 0);
        for &(b, c) in &self.pairs {
            self.arena[next[b as usize]] = c;
            next[b as usize] += 1;
        }
        rows
    }
}

pub(crate) use crate::model::FastMap;

/// Figures of one row in one snapshot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RowFigures {
    /// Objects in the row.
    pub count: u32,
    /// Objects they retain, themselves included.
    pub retained_objects: u32,
    /// Bytes they retain.
    pub retained_bytes: u64,
}

/// The rows of several snapshots merged by type path. Path 0 is the empty
/// path; parents precede children. Types are shared ids (see
/// [`super::compare::Comparison::type_names`]).
#[derive(Debug, Clone, Default)]
pub struct MergedRows {
    /// How many snapshots (the stride of `figures`).
    pub snapshots: usize,
    /// Per path, the path it extends by one type ([`NO_PATH`] for path 0).
    pub parent: Vec<u32>,
    /// Per path, its last type, a shared type id.
    pub type_id: Vec<u32>,
    /// `figures[path * snapshots + s]`.
    pub figures: Vec<RowFigures>,
    /// Per path: its largest member in the newest snapshot, or
    /// [`NO_OBJECT`] where the row is absent there.
    pub newest_largest: Vec<u32>,
}

impl MergedRows {
    /// How many paths, the empty one included.
    pub fn len(&self) -> usize {
        self.parent.len()
    }

    /// Whether there is no path at all.
    pub fn is_empty(&self) -> bool {
        self.parent.is_empty()
    }

    /// The figures of `path` in every snapshot, oldest first.
    pub fn figures_of(&self, path: u32) -> &[RowFigures] {
        let k = self.snapshots;
        &self.figures[path as usize * k..(path as usize + 1) * k]
    }

    /// The shared type ids of `path`, root-most first.
    pub fn types_of(&self, mut path: u32) -> Vec<u32> {
        let mut types = Vec::new();
        while path != 0 && path != NO_PATH {
            types.push(self.type_id[path as usize]);
            path = self.parent[path as usize];
        }
        types.reverse();
        types
    }

    /// Retained bytes rise at every step, oldest to newest (with one
    /// snapshot: never).
    pub fn grows_steadily(&self, path: u32) -> bool {
        let f = self.figures_of(path);
        f.len() >= 2
            && f.windows(2)
                .all(|w| w[1].retained_bytes > w[0].retained_bytes)
    }

    /// Newest minus oldest retained bytes.
    pub fn growth(&self, path: u32) -> i128 {
        let f = self.figures_of(path);
        f[f.len() - 1].retained_bytes as i128 - f[0].retained_bytes as i128
    }

    /// Whether any figure differs between snapshots.
    pub fn differs(&self, path: u32) -> bool {
        let f = self.figures_of(path);
        f.windows(2).any(|w| w[0] != w[1])
    }

    /// Merges the tables, oldest first; `shared_type[s][t]` maps snapshot
    /// `s`'s type index `t` to a shared id. One hash operation per path.
    pub fn merge(tables: &[&PathTable], shared_type: &[Vec<u32>]) -> MergedRows {
        let k = tables.len();
        let mut m = MergedRows {
            snapshots: k,
            ..MergedRows::default()
        };
        let capacity = tables.iter().map(|t| t.len()).max().unwrap_or(1);
        let mut keys: FastMap<u64, u32> = FastMap::default();
        keys.reserve(capacity);
        m.push(NO_PATH, u32::MAX);
        for (s, table) in tables.iter().enumerate() {
            let mut map = vec![0u32; table.len()];
            for p in 1..table.len() {
                let parent = map[table.parent[p] as usize];
                let ty = shared_type[s][table.type_index[p] as usize];
                let key = (parent as u64) << 32 | ty as u64;
                let g = *keys.entry(key).or_insert_with(|| m.push(parent, ty));
                map[p] = g;
                m.figures[g as usize * k + s] = RowFigures {
                    count: table.count[p],
                    retained_objects: table.retained_objects[p],
                    retained_bytes: table.retained_bytes[p],
                };
                if s + 1 == k {
                    m.newest_largest[g as usize] = table.largest[p];
                }
            }
        }
        m
    }

    fn push(&mut self, parent: u32, ty: u32) -> u32 {
        self.parent.push(parent);
        self.type_id.push(ty);
        self.figures
            .extend(std::iter::repeat_n(RowFigures::default(), self.snapshots));
        self.newest_largest.push(NO_OBJECT);
        (self.parent.len() - 1) as u32
    }
}
