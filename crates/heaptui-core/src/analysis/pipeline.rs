//! The one staged pipeline: import → graph → dominators (+ type statistics,
//! root groups, weakly held, largest instances, the summary) → duplicates.
//! The only place that knows the order. Each stage's result is handed to an
//! observer as soon as it exists (the TUI opens panes as data arrives), the
//! run honours cancellation through [`Progress`], and the final value is an
//! [`Analysis`] (the report consumes it).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use super::memory::MemoryUse;
use super::roots::{largest_instances, root_groups, weakly_held, RootGroup};
use super::summary::Summary;
use super::{type_stats, Analysis, AnalysisError, Timings, TypeStats};
use crate::graph::duplicates::{find_duplicates, DuplicateOptions, Duplicates};
use crate::graph::{DominatorTree, HeapGraph};
use crate::import::{import_bytes, import_file_with, ImportError, ImportOptions};
use crate::mem::spill::Spill;
use crate::model::Model;
use crate::progress::{Cancelled, Progress, Stage};

/// What to analyse.
#[derive(Debug, Clone)]
pub enum Input {
    /// A dump file, read with the command line's import options.
    File(PathBuf, ImportOptions),
    /// A dump held in memory (the built-in demo), with the name to show.
    Bytes(&'static str, &'static [u8]),
}

impl Input {
    /// The file name to show for it.
    pub fn name(&self) -> String {
        match self {
            Input::File(p, _) => crate::model::text::printable_path(p),
            Input::Bytes(name, _) => name.to_string(),
        }
    }
}

/// A stage's result, handed to the observer the moment it exists. `ms` is
/// the stage's duration.
#[derive(Debug, Clone)]
pub enum StageResult {
    /// The dump was imported, or (`cached`) the whole analysis was read back
    /// from the reopen cache, the later stages following at once.
    Imported {
        /// How long it took, in milliseconds.
        ms: u64,
        /// Whether the analysis was read back from the reopen cache.
        cached: bool,
    },
    /// The heap graph was built.
    Graph {
        /// The dump with its reverse references and roots.
        graph: Arc<HeapGraph>,
        /// How long it took, in milliseconds.
        ms: u64,
    },
    /// The dominator tree and what is computed with it.
    Dominators {
        /// The dominator tree with retained sizes.
        dom: Arc<DominatorTree>,
        /// Per-type statistics.
        types: Arc<Vec<TypeStats>>,
        /// Root records grouped by kind and flags.
        roots: Arc<Vec<RootGroup>>,
        /// Per type, the reachable instance retaining most (`u32::MAX`: none).
        largest: Arc<Vec<u32>>,
        /// The overview's figures.
        summary: Arc<Summary>,
        /// How long it took, in milliseconds.
        ms: u64,
    },
    /// The duplicate sets were found.
    Duplicates {
        /// The duplicate instance sets.
        duplicates: Arc<Duplicates>,
        /// How long it took, in milliseconds.
        ms: u64,
    },
}

/// Runs every stage in order. `observe` sees each stage's result; when it
/// returns false (nobody listens any more) the run stops as cancelled.
pub fn run(
    input: &Input,
    options: &DuplicateOptions,
    progress: &Progress,
    observe: &mut dyn FnMut(StageResult) -> bool,
) -> Result<Analysis, AnalysisError> {
    let _busy = crate::mem::busy();
    let t = Instant::now();
    progress.start(Stage::Parse, 1);
    let mut dump = match input {
        Input::File(path, import) => import_file_with(path, import, progress)?,
        Input::Bytes(name, bytes) => {
            import_bytes(Path::new(name), bytes).map_err(ImportError::Input)?
        }
    };
    let parse_ms = ms(t);
    // Nothing in the analysis looks objects up by id: the index (about 7
    // bytes an object) is rebuilt from the ids at the first look-up, if
    // any, instead of being held through the analysis's peak.
    dump.id_index = crate::model::IdIndex::lazy();
    // The importers' per-thread transients, freed but kept by the allocator.
    crate::mem::release_free_memory();
    super::memory::checkpoint("import", &dump, None, None, None);
    tell(
        observe,
        StageResult::Imported {
            ms: parse_ms,
            cached: false,
        },
    )?;
    analyse(dump, parse_ms, options, progress, observe)
}

