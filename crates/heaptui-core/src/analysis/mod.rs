//! Everything the two views (report and TUI) share: the staged
//! [`pipeline`] that produces an [`Analysis`], the [`Summary`] they render
//! first, grouped dominator children (docs/analyses.md), type statistics,
//! immediate dominators with an exclude pattern, precise retained
//! bytes of a set, what a cut would free ([`what_if()`]), retention paths,
//! merged paths to the roots, roots by kind, comparison of snapshots
//! (docs/analyses.md) and leak suspects.
//!
//! May import `graph`, `import`, `model`, `progress`, `mem`; never a UI
//! crate, `report` or `tui`.

pub(crate) mod compare;
pub(crate) mod compare_paths;
pub(crate) mod filter;
pub(crate) mod grouping;
pub(crate) mod memory;
pub(crate) mod merged_paths;
pub(crate) mod owners;
mod pattern;
pub mod pipeline;
mod queries;
pub(crate) mod roots;
pub(crate) mod summary;
pub(crate) mod suspects;
mod types;
pub(crate) mod what_if;

use std::path::Path;
use std::sync::Arc;

pub use compare::{
    compare, compare_files, kind_ranks, same_format, Comparison, DuplicateComparison,
    DuplicateFigures, OwnerComparison, OwnerFigures, RootComparison, RootFigures, Schedule,
    SnapshotSummary, TypeComparison, TypeFigures,
};
pub use compare_paths::{MergedRows, RowFigures, NO_OBJECT, NO_PATH};
pub use filter::{base_name, subtrees_with_match, TextScope, TypeFilter};
pub use grouping::{group_children_unsorted, largest_members};
pub use merged_paths::{
    default_excludes, merged_paths, path_ids, MergedPaths, PathFigures, PathNode, Step,
};
pub use owners::{
    default_owner_exclude, default_owner_globs, duplicate_owners, owner_copies, Owner, OwnerSet,
    Owners,
};
pub use pattern::Glob;
pub use queries::*;
pub use roots::RootGroup;
pub use summary::{DomainTally, RootTally, Summary};
pub use suspects::{
    accumulation_point, accumulation_row, growth_suspects, leak_suspects, suspects, Growth,
    Suspect, SuspectKind,
};
pub use types::{type_stats, TypeStats};
pub use what_if::{field_cut, source_of, what_if, Cut, FieldCutError, FreedType, WhatIf};

use crate::graph::duplicates::{DuplicateOptions, Duplicates};
use crate::graph::{DominatorTree, HeapGraph};
use crate::import::{ImportOptions, InputError};
use crate::model::Model;
use crate::progress::Progress;

/// Milliseconds spent in each stage.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timings {
    /// Importing the dump (or reading the reopen cache).
    pub parse_ms: u64,
    /// Building the heap graph (retainers, roots).
    pub graph_ms: u64,
    /// Dominators, retained sizes, type statistics and root groups.
    pub dominators_ms: u64,
    /// Duplicate detection.
    pub duplicates_ms: u64,
    /// Read back from the reopen cache: `parse_ms` is the time the read
    /// took, the other stages did not run.
    pub cached: bool,
}

/// Why an analysis did not finish.
#[derive(Debug)]
pub enum AnalysisError {
    /// The dump could not be read or used.
    Input(InputError),
    /// The [`Progress`] was cancelled.
    Cancelled,
}

impl std::fmt::Display for AnalysisError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AnalysisError::Input(e) => e.fmt(f),
            AnalysisError::Cancelled => f.write_str("cancelled"),
        }
    }
}

impl std::error::Error for AnalysisError {}

impl From<crate::import::ImportError> for AnalysisError {
    fn from(e: crate::import::ImportError) -> Self {
        match e {
            crate::import::ImportError::Input(e) => AnalysisError::Input(e),
            crate::import::ImportError::Cancelled => AnalysisError::Cancelled,
        }
    }
}

impl From<crate::progress::Cancelled> for AnalysisError {
    fn from(_: crate::progress::Cancelled) -> Self {
        AnalysisError::Cancelled
    }
}

/// A fully analysed heap. Immutable; shared behind `Arc`s.
#[derive(Debug, Clone)]
pub struct Analysis {
    /// The dump and its reverse references and roots.
    pub graph: Arc<HeapGraph>,
    /// The dominator tree with retained sizes.
    pub dom: Arc<DominatorTree>,
    /// Per-type statistics, by shallow bytes descending.
    pub types: Arc<Vec<TypeStats>>,
    /// The duplicate instance sets.
    pub duplicates: Arc<Duplicates>,
    /// Root records grouped by kind and flags, largest retained first.
    pub roots: Arc<Vec<roots::RootGroup>>,
    /// Per type, the reachable instance retaining most (`u32::MAX`: none).
    pub largest: Arc<Vec<u32>>,
    /// The overview's figures.
    pub summary: Arc<summary::Summary>,
    /// The memory budget and what of the analysis went to disk.
    pub memory: memory::MemoryUse,
    /// How long each stage took.
    pub timings: Timings,
}

impl Analysis {
    /// Imports and analyses a dump file, stage by stage (see [`pipeline`]).
    pub fn run(
        path: &Path,
        import: ImportOptions,
        options: &DuplicateOptions,
        progress: &Progress,
    ) -> Result<Analysis, AnalysisError> {
        let input = pipeline::Input::File(path.to_path_buf(), import);
        pipeline::run(&input, options, progress, &mut |_| true)
    }

    /// Analyses an already imported dump.
    pub fn from_dump(
        dump: Model,
        options: &DuplicateOptions,
        progress: &Progress,
    ) -> Result<Analysis, AnalysisError> {
        pipeline::analyse(dump, 0, options, progress, &mut |_| true)
    }

    /// Parses dump text from memory (tests, the demo heap).
    pub fn from_bytes(
        name: &str,
        bytes: &[u8],
        options: &DuplicateOptions,
    ) -> Result<Analysis, AnalysisError> {
        let dump =
            crate::import::import_bytes(Path::new(name), bytes).map_err(AnalysisError::Input)?;
        Analysis::from_dump(dump, options, &Progress::new())
    }

    /// The analysed dump.
    pub fn dump(&self) -> &Model {
        &self.graph.dump
    }

    /// Objects, bytes of the unreachable group.
    pub fn unreachable(&self) -> (u64, u64) {
        let objects = self.dump().objects() as u64 - self.dom.reachable_objects;
        let bytes = self.dump().total_bytes() - self.dom.reachable_bytes;
        (objects, bytes)
    }
}
