//! The terminal UI.

use std::path::PathBuf;

use crate::graph::duplicates::DuplicateOptions;

/// What the UI was asked to open.
#[derive(Debug, Clone)]
pub struct Options {
    pub dump: Option<PathBuf>,
    pub demo: bool,
    pub ascii: bool,
    pub duplicates: DuplicateOptions,
}

/// Runs the UI until the user quits; returns the exit code.
pub fn run(_options: Options) -> color_eyre::Result<u8> {
    Err(color_eyre::eyre::eyre!(
        "the terminal UI is not built yet; use `heaptui report`"
    ))
}
