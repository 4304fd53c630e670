//! The grouped dominator tree (docs/analyses.md) as a lazily expanded arena: one
//! [`Tree`] per zoom level, Tree/Path flattening and filter marks. Only
//! expanded nodes are materialised. No drawing and no keys here.

use std::sync::Arc;

use std::sync::atomic::{AtomicU64, Ordering};

use crate::compared::{Compared, NO_PATH};
use heaptui_core::analysis::{domination_path, Group};
use heaptui_core::analysis::{group_children_unsorted, largest_members};
use heaptui_core::graph::DominatorTree;
use heaptui_core::model::Model;
use heaptui_core::model::ObjectIdx;

mod compared;
mod labels;

/// Instance rows added per "more" row.
pub const INSTANCE_PAGE: usize = 200;

/// Grouping the children of more parents than this is handed to the caller
/// as a job (see [`Tree::expand`]).
pub const DEFER_PARENTS: usize = 5_000;

/// Grouping more children than this (in all, over the parents) is a job
/// too: one object can dominate millions (a big array's elements).
pub const DEFER_CHILDREN: usize = 50_000;

/// Whether the children of `parents` are few enough to group on the UI
/// thread (the check costs one step per parent and child, at most
/// [`DEFER_PARENTS`] and [`DEFER_CHILDREN`]).
pub fn groups_inline(parents: &[u32], dom: &DominatorTree) -> bool {
    if parents.len() > DEFER_PARENTS {
        return false;
    }
    let mut children = 0usize;
    parents.iter().all(|&p| {
        // Counted up to the limit: at most that many steps in all.
        children += dom.children(p).take(DEFER_CHILDREN + 1 - children).count();
        children <= DEFER_CHILDREN
    })
}

/// How far [`Tree::reveal`] got.
#[derive(Debug, Clone)]
pub enum Reveal {
    /// The object is selected.
    Shown,
    /// The object is not under this tree's root.
    NotUnder,
    /// A node on the way must be grouped first: by this job, or by one
    /// already running (`None`). Reveal again once its groups are in.
    Waiting(Option<Deferred>),
}

static NEXT_TREE_ID: AtomicU64 = AtomicU64::new(1);

/// What a row of the tree stands for.
#[derive(Debug, Clone)]
pub enum Item {
    /// The super-root (the whole reachable heap).
    SuperRoot,
    /// A row `N × Type`: dominator-tree children of one parent grouped by type.
    Group(Arc<Group>),
    /// One object (an instance of a group, or a group of one).
    Instance(u32),
    /// `remaining` further instances of the parent group.
    More {
        /// How many instances are not shown.
        remaining: usize,
    },
    /// A row of a baseline that the newest snapshot lacks (a merged path
    /// of the comparison): retains nothing now.
    Vanished(u32),
}

/// One row of a [`Tree`], shown or not.
#[derive(Debug, Clone)]
pub struct Node {
    /// What the row stands for.
    pub item: Item,
    /// Its parent node (`None` for the zoom root).
    pub parent: Option<u32>,
    /// Its depth below the zoom root (0 for the root).
    pub depth: u32,
    /// Whether its children are shown.
    pub expanded: bool,
    /// Groups: show instances instead of grouped children.
    pub instances: bool,
    /// Instance mode: the members shown, largest first (plus any revealed one).
    pub page: Vec<u32>,
    /// Grouped children are being computed by a job.
    pub loading: bool,
    /// Its child nodes, once made (`None` until it is first expanded).
    pub children: Option<Vec<u32>>,
    /// The row's merged path in the comparison ([`NO_PATH`]: none, or no
    /// comparison): its type path from the super-root, for rows that stand
    /// for a whole row of the grouped tree (not an instance of a group of
    /// several, nor anything below one).
    pub path: u32,
    /// The rows of its path that vanished are among its children.
    pub vanished_added: bool,
}

impl Node {
    fn new(item: Item, parent: Option<u32>, depth: u32) -> Node {
        Node {
            item,
            parent,
            depth,
            expanded: false,
            instances: false,
            page: Vec::new(),
            loading: false,
            children: None,
            path: NO_PATH,
            vanished_added: false,
        }
    }
}

