//! The analysis worker: runs `analysis::pipeline` (through the reopen
//! cache) on a named thread and forwards each stage's result as soon as it
//! exists, so the panes come alive stage by stage; also the on-demand jobs. The UI never waits on
//! it: results arrive through a bounded channel, progress through atomics,
//! and quitting only sets the cancel flag.

use std::sync::Arc;
use std::time::Instant;

use super::compared::Compared;
use super::instance_rows::{instance_rows, InstanceKey, TypeObjects};
use heaptui_core::analysis::group_children_unsorted;
use heaptui_core::analysis::pipeline::StageResult;
use heaptui_core::analysis::suspects;
use heaptui_core::analysis::{compare, same_format, SnapshotSummary};
use heaptui_core::analysis::{default_owner_globs, duplicate_owners, owner_copies, Owners};
use heaptui_core::analysis::{
    immediate_dominators, precise_retained, shortest_retention_path, AnalysisError, Glob,
};
use heaptui_core::analysis::{what_if, Cut, WhatIf};
use heaptui_core::cache::{CacheOptions, Note};
use heaptui_core::graph::duplicates::{DuplicateOptions, Duplicates};
use heaptui_core::graph::{DominatorTree, HeapGraph};
use heaptui_core::model::{ObjectIdx, TypeIdx, TypeWord};
use heaptui_core::progress::Progress;

pub use super::msg::{
    BaselineSources, DominatorsStage, Msg, PathsBaselines, PathsResult, PathsTarget, Totals,
};
pub use heaptui_core::analysis::pipeline::Input;
use heaptui_core::analysis::{path_ids, PathFigures};

/// Work the UI asks for on demand; heavy on big heaps, so it runs on its
/// own thread there and its result comes back as a [`Msg`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Job {
    /// The precise retained size of a type's instances.
    Precise {
        /// The type.
        type_index: TypeIdx,
    },
    /// The immediate dominators of a type's instances.
    ImmediateDominators {
        /// The type.
        type_index: TypeIdx,
        /// Dominator types to walk past (a glob pattern; empty for none).
        exclude: String,
    },
    /// What a cut would free.
    WhatIf {
        /// The object the inspector shows the answer on.
        anchor: ObjectIdx,
        /// What is cut, in words.
        label: String,
        /// The cut.
        cut: Cut,
        /// The extra copies of a duplicate owner, added to the cut by the
        /// job (finding them walks the copies' dominators).
        owner: Option<OwnerCut>,
    },
    /// A shortest retention path to an object.
    RetentionPath {
        /// The object.
        object: ObjectIdx,
    },
    /// Group the dominator-tree children of many parents for a tree node.
    GroupChildren {
        /// The [`Tree::id`](crate::panes::dominators::Tree::id) of the tree that asked.
        tree: u64,
        /// The node whose children are grouped.
        node: u32,
        /// The objects whose dominator-tree children are grouped.
        parents: Arc<Vec<u32>>,
    },
    /// Duplicate waste by owner (docs/duplicates.md) of a detection result.
    Owners {
        /// The detection result whose extra copies are charged.
        duplicates: Arc<Duplicates>,
        /// Exclude patterns (globs); `None` for the format's defaults.
        exclude: Option<Vec<String>>,
    },
    /// Finish duplicate detection for one type whose detection was cut short.
    DetectDuplicates {
        /// The type, an index into `Model::type_names`.
        type_index: u32,
        /// The detection result to complete.
        current: Arc<Duplicates>,
    },
    /// The merged paths to the roots of some objects.
    MergedPaths {
        /// The objects.
        target: PathsTarget,
        /// Whether the platform's types are skipped.
        skip: bool,
        /// Comparing snapshots, for a type: where the older snapshots are
        /// read from, for each node's count per snapshot.
        baselines: Option<BaselineSources>,
    },
    /// A type's instances in an order (the type → objects index is built
    /// first when `index` is `None`).
    Instances {
        /// The type.
        type_index: TypeIdx,
        /// The order's column.
        key: InstanceKey,
        /// Largest first (or Z to A).
        descending: bool,
        /// The type → objects index, once built.
        index: Option<Arc<TypeObjects>>,
    },
}

/// A duplicate owner whose extra copies a what-if cuts
/// ([`owner_copies`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnerCut {
    /// The detection result the owners were computed from.
    pub duplicates: Arc<Duplicates>,
    /// The owners.
    pub owners: Arc<Owners>,
    /// The owner, a position in `owners.owners`.
    pub owner: u32,
}

