//! The analysis worker: parse → graph → dominators (+ type statistics and
//! root groups) → duplicates on a named thread, each result sent as soon as
//! it exists so the panes come alive stage by stage. The UI never waits on
//! it: results arrive through a bounded channel, progress through atomics,
//! and quitting only sets the cancel flag.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use super::filtering::Filtered;
use crate::analysis::grouping::group_children_unsorted;
use crate::analysis::roots::{largest_instances, root_groups, weakly_held, RootGroup};
use crate::analysis::{
    immediate_dominators, precise_retained, shortest_retention_path, type_stats, Glob, Group,
    ImmediateDominators, PreciseRetained, TypeStats,
};
use crate::graph::duplicates::{find_duplicates, DuplicateOptions, Duplicates};
use crate::graph::{DominatorTree, HeapGraph};
use crate::import::{import_bytes, import_file, ImportError};
use crate::progress::{Progress, Stage};

/// What to analyse.
#[derive(Debug, Clone)]
pub enum Input {
    File(PathBuf),
    /// Model text in memory (the built-in demo).
    Bytes(&'static str, &'static [u8]),
}

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

/// Runs every stage, handing each result to `emit`; stops quietly when
/// cancelled or when `emit` returns false (the UI hung up).
pub fn analyse(
    input: &Input,
    options: &DuplicateOptions,
    progress: &Progress,
    emit: &mut dyn FnMut(Msg) -> bool,
) {
    let t = Instant::now();
    progress.start(Stage::Parse, 1);
    let dump = match input {
        Input::File(path) => import_file(path, progress),
        Input::Bytes(name, bytes) => {
            import_bytes(std::path::Path::new(name), bytes).map_err(ImportError::Input)
        }
    };
    let dump = match dump {
        Ok(d) => d,
        Err(ImportError::Cancelled) => return,
        Err(ImportError::Input(e)) => {
            emit(Msg::Failed(e.to_string()));
            return;
        }
    };
    if !emit(Msg::Parsed {
        ms: t.elapsed().as_millis() as u64,
    }) {
        return;
    }

    let t = Instant::now();
    progress.start(Stage::Graph, 1);
    let graph = Arc::new(HeapGraph::build(dump));
    let go_on = emit(Msg::Graph {
        graph: graph.clone(),
        ms: t.elapsed().as_millis() as u64,
    });
    if !go_on || progress.is_cancelled() {
        return;
    }

    let t = Instant::now();
    let Ok(dom) = DominatorTree::compute(&graph, progress) else {
        return;
    };
    let types = type_stats(&graph, &dom);
    let roots = root_groups(&graph, &dom);
    let weak = weakly_held(&graph, &dom);
    let largest = largest_instances(&graph, &dom);
    let dom = Arc::new(dom);
    let go_on = emit(Msg::Dominators {
        dom: dom.clone(),
        types: Arc::new(types),
        roots: Arc::new(roots),
        weakly_held: weak,
        largest: Arc::new(largest),
        ms: t.elapsed().as_millis() as u64,
    });
    if !go_on {
        return;
    }

    let t = Instant::now();
    let Ok(duplicates) = find_duplicates(&graph, &dom, options, progress) else {
        return;
    };
    progress.start(Stage::Done, 1);
    emit(Msg::Duplicates {
        duplicates: Arc::new(duplicates),
        ms: t.elapsed().as_millis() as u64,
    });
}

/// Starts [`analyse`] on the `heaptui-analysis` thread. A panic in any
/// stage is caught and sent as [`Msg::Panicked`], so the UI can say so and
/// exit 101 instead of showing progress that never moves.
pub fn spawn(
    input: Input,
    options: DuplicateOptions,
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
                analyse(&input, &options, &progress, &mut |m| {
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
