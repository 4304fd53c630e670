//! What arrives from the workers: stage results (through [`Loading`](crate::loading::Loading), then
//! to every pane), job results for the pane that takes them, and filter
//! results, which are installed only if no newer filter superseded them.

use super::{App, Effect, FilterRequest, Filtered, PaneId};
use crate::loading::Arrived;
use crate::msg::Msg;
use crate::panes::{FilterPlan, Intent};
use heaptui_core::analysis::TypeFilter;

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
            Msg::Filtered(f) => self.on_filtered(f),
            msg if msg.is_job_result() => self.on_job_result(msg),
            // Stage results, taken by `Loading` above.
            _ => {}
        }
        self.fix_scroll();
    }

    /// Brings the totals and every pane up to a stage that just arrived;
    /// a pane that asks for it is filtered again.
    pub(super) fn on_arrived(&mut self, arrived: Arrived) {
        // The job shown, if this stage is its result.
        if self
            .job
            .as_ref()
            .is_some_and(|j| j.lands_as == Some(arrived))
        {
            self.job = None;
        }
        match arrived {
            Arrived::Graph => {
                if let Some(totals) = self.loading.graph_totals() {
                    self.totals = totals.clone();
                }
            }
            Arrived::Duplicates => {
                if let Some(d) = self.loading.duplicates() {
                    self.totals.additional_bytes = d.total_additional_bytes();
                    self.totals.duplicates = d.all_totals();
                    self.totals.top_sets = d
                        .numbered()
                        .filter(|(_, s)| !d.is_unverified(s))
                        .take(10)
                        .map(|(i, _)| i)
                        .collect();
                }
            }
            _ => {}
        }
        // Every pane takes the stage first, then the filters run again and
        // the jobs the panes ask for start.
        let asked = PaneId::ALL.map(|id| self.with_pane(id, |p, ctx| p.arrived(arrived, ctx)));
        for (id, intents) in PaneId::ALL.into_iter().zip(asked) {
            for intent in intents {
                match intent {
                    Intent::Refilter => self.apply_filter(id),
                    Intent::Request { job, label } => self.request(job, &label),
                    _ => {}
                }
            }
        }
    }

    /// Applies the pane's filter text to its view: at once when that is
    /// O(1) (no filter), else by asking for a computation on the filter
    /// thread ([`Effect::Filter`]) that supersedes any older one for the
    /// pane. The view keeps showing the previous result until
    /// [`App::on_filtered`] installs the new one.
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
                let request = FilterRequest {
                    pane,
                    generation: self.filter_generation,
                    filter: filter.clone(),
                    work,
                };
                self.filter_pending[pane.index()] = Some(request.clone());
                self.outbox.push(Effect::Filter(Box::new(request)));
            }
        }
        if !filter.unknown.is_empty() {
            self.status = format!("ignored: {}", filter.unknown.join(" "));
        }
        self.fix_scroll();
    }

    /// Stops waiting for the pane's filter result: a request not yet handed
    /// to the loop is withdrawn, and a result already under way will be
    /// dropped.
    pub(super) fn forget_filter(&mut self, pane: PaneId) {
        self.filter_pending[pane.index()] = None;
        self.outbox
            .retain(|e| !matches!(e, Effect::Filter(r) if r.pane == pane));
    }

    /// Installs a filter result unless a newer filter superseded it.
    pub(super) fn on_filtered(&mut self, f: Filtered) {
        let i = f.pane.index();
        if self.filter_pending[i].as_ref().map(|r| r.generation) != Some(f.generation) {
            return;
        }
        self.filter_pending[i] = None;
        self.with_pane(f.pane, |p, ctx| p.filtered(f.result, ctx));
    }
}
