//! heaptui: parse and validate the arguments, install the error and panic
//! hooks, then run the terminal UI or the headless report. Returns the exit
//! code: 0 success, 1 a `--fail-if-grows` threshold crossed, 2 unusable
//! input or arguments.

mod cli;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand;
use clap::{CommandFactory, Parser};

use heaptui_core::analysis::compare::Comparison;
use heaptui_core::analysis::pipeline::Input;
use heaptui_core::analysis::AnalysisError;
use heaptui_core::cache;
use heaptui_core::progress::Progress;
use heaptui_core::report;

use cli::{Cli, ReportInput, ReportRun, Run, UiRun};

/// Unusable input or arguments.
const USAGE: u8 = 2;
/// A `--fail-if-grows` threshold was crossed.
const GREW: u8 = 1;

fn main() -> ExitCode {
    ExitCode::from(run())
}

/// A clap error on one line, as every other error: its first line without
/// `error: `, its tip if it has one, and where the help is.
fn one_line(rendered: &str) -> String {
    let mut lines = rendered.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("bad arguments");
    let mut out = first.strip_prefix("error: ").unwrap_or(first).to_string();
    for l in lines {
        if l.starts_with("Usage:") || l.starts_with("For more information") {
            break;
        }
        // What a line ending in `:` introduces, then any tip.
        out.push_str(if out.ends_with(':') { " " } else { "; " });
        out.push_str(l);
    }
    out.push_str(" (see heaptui --help)");
    out
}

fn run() -> u8 {
    heaptui_core::mem::bound_allocator_retention();
    let _ = color_eyre::install();
    heaptui_core::log::init();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e)
            if e.use_stderr() && !matches!(e.kind(), DisplayHelpOnMissingArgumentOrSubcommand) =>
        {
            eprintln!("heaptui: {}", one_line(&e.render().to_string()));
            return USAGE;
        }
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { USAGE } else { 0 };
        }
    };
    match Run::try_from(cli) {
        Ok(Run::Report(r)) => run_report(r),
        Ok(Run::Ui(u)) => run_ui(u),
        Ok(Run::Completions(shell)) => {
            let mut command = Cli::command();
            clap_complete::generate(shell, &mut command, "heaptui", &mut std::io::stdout());
            0
        }
        Ok(Run::Man) => match manual_page(&mut std::io::stdout()) {
            Ok(()) => 0,
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
            Err(e) => {
                eprintln!("heaptui: writing the manual page: {e}");
                USAGE
            }
        },
        Err(e) => {
            eprintln!("heaptui: {e}");
            USAGE
        }
    }
}

