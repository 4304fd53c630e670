//! Importers: bytes of a dump file → [`Model`]. One submodule per format
//! (`netcf_text` for the .NET CF text format), format detection by content
//! (docs/formats.md), never by file name, and the read-only file access they share.
//!
//! May import `model`, `progress` and `mem`; never `graph` or anything above.

pub(crate) mod budget;
pub(crate) mod gcdump;
pub(crate) mod gzip;
pub(crate) mod hprof;
pub(crate) mod netcf_text;
pub(crate) mod source;
pub(crate) mod v8;

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::model::text::{printable, printable_path};
use crate::model::{Format, IdIndex, Model};
use crate::progress::{Cancelled, Progress};
use source::Source;

/// Input that cannot be used at all: one line naming the file and the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    /// The file, as given.
    pub path: PathBuf,
    /// Why it cannot be used, one line.
    pub reason: String,
}

impl InputError {
    /// The error `reason` about `path`.
    pub fn new(path: &Path, reason: impl Into<String>) -> Self {
        InputError {
            path: path.to_path_buf(),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", printable_path(&self.path), self.reason)
    }
}

impl std::error::Error for InputError {}

/// Why importing stopped without a model.
#[derive(Debug)]
pub enum ImportError {
    /// The input cannot be used (its message names the file).
    Input(InputError),
    /// The progress was cancelled before the import ended.
    Cancelled,
}

impl From<Cancelled> for ImportError {
    fn from(_: Cancelled) -> Self {
        ImportError::Cancelled
    }
}

impl From<InputError> for ImportError {
    fn from(e: InputError) -> Self {
        ImportError::Input(e)
    }
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImportError::Input(e) => e.fmt(f),
            ImportError::Cancelled => f.write_str("cancelled"),
        }
    }
}

impl std::error::Error for ImportError {}

/// The format a file's first bytes announce (docs/formats.md); anything that no
/// native format claims is read as RPM text.
pub(crate) fn detect(head: &[u8]) -> Format {
    let trimmed = {
        let start = head
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .unwrap_or(head.len());
        &head[start..]
    };
    // PerfView writes the signature as a string: its length (20, a
    // little-endian i32) comes first.
    if head.starts_with(b"!FastSerialization.1")
        || head.starts_with(b"\x14\0\0\0!FastSerialization.1")
    {
        Format::Gcdump
    } else if head.starts_with(b"JAVA PROFILE 1.0.") {
        Format::Hprof
    } else if trimmed.starts_with(b"{")
        && trimmed[1..].trim_ascii_start().starts_with(b"\"snapshot\"")
    {
        Format::Heapsnapshot
    } else {
        Format::Rpm
    }
}

/// How much of a file [`check_file`] reads: enough to know its format and
/// that it is one heaptui reads.
pub(crate) const CHECK_BYTES: usize = 64 << 10;

/// Checks, before the terminal is taken over, that `path` is a dump heaptui
/// can open: it exists and can be read, is not empty, and its first
/// [`CHECK_BYTES`] (decompressed when gzipped) are of a format heaptui reads
/// with a valid header, or hold text dump records. A file no larger than
/// that is imported whole. Pipes and devices are only opened (reading them
/// would consume what the analysis needs). The error is the one line the
/// import would give.
pub fn check_file(path: &Path) -> Result<(), InputError> {
    let err = |reason: String| InputError::new(path, reason);
    let meta = std::fs::metadata(path).map_err(|e| err(source::io_reason(&e)))?;
    if meta.is_dir() {
        return Err(err(source::IS_A_DIRECTORY.into()));
    }
    let file = std::fs::File::open(path).map_err(|e| err(source::io_reason(&e)))?;
    if !meta.is_file() {
        return Ok(());
    }
    if meta.len() == 0 {
        return Err(err("the file is empty".into()));
    }
    let mut head = Vec::with_capacity(CHECK_BYTES);
    file.take(CHECK_BYTES as u64 + 1)
        .read_to_end(&mut head)
        .map_err(|e| err(source::io_reason(&e)))?;
    if head.len() <= CHECK_BYTES {
        // The whole file: what the import says is the answer.
        return import_bytes(path, &head).map(|_| ());
    }
    head.truncate(CHECK_BYTES);
    if gzip::is_gzip(&head) {
        let mut inner = Vec::with_capacity(CHECK_BYTES);
        let read = flate2::read::MultiGzDecoder::new(&head[..])
            .take(CHECK_BYTES as u64)
            .read_to_end(&mut inner);
        match read {
            Ok(_) => {}
            // Only the first compressed bytes were read.
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {}
            Err(e) => return Err(err(format!("corrupt gzip data: {e}"))),
        }
        if gzip::is_gzip(&inner) {
            return Err(err("gzip inside gzip; decompress it once first".into()));
        }
        if inner.is_empty() {
            return Ok(());
        }
        head = inner;
    }
    check_head(path, &head)
}

