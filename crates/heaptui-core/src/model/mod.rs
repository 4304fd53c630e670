//! The heap every format maps onto (docs/formats.md, docs/analyses.md): types, objects with
//! shallow sizes and ordered references (CSR), roots with kinds and flags,
//! optional per-reference labels and per-object values, and what the importer
//! could not use. Struct-of-arrays over dense object indices.
//!
//! Owns the data only; imports nothing of the crate but the `mem` helpers.
//! Importers (`crate::import`) build a [`Model`]; `crate::graph` reads one.
//!
//! Objects and types are numbered densely, each in its own newtype
//! ([`ObjectIdx`], [`TypeIdx`]), and the APIs that pass an index between
//! layers use them (the model's accessors, `Root`, `HeapGraph`'s
//! adjacency and roots, the analysis results that name objects or types,
//! the TUI's selection, jobs and messages), so that one cannot stand for
//! the other. Raw `u32` stays, on purpose, in these places only:
//!
//! - [`Csr`]: a generic adjacency (its rows are the dominator tree's nodes
//!   as well, the super-root among them); [`Model::refs_of`] and
//!   `HeapGraph::refs` / `retainers_of` give its rows as objects.
//! - `graph::DominatorTree` and what walks it (`group_children`'s parents
//!   and members, the Dominators pane's tree, `accumulation_point`): its
//!   node space is the objects plus the super-root, with the `SUPER_ROOT`
//!   and `NOT_REACHABLE` sentinels in `idom`; a node is converted to an
//!   object where it is known to be one (`ObjectIdx(node)`), and
//!   `domination_path` returns objects.
//! - The duplicate detection (`graph::duplicates`: its sets' members and
//!   type, `HeapGraph::refs_raw`), [`IdIndex`] and the importers' internal
//!   arrays, which work on raw arrays; converted once at their boundary,
//!   by a slice cast (`ObjectIdx::cast_slice`, `TypeIdx::cast_vec`).
//! - Sentinel-carrying per-type tables (`largest`: `u32::MAX` for none)
//!   and the comparison's path tables, which mix in other snapshots' rows.
//! - Label positions (`Labels`), which index references, not objects.

mod csr;
mod diag;
mod fasthash;
mod fields;
mod idmap;
mod idruns;
mod ids;
mod idx;
mod label_codes;
mod labels;
mod packed;
mod referents;
mod rows;
mod sizes;
pub(crate) mod text;
mod types;

use std::path::PathBuf;

pub use crate::mem::Array;

/// Runs a body over the types as a slice of their width (see
/// [`ObjectTypes`]); defined in `model::types`, exported at the crate's
/// root as every `macro_export` is, and named here with the model.
pub use super::with_types;
use crate::mem::BitRow;
pub use csr::{Csr, Offsets};
pub(crate) use diag::{Collector, Kind, Place};
pub(crate) use fasthash::{FastMap, IntBuild};
pub use fields::{
    field_type, FieldDecl, FieldValue, FieldView, JavaClass, JavaClasses, ObjectFields, StaticField,
};
pub(crate) use idmap::count_repeats;
pub use idmap::{IdIndex, IdList, IdSpan, WideIdIndex};
pub use ids::Ids;
pub use idx::{ObjectIdx, TypeIdx};
pub use label_codes::{Code, Coded, CodedIter, LabelCodes, LabelRow, RowIter, Side};
use labels::LongRows;
pub use labels::{Label, Labels, ValueKind, Values, SHORT_ROW};
pub use packed::{BadRows, PackedRows, Row};
pub use referents::{Referent, Referents, Strength};
pub use rows::{RowTypes, CLASS_ROW_PREFIX};
pub use sizes::Sizes;
pub use text::{printable, printable_path};
pub use types::{ObjectTypes, TypeWord};

/// At most this many diagnostic messages are kept (the counts are complete).
pub const MAX_MESSAGES: usize = 100;

/// At most this many characters of an object's text in a line of the
/// report that names it (the UI's rows cut it to their width).
pub const ROW_PREVIEW_CHARS: usize = 60;

/// An `a … c` section. Index 0 of [`Model::app_domains`] is the implicit
/// unnamed section that holds records outside any `a … c` pair.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AppDomain {
    /// The section's runtime version, as its `a` record gives it.
    pub version: String,
    /// The AppDomain's name; empty for the implicit section.
    pub name: String,
    /// The `a` record's time stamp, if it has one.
    pub stamp: Option<String>,
    /// Whether its `c` record was seen.
    pub closed: bool,
    /// How many objects the section holds.
    pub objects: u64,
}

