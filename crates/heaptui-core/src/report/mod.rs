//! The headless report (docs/json.md): a text report a person reads and the JSON
//! contract scripts read. Both are views over one [`Analysis`].

mod compare_json;
mod compare_text;
mod json;
mod object;
mod text;

pub use crate::text::{count, counted, size};
pub use compare_json::{suspect_value, write_comparison};
pub use compare_text::{parse_size, signed_size};
pub use json::write_json;
pub use object::{object_value, write_object_json, write_object_text};
pub use text::write_text;

use std::sync::Arc;

use crate::analysis::compare::Comparison;
use crate::analysis::Glob;

/// What to include beyond the summary.
#[derive(Debug, Clone)]
pub struct ReportOptions {
    /// Top dominators (and changed dominator paths) to list; 0 = all.
    pub top: usize,
    /// An explicit `--top`: the rows of every other list too (types,
    /// duplicate sets; 0 = all). `None`: the text report shows its short
    /// lists ([`text`]'s 20 rows), JSON every row.
    pub rows: Option<usize>,
    /// Every object with idom and retained sizes.
    pub objects: bool,
    /// Group the objects of matching types by immediate dominator, skipping
    /// dominators whose type matches the second pattern.
    pub immediate_dominators: Option<(Glob, Option<Glob>)>,
    /// Snapshots compared with this one (docs/analyses.md): adds the `comparison`
    /// key and growth suspects.
    pub comparison: Option<Arc<Comparison>>,
    /// `--object ID`: print this object (its fields and values) instead
    /// of the report.
    pub object: Option<u64>,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            top: 50,
            rows: None,
            objects: false,
            immediate_dominators: None,
            comparison: None,
            object: None,
        }
    }
}

impl ReportOptions {
    fn top_n(&self, len: usize) -> usize {
        if self.top == 0 {
            len
        } else {
            self.top.min(len)
        }
    }

    /// Rows shown of a list of `len` other than the dominators: `default`
    /// unless `--top` was given (0 = all).
    fn rows_n(&self, len: usize, default: usize) -> usize {
        match self.rows {
            Some(0) => len,
            Some(n) => n.min(len),
            None => default.min(len),
        }
    }
}
