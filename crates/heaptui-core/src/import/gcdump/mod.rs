//! The .NET gcdump importer (docs/formats.md): files of `dotnet-gcdump collect`,
//! PerfView and Visual Studio.
//!
//! A gcdump is a PerfView FastSerialization stream (`stream`) whose entry
//! object is a `GCHeapDump`; its first field is a `MemoryGraph` (`graph`),
//! then (format version ≥ 8) a bool and the count and size multipliers of a
//! sampled dump. No written specification exists; this follows the sources
//! of microsoft/perfview (MIT): `src/FastSerialization/FastSerialization.cs`,
//! `src/FastSerialization/StreamReaderWriter.cs`,
//! `src/HeapDump/GCHeapDump.cs` (`GCHeapDump.FromStream`, versions 8–10 and
//! the older layout, whose graph comes first too), `src/MemoryGraph/graph.cs`
//! and `src/MemoryGraph/MemoryGraph.cs`. No code was copied.
//!
//! Mapping (docs/formats.md, as PerfView computes retained sizes): object id =
//! node index; type = the node type's name; shallow size = the node's size;
//! references = its children in order; the graph's root node (`[.NET
//! Roots]`) is not an object: its children are the roots (kind 0, flags 0).
//! Nodes that were created but never defined decode, as in PerfView, as the
//! `UNDEFINED` type with size 0 and no children.
//!
//! Where the graph's node count is over the memory budget
//! (`import::budget`), the per-object and per-reference arrays are decoded
//! into spill files, and the spill goes on with the model.

mod graph;
mod nodes;
mod stream;

use std::collections::HashMap;
use std::path::Path;

use super::source::Source;
use super::{ImportError, InputError};
use crate::mem::spill::Spill;
use crate::model::{Collector, Ids, ObjectIdx, ObjectTypes, Place, Sizes, TypeIdx};
use crate::model::{Csr, Format, Model, RecordCounts, Root};
use crate::progress::{Progress, Stage};
use graph::RawGraph;
use stream::Reader;

/// What the stream holds around the graph.
struct Dump {
    graph: RawGraph,
    version: i32,
    /// (count, size) multipliers of a sampled dump.
    multipliers: Option<(f32, f32)>,
}

fn read_dump(bytes: &[u8]) -> Result<(Dump, Option<String>), String> {
    let mut r = Reader::new(bytes);
    r.signature()?;
    let entry = r.begin_object("the entry object")?;
    if entry.name != "GCHeapDump" {
        return Err(format!(
            "the stream holds a `{}`, not a GCHeapDump",
            entry.name
        ));
    }
    let g = r.begin_object("the memory graph")?;
    if !g.name.ends_with("MemoryGraph") {
        return Err(format!(
            "the GCHeapDump's graph is a `{}`, not a MemoryGraph",
            g.name
        ));
    }
    let graph = graph::read(&mut r, g.min_reader_version)?;
    // The fields after the graph only say whether the dump was sampled.
    let mut multipliers = None;
    let mut note = None;
    if entry.version >= 8 {
        let after = (|| -> stream::Result<(f32, f32)> {
            r.u8("Is64Bit")?;
            Ok((
                r.f32("the count multiplier")?,
                r.f32("the size multiplier")?,
            ))
        })();
        match after {
            Ok(m) => multipliers = Some(m),
            Err(e) => note = Some(format!("sampling multipliers unknown: {e}")),
        }
    }
    let dump = Dump {
        graph,
        version: entry.version,
        multipliers,
    };
    Ok((dump, note))
}

/// Imports a gcdump from its bytes, reporting to `progress`.
pub fn import(path: &Path, source: &Source, progress: &Progress) -> Result<Model, ImportError> {
    import_into(path, source, progress, |objects, file_bytes| {
        super::budget::plan_counted(objects, file_bytes, progress)
    })
}

/// [`import`] of bytes in memory, its arrays in `spill`'s files whatever
/// the budget, so tests can check that spilling changes nothing.
#[cfg(feature = "testing")]
pub(crate) fn import_bytes_spilled(
    path: &Path,
    bytes: &[u8],
    spill: std::sync::Arc<Spill>,
) -> Result<Model, InputError> {
    let source = Source::Owned(bytes.to_vec());
    match import_into(path, &source, &Progress::new(), |_, _| Some(spill)) {
        Ok(m) => Ok(m),
        Err(ImportError::Input(e)) => Err(e),
        Err(ImportError::Cancelled) => unreachable!("nobody can cancel this progress"),
    }
}

