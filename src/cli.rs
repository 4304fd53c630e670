//! Command-line arguments in two stages, as ripgrep does: clap parses the
//! raw flags ([`Cli`]), then [`Run::try_from`] validates them once into the
//! configuration `main` runs. Nothing after that stage re-reads a flag.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use heaptui_core::analysis::Glob;
use heaptui_core::analysis::Schedule;
use heaptui_core::cache::CacheOptions;
use heaptui_core::graph::duplicates::{DuplicateMode, DuplicateOptions};
use heaptui_core::import::{ImportOptions, References};
use heaptui_core::mem::budget::{self, Budget};
use heaptui_core::report::{parse_size, PathsQuery, ReportOptions};

#[derive(Debug, Parser)]
#[command(
    name = "heaptui",
    version,
    about = "Explore GC heap dumps in the terminal: who retains the memory, and what is wasted on copies",
    after_help = "Without a terminal, use `heaptui report DUMP` (text) or `heaptui report DUMP --json`.\n\
                  Compare snapshots: `heaptui report NEW --baseline OLD [--fail-if-grows 10MB]`."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// The heap dump to open (RPM text, .NET gcdump, HPROF, V8 snapshot).
    /// Several dumps of one program, oldest first: the last is opened and
    /// the others are its baselines.
    #[arg(value_name = "DUMP")]
    pub dumps: Vec<PathBuf>,

    /// Open the built-in sample heap instead of a file.
    #[arg(long)]
    pub demo: bool,

    /// Open the built-in series of three snapshots of a leaking program:
    /// the newest, compared with the two older ones.
    #[arg(long, conflicts_with = "demo")]
    pub demo_compare: bool,

    /// Draw with ASCII only (automatic when the locale is not UTF-8).
    #[arg(long)]
    pub ascii: bool,

    /// Neither read nor write the reopen cache ($XDG_CACHE_HOME/heaptui,
    /// else ~/.cache/heaptui), which makes a dump of 32 MiB or more that
    /// was analysed before open at once.
    #[arg(long, global = true)]
    pub no_cache: bool,

    /// The memory one analysis may hold: a size (4G, 400MB, 512MiB) or
    /// `none`. A heap whose analysis would need more puts its big arrays
    /// in files in the cache directory, read back as they are needed:
    /// slower, with the same results. Default: 3/4 of the memory
    /// available (MemAvailable, or the cgroup's limit where lower).
    #[arg(long, global = true, value_name = "SIZE", value_parser = parse_memory)]
    pub memory: Option<Budget>,

    #[command(flatten)]
    pub duplicates: DuplicateArgs,

    /// HPROF: size objects as a 64-bit JVM with compressed references does
    /// (12-byte headers, 4-byte references), as Eclipse MAT's option,
    /// rather than by the layout found in the dump.
    #[arg(long, global = true, conflicts_with = "model_sizes")]
    pub compressed_refs: bool,

    /// HPROF: size objects by the field model of the identifier size (8-
    /// or 16-byte headers, as Eclipse MAT does by default) rather than by
    /// the layout found in the dump.
    #[arg(long, global = true)]
    pub model_sizes: bool,

    /// HPROF: which references retain. `strong` (the default): the
    /// referent of a soft, weak, final or phantom reference retains
    /// nothing, as for the garbage collector. `all`: referents retain as
    /// fields do (what clearing those references would free).
    #[arg(long, global = true, value_name = "WHICH", value_enum, default_value_t = ReferencesArg::Strong)]
    pub references: ReferencesArg,
}

/// `--references`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReferencesArg {
    /// Only strong references retain.
    Strong,
    /// Referents of java.lang.ref.Reference objects retain too.
    All,
}

impl From<ReferencesArg> for References {
    fn from(a: ReferencesArg) -> References {
        match a {
            ReferencesArg::Strong => References::Strong,
            ReferencesArg::All => References::All,
        }
    }
}

/// `--duplicates` (docs/duplicates.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DuplicatesArg {
    /// No duplicate detection.
    None,
    /// Only sets whose members reference nothing (cheap).
    Trivial,
    /// Full detection (the default).
    All,
}

impl From<DuplicatesArg> for DuplicateMode {
    fn from(a: DuplicatesArg) -> DuplicateMode {
        match a {
            DuplicatesArg::None => DuplicateMode::None,
            DuplicatesArg::Trivial => DuplicateMode::Trivial,
            DuplicatesArg::All => DuplicateMode::All,
        }
    }
}