/// Checks a dump's first bytes (at most [`CHECK_BYTES`], decompressed):
/// of a format heaptui reads with a valid header, or text dump records.
pub(crate) fn check_head(path: &Path, head: &[u8]) -> Result<(), InputError> {
    match detect(head) {
        crate::model::Format::Rpm => netcf_text::check_head(path, head),
        crate::model::Format::Hprof => {
            hprof::check_header(head).map_err(|e| InputError::new(path, e))
        }
        crate::model::Format::Heapsnapshot | crate::model::Format::Gcdump => Ok(()),
    }
}

/// How dumps are read, where the file cannot say it itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ImportOptions {
    /// HPROF: size objects as a 64-bit JVM with compressed references lays
    /// them out (12-byte object header, 16-byte array header, 4-byte
    /// references) instead of what the identifier size implies.
    pub compressed_refs: bool,
    /// HPROF: size objects by the field model that the identifier size
    /// implies (Eclipse MAT's sizes) instead of the layout found in the
    /// dump.
    pub model_sizes: bool,
    /// HPROF: which references retain. By default the referent of a
    /// `java.lang.ref.Reference` (soft, weak, final, phantom) does not;
    /// [`References::All`] makes it a reference as any field is.
    pub references: References,
}

/// Which references of a Java heap retain (`--references`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum References {
    /// Only strong references: the referents of soft, weak, final and
    /// phantom references retain nothing (what the garbage collector does).
    #[default]
    Strong,
    /// Referents as well: what would be freed if the soft and weak
    /// references were cleared.
    All,
}

impl References {
    /// The other mode (the UI's key that analyses again).
    pub fn toggled(self) -> References {
        match self {
            References::Strong => References::All,
            References::All => References::Strong,
        }
    }
}

/// Opens a dump file read-only and imports it with the importer of its
/// format and the default options ([`import_file_with`] takes others).
pub fn import_file(path: &Path, progress: &Progress) -> Result<Model, ImportError> {
    import_file_with(path, &ImportOptions::default(), progress)
}

/// Opens a dump file read-only and imports it with the importer of its
/// format.
pub fn import_file_with(
    path: &Path,
    options: &ImportOptions,
    progress: &Progress,
) -> Result<Model, ImportError> {
    let source = Source::open(path)?;
    import_source(path, &source, options, progress)
}

/// Imports dump bytes held in memory (tests, the built-in demo heap).
pub fn import_bytes(path: &Path, bytes: &[u8]) -> Result<Model, InputError> {
    import_bytes_with(path, bytes, &ImportOptions::default())
}

/// [`import_bytes`] with options.
pub fn import_bytes_with(
    path: &Path,
    bytes: &[u8],
    options: &ImportOptions,
) -> Result<Model, InputError> {
    let source = Source::Owned(bytes.to_vec());
    match import_source(path, &source, options, &Progress::new()) {
        Ok(m) => Ok(m),
        Err(ImportError::Input(e)) => Err(e),
        Err(ImportError::Cancelled) => unreachable!("nobody can cancel this progress"),
    }
}

