//! The Java HPROF importer (docs/formats.md): versions 1.0.1–1.0.3, 4- and 8-byte
//! identifiers, HEAP_DUMP and HEAP_DUMP_SEGMENT records, and Android's extra
//! sub-records (interned string, finalizing, debugger, reference cleanup, VM
//! internal and JNI monitor roots, unreachable, primitive arrays without
//! data, heap dump info). Objects map onto the model as Eclipse MAT sees
//! them — references in dump order with field names and array indices as
//! labels, primitive field bytes and array contents as values — but sized
//! as the JVM laid them out, from the layout found in the dump (`layout`,
//! docs/hprof-layout.md), or by MAT's model where the dump shows none or
//! an option forces it.
//!
//! A hand-written binary scanner over the memory-mapped file, with every read
//! bounds-checked (`reader`): no parser library fits a format whose
//! sub-records carry no length. The format as followed: the HPROF binary
//! format description shipped with the JDK (OpenJDK
//! `src/hotspot/share/services/heapDumper.cpp`, and the JDK 6 manual's
//! "HPROF: A Heap/CPU Profiling Tool", `hprof_b_spec.h`), and for the
//! Android sub-records AOSP's `art/runtime/hprof/hprof.cc` and
//! `art/tools/ahat` (perflib's `HprofParser`).
//!
//! Passes: `scan` hops over the top-level records (names, class loads, heap
//! dump segments) and walks the sub-records' headers, cutting them into
//! chunks (segments in parallel); `classes` reads the class dumps into field
//! layouts and sizes; `decode` reads the chunks' objects, which `assemble`
//! does twice in parallel: ids, counts and the distances between objects,
//! then, with the id index built and the layout found (`layout`), every
//! array written in place with references resolved.

mod assemble;
mod classes;
mod decode;
mod layout;
mod reader;
mod scan;
mod strings;
mod threads;

use std::path::Path;
use std::sync::Arc;

use rayon::prelude::*;

use super::source::Source;
use super::{ImportError, ImportOptions, InputError};
use crate::mem::spill::Spill;
use crate::model::{Collector, Kind, Place, TypeIdx};
use crate::model::{Format, Labels, Model, ObjectTypes, RecordCounts};
use crate::progress::{Progress, Stage};
use reader::Reader;

/// Target size of one decode chunk.
const CHUNK: usize = 4 << 20;

/// MAT's size model for one dump (docs/formats.md).
#[derive(Debug, Clone, Copy)]
pub(super) struct SizeModel {
    pub id_size: usize,
    pub header: u64,
    pub array_header: u64,
    pub ref_size: u64,
}

impl SizeModel {
    fn new(id_size: usize, compressed_refs: bool) -> SizeModel {
        let (header, array_header, ref_size) = match (id_size, compressed_refs) {
            (_, true) => (12, 16, 4),
            (4, false) => (8, 12, 4),
            _ => (16, 24, 8),
        };
        SizeModel {
            id_size,
            header,
            array_header,
            ref_size,
        }
    }
}

/// Checks the HPROF header at the start of `head` (version, identifier
/// size), so a damaged file is refused before the terminal is taken over.
pub fn check_header(head: &[u8]) -> Result<(), String> {
    scan::header(head).map(|_| ())
}

/// The heap dump segments' sub-records, scanned in parallel. Each chunk's
/// pages leave the resident set once it is scanned, and each segment's
/// (mapped pages count in it, and the walks that follow fetch them again
/// from the page cache a chunk at a time), so the file is never resident
/// whole, however large its segments.
fn scan_segments(
    source: &Source,
    records: &scan::Records,
    id_size: usize,
    progress: &Progress,
) -> Vec<scan::SegmentScan> {
    let _span = tracing::debug_span!(target: "heaptui::profile", "sub-records").entered();
    records
        .segments
        .par_iter()
        .map(|&s| {
            let release = |c: &scan::Chunk| source.release(c.start, c.end - c.start);
            let out = scan::scan_segment(source.bytes(), s, id_size, CHUNK, release);
            source.release(s.0, s.1 - s.0);
            progress.advance((s.1 - s.0) as u64);
            out
        })
        .collect()
}

