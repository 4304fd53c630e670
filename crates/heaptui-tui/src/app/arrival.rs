//! What arrives from the workers: stage results (through [`Loading`]),
//! job results for the panes, and filter results, which are installed only
//! if no newer filter superseded them.

use super::{App, FilterRequest, Filtered, PaneId};
use crate::analysis::filter::TypeFilter;
use crate::loading::Arrived;
use crate::panes::dominators::DominatorsPane;
use crate::panes::FilterPlan;
use crate::worker::Msg;

impl App {
    pub(super) fn on_worker(&mut self, msg: Msg) {
        let msg = match self.loading.on_msg(msg) {
            Ok(arrived) => {
                self.on_arrived(arrived);
                self.fix_scroll();
                return;
            }
            Err(msg) => msg,
        };
        match msg {
            Msg::Precise { type_index, result } => {
                self.panes.types_pane.precise_done(type_index, result);
                self.job = None;
            }
            Msg::ImmediateDominators {
                type_index,
                exclude,
                rows,
            } => {
                self.panes
                    .types_pane
                    .immediate_dominators_done(type_index, exclude, rows);
                self.job = None;
            }
            Msg::Instances(rows) => {
                self.panes.types_pane.instances_done(rows);
                self.job = None;
            }
            Msg::RetentionPath { object, path } => {
                if let Some(ins) = &mut self.inspector {
                    if ins.object == object {
                        if let Some(g) = self.loading.graph() {
                            ins.set_retention_path(path, &g.dump);
                        }
                    }
                }
                self.job = None;
            }
            Msg::Expanded { tree, node, groups } => {
                let mut resume = None;
                if let (Some(d), Some(dom)) = (&mut self.panes.dominators, self.loading.dom()) {
                    if let Some(t) = d.zooms.iter_mut().find(|t| t.id == tree) {
                        t.set_groups(node, groups, dom);
                    }
                    d.refresh();
                    resume = d.pending_reveal.take();
                }
                self.job = None;
                // A reveal that waited for these groups goes on.
                if let Some(object) = resume {
                    self.continue_reveal(object);
                }
            }
            Msg::Filtered(f) => self.on_filtered(f),
            // Stage results, taken by `Loading` above.
            _ => {}
        }
        self.fix_scroll();
    }

    /// Brings the panes up to a stage that just arrived.
    pub(super) fn on_arrived(&mut self, arrived: Arrived) {
        match arrived {
            Arrived::Graph => {
                if let Some(totals) = self.loading.graph_totals() {
                    self.totals = totals.clone();
                }
            }
            Arrived::Dominators => {
                let Some(d) = self.loading.dominated() else {
                    return;
                };
                self.panes.dominators = Some(DominatorsPane::new(&d.top, &d.dom));
                self.panes.types_pane.measure(&d.types, &d.dom);
                self.panes.roots_pane.measure(&d.roots);
                for p in [PaneId::Dominators, PaneId::Types, PaneId::Roots] {
                    self.apply_filter(p);
                }
            }
            Arrived::Duplicates => {
                // A detection for one type (`D`) lands as a new result.
                if self
                    .job
                    .as_ref()
                    .is_some_and(|(label, _)| label == crate::panes::duplicates::DETECTING)
                {
                    self.job = None;
                }
                if let Some(d) = self.loading.duplicates() {
                    self.totals.additional_bytes = d.total_additional_bytes();
                    self.totals.duplicates = d.all_totals();
                    self.totals.top_sets = d
                        .sets
                        .iter()
                        .filter(|s| !d.is_unverified(s))
                        .take(10)
                        .map(|s| s.id)
                        .collect();
                }
                // Under a filter the pane keeps showing the previous result
                // until the filter thread has narrowed this one.
                self.apply_filter(PaneId::Duplicates);
            }
            Arrived::Suspects | Arrived::Comparison => {
                let (Some(graph), Some(dom), Some(s)) = (
                    self.loading.graph(),
                    self.loading.dom(),
                    self.loading.suspects(),
                ) else {
                    return;
                };
                let compared = self.loading.compared().map(|c| &**c);
                self.panes
                    .suspects_pane
                    .measure(s, compared, &graph.dump, dom, &self.theme);
                if arrived == Arrived::Comparison {
                    if let Some(c) = self.loading.compared().cloned() {
                        if let Some(d) = &mut self.panes.dominators {
                            d.set_compared(c.clone(), dom);
                        }
                        let types = graph.dump.type_names.len();
                        self.panes.types_pane.set_compared(&c, types);
                        self.panes.dups_pane.set_compared(&c);
                        if let Some(roots) = self.loading.roots() {
                            self.panes.roots_pane.set_compared(&c, roots);
                        }
                        self.apply_filter(PaneId::Types);
                        self.apply_filter(PaneId::Duplicates);
                        self.apply_filter(PaneId::Roots);
                    }
                }
            }
            Arrived::Nothing | Arrived::Failure => {}
        }
    }

    /// Applies the pane's filter text to its view: at once when that is
    /// O(1) (no filter), else by queueing a request for the filter thread
    /// that supersedes any older one for the pane. The view keeps showing
    /// the previous result until [`App::on_filtered`] installs the new one.
    pub(super) fn apply_filter(&mut self, pane: PaneId) {
        let filter = TypeFilter::parse(&self.filters[pane.index()]);
        if self.loading.graph().is_none() {
            return;
        }
        match self.with_pane(pane, |p, ctx| p.filter(&filter, ctx)) {
            FilterPlan::NotReady => return,
            FilterPlan::Applied => {}
            FilterPlan::Cleared => self.forget_filter(pane),
            FilterPlan::Work(work) => {
                self.forget_filter(pane);
                self.filter_generation += 1;
                self.filter_pending[pane.index()] = Some(self.filter_generation);
                self.filter_requests.push(FilterRequest {
                    pane,
                    generation: self.filter_generation,
                    filter: filter.clone(),
                    work,
                });
            }
        }
        if !filter.unknown.is_empty() {
            self.status = format!("ignored: {}", filter.unknown.join(" "));
        }
        self.fix_scroll();
    }

    /// Stops waiting for the pane's filter result: a queued request is
    /// withdrawn, and a result already under way will be dropped.
    pub(super) fn forget_filter(&mut self, pane: PaneId) {
        self.filter_pending[pane.index()] = None;
        self.filter_requests.retain(|r| r.pane != pane);
    }

    /// Installs a filter result unless a newer filter superseded it.
    pub(super) fn on_filtered(&mut self, f: Filtered) {
        let i = f.pane.index();
        if self.filter_pending[i] != Some(f.generation) {
            return;
        }
        self.filter_pending[i] = None;
        self.with_pane(f.pane, |p, ctx| p.filtered(f.result, ctx));
    }
}
