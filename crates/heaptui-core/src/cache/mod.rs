//! The reopen cache (docs/ui.md "Reopening"): after the first analysis of a
//! dump, its arrays (graph, dominators, retained sizes, type statistics,
//! duplicate sets and holders, diagnostics) go to a file in the user's cache
//! directory; opening the same dump again maps them back instead of
//! analysing. The file is keyed by the dump's identity (path, device and
//! inode, size, modification and change times, hashes of its first and
//! last MiB and of 256 pieces of 4 KiB spread between), the build of
//! heaptui and the duplicate options; it is written atomically (a temporary
//! file, then a rename) and never trusted (see [`codec`]): a stale, truncated
//! or corrupt file is noted in one line, removed and rebuilt. It is read in
//! two steps: the graph and the dominator tree, checked, are handed over
//! (the first screen) before the duplicate sets are read and checked; sets
//! that fail their check are detected again from the checked rest. A file
//! over the memory budget has its pages dropped as it is checked and at
//! every checkpoint after, so reading it stays near the budget. The directory
//! is capped in size, least recently used first out; the file just
//! written is never removed by its own write, so a heap whose cache alone
//! is over the cap still reopens at once. The dump itself is never written.
//!
//! May import `analysis` and everything below it.

mod codec;
mod layout;
mod tree;

use std::fs::File;
use std::hash::{Hash, Hasher};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use crate::analysis::compare;
use crate::analysis::pipeline::{self, Input, StageResult};
use crate::analysis::{Analysis, AnalysisError};
use crate::graph::duplicates::DuplicateOptions;
use crate::import::ImportOptions;
use crate::progress::{Progress, Stage};

pub use layout::Corrupt;

/// Where the cache lives and what it keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheOptions {
    /// The directory holding the cache files.
    pub dir: PathBuf,
    /// Dumps smaller than this are not cached: they analyse in well under
    /// the time reading a cache takes to pay off.
    pub min_file_bytes: u64,
    /// The directory's size cap; least recently used files go first.
    pub max_bytes: u64,
}

impl CacheOptions {
    /// `$XDG_CACHE_HOME/heaptui`, else `~/.cache/heaptui`; `None` when
    /// neither variable is set. `HEAPTUI_CACHE_MIN` and `HEAPTUI_CACHE_MAX`
    /// (bytes) override the size limits.
    pub fn from_env() -> Option<CacheOptions> {
        let base = std::env::var_os("XDG_CACHE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))?;
        let number = |name: &str, default: u64| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(default)
        };
        Some(CacheOptions {
            dir: base.join("heaptui"),
            min_file_bytes: number("HEAPTUI_CACHE_MIN", 32 << 20),
            max_bytes: number("HEAPTUI_CACHE_MAX", 16 << 30),
        })
    }
}

/// Where one-line cache notes go (standard error for the report, the log
/// or the status line for the UI).
pub type Note = Arc<dyn Fn(String) + Send + Sync>;

/// A cache file being written in the background; wait for it before the
/// process exits.
pub struct Pending(Vec<std::thread::JoinHandle<()>>);

impl Pending {
    /// Nothing to wait for.
    pub fn none() -> Pending {
        Pending(Vec::new())
    }

    /// Blocks until every cache write in flight is on disk.
    pub fn wait(self) {
        for t in self.0 {
            let _ = t.join();
        }
    }

    fn finished(&self) -> bool {
        self.0.iter().all(|t| t.is_finished())
    }
}

/// Cache writes handed over by the UI's worker, which does not outlive the
/// UI: the process waits for them before it exits ([`finish_writes`]).
static AT_EXIT: std::sync::Mutex<Vec<Pending>> = std::sync::Mutex::new(Vec::new());

/// Hands a background cache write over to be finished before the process
/// exits: quitting the UI right after the analysis would otherwise cut the
/// write short, and the next open would analyse the dump again.
pub fn finish_at_exit(p: Pending) {
    if !p.0.is_empty() {
        AT_EXIT.lock().unwrap_or_else(|e| e.into_inner()).push(p);
    }
}