/// The stages after import, on a model already built.
pub fn analyse(
    dump: Model,
    parse_ms: u64,
    options: &DuplicateOptions,
    progress: &Progress,
    observe: &mut dyn FnMut(StageResult) -> bool,
) -> Result<Analysis, AnalysisError> {
    let _span = tracing::debug_span!(target: "heaptui::profile", "analysis").entered();
    let _busy = crate::mem::busy();
    let t = Instant::now();
    progress.start(Stage::Graph, 1);
    let (spill, mut memory) = plan_memory(&dump, progress);
    let graph = graph_stage(dump, spill.as_ref());
    let graph_ms = ms(t);
    tell(
        observe,
        StageResult::Graph {
            graph: graph.clone(),
            ms: graph_ms,
        },
    )?;
    progress.check()?;

    let t = Instant::now();
    let mut d = dominators_stage(&graph, spill.as_deref(), progress)?;
    let dominators_ms = ms(t);
    tell(
        observe,
        StageResult::Dominators {
            dom: d.dom.clone(),
            types: d.types.clone(),
            roots: d.roots.clone(),
            largest: d.largest.clone(),
            summary: d.summary.clone(),
            ms: dominators_ms,
        },
    )?;

    let t = Instant::now();
    let duplicates = Arc::new(duplicates_stage(&graph, &mut d.dom, options, progress)?);
    let duplicates_ms = ms(t);
    super::memory::checkpoint(
        "duplicates",
        &graph.dump,
        Some(&graph.retainers),
        Some(&d.dom),
        Some(&duplicates),
    );
    if let Some(s) = &spill {
        memory.spilled = spilled(s, progress);
    }
    progress.start(Stage::Done, 1);
    tell(
        observe,
        StageResult::Duplicates {
            duplicates: duplicates.clone(),
            ms: duplicates_ms,
        },
    )?;
    Ok(Analysis {
        graph,
        dom: d.dom,
        types: d.types,
        duplicates,
        roots: d.roots,
        largest: d.largest,
        summary: d.summary,
        memory,
        timings: Timings {
            parse_ms,
            graph_ms,
            dominators_ms,
            duplicates_ms,
            cached: false,
        },
    })
}

/// The bytes `spill` put on disk, after a note if it stopped early.
fn spilled(spill: &Spill, progress: &Progress) -> u64 {
    if let Some(why) = spill.failure() {
        progress.note(format!(
            "spilling stopped ({why}): the rest of the analysis stayed in memory"
        ));
    }
    spill.written()
}

/// The graph stage: the model's arrays to disk first where the heap is
/// over its budget (`spill`), then the retainers, built, too.
fn graph_stage(mut dump: Model, spill: Option<&Arc<Spill>>) -> Arc<HeapGraph> {
    if let Some(s) = spill {
        dump.spill(s);
        // The later stages' scratch goes there too.
        dump.spill = Some(s.clone());
    }
    let mut graph = tracing::debug_span!(target: "heaptui::profile", "graph")
        .in_scope(|| HeapGraph::build(dump));
    if let Some(s) = spill {
        graph.retainers.spill(s);
    }
    super::memory::checkpoint("graph", &graph.dump, Some(&graph.retainers), None, None);
    Arc::new(graph)
}

/// What the dominators stage hands on: the tree and what is read from it.
struct DominatorsStage {
    dom: Arc<DominatorTree>,
    types: Arc<Vec<TypeStats>>,
    roots: Arc<Vec<super::roots::RootGroup>>,
    largest: Arc<Vec<u32>>,
    summary: Arc<Summary>,
}

/// The dominators stage: the tree (to disk where over the budget), the
/// type statistics, the root groups, the largest instances and the
/// summary.
fn dominators_stage(
    graph: &HeapGraph,
    spill: Option<&Spill>,
    progress: &Progress,
) -> Result<DominatorsStage, AnalysisError> {
    let mut dom = DominatorTree::compute(graph, progress)?;
    if let Some(s) = spill {
        dom.spill(s);
    }
    let dom = Arc::new(dom);
    let types = tracing::debug_span!(target: "heaptui::profile", "type stats")
        .in_scope(|| Arc::new(type_stats(graph, &dom)));
    // Each of these passes reads spilled arrays of its own: what one read
    // leaves the resident set before the next (nothing where none spilled).
    let span = tracing::debug_span!(target: "heaptui::profile", "roots and summary").entered();
    crate::mem::spill::release_all();
    let roots = Arc::new(root_groups(graph, &dom));
    let largest = Arc::new(largest_instances(graph, &dom));
    crate::mem::spill::release_all();
    let weakly = weakly_held(graph, &dom);
    crate::mem::spill::release_all();
    let summary = Arc::new(Summary::new(graph, &dom, &types, weakly));
    span.exit();
    super::memory::checkpoint(
        "dominators",
        &graph.dump,
        Some(&graph.retainers),
        Some(&dom),
        None,
    );
    Ok(DominatorsStage {
        dom,
        types,
        roots,
        largest,
        summary,
    })
}