impl Node {
    /// The object of an instance row.
    pub fn item_object(&self) -> Option<u32> {
        match self.item {
            Item::Instance(o) => Some(o),
            _ => None,
        }
    }
}

/// How the Dominators pane shows the tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeMode {
    /// The grouped tree, rows expanded in place.
    Tree,
    /// The selected row's path from the super-root, and its children.
    Path,
}

/// Grouping work a caller must run (inline or on a thread) and hand back
/// through [`Tree::set_groups`].
#[derive(Debug, Clone)]
pub struct Deferred {
    /// The [`Tree::id`] of the tree that asked.
    pub tree: u64,
    /// The node whose children are grouped.
    pub node: u32,
    /// The objects whose dominator-tree children are grouped (the node's members).
    pub parents: Arc<Vec<u32>>,
}

/// One zoom level: a subtree of the grouped dominator tree.
#[derive(Debug, Clone)]
pub struct Tree {
    /// Identifies the tree to deferred results (it may be gone by then).
    pub(crate) id: u64,
    /// Every node made so far (index = node id; 0 is the zoom root).
    pub(crate) nodes: Vec<Node>,
    /// Visible rows (node ids) in display order.
    pub(crate) flat: Vec<u32>,
    /// Visible children of the zoom root (the chart's bars), kept by
    /// [`Tree::flatten`] so frames need not re-check the filter marks.
    pub(crate) top: Vec<u32>,
    /// The selected node.
    pub(crate) selected: u32,
    /// The first visible row (an index into `flat`).
    pub(crate) offset: usize,
    /// The zoom level's title (the zoom root's name).
    pub(crate) label: String,
    /// The comparison, if any: the rows' paths and the vanished rows.
    pub(crate) compared: Option<Arc<Compared>>,
    /// The merged path of the zoom root (0 for the whole tree).
    pub(crate) root_path: u32,
    /// Siblings by growth (newest − oldest retained) instead of retained.
    pub(crate) growth_order: bool,
    /// Only rows that grow steadily, their ancestors and what is below.
    pub(crate) steady_only: bool,
    /// The node of the previous zoom level this one was zoomed from.
    pub(crate) origin: u32,
}

/// Per-object "subtree holds a filter match" marks, or none (no filter).
pub type Marks = Option<Arc<Vec<bool>>>;

impl Tree {
    /// Every node made so far, by id (the super-root or zoom root first).
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The visible rows, in order: node ids.
    pub fn flat(&self) -> &[u32] {
        &self.flat
    }

    /// The selected node's id.
    pub fn selected(&self) -> u32 {
        self.selected
    }

    /// A tree rooted at `root`, expanded one level; the grouping the caller must still run, if any.
    pub fn new(
        root: Item,
        label: String,
        dump: &Model,
        dom: &DominatorTree,
    ) -> (Tree, Option<Deferred>) {
        let mut t = Tree::unexpanded(root, label);
        let deferred = t.expand(0, dump, dom);
        t.select_first_child();
        (t, deferred)
    }

    /// The tree of the super-root whose children were grouped already (by
    /// the worker, as they can be millions: never on the UI thread).
    pub fn of_super_root(label: String, top: &[Arc<Group>], dom: &DominatorTree) -> Tree {
        let mut t = Tree::unexpanded(Item::SuperRoot, label);
        t.nodes[0].expanded = true;
        t.set_shared_groups(0, top.to_vec(), dom);
        t.select_first_child();
        t
    }

    /// A tree of `root` alone, its children not yet grouped.
    fn unexpanded(root: Item, label: String) -> Tree {
        Tree {
            id: NEXT_TREE_ID.fetch_add(1, Ordering::Relaxed),
            nodes: vec![Node::new(root, None, 0)],
            flat: Vec::new(),
            top: Vec::new(),
            selected: 0,
            offset: 0,
            label,
            compared: None,
            root_path: 0,
            growth_order: false,
            steady_only: false,
            origin: 0,
        }
    }

    fn select_first_child(&mut self) {
        if self.selected == 0 {
            self.selected = self.nodes[0]
                .children
                .as_ref()
                .and_then(|c| c.first().copied())
                .unwrap_or(0);
        }
    }

