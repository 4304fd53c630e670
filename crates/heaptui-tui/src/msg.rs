//! The messages the background threads send the UI (the analysis worker,
//! the job threads, the filter thread) and the data they carry. Low in the
//! layering: it imports only data types from below (`compared`,
//! `instance_rows`, `pane_id`), and the worker, the filter thread and
//! `loading` all speak through it without importing each other.

use std::sync::Arc;

use super::compared::Compared;
use super::instance_rows::InstanceRows;
use super::pane_id::PaneId;
use heaptui_core::analysis::pipeline::Input;
use heaptui_core::analysis::Owners;
use heaptui_core::analysis::RootGroup;
use heaptui_core::analysis::Summary;
use heaptui_core::analysis::Suspect;
use heaptui_core::analysis::{Group, ImmediateDominators, PreciseRetained, TypeStats};
use heaptui_core::analysis::{MergedPaths, PathFigures};
use heaptui_core::cache::CacheOptions;
use heaptui_core::graph::duplicates::DuplicateOptions;
use heaptui_core::graph::duplicates::{DuplicateTotals, Duplicates};
use heaptui_core::graph::{DominatorTree, HeapGraph};
use heaptui_core::model::{ObjectIdx, TypeIdx};

/// What the dominators stage hands the UI, in one piece (the worker
/// builds it, `Loading` keeps it, tests inflate it).
#[derive(Debug, Clone)]
pub struct DominatorsStage {
    /// The dominator tree with retained sizes.
    pub dom: Arc<DominatorTree>,
    /// Per-type statistics.
    pub types: Arc<Vec<TypeStats>>,
    /// Root records grouped by kind and flags.
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

/// The objects whose merged paths to the roots are asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathsTarget {
    /// Every instance of a type (the Types pane).
    Type(TypeIdx),
    /// Some objects (a group row, a duplicate set), and what to call them.
    Objects {
        /// `126 × MyApp.Orders.Order`, `set #3 (java.lang.String)`.
        label: String,
        /// The objects.
        objects: Arc<Vec<ObjectIdx>>,
    },
}

/// A merged-paths job's answer (the overlay's data).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathsResult {
    /// What was asked about.
    pub target: PathsTarget,
    /// Whether the platform's types were skipped
    /// (`heaptui_core::analysis::default_excludes`).
    pub skip: bool,
    /// The patterns skipped.
    pub skipped: Vec<String>,
    /// The merged tree.
    pub paths: MergedPaths,
    /// Comparing snapshots, for a type: each baseline's paths of the type
    /// of the same name, oldest first, and per node of `paths` its
    /// identity across snapshots ([`path_ids`](heaptui_core::analysis::path_ids)).
    pub baselines: Option<PathsBaselines>,
}

/// The baselines' merged paths of a [`PathsResult`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathsBaselines {
    /// Each baseline's figures by path, oldest first.
    pub figures: Vec<PathFigures>,
    /// Per node of the newest tree, its path's identity.
    pub ids: Vec<u64>,
}

impl PathsBaselines {
    /// Objects through node `n` newest − oldest.
    pub fn delta(&self, n: u32, objects: u64) -> i128 {
        let oldest = self
            .figures
            .first()
            .map_or(0, |f| f.objects(self.ids[n as usize]));
        objects as i128 - oldest as i128
    }
}

/// Where the older snapshots of a comparison are read from again (through
/// the reopen cache), for answers a comparison's summary does not hold
/// (the merged paths of a type in each snapshot). Equal by identity.
#[derive(Debug, Clone)]
pub struct BaselineSources(pub Arc<(Vec<Input>, DuplicateOptions, Option<CacheOptions>)>);

