//! The analysis worker: runs `analysis::pipeline` (through the reopen
//! cache) on a named thread and forwards each stage's result as soon as it
//! exists, so the panes come alive stage by stage; also the on-demand jobs. The UI never waits on
//! it: results arrive through a bounded channel, progress through atomics,
//! and quitting only sets the cancel flag.

use std::sync::Arc;
use std::time::Instant;

use super::filtering::Filtered;
use crate::analysis::grouping::group_children_unsorted;
use crate::analysis::pipeline::StageResult;
use crate::analysis::roots::RootGroup;
use crate::analysis::{
    immediate_dominators, precise_retained, shortest_retention_path, AnalysisError, Glob, Group,
    ImmediateDominators, PreciseRetained, TypeStats,
};
use crate::cache::{CacheOptions, Note};
use crate::graph::duplicates::{DuplicateOptions, Duplicates};
use crate::graph::{DominatorTree, HeapGraph};
use crate::progress::Progress;

pub use crate::analysis::pipeline::Input;

/// Results, in the order they are produced. `ms` is the stage's duration.
#[derive(Debug, Clone)]
pub enum Msg {
    Parsed {
        ms: u64,
    },
    Graph {
        graph: Arc<HeapGraph>,
        ms: u64,
    },
    Dominators {
        dom: Arc<DominatorTree>,
        types: Arc<Vec<TypeStats>>,
        roots: Arc<Vec<RootGroup>>,
        weakly_held: (u64, u64),
        /// Per type, the reachable instance retaining most (`u32::MAX`: none).
        largest: Arc<Vec<u32>>,
        ms: u64,
    },
    Duplicates {
        duplicates: Arc<Duplicates>,
        ms: u64,
    },
    /// The dump cannot be used (exit status 2).
    Failed(String),
    /// A background stage panicked (exit status 101).
    Panicked(String),
    /// A background precise-retained job finished.
    Precise {
        type_index: u32,
        result: PreciseRetained,
    },
    ImmediateDominators {
        type_index: u32,
        exclude: String,
        rows: Vec<ImmediateDominators>,
    },
    RetentionPath {
        object: u32,
        path: Option<Vec<u32>>,
    },
    /// Grouped children for a dominator-tree node (see `Tree::expand`).
    Expanded {
        tree: u64,
        node: u32,
        groups: Vec<Group>,
    },
    /// A `/` filter's result from the filter thread.
    Filtered(Filtered),
}

/// Work the UI asks for on demand; heavy on big heaps, so it runs on its
/// own thread there and its result comes back as a [`Msg`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Job {
    Precise {
        type_index: u32,
    },
    ImmediateDominators {
        type_index: u32,
        exclude: String,
    },
    RetentionPath {
        object: u32,
    },
    /// Group the dominator-tree children of many parents for a tree node.
    GroupChildren {
        tree: u64,
        node: u32,
        parents: Arc<Vec<u32>>,
    },
    /// Finish duplicate detection for one type whose detection was cut short.
    DetectDuplicates {
        type_index: u32,
        current: Arc<Duplicates>,
    },
}

/// Runs a job to completion (on whatever thread calls it).
pub fn run_job(
    job: Job,
    graph: &HeapGraph,
    dom: &DominatorTree,
    progress: &Progress,
) -> Option<Msg> {
    match job {
        Job::Precise { type_index } => {
            let set = instances_of(graph, type_index);
            let result = precise_retained(graph, dom, &set, progress).ok()?;
            Some(Msg::Precise { type_index, result })
        }
        Job::ImmediateDominators {
            type_index,
            exclude,
        } => {
            let set = instances_of(graph, type_index);
            let glob = (!exclude.is_empty()).then(|| Glob::new(&exclude));
            let rows = immediate_dominators(&graph.dump, dom, &set, glob.as_ref());
            Some(Msg::ImmediateDominators {
                type_index,
                exclude,
                rows,
            })
        }
        Job::RetentionPath { object } => Some(Msg::RetentionPath {
            object,
            path: shortest_retention_path(graph, dom, object),
        }),
        Job::GroupChildren {
            tree,
            node,
            parents,
        } => Some(Msg::Expanded {
            tree,
            node,
            groups: group_children_unsorted(&graph.dump, dom, &parents),
        }),
        Job::DetectDuplicates {
            type_index,
            current,
        } => {
            let t = Instant::now();
            let duplicates =
                crate::graph::duplicates::detect_type(graph, dom, &current, type_index, progress)
                    .ok()?;
            Some(Msg::Duplicates {
                duplicates: Arc::new(duplicates),
                ms: t.elapsed().as_millis() as u64,
            })
        }
    }
}

