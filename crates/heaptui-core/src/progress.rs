//! Progress and cancellation shared between analysis workers and their
//! observers (the TUI's progress line, the report's timings). Plain atomics:
//! workers never block on the observer.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};

/// The analysis stages, in the order they run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    Parse = 0,
    Graph = 1,
    Dominators = 2,
    Duplicates = 3,
    Done = 4,
}

impl Stage {
    pub const ALL: [Stage; 4] = [
        Stage::Parse,
        Stage::Graph,
        Stage::Dominators,
        Stage::Duplicates,
    ];

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
}

impl Progress {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn start(&self, stage: Stage, total: u64) {
        self.done.store(0, Ordering::Relaxed);
        self.total.store(total, Ordering::Relaxed);
        self.stage.store(stage as u8, Ordering::Release);
    }

    pub fn advance(&self, units: u64) {
        self.done.fetch_add(units, Ordering::Relaxed);
    }

    pub fn set_done(&self, units: u64) {
        self.done.store(units, Ordering::Relaxed);
    }

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

    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
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

/// Sub-stage timings, logged (see `crate::log`) as `debug` events of
/// target `heaptui::profile`: a developer's aid for profiling big heaps.
pub struct Laps {
    last: std::time::Instant,
    scope: &'static str,
}

impl Laps {
    pub fn new(scope: &'static str) -> Laps {
        Laps {
            last: std::time::Instant::now(),
            scope,
        }
    }

    pub fn lap(&mut self, what: &str) {
        let now = std::time::Instant::now();
        tracing::debug!(
            target: "heaptui::profile",
            "{}/{what}: {} ms",
            self.scope,
            (now - self.last).as_millis()
        );
        self.last = now;
    }
}