impl AppDomain {
    /// Whether this is the implicit section (records outside any `a … c` pair).
    pub fn is_implicit(&self) -> bool {
        self.name.is_empty()
    }

    /// The name to show: the AppDomain's, or `(outside any AppDomain)` for the implicit section.
    pub fn display_name(&self) -> &str {
        if self.is_implicit() {
            "(outside any AppDomain)"
        } else {
            &self.name
        }
    }
}

/// Root kinds of docs/formats.md.
pub mod root_kind {
    /// Held by the runtime itself (also every root of formats without kinds).
    pub const INTERNAL: u32 = 0;
    /// A local variable of a running method.
    pub const LOCAL: u32 = 1;
    /// An object waiting in the finalizer queue.
    pub const FINALIZER: u32 = 2;
    /// A GC handle (strong, pinned or weak, as the flags say).
    pub const HANDLE: u32 = 3;
    /// A static variable (the container names the declaring type).
    pub const STATIC: u32 = 4;
    /// Another root the runtime reports.
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

/// Root flag bits of docs/formats.md.
pub mod root_flags {
    /// The object may not be moved.
    pub const PINNED: u32 = 0x1;
    /// The root does not keep its object alive (see [`super::Root::is_strong`]).
    pub const WEAK: u32 = 0x2;
    /// The root points inside the object, not at its start.
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
    /// The rooted object.
    pub object: ObjectIdx,
    /// A [`root_kind`] value.
    pub kind: u32,
    /// [`root_flags`] bits.
    pub flags: u32,
    /// The raw container element (the declaring type's id for statics).
    pub container: Option<u64>,
    /// The container resolved to a type, when it names one in the section.
    pub container_type: Option<TypeIdx>,
    /// Index into [`Model::app_domains`] of the section the record lies in.
    pub app_domain: u32,
    /// 1-based line of the record.
    pub line: u64,
}

impl Root {
    /// A root of kind 0 (internal), no flags, in the implicit section, as
    /// formats without root kinds give them (V8's synthetic root's edges,
    /// gcdump's root node's children).
    pub fn plain(object: ObjectIdx) -> Root {
        Root {
            object,
            kind: root_kind::INTERNAL,
            flags: 0,
            container: None,
            container_type: None,
            app_domain: 0,
            line: 0,
        }
    }

    /// Whether the root keeps its object alive (it is not [`root_flags::WEAK`]).
    pub fn is_strong(&self) -> bool {
        self.flags & root_flags::WEAK == 0
    }
}

/// What the parser did not use, by category, plus the first messages.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diagnostics {
    /// Non-blank lines (or records) not used: malformed, unknown or out of place.
    pub skipped_lines: u64,
    /// References to ids that no object has (dropped).
    pub dangling_references: u64,
    /// Objects whose type id no type record defines.
    pub undefined_types: u64,
    /// Object records of an id seen before (the first one is kept).
    pub duplicate_objects: u64,
    /// Root records of an object not in the dump (dropped).
    pub missing_root_objects: u64,
    /// Roots kept with a kind or flags over 32 bits cut to fit (a kind over
    /// 32 bits becomes `ffffffff`; flags keep their low 32 bits).
    pub clamped_roots: u64,
    /// `line N: why`, ordered by line, at most [`MAX_MESSAGES`].
    pub messages: Vec<String>,
}

impl Diagnostics {
    /// All the counts above added up (messages aside).
    pub fn total(&self) -> u64 {
        self.skipped_lines
            + self.dangling_references
            + self.undefined_types
            + self.duplicate_objects
            + self.missing_root_objects
            + self.clamped_roots
    }
}

/// How many records of each kind the parser read, so every non-blank line
/// is accounted for: `o` + `t` + `r` + `a` + `c` records + skipped lines =
/// non-blank lines. `objects` and `roots` include the repeated objects and
/// the roots of missing objects (counted again in [`Diagnostics`]); `types`
/// excludes redefinitions (those are skipped lines).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecordCounts {
    /// `o` records, repeated ids included.
    pub objects: u64,
    /// `t` records, redefinitions excluded.
    pub types: u64,
    /// `r` records, those of missing objects included.
    pub roots: u64,
    /// `a` and `c` records.
    pub sections: u64,
}