fn import_source(
    path: &Path,
    source: &Source,
    options: &ImportOptions,
    progress: &Progress,
) -> Result<Model, ImportError> {
    if !gzip::is_gzip(source.bytes()) {
        return import_plain(path, source, options, progress);
    }
    let compressed = source.bytes().len() as u64;
    let inflated = gzip::inflate(path, source.bytes(), progress)?;
    if gzip::is_gzip(inflated.source.bytes()) {
        return Err(InputError::new(path, "gzip inside gzip; decompress it once first").into());
    }
    let inner = inflated.source.bytes().len() as u64;
    let mut model = import_plain(path, &inflated.source, options, progress)?;
    model.file_bytes = compressed;
    model
        .details
        .push(("gzip".into(), format!("{inner} bytes decompressed")));
    if inflated.truncated {
        let d = &mut model.diagnostics;
        d.skipped_lines += 1;
        d.messages.insert(
            0,
            format!("the gzip data ends early (truncated file): only its first {inner} decompressed bytes were read"),
        );
        d.messages.truncate(crate::model::MAX_MESSAGES);
    }
    if inflated.trailing > 0 {
        let d = &mut model.diagnostics;
        d.skipped_lines += 1;
        d.messages.insert(
            0,
            format!(
                "the gzip data is followed by {} bytes that are not gzip; ignored, as gzip -d does",
                inflated.trailing
            ),
        );
        d.messages.truncate(crate::model::MAX_MESSAGES);
    }
    Ok(model)
}

fn import_plain(
    path: &Path,
    source: &Source,
    options: &ImportOptions,
    progress: &Progress,
) -> Result<Model, ImportError> {
    let bytes = source.bytes();
    let head = &bytes[..bytes.len().min(64)];
    let format = detect(head);
    let spill = budget::plan(format, bytes, progress);
    let mut model = match format {
        Format::Rpm => netcf_text::import(path, source, progress, spill.as_deref()),
        Format::Hprof => hprof::import(path, source, options, progress),
        Format::Heapsnapshot => v8::import(path, source, progress),
        Format::Gcdump => gcdump::import(path, source, progress),
    }?;
    make_printable(&mut model);
    if let Some(labels) = &mut model.labels {
        tracing::debug_span!(target: "heaptui::profile", "narrow labels")
            .in_scope(|| labels.narrow(&model.refs));
    }
    if spill.is_some() {
        model.spill = spill;
    }
    // The importer's id index resolved the references; nothing after the
    // import looks ids up (a later `index_of` builds it again, once).
    model.id_index = IdIndex::lazy();
    Ok(model)
}

/// The formats heaptui reads, as a person names them.
pub(crate) const FORMATS: &str = "HPROF, V8 heap snapshot, .NET gcdump, RPM text";

/// How many of a file's first bytes a refusal shows.
const SHOWN_BYTES: usize = 24;

