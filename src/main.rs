//! heaptui: parse and validate the arguments, install the error and panic
//! hooks, then run the terminal UI or the headless report. Returns the exit
//! code: 0 success, 1 a `--fail-if-grows` threshold crossed, 2 unusable
//! input or arguments.

mod cli;

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;

use heaptui::analysis::compare::{compare_files, Comparison};
use heaptui::analysis::pipeline::Input;
use heaptui::analysis::AnalysisError;
use heaptui::cache;
use heaptui::progress::Progress;
use heaptui::report;

use cli::{Cli, ReportRun, Run, UiRun};

/// Unusable input or arguments.
const USAGE: u8 = 2;
/// A `--fail-if-grows` threshold was crossed.
const GREW: u8 = 1;

fn main() -> ExitCode {
    ExitCode::from(run())
}

fn run() -> u8 {
    let _ = color_eyre::install();
    heaptui::log::init();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { USAGE } else { 0 };
        }
    };
    heaptui::import::set_process_options(heaptui::import::ImportOptions {
        compressed_refs: cli.compressed_refs,
    });
    match Run::try_from(cli) {
        Ok(Run::Report(r)) => run_report(r),
        Ok(Run::Ui(u)) => run_ui(u),
        Err(e) => {
            eprintln!("heaptui: {e}");
            USAGE
        }
    }
}

fn analysis_error(e: AnalysisError) -> u8 {
    match e {
        AnalysisError::Input(e) => {
            eprintln!("heaptui: {e}");
            USAGE
        }
        AnalysisError::Cancelled => 130,
    }
}

fn run_report(mut r: ReportRun) -> u8 {
    let progress = Progress::new();
    let mut pending = None;
    let analysed = if r.baselines.is_empty() {
        let note: cache::Note = Arc::new(|line| eprintln!("heaptui: {line}"));
        let input = Input::File(r.dump.clone());
        cache::run(
            &input,
            &r.duplicates,
            r.cache.as_ref(),
            &progress,
            &mut |_| true,
            note,
        )
        .map(|(a, p)| {
            pending = Some(p);
            (a, None)
        })
    } else {
        let mut files = std::mem::take(&mut r.baselines);
        files.push(r.dump.clone());
        compare_files(&files, &r.duplicates, &progress, r.schedule).map(|(c, a)| (a, Some(c)))
    };
    let (analysis, comparison) = match analysed {
        Ok(x) => x,
        Err(e) => return analysis_error(e),
    };
    // The report is printed while the cache file is written; the process
    // waits for it before exiting.
    let _finish_cache = pending.map(WaitOnDrop);
    let crossed = match (&comparison, r.fail_if_grows) {
        (Some(c), Some(limit)) => threshold_crossed(c, limit),
        _ => None,
    };
    r.options.comparison = comparison.map(Arc::new);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let written = if r.json {
        report::write_json(&mut out, &analysis, &r.options)
    } else {
        report::write_text(&mut out, &analysis, &r.options)
    };
    let code = match written.and_then(|_| out.flush()) {
        Ok(()) => 0,
        // `heaptui report dump | head` is not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            eprintln!("heaptui: writing the report: {e}");
            // Not 1: that code means a --fail-if-grows threshold was crossed.
            return USAGE;
        }
    };
    match crossed {
        Some(message) => {
            eprintln!("heaptui: {message}");
            GREW
        }
        None => code,
    }
}

/// Waits for a cache file being written when the report is done.
struct WaitOnDrop(cache::Pending);

impl Drop for WaitOnDrop {
    fn drop(&mut self) {
        std::mem::replace(&mut self.0, cache::Pending::none()).wait();
    }
}

/// The message when some dominator path grew by more than `limit` bytes
/// from the oldest to the newest snapshot.
fn threshold_crossed(c: &Comparison, limit: u64) -> Option<String> {
    let (path, growth) = c.largest_growth()?;
    (growth > limit).then(|| {
        let f = c.paths.figures_of(path);
        format!(
            "{} grew by {} ({} → {}), more than --fail-if-grows {}",
            c.path_names(path).join(" / "),
            report::size(growth),
            report::size(f[0].retained_bytes),
            report::size(f[f.len() - 1].retained_bytes),
            report::size(limit)
        )
    })
}

fn run_ui(u: UiRun) -> u8 {
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        eprintln!(
            "heaptui: the interactive UI needs a terminal; for a headless analysis run `heaptui report {}` (add --json for scripts)",
            u.newest()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "DUMP".into())
        );
        return USAGE;
    }
    // The UI opens the newest dump and compares it with the others.
    let options = heaptui::tui::Options {
        dump: u.newest().cloned(),
        baselines: u.baselines().to_vec(),
        demo: u.demo,
        demo_compare: u.demo_compare,
        ascii: u.ascii,
        duplicates: u.duplicates.clone(),
        cache: u.cache.clone(),
    };
    match heaptui::tui::run(options) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("heaptui: {e:?}");
            1
        }
    }
}
