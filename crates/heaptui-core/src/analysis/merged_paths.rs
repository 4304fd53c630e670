//! Merged shortest paths to the roots (docs/analyses.md): why a set of
//! objects (a type's instances, a group row, a duplicate set) is alive, as
//! the few structures through which they are all held.
//!
//! One breadth-first tree from the strong roots over the strong references
//! (`Model::refs`: weak, soft, final and phantom referents are not among
//! them unless `--references all`), the same reachability as the dominator
//! tree's. Breadth-first trees are not unique; this one is fixed: the
//! queue starts with `HeapGraph::strong_roots` in their order (each
//! object's first strong root record), each object's references are
//! followed in field order, and an object's parent is the first object
//! that reached it. Each target's tree path, rooted object first, is
//! turned into a type path — the kind of the rooted object's first strong
//! root record, then the row type ([`Model::row_type`]) of every object on
//! the path, the target's own last, less the objects whose type an exclude
//! pattern matches (a target is never left out) — and the type paths are
//! merged into a tree.
//!
//! Each node counts the targets whose type path passes through it (or
//! ends there) and their retained bytes added up without counting a byte
//! twice: a target that another target of the node dominates is left out
//! of the sum, since the dominator's retained bytes hold its own. The
//! dominators of a target all lie on its tree path, so "the nearest target
//! dominating it" is found in the one pass over the tree's paths, and the
//! sums are made by adding a target's bytes at its own node and taking
//! them off at its nearest dominating target's node, then adding up
//! subtrees. Time: the breadth-first search (stopped once every reachable
//! target is reached) plus the objects on the targets' paths; memory: two
//! `u32` per object and the nodes.

use super::queries::excluded_types;
use super::Glob;
use crate::graph::{DominatorTree, HeapGraph, SUPER_ROOT};
use crate::model::{root_kind, FastMap, Model, ObjectIdx, TypeIdx};
use crate::progress::{Cancelled, Progress, Stage};

/// No node (the parent of the top node).
pub const NO_NODE: u32 = u32::MAX;

/// What a node of the merged tree stands for: one step of a type path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Step {
    /// The top node: every target's path.
    All,
    /// The rooted objects whose first strong root record is of this
    /// [`root_kind`].
    Root(u32),
    /// Objects of this row type ([`Model::row_type`]).
    Type(TypeIdx),
}

impl Step {
    /// The step as the report and the UI name it: `all`, `roots: local
    /// variable`, or the type's name (unescaped: the caller escapes it).
    pub fn name(self, dump: &Model) -> String {
        match self {
            Step::All => "all".into(),
            Step::Root(kind) => format!("roots: {}", root_kind::name(kind)),
            Step::Type(t) => dump.name_of_type(t).to_string(),
        }
    }
}

/// One node of the merged tree: a type path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathNode {
    /// The node this one extends by one step ([`NO_NODE`] for the top).
    pub parent: u32,
    /// Its last step.
    pub step: Step,
    /// Steps from the top (the top is 0, a root kind 1).
    pub depth: u32,
    /// Targets whose type path passes through this node or ends at it.
    pub count: u64,
    /// Targets whose type path ends at this node.
    pub ending: u64,
    /// The retained bytes of those targets, no byte counted twice.
    pub retained_bytes: u64,
    /// The first object (in breadth-first order) on this node: the
    /// object to show for it. `None` for the top and root-kind nodes.
    pub object: Option<ObjectIdx>,
    /// The nodes that extend it, most targets first (then most bytes,
    /// then the order the search met them).
    pub children: Vec<u32>,
}

/// The merged tree of a set's paths to the roots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergedPaths {
    /// Node 0 is the top ([`Step::All`]); a node's parent has a smaller
    /// number.
    pub nodes: Vec<PathNode>,
    /// Distinct objects asked about.
    pub targets: u64,
    /// Those that no strong root reaches (in no path).
    pub unreachable: u64,
    /// Objects the breadth-first search visited.
    pub visited: u64,
}

