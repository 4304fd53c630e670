//! How far the analysis got: one [`Reached`] enum whose every variant holds
//! the results of the stages before it, plus the finished stages' times.
//! Owns the arrival of the worker's stage messages ([`Msg`]); imports no
//! pane and no `app` (panes read it through their context).

use std::sync::Arc;

use super::compared::Compared;
pub use super::msg::Totals;
use super::msg::{BaselineSources, DominatorsStage, Msg};
use heaptui_core::analysis::RootGroup;
use heaptui_core::analysis::Summary;
use heaptui_core::analysis::Suspect;
use heaptui_core::analysis::TypeStats;
use heaptui_core::graph::duplicates::Duplicates;
use heaptui_core::graph::{DominatorTree, HeapGraph};
use heaptui_core::model::{ObjectIdx, TypeIdx};

/// The results of the dominators stage, as the worker sent them
/// ([`DominatorsStage`], reached through `Deref`), with the type index's
/// position among them.
#[derive(Debug, Clone)]
pub struct Dominated {
    stage: DominatorsStage,
    /// Type index → position in `types`.
    type_pos: Vec<u32>,
}

impl std::ops::Deref for Dominated {
    type Target = DominatorsStage;

    fn deref(&self) -> &DominatorsStage {
        &self.stage
    }
}

/// Why the analysis stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The dump cannot be used (exit status 2, as `report`).
    Input(String),
    /// A background stage panicked (exit status 101, as Rust's).
    Panic(String),
}

impl Failure {
    /// The failure's message.
    pub fn message(&self) -> &str {
        match self {
            Failure::Input(m) | Failure::Panic(m) => m,
        }
    }
}

/// How far the analysis has reached, as the UI sees it: the results that
/// have arrived (the stages themselves are `progress::Stage`).
#[derive(Debug, Clone, Default)]
pub enum Reached {
    /// The dump is being read.
    #[default]
    Parsing,
    /// The dump is read; the graph is being built.
    Parsed,
    /// The graph is built; the dominators are being computed.
    Graph(Arc<HeapGraph>),
    /// The dominators are known; duplicates are being detected.
    Dominators(Arc<HeapGraph>, Arc<Dominated>),
    /// Every stage finished.
    Ready(Arc<HeapGraph>, Arc<Dominated>, Arc<Duplicates>),
    /// Stopped: what had arrived before, and why.
    Failed(Box<Reached>, Failure),
}

/// What a stage message changed, for the app to tell the panes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrived {
    /// Nothing the panes need to know of.
    Nothing,
    /// The heap graph.
    Graph,
    /// The dominators stage's results.
    Dominators,
    /// The duplicate sets.
    Duplicates,
    /// The leak suspects (of the opened snapshot, or with the comparison).
    Suspects,
    /// The comparison with the baselines (and the suspects with it).
    Comparison,
    /// The analysis stopped ([`Loading::failure`]).
    Failure,
}

/// How far the comparison with older snapshots got (docs/ui.md "Comparison").
#[derive(Debug, Clone, Default)]
pub enum Comparing {
    /// No baselines: nothing to compare.
    #[default]
    Off,
    /// `n` baselines wait for the opened snapshot's analysis.
    Waiting(usize),
    /// Baseline `snapshot` of `of` snapshots (1-based, oldest first) is
    /// being analysed.
    Running {
        /// Which snapshot, 1-based.
        snapshot: usize,
        /// How many snapshots.
        of: usize,
        /// The baseline's name.
        name: String,
    },
    /// Every baseline is analysed: the comparison.
    Done(Arc<Compared>),
    /// A baseline could not be used (the opened snapshot stays usable).
    Failed(String),
}

/// The loading state: the stage reached and the finished stages' times.
#[derive(Debug, Clone, Default)]
pub struct Loading {
    stage: Reached,
    /// Milliseconds of each finished stage (parse, graph, dominators,
    /// duplicates), in order.
    ms: Vec<u64>,
    /// The analysis was read back from the reopen cache.
    cached: bool,
    comparing: Comparing,
    suspects: Option<Arc<Vec<Suspect>>>,
    /// The graph's sums, computed by the worker with it.
    totals: Option<Totals>,
    /// Comparing: where the older snapshots are read from again.
    baseline_sources: Option<BaselineSources>,
}

