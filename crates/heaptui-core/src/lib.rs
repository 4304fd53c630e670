//! heaptui's headless core: a GC heap dump in, its dominator tree, retained
//! sizes, duplicate instance sets, comparison with older snapshots, leak
//! suspects and reports out. The terminal UI (`heaptui-tui`) and the
//! `heaptui` binary are built on it; nothing here draws or reads a terminal.
//!
//! The layers, bottom to top (each module uses only those below it;
//! `tests/core/layers.rs` checks it):
//!
//! | module | owns |
//! |---|---|
//! | [`mem`], [`progress`], [`log`], [`demo`], [`work`] | owned or mapped arrays; progress and cancellation; the `HEAPTUI_LOG` file; the bundled sample heaps; units of work counted for the bounds tests |
//! | [`model`] | the heap every format maps onto: types, objects, sizes, references, roots, labels, diagnostics; [`ObjectIdx`], [`TypeIdx`] |
//! | [`import`] | one importer per format (.NET CF text in `import/netcf_text`, HPROF, V8 heap snapshots, .NET gcdump; gzipped or not), detected by content |
//! | [`graph`] | retainers, dominators, retained sizes, duplicate detection |
//! | [`analysis`] | the staged pipeline ([`Analysis`]), queries, comparison, leak suspects |
//! | [`cache`] | the reopen cache |
//! | [`report`] | the text report and the JSON contract (docs/json.md) |
//! | `testing` (only with the `testing` feature) | knobs for heaptui's own tests, benchmarks and fuzz targets |
//!
//! # The public surface
//!
//! Each module above is public and says what it offers at its own level
//! (`analysis::Comparison`, `graph::DominatorTree`, `import::import_file`,
//! `model::printable`); the files behind it (`analysis/compare.rs`,
//! `graph/dominators.rs`, the importers' folders) are private. Submodules
//! stay public only where they are a namespace their items are named
//! against: [`analysis::pipeline`] (`pipeline::run`), [`graph::duplicates`],
//! [`mem::budget`] and [`mem::spill`] (`budget::get`, `spill::dir`), and
//! the constant tables [`model::root_kind`], [`model::root_flags`] and
//! [`model::field_type`]. The most used types are also at the root.
//!
//! What only heaptui's own tests, benchmarks and fuzz targets need (an
//! importer's chunk size, the duplicate detector's thresholds, the cache
//! decoder over bytes) is the `testing` module, compiled only with the
//! non-default `testing` feature, so the binary carries none of it.
//!
//! # Example
//!
//! The bundled demo heap, analysed and reported as `heaptui report` does:
//!
//! ```
//! use heaptui_core::demo::{DEMO_DUMP, DEMO_NAME};
//! use heaptui_core::graph::duplicates::DuplicateOptions;
//! use heaptui_core::report::{write_text, ReportOptions};
//! use heaptui_core::Analysis;
//!
//! let analysis = Analysis::from_bytes(DEMO_NAME, DEMO_DUMP.as_bytes(), &DuplicateOptions::default())?;
//! let largest = analysis.dom.reachable_bytes;
//! assert!(largest > 0);
//!
//! let mut text = Vec::new();
//! write_text(&mut text, &analysis, &ReportOptions::default())?;
//! assert!(String::from_utf8(text)?.contains("demo.dump.txt"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

pub mod analysis;
pub mod cache;
pub mod demo;
pub mod graph;
pub mod import;
pub mod log;
#[allow(unsafe_code)]
pub mod mem;
pub mod model;
pub mod progress;
pub mod report;
#[cfg(feature = "testing")]
pub mod testing;
pub mod text;
pub mod work;

pub use analysis::Analysis;
pub use import::{import_bytes, import_file};
pub use model::{Model, ObjectIdx, TypeIdx};
pub use progress::Progress;