impl PartialEq for BaselineSources {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for BaselineSources {}

/// Results, in the order they are produced. `ms` is the stage's duration.
#[derive(Debug, Clone)]
pub enum Msg {
    /// The dump was imported.
    Parsed {
        /// How long it took, in milliseconds.
        ms: u64,
        /// Read back from the reopen cache (the other stages follow at once).
        cached: bool,
    },
    /// The heap graph was built.
    Graph {
        /// The dump with its reverse references and roots.
        graph: Arc<HeapGraph>,
        /// How long it took, in milliseconds.
        ms: u64,
        /// Its sums (O(objects), so not on the UI thread).
        totals: Totals,
    },
    /// The dominator tree and what comes with it.
    Dominators {
        /// Everything the stage made.
        stage: DominatorsStage,
        /// How long it took, in milliseconds.
        ms: u64,
    },
    /// Duplicate detection finished.
    Duplicates {
        /// The duplicate sets.
        duplicates: Arc<Duplicates>,
        /// How long it took, in milliseconds.
        ms: u64,
    },
    /// The leak suspects of the opened snapshot alone (docs/analyses.md).
    Suspects(Arc<Vec<Suspect>>),
    /// A baseline's analysis starts: `snapshot` of `of` (1-based, oldest
    /// first), named `name`.
    Comparing {
        /// Which baseline, 1-based.
        snapshot: usize,
        /// How many baselines.
        of: usize,
        /// The baseline's name.
        name: String,
    },
    /// Every baseline is analysed: the comparison, and the suspects again
    /// with the steadily growing rows among them.
    Compared {
        /// The comparison of the snapshots.
        compared: Arc<Compared>,
        /// The suspects, the growing rows among them.
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
        /// The type whose instances were measured.
        type_index: TypeIdx,
        /// The bytes and objects freed with them.
        result: PreciseRetained,
    },
    /// A background immediate-dominators job finished.
    ImmediateDominators {
        /// The type whose instances' dominators were looked for.
        type_index: TypeIdx,
        /// The exclude pattern it ran with.
        exclude: String,
        /// The rows, by dominated shallow bytes descending.
        rows: Vec<ImmediateDominators>,
    },
    /// Duplicate waste by owner was computed (the Duplicates pane's owners view).
    Owners {
        /// The detection result it was computed from.
        source: Arc<Duplicates>,
        /// The owners.
        owners: Arc<Owners>,
    },
    /// What a cut would free (the inspector's `w`).
    WhatIf {
        /// The object the inspector showed when it was asked.
        anchor: ObjectIdx,
        /// What was cut, in words (`.table → of java.util.HashMap fd5bfff0`).
        label: String,
        /// What it frees.
        result: Arc<heaptui_core::analysis::WhatIf>,
        /// Per row of `result.by_type`: its freed object that retains most.
        largest: Vec<ObjectIdx>,
    },
    /// A shortest retention path was looked for (the inspector's).
    RetentionPath {
        /// The object whose path was asked for.
        object: ObjectIdx,
        /// The path from a root to it, the rooted object first; `None` where no strong root reaches it.
        path: Option<Vec<ObjectIdx>>,
    },
    /// Grouped children for a dominator-tree node (see `Tree::expand`).
    Expanded {
        /// Which tree asked (the zoom level's id); a tree since gone ignores it.
        tree: u64,
        /// The expanded node.
        node: u32,
        /// Its children, grouped by type.
        groups: Vec<Group>,
    },
    /// A type's instances in the order asked for.
    Instances(InstanceRows),
    /// Merged paths to the roots were computed.
    MergedPaths(Arc<PathsResult>),
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
                | Msg::Owners { .. }
                | Msg::Instances(_)
                | Msg::RetentionPath { .. }
                | Msg::WhatIf { .. }
                | Msg::Expanded { .. }
                | Msg::MergedPaths(_)
        )
    }
}

/// Whole-heap sums the frames show, computed once when data arrives.
#[derive(Debug, Clone, Default)]
pub struct Totals {
    /// Shallow bytes of every object.
    pub bytes: u64,
    /// (kind, flags, records), sorted.
    pub root_kinds: Vec<(u32, u32, u64)>,
    /// The duplicates' total ([`Duplicates::total_additional_bytes`]); 0 until they arrive.
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
    /// The pane that asked.
    pub pane: PaneId,
    /// The request's generation: a result older than the pane's latest request is dropped.
    pub generation: u64,
    /// What was found.
    pub result: FilterResult,
}

/// A filter's result, by pane.
#[derive(Debug, Clone)]
pub enum FilterResult {
    /// Dominators: per object, whether its subtree holds a match.
    Tree(Arc<Vec<bool>>),
    /// Duplicates: the rows that match.
    Duplicates {
        /// The detection result the rows index into.
        source: Arc<Duplicates>,
        /// The matching rows.
        rows: Arc<Vec<DupRow>>,
        /// The owners view's owners that match, when the pane had owners.
        owners: Option<OwnersMatch>,
    },
    /// Roots: the groups with matching records.
    Roots(Arc<Vec<GroupMatch>>),
    /// The candidates are in the matcher.
    Types,
}

/// The Duplicates pane's owners under a filter: an owner matches when a
/// type of its path or of its sets does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnersMatch {
    /// The owners filtered.
    pub owners: Arc<Owners>,
    /// The matching owners, positions in `owners.owners`, ascending.
    pub shown: Arc<Vec<u32>>,
    /// The matching owners gone from the newest snapshot (positions in
    /// the texts the request carried).
    pub gone: Arc<Vec<u32>>,
}

/// A row of the Duplicates pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DupRow {
    /// Index into the detection result's sets.
    Set(u32),
    /// A set of the baselines that the newest snapshot lacks (index into
    /// the pane's gone sets).
    Gone(u32),
    /// Index into `Duplicates::possible`.
    Possible(u32),
}

/// A root group under a filter: how many of its records match, and the
/// first [`RECORDS_SHOWN`](crate::filtering::RECORDS_SHOWN) of them (all a view ever lists).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupMatch {
    /// How many of the group's records match.
    pub records: usize,
    /// The first of them (indices into `Model::roots`), at most [`crate::filtering::RECORDS_SHOWN`].
    pub first: Vec<u32>,
}