impl MergedPaths {
    /// The nodes depth first from the top, each node's children in order.
    pub fn depth_first(&self) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.nodes.len());
        let mut stack = vec![0u32];
        while let Some(n) = stack.pop() {
            out.push(n);
            stack.extend(self.nodes[n as usize].children.iter().rev());
        }
        out
    }

    /// The targets that are in the tree (strongly reachable).
    pub fn reachable(&self) -> u64 {
        self.nodes.first().map_or(0, |n| n.count)
    }

    /// The node's steps from the first under the top to the node itself.
    pub fn path_of(&self, mut node: u32) -> Vec<Step> {
        let mut steps = Vec::new();
        while node != 0 && node != NO_NODE {
            let n = &self.nodes[node as usize];
            steps.push(n.step);
            node = n.parent;
        }
        steps.reverse();
        steps
    }
}

/// An object's parent in the search tree: not reached yet.
const UNSEEN: u32 = u32::MAX;
/// An object's parent in the search tree: it is a strong root.
const ROOTED: u32 = u32::MAX - 1;

/// One bit per object.
struct Bits(Vec<u64>);

impl Bits {
    fn new(n: usize) -> Bits {
        Bits(vec![0; n.div_ceil(64)])
    }
    fn get(&self, i: u32) -> bool {
        self.0[i as usize / 64] >> (i % 64) & 1 != 0
    }
    fn set(&mut self, i: u32) {
        self.0[i as usize / 64] |= 1 << (i % 64);
    }
}

/// The merged shortest paths from the strong roots to `targets` (any
/// order, repeats allowed), skipping objects whose row type one of
/// `exclude` matches (as the immediate dominators do: a Java class
/// object's row `class X` as `X`). See the module's documentation.
pub fn merged_paths(
    graph: &HeapGraph,
    dom: &DominatorTree,
    targets: &[ObjectIdx],
    exclude: &[Glob],
    progress: &Progress,
) -> Result<MergedPaths, Cancelled> {
    let _span = tracing::debug_span!(target: "heaptui::profile", "merged paths").entered();
    let n = graph.objects();
    let mut is_target = Bits::new(n);
    let (mut distinct, mut goal) = (0u64, 0u64);
    for &t in targets {
        if !is_target.get(t.raw()) {
            is_target.set(t.raw());
            distinct += 1;
            goal += dom.is_reachable(t.raw()) as u64;
        }
    }
    let (mut slot, order) = search(graph, &is_target, goal, dom, progress)?;
    let visited = order.len() as u64;
    tracing::debug!(target: "heaptui::profile", visited, targets = distinct, "merged paths: searched");
    let on_path = mark_paths(&slot, &order, &is_target);
    let excluded = excluded_rows(&graph.dump, exclude);
    let mut tree = Builder::new(dom);
    for &v in &order {
        if on_path.get(v) {
            tree.place(graph, &mut slot, v, &is_target, &excluded);
        }
    }
    let nodes = tree.finish();
    Ok(MergedPaths {
        nodes,
        targets: distinct,
        unreachable: distinct - goal,
        visited,
    })
}

/// Per row type, whether one of `exclude` excludes it.
fn excluded_rows(dump: &Model, exclude: &[Glob]) -> Vec<bool> {
    let mut out = vec![false; dump.type_names.len()];
    for g in exclude {
        for (o, e) in out.iter_mut().zip(excluded_types(dump, Some(g))) {
            *o |= e;
        }
    }
    out
}

/// The breadth-first search from the strong roots, stopped once `goal`
/// targets are reached: per object its parent ([`UNSEEN`], [`ROOTED`] or
/// an object), and the objects in the order they were reached.
fn search(
    graph: &HeapGraph,
    is_target: &Bits,
    goal: u64,
    dom: &DominatorTree,
    progress: &Progress,
) -> Result<(Vec<u32>, Vec<u32>), Cancelled> {
    progress.start(Stage::Done, dom.reachable_objects.max(1));
    progress.check()?;
    let mut parent = vec![UNSEEN; graph.objects()];
    let mut queue: Vec<u32> = Vec::new();
    let mut found = 0u64;
    let mut reach = |o: u32, from: u32, parent: &mut [u32], queue: &mut Vec<u32>| {
        parent[o as usize] = from;
        queue.push(o);
        found += is_target.get(o) as u64;
        found
    };
    let mut all = goal == 0;
    for &r in graph.strong_roots_raw() {
        if parent[r as usize] == UNSEEN {
            all |= reach(r, ROOTED, &mut parent, &mut queue) == goal;
        }
    }
    let mut head = 0;
    while head < queue.len() && !all {
        let v = queue[head];
        head += 1;
        if head.is_multiple_of(1 << 16) {
            progress.set_done(head as u64);
            progress.check()?;
        }
        for w in graph.refs_raw(v) {
            if parent[w as usize] == UNSEEN {
                all |= reach(w, v, &mut parent, &mut queue) == goal;
            }
        }
    }
    progress.set_done(dom.reachable_objects);
    Ok((parent, queue))
}

