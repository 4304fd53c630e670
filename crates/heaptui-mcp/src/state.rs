//! The analysis behind the tools: run once, on a thread of its own, through
//! the reopen cache (as `heaptui report` runs it), while the server already
//! answers. A call meanwhile sees [`Phase::Loading`] and its progress; a
//! dump that fails to analyse is [`Phase::Failed`] for good, its message
//! logged once.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use heaptui_core::analysis::pipeline::Input;
use heaptui_core::analysis::Analysis;
use heaptui_core::analysis::{default_owner_globs, duplicate_owners, Owners};
use heaptui_core::analysis::{suspects, Suspect};
use heaptui_core::analysis::{Comparison, Schedule};
use heaptui_core::cache::{self, CacheOptions, Pending};
use heaptui_core::graph::duplicates::DuplicateOptions;
use heaptui_core::import::ImportOptions;
use heaptui_core::model::{ObjectIdx, TypeIdx};
use heaptui_core::progress::Progress;

/// What the server analyses: the dumps named on its command line.
#[derive(Debug, Clone)]
pub struct Config {
    /// Oldest first; the last is analysed and compared with the others.
    pub dumps: Vec<PathBuf>,
    /// How the dumps are read (`--compressed-refs`, `--references`).
    pub import: ImportOptions,
    /// Duplicate detection's mode and budget.
    pub duplicates: DuplicateOptions,
    /// The reopen cache (`None`: `--no-cache`).
    pub cache: Option<CacheOptions>,
    /// Answer with shapes, types and sizes only: no string contents, no
    /// field values, no thread names, no diagnostics' quotes of the dump.
    pub redact: bool,
}

/// A finished analysis and what the tools derive from it once.
pub struct Loaded {
    /// The newest snapshot's analysis.
    pub analysis: Analysis,
    /// With older snapshots: the comparison.
    pub comparison: Option<Comparison>,
    suspects: OnceLock<Vec<Suspect>>,
    changed: OnceLock<Vec<u32>>,
    by_type: OnceLock<ByType>,
    owners: OnceLock<Owners>,
}

/// Every object grouped by type, in index order within a type: the
/// instances of type `t` are `objects[starts[t]..starts[t + 1]]`. 4 bytes
/// an object, built by one counting pass on first use.
struct ByType {
    starts: Vec<usize>,
    objects: Vec<ObjectIdx>,
}

impl Loaded {
    /// A loaded analysis (and comparison).
    pub fn new(analysis: Analysis, comparison: Option<Comparison>) -> Loaded {
        Loaded {
            analysis,
            comparison,
            suspects: OnceLock::new(),
            changed: OnceLock::new(),
            by_type: OnceLock::new(),
            owners: OnceLock::new(),
        }
    }

    /// The instances of type `t`, in index order (the index of every
    /// type is built on the first call).
    pub fn instances_of(&self, t: TypeIdx) -> &[ObjectIdx] {
        let b = self.by_type.get_or_init(|| {
            let dump = self.analysis.dump();
            let mut starts = vec![0usize; dump.type_names.len() + 1];
            for o in dump.object_indices() {
                starts[dump.type_of(o).index() + 1] += 1;
            }
            for i in 1..starts.len() {
                starts[i] += starts[i - 1];
            }
            let mut next = starts.clone();
            let mut objects = vec![ObjectIdx(0); dump.objects()];
            for o in dump.object_indices() {
                let t = dump.type_of(o).index();
                objects[next[t]] = o;
                next[t] += 1;
            }
            ByType { starts, objects }
        });
        match (b.starts.get(t.index()), b.starts.get(t.index() + 1)) {
            (Some(&from), Some(&to)) => &b.objects[from..to],
            _ => &[],
        }
    }

    /// The duplicate owners cut at the format's default exclude patterns
    /// (as the report's without `--owner-skip`), computed on first use.
    pub fn default_owners(&self) -> &Owners {
        self.owners.get_or_init(|| {
            let a = &self.analysis;
            let exclude = default_owner_globs(a.dump().format);
            duplicate_owners(a.dump(), &a.dom, &a.duplicates, &exclude)
        })
    }

    /// The leak suspects (with growth suspects in a comparison), computed
    /// on first use.
    pub fn suspects(&self) -> &[Suspect] {
        self.suspects
            .get_or_init(|| suspects(&self.analysis, self.comparison.as_ref()))
    }

