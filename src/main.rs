//! heaptui: parse arguments, install the error and panic hooks, then run the
//! terminal UI or the headless report. Returns the exit code.

mod cli;

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::Parser;

use heaptui::analysis::{Analysis, AnalysisError, Glob};
use heaptui::graph::duplicates::DuplicateOptions;
use heaptui::progress::Progress;
use heaptui::report::{self, ReportOptions};

use cli::{Cli, Command, DuplicateArgs};

fn main() -> ExitCode {
    let _ = color_eyre::install();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    heaptui::import::set_process_options(heaptui::import::ImportOptions {
        compressed_refs: cli.compressed_refs,
    });
    match cli.command {
        Some(Command::Report(args)) => run_report(args),
        None => run_tui(cli),
    }
}

fn duplicate_options(args: &DuplicateArgs) -> DuplicateOptions {
    DuplicateOptions {
        mode: args.mode,
        budget_per_type: (args.budget > 0).then_some(args.budget),
    }
}

fn run_report(args: cli::ReportArgs) -> ExitCode {
    let progress = Progress::new();
    let analysis = match Analysis::run(&args.dump, &duplicate_options(&args.duplicates), &progress)
    {
        Ok(a) => a,
        Err(AnalysisError::Input(e)) => {
            eprintln!("heaptui: {e}");
            return ExitCode::from(2);
        }
        Err(AnalysisError::Cancelled) => return ExitCode::from(130),
    };
    let options = ReportOptions {
        top: args.top,
        objects: args.objects,
        immediate_dominators: args
            .immediate_dominators
            .as_deref()
            .map(|p| (Glob::new(p), args.skip.as_deref().map(Glob::new))),
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let written = if args.json {
        report::write_json(&mut out, &analysis, &options)
    } else {
        report::write_text(&mut out, &analysis, &options)
    };
    match written.and_then(|_| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        // `heaptui report dump | head` is not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("heaptui: writing the report: {e}");
            ExitCode::from(1)
        }
    }
}

fn run_tui(cli: Cli) -> ExitCode {
    if cli.dump.is_none() && !cli.demo {
        eprintln!("heaptui: give a heap dump to open (heaptui DUMP), or try `heaptui --demo`.");
        eprintln!("Without a terminal: heaptui report DUMP [--json]. See heaptui --help.");
        return ExitCode::from(2);
    }
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        eprintln!(
            "heaptui: the interactive UI needs a terminal; for a headless analysis run `heaptui report {}` (add --json for scripts)",
            cli.dump
                .as_deref()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "DUMP".into())
        );
        return ExitCode::from(2);
    }
    let options = heaptui::tui::Options {
        dump: cli.dump,
        demo: cli.demo,
        ascii: cli.ascii,
        duplicates: duplicate_options(&cli.duplicates),
    };
    match heaptui::tui::run(options) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("heaptui: {e:?}");
            ExitCode::from(1)
        }
    }
}
