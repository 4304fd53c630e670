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

use heaptui_core::analysis::pipeline::Input;
use heaptui_core::analysis::Comparison;
use heaptui_core::analysis::{field_cut, what_if};
use heaptui_core::analysis::{Analysis, AnalysisError};
use heaptui_core::cache;
use heaptui_core::progress::Progress;
use heaptui_core::report::{self, FieldWhatIf};

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
    set_memory_budget(cli.memory);
    match Run::try_from(cli) {
        Ok(Run::Report(r)) => run_report(*r),
        Ok(Run::Ui(u)) => run_ui(u),
        Ok(Run::Completions(shell)) => {
            let mut command = Cli::command();
            clap_complete::generate(shell, &mut command, "heaptui", &mut std::io::stdout());
            0
        }
        #[cfg(feature = "mcp")]
        Ok(Run::Mcp(config)) => run_mcp(config),
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

/// The analyses' memory budget (`--memory`, else a share of the memory
/// available) and where arrays over it go: the cache directory (with or
/// without `--no-cache`: the files are no cache), else the temporary one.
fn set_memory_budget(given: Option<heaptui_core::mem::budget::Budget>) {
    use heaptui_core::mem::{budget, spill};
    budget::set(given.unwrap_or_else(budget::Budget::default_now));
    if let Some(c) = cache::CacheOptions::from_env() {
        spill::set_dir(c.dir);
    }
}

/// The manual page's DESCRIPTION, a paragraph each.
const DESCRIPTION: [&str; 4] = [
    "heaptui explores a garbage-collected heap dump in the terminal: who retains the memory, and what is wasted on copies. It reads a Java HPROF (jcmd PID GC.heap_dump), a V8 heap snapshot (Chrome, Node.js), a .NET gcdump (dotnet-gcdump) and the text format of the .NET Compact Framework's Remote Performance Monitor, gzipped or not, told apart by their first bytes.",
    "Its panes show the dominator tree grouped by type, with retained sizes (a Java class object is a row of its own, named by its class: class OrderService), type statistics, duplicate instances (objects equal in type, values and fields), GC roots, leak suspects with the point where their memory accumulates, and the inspector's fields and paths from a root. The dump is read and analysed in the background; the panes are usable while it loads.",
    "Given several dumps of one program, oldest first, the last is opened and compared with the others: types, and dominator rows by their type path; the rows that grow in every snapshot are the leak candidates.",
    "Without a terminal, heaptui report DUMP writes the same analyses as text, or as JSON with --json; with --baseline OLD and --fail-if-grows SIZE it fails a build (exit 1) when a row grew by more than SIZE, naming where the growth accumulates.",
];

/// `heaptui man`: the options as clap describes them, the `report`
/// command's options in the same page (there is no page of its own), the
/// keys of the UI from its key table, the exit codes and the files.
fn manual_page(out: &mut dyn Write) -> std::io::Result<()> {
    let cli = Cli::command();
    let page = clap_mangen::Man::new(cli.clone());
    page.render_title(out)?;
    page.render_name_section(out)?;
    page.render_synopsis_section(out)?;
    let text = |s: &str| {
        let s = s.replace('\\', "\\e").replace('-', "\\-");
        match s.starts_with(['.', '\'']) {
            true => format!("\\&{s}"),
            false => s,
        }
    };
    writeln!(out, ".SH DESCRIPTION")?;
    for paragraph in DESCRIPTION {
        writeln!(out, ".PP\n{}", text(paragraph))?;
    }
    page.render_options_section(out)?;
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
        text("The reopen cache: the analysis of each dump of 32 MiB or more, to open it again at once (up to about twice the dump's size: 1.6 times for a large V8 snapshot; the directory is kept under 16 GiB, least recently used first out, the file just written staying even alone over it). --no-cache neither reads nor writes it; HEAPTUI_CACHE_MIN and HEAPTUI_CACHE_MAX (bytes) change the limits.")
    )?;
    page.render_extra_section(out)?;
    page.render_version_section(out)
}

