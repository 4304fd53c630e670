//! Building the model from the parsed chunks: [`assemble`] runs the stages
//! in file order over a shared [`Assembly`] (chunk offsets, diagnostics,
//! messages, record counts): sections and types ([`super::sections`]), ids
//! and references ([`super::resolve`]), then here the names of undefined
//! types, the reference offsets (CSR), the roots, and the diagnostics with
//! their first messages in line order.

use std::collections::HashMap;
use std::path::Path;

use super::lines::Chunk;
use super::resolve::{resolve_objects, ObjectArrays, ObjectIds};
use super::sections::{Sections, Types};
use crate::mem::spill::Spill;
use crate::mem::Scratch;
use crate::model::{Collector, Csr, IdIndex, Kind, Model, Place, RecordCounts, Root, MAX_MESSAGES};
use crate::model::{ObjectIdx, ObjectTypes, Sizes, TypeIdx};
use crate::progress::{Cancelled, Progress};

/// What the stages of [`assemble`] share: where each chunk sits in the
/// file, and the accounting gathered so far.
pub(super) struct Assembly<'p> {
    pub(super) progress: &'p Progress,
    pub(super) file_bytes: u64,
    pub(super) diag: Collector,
    pub(super) records: RecordCounts,
    /// Lines before each chunk.
    pub(super) first_line: Vec<u64>,
    /// Object records (repeated ones included) before each chunk.
    pub(super) first_object: Vec<usize>,
}

impl<'p> Assembly<'p> {
    /// The chunks' line and object offsets and record counts; their skip
    /// messages, made absolute (the chunks' lists are drained).
    pub(super) fn new(
        chunks: &mut [Chunk],
        file_bytes: u64,
        progress: &'p Progress,
    ) -> Assembly<'p> {
        let mut a = Assembly {
            progress,
            file_bytes,
            diag: Collector::default(),
            records: RecordCounts::default(),
            first_line: Vec::with_capacity(chunks.len()),
            first_object: Vec::with_capacity(chunks.len()),
        };
        let (mut lines, mut objects) = (0u64, 0usize);
        for c in chunks.iter() {
            a.first_line.push(lines);
            a.first_object.push(objects);
            lines += c.lines as u64;
            objects += c.ids.len();
            a.diag.count(Kind::Skipped, c.skipped);
            a.diag.count(Kind::Clamped, c.clamped_roots);
            a.records.objects += c.ids.len() as u64;
            a.records.roots += c.roots.len() as u64;
            a.records.sections += c.events.len() as u64;
        }
        for (ci, c) in chunks.iter_mut().enumerate() {
            for (l, m) in c.messages.drain(..) {
                a.diag.note(a.first_line[ci] + l as u64, || m);
            }
        }
        a
    }
}

/// Stitches the chunks, parsed in file order, into the model: results and
/// messages are exactly those of a sequential parse.
pub(super) fn assemble(
    path: &Path,
    file_bytes: u64,
    mut chunks: Vec<Chunk>,
    progress: &Progress,
    spill: Option<&Spill>,
) -> Result<Model, Cancelled> {
    let _span = tracing::debug_span!(target: "heaptui::profile", "assemble").entered();
    let mut a = Assembly::new(&mut chunks, file_bytes, progress);
    let mut sections = Sections::read(&mut chunks);
    let mut types = Types::read(&mut a, &mut chunks, &sections);
    progress.check()?;
    let objects = tracing::debug_span!(target: "heaptui::profile", "ids")
        .in_scope(|| ObjectIds::index(&mut a, &mut chunks, spill))?;
    crate::mem::checkpoint("import: ids");
    alive("ids", &chunks, &objects, None);
    let mut arrays = tracing::debug_span!(target: "heaptui::profile", "resolve")
        .in_scope(|| resolve_objects(&mut a, &mut chunks, &sections, &types, &objects, spill))?;
    crate::mem::checkpoint("import: references");
    alive("references", &chunks, &objects, Some(&arrays));
    a.name_undefined_types(&chunks, &objects, &mut types, &mut arrays);
    count_objects(&mut sections, &arrays);
    // The roots' objects first: the id index (13 bytes an object) goes
    // before the roots are made (tens of bytes a root, a few in a hundred
    // objects) and the chunks before the reference offsets are built.
    let roots_span =
        tracing::debug_span!(target: "heaptui::profile", "roots, drop chunks").entered();
    let found: Vec<Option<u32>> = chunks
        .iter()
        .flat_map(|c| c.roots.iter().map(|r| objects.index_of(r.object)))
        .collect();
    let ids = objects.finish();
    let roots = a.roots(&chunks, &sections, &types, &found);
    drop(chunks);
    roots_span.exit();
    let refs = Csr::from_degrees_in(&arrays.degrees, std::mem::take(&mut arrays.targets), spill);
    arrays.degrees = Scratch::default();
    let sizes = Sizes::from_half(arrays.sizes, arrays.big_sizes, spill);
    crate::mem::checkpoint("import: model");
    progress.set_done(file_bytes + file_bytes * 4 / 4);
    Ok(Model {
        path: path.to_path_buf(),
        file_bytes,
        app_domains: sections.app_domains,
        type_names: types.names,
        ids,
        types: ObjectTypes::from(arrays.types.into_array().cast::<TypeIdx>()),
        sizes,
        refs,
        roots,
        id_index: IdIndex::lazy(),
        diagnostics: a.diag.finish(Place::Line),
        records: a.records,
        ..Model::default()
    })
}

