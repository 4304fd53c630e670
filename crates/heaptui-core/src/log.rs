//! The program's own diagnostics, written to the file named by
//! `HEAPTUI_LOG`, never to the terminal, which the UI may own: the timings
//! of stages and their phases as `tracing` spans of target
//! `heaptui::profile` (each logged when it closes, with its busy time),
//! the duplicate detector's work, cache events. Without the variable
//! nothing is recorded and spans and events cost a disabled-callsite check.
//! `HEAPTUI_TRACE` (any value) adds `trace` level: the duplicate detector's
//! per-round figures and slow blocks, costlier to gather.
//! `HEAPTUI_STAGE_PEAKS` (any value, with the log on) makes each memory
//! checkpoint's peak that of its own stage: the kernel's high-water mark is
//! reset after each line is logged (`/proc/self/clear_refs`), so a stage
//! that peaks below an earlier one shows its own peak; the process's peak
//! that `time` reports is then that of the last stage, not the run's. The
//! variables are read here, once, and nowhere else; the code asks
//! `tracing::enabled!` and [`stage_peaks`] instead.
//!
//! `HEAPTUI_LOG=/tmp/heaptui.log heaptui report big.txt`, then read the
//! file; `HEAPTUI_LOG=/dev/stderr` for a report in a terminal.
//! Imports nothing of the crate.

use std::fs::OpenOptions;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Mutex;

/// Whether `HEAPTUI_STAGE_PEAKS` was set with the log on.
static STAGE_PEAKS: AtomicBool = AtomicBool::new(false);

/// Whether each memory checkpoint resets the peak after logging it (see the
/// module doc).
pub fn stage_peaks() -> bool {
    STAGE_PEAKS.load(Relaxed)
}

/// Installs the file writer when `HEAPTUI_LOG` names a file; returns
/// whether logging is on. An unwritable path is reported once on stderr
/// (before any UI starts) and logging stays off.
pub fn init() -> bool {
    let Some(path) = std::env::var_os("HEAPTUI_LOG").filter(|p| !p.is_empty()) else {
        return false;
    };
    let file = match OpenOptions::new().create(true).append(true).open(&path) {
        Ok(f) => f,
        Err(e) => {
            eprintln!(
                "heaptui: HEAPTUI_LOG={}: {e}; not logging",
                std::path::Path::new(&path).display()
            );
            return false;
        }
    };
    let level = match std::env::var_os("HEAPTUI_TRACE") {
        Some(_) => tracing::Level::TRACE,
        None => tracing::Level::DEBUG,
    };
    let on = tracing_subscriber::fmt()
        .with_writer(Mutex::new(file))
        .with_ansi(false)
        .with_max_level(level)
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
        .with_thread_names(true)
        .try_init()
        .is_ok();
    STAGE_PEAKS.store(
        on && std::env::var_os("HEAPTUI_STAGE_PEAKS").is_some(),
        Relaxed,
    );
    on
}