/// Waits for the writes handed to [`finish_at_exit`]. When one is still
/// under way, `waiting` is called once (to say so); `stop` is polled every
/// 50 ms and ends the wait early (the unfinished temporary file is removed
/// by a later prune). Returns whether every write finished.
pub fn finish_writes(waiting: &dyn Fn(), stop: &dyn Fn() -> bool) -> bool {
    let pending: Vec<Pending> =
        std::mem::take(&mut *AT_EXIT.lock().unwrap_or_else(|e| e.into_inner()));
    if pending.iter().all(Pending::finished) {
        pending.into_iter().for_each(Pending::wait);
        return true;
    }
    waiting();
    while !pending.iter().all(Pending::finished) {
        if stop() {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    pending.into_iter().for_each(Pending::wait);
    true
}

/// Analyses `files` (oldest first, the newest last) through the cache, each
/// as [`run`] does, and compares them ([`compare::compare_files_with`]: in
/// parallel where the memory allows). Returns the comparison, the newest
/// snapshot's analysis, and the cache writes still under way.
pub fn compare_files(
    files: &[PathBuf],
    import: ImportOptions,
    options: &DuplicateOptions,
    cache: Option<&CacheOptions>,
    progress: &Progress,
    schedule: compare::Schedule,
    note: Note,
) -> Result<(compare::Comparison, Analysis, Pending), AnalysisError> {
    let pending = std::sync::Mutex::new(Vec::new());
    let analyse = |path: &Path, progress: &Progress| {
        let input = Input::File(path.to_path_buf(), import);
        let (a, p) = run(
            &input,
            options,
            cache,
            progress,
            &mut |_| true,
            note.clone(),
        )?;
        pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(p.0);
        Ok(a)
    };
    let (c, a) = compare::compare_files_with(files, schedule, progress, &analyse)?;
    let pending = pending.into_inner().unwrap_or_else(|e| e.into_inner());
    Ok((c, a, Pending(pending)))
}

/// Runs the analysis pipeline through the cache: a valid cache file of the
/// dump is read back (its stages handed to `observe` at once); otherwise the
/// pipeline runs and its result is stored on a background thread. `note`
/// receives one line per cache event worth telling (a file ignored and
/// rebuilt, a write that failed).
pub fn run(
    input: &Input,
    options: &DuplicateOptions,
    cache: Option<&CacheOptions>,
    progress: &Progress,
    observe: &mut dyn FnMut(StageResult) -> bool,
    note: Note,
) -> Result<(Analysis, Pending), AnalysisError> {
    let _busy = crate::mem::busy();
    let place = match (input, cache) {
        (Input::File(path, import), Some(cache)) => Place::of(path, *import, options, cache),
        _ => None,
    };
    let Some(place) = place else {
        let a = pipeline::run(input, options, progress, observe)?;
        return Ok((a, Pending::none()));
    };
    match place.load(progress, observe) {
        Ok(Loaded::Read(a)) => return Ok((a, Pending::none())),
        Ok(Loaded::Missing) => {}
        Ok(Loaded::WithoutDuplicates(d, why, read_ms)) => {
            return place.repair((d, read_ms), why, options, progress, observe, note)
        }
        Err(Corrupt(why)) => {
            (*note)(format!(
                "cache {}: {why}; analysing the dump again",
                crate::model::text::printable_path(&place.file)
            ));
            let _ = std::fs::remove_file(&place.file);
        }
    }
    let a = pipeline::run(input, options, progress, observe)?;
    let stored = a.clone();
    Ok((a, place.store_in_background(stored, note)))
}

/// Reads a whole cache file held in memory, written for the key `fuzz`
/// (the fuzz target's entry: every check of a real load runs).
#[cfg(feature = "testing")]
pub(crate) fn decode_bytes(bytes: &[u8]) -> Result<Analysis, Corrupt> {
    let bytes = bytes.to_vec();
    let input: &dyn layout::Input = &bytes;
    let reader = layout::Reader::open(input, b"fuzz")?;
    codec::decode(&reader, Path::new("fuzz"))
}

/// What reading a cache file gave.
enum Loaded {
    /// There is none.
    Missing,
    /// The whole analysis, every section checked.
    Read(Analysis),
    /// Every section checked but the duplicate sets', which were refused
    /// after the first stages were handed over (read in `u64` ms).
    WithoutDuplicates(codec::Dominated, Corrupt, u64),
}

/// Maps a cache file; whether it is over the memory budget, in which case
/// its pages leave the resident set as each section is checked and at
/// every checkpoint after (the spill's): what the report or the UI reads
/// comes back from the page cache as it is read.
fn map_within_budget(path: &Path, file: &File) -> Result<(layout::Mapped, bool), Corrupt> {
    // Sections are used where they lie in the map. heaptui replaces a
    // cache file by renaming a new one over it and removes one by
    // unlinking, both harmless to a map; only another program cutting the
    // file short could raise SIGBUS, which the handler turns into a
    // message.
    crate::mem::guard::install_sigbus_handler();
    crate::mem::guard::remember_mapped_cache(path);
    let map =
        crate::mem::map::map_file(file).or_else(|e| layout::corrupt(format!("cannot map: {e}")))?;
    let map = Arc::new(map);
    let over_budget = !crate::mem::budget::get().fits(map.len() as u64);
    if over_budget {
        crate::mem::spill::track(&map);
    }
    Ok((layout::Mapped(map), over_budget))
}

/// A dump's cache file and the key it must carry.
struct Place {
    dump: PathBuf,
    file: PathBuf,
    key: Vec<u8>,
    cache: CacheOptions,
}

impl Place {
    fn of(
        dump: &Path,
        import: ImportOptions,
        options: &DuplicateOptions,
        cache: &CacheOptions,
    ) -> Option<Place> {
        let meta = std::fs::metadata(dump).ok()?;
        if !meta.is_file() || meta.len() < cache.min_file_bytes {
            return None;
        }
        let key = key(dump, &meta, import, options)?;
        // The file is named by what stays when the dump is written again or
        // heaptui is rebuilt (the path and the options): a newer version
        // replaces the stale file instead of piling up beside it. The full
        // key inside the file decides whether it is used.
        let mut h = std::collections::hash_map::DefaultHasher::new();
        std::fs::canonicalize(dump).ok()?.hash(&mut h);
        format!("{:?} {:?}", options, import).hash(&mut h);
        Some(Place {
            dump: dump.to_path_buf(),
            file: cache.dir.join(format!("{:016x}.cache", h.finish())),
            key,
            cache: cache.clone(),
        })
    }

    /// The analysis read back, its stages handed to `observe` as they are
    /// checked: the graph and the dominator tree (the first screen) before
    /// the duplicate sets are read. `Missing` when there is no cache file.
    fn load(
        &self,
        progress: &Progress,
        observe: &mut dyn FnMut(StageResult) -> bool,
    ) -> Result<Loaded, Corrupt> {
        let t = Instant::now();
        let Some(file) = open_regular(&self.file)? else {
            return Ok(Loaded::Missing);
        };
        progress.start(Stage::Parse, 1);
        let (input, over_budget) = map_within_budget(&self.file, &file)?;
        let input: &dyn layout::Input = &input;
        let mut reader = layout::Reader::open(input, &self.key)?;
        if over_budget {
            reader.release_checked();
        }
        let d = codec::decode_dominated(&reader, &self.dump)?;
        let ms = t.elapsed().as_millis() as u64;
        tracing::debug!(target: "heaptui::profile", "cache: first stages checked in {ms} ms");
        let listening = observe(StageResult::Imported { ms, cached: true })
            && observe(StageResult::Graph {
                graph: d.graph.clone(),
                ms: 0,
            })
            && observe(StageResult::Dominators {
                dom: d.dom.clone(),
                types: d.types.clone(),
                roots: d.roots.clone(),
                largest: d.largest.clone(),
                summary: d.summary.clone(),
                ms: 0,
            });
        // The first screen is up; the duplicate sets are checked now, and
        // shown once they hold.
        let duplicates = match codec::decode_duplicates_of(&reader, &d) {
            Ok(dups) => Arc::new(dups),
            Err(why) => return Ok(Loaded::WithoutDuplicates(d, why, ms)),
        };
        crate::mem::checkpoint("cache read");
        let mut a = d.with(duplicates);
        a.timings.parse_ms = t.elapsed().as_millis() as u64;
        a.timings.cached = true;
        // Least recently used goes first: a hit makes the file young again.
        let _ = file.set_modified(SystemTime::now());
        progress.start(Stage::Done, 1);
        if listening {
            observe(StageResult::Duplicates {
                duplicates: a.duplicates.clone(),
                ms: 0,
            });
        }
        Ok(Loaded::Read(a))
    }

    /// The analysis of `d` (read back in `read_ms`, but for its duplicate
    /// sets, which the cache file had wrong: `why`), with the sets detected
    /// again and handed to `observe`; the file is written again in the
    /// background.
    fn repair(
        self,
        (d, read_ms): (codec::Dominated, u64),
        Corrupt(why): Corrupt,
        options: &DuplicateOptions,
        progress: &Progress,
        observe: &mut dyn FnMut(StageResult) -> bool,
        note: Note,
    ) -> Result<(Analysis, Pending), AnalysisError> {
        (*note)(format!(
            "cache {}: {why}; detecting the duplicate sets again (the rest was checked)",
            crate::model::text::printable_path(&self.file)
        ));
        let _ = std::fs::remove_file(&self.file);
        let t = Instant::now();
        let duplicates =
            crate::graph::duplicates::find_duplicates(&d.graph, &*d.dom, options, progress)?;
        let duplicates = Arc::new(duplicates);
        let ms = t.elapsed().as_millis() as u64;
        progress.start(Stage::Done, 1);
        observe(StageResult::Duplicates {
            duplicates: duplicates.clone(),
            ms,
        });
        let mut a = d.with(duplicates);
        a.timings.parse_ms = read_ms;
        a.timings.duplicates_ms = ms;
        let stored = a.clone();
        Ok((a, self.store_in_background(stored, note)))
    }

    fn store_in_background(self, a: Analysis, note: Note) -> Pending {
        let thread = std::thread::Builder::new()
            .name("heaptui-cache".into())
            .spawn(move || {
                let first_use = !self.cache.dir.exists();
                match self.store(&a) {
                    Err(e) => note(format!(
                        "cache {}: not written: {e}",
                        crate::model::text::printable_path(&self.file)
                    )),
                    Ok(()) if first_use => note(self.first_use_note()),
                    Ok(()) => {}
                }
                prune_keeping(&self.cache, Some(&self.file));
            });
        Pending(thread.ok().into_iter().collect())
    }

    /// What a user is told when the cache directory is first made: where
    /// it is, what this analysis took there, and its cap.
    fn first_use_note(&self) -> String {
        let size = std::fs::metadata(&self.file).map_or(0, |m| m.len());
        let dump = std::fs::metadata(&self.dump).map_or(0, |m| m.len());
        let ratio = match dump {
            0 => String::new(),
            d => format!(", {:.1} × the dump", size as f64 / d as f64),
        };
        format!(
            "kept this analysis ({}{ratio}) in {} to reopen the dump at once; \
             the directory is kept under {} (HEAPTUI_CACHE_MAX), least recently used first out \
             (the file just written stays even alone over it); \
             --no-cache neither reads nor writes it",
            humansize::format_size(size, humansize::BINARY),
            crate::model::text::printable_path(&self.cache.dir),
            humansize::format_size(self.cache.max_bytes, humansize::BINARY),
        )
    }

    /// Writes a temporary file next to the final one, then renames it.
    fn store(&self, a: &Analysis) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.cache.dir)?;
        let tmp = self.cache.dir.join(format!(
            ".tmp-{}-{:x}",
            std::process::id(),
            SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        ));
        let result = (|| {
            let mut file = File::create(&tmp)?;
            let disk = file.try_clone()?;
            let out: &mut dyn std::io::Write = &mut file;
            let mut w = layout::Writer::new(out, &self.key)?;
            w.check_free_disk(move || crate::mem::map::free_disk_bytes(&disk));
            codec::encode(&mut w, a)?;
            w.finish()?;
            file.sync_all()?;
            std::fs::rename(&tmp, &self.file)
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result
    }
}

/// Opens `path` for reading if it is a regular file (after symbolic
/// links): `Ok(None)` where there is none. Opened without blocking, so a
/// FIFO or a device put there cannot stall the open, then refused.
fn open_regular(path: &Path) -> Result<Option<File>, Corrupt> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return layout::corrupt(format!("cannot open: {e}")),
    };
    match file.metadata() {
        Ok(m) if m.is_file() => Ok(Some(file)),
        Ok(_) => layout::corrupt("not a regular file"),
        Err(e) => layout::corrupt(format!("cannot read its metadata: {e}")),
    }
}

