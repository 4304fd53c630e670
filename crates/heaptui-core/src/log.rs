//! The program's own diagnostics (stage timings, the duplicate detector's
//! phases, cache events): `tracing` events written to the file named by
//! `HEAPTUI_LOG`, never to the terminal, which the UI may own. Without the
//! variable nothing is recorded and events cost a disabled-callsite check.
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
    tracing_subscriber::fmt()
        .with_writer(Mutex::new(file))
        .with_ansi(false)
        .with_max_level(tracing::Level::DEBUG)
        .with_thread_names(true)
        .try_init()
        .is_ok()
}