impl RecordCounts {
    /// All records read: with skipped lines, the non-blank lines.
    pub fn total(&self) -> u64 {
        self.objects + self.types + self.roots + self.sections
    }
}

/// Which importer read the dump (docs/json.md's `format`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Format {
    /// The RPM text format (docs/formats.md).
    #[default]
    Rpm,
    /// A .NET `.gcdump` (EventPipe heap snapshot).
    Gcdump,
    /// A Java HPROF binary dump.
    Hprof,
    /// A V8 `.heapsnapshot` (JSON).
    Heapsnapshot,
}

impl Format {
    /// The name in `report --json`'s `format` key.
    pub fn key(self) -> &'static str {
        match self {
            Format::Rpm => "rpm",
            Format::Gcdump => "gcdump",
            Format::Hprof => "hprof",
            Format::Heapsnapshot => "heapsnapshot",
        }
    }

    /// What a person calls it.
    pub fn describe(self) -> &'static str {
        match self {
            Format::Rpm => "RPM text heap dump",
            Format::Gcdump => ".NET gcdump",
            Format::Hprof => "Java HPROF",
            Format::Heapsnapshot => "V8 heap snapshot",
        }
    }
}

/// A heap: objects in the order the importer met them (for the text format,
/// the first record of each id).
#[derive(Debug, Default)]
pub struct Model {
    /// The file the dump was read from (the name, for a built-in dump).
    pub path: PathBuf,
    /// The size of the file in bytes, as stored (compressed where gzipped).
    pub file_bytes: u64,
    /// The `a … c` sections; index 0 is the implicit one.
    pub app_domains: Vec<AppDomain>,
    /// Type names, interned: two sections' types with one name share an index.
    pub type_names: Vec<Box<str>>,
    /// Each object's id as the dump gives it (its address for most
    /// formats), in blocks of narrow deltas: read through `Ids::get` or
    /// [`Model::id_of`].
    pub ids: Ids,
    /// Each object's type, in 1, 2 or 4 bytes (the narrowest the heap's
    /// types fit): read through [`ObjectTypes::get`] or, for a whole pass,
    /// [`with_types!`](crate::model::with_types).
    pub types: ObjectTypes,
    /// Each object's shallow size in bytes (1 or 2 bytes each with a side
    /// table for the large ones, where that is smallest).
    pub sizes: Sizes,
    /// Outgoing references in field order (dangling ones dropped).
    pub refs: Csr,
    /// The roots whose objects are in the dump, in record order.
    pub roots: Vec<Root>,
    /// Object id → index. The importers build one to resolve references
    /// and hand over a lazy one (built at the first [`Model::index_of`]):
    /// no stage of the analysis looks ids up, so the 6–7 bytes per object
    /// are not held through it.
    pub id_index: IdIndex,
    /// What the importer could not use.
    pub diagnostics: Diagnostics,
    /// How many records of each kind were read.
    pub records: RecordCounts,
    /// Which importer read the dump.
    pub format: Format,
    /// Runtime details the overview shows, as (what, value): id size, HPROF
    /// version, V8 meta, gcdump sampling. Empty for the text format.
    pub details: Vec<(String, String)>,
    /// Per-reference labels (field names, array indices), where the format
    /// has them: parallel to `refs.targets`.
    pub labels: Option<Labels>,
    /// Per-object value bytes (primitive fields, array contents, strings),
    /// where the format has them.
    pub values: Option<Values>,
    /// The referents of Java reference objects (soft, weak, final,
    /// phantom), where the format has them: not in `refs` unless
    /// `referents.strong`.
    pub referents: Option<Referents>,
    /// Java class dumps' fields (instance and static, with the statics'
    /// values), where the format has them: what the inspector decodes an
    /// object's fields with.
    pub java_classes: Option<JavaClasses>,
    /// The threads and stack frames roots lie in, where the format names
    /// them (HPROF).
    pub root_places: RootPlaces,
    /// The types Java class objects' dominator-tree rows are named by
    /// (`class X`), made from the above at the first look-up.
    pub row_types: RowTypes,
    /// Where the importer put its big arrays when the dump's file was over
    /// the memory budget (`import::budget`): the later stages spill to it
    /// too. `None` when the import held everything in memory.
    pub spill: Option<std::sync::Arc<crate::mem::spill::Spill>>,
}