/// Identity of the dump and of this build, and the options that shape the
/// result.
fn key(
    dump: &Path,
    meta: &std::fs::Metadata,
    import: ImportOptions,
    options: &DuplicateOptions,
) -> Option<Vec<u8>> {
    let path = std::fs::canonicalize(dump).ok()?;
    let mtime = meta
        .modified()
        .ok()?
        .duration_since(SystemTime::UNIX_EPOCH)
        .ok()?
        .as_nanos();
    let file = open_regular(dump).ok()??;
    let mib = 1u64 << 20;
    let edge = |at: u64| {
        let mut buf = vec![0u8; mib.min(meta.len()) as usize];
        file.read_exact_at(&mut buf, at).ok()?;
        Some(crc32fast::hash(&buf))
    };
    let head = edge(0)?;
    let tail = edge(meta.len().saturating_sub(mib))?;
    // And 256 pieces of 4 KiB spread over the rest: a change in the middle
    // that keeps the size and the modification time is likely seen even
    // where the inode's change time is not kept (a copy, another machine).
    let mut samples = crc32fast::Hasher::new();
    let mut piece = vec![0u8; 4096.min(meta.len()) as usize];
    for k in 0..256u64 {
        let at = (meta.len() - piece.len() as u64) / 256 * k;
        file.read_exact_at(&mut piece, at).ok()?;
        samples.update(&piece);
    }
    let samples = samples.finalize();
    use std::os::unix::fs::MetadataExt;
    let inode = format!(
        "{}:{}:{}.{:09}",
        meta.dev(),
        meta.ino(),
        meta.ctime(),
        meta.ctime_nsec()
    );
    let exe = std::env::current_exe()
        .and_then(std::fs::metadata)
        .ok()
        .map(|m| {
            let t = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok());
            format!("{}:{}", m.len(), t.map_or(0, |t| t.as_nanos()))
        })
        .unwrap_or_default();
    let text = format!(
        "{}\0{}\0{mtime}\0{inode}\0{head:08x}\0{tail:08x}\0{samples:08x}\0{} {exe}\0{:?}\0{:?}\0{:?}",
        path.display(),
        meta.len(),
        env!("CARGO_PKG_VERSION"),
        options.mode,
        options.budget_per_type,
        import,
    );
    Some(text.into_bytes())
}

