//! Counts of what the importer could not use, and the first messages, kept
//! per chunk and merged in file order. Shared with the gcdump importer.

use crate::model::{Diagnostics, MAX_MESSAGES};

#[derive(Debug, Default)]
pub struct Diag {
    /// Records (or header claims) that could not be used.
    pub skipped: u64,
    /// Edges whose `to_node` names no node.
    pub dangling: u64,
    /// Nodes whose type or name could not be resolved.
    pub undefined_types: u64,
    messages: Vec<String>,
}

impl Diag {
    pub fn note(&mut self, message: impl FnOnce() -> String) {
        if self.messages.len() < MAX_MESSAGES {
            self.messages.push(message());
        }
    }

    pub fn skip(&mut self, message: impl FnOnce() -> String) {
        self.skipped += 1;
        self.note(message);
    }

    pub fn merge(&mut self, other: Diag) {
        self.skipped += other.skipped;
        self.dangling += other.dangling;
        self.undefined_types += other.undefined_types;
        let room = MAX_MESSAGES - self.messages.len();
        self.messages.extend(other.messages.into_iter().take(room));
    }

    pub fn into_diagnostics(self, duplicate_objects: u64) -> Diagnostics {
        Diagnostics {
            skipped_lines: self.skipped,
            dangling_references: self.dangling,
            undefined_types: self.undefined_types,
            duplicate_objects,
            missing_root_objects: 0,
            clamped_roots: 0,
            messages: self.messages,
        }
    }
}