/// A thread that roots lie in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootThread {
    /// Its name (made printable at import, as every name from a dump),
    /// or `thread N` by its serial number where the dump does not name it.
    pub name: Box<str>,
    /// Its `java.lang.Thread` object, where the dump has it.
    pub object: Option<ObjectIdx>,
}

/// Where each root lies: the thread and stack frame of HPROF's Java frame
/// and JNI local roots (the thread alone for the other roots of a thread).
/// Kept per root record, never per object.
#[derive(Debug, Clone, Default)]
pub struct RootPlaces {
    /// The threads, indexed by the first of `of_root`'s pairs.
    pub threads: Vec<RootThread>,
    /// Frame texts as Java prints them: `Leaky.main(Leaky.java:12)`.
    pub frames: Vec<Box<str>>,
    /// Per root record (parallel to `Model::roots`; empty when the dump
    /// names no threads): (thread, frame) indices, [`RootPlaces::NONE`]
    /// where it has none.
    pub of_root: Vec<(u32, u32)>,
    /// The records that lie in a thread, as (object, record) sorted: made
    /// on the first look-up ([`Model::root_place_of`]), so that a frame
    /// that shows a retention path's start costs a binary search.
    by_object: std::sync::OnceLock<Vec<(ObjectIdx, u32)>>,
}

/// Equal by what was read; the look-up index is derived.
impl PartialEq for RootPlaces {
    fn eq(&self, other: &RootPlaces) -> bool {
        (&self.threads, &self.frames, &self.of_root)
            == (&other.threads, &other.frames, &other.of_root)
    }
}

impl Eq for RootPlaces {}

impl RootPlaces {
    /// The index that stands for no thread or no frame in `of_root`.
    pub const NONE: u32 = u32::MAX;

    /// Places from what the importer read (the look-up index is made later).
    pub fn new(threads: Vec<RootThread>, frames: Vec<Box<str>>, of_root: Vec<(u32, u32)>) -> Self {
        RootPlaces {
            threads,
            frames,
            of_root,
            by_object: Default::default(),
        }
    }

    /// The thread root record `r` lies in.
    pub fn thread(&self, r: usize) -> Option<&RootThread> {
        let &(t, _) = self.of_root.get(r)?;
        self.threads.get(t as usize)
    }

    /// The stack frame root record `r` lies in.
    pub fn frame(&self, r: usize) -> Option<&str> {
        let &(_, f) = self.of_root.get(r)?;
        self.frames.get(f as usize).map(|f| &**f)
    }

    /// Where root record `r` lies, in words: `thread main, frame
    /// Leaky.main:12` (the frame as class.method:line), `thread main`, or
    /// `None` outside threads.
    pub fn describe(&self, r: usize) -> Option<String> {
        let t = self.thread(r)?;
        Some(match self.frame(r) {
            Some(f) => format!("thread {}, frame {}", t.name, short_frame(f)),
            None => format!("thread {}", t.name),
        })
    }
}

impl Model {
    /// What every native importer's model starts from: `format`'s dump at
    /// `path`, one implicit AppDomain holding its `objects` (only the text
    /// format has AppDomain sections), an id index built at the first
    /// look-up (the analysis makes none), everything else empty. The
    /// importer fills in the rest with `Model { …, ..Model::native(…) }`.
    pub fn native(path: &std::path::Path, file_bytes: u64, format: Format, objects: u64) -> Model {
        Model {
            path: path.to_path_buf(),
            file_bytes,
            format,
            app_domains: vec![AppDomain {
                objects,
                ..AppDomain::default()
            }],
            id_index: IdIndex::lazy(),
            ..Model::default()
        }
    }

    /// Where a root record of `object` lies (`thread main, frame
    /// Leaky.main:12`), the first that lies in a thread: the start of a
    /// retention path. A binary search (the index of the records in
    /// threads is made once, on the first call).
    pub fn root_place_of(&self, object: ObjectIdx) -> Option<String> {
        let p = &self.root_places;
        let index = p.by_object.get_or_init(|| {
            let mut v: Vec<(ObjectIdx, u32)> = (0..p.of_root.len().min(self.roots.len()))
                .filter(|&r| p.of_root[r].0 != RootPlaces::NONE)
                .map(|r| (self.roots[r].object, r as u32))
                .collect();
            v.sort_unstable();
            v
        });
        let start = index.partition_point(|&(o, _)| o < object);
        index[start..]
            .iter()
            .take_while(|&&(o, _)| o == object)
            .find_map(|&(_, r)| p.describe(r as usize))
    }
}

