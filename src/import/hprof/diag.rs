//! Diagnostics gathered while reading: counts per category plus the first
//! messages, each tagged with its file offset so the final list reads in
//! file order (`offset 0x1234: why`) whatever thread found it.

use crate::model::{Diagnostics, MAX_MESSAGES};

/// What a diagnostic counts as (the categories of [`Diagnostics`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Cat {
    /// A record or sub-record that could not be used (truncated, unknown
    /// tag, wrong length): counted in `skipped_lines`.
    Skipped,
    Dangling,
    Undefined,
    Duplicate,
    MissingRoot,
}

/// Counts and the first messages of one part of the work.
#[derive(Debug, Default)]
pub(super) struct Issues {
    pub counts: [u64; 5],
    /// (file offset, text), at most [`MAX_MESSAGES`] per category.
    pub messages: Vec<(u64, String)>,
    kept: [usize; 5],
}

impl Issues {
    /// Counts one issue; `why` is only formatted while messages are kept.
    pub fn push(&mut self, cat: Cat, offset: u64, why: impl FnOnce() -> String) {
        self.add(cat, offset, 1, why);
    }

    /// Counts `n` issues under one message.
    pub fn add(&mut self, cat: Cat, offset: u64, n: u64, why: impl FnOnce() -> String) {
        let c = cat as usize;
        self.counts[c] += n;
        if self.kept[c] < MAX_MESSAGES {
            self.kept[c] += 1;
            self.messages.push((offset, why()));
        }
    }

    pub fn merge(&mut self, other: Issues) {
        for c in 0..5 {
            self.counts[c] += other.counts[c];
            self.kept[c] += other.kept[c];
        }
        self.messages.extend(other.messages);
    }

    /// The model's diagnostics: messages sorted by offset, the first
    /// [`MAX_MESSAGES`] kept.
    pub fn finish(mut self) -> Diagnostics {
        self.messages.sort_by_key(|m| m.0);
        self.messages.truncate(MAX_MESSAGES);
        Diagnostics {
            skipped_lines: self.counts[Cat::Skipped as usize],
            dangling_references: self.counts[Cat::Dangling as usize],
            undefined_types: self.counts[Cat::Undefined as usize],
            duplicate_objects: self.counts[Cat::Duplicate as usize],
            missing_root_objects: self.counts[Cat::MissingRoot as usize],
            clamped_roots: 0,
            messages: self
                .messages
                .into_iter()
                .map(|(o, m)| format!("offset 0x{o:x}: {m}"))
                .collect(),
        }
    }
}
