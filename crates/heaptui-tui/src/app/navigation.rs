//! History (a browser-like stack across panes) and the jumps between panes
//! that pane intents ask for: reveal in the dominator tree, inspect, select
//! a duplicate set.

use super::{App, Nav, PaneId};
use crate::model::ObjectIdx;
use crate::panes::duplicates;
use crate::panes::inspector::Inspector;
use crate::panes::Intent;
use crate::worker::Job;

impl App {
    pub(super) fn nav(&self) -> Nav {
        Nav {
            pane: self.pane,
            inspector: self.inspector.as_ref().map(|i| i.object),
            dom_depth: self
                .panes
                .dominators
                .as_ref()
                .map_or(0, |d| d.zooms.len() - 1),
            dom_selected: self.panes.dominators.as_ref().map(|d| d.tree().selected),
            types: self.panes.types_pane.list,
            dups: self.panes.dups_pane.list,
            dups_detail: self.panes.dups_pane.detail.as_ref().map(|d| d.set),
            dups_detail_from_list: self
                .panes
                .dups_pane
                .detail
                .as_ref()
                .is_some_and(|d| d.from_list),
            roots: self.panes.roots_pane.list,
        }
    }

    pub(super) fn push(&mut self, nav: Nav) {
        self.history.push(nav);
        if self.history.len() > 200 {
            self.history.remove(0);
        }
    }

    pub(super) fn push_history(&mut self) {
        let nav = self.nav();
        self.push(nav);
    }

    pub(super) fn restore(&mut self, nav: Nav) {
        self.pane = nav.pane;
        self.inspector = None;
        if let Some(o) = nav.inspector {
            self.open_inspector(o);
        }
        if let Some(d) = &mut self.panes.dominators {
            d.zooms.truncate(nav.dom_depth + 1);
            if let Some(s) = nav.dom_selected {
                let t = d.tree_mut();
                if (s as usize) < t.nodes.len() {
                    t.selected = s;
                    for a in t.ancestors(s) {
                        t.nodes[a as usize].expanded = true;
                    }
                }
            }
            d.refresh();
        }
        self.panes.types_pane.list = nav.types;
        self.panes.dups_pane.list = nav.dups;
        self.panes.dups_pane.detail = match (
            nav.dups_detail,
            self.loading.graph(),
            &self.panes.dups_pane.source,
        ) {
            (Some(s), Some(g), Some(d)) => {
                let mut det = duplicates::detail(g, d, s, &self.theme);
                det.from_list = nav.dups_detail_from_list;
                Some(det)
            }
            _ => None,
        };
        self.panes.roots_pane.list = nav.roots;
        self.fix_scroll();
    }

    pub(super) fn switch(&mut self, pane: PaneId) {
        if pane == self.pane && self.inspector.is_none() {
            return;
        }
        self.push_history();
        self.inspector = None;
        self.pane = pane;
    }

    /// Opens the inspector on an object, as Enter on any object line does.
    pub(super) fn inspect(&mut self, object: ObjectIdx) {
        if self.loading.graph().is_none() {
            return;
        }
        self.push_history();
        self.open_inspector(object);
        self.fix_scroll();
    }

    /// Builds the inspector now and asks for the retention path as a job.
    pub(super) fn open_inspector(&mut self, object: ObjectIdx) {
        let Some(graph) = self.loading.graph().cloned() else {
            return;
        };
        self.inspector = Some(Inspector::build(
            object,
            &graph,
            self.loading.dom().map(|d| &**d),
            self.loading.duplicates().map(|d| &**d),
            &self.theme,
        ));
        if self.loading.dom().is_some() {
            self.request(Job::RetentionPath { object }, "retention path");
        }
    }

    /// Shows an object in the (unzoomed) dominator tree.
    pub(super) fn reveal(&mut self, object: ObjectIdx) {
        let (Some(graph), Some(dom)) = (self.loading.graph().cloned(), self.loading.dom().cloned())
        else {
            self.status = "the dominator tree is not ready yet".into();
            return;
        };
        if !dom.is_reachable(object.raw()) {
            self.status = format!(
                "{} is unreachable: not in the dominator tree",
                graph.dump.id_hex(object)
            );
            return;
        }
        self.push_history();
        self.inspector = None;
        self.pane = PaneId::Dominators;
        let i = PaneId::Dominators.index();
        let marked = self
            .panes
            .dominators
            .as_ref()
            .is_some_and(|d| d.marks.is_some());
        // The object must be visible: its tree drops the filter.
        if marked || self.filter_pending[i].is_some() {
            self.filters[i].clear();
            self.forget_filter(PaneId::Dominators);
        }
        self.continue_reveal(object);
    }

    /// Reveals `object` in the dominator tree as far as the grouped nodes
    /// allow; where one on the way is grouped by a job, that job starts and
    /// its arrival calls this again.
    pub(super) fn continue_reveal(&mut self, object: ObjectIdx) {
        let (Some(graph), Some(dom)) = (self.loading.graph().cloned(), self.loading.dom().cloned())
        else {
            return;
        };
        let intents = match &mut self.panes.dominators {
            Some(d) => d.reveal(object, &graph.dump, &dom),
            None => Vec::new(),
        };
        for intent in intents {
            if let Intent::Request { job, .. } = intent {
                self.request(job, "revealing: grouping children");
            }
        }
        self.fix_scroll();
    }

    pub(super) fn jump_to_set(&mut self, set: u32, open: bool) {
        let (Some(d), Some(graph)) = (
            self.loading.duplicates().cloned(),
            self.loading.graph().cloned(),
        ) else {
            return;
        };
        self.push_history();
        self.inspector = None;
        self.pane = PaneId::Duplicates;
        // Set ids are those of the newest result: a pane still showing an
        // older one or about to change its rows (a filter under way), or
        // filtering the set out, shows everything instead.
        let i = PaneId::Duplicates.index();
        let current = self.panes.dups_pane.shows(&d) && self.filter_pending[i].is_none();
        if !current || self.panes.dups_pane.row_of_set(set).is_none() {
            self.filters[i].clear();
            self.forget_filter(PaneId::Duplicates);
            self.panes.dups_pane.show_all(d, &graph.dump.type_names);
        }
        self.panes
            .dups_pane
            .select_set(set, open, self.loading.graph(), &self.theme);
        self.fix_scroll();
    }
}