/// `Leaky.main(Leaky.java:12)` → `Leaky.main:12`; a frame without a line
/// keeps its parenthesis (`Thread.sleep(Native Method)`).
pub fn short_frame(frame: &str) -> String {
    match frame.split_once('(') {
        Some((method, place)) => {
            let place = place.trim_end_matches(')');
            match place.rsplit_once(':') {
                Some((_, line)) if line.bytes().all(|b| b.is_ascii_digit()) && !line.is_empty() => {
                    format!("{method}:{line}")
                }
                _ => frame.to_string(),
            }
        }
        None => frame.to_string(),
    }
}

#[cfg(test)]
mod root_place_tests {
    use super::*;

    #[test]
    fn frames_are_shortened_to_their_line() {
        assert_eq!(short_frame("Leaky.main(Leaky.java:12)"), "Leaky.main:12");
        assert_eq!(
            short_frame("java.lang.Thread.sleep(Native Method)"),
            "java.lang.Thread.sleep(Native Method)"
        );
        assert_eq!(short_frame("A.b(A.java)"), "A.b(A.java)");
        let p = RootPlaces {
            threads: vec![RootThread {
                name: "main".into(),
                object: None,
            }],
            frames: vec!["Leaky.main(Leaky.java:12)".into()],
            of_root: vec![
                (0, 0),
                (0, RootPlaces::NONE),
                (RootPlaces::NONE, RootPlaces::NONE),
            ],
            ..RootPlaces::default()
        };
        assert_eq!(
            p.describe(0).as_deref(),
            Some("thread main, frame Leaky.main:12")
        );
        assert_eq!(p.describe(1).as_deref(), Some("thread main"));
        assert_eq!(p.describe(2), None);
        assert_eq!(p.describe(9), None);
    }
}

impl Model {
    /// Puts the per-object arrays and the references on disk
    /// (`mem::spill`): ids, types, shallow sizes, offsets and targets, the
    /// references' labels and the values' bytes.
    pub fn spill(&mut self, to: &crate::mem::spill::Spill) {
        self.ids.spill(to);
        self.types.spill(to);
        self.sizes.spill(to);
        self.refs.spill(to);
        if let Some(l) = &mut self.labels {
            l.codes.spill(to);
        }
        if let Some(v) = &mut self.values {
            to.array(&mut v.bytes);
        }
    }

    /// How many objects the heap has.
    pub fn objects(&self) -> usize {
        self.ids.len()
    }

    /// An object's type.
    pub fn type_of(&self, object: ObjectIdx) -> TypeIdx {
        self.types.get(object.index())
    }

    /// The name of an object's type.
    pub fn type_name(&self, object: ObjectIdx) -> &str {
        self.name_of_type(self.type_of(object))
    }

    /// A type's name.
    pub fn name_of_type(&self, t: TypeIdx) -> &str {
        &self.type_names[t.index()]
    }

    /// An object's shallow size in bytes.
    pub fn size_of(&self, object: ObjectIdx) -> u64 {
        self.sizes.get(object.index())
    }