/// `--schedule` of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScheduleArg {
    /// In parallel where the available memory allows it.
    Auto,
    /// All snapshots at once.
    Parallel,
    /// One after another: the memory of one analysis.
    Sequential,
}

#[derive(Debug, Clone, Args)]
pub struct DuplicateArgs {
    /// Which duplicate instances to detect.
    #[arg(long = "duplicates", value_name = "MODE", value_enum, default_value_t = DuplicatesArg::All)]
    pub mode: DuplicatesArg,

    /// Work allowed per type for full duplicate detection (object pairs
    /// compared); undecided instances are shown as possible duplicates, to
    /// be finished on request. The default never binds on ordinary heaps and
    /// stops pathological ones (long copied chains) from running for
    /// minutes. 0 = no limit.
    #[arg(long = "duplicate-budget", value_name = "N", default_value_t = DEFAULT_DUPLICATE_BUDGET)]
    pub budget: u64,
}

pub const DEFAULT_DUPLICATE_BUDGET: u64 = heaptui_core::graph::duplicates::DEFAULT_BUDGET_PER_TYPE;

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the analysis without a terminal UI (text, or JSON with --json).
    Report(Box<ReportArgs>),
    /// Print a shell completion script, e.g.
    /// `heaptui completions bash > ~/.local/share/bash-completion/completions/heaptui`.
    Completions {
        /// The shell to complete for.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff), e.g. `heaptui man | man -l -`.
    Man,
    /// Serve the analysis to a coding assistant: a Model Context Protocol
    /// server on standard input and output (docs/mcp.md).
    #[cfg(feature = "mcp")]
    Mcp(McpArgs),
    /// `heaptui mcp` in a build without the server: says how to get it.
    #[cfg(not(feature = "mcp"))]
    #[command(name = "mcp", hide = true, disable_help_flag = true)]
    McpMissing {
        /// Whatever followed `mcp`.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        rest: Vec<std::ffi::OsString>,
    },
}

/// `heaptui mcp`.
#[cfg(feature = "mcp")]
#[derive(Debug, Args)]
pub struct McpArgs {
    /// The heap dump to serve; several dumps of one program, oldest first:
    /// the last is served and compared with the others.
    #[arg(value_name = "DUMP", required = true)]
    pub dumps: Vec<PathBuf>,

    /// Answer with shapes, types and sizes only: no string contents, no
    /// field values, no diagnostics quoting the dump.
    #[arg(long)]
    pub redact: bool,

    #[command(flatten)]
    pub duplicates: DuplicateArgs,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("skip_for").args(["immediate_dominators", "paths"]).multiple(true)))]
pub struct ReportArgs {
    /// The heap dump to analyse (the newest snapshot of a comparison); `-`
    /// reads it from standard input (gzip too).
    #[arg(value_name = "DUMP", required_unless_present = "demo")]
    pub dump: Option<PathBuf>,

    /// Analyse the built-in sample heap instead of a file.
    #[arg(long, conflicts_with_all = ["dump", "baselines"])]
    pub demo: bool,

    /// An older snapshot of the same program to compare with; repeat it
    /// for several, oldest first.
    #[arg(long = "baseline", value_name = "OLD")]
    pub baselines: Vec<PathBuf>,

    /// Print the JSON contract (docs/json.md in the repository) instead of text.
    #[arg(long)]
    pub json: bool,

    /// How many rows of each list to print: dominators, changed dominator
    /// paths, types, duplicate sets, diagnostic messages (0 = all). Without
    /// it: 50 dominators and paths; 20 types and duplicate sets and 10
    /// messages in text, all of them in JSON.
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,

    /// List every object with its immediate dominator and retained size.
    #[arg(long)]
    pub objects: bool,