/// Logs (target `heaptui::memory`, when on) the import's arrays alive
/// after `step`, with bytes per object record: what the import holds
/// at its highest point.
fn alive(step: &str, chunks: &[Chunk], objects: &ObjectIds, arrays: Option<&ObjectArrays>) {
    if !tracing::enabled!(target: "heaptui::memory", tracing::Level::DEBUG) {
        return;
    }
    let mut list = vec![
        ("chunks", chunks.iter().map(Chunk::bytes).sum::<usize>()),
        ("id index", objects.wide.bytes()),
        ("ids", objects.ids.bytes()),
    ];
    if let Some(a) = arrays {
        list.extend([
            ("types", a.types.len() * 4),
            ("sizes", a.sizes.len() * 2 + a.big_sizes.len() * 8),
            ("degrees", a.degrees.len() * 4),
            ("targets", a.targets.len() * 4),
        ]);
    }
    let n = objects.ids.len().max(1) as f64;
    let total: usize = list.iter().map(|a| a.1).sum();
    let each: Vec<String> = list
        .iter()
        .map(|(name, b)| format!("{name} {:.1}", *b as f64 / n))
        .collect();
    tracing::debug!(target: "heaptui::memory",
        "import: {step}: arrays alive {} MiB, {:.1} B/object ({})",
        total >> 20, total as f64 / n, each.join(", "));
}

/// Adds each chunk's kept objects per section to the sections' counts.
fn count_objects(sections: &mut Sections, arrays: &ObjectArrays) {
    for r in &arrays.resolved {
        for (d, n) in r.domain_counts.iter().enumerate() {
            sections.app_domains[d].objects += n;
        }
    }
}

impl Assembly<'_> {
    /// Gives objects of undefined type ids a type named after the id (one
    /// per section and id), counts them, and explains the first of each
    /// chunk; then the chunk's dangling references' messages.
    fn name_undefined_types(
        &mut self,
        chunks: &[Chunk],
        objects: &ObjectIds,
        types: &mut Types,
        arrays: &mut ObjectArrays,
    ) {
        let mut undefined_names: HashMap<(u32, u64), u32> = HashMap::new();
        for (ci, r) in arrays.resolved.iter_mut().enumerate() {
            for &(j, section, type_id) in &r.undefined {
                let idx = *undefined_names
                    .entry((section, type_id))
                    .or_insert_with(|| types.intern(&format!("<unknown type 0x{type_id:x}>")));
                arrays.types[arrays.kept_start[ci] + j] = idx;
                self.diag.count(Kind::Undefined, 1);
            }
            if !r.undefined.is_empty() {
                self.explain_undefined(ci, &chunks[ci], objects, &r.undefined);
            }
            self.diag.count(Kind::Dangling, r.dangling);
            for (l, m) in r.messages.drain(..) {
                self.diag.note(l, || m);
            }
        }
    }

    /// Messages for the first undefined-type objects of chunk `ci`, whose
    /// lines are recovered by walking the chunk's records past the dropped
    /// (repeated) ones.
    fn explain_undefined(
        &mut self,
        ci: usize,
        c: &Chunk,
        objects: &ObjectIds,
        undefined: &[(usize, u32, u64)],
    ) {
        let first = self.first_object[ci];
        let mut raw = 0usize;
        let mut kept = 0usize;
        for &(j, _, type_id) in undefined.iter().take(MAX_MESSAGES) {
            while kept < j || !objects.kept(first + raw) {
                if objects.kept(first + raw) {
                    kept += 1;
                }
                raw += 1;
            }
            self.diag
                .note(self.first_line[ci] + c.obj_line(raw) as u64, || {
                    format!(
                        "object {:x} has type id {type_id:x}, which this section never defines",
                        objects.ids.get(first + raw)
                    )
                });
        }
    }

    /// The roots in file order, given the object each root record's id
    /// resolved to (`found`, in the same order); roots of objects not in
    /// the dump are counted (and the first explained).
    fn roots(
        &mut self,
        chunks: &[Chunk],
        sections: &Sections,
        types: &Types,
        found: &[Option<u32>],
    ) -> Vec<Root> {
        let mut roots = Vec::with_capacity(found.iter().flatten().count());
        let mut found = found.iter();
        for (ci, c) in chunks.iter().enumerate() {
            for r in &c.roots {
                let line = self.first_line[ci] + r.line as u64;
                let section = sections.at(ci, r.marker);
                let Some(&Some(object)) = found.next() else {
                    self.diag.count(Kind::MissingRoot, 1);
                    if self.diag.counted(Kind::MissingRoot) <= MAX_MESSAGES as u64 {
                        self.diag.note(line, || {
                            format!(
                                "root for object {:x}, which is not in the dump; ignored",
                                r.object
                            )
                        });
                    }
                    continue;
                };
                roots.push(Root {
                    object: ObjectIdx(object),
                    kind: r.kind,
                    flags: r.flags,
                    container: r.container,
                    container_type: r
                        .container
                        .and_then(|t| types.tables[section as usize].get(t))
                        .map(TypeIdx),
                    app_domain: section,
                    line,
                });
            }
        }
        roots
    }
}