    /// The objects `object` refers to, in field order.
    #[inline]
    pub fn refs_of(&self, object: ObjectIdx) -> BitRow<'_, ObjectIdx> {
        self.refs.neighbors(object.raw()).cast()
    }

    /// Every object's index, in order.
    pub fn object_indices(&self) -> impl DoubleEndedIterator<Item = ObjectIdx> + ExactSizeIterator {
        (0..self.objects() as u32).map(ObjectIdx)
    }

    /// Dense index of an object id.
    pub fn index_of(&self, id: u64) -> Option<ObjectIdx> {
        self.id_index.get(&self.ids, id).map(ObjectIdx)
    }

    /// The shallow sizes of every object added up, in bytes.
    pub fn total_bytes(&self) -> u64 {
        self.sizes.total()
    }

    /// The object id as the dump writes it: lowercase hex without `0x`.
    pub fn id_hex(&self, object: ObjectIdx) -> String {
        format!("{:x}", self.id_of(object))
    }

    /// The object's id as the dump gives it.
    #[inline]
    pub fn id_of(&self, object: ObjectIdx) -> u64 {
        self.ids.get(object.index())
    }

    /// The label of `object`'s `i`-th outgoing reference (its field name or
    /// array index), where the format records one.
    pub fn ref_label(&self, object: ObjectIdx, i: usize) -> Option<Label<'_>> {
        let labels = self.labels.as_ref()?;
        if object.index() >= self.refs.nodes() {
            return None;
        }
        let range = self.refs.range(object.raw());
        let (start, end) = (range.start, range.end);
        if start + i >= end {
            return None;
        }
        labels.get(start, start + i)
    }

    /// Builds, once, what makes [`Model::label_between`] a binary search on
    /// the objects with more than [`SHORT_ROW`] references: their
    /// reference positions ordered by target ([`LongRows`], 4 bytes a
    /// reference of those objects, 8 more an object; only where the format
    /// has labels). Shorter rows are scanned, which costs less than the
    /// search. O(their references × log degree); the TUI's worker calls it
    /// after the analysis, off the UI thread. Later calls return at once.
    pub fn index_labels(&self) {
        let Some(labels) = &self.labels else {
            return;
        };
        if self.refs.targets.len() > u32::MAX as usize {
            return;
        }
        labels.by_target.0.get_or_init(|| {
            let long = LongRows::of(&self.refs);
            tracing::debug!(target: "heaptui::memory",
                "labels: the long rows' index, {} bytes for {} references", long.bytes(), self.refs.targets.len());
            long
        });
    }

    /// The label of a reference from `from` to `to` (the first such in
    /// field order). A row of at most [`SHORT_ROW`] references is scanned;
    /// a longer one is a binary search once [`Model::index_labels`] ran,
    /// before that a scan of its first `scan` references (a bound, so a
    /// million-element array costs at most `scan` steps).
    pub fn label_between(&self, from: ObjectIdx, to: ObjectIdx, scan: usize) -> Option<Label<'_>> {
        let labels = self.labels.as_ref()?;
        if from.index() >= self.refs.nodes() {
            return None;
        }
        let (row, to) = (self.refs.neighbors(from.raw()), to.raw());
        if row.len() > SHORT_ROW {
            if let Some(long) = labels.by_target.0.get() {
                let i = long.position(from.raw(), row, to)?;
                return self.ref_label(from, i);
            }
        }
        let i = row.iter().take(scan).position(|t| t == to)?;
        self.ref_label(from, i)
    }

    /// What a row naming one object shows between its type and its id
    /// where the object holds text: ` "text"` (escaped, at most `max_chars`
    /// characters), else nothing. A Java class shows its name this way and
    /// a string its characters, as the rows of Eclipse MAT and Chrome
    /// DevTools do; `max_chars` 0 shows nothing.
    pub fn quoted_preview(&self, object: ObjectIdx, max_chars: usize) -> String {
        if max_chars == 0 {
            return String::new();
        }
        self.text_preview(object, max_chars)
            .map(|t| format!(" \"{t}\""))
            .unwrap_or_default()
    }

    /// `Type "text" id`: an object named in a line, with its text where it
    /// holds some (see [`Model::quoted_preview`]).
    pub fn object_label(&self, object: ObjectIdx, max_chars: usize) -> String {
        format!(
            "{}{} {}",
            self.type_name(object),
            self.quoted_preview(object, max_chars),
            self.id_hex(object)
        )
    }

    /// A short preview of the text an object holds: its own value (a V8 or
    /// .NET string, a Java `char[]`), or else that of the object its
    /// `value` field refers to (a `java.lang.String` keeps its characters
    /// in an array), or a V8 concatenated string's parts'. Control
    /// characters are escaped; at most `max_chars`.
    pub fn text_preview(&self, object: ObjectIdx, max_chars: usize) -> Option<String> {
        let values = self.values.as_ref()?;
        if let Some(t) = values.text(object, max_chars) {
            return Some(t);
        }
        if values.kind(object) == ValueKind::Joined {
            return self.joined_preview(object, max_chars);
        }
        let i = self.field(object, "value")?;
        values.text(self.refs_of(object).get(i), max_chars)
    }

    /// The position of the reference labelled `.name` among the first 16.
    fn field(&self, object: ObjectIdx, name: &str) -> Option<usize> {
        let n = self.refs_of(object).len().min(16);
        (0..n).find(|&i| matches!(self.ref_label(object, i), Some(Label::Name(l)) if l == name))
    }

    /// A [`ValueKind::Joined`] text (a V8 concatenated string's): its
    /// `first` part's, then its `second` part's, parts that are joined
    /// themselves read the same way, until `max_chars` characters (or 64
    /// parts: a preview's cost stays bounded whatever the dump). A part
    /// whose text is not in the snapshot (a sliced string) ends it with
    /// `…`.
    fn joined_preview(&self, object: ObjectIdx, max_chars: usize) -> Option<String> {
        let values = self.values.as_ref()?;
        let (mut out, mut chars) = (String::new(), 0usize);
        let mut stack = vec![object];
        let mut parts = 0;
        while let Some(o) = stack.pop() {
            parts += 1;
            if parts > 64 {
                out.push('…');
                break;
            }
            if values.kind(o) == ValueKind::Joined {
                let first = self.field(o, "first")?;
                let second = self.field(o, "second")?;
                let refs = self.refs_of(o);
                stack.push(refs.get(second));
                stack.push(refs.get(first));
                continue;
            }
            // With no room left, a part with text reads `…`.
            let room = max_chars - chars;
            let Some(t) = values.text(o, room) else {
                out.push('…');
                break;
            };
            let n = t.chars().count();
            out.push_str(&t);
            if n > room {
                break; // cut, `…` included
            }
            chars += n;
        }
        Some(out)
    }
}

