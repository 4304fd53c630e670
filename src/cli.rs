//! Command-line arguments (clap), validated into what `main` runs.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use heaptui::graph::duplicates::DuplicateMode;

#[derive(Debug, Parser)]
#[command(
    name = "heaptui",
    version,
    about = "Explore GC heap dumps in the terminal: who retains the memory, and what is wasted on copies",
    after_help = "Without a terminal, use `heaptui report DUMP` (text) or `heaptui report DUMP --json`."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// The heap dump to open (RPM text format).
    pub dump: Option<PathBuf>,

    /// Open the built-in sample heap instead of a file.
    #[arg(long)]
    pub demo: bool,

    /// Draw with ASCII only (automatic when the locale is not UTF-8).
    #[arg(long)]
    pub ascii: bool,

    #[command(flatten)]
    pub duplicates: DuplicateArgs,

    /// HPROF: size objects as a 64-bit JVM with compressed references does
    /// (12-byte headers, 4-byte references), as Eclipse MAT's option.
    #[arg(long, global = true)]
    pub compressed_refs: bool,
}

#[derive(Debug, Clone, Args)]
pub struct DuplicateArgs {
    /// Which duplicate instances to detect.
    #[arg(long = "duplicates", value_name = "MODE", default_value = "all", value_parser = parse_mode)]
    pub mode: DuplicateMode,

    /// Work allowed per type for full duplicate detection (object pairs
    /// compared); undecided instances are shown as possible duplicates, to
    /// be finished on request. The default never binds on ordinary heaps and
    /// stops pathological ones (long copied chains) from running for
    /// minutes. 0 = no limit.
    #[arg(long = "duplicate-budget", value_name = "N", default_value_t = DEFAULT_DUPLICATE_BUDGET)]
    pub budget: u64,
}

/// 50 million object pairs per type: about a second of work.
pub const DEFAULT_DUPLICATE_BUDGET: u64 = 50_000_000;

fn parse_mode(s: &str) -> Result<DuplicateMode, String> {
    s.parse()
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the analysis without a terminal UI (text, or JSON with --json).
    Report(ReportArgs),
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The heap dump to analyse.
    pub dump: PathBuf,

    /// Print the JSON contract of SPEC §4 instead of text.
    #[arg(long)]
    pub json: bool,

    /// How many top dominators to list (0 = all).
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub top: usize,

    /// List every object with its immediate dominator and retained size.
    #[arg(long)]
    pub objects: bool,

    /// Group the objects of the types matching this glob (e.g. `System.Char[]`)
    /// by their immediate dominators' types.
    #[arg(long = "immediate-dominators", value_name = "TYPE_PATTERN")]
    pub immediate_dominators: Option<String>,

    /// With --immediate-dominators: walk up past dominators whose type
    /// matches this glob (e.g. `System.*`).
    #[arg(long, value_name = "PATTERN", requires = "immediate_dominators")]
    pub skip: Option<String>,

    #[command(flatten)]
    pub duplicates: DuplicateArgs,
}