/// `heaptui mcp`: each dump checked first (format, header), as the UI
/// does, so that a wrong file fails at once in one line; then the server
/// until the client closes standard input.
#[cfg(feature = "mcp")]
fn run_mcp(config: heaptui_mcp::Config) -> u8 {
    for dump in &config.dumps {
        if let Err(e) = heaptui_core::import::check_file(dump) {
            eprintln!("heaptui: {e}");
            return USAGE;
        }
    }
    match heaptui_mcp::serve(config) {
        Ok(()) => 0,
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
    let dump = match report_input(&r.dump) {
        Ok(dump) => dump,
        Err(code) => return code,
    };
    let baselines = r.baselines.clone();
    let (analysis, comparison, pending) = match analyse(&mut r, dump) {
        Ok(x) => x,
        Err(e) => return analysis_error(e),
    };
    if let Err(e) = paths_baselines(&mut r, &baselines) {
        return analysis_error(e);
    }
    // The report is printed while the cache file is written; the process
    // waits for it before exiting.
    let _finish_cache = WaitOnDrop(pending);
    let crossed = match (&comparison, r.fail_if_grows) {
        (Some(c), Some(limit)) => threshold_crossed(c, limit),
        _ => None,
    };
    r.options.comparison = comparison.map(Arc::new);
    if let Err(code) = write_report(&mut r, &analysis) {
        return code;
    }
    match crossed {
        Some(message) => {
            eprintln!("heaptui: {message}");
            GREW
        }
        None => 0,
    }
}

/// With `--paths` and baselines: each baseline's merged paths for the same
/// patterns (reopened from the cache the comparison just wrote, one at a
/// time), for the report's Δ column.
fn paths_baselines(r: &mut ReportRun, baselines: &[PathBuf]) -> Result<(), AnalysisError> {
    let Some(query) = r.paths.as_mut() else {
        return Ok(());
    };
    let progress = Progress::new();
    for file in baselines {
        let note: cache::Note = Arc::new(|line| eprintln!("heaptui: {line}"));
        let input = Input::File(file.clone(), r.import);
        let (a, pending) = cache::run(
            &input,
            &r.duplicates,
            r.cache.as_ref(),
            &progress,
            &mut |_| true,
            note,
        )?;
        let (_, m) = report::paths_of_types(&a, &query.pattern, query.skip.as_ref());
        let figures = heaptui_core::analysis::PathFigures::of(&m, a.dump());
        drop(a);
        pending.wait();
        query.baselines.push(figures);
    }
    Ok(())
}

/// The dump's path (`None` for the demo). Standard input is read as a pipe
/// is (the first bytes checked for binary data, at most a quarter of the
/// memory, gzip inflated); a terminal there is refused.
fn report_input(input: &ReportInput) -> Result<Option<PathBuf>, u8> {
    match input {
        ReportInput::File(p) => Ok(Some(p.clone())),
        ReportInput::Stdin if std::io::stdin().is_terminal() => {
            eprintln!(
                "heaptui: `-` reads the dump from standard input, which is a terminal; pipe one in (zcat dump.gz | heaptui report -)"
            );
            Err(USAGE)
        }
        ReportInput::Stdin => Ok(Some(PathBuf::from("/dev/stdin"))),
        ReportInput::Demo => Ok(None),
    }
}

/// The dump analysed (through the reopen cache), compared with the
/// baselines when there are some; and the cache write it started.
fn analyse(
    r: &mut ReportRun,
    dump: Option<PathBuf>,
) -> Result<(Analysis, Option<Comparison>, cache::Pending), AnalysisError> {
    let progress = Progress::new();
    progress.on_note(|line| eprintln!("heaptui: {line}"));
    let note: cache::Note = Arc::new(|line| eprintln!("heaptui: {line}"));
    if r.baselines.is_empty() {
        let input = match dump {
            Some(p) => Input::File(p, r.import),
            None => Input::Bytes(
                heaptui_core::demo::DEMO_NAME,
                heaptui_core::demo::DEMO_DUMP.as_bytes(),
            ),
        };
        let cache = r.cache.as_ref();
        let (a, p) = cache::run(&input, &r.duplicates, cache, &progress, &mut |_| true, note)?;
        return Ok((a, None, p));
    }
    let mut files = std::mem::take(&mut r.baselines);
    // `--demo` conflicts with `--baseline` (clap refuses the pair).
    files.extend(dump);
    let (c, a, p) = cache::compare_files(
        &files,
        r.import,
        &r.duplicates,
        r.cache.as_ref(),
        &progress,
        r.schedule,
        note,
    )?;
    Ok((a, Some(c), p))
}

/// The report (or `--object`'s one object) on standard output; `Err` the
/// exit code when the object is not in the dump or the output fails.
fn write_report(r: &mut ReportRun, analysis: &Analysis) -> Result<(), u8> {
    r.options.what_if = what_if_cuts(&r.what_if, analysis)?;
    let object = match r.options.object {
        Some(id) => match analysis.dump().index_of(id) {
            Some(o) => Some(o),
            None => {
                eprintln!(
                    "heaptui: {}: no object with id {id:x}",
                    analysis.dump().path.display()
                );
                return Err(USAGE);
            }
        },
        None => None,
    };
    if let Some(query) = r.paths.take() {
        let answer = report::PathsAnswer::of(analysis, query);
        if answer.objects == 0 {
            eprintln!(
                "heaptui: {}: --paths: no object's type matches `{}`",
                analysis.dump().path.display(),
                answer.query.pattern.as_str()
            );
            return Err(USAGE);
        }
        r.options.paths = Some(Arc::new(answer));
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let written = match (object, r.json) {
        (Some(o), true) => report::write_object_json(&mut out, analysis, o, &r.options),
        (Some(o), false) => report::write_object_text(&mut out, analysis, o, &r.options),
        (None, true) => report::write_json(&mut out, analysis, &r.options),
        (None, false) => report::write_text(&mut out, analysis, &r.options),
    };
    match written.and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        // `heaptui report dump | head` is not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => {
            eprintln!("heaptui: writing the report: {e}");
            // Not 1: that code means a --fail-if-grows threshold was crossed.
            Err(USAGE)
        }
    }
}

