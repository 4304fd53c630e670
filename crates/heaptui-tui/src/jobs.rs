//! Background jobs in slots, one per kind of request (gitui's "latest
//! request wins"): starting a job cancels the one its slot held, and a
//! result that a newer request superseded is dropped when it arrives. The
//! bookkeeping ([`Slots`]) is separate from the threads so it is tested
//! without them. Imports the worker's jobs and messages, nothing of the UI.

use std::sync::Arc;

use crossbeam_channel::{unbounded, Receiver, Sender};

use super::msg::Msg;
use super::worker::{run_job, Job};
use heaptui_core::graph::{DominatorTree, HeapGraph};
use heaptui_core::progress::Progress;

/// Which slot a job goes to: one per kind, except that grouping children
/// has one per tree node (expanding two nodes runs both; asking again for
/// the same node replaces the first request).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SlotKey {
    /// The precise retained size of a type.
    Precise,
    /// The immediate dominators of a type.
    ImmediateDominators,
    /// A shortest retention path.
    RetentionPath,
    /// What a cut would free.
    WhatIf,
    /// Finishing duplicate detection for one type.
    DetectDuplicates,
    /// Duplicate waste by owner.
    Owners,
    /// A type's instances in an order.
    Instances,
    /// Merged paths to the roots.
    MergedPaths,
    /// Grouping the dominator-tree children of one tree node.
    Group {
        /// The tree (its zoom level's id).
        tree: u64,
        /// The node.
        node: u32,
    },
}

impl SlotKey {
    /// The slot `job` goes to.
    pub fn of(job: &Job) -> SlotKey {
        match job {
            Job::Precise { .. } => SlotKey::Precise,
            Job::ImmediateDominators { .. } => SlotKey::ImmediateDominators,
            Job::RetentionPath { .. } => SlotKey::RetentionPath,
            Job::WhatIf { .. } => SlotKey::WhatIf,
            Job::DetectDuplicates { .. } => SlotKey::DetectDuplicates,
            Job::Owners { .. } => SlotKey::Owners,
            Job::Instances { .. } => SlotKey::Instances,
            Job::MergedPaths { .. } => SlotKey::MergedPaths,
            Job::GroupChildren { tree, node, .. } => SlotKey::Group {
                tree: *tree,
                node: *node,
            },
        }
    }
}

/// Identifies one started job: its slot and its place in the request order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket {
    /// The job's slot.
    pub slot: SlotKey,
    /// Its place in the request order (higher is newer).
    pub serial: u64,
}

/// The slots' bookkeeping: the running job of each slot and its progress
/// (whose cancel flag the job polls).
#[derive(Debug, Default)]
pub struct Slots {
    running: Vec<(Ticket, Arc<Progress>)>,
    serial: u64,
}

impl Slots {
    /// Registers a new job for `slot`, cancelling the one it replaces.
    pub fn start(&mut self, slot: SlotKey) -> (Ticket, Arc<Progress>) {
        if let Some(i) = self.running.iter().position(|(t, _)| t.slot == slot) {
            let (_, old) = self.running.swap_remove(i);
            old.cancel();
        }
        self.serial += 1;
        let ticket = Ticket {
            slot,
            serial: self.serial,
        };
        let progress = Arc::new(Progress::new());
        self.running.push((ticket, progress.clone()));
        (ticket, progress)
    }

    /// Whether a finished job's result is still wanted (no newer request
    /// took its slot); frees the slot if so.
    pub fn finish(&mut self, ticket: Ticket) -> bool {
        match self.running.iter().position(|(t, _)| *t == ticket) {
            Some(i) => {
                self.running.swap_remove(i);
                true
            }
            None => false,
        }
    }

    /// Cancels every running job (quitting).
    pub fn cancel_all(&mut self) {
        for (_, p) in self.running.drain(..) {
            p.cancel();
        }
    }

    /// Whether a job runs in `slot`.
    pub fn is_running(&self, slot: SlotKey) -> bool {
        self.running.iter().any(|(t, _)| t.slot == slot)
    }
}