/// Runs a job to completion (on whatever thread calls it).
pub fn run_job(
    job: Job,
    graph: &HeapGraph,
    dom: &DominatorTree,
    progress: &Progress,
) -> Option<Msg> {
    let _busy = heaptui_core::mem::busy();
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
        Job::WhatIf {
            anchor,
            label,
            cut,
            owner,
        } => what_if_job(anchor, label, cut, owner, graph, dom, progress),
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
        Job::Instances {
            type_index,
            key,
            descending,
            index,
        } => Some(Msg::Instances(instance_rows(
            type_index,
            key,
            descending,
            index,
            &graph.dump,
            dom,
        ))),
        Job::MergedPaths {
            target,
            skip,
            baselines,
        } => paths_job(target, skip, baselines, graph, dom, progress),
        Job::Owners {
            duplicates,
            exclude,
        } => Some(owners_job(duplicates, exclude, graph, dom)),
        Job::DetectDuplicates {
            type_index,
            current,
        } => detect_job(type_index, &current, graph, dom, progress),
    }
}

/// [`Job::WhatIf`]: what the cut frees, the owner's extra copies added to
/// it first.
fn what_if_job(
    anchor: ObjectIdx,
    label: String,
    mut cut: Cut,
    owner: Option<OwnerCut>,
    graph: &HeapGraph,
    dom: &DominatorTree,
    progress: &Progress,
) -> Option<Msg> {
    let _span = tracing::debug_span!(target: "heaptui::profile", "what_if_job").entered();
    if let Some(oc) = owner {
        let globs: Vec<Glob> = oc.owners.exclude.iter().map(|p| Glob::new(p)).collect();
        let o = oc.owners.owners.get(oc.owner as usize)?;
        cut.objects
            .extend(owner_copies(&graph.dump, dom, &oc.duplicates, &globs, o));
    }
    let result = what_if(graph, dom, &cut, progress).ok()?;
    let largest = largest_freed(graph, dom, &result);
    Some(Msg::WhatIf {
        anchor,
        label,
        result: Arc::new(result),
        largest,
    })
}

/// [`Job::Owners`]: the duplicate waste by owner, cut at the given
/// patterns or the format's defaults.
fn owners_job(
    duplicates: Arc<Duplicates>,
    exclude: Option<Vec<String>>,
    graph: &HeapGraph,
    dom: &DominatorTree,
) -> Msg {
    let globs: Vec<Glob> = match &exclude {
        Some(p) => p.iter().map(|p| Glob::new(p)).collect(),
        None => default_owner_globs(graph.dump.format),
    };
    let owners = duplicate_owners(&graph.dump, dom, &duplicates, &globs);
    Msg::Owners {
        source: duplicates,
        owners: Arc::new(owners),
    }
}

/// [`Job::DetectDuplicates`]: the detection finished for one type, as a
/// new duplicates stage (timed like one).
fn detect_job(
    type_index: u32,
    current: &Duplicates,
    graph: &HeapGraph,
    dom: &DominatorTree,
    progress: &Progress,
) -> Option<Msg> {
    let t = Instant::now();
    let duplicates =
        heaptui_core::graph::duplicates::detect_type(graph, dom, current, type_index, progress)
            .ok()?;
    Some(Msg::Duplicates {
        duplicates: Arc::new(duplicates),
        ms: t.elapsed().as_millis() as u64,
    })
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
    analyse_series(input, &[], options, cache, progress, emit)
}

/// [`analyse`], then the leak suspects, then, with `baselines` (older
/// snapshots, oldest first), each baseline one after another through the
/// cache as well, reduced to its [`SnapshotSummary`] and dropped before
/// the next (so at most two analyses are held: the opened one and one
/// baseline), and the comparison. `progress` is reused for each baseline
/// ([`Msg::Comparing`] says which); its cancel flag stops them all.
pub fn analyse_series(
    input: &Input,
    baselines: &[Input],
    options: &DuplicateOptions,
    cache: Option<&CacheOptions>,
    progress: &Progress,
    emit: &mut dyn FnMut(Msg) -> bool,
) {
    let note: Note = Arc::new(|line| tracing::warn!(target: "heaptui::cache", "{line}"));
    let mut hung_up = false;
    let mut messages = Messages::default();
    let result = heaptui_core::cache::run(
        input,
        options,
        cache,
        progress,
        &mut |stage| {
            let sent = emit(messages.of(stage));
            hung_up |= !sent;
            sent
        },
        note.clone(),
    );
    let (analysis, pending) = match result {
        Ok(done) => done,
        Err(AnalysisError::Input(e)) => {
            emit(Msg::Failed(e.to_string()));
            return;
        }
        Err(AnalysisError::Cancelled) => return,
    };
    // A cache file still being written goes on in the background; the
    // process finishes it before exiting (`cache::finish_writes`).
    heaptui_core::cache::finish_at_exit(pending);
    if hung_up || progress.is_cancelled() {
        return;
    }
    if !emit(Msg::Suspects(Arc::new(suspects(&analysis, None)))) {
        return;
    }
    // The inspector names each retainer's reference by a binary search
    // from now on (a bounded scan until then).
    analysis.graph.dump.index_labels();
    if baselines.is_empty() {
        return;
    }
    let Some(mut summaries) =
        summarise_baselines(baselines, &analysis, options, cache, progress, &note, emit)
    else {
        return;
    };
    if progress.is_cancelled() {
        return;
    }
    summaries.push(SnapshotSummary::of(&analysis));
    let cmp = compare(&summaries);
    drop(summaries);
    let all = suspects(&analysis, Some(&cmp));
    let compared = Compared::new(cmp, &analysis.graph.dump.type_names);
    emit(Msg::Compared {
        compared: Arc::new(compared),
        suspects: Arc::new(all),
    });
}

