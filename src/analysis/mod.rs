//! Queries shared by the TUI and the report, over an immutable analysed heap:
//! the pipeline ([`Analysis::run`]), grouped dominator children (SPEC §2.1),
//! type statistics (§2.2), immediate dominators with an exclude pattern
//! (§2.3), precise retained bytes of a set, retention paths.

pub mod compare;
pub mod compare_paths;
pub mod filter;
pub mod grouping;
mod pattern;
mod queries;
pub mod roots;
pub mod suspects;
mod types;

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

pub use pattern::Glob;
pub use queries::*;
pub use types::{type_stats, TypeStats};

use crate::graph::duplicates::{find_duplicates, DuplicateOptions, Duplicates};
use crate::graph::{DominatorTree, HeapGraph};
use crate::import::{import_file, InputError};
use crate::model::Model;
use crate::progress::{Progress, Stage};

/// Milliseconds spent in each stage.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timings {
    pub parse_ms: u64,
    pub graph_ms: u64,
    pub dominators_ms: u64,
    pub duplicates_ms: u64,
}

/// Why an analysis did not finish.
#[derive(Debug)]
pub enum AnalysisError {
    Input(InputError),
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
    pub graph: Arc<HeapGraph>,
    pub dom: Arc<DominatorTree>,
    pub types: Arc<Vec<TypeStats>>,
    pub duplicates: Arc<Duplicates>,
    pub timings: Timings,
}

impl Analysis {
    /// Parses and analyses a dump file, stage by stage.
    pub fn run(
        path: &Path,
        options: &DuplicateOptions,
        progress: &Progress,
    ) -> Result<Analysis, AnalysisError> {
        let t = Instant::now();
        let dump = import_file(path, progress)?;
        let parse_ms = t.elapsed().as_millis() as u64;
        let mut a = Analysis::from_dump(dump, options, progress)?;
        a.timings.parse_ms = parse_ms;
        Ok(a)
    }

    /// Analyses an already parsed dump.
    pub fn from_dump(
        dump: Model,
        options: &DuplicateOptions,
        progress: &Progress,
    ) -> Result<Analysis, AnalysisError> {
        let t = Instant::now();
        progress.start(Stage::Graph, 1);
        let mut laps = crate::progress::Laps::new("analysis");
        let graph = HeapGraph::build(dump);
        laps.lap("graph");
        let graph_ms = t.elapsed().as_millis() as u64;
        progress.check()?;
        let t = Instant::now();
        let dom = DominatorTree::compute(&graph, progress)?;
        laps.lap("dominators");
        let types = type_stats(&graph, &dom);
        laps.lap("type stats");
        let dominators_ms = t.elapsed().as_millis() as u64;
        let t = Instant::now();
        let duplicates = find_duplicates(&graph, &dom, options, progress)?;
        let duplicates_ms = t.elapsed().as_millis() as u64;
        progress.start(Stage::Done, 1);
        Ok(Analysis {
            graph: Arc::new(graph),
            dom: Arc::new(dom),
            types: Arc::new(types),
            duplicates: Arc::new(duplicates),
            timings: Timings {
                parse_ms: 0,
                graph_ms,
                dominators_ms,
                duplicates_ms,
            },
        })
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