/// The spill the import builds its big arrays in: one where the heap the
/// scans counted may go over the memory budget (`import::budget`), else
/// none.
fn plan(
    scans: &[scan::SegmentScan],
    may_spill: bool,
    len: u64,
    progress: &Progress,
) -> Option<Arc<Spill>> {
    if !may_spill {
        return None;
    }
    let objects = scans
        .iter()
        .flat_map(|s| &s.chunks)
        .map(|c| c.objects as u64)
        .sum();
    super::budget::plan_counted(objects, len, progress)
}

/// Reads an HPROF file whose bytes are open (see `import::import_file`).
pub fn import(
    path: &Path,
    source: &Source,
    options: &ImportOptions,
    progress: &Progress,
) -> Result<Model, ImportError> {
    let bytes = source.bytes();
    let len = bytes.len() as u64;
    let err = |why: String| ImportError::Input(InputError::new(path, why));
    let header = scan::header(bytes).map_err(err)?;
    progress.start(Stage::Parse, 3 * len.max(1));
    let _span = tracing::debug_span!(target: "heaptui::profile", "hprof").entered();
    let mut records = tracing::debug_span!(target: "heaptui::profile", "records")
        .in_scope(|| scan::records(bytes, &header));
    progress.check()?;
    let sizes = SizeModel::new(header.id_size, options.compressed_refs);
    let may_spill = super::budget::hprof_may_spill(len);
    let scans = scan_segments(source, &records, header.id_size, progress);
    progress.set_done(len);
    progress.check()?;
    let spill = plan(&scans, may_spill, len, progress);
    let mut issues = std::mem::take(&mut records.issues);
    let classes_span = tracing::debug_span!(target: "heaptui::profile", "classes").entered();
    let (chunks, raw_roots, class_dumps, sub_records) = gather(bytes, scans, &header, &mut issues);
    let classes = classes::build(bytes, &records, class_dumps, &sizes);
    for &c in classes.unnamed.iter().take(crate::model::MAX_MESSAGES) {
        issues.push(Kind::Skipped, 0, || {
            format!("class {c:x} has no LOAD_CLASS record naming it")
        });
    }
    classes_span.exit();
    let mut a = match assemble::assemble(
        source,
        &chunks,
        &raw_roots,
        &classes,
        (
            sizes,
            !options.compressed_refs && !options.model_sizes,
            options.references == super::References::All,
        ),
        (progress, spill.as_deref()),
        &mut issues,
    ) {
        Ok(a) => a,
        Err(assemble::Stop::Cancelled(c)) => return Err(c.into()),
        Err(assemble::Stop::Inconsistent) => return Err(err(
            "a heap dump segment read differently the second time (is the file being written to?)"
                .into(),
        )),
    };
    if a.ids.is_empty() {
        let first = issues.finish(Place::Offset).messages.into_iter().next();
        return Err(err(match first {
            Some(m) => format!("no objects in the HPROF heap dump; {m}"),
            None => "no objects in the HPROF heap dump (no HEAP_DUMP records with instances, arrays or classes)".into(),
        }));
    }
    crate::mem::checkpoint("import: assembled");
    let kept_roots = std::mem::take(&mut a.raw_roots);
    let model_span = tracing::debug_span!(target: "heaptui::profile", "model").entered();
    let mut model = build_model(
        path,
        len,
        header,
        options,
        a,
        classes,
        issues,
        (records.count, sub_records, raw_roots.len()),
    );
    model.root_places = threads::places(bytes, &records, &kept_roots, &model);
    model.spill = spill;
    model_span.exit();
    progress.set_done(3 * len);
    Ok(model)
}

/// The segments' scans in file order: chunks, roots, class dumps (read in
/// full; the first dump of a class id is the one kept) and the sub-record count.
fn gather(
    bytes: &[u8],
    scans: Vec<scan::SegmentScan>,
    header: &scan::Header,
    issues: &mut Collector,
) -> (
    Vec<scan::Chunk>,
    Vec<scan::RawRoot>,
    Vec<classes::ClassDump>,
    u64,
) {
    let mut chunks = Vec::new();
    let mut roots = Vec::new();
    let mut dumps = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut sub_records = 0;
    for s in scans {
        chunks.extend(s.chunks);
        roots.extend(s.roots);
        sub_records += s.sub_records;
        issues.merge(s.issues);
        for at in s.classes {
            // The scan read this dump already, so it parses.
            let mut r = Reader::new(bytes, at, header.id_size);
            if let Ok(d) = classes::parse_class_dump(&mut r) {
                if seen.insert(d.id) {
                    dumps.push(d);
                }
            }
        }
    }
    (chunks, roots, dumps, sub_records)
}