    /// Print one object instead of the report: its sizes, every field with
    /// its value (Java: instances' fields, a class's statics, a primitive
    /// array's elements) and its references. ID is the object's id in hex
    /// as the report prints it.
    #[arg(
        long,
        value_name = "ID",
        value_parser = parse_id,
        conflicts_with_all = ["objects", "immediate_dominators", "paths", "what_if"]
    )]
    pub object: Option<u64>,

    /// Group the objects of the types matching this glob (e.g. `System.Char[]`)
    /// by their immediate dominators' types.
    #[arg(long = "immediate-dominators", value_name = "TYPE_PATTERN")]
    pub immediate_dominators: Option<String>,

    /// With --immediate-dominators: walk up past dominators whose type
    /// matches this glob (e.g. `System.*`); with --paths: leave the objects
    /// of such types out of the paths.
    #[arg(long, value_name = "PATTERN", requires = "skip_for")]
    pub skip: Option<String>,

    /// Why the objects of the types matching this glob (e.g.
    /// `MyApp.Orders.Order`, `*Listener`) are alive: their shortest paths
    /// from the GC roots, merged by type path, with how many objects
    /// pass through each and their retained bytes. Exit code 2 when no
    /// object's type matches.
    #[arg(long, value_name = "TYPE_PATTERN")]
    pub paths: Option<String>,
    /// Duplicate owners: walk up past dominators whose type matches this
    /// glob; repeat it for several. Replaces the format's defaults (Java:
    /// java.*, javax.*, jdk.*, sun.*; .NET: System.*, Microsoft.*); `''`
    /// alone skips nothing.
    #[arg(long = "owner-skip", value_name = "PATTERN")]
    pub owner_skip: Vec<String>,
    /// What dropping the field FIELD of every instance of TYPE would free
    /// (exact: the objects no longer reachable, by type). A static field
    /// is Class.FIELD. Only dumps with field names (HPROF, V8); repeat it
    /// for several cuts, each answered on its own.
    #[arg(long = "what-if", value_name = "TYPE.FIELD")]
    pub what_if: Vec<String>,

    /// Exit with code 1 when some dominator path's retained bytes grew by
    /// more than SIZE from the oldest to the newest snapshot (e.g. 10MB,
    /// 512KiB, 1000). Needs --baseline.
    #[arg(long = "fail-if-grows", value_name = "SIZE", value_parser = parse_size)]
    pub fail_if_grows: Option<u64>,

    /// How the snapshots of a comparison are analysed.
    #[arg(long, value_enum, value_name = "HOW", default_value_t = ScheduleArg::Auto)]
    pub schedule: ScheduleArg,

    #[command(flatten)]
    pub duplicates: DuplicateArgs,
}

/// The validated configuration: what `main` runs.
#[derive(Debug)]
pub enum Run {
    Ui(UiRun),
    Report(Box<ReportRun>),
    Completions(clap_complete::Shell),
    Man,
    /// `heaptui mcp`: the server's configuration.
    #[cfg(feature = "mcp")]
    Mcp(heaptui_mcp::Config),
}

/// What a report analyses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReportInput {
    File(PathBuf),
    /// `-`: the dump is read from standard input, never cached.
    Stdin,
    /// `--demo`: the built-in sample heap.
    Demo,
}

#[derive(Debug)]
pub struct UiRun {
    /// Oldest first; the last one is opened. Empty with `--demo`.
    pub dumps: Vec<PathBuf>,
    pub demo: bool,
    pub demo_compare: bool,
    pub ascii: bool,
    pub duplicates: DuplicateOptions,
    /// How the dumps are read (`--compressed-refs`).
    pub import: ImportOptions,
    /// `None` with `--no-cache` (or no cache directory).
    pub cache: Option<CacheOptions>,
}

impl UiRun {
    /// The snapshot the UI opens (the newest).
    pub fn newest(&self) -> Option<&PathBuf> {
        self.dumps.last()
    }

    /// The snapshots compared with it, oldest first.
    pub fn baselines(&self) -> &[PathBuf] {
        self.dumps.split_last().map(|(_, b)| b).unwrap_or(&[])
    }
}

#[derive(Debug)]
pub struct ReportRun {
    pub dump: ReportInput,
    /// Oldest first.
    pub baselines: Vec<PathBuf>,
    pub json: bool,
    pub options: ReportOptions,
    pub duplicates: DuplicateOptions,
    pub fail_if_grows: Option<u64>,
    /// `--what-if TYPE.FIELD`, as given: resolved once the dump is read.
    pub what_if: Vec<String>,
    /// `--paths` (with the baselines' figures once they are read):
    /// answered once the dump is read.
    pub paths: Option<PathsQuery>,
    pub schedule: Schedule,
    /// How the dump is read (`--compressed-refs`).
    pub import: ImportOptions,
    /// `None` with `--no-cache` (or no cache directory).
    pub cache: Option<CacheOptions>,
}