/// Starts [`run_job`] on the `heaptui-job` thread.
pub fn spawn_job(
    job: Job,
    graph: Arc<HeapGraph>,
    dom: Arc<DominatorTree>,
    progress: Arc<Progress>,
    tx: crossbeam_channel::Sender<Msg>,
) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("heaptui-job".into())
        .spawn(move || {
            if let Some(m) = run_job(job, &graph, &dom, &progress) {
                let _ = tx.send(m);
            }
        })
        .map(|_| ())
}

/// Runs the analysis pipeline (through the reopen cache when `cache` is
/// given), handing each stage's result to `emit` as a [`Msg`]; stops quietly
/// when cancelled or when `emit` returns false (the UI hung up). The order
/// of the stages is the pipeline's, not the worker's.
pub fn analyse(
    input: &Input,
    options: &DuplicateOptions,
    cache: Option<&CacheOptions>,
    progress: &Progress,
    emit: &mut dyn FnMut(Msg) -> bool,
) {
    let note: Note = Arc::new(|line| tracing::warn!(target: "heaptui::cache", "{line}"));
    let result = crate::cache::run(
        input,
        options,
        cache,
        progress,
        &mut |stage| emit(message(stage)),
        note,
    );
    match result {
        // A cache file still being written goes on in the background; the
        // UI exits without waiting (an unfinished file is never read).
        Ok((_, pending)) => pending.wait(),
        Err(AnalysisError::Input(e)) => {
            emit(Msg::Failed(e.to_string()));
        }
        Err(AnalysisError::Cancelled) => {}
    }
}

fn message(stage: StageResult) -> Msg {
    match stage {
        StageResult::Imported { ms } => Msg::Parsed { ms },
        StageResult::Graph { graph, ms } => Msg::Graph { graph, ms },
        StageResult::Dominators {
            dom,
            types,
            roots,
            largest,
            summary,
            ms,
        } => Msg::Dominators {
            dom,
            types,
            roots,
            weakly_held: (summary.weakly_held_objects, summary.weakly_held_bytes),
            largest,
            ms,
        },
        StageResult::Duplicates { duplicates, ms } => Msg::Duplicates { duplicates, ms },
    }
}

/// Starts [`analyse`] on the `heaptui-analysis` thread. A panic in any
/// stage is caught and sent as [`Msg::Panicked`], so the UI can say so and
/// exit 101 instead of showing progress that never moves.
pub fn spawn(
    input: Input,
    options: DuplicateOptions,
    cache: Option<CacheOptions>,
    progress: Arc<Progress>,
    tx: crossbeam_channel::Sender<Msg>,
) -> std::io::Result<()> {
    // Test hook (debug builds only): panic once the graph is sent, as a
    // bug in a later stage would.
    let inject = cfg!(debug_assertions) && std::env::var_os("HEAPTUI_TEST_WORKER_PANIC").is_some();
    std::thread::Builder::new()
        .name("heaptui-analysis".into())
        .spawn(move || {
            let run = std::panic::AssertUnwindSafe(|| {
                analyse(&input, &options, cache.as_ref(), &progress, &mut |m| {
                    let graph = matches!(m, Msg::Graph { .. });
                    let sent = tx.send(m).is_ok();
                    if inject && graph {
                        panic!("injected by HEAPTUI_TEST_WORKER_PANIC");
                    }
                    sent
                });
            });
            if let Err(payload) = std::panic::catch_unwind(run) {
                let text = super::signals::take_background_panic()
                    .unwrap_or_else(|| super::signals::payload_text(&*payload));
                let _ = tx.send(Msg::Panicked(text));
            }
        })
        .map(|_| ())
}

/// Every object of a type (one scan of the type column).
pub fn instances_of(graph: &HeapGraph, type_index: u32) -> Vec<u32> {
    graph
        .dump
        .types
        .iter()
        .enumerate()
        .filter(|&(_, &t)| t == type_index)
        .map(|(o, _)| o as u32)
        .collect()
}