/// The reason for refusing content of no format heaptui reads: the
/// formats it reads, `what` the content is, and the first bytes, as escaped text when
/// they are text, else in hex (never raw: they reach the terminal).
pub(crate) fn not_a_dump(what: &str, head: &[u8]) -> String {
    let shown = &head[..head.len().min(SHOWN_BYTES)];
    let more = if head.len() > SHOWN_BYTES { "…" } else { "" };
    // Text: valid UTF-8 (a character cut at the end aside), not NUL, and
    // not mostly control characters.
    let text = match std::str::from_utf8(shown) {
        Ok(t) => Some(t),
        Err(e) if e.error_len().is_none() => std::str::from_utf8(&shown[..e.valid_up_to()]).ok(),
        Err(_) => None,
    }
    .filter(|t| {
        // Mostly control characters (but line ends and tabs) is binary.
        let control = t
            .chars()
            .filter(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
            .count();
        !t.contains('\0') && control * 8 <= t.chars().count()
    });
    let start = match text {
        Some(t) => format!("\"{}{more}\"", printable(t.as_bytes())),
        None => {
            let hex: Vec<String> = shown.iter().map(|b| format!("{b:02x}")).collect();
            format!(
                "bytes {}{}",
                hex.join(" "),
                if more.is_empty() { "" } else { " …" }
            )
        }
    };
    format!("not a heap dump heaptui reads ({FORMATS}): {what}; it starts with {start}")
}

/// The one boundary where a dump's text enters the model: every name and
/// message any importer made is passed through `model::text::printable`
/// (idempotent, so what an importer escaped already stays as it is). The
/// views print them as they are; values are escaped when shown.
/// Escapes the model's text for the terminal ([`printable`]) and shortens
/// long names ([`MAX_NAME_BYTES`]); the importers and the cache's reader
/// pass every model through it.
pub(crate) fn make_printable(model: &mut Model) {
    // Shortened before it is escaped (escapes make text up to five times
    // longer: a 2 GB name would take 10 GB), and again after.
    fn fix(s: &mut Box<str>) {
        if s.len() > MAX_NAME_BYTES {
            *s = shortened(s);
        }
        if !crate::model::text::is_plain(s) {
            *s = printable(s.as_bytes());
        }
        if s.len() > MAX_NAME_BYTES {
            *s = shortened(s);
        }
    }
    fn fix_string(s: &mut String) {
        let mut b = std::mem::take(s).into_boxed_str();
        fix(&mut b);
        *s = b.into();
    }
    model.type_names.iter_mut().for_each(fix);
    if let Some(labels) = &mut model.labels {
        labels.names.iter_mut().for_each(fix);
    }
    // As the labels, so that a field's name and its reference's label
    // stay equal.
    if let Some(classes) = &mut model.java_classes {
        classes.names_mut().for_each(fix);
    }
    for d in &mut model.app_domains {
        fix_string(&mut d.name);
        fix_string(&mut d.version);
        if let Some(stamp) = &mut d.stamp {
            fix_string(stamp);
        }
    }
    model.diagnostics.messages.iter_mut().for_each(fix_string);
    for (k, v) in &mut model.details {
        fix_string(k);
        fix_string(v);
    }
    for t in &mut model.root_places.threads {
        fix(&mut t.name);
    }
    model.root_places.frames.iter_mut().for_each(fix);
}

/// Type and label names longer than this (no runtime writes one; a broken
/// or hostile dump may hold megabytes) keep their head and tail: every
/// screen and report line that shows a name then costs a bounded amount.
pub const MAX_NAME_BYTES: usize = 4096;

/// `name` cut to its first and last ~2 KiB around a marker with the
/// length, at character boundaries.
fn shortened(name: &str) -> Box<str> {
    let keep = MAX_NAME_BYTES / 2 - 64;
    let mut head = keep;
    while !name.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = name.len() - keep;
    while !name.is_char_boundary(tail) {
        tail += 1;
    }
    format!("{}…[{} bytes]…{}", &name[..head], name.len(), &name[tail..]).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn megabyte_names_keep_their_head_and_tail() {
        let name = format!("{}{}", "é".repeat(300_000), "Tail.Type");
        let s = shortened(&name);
        assert!(s.len() <= MAX_NAME_BYTES, "{}", s.len());
        assert!(s.starts_with("éé") && s.ends_with("Tail.Type"));
        assert!(s.contains(&format!("…[{} bytes]…", name.len())));
        let mut m = Model {
            type_names: vec!["Small".into(), name.into()],
            ..Model::default()
        };
        make_printable(&mut m);
        assert_eq!(&*m.type_names[0], "Small");
        assert_eq!(m.type_names[1], s);
    }

    #[test]
    fn formats_are_told_by_their_first_bytes() {
        assert_eq!(detect(b"!FastSerialization.1\0"), Format::Gcdump);
        assert_eq!(
            detect(b"\x14\0\0\0!FastSerialization.1\x04"),
            Format::Gcdump
        );
        assert_eq!(detect(b"JAVA PROFILE 1.0.2\0"), Format::Hprof);
        assert_eq!(detect(b"{\"snapshot\":{\"meta\""), Format::Heapsnapshot);
        assert_eq!(detect(b"  \n{ \"snapshot\" :"), Format::Heapsnapshot);
        assert_eq!(detect(b"{\"other\":1}"), Format::Rpm);
        assert_eq!(detect(b"a 1 app.exe\n"), Format::Rpm);
        assert_eq!(detect(b""), Format::Rpm);
    }

    #[test]
    fn gzip_of_a_text_dump_is_read_as_the_text_dump() {
        use std::io::Write;
        let text = b"t 1 Foo\no 10 1 20\nr 10 1 0\n";
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(text).unwrap();
        let z = e.finish().unwrap();
        let m = import_bytes(Path::new("d.txt.gz"), &z).unwrap();
        assert_eq!(m.format, Format::Rpm);
        assert_eq!(m.objects(), 1);
        assert_eq!(m.file_bytes, z.len() as u64);
        let cut = import_bytes(Path::new("d.txt.gz"), &z[..z.len() - 9]).unwrap();
        assert_eq!(cut.diagnostics.skipped_lines, 1, "{:?}", cut.diagnostics);
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(&z).unwrap();
        assert!(import_bytes(Path::new("d.gz.gz"), &e.finish().unwrap()).is_err());
    }
}