/// `--memory`: a size as `--fail-if-grows` takes it, or `none`.
fn parse_memory(s: &str) -> Result<Budget, String> {
    budget::parse(s, parse_size)
}

/// An object id in hex, as the reports print it (`0x` allowed).
fn parse_id(s: &str) -> Result<u64, String> {
    let digits = s.strip_prefix("0x").unwrap_or(s);
    u64::from_str_radix(digits, 16).map_err(|_| format!("`{s}` is not an object id in hex"))
}

/// Arguments that parse but cannot run (exit code 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl DuplicateArgs {
    fn options(&self) -> DuplicateOptions {
        DuplicateOptions {
            mode: self.mode.into(),
            budget_per_type: (self.budget > 0).then_some(self.budget),
        }
    }
}

impl TryFrom<Cli> for Run {
    type Error = UsageError;

    fn try_from(cli: Cli) -> Result<Run, UsageError> {
        let import = ImportOptions {
            compressed_refs: cli.compressed_refs,
            model_sizes: cli.model_sizes,
            references: cli.references.into(),
        };
        let cache = if cli.no_cache {
            None
        } else {
            CacheOptions::from_env()
        };
        match cli.command {
            Some(Command::Completions { shell }) => Ok(Run::Completions(shell)),
            Some(Command::Man) => Ok(Run::Man),
            #[cfg(not(feature = "mcp"))]
            Some(Command::McpMissing { .. }) => Err(UsageError(
                "this heaptui was built without the MCP server (the cargo feature mcp): \
                 build it with `cargo install --path . --features mcp`"
                    .into(),
            )),
            #[cfg(feature = "mcp")]
            Some(Command::Mcp(args)) => {
                if args.dumps.iter().any(|d| d.as_os_str() == "-") {
                    return Err(UsageError(
                        "mcp reads the dumps from files: standard input is the protocol's".into(),
                    ));
                }
                Ok(Run::Mcp(heaptui_mcp::Config {
                    dumps: args.dumps,
                    import,
                    duplicates: args.duplicates.options(),
                    cache,
                    redact: args.redact,
                }))
            }
            Some(Command::Report(args)) => ReportRun::try_from(*args).map(|r| {
                // Standard input and the demo have no file to key a cache on.
                let cache = match r.dump {
                    ReportInput::File(_) => cache.clone(),
                    ReportInput::Stdin | ReportInput::Demo => None,
                };
                Run::Report(Box::new(ReportRun { cache, import, ..r }))
            }),
            None => {
                let demo = cli.demo || cli.demo_compare;
                if cli.dumps.is_empty() && !demo {
                    return Err(UsageError(
                        "give a heap dump to open (heaptui DUMP), or try `heaptui --demo`.\n\
                         Without a terminal: heaptui report DUMP [--json]. See heaptui --help."
                            .into(),
                    ));
                }
                if demo && !cli.dumps.is_empty() {
                    return Err(UsageError(
                        "--demo and --demo-compare open built-in heaps: give either one of them or dump files".into(),
                    ));
                }
                Ok(Run::Ui(UiRun {
                    dumps: cli.dumps,
                    demo: cli.demo,
                    demo_compare: cli.demo_compare,
                    ascii: cli.ascii,
                    duplicates: cli.duplicates.options(),
                    import,
                    cache,
                }))
            }
        }
    }
}

impl TryFrom<ReportArgs> for ReportRun {
    type Error = UsageError;