    /// The objects a node stands for.
    pub fn objects(&self, id: u32, dom: &DominatorTree) -> Vec<u32> {
        match &self.nodes[id as usize].item {
            Item::SuperRoot => vec![dom.super_root()],
            Item::Group(g) => g.members.clone(),
            Item::Instance(o) => vec![*o],
            Item::More { .. } | Item::Vanished(_) => Vec::new(),
        }
    }

    /// The object of a row: an instance, or a group's largest member.
    pub fn object(&self, id: u32, dom: &DominatorTree) -> Option<u32> {
        match &self.nodes[id as usize].item {
            Item::Group(g) => largest_members(dom, &g.members, 1).first().copied(),
            Item::Instance(o) => Some(*o),
            _ => None,
        }
    }

    /// Whether node `id` has (or may have) children to show.
    pub fn has_children(&self, id: u32, dom: &DominatorTree) -> bool {
        let n = &self.nodes[id as usize];
        if !n.instances
            && self
                .compared
                .as_ref()
                .is_some_and(|c| c.has_vanished(n.path))
        {
            return true;
        }
        match &n.item {
            Item::SuperRoot => true,
            Item::Group(g) => g.members.len() > 1 || g.retained_objects > 1,
            Item::Instance(o) => dom.has_children(*o),
            Item::More { .. } => false,
            Item::Vanished(p) => self.compared.as_ref().is_some_and(|c| c.has_children(*p)),
        }
    }

    /// Expands a node, materialising its children once. Grouping the
    /// children of many parents, or many children in all
    /// ([`groups_inline`]), is returned as [`Deferred`] work instead;
    /// the node shows as loading until [`Tree::set_groups`] gets the result.
    pub fn expand(&mut self, id: u32, dump: &Model, dom: &DominatorTree) -> Option<Deferred> {
        let n = &mut self.nodes[id as usize];
        n.expanded = true;
        if n.children.is_some() || n.loading {
            return None;
        }
        match n.item.clone() {
            Item::Group(_) if n.instances => self.fill_instances(id, dom),
            Item::More { .. } => n.children = Some(Vec::new()),
            Item::Vanished(_) => {
                n.children = Some(Vec::new());
                self.add_vanished(id);
            }
            _ => {
                let parents = self.objects(id, dom);
                if !groups_inline(&parents, dom) {
                    self.nodes[id as usize].loading = true;
                    return Some(Deferred {
                        tree: self.id,
                        node: id,
                        parents: Arc::new(parents),
                    });
                }
                let groups = group_children_unsorted(dump, dom, &parents);
                self.set_groups(id, groups, dom);
            }
        }
        None
    }

    /// Installs a node's grouped children.
    pub fn set_groups(&mut self, id: u32, groups: Vec<Group>, dom: &DominatorTree) {
        self.set_shared_groups(id, groups.into_iter().map(Arc::new).collect(), dom);
    }

    /// [`Tree::set_groups`] with groups that may be shared with other trees
    /// (the root's, grouped once by the worker).
    pub fn set_shared_groups(&mut self, id: u32, groups: Vec<Arc<Group>>, dom: &DominatorTree) {
        let n = &mut self.nodes[id as usize];
        n.loading = false;
        // A group of leaves has nothing to group: show its instances.
        if groups.is_empty() {
            if let Item::Group(g) = &n.item {
                if g.members.len() > 1 {
                    n.instances = true;
                    self.fill_instances(id, dom);
                    return;
                }
            }
        }
        let depth = n.depth.saturating_add(1);
        let mut ids = Vec::with_capacity(groups.len());
        for g in groups {
            ids.push(self.nodes.len() as u32);
            self.nodes.push(Node::new(Item::Group(g), Some(id), depth));
        }
        self.nodes[id as usize].children = Some(ids.clone());
        for k in ids {
            self.assign_path(k);
        }
        self.nodes[id as usize].vanished_added = false;
        self.add_vanished(id);
        self.select_first_child();
    }

