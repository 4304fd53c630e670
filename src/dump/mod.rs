//! The dump file: reading it (memory map or copy), parsing its records in
//! parallel, resolving object and type ids, and accounting for every line it
//! could not use (SPEC §1). Produces a [`Dump`]: struct-of-arrays over dense
//! u32 object indices, references in CSR form.

mod idmap;
pub mod parse;
pub mod source;

use std::fmt;
use std::path::{Path, PathBuf};

pub use idmap::IdIndex;
pub use parse::{parse_bytes, parse_file};

use crate::graph::Csr;

/// At most this many diagnostic messages are kept (the counts are complete).
pub const MAX_MESSAGES: usize = 100;

/// Input that cannot be used at all: one line naming the file and the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    pub path: PathBuf,
    pub reason: String,
}

impl InputError {
    pub fn new(path: &Path, reason: impl Into<String>) -> Self {
        InputError {
            path: path.to_path_buf(),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.reason)
    }
}

impl std::error::Error for InputError {}

/// An `a … c` section. Index 0 of [`Dump::app_domains`] is the implicit
/// unnamed section that holds records outside any `a … c` pair.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AppDomain {
    pub version: String,
    pub name: String,
    pub stamp: Option<String>,
    /// Whether its `c` record was seen.
    pub closed: bool,
    pub objects: u64,
}

impl AppDomain {
    pub fn is_implicit(&self) -> bool {
        self.name.is_empty()
    }

    pub fn display_name(&self) -> &str {
        if self.is_implicit() {
            "(outside any AppDomain)"
        } else {
            &self.name
        }
    }
}

/// Root kinds of SPEC §1.
pub mod root_kind {
    pub const INTERNAL: u32 = 0;
    pub const LOCAL: u32 = 1;
    pub const FINALIZER: u32 = 2;
    pub const HANDLE: u32 = 3;
    pub const STATIC: u32 = 4;
    pub const RUNTIME: u32 = 5;

    /// The kind's name; unknown kinds are shown by number.
    pub fn name(kind: u32) -> String {
        match kind {
            INTERNAL => "internal".into(),
            LOCAL => "local variable".into(),
            FINALIZER => "finalizer queue".into(),
            HANDLE => "GC handle".into(),
            STATIC => "static variable".into(),
            RUNTIME => "runtime".into(),
            k => format!("kind {k:x}"),
        }
    }
}

/// Root flag bits of SPEC §1.
pub mod root_flags {
    pub const PINNED: u32 = 0x1;
    pub const WEAK: u32 = 0x2;
    pub const INTERIOR: u32 = 0x4;

    /// Flag names joined by `|`, unknown bits in hex; `-` when none.
    pub fn describe(flags: u32) -> String {
        let mut parts = Vec::new();
        if flags & PINNED != 0 {
            parts.push("pinned".to_string());
        }
        if flags & WEAK != 0 {
            parts.push("weak".to_string());
        }
        if flags & INTERIOR != 0 {
            parts.push("interior".to_string());
        }
        let unknown = flags & !(PINNED | WEAK | INTERIOR);
        if unknown != 0 {
            parts.push(format!("0x{unknown:x}"));
        }
        if parts.is_empty() {
            "-".into()
        } else {
            parts.join("|")
        }
    }
}

/// One `r` record whose object is in the dump.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Root {
    pub object: u32,
    pub kind: u32,
    pub flags: u32,
    /// The raw container element (the declaring type's id for statics).
    pub container: Option<u64>,
    /// The container resolved to a type, when it names one in the section.
    pub container_type: Option<u32>,
    pub app_domain: u32,
    /// 1-based line of the record.
    pub line: u64,
}

impl Root {
    pub fn is_strong(&self) -> bool {
        self.flags & root_flags::WEAK == 0
    }
}

/// What the parser did not use, by category, plus the first messages.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diagnostics {
    pub skipped_lines: u64,
    pub dangling_references: u64,
    pub undefined_types: u64,
    pub duplicate_objects: u64,
    pub missing_root_objects: u64,
    /// `line N: why`, ordered by line, at most [`MAX_MESSAGES`].
    pub messages: Vec<String>,
}

impl Diagnostics {
    pub fn total(&self) -> u64 {
        self.skipped_lines
            + self.dangling_references
            + self.undefined_types
            + self.duplicate_objects
            + self.missing_root_objects
    }
}

/// How many records of each kind the parser read, so every non-blank line
/// is accounted for: `o` + `t` + `r` + `a` + `c` records + skipped lines =
/// non-blank lines. `objects` and `roots` include the repeated objects and
/// the roots of missing objects (counted again in [`Diagnostics`]); `types`
/// excludes redefinitions (those are skipped lines).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecordCounts {
    pub objects: u64,
    pub types: u64,
    pub roots: u64,
    /// `a` and `c` records.
    pub sections: u64,
}

impl RecordCounts {
    pub fn total(&self) -> u64 {
        self.objects + self.types + self.roots + self.sections
    }
}

/// A parsed dump. Objects are in file order (first record of each id).
#[derive(Debug)]
pub struct Dump {
    pub path: PathBuf,
    pub file_bytes: u64,
    pub app_domains: Vec<AppDomain>,
    /// Type names, interned: two sections' types with one name share an index.
    pub type_names: Vec<Box<str>>,
    pub ids: Vec<u64>,
    pub types: Vec<u32>,
    pub sizes: Vec<u64>,
    /// Outgoing references in field order (dangling ones dropped).
    pub refs: Csr,
    pub roots: Vec<Root>,
    pub id_index: IdIndex,
    pub diagnostics: Diagnostics,
    pub records: RecordCounts,
}

impl Dump {
    pub fn objects(&self) -> usize {
        self.ids.len()
    }

    pub fn type_name(&self, object: u32) -> &str {
        &self.type_names[self.types[object as usize] as usize]
    }

    /// Dense index of an object id.
    pub fn index_of(&self, id: u64) -> Option<u32> {
        self.id_index.get(&self.ids, id)
    }

    pub fn total_bytes(&self) -> u64 {
        self.sizes.iter().sum()
    }

    /// The object id as the dump writes it: lowercase hex without `0x`.
    pub fn id_hex(&self, object: u32) -> String {
        format!("{:x}", self.ids[object as usize])
    }
}