    fn try_from(args: ReportArgs) -> Result<ReportRun, UsageError> {
        if args.fail_if_grows.is_some() && args.baselines.is_empty() {
            return Err(UsageError(
                "--fail-if-grows compares snapshots: give the older ones with --baseline OLD"
                    .into(),
            ));
        }
        let dump = match (args.demo, args.dump) {
            (true, _) => ReportInput::Demo,
            (false, Some(p)) if p.as_os_str() == "-" => ReportInput::Stdin,
            (false, Some(p)) => ReportInput::File(p),
            (false, None) => {
                return Err(UsageError(
                    "give the heap dump to analyse (`-` reads standard input), or --demo".into(),
                ))
            }
        };
        if args.baselines.iter().any(|b| b.as_os_str() == "-") {
            return Err(UsageError(
                "--baseline takes files; standard input (`-`) is only for the dump".into(),
            ));
        }
        let schedule = match args.schedule {
            ScheduleArg::Auto => Schedule::Auto,
            ScheduleArg::Parallel => Schedule::Parallel,
            ScheduleArg::Sequential => Schedule::Sequential,
        };
        Ok(ReportRun {
            options: ReportOptions {
                top: args.top.unwrap_or(50),
                rows: args.top,
                objects: args.objects,
                immediate_dominators: args
                    .immediate_dominators
                    .as_deref()
                    .map(|p| (Glob::new(p), args.skip.as_deref().map(Glob::new))),
                paths: None,
                comparison: None,
                object: args.object,
                owner_exclude: (!args.owner_skip.is_empty()).then(|| {
                    args.owner_skip
                        .iter()
                        .filter(|p| !p.is_empty())
                        .map(|p| Glob::new(p))
                        .collect()
                }),
                what_if: Vec::new(),
            },
            what_if: args.what_if,
            paths: args
                .paths
                .as_deref()
                .map(|p| PathsQuery::new(Glob::new(p), args.skip.as_deref().map(Glob::new))),
            duplicates: args.duplicates.options(),
            dump,
            baselines: args.baselines,
            json: args.json,
            fail_if_grows: args.fail_if_grows,
            schedule,
            // The command line's global options, set by `Run::try_from`.
            import: ImportOptions::default(),
            cache: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Result<Run, UsageError> {
        let cli = Cli::try_parse_from(std::iter::once("heaptui").chain(args.iter().copied()))
            .map_err(|e| UsageError(e.to_string()))?;
        Run::try_from(cli)
    }

    #[test]
    fn memory_takes_a_size_anywhere_or_none() {
        let parse = |args: &[&str]| {
            Cli::try_parse_from(std::iter::once("heaptui").chain(args.iter().copied()))
                .map(|c| c.memory)
                .map_err(|e| e.to_string())
        };
        assert_eq!(
            parse(&["report", "a.txt", "--memory", "400M"]),
            Ok(Some(Budget::given(400 << 20)))
        );
        assert_eq!(
            parse(&["--memory", "1.5GB", "a.txt"]),
            Ok(Some(Budget::given(1_500_000_000)))
        );
        assert_eq!(
            parse(&["--memory", "none", "a.txt"]),
            Ok(Some(Budget::given(u64::MAX)))
        );
        assert_eq!(parse(&["a.txt"]), Ok(None));
        for bad in ["0", "lots", "-1", ""] {
            assert!(parse(&["--memory", bad, "a.txt"]).is_err(), "{bad}");
        }
    }

    #[test]
    fn several_dumps_for_the_ui_are_carried_oldest_first() {
        let Ok(Run::Ui(ui)) = run(&["a.txt", "b.txt", "c.txt"]) else {
            panic!("a UI run")
        };
        assert_eq!(ui.newest(), Some(&PathBuf::from("c.txt")));
        assert_eq!(
            ui.baselines(),
            [PathBuf::from("a.txt"), PathBuf::from("b.txt")]
        );
    }

    #[test]
    fn report_with_baselines_and_a_gate() {
        let Ok(Run::Report(r)) = run(&[
            "report",
            "new.txt",
            "--baseline",
            "a.txt",
            "--baseline",
            "b.txt",
            "--fail-if-grows",
            "10MB",
            "--duplicates",
            "trivial",
        ]) else {
            panic!("a report run")
        };
        assert_eq!(
            r.baselines,
            [PathBuf::from("a.txt"), PathBuf::from("b.txt")]
        );
        assert_eq!(r.fail_if_grows, Some(10_000_000));
        assert_eq!(r.duplicates.mode, DuplicateMode::Trivial);
    }

    #[test]
    fn unusable_combinations_are_refused() {
        assert!(run(&["report", "new.txt", "--fail-if-grows", "1MB"]).is_err());
        assert!(run(&[
            "report",
            "new.txt",
            "--baseline",
            "a",
            "--fail-if-grows",
            "lots"
        ])
        .is_err());
        assert!(run(&[]).is_err());
        assert!(run(&["--demo", "a.txt"]).is_err());
        assert!(run(&["report", "x", "--duplicates", "some"]).is_err());
    }
}