    /// Instance mode: a page of the largest members (at least one page).
    fn fill_instances(&mut self, id: u32, dom: &DominatorTree) {
        let Item::Group(g) = self.nodes[id as usize].item.clone() else {
            return;
        };
        let n = &mut self.nodes[id as usize];
        let want = n.page.len().max(INSTANCE_PAGE).min(g.members.len());
        if n.page.len() < want {
            n.page = largest_members(dom, &g.members, want);
        }
        let depth = n.depth.saturating_add(1);
        let page = n.page.clone();
        let mut ids = Vec::with_capacity(page.len() + 1);
        for o in page.iter() {
            ids.push(self.nodes.len() as u32);
            self.nodes
                .push(Node::new(Item::Instance(*o), Some(id), depth));
            self.assign_path(*ids.last().unwrap());
        }
        if page.len() < g.members.len() {
            ids.push(self.nodes.len() as u32);
            self.nodes.push(Node::new(
                Item::More {
                    remaining: g.members.len() - page.len(),
                },
                Some(id),
                depth,
            ));
        }
        self.nodes[id as usize].children = Some(ids);
    }

    /// Switches a group between grouped children and its instances.
    pub fn toggle_instances(
        &mut self,
        id: u32,
        dump: &Model,
        dom: &DominatorTree,
    ) -> Option<Deferred> {
        if !matches!(self.nodes[id as usize].item, Item::Group(_)) {
            return None;
        }
        let n = &mut self.nodes[id as usize];
        n.instances = !n.instances;
        n.children = None; // old children stay in the arena, unreachable
        n.loading = false;
        self.expand(id, dump, dom)
    }

    /// Replaces a "more" row by the next page of its group's instances and
    /// selects the first new one.
    pub fn more(&mut self, id: u32, dom: &DominatorTree) {
        let Some(parent) = self.nodes[id as usize].parent else {
            return;
        };
        let Item::Group(g) = self.nodes[parent as usize].item.clone() else {
            return;
        };
        let slot = self.nodes[parent as usize].page.len();
        let n = &mut self.nodes[parent as usize];
        n.page = largest_members(dom, &g.members, slot + INSTANCE_PAGE);
        n.children = None;
        self.fill_instances(parent, dom);
        if let Some(&s) = self.nodes[parent as usize]
            .children
            .as_ref()
            .and_then(|c| c.get(slot))
        {
            self.selected = s;
        }
    }

    /// The node ids above `id`, its parent first.
    pub fn ancestors(&self, id: u32) -> Vec<u32> {
        let mut v = Vec::new();
        let mut x = self.nodes[id as usize].parent;
        while let Some(p) = x {
            v.push(p);
            x = self.nodes[p as usize].parent;
        }
        v
    }

    fn visible(&self, id: u32, marks: &Marks) -> bool {
        if self.steady_only {
            let p = self.nodes[id as usize].path;
            let shown = match &self.compared {
                Some(c) => p == NO_PATH || c.steady_at_or_below(p),
                None => true,
            };
            if !shown {
                return false;
            }
        }
        let Some(m) = marks else { return true };
        match &self.nodes[id as usize].item {
            Item::Group(g) => g.members.iter().any(|&o| m[o as usize]),
            Item::Instance(o) => m[*o as usize],
            _ => true,
        }
    }

    /// Recomputes the visible rows (O(expanded nodes)).
    pub fn flatten(&mut self, mode: TreeMode, marks: &Marks) {
        self.flat.clear();
        let top: Vec<u32> = self.nodes[0]
            .children
            .clone()
            .unwrap_or_default()
            .into_iter()
            .filter(|&k| {
                !matches!(self.nodes[k as usize].item, Item::Vanished(_)) && self.visible(k, marks)
            })
            .collect();
        self.top = top;
        match mode {
            TreeMode::Tree => {
                let mut stack: Vec<u32> = self.children_rev(0);
                while let Some(id) = stack.pop() {
                    if !self.visible(id, marks) {
                        continue;
                    }
                    self.flat.push(id);
                    if self.nodes[id as usize].expanded {
                        stack.extend(self.children_rev(id));
                    }
                }
            }
            TreeMode::Path => {
                let mut chain = self.ancestors(self.selected);
                chain.pop(); // the zoom root is the breadcrumb, not a row
                chain.reverse();
                self.flat.extend(chain);
                if self.selected != 0 {
                    self.flat.push(self.selected);
                    if self.nodes[self.selected as usize].expanded {
                        let kids = self.children_rev(self.selected);
                        let kids: Vec<u32> = kids
                            .into_iter()
                            .rev()
                            .filter(|&k| self.visible(k, marks))
                            .collect();
                        self.flat.extend(kids);
                    }
                }
            }
        }
        if !self.flat.contains(&self.selected) {
            self.selected = self.flat.first().copied().unwrap_or(0);
        }
    }