/// The model, with the format's details for the overview.
#[allow(clippy::too_many_arguments)]
fn build_model(
    path: &Path,
    file_bytes: u64,
    header: scan::Header,
    options: &ImportOptions,
    a: assemble::Assembled,
    classes: classes::Classes,
    issues: Collector,
    (records, sub_records, roots): (u64, u64, usize),
) -> Model {
    let labels = tracing::debug_span!(target: "heaptui::profile", "labels")
        .in_scope(|| Labels::new(classes.labels.names.clone(), a.labels.into_array()));
    let values = a.values;
    tracing::debug!(
        target: "heaptui::profile",
        "hprof: {} bytes of values for {} objects",
        values.bytes.len(),
        values.objects()
    );
    let details = vec![
        (
            "HPROF version".to_string(),
            format!("1.0.{}", header.version),
        ),
        (
            "identifier size".to_string(),
            format!("{} bytes", header.id_size),
        ),
        ("dumped at".to_string(), utc_time(header.timestamp_ms)),
        (
            "object layout".to_string(),
            layout_detail(&a.sizing, header.id_size, options),
        ),
        (
            "references".to_string(),
            match options.references {
                super::References::Strong => "strong only (referents retain nothing)",
                super::References::All => "all (referents retain, --references all)",
            }
            .to_string(),
        ),
        ("classes".to_string(), classes.ids.len().to_string()),
        (
            "records".to_string(),
            format!("{records} ({sub_records} heap dump sub-records)"),
        ),
    ];
    let objects = a.ids.len() as u64;
    let types = if a.types.is_mapped() {
        ObjectTypes::from(a.types.into_array().cast::<TypeIdx>())
    } else {
        TypeIdx::cast_vec(a.types.into_vec()).into()
    };
    Model {
        type_names: a.type_names,
        ids: a.ids,
        types,
        sizes: a.sizes,
        refs: a.refs,
        roots: a.roots,
        diagnostics: issues.finish(Place::Offset),
        records: RecordCounts {
            objects,
            types: classes.ids.len() as u64,
            roots: roots as u64,
            sections: 0,
        },
        details,
        labels: Some(labels),
        values: Some(values),
        referents: Some(a.referents),
        java_classes: Some(classes.java),
        ..Model::native(path, file_bytes, Format::Hprof, objects)
    }
}

/// How the objects were sized, for the overview and the report.
fn layout_detail(sizing: &layout::Sizing, id_size: usize, options: &ImportOptions) -> String {
    if options.compressed_refs {
        return "field model of compressed references (12-byte headers, 16-byte array headers, 4-byte references; as forced)".into();
    }
    match sizing.found {
        Some(f) => format!(
            "{} (from the dump: {} classes sized by their addresses, {} by the field model)",
            f.describe(id_size),
            f.by_evidence,
            f.by_model
        ),
        None => {
            let m = SizeModel::new(id_size, false);
            format!(
                "field model of {id_size}-byte identifiers ({}-byte headers, {}-byte array headers, {}-byte references; {})",
                m.header,
                m.array_header,
                m.ref_size,
                if options.model_sizes { "as forced" } else { "the dump shows no layout" }
            )
        }
    }
}

/// Milliseconds since the epoch as `YYYY-MM-DD HH:MM:SS UTC`.
fn utc_time(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + (m <= 2) as i64;
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_times() {
        assert_eq!(utc_time(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc_time(1_700_000_000_123), "2023-11-14 22:13:20 UTC");
        assert_eq!(utc_time(951_782_400_000), "2000-02-29 00:00:00 UTC");
    }

    #[test]
    fn size_models() {
        let m = SizeModel::new(4, false);
        assert_eq!((m.header, m.array_header, m.ref_size), (8, 12, 4));
        let m = SizeModel::new(8, false);
        assert_eq!((m.header, m.array_header, m.ref_size), (16, 24, 8));
        let m = SizeModel::new(8, true);
        assert_eq!((m.header, m.array_header, m.ref_size), (12, 16, 4));
    }
}