impl Loading {
    /// The stage reached (a failure holds what came before).
    pub fn stage(&self) -> &Reached {
        &self.stage
    }

    /// A loading state that expects a comparison with `baselines` older
    /// snapshots.
    pub fn with_baselines(baselines: usize) -> Loading {
        Loading {
            comparing: if baselines > 0 {
                Comparing::Waiting(baselines)
            } else {
                Comparing::Off
            },
            ..Loading::default()
        }
    }

    /// Where the older snapshots of a comparison are read from again (the
    /// merged paths of a type per snapshot), once set by whoever started
    /// the analysis.
    pub fn baseline_sources(&self) -> Option<&BaselineSources> {
        self.baseline_sources.as_ref()
    }

    /// Sets where the older snapshots are read from again.
    pub fn set_baseline_sources(&mut self, sources: BaselineSources) {
        self.baseline_sources = Some(sources);
    }

    /// How far the comparison got.
    pub fn comparing(&self) -> &Comparing {
        &self.comparing
    }

    /// The comparison, once every baseline is analysed.
    pub fn compared(&self) -> Option<&Arc<Compared>> {
        match &self.comparing {
            Comparing::Done(c) => Some(c),
            _ => None,
        }
    }

    /// Whether baselines are still being analysed (or wait to be).
    pub fn comparison_pending(&self) -> bool {
        matches!(
            self.comparing,
            Comparing::Waiting(_) | Comparing::Running { .. }
        ) && self.failure().is_none()
    }

    /// The leak suspects, once computed (with the growing rows once the
    /// comparison is done).
    pub fn suspects(&self) -> Option<&Arc<Vec<Suspect>>> {
        self.suspects.as_ref()
    }

    /// The stage reached, looking through a failure.
    fn reached(&self) -> &Reached {
        match &self.stage {
            Reached::Failed(before, _) => before,
            s => s,
        }
    }

    /// The graph's sums (bytes, roots by kind), once the graph is here.
    pub fn graph_totals(&self) -> Option<&Totals> {
        self.totals.as_ref()
    }

    /// The heap graph, once built (also after a later failure).
    pub fn graph(&self) -> Option<&Arc<HeapGraph>> {
        match self.reached() {
            Reached::Graph(g) | Reached::Dominators(g, _) | Reached::Ready(g, _, _) => Some(g),
            _ => None,
        }
    }

    /// The dominators stage's results, once they arrived.
    pub fn dominated(&self) -> Option<&Arc<Dominated>> {
        match self.reached() {
            Reached::Dominators(_, d) | Reached::Ready(_, d, _) => Some(d),
            _ => None,
        }
    }

    /// The dominator tree, once computed.
    pub fn dom(&self) -> Option<&Arc<DominatorTree>> {
        self.dominated().map(|d| &d.dom)
    }

    /// The report's summary figures (once the dominators are known).
    pub fn summary(&self) -> Option<&Summary> {
        self.dominated().map(|d| d.summary.as_ref())
    }

    /// Every type's statistics, once the dominators are known.
    pub fn types(&self) -> Option<&Arc<Vec<TypeStats>>> {
        self.dominated().map(|d| &d.types)
    }

    /// The root groups, once the dominators are known.
    pub fn roots(&self) -> Option<&Arc<Vec<RootGroup>>> {
        self.dominated().map(|d| &d.roots)
    }

    /// The duplicate sets, once detected.
    pub fn duplicates(&self) -> Option<&Arc<Duplicates>> {
        match self.reached() {
            Reached::Ready(_, _, d) => Some(d),
            _ => None,
        }
    }