    /// The children in display order (by retained bytes as grouped, or
    /// by growth), reversed for a stack.
    fn children_rev(&self, id: u32) -> Vec<u32> {
        let mut v = self.nodes[id as usize].children.clone().unwrap_or_default();
        if self.growth_order && self.compared.is_some() {
            // Stable: rows without a path (instances) keep their order,
            // "more" stays last.
            // Rows that grow in every snapshot first (the leak candidates,
            // docs/analyses.md), then by growth.
            v.sort_by_key(|&k| {
                let key = match self.nodes[k as usize].item {
                    Item::More { .. } => (false, i128::MIN),
                    _ => (self.steady(k), self.growth_of(k).unwrap_or(0)),
                };
                std::cmp::Reverse(key)
            });
        }
        v.reverse();
        v
    }

    /// The selected node's position among the visible rows.
    pub fn selected_index(&self) -> usize {
        self.flat
            .iter()
            .position(|&n| n == self.selected)
            .unwrap_or(0)
    }

    /// Expands the path to `object` from this tree's root and selects it.
    /// Only single objects are expanded on the way (groups switch to their
    /// instances, with the object pinned); one that dominates too many
    /// children to group here stops the walk with [`Reveal::Waiting`], and
    /// revealing again after its groups are installed goes on from there.
    pub fn reveal(&mut self, object: u32, dump: &Model, dom: &DominatorTree) -> Reveal {
        let mut path = ObjectIdx::raw_slice(&domination_path(dom, ObjectIdx(object))).to_vec();
        path.reverse(); // top-most dominator first
        let mut at = 0u32;
        for &o in &path {
            if self.nodes[at as usize].loading {
                return Reveal::Waiting(None);
            }
            if let Some(job) = self.expand(at, dump, dom) {
                return Reveal::Waiting(Some(job));
            }
            let kids = self.nodes[at as usize].children.clone().unwrap_or_default();
            let ty = dump.row_type(ObjectIdx(o));
            let Some(group) = kids
                .into_iter()
                .find(|&k| match &self.nodes[k as usize].item {
                    Item::Group(g) => g.type_index == ty && g.members.contains(&o),
                    Item::Instance(i) => *i == o,
                    _ => false,
                })
            else {
                if at == 0 {
                    continue; // above the zoom root
                }
                return Reveal::NotUnder;
            };
            at = group;
            if let Item::Group(g) = &self.nodes[group as usize].item {
                if g.members.len() > 1 {
                    let n = &mut self.nodes[group as usize];
                    let was_instances = n.instances;
                    n.instances = true;
                    n.loading = false;
                    if !was_instances || n.children.is_none() {
                        n.children = None;
                        self.fill_instances(group, dom);
                    }
                    let n = &mut self.nodes[group as usize];
                    n.expanded = true;
                    if !n.page.contains(&o) {
                        n.page.push(o); // pinned: the revealed one
                        n.children = None;
                        self.fill_instances(group, dom);
                    }
                    let kids = self.nodes[group as usize]
                        .children
                        .clone()
                        .unwrap_or_default();
                    at = kids
                        .into_iter()
                        .find(
                            |&k| matches!(self.nodes[k as usize].item, Item::Instance(i) if i == o),
                        )
                        .unwrap_or(group);
                }
            }
        }
        if at == 0 {
            return Reveal::NotUnder;
        }
        for a in self.ancestors(at) {
            self.nodes[a as usize].expanded = true;
        }
        self.selected = at;
        Reveal::Shown
    }

    /// Whether a row is a group of several objects (`x` switches it
    /// between grouped children and instances).
    pub fn is_group(&self, id: u32) -> bool {
        matches!(&self.nodes[id as usize].item, Item::Group(g) if g.members.len() > 1)
    }
}