/// `heaptui man`: the options as clap describes them, the `report`
/// command's options in the same page (there is no page of its own), the
/// keys of the UI from its key table, the exit codes and the files.
fn manual_page(out: &mut dyn Write) -> std::io::Result<()> {
    let cli = Cli::command();
    let page = clap_mangen::Man::new(cli.clone());
    page.render_title(out)?;
    page.render_name_section(out)?;
    page.render_synopsis_section(out)?;
    page.render_description_section(out)?;
    page.render_options_section(out)?;
    let text = |s: &str| {
        let s = s.replace('\\', "\\e").replace('-', "\\-");
        match s.starts_with(['.', '\'']) {
            true => format!("\\&{s}"),
            false => s,
        }
    };
    writeln!(out, ".SH COMMANDS")?;
    for sub in cli.get_subcommands().filter(|c| c.get_name() != "help") {
        writeln!(out, ".TP\n\\fBheaptui {}\\fR", text(sub.get_name()))?;
        let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
        writeln!(out, "{}", text(&about))?;
    }
    if let Some(report) = cli.find_subcommand("report") {
        // The report's options, under a heading of their own.
        let mut options = Vec::new();
        clap_mangen::Man::new(report.clone()).render_options_section(&mut options)?;
        let options = String::from_utf8_lossy(&options);
        let body = options
            .split_once(".SH OPTIONS\n")
            .map_or("", |(_, rest)| rest);
        writeln!(
            out,
            ".SH REPORT OPTIONS\n\\fBheaptui report\\fR [OPTIONS] [DUMP]"
        )?;
        write!(out, "{body}")?;
    }
    writeln!(out, ".SH KEYS")?;
    for (title, rows) in heaptui_tui::ui::key_sections() {
        writeln!(out, ".SS {}", text(title))?;
        for (keys, what) in rows {
            writeln!(out, ".TP\n\\fB{}\\fR\n{}", text(&keys), text(what))?;
        }
    }
    writeln!(out, ".SS Filter syntax")?;
    for (what, meaning) in heaptui_tui::ui::FILTER_SYNTAX {
        writeln!(out, ".TP\n\\fB{}\\fR\n{}", text(what), text(meaning))?;
    }
    writeln!(out, ".SS Mouse")?;
    for (what, meaning) in heaptui_tui::ui::MOUSE {
        writeln!(out, ".TP\n{}\n{}", text(what), text(meaning))?;
    }
    writeln!(out, ".SH EXIT STATUS")?;
    for (code, what) in [
        ("0", "success"),
        (
            "1",
            "a \\-\\-fail\\-if\\-grows threshold was crossed (report with \\-\\-baseline)",
        ),
        (
            "2",
            "unusable input or arguments: one line on standard error names the file and the reason",
        ),
    ] {
        writeln!(out, ".TP\n{code}\n{what}")?;
    }
    writeln!(out, ".SH FILES")?;
    writeln!(
        out,
        ".TP\n\\fI$XDG_CACHE_HOME/heaptui\\fR, else \\fI~/.cache/heaptui\\fR\n{}",
        text("The reopen cache: the analysis of each dump of 32 MiB or more, to open it again at once (up to about twice the dump's size: 1.6 times for a large V8 snapshot; the directory is kept under 16 GiB, least recently used first out). --no-cache neither reads nor writes it; HEAPTUI_CACHE_MIN and HEAPTUI_CACHE_MAX (bytes) change the limits.")
    )?;
    page.render_extra_section(out)?;
    page.render_version_section(out)
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
    // Standard input is read as a pipe is (the first bytes checked for
    // binary data, at most a quarter of the memory, gzip inflated).
    let dump = match &r.dump {
        ReportInput::File(p) => Some(p.clone()),
        ReportInput::Stdin => {
            if std::io::stdin().is_terminal() {
                eprintln!(
                    "heaptui: `-` reads the dump from standard input, which is a terminal; pipe one in (zcat dump.gz | heaptui report -)"
                );
                return USAGE;
            }
            Some(PathBuf::from("/dev/stdin"))
        }
        ReportInput::Demo => None,
    };
    let analysed = if r.baselines.is_empty() {
        let note: cache::Note = Arc::new(|line| eprintln!("heaptui: {line}"));
        let input = match &dump {
            Some(p) => Input::File(p.clone(), r.import),
            None => Input::Bytes(
                heaptui_core::demo::DEMO_NAME,
                heaptui_core::demo::DEMO_DUMP.as_bytes(),
            ),
        };
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
        let note: cache::Note = Arc::new(|line| eprintln!("heaptui: {line}"));
        let mut files = std::mem::take(&mut r.baselines);
        // `--demo` conflicts with `--baseline` (clap refuses the pair).
        files.extend(dump.clone());
        let cache = r.cache.as_ref();
        let import = r.import;
        cache::compare_files(
            &files,
            import,
            &r.duplicates,
            cache,
            &progress,
            r.schedule,
            note,
        )
        .map(|(c, a, p)| {
            pending = Some(p);
            (a, Some(c))
        })
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
    let object = match r.options.object {
        Some(id) => match analysis.dump().index_of(id) {
            Some(o) => Some(o),
            None => {
                eprintln!(
                    "heaptui: {}: no object with id {id:x}",
                    analysis.dump().path.display()
                );
                return USAGE;
            }
        },
        None => None,
    };
    let written = if let Some(o) = object {
        if r.json {
            report::write_object_json(&mut out, &analysis, o, &r.options)
        } else {
            report::write_object_text(&mut out, &analysis, o, &r.options)
        }
    } else if r.json {
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
/// from the oldest to the newest snapshot: that path, then where its
/// growth accumulates (as the Leaks pane shows it) with its type path and
/// its figures in every snapshot.
fn threshold_crossed(c: &Comparison, limit: u64) -> Option<String> {
    let (path, growth) = c.largest_growth()?;
    if growth <= limit {
        return None;
    }
    let steps =
        |path: u32, f: &dyn Fn(&heaptui_core::analysis::compare_paths::RowFigures) -> String| {
            c.paths
                .figures_of(path)
                .iter()
                .map(f)
                .collect::<Vec<_>>()
                .join(" → ")
        };
    let bytes = |path| steps(path, &|f| report::size(f.retained_bytes));
    let mut message = format!(
        "{} grew by {} ({}), more than --fail-if-grows {}",
        c.path_names(path).join(" / "),
        report::size(growth),
        bytes(path),
        report::size(limit)
    );
    let point = heaptui_core::analysis::suspects::accumulation_row(&c.paths, path);
    if point != path {
        message += &format!(
            "\n  it accumulates at {}: grew by {} ({}; {} instances)",
            c.path_names(point).join(" / "),
            report::size(c.paths.growth(point).max(0) as u64),
            bytes(point),
            steps(point, &|f| report::count(f.count as u64)),
        );
    }
    Some(message)
}

fn run_ui(u: UiRun) -> u8 {
    // A dump that cannot be opened fails here, in one line, before the
    // terminal is taken over (or a report suggested for it): the first
    // bytes of each are read and their format and header checked.
    for dump in &u.dumps {
        if let Err(e) = heaptui_core::import::source::check_file(dump) {
            eprintln!("heaptui: {e}");
            return USAGE;
        }
    }
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        eprintln!(
            "heaptui: the interactive UI needs a terminal; for a headless analysis run `heaptui report {}` (add --json for scripts)",
            u.newest()
                .map(|p| heaptui_core::model::text::printable_path(p))
                .unwrap_or_else(|| "DUMP".into())
        );
        return USAGE;
    }
    // The UI opens the newest dump and compares it with the others.
    let options = heaptui_tui::Options {
        dump: u.newest().cloned(),
        baselines: u.baselines().to_vec(),
        demo: u.demo,
        demo_compare: u.demo_compare,
        ascii: u.ascii,
        duplicates: u.duplicates.clone(),
        import: u.import,
        cache: u.cache.clone(),
    };
    let code = match heaptui_tui::run(options) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("heaptui: {e:?}");
            1
        }
    };
    if code == 0 {
        finish_cache_writes();
    }
    code
}

/// After a normal quit (the terminal already restored), finishes writing
/// the reopen cache the analysis started, so that the next open is
/// instant; Ctrl-C (or SIGTERM, SIGHUP) skips it.
fn finish_cache_writes() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        let _ = signal_hook::flag::register(sig, stop.clone());
    }
    cache::finish_writes(
        &|| {
            eprintln!(
                "heaptui: saving the analysis so that the next open is instant (Ctrl-C skips)…"
            )
        },
        &|| stop.load(Ordering::Relaxed),
    );
}