/// `--what-if`: each `TYPE.FIELD` resolved and what its cut frees; `Err`
/// the exit code (2, said on stderr) when one names no type or field, or
/// the format has no field names.
fn what_if_cuts(specs: &[String], a: &Analysis) -> Result<Vec<Arc<FieldWhatIf>>, u8> {
    let mut answers = Vec::new();
    for spec in specs {
        let (type_name, field, cut) = field_cut(a.dump(), spec).map_err(|e| {
            let spec = heaptui_core::model::printable(spec.as_bytes());
            eprintln!("heaptui: --what-if '{spec}': {e}");
            USAGE
        })?;
        let result = what_if(&a.graph, &a.dom, &cut, &Progress::new()).map_err(|_| 130u8)?;
        answers.push(Arc::new(FieldWhatIf {
            type_name,
            field,
            references: cut.edges.len() as u64,
            result,
        }));
    }
    Ok(answers)
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
    let steps = |path: u32, f: &dyn Fn(&heaptui_core::analysis::RowFigures) -> String| {
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
    let point = heaptui_core::analysis::accumulation_row(&c.paths, path);
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
        if let Err(e) = heaptui_core::import::check_file(dump) {
            eprintln!("heaptui: {e}");
            return USAGE;
        }
    }
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        eprintln!(
            "heaptui: the interactive UI needs a terminal; for a headless analysis run `heaptui report {}` (add --json for scripts)",
            u.newest()
                .map(|p| heaptui_core::model::printable_path(p))
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