/// The objects on some reachable target's tree path (the targets among
/// them): each target's parents up to a marked one or a root.
fn mark_paths(parent: &[u32], order: &[u32], is_target: &Bits) -> Bits {
    let mut on_path = Bits::new(parent.len());
    for &t in order {
        if !is_target.get(t) {
            continue;
        }
        let mut x = t;
        while !on_path.get(x) {
            on_path.set(x);
            match parent[x as usize] {
                ROOTED => break,
                p => x = p,
            }
        }
    }
    on_path
}

/// The merged tree under construction, fed the objects on the targets'
/// paths in breadth-first order (so an object's parent, and its
/// dominators, come before it).
struct Builder<'a> {
    dom: &'a DominatorTree,
    nodes: Vec<PathNode>,
    /// (parent node, step) → node, keyed by [`Builder::key`].
    index: FastMap<u64, u32>,
    /// Per target's node: retained bytes added (wrapping: a node's sum
    /// of its subtree is what counts).
    bytes: Vec<u64>,
    /// Per object on a path: the node of its nearest strict dominator that
    /// is a target, [`NO_NODE`] if none (only the entries of objects on
    /// paths are used).
    above: Vec<u32>,
}

impl<'a> Builder<'a> {
    fn new(dom: &'a DominatorTree) -> Builder<'a> {
        let mut b = Builder {
            dom,
            nodes: Vec::new(),
            index: FastMap::default(),
            bytes: Vec::new(),
            above: vec![NO_NODE; dom.idom.len()],
        };
        b.push(NO_NODE, Step::All, None);
        b
    }

    fn push(&mut self, parent: u32, step: Step, object: Option<ObjectIdx>) -> u32 {
        let id = self.nodes.len() as u32;
        let depth = match parent {
            NO_NODE => 0,
            p => self.nodes[p as usize].depth + 1,
        };
        self.nodes.push(PathNode {
            parent,
            step,
            depth,
            count: 0,
            ending: 0,
            retained_bytes: 0,
            object,
            children: Vec::new(),
        });
        self.bytes.push(0);
        id
    }

    /// One word per (parent, step), hashed in one step: root kinds are
    /// children of the top only, and types never are, so a step's low
    /// half is the kind or the type.
    fn key(parent: u32, step: Step) -> u64 {
        let low = match step {
            Step::All => u32::MAX,
            Step::Root(kind) => kind,
            Step::Type(t) => t.0,
        };
        (parent as u64) << 32 | low as u64
    }

    fn child(&mut self, parent: u32, step: Step, object: Option<ObjectIdx>) -> u32 {
        let key = Builder::key(parent, step);
        if let Some(&id) = self.index.get(&key) {
            return id;
        }
        let id = self.push(parent, step, object);
        self.index.insert(key, id);
        id
    }

    /// Gives `v` its node (in `slot`, which held its search parent and
    /// from now on holds its node), and counts it if it is a target.
    fn place(
        &mut self,
        graph: &HeapGraph,
        slot: &mut [u32],
        v: u32,
        is_target: &Bits,
        excluded: &[bool],
    ) {
        let dump = &graph.dump;
        let object = ObjectIdx(v);
        let up = match slot[v as usize] {
            ROOTED => {
                let kind = graph
                    .roots_of(object)
                    .find(|r| r.is_strong())
                    .map_or(root_kind::INTERNAL, |r| r.kind);
                self.child(0, Step::Root(kind), None)
            }
            p => slot[p as usize],
        };
        let row = dump.row_type(object);
        let target = is_target.get(v);
        let node = if excluded[row.index()] && !target {
            up
        } else {
            self.child(up, Step::Type(row), Some(object))
        };
        slot[v as usize] = node;
        // The nearest target among v's strict dominators (all of them on
        // its tree path, so placed before it).
        let d = self.dom.idom.get(v as usize);
        self.above[v as usize] = if d == SUPER_ROOT {
            NO_NODE
        } else if is_target.get(d) {
            slot[d as usize]
        } else {
            self.above[d as usize]
        };
        if target {
            let r = self.dom.retained_bytes(v as usize);
            let n = &mut self.nodes[node as usize];
            n.ending += 1;
            self.bytes[node as usize] = self.bytes[node as usize].wrapping_add(r);
            let a = self.above[v as usize];
            if a != NO_NODE {
                self.bytes[a as usize] = self.bytes[a as usize].wrapping_sub(r);
            }
        }
    }

    /// Adds up the subtrees and orders every node's children.
    fn finish(self) -> Vec<PathNode> {
        let Builder {
            mut nodes,
            mut bytes,
            ..
        } = self;
        for i in (0..nodes.len()).rev() {
            let n = &mut nodes[i];
            n.count += n.ending;
            n.retained_bytes = bytes[i];
            let (p, count) = (n.parent, n.count);
            if p != NO_NODE {
                let p = p as usize;
                nodes[p].count += count;
                bytes[p] = bytes[p].wrapping_add(bytes[i]);
            }
        }
        for i in 1..nodes.len() {
            let p = nodes[i].parent as usize;
            nodes[p].children.push(i as u32);
        }
        for i in 0..nodes.len() {
            let mut children = std::mem::take(&mut nodes[i].children);
            children.sort_by(|&a, &b| {
                let (x, y) = (&nodes[a as usize], &nodes[b as usize]);
                y.count
                    .cmp(&x.count)
                    .then(y.retained_bytes.cmp(&x.retained_bytes))
                    .then(a.cmp(&b))
            });
            nodes[i].children = children;
        }
        nodes
    }
}

/// The exclude patterns a format's merged paths start from where the user
/// asks for the usual ones: Java's platform packages for HPROF, the .NET
/// runtime's namespaces for gcdump and the text format, none for V8.
pub fn default_excludes(format: crate::model::Format) -> &'static [&'static str] {
    use crate::model::Format;
    match format {
        Format::Hprof => &["java.*", "javax.*", "jdk.*", "sun.*"],
        Format::Gcdump | Format::Rpm => &["System.*", "Microsoft.*"],
        Format::Heapsnapshot => &[],
    }
}