    /// Why the analysis stopped, if it did.
    pub fn failure(&self) -> Option<&Failure> {
        match &self.stage {
            Reached::Failed(_, f) => Some(f),
            _ => None,
        }
    }

    /// The message of a failure, if the analysis stopped.
    pub fn error(&self) -> Option<&str> {
        self.failure().map(Failure::message)
    }

    /// A type's statistics, once the dominators are known.
    pub fn type_stats(&self, type_index: TypeIdx) -> Option<&TypeStats> {
        let d = self.dominated()?;
        let pos = *d.type_pos.get(type_index.index())?;
        d.types.get(pos as usize)
    }

    /// The reachable instance of a type that retains most (precomputed).
    pub fn largest_instance(&self, type_index: TypeIdx) -> Option<ObjectIdx> {
        let l = *self.dominated()?.largest.get(type_index.index())?;
        (l != u32::MAX).then_some(ObjectIdx(l))
    }

    /// The time of finished stage `i` (0 parse … 3 duplicates).
    pub fn stage_ms(&self, i: usize) -> Option<u64> {
        self.ms.get(i).copied()
    }

    /// Whether the analysis was read back from the reopen cache.
    pub fn from_cache(&self) -> bool {
        self.cached
    }

    /// How many stages finished (0 … 4).
    pub fn finished_stages(&self) -> usize {
        self.ms.len()
    }

    /// Every stage finished (the duplicates arrived).
    pub fn ready(&self) -> bool {
        self.ms.len() >= 4
    }

    /// Takes a stage message. Messages that are not stage results return
    /// `Err(msg)` for the caller to route.
    pub fn on_msg(&mut self, msg: Msg) -> Result<Arrived, Msg> {
        if let Reached::Failed(..) = self.stage {
            // Nothing arrives after a failure (a job may still answer).
            return Ok(Arrived::Nothing);
        }
        let msg = match self.on_comparison(msg) {
            Ok(arrived) => return Ok(arrived),
            Err(msg) => msg,
        };
        let stage = std::mem::take(&mut self.stage);
        let (stage, arrived) = self.advance(stage, msg);
        self.stage = stage;
        arrived
    }

    /// The suspects and the comparison's progress, which come beside the
    /// stages; any other message is handed back.
    fn on_comparison(&mut self, msg: Msg) -> Result<Arrived, Msg> {
        match msg {
            Msg::Suspects(s) => {
                self.suspects = Some(s);
                Ok(Arrived::Suspects)
            }
            Msg::Comparing { snapshot, of, name } => {
                self.comparing = Comparing::Running { snapshot, of, name };
                Ok(Arrived::Nothing)
            }
            Msg::Compared { compared, suspects } => {
                self.comparing = Comparing::Done(compared);
                self.suspects = Some(suspects);
                Ok(Arrived::Comparison)
            }
            Msg::CompareFailed(e) => {
                self.comparing = Comparing::Failed(e);
                Ok(Arrived::Nothing)
            }
            m => Err(m),
        }
    }

