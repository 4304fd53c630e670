//! The program's own diagnostics, written to the file named by
//! `HEAPTUI_LOG`, never to the terminal, which the UI may own: the timings
//! of stages and their phases as `tracing` spans of target
//! `heaptui::profile` (each logged when it closes, with its busy time),
//! the duplicate detector's work, cache events. Without the variable
//! nothing is recorded and spans and events cost a disabled-callsite check.
//! `HEAPTUI_TRACE` (any value) adds `trace` level: the duplicate detector's
//! per-round figures and slow blocks, costlier to gather. Both variables
//! are read here, once, and nowhere else; the code asks
//! `tracing::enabled!` instead. (`HEAPTUI_STAGE_PEAKS`, which makes each
//! memory checkpoint's peak its own stage's, is `crate::mem`'s.)
//!
//! `HEAPTUI_LOG=/tmp/heaptui.log heaptui report big.txt`, then read the
//! file; `HEAPTUI_LOG=/dev/stderr` for a report in a terminal.
//! Imports nothing of the crate.

use std::fs::OpenOptions;
use std::sync::Mutex;

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
    tracing_subscriber::fmt()
        .with_writer(Mutex::new(file))
        .with_ansi(false)
        .with_max_level(level)
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
        .with_thread_names(true)
        .try_init()
        .is_ok()
}