#[cfg(test)]
mod label_tests {
    use super::*;

    /// The binary search after [`Model::index_labels`] finds what the scan
    /// finds: the first reference to the target in field order.
    #[test]
    fn indexed_labels_agree_with_the_scan() {
        // Object 0 refers to 3, 1, 3, 2, 1 (fields a..e); object 1 to 0.
        let mut m = Model {
            refs: Csr::from_degrees(&[5, 1, 0, 0], vec![3, 1, 3, 2, 1, 0]),
            ..Default::default()
        };
        let names: Vec<Box<str>> = ["a", "b", "c", "d", "e", "up"]
            .into_iter()
            .map(Into::into)
            .collect();
        m.labels = Some(Labels::new(names, (0..6).collect::<Vec<u32>>()));
        let all = |m: &Model| -> Vec<Option<String>> {
            (0..4)
                .flat_map(|from| (0..4).map(move |to| (ObjectIdx(from), ObjectIdx(to))))
                .map(|(from, to)| m.label_between(from, to, usize::MAX).map(|l| l.to_string()))
                .collect()
        };
        let scanned = all(&m);
        assert_eq!(scanned[3], Some(".a".into()), "0 → 3: the first field");
        assert_eq!(scanned[1], Some(".b".into()));
        assert_eq!(scanned[2], Some(".d".into()));
        assert_eq!(scanned[0], None);
        m.index_labels();
        assert!(m.labels.as_ref().unwrap().by_target.0.get().is_some());
        assert_eq!(all(&m), scanned);
    }

    proptest::proptest! {
        /// On rows short and long (over [`SHORT_ROW`], the indexed ones),
        /// with repeated targets, every (from, to) gets after
        /// [`Model::index_labels`] the label the whole scan finds, and a
        /// target not referred to none.
        #[test]
        fn long_rows_indexed_agree_with_the_scan(
            rows in proptest::collection::vec(
                proptest::collection::vec(0u32..12, 0..3 * SHORT_ROW), 1..12),
        ) {
            let n = 12;
            let mut degrees: Vec<u32> = rows.iter().map(|r| r.len() as u32).collect();
            degrees.resize(n, 0);
            let targets: Vec<u32> = rows.concat();
            let refs = targets.len() as u32;
            let mut m = Model {
                refs: Csr::from_degrees(&degrees, targets),
                ..Default::default()
            };
            let names: Vec<Box<str>> = (0..refs).map(|i| format!("f{i}").into()).collect();
            m.labels = Some(Labels::new(names, (0..refs).collect::<Vec<u32>>()));
            let all = |m: &Model| -> Vec<Option<String>> {
                (0..n as u32)
                    .flat_map(|from| (0..n as u32).map(move |to| (ObjectIdx(from), ObjectIdx(to))))
                    .map(|(from, to)| m.label_between(from, to, usize::MAX).map(|l| l.to_string()))
                    .collect()
            };
            let scanned = all(&m);
            m.index_labels();
            proptest::prop_assert_eq!(all(&m), scanned);
        }
    }
}