/// Analyses each baseline in turn (through the cache) and reduces it to its
/// [`SnapshotSummary`], dropped before the next; `None` when one cannot be
/// used (said through `emit`), on a cancel, or when the UI hung up.
fn summarise_baselines(
    baselines: &[Input],
    analysis: &heaptui_core::analysis::Analysis,
    options: &DuplicateOptions,
    cache: Option<&CacheOptions>,
    progress: &Progress,
    note: &Note,
    emit: &mut dyn FnMut(Msg) -> bool,
) -> Option<Vec<SnapshotSummary>> {
    let mut summaries = Vec::with_capacity(baselines.len() + 1);
    for (i, baseline) in baselines.iter().enumerate() {
        let name = baseline.name();
        let started = emit(Msg::Comparing {
            snapshot: i + 1,
            of: baselines.len() + 1,
            name: name.clone(),
        });
        if !started || progress.is_cancelled() {
            return None;
        }
        let run = heaptui_core::cache::run(
            baseline,
            options,
            cache,
            progress,
            &mut |_| !progress.is_cancelled(),
            note.clone(),
        );
        match run {
            Ok((a, pending)) => {
                let newest = &analysis.graph.dump;
                let (file, format) = (&a.graph.dump.path, a.graph.dump.format);
                if let Err(e) = same_format(file, format, &newest.path, newest.format) {
                    emit(Msg::CompareFailed(e.to_string()));
                    return None;
                }
                summaries.push(SnapshotSummary::of(&a));
                drop(a);
                // The cache writer holds the analysis until it is written.
                pending.wait();
            }
            Err(AnalysisError::Input(e)) => {
                emit(Msg::CompareFailed(format!("{name}: {e}")));
                return None;
            }
            Err(AnalysisError::Cancelled) => return None,
        }
    }
    Some(summaries)
}

/// Turns the pipeline's stage results into messages for the UI, adding
/// what the UI would otherwise compute on its own thread.
#[derive(Default)]
struct Messages {
    /// The graph, kept from its stage for the later ones.
    graph: Option<Arc<HeapGraph>>,
}

impl Messages {
    fn of(&mut self, stage: StageResult) -> Msg {
        match stage {
            StageResult::Imported { ms, cached } => Msg::Parsed { ms, cached },
            StageResult::Graph { graph, ms } => {
                self.graph = Some(graph.clone());
                let totals = Totals::of(&graph);
                Msg::Graph { graph, ms, totals }
            }
            StageResult::Dominators {
                dom,
                types,
                roots,
                largest,
                summary,
                ms,
            } => {
                let top = match &self.graph {
                    Some(g) => group_children_unsorted(&g.dump, &dom, &[dom.super_root()])
                        .into_iter()
                        .map(Arc::new)
                        .collect(),
                    None => Vec::new(),
                };
                let stage = DominatorsStage {
                    dom,
                    types,
                    roots,
                    largest,
                    summary,
                    top,
                };
                Msg::Dominators { stage, ms }
            }
            StageResult::Duplicates { duplicates, ms } => Msg::Duplicates { duplicates, ms },
        }
    }
}