    /// The comparison's changed type paths, those growing at every step
    /// first, each part by growth descending; computed on first use.
    pub fn changed_paths(&self) -> &[u32] {
        self.changed.get_or_init(|| {
            let Some(c) = &self.comparison else {
                return Vec::new();
            };
            let mut rows = c.changed_paths();
            rows.sort_by_key(|&r| !c.paths.grows_steadily(r));
            rows
        })
    }
}

/// Where the analysis stands.
#[derive(Clone)]
pub enum Phase {
    /// Still running: its progress.
    Loading,
    /// Done.
    Ready(Arc<Loaded>),
    /// Failed: why, as one line.
    Failed(String),
}

/// The analysis as the server shares it between calls.
pub struct Shared {
    /// The running analysis's stage and fraction.
    pub progress: Progress,
    phase: Mutex<Phase>,
}

impl Shared {
    /// The phase now.
    pub fn phase(&self) -> Phase {
        self.phase.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn set(&self, phase: Phase) {
        *self.phase.lock().unwrap_or_else(|e| e.into_inner()) = phase;
    }

    /// A state already loaded (tests).
    pub fn ready(loaded: Loaded) -> Arc<Shared> {
        Arc::new(Shared {
            progress: Progress::new(),
            phase: Mutex::new(Phase::Ready(Arc::new(loaded))),
        })
    }
}

/// Starts the analysis of `config`'s dumps on a thread of its own. The
/// returned handle ends when the analysis and the cache writes it started
/// are done; join it before exiting so that the next start reopens at once.
pub fn start(config: &Config) -> (Arc<Shared>, std::thread::JoinHandle<()>) {
    let shared = Arc::new(Shared {
        progress: Progress::new(),
        phase: Mutex::new(Phase::Loading),
    });
    let (s, config) = (shared.clone(), config.clone());
    let thread = std::thread::Builder::new()
        .name("analysis".into())
        .spawn(move || {
            let started = std::time::Instant::now();
            match analyse(&config, &s.progress) {
                Ok((loaded, pending)) => {
                    tracing::info!(ms = started.elapsed().as_millis() as u64, "mcp: analysed");
                    let loaded = Arc::new(loaded);
                    s.set(Phase::Ready(loaded.clone()));
                    // A reference of a row of more than 64 (an array's
                    // element) is named by a binary search once this index
                    // exists, by a bounded scan until then.
                    loaded.analysis.graph.dump.index_labels();
                    pending.wait();
                }
                // Cancelled: the client closed the session while it loaded,
                // which is no failure to report.
                Err(_) if s.progress.is_cancelled() => {
                    tracing::info!("mcp: the analysis was cancelled");
                }
                Err(message) => {
                    tracing::error!("mcp: {message}");
                    eprintln!("heaptui: {message}");
                    s.set(Phase::Failed(message));
                }
            }
        });
    match thread {
        Ok(t) => (shared, t),
        Err(e) => {
            shared.set(Phase::Failed(format!("could not start the analysis: {e}")));
            (shared, std::thread::spawn(|| {}))
        }
    }
}

/// The analysis (and comparison) of the dumps, as `heaptui report` runs it.
fn analyse(config: &Config, progress: &Progress) -> Result<(Loaded, Pending), String> {
    let note: cache::Note = Arc::new(|line| tracing::info!("mcp: {line}"));
    let cache = config.cache.as_ref();
    let result = match config.dumps.as_slice() {
        [] => return Err("no heap dump to analyse".into()),
        [one] => {
            let input = Input::File(one.clone(), config.import);
            cache::run(
                &input,
                &config.duplicates,
                cache,
                progress,
                &mut |_| true,
                note,
            )
            .map(|(a, p)| (Loaded::new(a, None), p))
        }
        files => cache::compare_files(
            files,
            config.import,
            &config.duplicates,
            cache,
            progress,
            Schedule::Auto,
            note,
        )
        .map(|(c, a, p)| (Loaded::new(a, Some(c)), p)),
    };
    result.map_err(|e| format!("the analysis failed: {e}"))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::Loaded;
    use heaptui_core::analysis::Analysis;
    use heaptui_core::graph::duplicates::DuplicateOptions;

    /// The bundled demo heap, analysed (the answers' unit tests).
    pub(crate) fn demo() -> Loaded {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/demo.dump.txt");
        let bytes = std::fs::read(path).unwrap();
        let a =
            Analysis::from_bytes("demo.dump.txt", &bytes, &DuplicateOptions::default()).unwrap();
        Loaded::new(a, None)
    }
}