    /// The stage after `stage` once `msg` arrived, and what arrived; a
    /// message that is no stage's is handed back (the stage unchanged).
    fn advance(&mut self, stage: Reached, msg: Msg) -> (Reached, Result<Arrived, Msg>) {
        let (stage, arrived) = match (stage, msg) {
            (Reached::Parsing, Msg::Parsed { ms, cached }) => {
                self.ms.push(ms);
                self.cached = cached;
                (Reached::Parsed, Arrived::Nothing)
            }
            (Reached::Parsed, Msg::Graph { graph, ms, totals }) => {
                self.ms.push(ms);
                self.totals = Some(totals);
                (Reached::Graph(graph), Arrived::Graph)
            }
            (Reached::Graph(graph), Msg::Dominators { stage, ms }) => {
                self.ms.push(ms);
                let mut type_pos = vec![u32::MAX; graph.dump.type_names.len()];
                for (i, t) in stage.types.iter().enumerate() {
                    type_pos[t.type_index.index()] = i as u32;
                }
                let d = Dominated { stage, type_pos };
                (Reached::Dominators(graph, Arc::new(d)), Arrived::Dominators)
            }
            (Reached::Dominators(g, d), Msg::Duplicates { duplicates, ms }) => {
                self.ms.push(ms);
                (Reached::Ready(g, d, duplicates), Arrived::Duplicates)
            }
            // A later per-type detection replaces the result, not the time.
            (Reached::Ready(g, d, _), Msg::Duplicates { duplicates, .. }) => {
                (Reached::Ready(g, d, duplicates), Arrived::Duplicates)
            }
            (s, Msg::Failed(e)) => (
                Reached::Failed(Box::new(s), Failure::Input(e)),
                Arrived::Failure,
            ),
            (s, Msg::Panicked(e)) => (
                Reached::Failed(Box::new(s), Failure::Panic(e)),
                Arrived::Failure,
            ),
            (
                s,
                Msg::Parsed { .. }
                | Msg::Graph { .. }
                | Msg::Dominators { .. }
                | Msg::Duplicates { .. },
            ) => {
                // Out of order (a stage message without its predecessor):
                // dropped, as the model it refers to is not there.
                (s, Arrived::Nothing)
            }
            (s, other) => return (s, Err(other)),
        };
        (stage, Ok(arrived))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use heaptui_core::progress::Progress;

    fn demo_graph() -> Arc<HeapGraph> {
        let text = crate::DEMO_DUMP.as_bytes();
        let dump = heaptui_core::import::import_bytes(std::path::Path::new("demo"), text).unwrap();
        Arc::new(HeapGraph::build(dump))
    }

    #[test]
    fn stages_arrive_in_order_and_a_failure_keeps_what_arrived() {
        let mut l = Loading::default();
        assert!(matches!(l.stage(), Reached::Parsing));
        assert_eq!(
            l.on_msg(Msg::Parsed {
                ms: 3,
                cached: false
            })
            .unwrap(),
            Arrived::Nothing
        );
        let graph = demo_graph();
        let arrived = l.on_msg(Msg::Graph {
            totals: Totals::of(&graph),
            graph: graph.clone(),
            ms: 5,
        });
        assert_eq!(arrived.unwrap(), Arrived::Graph);
        assert!(l.graph().is_some() && l.dom().is_none());
        assert_eq!(
            (l.stage_ms(0), l.stage_ms(1), l.stage_ms(2)),
            (Some(3), Some(5), None)
        );
        assert!(!l.ready());

        let arrived = l.on_msg(Msg::Panicked("boom".into())).unwrap();
        assert_eq!(arrived, Arrived::Failure);
        assert_eq!(l.failure(), Some(&Failure::Panic("boom".into())));
        assert!(l.graph().is_some(), "what arrived before stays readable");
        // Nothing moves after a failure.
        let dom = DominatorTree::compute(&graph, &Progress::new()).unwrap();
        let summary = Summary::new(&graph, &dom, &[], (0, 0));
        let stage = DominatorsStage {
            dom: Arc::new(dom),
            types: Arc::new(Vec::new()),
            roots: Arc::new(Vec::new()),
            largest: Arc::new(Vec::new()),
            summary: Arc::new(summary),
            top: Vec::new(),
        };
        let late = Msg::Dominators { stage, ms: 1 };
        assert_eq!(l.on_msg(late).unwrap(), Arrived::Nothing);
        assert!(l.dom().is_none());
    }

    #[test]
    fn other_messages_are_handed_back() {
        let mut l = Loading::default();
        let msg = Msg::RetentionPath {
            object: ObjectIdx(1),
            path: None,
        };
        assert!(matches!(l.on_msg(msg), Err(Msg::RetentionPath { .. })));
        // A stage message out of order is dropped.
        let out_of_order = Msg::Duplicates {
            duplicates: Arc::new(Default::default()),
            ms: 1,
        };
        assert_eq!(l.on_msg(out_of_order).unwrap(), Arrived::Nothing);
        assert!(matches!(l.stage(), Reached::Parsing));
    }
}
