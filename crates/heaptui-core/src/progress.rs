//! Progress and cancellation shared between analysis workers and their
//! observers (the TUI's progress line, the report's timings). Plain atomics:
//! workers never block on the observer.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Mutex, OnceLock};

/// The analysis stages, in the order they run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    /// Reading the dump into a model.
    Parse = 0,
    /// Building the reference graph and its retainers.
    Graph = 1,
    /// Dominators and retained sizes.
    Dominators = 2,
    /// Duplicate instance sets.
    Duplicates = 3,
    /// Every stage done.
    Done = 4,
}

impl Stage {
    /// The stages that do work, in order (all but `Done`).
    pub const ALL: [Stage; 4] = [
        Stage::Parse,
        Stage::Graph,
        Stage::Dominators,
        Stage::Duplicates,
    ];

    /// The stage's lower-case name, as progress lines and logs show it.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Parse => "parse",
            Stage::Graph => "graph",
            Stage::Dominators => "dominators",
            Stage::Duplicates => "duplicates",
            Stage::Done => "done",
        }
    }

    fn from_u8(v: u8) -> Stage {
        match v {
            0 => Stage::Parse,
            1 => Stage::Graph,
            2 => Stage::Dominators,
            3 => Stage::Duplicates,
            _ => Stage::Done,
        }
    }
}

/// Raised when the work was cancelled through [`Progress::cancel`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cancelled;

impl std::fmt::Display for Cancelled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("cancelled")
    }
}

impl std::error::Error for Cancelled {}

/// Shared progress of one analysis: current stage, units done of a total,
/// and a cancel flag polled by the workers between units of work.
#[derive(Debug, Default)]
pub struct Progress {
    stage: AtomicU8,
    done: AtomicU64,
    total: AtomicU64,
    cancelled: AtomicBool,
    spilling: AtomicBool,
    notes: Notes,
}

/// What hears an analysis's notes.
type Listener = Box<dyn Fn(&str) + Send + Sync>;

/// A listener of an analysis's notes, and the last note.
#[derive(Default)]
struct Notes {
    last: Mutex<Option<String>>,
    listener: OnceLock<Listener>,
}

impl std::fmt::Debug for Notes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Notes")
            .field("last", &self.last)
            .finish_non_exhaustive()
    }
}

impl Progress {
    /// No stage started, nothing done, not cancelled.
    pub fn new() -> Self {
        Self::default()
    }

    /// Enters `stage`, with `total` units of work ahead.
    pub fn start(&self, stage: Stage, total: u64) {
        self.done.store(0, Ordering::Relaxed);
        self.total.store(total, Ordering::Relaxed);
        self.stage.store(stage as u8, Ordering::Release);
    }

    /// Adds `units` of work done to the current stage.
    pub fn advance(&self, units: u64) {
        self.done.fetch_add(units, Ordering::Relaxed);
    }

    /// Sets the units of work done in the current stage.
    pub fn set_done(&self, units: u64) {
        self.done.store(units, Ordering::Relaxed);
    }

    /// The stage running now.
    pub fn stage(&self) -> Stage {
        Stage::from_u8(self.stage.load(Ordering::Acquire))
    }

    /// Fraction of the current stage done, in `0.0..=1.0`.
    pub fn fraction(&self) -> f64 {
        let total = self.total.load(Ordering::Relaxed);
        if total == 0 {
            return 0.0;
        }
        (self.done.load(Ordering::Relaxed) as f64 / total as f64).min(1.0)
    }

    /// Asks the running stages to stop at their next check.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }

    /// Whether [`Progress::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }

    /// Passes every later note to `listener` as well (the report prints
    /// them on standard error); the first listener set stays.
    pub fn on_note(&self, listener: impl Fn(&str) + Send + Sync + 'static) {
        let _ = self.notes.listener.set(Box::new(listener));
    }

    /// A line about how the analysis goes on (a heap over the memory
    /// budget spilling to disk), for the progress line and the listener.
    pub fn note(&self, line: String) {
        if let Some(listen) = self.notes.listener.get() {
            listen(&line);
        }
        if let Ok(mut last) = self.notes.last.lock() {
            *last = Some(line);
        }
    }

    /// Marks the analysis as over its memory budget, its big arrays
    /// going to disk (the progress line says so).
    pub fn set_spilling(&self) {
        self.spilling.store(true, Ordering::Relaxed);
    }

    /// Whether [`Progress::set_spilling`] was called.
    pub fn is_spilling(&self) -> bool {
        self.spilling.load(Ordering::Relaxed)
    }

    /// The last note, if any.
    pub fn last_note(&self) -> Option<String> {
        self.notes.last.lock().ok().and_then(|l| l.clone())
    }

    /// `Err(Cancelled)` once [`Progress::cancel`] was called.
    pub fn check(&self) -> Result<(), Cancelled> {
        if self.is_cancelled() {
            Err(Cancelled)
        } else {
            Ok(())
        }
    }
}