/// Keeps the directory under its cap, least recently used first out.
/// Temporary files count against the cap; those of writers no longer
/// running (named by their process id) go at once, any older than an
/// hour too.
pub fn prune(cache: &CacheOptions) {
    prune_keeping(cache, None)
}

/// [`prune`], never removing `keep` (the file just written): a dump whose
/// cache alone is over the cap (a 300-million-object heap's takes about
/// 20 GB, over the 16 GiB default) keeps it until another dump's arrives,
/// which then pushes it out first if it is the least recently used.
fn prune_keeping(cache: &CacheOptions, keep: Option<&Path>) {
    let Ok(entries) = std::fs::read_dir(&cache.dir) else {
        return;
    };
    let now = SystemTime::now();
    let mut files: Vec<(SystemTime, u64, PathBuf)> = Vec::new();
    // Bytes that stay whatever the cap: running writers' temporary files
    // and `keep`.
    let mut staying = 0u64;
    for e in entries.flatten() {
        let (Ok(meta), path) = (e.metadata(), e.path()) else {
            continue;
        };
        let modified = meta.modified().unwrap_or(now);
        let name = e.file_name();
        let name = name.to_string_lossy();
        if let Some(rest) = name.strip_prefix(".tmp-") {
            let old = now
                .duration_since(modified)
                .is_ok_and(|d| d.as_secs() > 3600);
            // Where /proc lists the processes, a writer that is not
            // there is gone.
            let writer = rest.split('-').next().and_then(|p| p.parse::<u32>().ok());
            let dead = Path::new("/proc/self").exists()
                && writer.is_none_or(|p| !Path::new("/proc").join(p.to_string()).exists());
            if !(old || dead) || std::fs::remove_file(&path).is_err() {
                staying += meta.len();
            }
        } else if name.ends_with(".cache") && meta.is_file() {
            if Some(&*path) == keep {
                // Counted, never removed.
                staying += meta.len();
            } else {
                files.push((modified, meta.len(), path));
            }
        }
    }
    files.sort();
    let mut total: u64 = staying + files.iter().map(|f| f.1).sum::<u64>();
    for (_, len, path) in files {
        if total <= cache.max_bytes {
            break;
        }
        if std::fs::remove_file(&path).is_ok() {
            total -= len;
        }
    }
}
