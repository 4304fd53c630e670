//! The messages the background threads send the UI (the analysis worker,
//! the job threads, the filter thread) and the data they carry. Low in the
//! layering: it imports only data types from below (`compared`,
//! `instance_rows`, `pane_id`), and the worker, the filter thread and
//! `loading` all speak through it without importing each other.

use std::sync::Arc;

use super::compared::Compared;
use super::instance_rows::InstanceRows;
use super::pane_id::PaneId;
use heaptui_core::analysis::roots::RootGroup;
use heaptui_core::analysis::summary::Summary;
use heaptui_core::analysis::suspects::Suspect;
use heaptui_core::analysis::{Group, ImmediateDominators, PreciseRetained, TypeStats};
use heaptui_core::graph::duplicates::{DuplicateTotals, Duplicates};
use heaptui_core::graph::{DominatorTree, HeapGraph};
use heaptui_core::model::{ObjectIdx, TypeIdx};

/// What the dominators stage hands the UI, in one piece (the worker
/// builds it, `Loading` keeps it, tests inflate it).
#[derive(Debug, Clone)]
pub struct DominatorsStage {
    pub dom: Arc<DominatorTree>,
    pub types: Arc<Vec<TypeStats>>,
    pub roots: Arc<Vec<RootGroup>>,
    /// Per type, the reachable instance retaining most (`u32::MAX`: none).
    pub largest: Arc<Vec<u32>>,
    /// The figures the Overview shows, computed once as the report does.
    pub summary: Arc<Summary>,
    /// The super-root's children grouped by type (the Dominators pane's
    /// first rows): millions of objects on a big heap, so grouped here,
    /// never on the UI thread.
    pub top: Vec<Arc<Group>>,
}

/// Results, in the order they are produced. `ms` is the stage's duration.
#[derive(Debug, Clone)]
pub enum Msg {
    Parsed {
        ms: u64,
        /// Read back from the reopen cache (the other stages follow at once).
        cached: bool,
    },
    Graph {
        graph: Arc<HeapGraph>,
        ms: u64,
        /// Its sums (O(objects), so not on the UI thread).
        totals: Totals,
    },
    Dominators {
        stage: DominatorsStage,
        ms: u64,
    },
    Duplicates {
        duplicates: Arc<Duplicates>,
        ms: u64,
    },
    /// The leak suspects of the opened snapshot alone (docs/analyses.md).
    Suspects(Arc<Vec<Suspect>>),
    /// A baseline's analysis starts: `snapshot` of `of` (1-based, oldest
    /// first), named `name`.
    Comparing {
        snapshot: usize,
        of: usize,
        name: String,
    },
    /// Every baseline is analysed: the comparison, and the suspects again
    /// with the steadily growing rows among them.
    Compared {
        compared: Arc<Compared>,
        suspects: Arc<Vec<Suspect>>,
    },
    /// A baseline cannot be used; the opened snapshot stays usable.
    CompareFailed(String),
    /// The dump cannot be used (exit status 2).
    Failed(String),
    /// A background stage panicked (exit status 101).
    Panicked(String),
    /// A background precise-retained job finished.
    Precise {
        type_index: TypeIdx,
        result: PreciseRetained,
    },
    ImmediateDominators {
        type_index: TypeIdx,
        exclude: String,
        rows: Vec<ImmediateDominators>,
    },
    RetentionPath {
        object: ObjectIdx,
        path: Option<Vec<ObjectIdx>>,
    },
    /// Grouped children for a dominator-tree node (see `Tree::expand`).
    Expanded {
        tree: u64,
        node: u32,
        groups: Vec<Group>,
    },
    /// A type's instances in the order asked for.
    Instances(InstanceRows),
    /// A `/` filter's result from the filter thread.
    Filtered(Filtered),
}

impl Msg {
    /// Whether this is the result of an on-demand job for a pane or the
    /// inspector (the stage results and filter results are not).
    pub fn is_job_result(&self) -> bool {
        matches!(
            self,
            Msg::Precise { .. }
                | Msg::ImmediateDominators { .. }
                | Msg::Instances(_)
                | Msg::RetentionPath { .. }
                | Msg::Expanded { .. }
        )
    }
}

/// Whole-heap sums the frames show, computed once when data arrives.
#[derive(Debug, Clone, Default)]
pub struct Totals {
    pub bytes: u64,
    /// (kind, flags, records), sorted.
    pub root_kinds: Vec<(u32, u32, u64)>,
    pub additional_bytes: u64,
    /// The duplicate sets' totals, unverified sets apart.
    pub duplicates: DuplicateTotals,
    /// The first ten verified duplicate sets (the Overview's top).
    pub top_sets: Vec<u32>,
}

impl Totals {
    /// The sums of a graph (the duplicates' total comes with them).
    pub fn of(graph: &HeapGraph) -> Totals {
        let mut kinds: Vec<(u32, u32, u64)> = Vec::new();
        let mut keys: Vec<(u32, u32)> =
            graph.dump.roots.iter().map(|r| (r.kind, r.flags)).collect();
        keys.sort_unstable();
        for k in keys.chunk_by(|a, b| a == b) {
            kinds.push((k[0].0, k[0].1, k.len() as u64));
        }
        Totals {
            bytes: graph.dump.total_bytes(),
            root_kinds: kinds,
            additional_bytes: 0,
            duplicates: DuplicateTotals::default(),
            top_sets: Vec::new(),
        }
    }
}

/// A finished filter computation.
#[derive(Debug, Clone)]
pub struct Filtered {
    pub pane: PaneId,
    pub generation: u64,
    pub result: FilterResult,
}

#[derive(Debug, Clone)]
pub enum FilterResult {
    Tree(Arc<Vec<bool>>),
    Duplicates {
        /// The detection result the rows index into.
        source: Arc<Duplicates>,
        rows: Arc<Vec<DupRow>>,
    },
    Roots(Arc<Vec<GroupMatch>>),
    /// The candidates are in the matcher.
    Types,
}

/// A row of the Duplicates pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DupRow {
    Set(u32),
    /// A set of the baselines that the newest snapshot lacks (index into
    /// the pane's gone sets).
    Gone(u32),
    /// Index into `Duplicates::possible`.
    Possible(u32),
}

/// A root group under a filter: how many of its records match, and the
/// first [`RECORDS_SHOWN`] of them (all a view ever lists).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupMatch {
    pub records: usize,
    pub first: Vec<u32>,
}