/// The duplicates stage. Where no observer kept the tree (the report),
/// its idom and preorder numbers are set aside while the candidates are
/// found and verified, the whole analysis's highest point, and made again
/// before the held duplicates need them (8 bytes an object less there).
/// Where a view shares it (the terminal UI shows the tree meanwhile), the
/// tree is read as it is.
fn duplicates_stage(
    graph: &HeapGraph,
    dom: &mut Arc<DominatorTree>,
    options: &DuplicateOptions,
    progress: &Progress,
) -> Result<Duplicates, Cancelled> {
    match Arc::get_mut(dom) {
        Some(alone) => find_duplicates(graph, alone, options, progress),
        None => find_duplicates(graph, &**dom, options, progress),
    }
}

/// The process's memory budget against the heap's estimated peak: a
/// spill context when the heap is over it (and a note saying so), none
/// when it fits or when the spill directory cannot take the arrays (a
/// note then says the analysis goes on in memory). The import's spill,
/// where it made one (`import::budget`), is the analysis's: its arrays are
/// on disk already.
fn plan_memory(dump: &Model, progress: &Progress) -> (Option<Arc<Spill>>, MemoryUse) {
    let budget = crate::mem::budget::get();
    let estimate = super::memory::estimate_peak(dump);
    let memory = MemoryUse {
        budget,
        estimate,
        spilled: 0,
    };
    if budget.fits(estimate) {
        return (dump.spill.clone(), memory);
    }
    let size = |b: u64| humansize::format_size(b, humansize::BINARY);
    let over = format!(
        "the heap needs about {} at its peak, more than the memory budget {}",
        size(estimate),
        budget.describe()
    );
    if let Some(s) = &dump.spill {
        let shown = crate::model::text::printable_path(&crate::mem::spill::dir());
        progress.note(format!("{over}: spilling to {shown}"));
        return (Some(s.clone()), memory);
    }
    let phrases = ("spilling to", "and cannot spill to", "going on in memory");
    let spill = crate::import::budget::open_spill(&over, estimate, progress, phrases);
    (spill, memory)
}

fn ms(t: Instant) -> u64 {
    t.elapsed().as_millis() as u64
}

fn tell(
    observe: &mut dyn FnMut(StageResult) -> bool,
    result: StageResult,
) -> Result<(), AnalysisError> {
    if observe(result) {
        Ok(())
    } else {
        Err(AnalysisError::Cancelled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &[u8] = b"t 1 A\nt 2 B\no 1 1 10 2\no 2 2 20\no 3 2 5\nr 1 1 0\nr 3 1 2\n";

    fn stage_name(r: &StageResult) -> &'static str {
        match r {
            StageResult::Imported { .. } => "imported",
            StageResult::Graph { .. } => "graph",
            StageResult::Dominators { .. } => "dominators",
            StageResult::Duplicates { .. } => "duplicates",
        }
    }

    #[test]
    fn stages_arrive_in_order_and_make_the_analysis() {
        let mut seen = Vec::new();
        let a = run(
            &Input::Bytes("t.txt", TEXT),
            &DuplicateOptions::default(),
            &Progress::new(),
            &mut |r| {
                seen.push(stage_name(&r));
                true
            },
        )
        .unwrap();
        assert_eq!(seen, ["imported", "graph", "dominators", "duplicates"]);
        let s = &a.summary;
        assert_eq!((s.objects, s.references, s.types), (3, 1, 2));
        assert_eq!((s.reachable_objects, s.reachable_bytes), (2, 0x30));
        assert_eq!((s.unreachable_objects, s.unreachable_bytes), (1, 5));
        assert_eq!((s.weakly_held_objects, s.weakly_held_bytes), (1, 5));
        assert_eq!((s.root_records, s.strong_root_records), (2, 1));
        assert_eq!((s.rooted_objects, s.strongly_rooted_objects), (2, 1));
        assert_eq!(s.roots_by_kind.len(), 2);
    }

    #[test]
    fn an_observer_that_hangs_up_cancels_the_run() {
        let mut calls = 0;
        let r = run(
            &Input::Bytes("t.txt", TEXT),
            &DuplicateOptions::default(),
            &Progress::new(),
            &mut |r| {
                calls += 1;
                !matches!(r, StageResult::Graph { .. })
            },
        );
        assert!(matches!(r, Err(AnalysisError::Cancelled)));
        assert_eq!(calls, 2);
    }
}