/// A merged tree's figures by path, to compare snapshots: a node of one
/// snapshot's tree is the node of another's with the same steps by name
/// (object ids and type indices mean nothing across dumps).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathFigures {
    /// Per [`path_ids`] value: (objects through the node, their retained
    /// bytes).
    pub by_path: std::collections::HashMap<u64, (u64, u64)>,
}

impl PathFigures {
    /// The figures of every node of `m`, a tree of `dump`.
    pub fn of(m: &MergedPaths, dump: &Model) -> PathFigures {
        let ids = path_ids(m, dump);
        let by_path = ids
            .iter()
            .zip(&m.nodes)
            .map(|(&id, n)| (id, (n.count, n.retained_bytes)))
            .collect();
        PathFigures { by_path }
    }

    /// The objects through the node of path `id`: 0 where there is none.
    pub fn objects(&self, id: u64) -> u64 {
        self.by_path.get(&id).map_or(0, |f| f.0)
    }
}

/// Per node, an identity of its steps by name (a 64-bit hash of the path,
/// the same in every snapshot for the same names), in one pass over the
/// nodes (a parent's before its children's).
pub fn path_ids(m: &MergedPaths, dump: &Model) -> Vec<u64> {
    use std::hash::{Hash, Hasher};
    let mut ids: Vec<u64> = Vec::with_capacity(m.nodes.len());
    for n in &m.nodes {
        // SipHash with fixed keys: the same identity in every run.
        let mut h = std::collections::hash_map::DefaultHasher::new();
        match n.parent {
            NO_NODE => 0u64.hash(&mut h),
            p => ids[p as usize].hash(&mut h),
        }
        match n.step {
            Step::All => "\u{0}all".hash(&mut h),
            Step::Root(kind) => (1u8, kind).hash(&mut h),
            Step::Type(t) => (2u8, dump.name_of_type(t)).hash(&mut h),
        }
        ids.push(h.finish());
    }
    ids
}
