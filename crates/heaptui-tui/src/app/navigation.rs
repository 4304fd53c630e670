//! History (a browser-like stack across panes) and the jumps between panes
//! that pane intents ask for: reveal in the dominator tree, inspect, select
//! a duplicate set. Names no pane: each saves and restores its own place
//! ([`Pane::save`], [`Pane::restore`]) and takes its own jumps
//! ([`Pane::jump`]).

use super::{App, Nav, PaneId};
use crate::msg::Msg;
use crate::panes::inspector::Inspector;
use crate::panes::{Intent, Jump, Landing, Pane};
use crate::worker::Job;
use heaptui_core::model::ObjectIdx;

/// History entries kept at most.
const HISTORY: usize = 200;

impl App {
    /// Where the user is: the focus, the inspected object and every pane's
    /// place (O(panes)).
    pub(super) fn nav(&self) -> Nav {
        Nav {
            pane: self.pane,
            inspector: self.inspector.as_ref().map(|i| i.object()),
            paths: self.paths.clone(),
            panes: PaneId::ALL.map(|id| self.panes.get(id).save()),
        }
    }

    pub(super) fn push(&mut self, nav: Nav) {
        self.history.push(nav);
        if self.history.len() > HISTORY {
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
        self.paths = nav.paths;
        if let Some(o) = nav.inspector {
            self.open_inspector(o);
        }
        for (id, saved) in PaneId::ALL.into_iter().zip(&nav.panes) {
            self.with_pane(id, |p, ctx| p.restore(saved, ctx));
        }
        self.fix_scroll();
    }

    pub(super) fn switch(&mut self, pane: PaneId) {
        if pane == self.pane && !self.overlaid() {
            return;
        }
        self.push_history();
        self.inspector = None;
        self.paths = None;
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

    /// Takes the user to the place `jump` names in its pane, if the pane
    /// takes it now: a history step, the focus, the pane's filter dropped
    /// when it would hide the place.
    pub(super) fn jump(&mut self, jump: Jump) {
        let target = jump.pane();
        let drop_filter = match self.with_pane(target, |p, ctx| p.prepare_jump(&jump, ctx)) {
            Landing::Refused(status) => {
                if let Some(s) = status {
                    self.status = s;
                }
                return;
            }
            Landing::Taken { drop_filter } => drop_filter,
        };
        self.push_history();
        self.inspector = None;
        self.paths = None;
        self.pane = target;
        if drop_filter {
            self.filters[target.index()].clear();
            self.forget_filter(target);
        }
        let intents = self.with_pane(target, |p, ctx| p.jump(jump, drop_filter, ctx));
        self.run_requests(intents);
        self.fix_scroll();
    }

    /// A job's result for the inspector or a pane (the one that takes it).
    pub(super) fn on_job_result(&mut self, msg: Msg) {
        self.job = None;
        let mut msg = msg;
        if let Msg::MergedPaths(result) = msg {
            return self.show_paths(result);
        }
        if let Some(mut ins) = self.inspector.take() {
            let taken = ins.receive(msg, &self.ctx(self.pane));
            self.inspector = Some(ins);
            match taken {
                Ok(intents) => return self.run_requests(intents),
                Err(m) => msg = m,
            }
        }
        for id in PaneId::ALL {
            match self.with_pane(id, |p, ctx| p.receive(msg, ctx)) {
                Ok(intents) => {
                    if intents.contains(&Intent::Refilter) {
                        self.apply_filter(id);
                    }
                    return self.run_requests(intents);
                }
                Err(m) => msg = m,
            }
        }
    }

    /// Runs the jobs among `intents` (what a jump or a job's result asks).
    fn run_requests(&mut self, intents: Vec<Intent>) {
        for intent in intents {
            if let Intent::Request { job, label } = intent {
                self.request(job, &label);
            }
        }
    }
}

impl App {
    /// Shows merged paths that a job computed: over the pane, a history
    /// step (Backspace returns); in place of the ones shown (`e` asked
    /// for them again with or without the platform's types).
    fn show_paths(&mut self, result: std::sync::Arc<crate::msg::PathsResult>) {
        if self.paths.is_none() || self.inspector.is_some() {
            self.push_history();
        }
        self.inspector = None;
        self.paths = Some(crate::panes::paths::PathsView::new(result));
        self.fix_scroll();
    }
}