/// Starts [`analyse`] on the `heaptui-analysis` thread. A panic in any
/// stage is caught and sent as [`Msg::Panicked`], so the UI can say so and
/// exit 101 instead of showing progress that never moves.
pub fn spawn(
    input: Input,
    baselines: Vec<Input>,
    options: DuplicateOptions,
    cache: Option<CacheOptions>,
    progress: Arc<Progress>,
    tx: crossbeam_channel::Sender<Msg>,
) -> std::io::Result<()> {
    // Test hook (the `testing` feature only): panic once the graph is sent, as a
    // bug in a later stage would.
    let inject =
        cfg!(feature = "testing") && std::env::var_os("HEAPTUI_TEST_WORKER_PANIC").is_some();
    std::thread::Builder::new()
        .name("heaptui-analysis".into())
        .spawn(move || {
            let run = std::panic::AssertUnwindSafe(|| {
                let cache = cache.as_ref();
                analyse_series(&input, &baselines, &options, cache, &progress, &mut |m| {
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

/// Per row type of `w.by_type`, the freed object of that type that
/// retains most (one pass over the freed objects).
fn largest_freed(graph: &HeapGraph, dom: &DominatorTree, w: &WhatIf) -> Vec<ObjectIdx> {
    let mut row = vec![usize::MAX; graph.dump.type_names.len()];
    for (i, t) in w.by_type.iter().enumerate() {
        row[t.type_index.index()] = i;
    }
    let mut best: Vec<Option<ObjectIdx>> = vec![None; w.by_type.len()];
    for &o in &w.freed {
        let i = row[graph.dump.row_type(o).index()];
        if i == usize::MAX {
            continue;
        }
        let retained = |x: ObjectIdx| dom.retained_bytes(x.index());
        if best[i].is_none_or(|b| retained(o) > retained(b)) {
            best[i] = Some(o);
        }
    }
    best.into_iter().flatten().collect()
}

/// Every object of a type (one scan of the type column).
pub fn instances_of(graph: &HeapGraph, type_index: TypeIdx) -> Vec<ObjectIdx> {
    heaptui_core::model::with_types!(&graph.dump.types, |types| {
        types
            .iter()
            .enumerate()
            .filter(|&(_, &t)| t.ty() == type_index)
            .map(|(o, _)| ObjectIdx::from_usize(o))
            .collect()
    })
}

/// Runs a [`Job::MergedPaths`]: `None` when cancelled.
fn paths_job(
    target: PathsTarget,
    skip: bool,
    sources: Option<BaselineSources>,
    graph: &HeapGraph,
    dom: &DominatorTree,
    progress: &Progress,
) -> Option<Msg> {
    use heaptui_core::analysis::{default_excludes, merged_paths};
    let skipped: Vec<String> = if skip {
        default_excludes(graph.dump.format)
            .iter()
            .map(|s| s.to_string())
            .collect()
    } else {
        Vec::new()
    };
    let globs: Vec<Glob> = skipped.iter().map(|s| Glob::new(s)).collect();
    let paths = match &target {
        PathsTarget::Type(t) => {
            let set = instances_of(graph, *t);
            merged_paths(graph, dom, &set, &globs, progress)
        }
        PathsTarget::Objects { objects, .. } => merged_paths(graph, dom, objects, &globs, progress),
    }
    .ok()?;
    let baselines = match (&target, sources) {
        (PathsTarget::Type(t), Some(s)) => {
            let name = graph.dump.name_of_type(*t);
            let figures = baseline_paths(&s, name, &globs, progress).ok()?;
            Some(PathsBaselines {
                figures,
                ids: path_ids(&paths, &graph.dump),
            })
        }
        _ => None,
    };
    Some(Msg::MergedPaths(Arc::new(PathsResult {
        target,
        skip,
        skipped,
        paths,
        baselines,
    })))
}

/// Each baseline's merged paths of the type named `name` (none where it
/// has no such type), oldest first: every baseline read again through the
/// reopen cache, one at a time, and dropped once its figures are taken (as
/// `report --paths --baseline` does). `Err` when cancelled; a baseline
/// that cannot be read counts as one without the type.
fn baseline_paths(
    sources: &BaselineSources,
    name: &str,
    skip: &[Glob],
    progress: &Progress,
) -> Result<Vec<PathFigures>, heaptui_core::progress::Cancelled> {
    use heaptui_core::analysis::merged_paths;
    let (inputs, options, cache) = &*sources.0;
    let mut out = Vec::with_capacity(inputs.len());
    for input in inputs {
        let note: Note = Arc::new(|line| tracing::info!(target: "heaptui", "{line}"));
        let (a, pending) = match heaptui_core::cache::run(
            input,
            options,
            cache.as_ref(),
            progress,
            &mut |_| true,
            note,
        ) {
            Ok(x) => x,
            Err(AnalysisError::Cancelled) => return Err(heaptui_core::progress::Cancelled),
            Err(AnalysisError::Input(_)) => {
                out.push(PathFigures::default());
                continue;
            }
        };
        let dump = a.dump();
        let figures = match dump.type_names.iter().position(|n| &**n == name) {
            Some(t) => {
                let set = instances_of(&a.graph, TypeIdx::from_usize(t));
                let m = merged_paths(&a.graph, &a.dom, &set, skip, progress)?;
                PathFigures::of(&m, dump)
            }
            None => PathFigures::default(),
        };
        drop(a);
        pending.wait();
        out.push(figures);
    }
    Ok(out)
}
