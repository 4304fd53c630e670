//! The tree's rows in a comparison: each row's merged path, the rows of
//! older snapshots that vanished, growth and steady growth.

use std::sync::Arc;

use super::*;
use crate::compared::{Compared, NO_PATH};

impl Tree {
    /// The merged path of node `id` from its parent's (parents first).
    pub(super) fn path_of(&self, id: u32) -> u32 {
        let Some(c) = &self.compared else {
            return NO_PATH;
        };
        let n = &self.nodes[id as usize];
        let Some(parent) = n.parent else {
            return self.root_path;
        };
        let p = &self.nodes[parent as usize];
        match &n.item {
            Item::Group(g) if !p.instances => c.child(p.path, g.type_index),
            // An instance is the whole row only when its group has one member.
            Item::Instance(_) => match &p.item {
                Item::Group(g) if g.members.len() == 1 => p.path,
                _ => NO_PATH,
            },
            Item::Vanished(v) => *v,
            _ => NO_PATH,
        }
    }

    pub(super) fn assign_path(&mut self, id: u32) {
        self.nodes[id as usize].path = self.path_of(id);
    }

    /// Appends the vanished rows of node `id`'s path to its children (once).
    pub(super) fn add_vanished(&mut self, id: u32) {
        let Some(c) = self.compared.clone() else {
            return;
        };
        let n = &self.nodes[id as usize];
        if n.vanished_added || n.instances || n.path == NO_PATH || n.children.is_none() {
            return;
        }
        let depth = n.depth.saturating_add(1);
        let mut added = Vec::new();
        for v in c.vanished(n.path) {
            added.push(self.nodes.len() as u32);
            let mut node = Node::new(Item::Vanished(v), Some(id), depth);
            node.path = v;
            self.nodes.push(node);
        }
        let n = &mut self.nodes[id as usize];
        n.vanished_added = true;
        if let Some(kids) = &mut n.children {
            kids.extend(added);
        }
    }

    /// Installs (or replaces) the comparison: every node gets its path
    /// and expanded rows their vanished children. O(nodes), once.
    pub fn set_compared(&mut self, compared: Option<Arc<Compared>>, root_path: u32) {
        self.compared = compared;
        self.root_path = root_path;
        // Parents precede their children in the arena.
        for id in 0..self.nodes.len() as u32 {
            if !matches!(self.nodes[id as usize].item, Item::Vanished(_)) {
                self.assign_path(id);
            }
        }
        for id in 0..self.nodes.len() as u32 {
            self.add_vanished(id);
        }
    }

    /// Growth (newest − oldest retained bytes) of a row with a path.
    pub fn growth_of(&self, id: u32) -> Option<i128> {
        let c = self.compared.as_ref()?;
        let p = self.nodes[id as usize].path;
        (p != NO_PATH).then(|| c.growth(p))
    }

    /// Whether the row itself grows steadily.
    pub fn steady(&self, id: u32) -> bool {
        let p = self.nodes[id as usize].path;
        self.compared.as_ref().is_some_and(|c| c.steady(p))
    }
}