/// [`import`] with the spill `plan` gives for the objects and the file's
/// bytes (none: in memory).
fn import_into(
    path: &Path,
    source: &Source,
    progress: &Progress,
    plan: impl FnOnce(u64, u64) -> Option<std::sync::Arc<Spill>>,
) -> Result<Model, ImportError> {
    let bytes = source.bytes();
    progress.start(Stage::Parse, bytes.len() as u64);
    let _span = tracing::debug_span!(target: "heaptui::profile", "gcdump").entered();
    let stream = tracing::debug_span!(target: "heaptui::profile", "stream").entered();
    let (dump, note): (Dump, Option<String>) = read_dump(bytes)
        .map_err(|e| InputError::new(path, format!("not a readable .NET gcdump: {e}")))?;
    let g = &dump.graph;
    if g.node_count() < 2 {
        return Err(
            InputError::new(path, "no objects: the graph holds no node besides its root").into(),
        );
    }
    if g.root < 0 || g.root as usize >= g.node_count() {
        return Err(
            InputError::new(path, format!("the root index {} names no node", g.root)).into(),
        );
    }
    stream.exit();
    progress.check()?;
    let objects = g.node_count() as u64 - 1;
    let spill = plan(objects, bytes.len() as u64);
    let (mut type_names, type_map) = type_table(g);
    let types = (&type_map[..], type_names.len());
    let mut nodes = nodes::decode(source, g, types, spill.as_deref());
    if nodes.unknown_types {
        // The index the walk gave types outside the graph's table.
        type_names.push("(unknown type)".into());
    }
    let mut diag = std::mem::take(&mut nodes.diag);
    if let Some(n) = note {
        // Node messages are placed by node; this one comes after them.
        diag.note(u64::MAX, || n);
    }
    let mut model = tracing::debug_span!(target: "heaptui::profile", "assemble").in_scope(|| {
        let at = (path, spill.as_deref());
        assemble(at, bytes.len() as u64, &dump, nodes, type_names, diag)
    });
    model.spill = spill;
    progress.set_done(bytes.len() as u64);
    Ok(model)
}

/// Interns the graph's type names (two types of one name are one type):
/// the names, and each graph type's index among them.
fn type_table(g: &RawGraph) -> (Vec<Box<str>>, Vec<u32>) {
    let mut names: Vec<Box<str>> = Vec::new();
    let mut by_name: HashMap<&str, u32> = HashMap::new();
    let mut map: Vec<u32> = Vec::with_capacity(g.types.len());
    for (name, _) in &g.types {
        let next = by_name.len() as u32;
        let t = *by_name.entry(name.as_str()).or_insert(next);
        if t == next {
            names.push(name.as_str().into());
        }
        map.push(t);
    }
    (names, map)
}

fn assemble(
    (path, spill): (&Path, Option<&Spill>),
    file_bytes: u64,
    dump: &Dump,
    nodes: nodes::Nodes,
    type_names: Vec<Box<str>>,
    diag: Collector,
) -> Model {
    // Ids are the node numbers, never repeated; the index is built at the
    // first look-up by id (the analysis makes none).
    let roots: Vec<Root> = nodes
        .roots
        .iter()
        .map(|&o| Root::plain(ObjectIdx(o)))
        .collect();
    let objects = nodes.ids.len() as u64;
    Model {
        records: RecordCounts {
            objects,
            types: type_names.len() as u64,
            roots: roots.len() as u64,
            sections: 0,
        },
        details: details(dump),
        type_names,
        types: match nodes.types.is_mapped() {
            true => ObjectTypes::from(nodes.types.into_array().cast::<TypeIdx>()),
            false => TypeIdx::cast_vec(nodes.types.into_vec()).into(),
        },
        sizes: Sizes::from_scratch(nodes.sizes, spill),
        refs: Csr::from_offsets_in(nodes.offsets, nodes.targets, spill),
        ids: ids(nodes.ids),
        roots,
        diagnostics: diag.finish(Place::Unplaced),
        ..Model::native(path, file_bytes, Format::Gcdump, objects)
    }
}

/// The ids in the model's form (a spilled array's pages given back once
/// read).
fn ids(ids: crate::mem::Scratch<u64>) -> Ids {
    if !ids.is_mapped() {
        return ids.into_vec().into();
    }
    let packed = Ids::from(&ids[..]);
    ids.release(0..ids.len());
    packed
}

fn details(dump: &Dump) -> Vec<(String, String)> {
    let g = &dump.graph;
    let mut d = vec![
        ("GCHeapDump version".to_string(), dump.version.to_string()),
        ("nodes".into(), g.node_count().to_string()),
        ("node types".into(), g.types.len().to_string()),
        ("root node".into(), g.root.to_string()),
        ("node addresses".into(), g.addresses.to_string()),
        ("total size (PerfView)".into(), g.total_size.to_string()),
    ];
    if let Some(b) = g.is_64_bit {
        d.push(("64-bit".into(), if b { "yes" } else { "no" }.into()));
    }
    match dump.multipliers {
        Some((c, s)) => {
            let sampled = c != 1.0 || s != 1.0;
            d.push(("sampled".into(), if sampled { "yes" } else { "no" }.into()));
            d.push(("count multiplier".into(), c.to_string()));
            d.push(("size multiplier".into(), s.to_string()));
        }
        None => d.push(("sampled".into(), "unknown".into())),
    }
    d
}
