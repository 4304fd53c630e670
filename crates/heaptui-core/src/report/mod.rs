//! The headless report (docs/json.md): a text report a person reads and the JSON
//! contract scripts read. Both are views over one [`Analysis`](crate::Analysis).

mod compare_json;
mod compare_text;
mod json;
mod object;
mod paths;
mod text;

pub use crate::text::{count, counted, size};
pub use compare_json::{suspect_value, write_comparison};
pub use compare_text::{parse_size, signed_size};
pub use json::write_json;
pub use object::{object_value, write_object_json, write_object_text};
pub use paths::{paths_of_types, PathsAnswer};
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
    /// `--paths`: the merged paths to the roots of the objects of matching
    /// types, computed by the caller once the dump is analysed
    /// ([`PathsAnswer::of`]).
    pub paths: Option<Arc<PathsAnswer>>,
    /// Snapshots compared with this one (docs/analyses.md): adds the `comparison`
    /// key and growth suspects.
    pub comparison: Option<Arc<Comparison>>,
    /// `--object ID`: print this object (its fields and values) instead
    /// of the report.
    pub object: Option<u64>,
    /// `--owner-skip`: the exclude patterns duplicate owners are cut at;
    /// `None` for the format's defaults.
    pub owner_exclude: Option<Vec<Glob>>,
    /// `--what-if Type.field`: each cut with what it would free, computed
    /// by the caller once the dump is analysed.
    pub what_if: Vec<Arc<FieldWhatIf>>,
}

/// `--paths PATTERN [--skip PATTERN]` and what the baselines add.
#[derive(Debug, Clone)]
pub struct PathsQuery {
    /// The objects of the types it matches.
    pub pattern: Glob,
    /// Objects of the types it matches are left out of the paths.
    pub skip: Option<Glob>,
    /// With baselines: each older snapshot's merged paths for the same
    /// patterns, oldest first (the Δ column, `objects_by_snapshot`).
    pub baselines: Vec<crate::analysis::merged_paths::PathFigures>,
}

impl PathsQuery {
    /// A query without baselines.
    pub fn new(pattern: Glob, skip: Option<Glob>) -> PathsQuery {
        PathsQuery {
            pattern,
            skip,
            baselines: Vec::new(),
        }
    }
}

/// What dropping one field of every instance of a type would free.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldWhatIf {
    /// The type's name as given.
    pub type_name: String,
    /// The field.
    pub field: String,
    /// References the cut drops.
    pub references: u64,
    /// What it frees.
    pub result: crate::analysis::what_if::WhatIf,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            top: 50,
            rows: None,
            objects: false,
            immediate_dominators: None,
            paths: None,
            comparison: None,
            object: None,
            owner_exclude: None,
            what_if: Vec::new(),
        }
    }
}

impl ReportOptions {
    /// The duplicate owners of `a` with these options' exclude patterns.
    fn owners(&self, a: &crate::analysis::Analysis) -> crate::analysis::owners::Owners {
        let defaults;
        let exclude = match &self.owner_exclude {
            Some(g) => g.as_slice(),
            None => {
                defaults = crate::analysis::owners::default_owner_globs(a.dump().format);
                &defaults
            }
        };
        crate::analysis::owners::duplicate_owners(a.dump(), &a.dom, &a.duplicates, exclude)
    }

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