/// The slots with a thread per job; results come back on [`JobThreads::results`].
pub struct JobThreads {
    slots: Slots,
    tx: Sender<(Ticket, Option<Msg>)>,
    rx: Receiver<(Ticket, Option<Msg>)>,
}

impl Default for JobThreads {
    fn default() -> Self {
        let (tx, rx) = unbounded();
        JobThreads {
            slots: Slots::default(),
            tx,
            rx,
        }
    }
}

impl JobThreads {
    /// Starts `job` on a `heaptui-job` thread in its slot; returns its
    /// progress (for the status line).
    pub fn start(
        &mut self,
        job: Job,
        graph: Arc<HeapGraph>,
        dom: Arc<DominatorTree>,
    ) -> std::io::Result<Arc<Progress>> {
        let (ticket, progress) = self.slots.start(SlotKey::of(&job));
        let p = progress.clone();
        let tx = self.tx.clone();
        std::thread::Builder::new()
            .name("heaptui-job".into())
            .spawn(move || {
                let msg = run_job(job, &graph, &dom, &p);
                let _ = tx.send((ticket, msg));
            })?;
        Ok(progress)
    }

    /// Finished jobs, current or superseded.
    pub fn results(&self) -> &Receiver<(Ticket, Option<Msg>)> {
        &self.rx
    }

    /// The result of a finished job, unless a newer request superseded it.
    pub fn accept(&mut self, ticket: Ticket, msg: Option<Msg>) -> Option<Msg> {
        if self.slots.finish(ticket) {
            msg
        } else {
            None
        }
    }

    /// Cancels every running job.
    pub fn cancel_all(&mut self) {
        self.slots.cancel_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use heaptui_core::model::ObjectIdx;

    #[test]
    fn a_newer_request_cancels_the_older_and_only_its_result_is_taken() {
        let mut slots = Slots::default();
        let (first, p1) = slots.start(SlotKey::Precise);
        let (second, p2) = slots.start(SlotKey::Precise);
        assert!(p1.is_cancelled(), "the older job is told to stop");
        assert!(!p2.is_cancelled());
        // The older result arrives late: dropped; the newer one is taken.
        assert!(!slots.finish(first));
        assert!(slots.finish(second));
        assert!(!slots.is_running(SlotKey::Precise));
    }

    #[test]
    fn slots_of_other_kinds_and_other_nodes_do_not_interfere() {
        let mut slots = Slots::default();
        let (precise, p) = slots.start(SlotKey::Precise);
        let (path, _) = slots.start(SlotKey::RetentionPath);
        let (a, pa) = slots.start(SlotKey::Group { tree: 1, node: 2 });
        let (b, _) = slots.start(SlotKey::Group { tree: 1, node: 3 });
        assert!(!p.is_cancelled() && !pa.is_cancelled());
        for t in [b, a, path, precise] {
            assert!(slots.finish(t));
        }
        let (_, q) = slots.start(SlotKey::DetectDuplicates);
        slots.cancel_all();
        assert!(q.is_cancelled());
    }

    #[test]
    fn threads_deliver_only_the_latest_result() {
        let text = crate::DEMO_DUMP.as_bytes();
        let dump = heaptui_core::import::import_bytes(std::path::Path::new("demo"), text).unwrap();
        let graph = Arc::new(HeapGraph::build(dump));
        let dom = Arc::new(DominatorTree::compute(&graph, &Progress::new()).unwrap());
        let mut jobs = JobThreads::default();
        for object in [1, 2, 3].map(ObjectIdx) {
            jobs.start(Job::RetentionPath { object }, graph.clone(), dom.clone())
                .unwrap();
        }
        let mut taken = Vec::new();
        for _ in 0..3 {
            let (ticket, msg) = jobs.results().recv().unwrap();
            if let Some(Msg::RetentionPath { object, .. }) = jobs.accept(ticket, msg) {
                taken.push(object);
            }
        }
        assert_eq!(
            taken,
            vec![ObjectIdx(3)],
            "only the last request's answer is used"
        );
    }
}
