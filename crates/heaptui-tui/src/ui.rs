//! `draw(&App, &mut Frame)`: the frame layout (title, tabs, pane body,
//! status line, footer) and the help overlay. Pure: reads the model only.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};
use ratatui::Frame;

use super::app::{App, InputPurpose, PaneId};
use super::fmt::{bytes, count, fit, secs, text_width};
use super::keys;
use super::loading::{Comparing, Failure};
use super::panes::Pane;
use heaptui_core::progress::Stage;

pub use super::help::{key_sections, FILTER_SYNTAX, MOUSE};
pub use super::layout::{layout, tab_at, Areas, MIN_HEIGHT, MIN_WIDTH};

/// Draws the whole frame of `app` (or a note asking for a larger terminal): title, tabs, the pane, status, footer, and the help overlay when open.
pub fn draw(app: &App, f: &mut Frame) {
    let area = f.area();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let msg = format!(
            "heaptui needs {MIN_WIDTH}x{MIN_HEIGHT}; this is {}x{}. q quits.",
            area.width, area.height
        );
        f.render_widget(
            Paragraph::new(msg).wrap(ratatui::widgets::Wrap { trim: true }),
            area,
        );
        return;
    }
    let a = layout(area);
    draw_title(app, a.title, f);
    draw_tabs(app, a.tabs, f);
    draw_body(app, a.body, f);
    draw_status(app, a.status, f);
    draw_footer(app, a.footer, f);
    if let Some(help) = app.help() {
        help.draw(app.theme(), area, f);
    }
}

fn draw_title(app: &App, area: Rect, f: &mut Frame) {
    let t = app.theme();
    let mut text = format!(" heaptui {} {}", t.sep(), app.name());
    if let Some(g) = app.loading().graph() {
        text.push_str(&format!(
            " {} {} objects, {}",
            t.sep(),
            count(g.dump.objects() as u64),
            bytes(app.totals().bytes)
        ));
    }
    f.render_widget(
        Paragraph::new(fit(&text, area.width as usize, t)).style(t.bold()),
        area,
    );
}

fn draw_tabs(app: &App, area: Rect, f: &mut Frame) {
    let t = app.theme();
    let mut spans = Vec::new();
    for p in PaneId::ALL {
        let focused = p == app.pane() && !app.overlaid();
        let style = if focused { t.selected() } else { t.dim() };
        spans.push(Span::styled(
            super::layout::tab_text(p, focused, area.width),
            style,
        ));
    }
    if app.inspector().is_some() {
        spans.push(Span::styled("[Inspector]", t.selected()));
    } else if app.paths().is_some() {
        spans.push(Span::styled("[Paths]", t.selected()));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn draw_body(app: &App, area: Rect, f: &mut Frame) {
    if let Some(failure) = app.loading().failure() {
        draw_failure(app, failure, area, f);
        return;
    }
    let ctx = app.ctx(app.pane());
    match (app.inspector(), app.paths()) {
        (Some(ins), _) => ins.draw(&ctx, area, f),
        (None, Some(p)) => p.draw(&ctx, area, f),
        (None, None) => app.pane_view(app.pane()).draw(&ctx, area, f),
    }
}

/// What replaces every pane once the analysis stopped: the dump cannot be
/// used, or a background stage panicked (the results cannot be trusted).
/// Either way nothing else is shown, and the message wraps, never cut.
fn draw_failure(app: &App, failure: &Failure, area: Rect, f: &mut Frame) {
    let t = app.theme();
    let (title, intro, after) = match failure {
        Failure::Input(_) => (
            " Cannot open the dump ",
            " heaptui cannot use this file:",
            [
                " Check the path and the file's format (RPM text, HPROF, V8",
                " snapshot, .NET gcdump, any of them gzipped). q quits (exit 2).",
            ],
        ),
        Failure::Panic(_) => (
            " Analysis failed ",
            " The analysis stopped with an internal error:",
            [
                " This is a bug in heaptui, not a problem of the dump.",
                " q quits (exit status 101); the message is printed again.",
            ],
        ),
    };
    let block = Block::bordered()
        .border_set(t.border())
        .title(Line::styled(title, t.warn()));
    let lines = vec![
        Line::raw(""),
        Line::styled(intro, t.bold()),
        Line::raw(""),
        Line::raw(format!(" {}", failure.message())),
        Line::raw(""),
        Line::raw(after[0]),
        Line::raw(after[1]),
    ];
    f.render_widget(
        Paragraph::new(lines)
            .block(block)
            .wrap(ratatui::widgets::Wrap { trim: false }),
        area,
    );
}

/// The stage line: `parse ok 0.3s · graph 45% 1.2s · …`.
pub fn progress_text(app: &App) -> String {
    let t = app.theme();
    let dot = if t.ascii { "," } else { " ·" };
    let mut parts = Vec::new();
    let done_ms: u64 = (0..4).filter_map(|i| app.loading().stage_ms(i)).sum();
    // The first unfinished stage is the running one; the parser reports
    // its id-resolving phase under a later stage, shown as a sub-step.
    let running = app.loading().finished_stages();
    let failed = app.loading().error().is_some();
    for (i, stage) in Stage::ALL.iter().enumerate() {
        let s = match app.loading().stage_ms(i) {
            Some(ms) => format!("{} ok {}", stage.name(), secs(ms)),
            None if failed => format!("{} -", stage.name()),
            None if running == i => {
                let sub = if app.progress().stage <= *stage {
                    String::new()
                } else {
                    format!(" ({})", app.progress().stage.name())
                };
                format!(
                    "{}{sub} {:.0}% {}",
                    stage.name(),
                    app.progress().fraction * 100.0,
                    secs(app.progress().elapsed_ms.saturating_sub(done_ms))
                )
            }
            None => format!("{} {}", stage.name(), t.ellipsis()),
        };
        parts.push(s);
    }
    if app.progress().spilling && !app.loading().ready() {
        parts.push(format!(
            "over budget, spilling to {}",
            heaptui_core::model::printable_path(&heaptui_core::mem::spill::dir())
        ));
    }
    if app.loading().ready() {
        let ms: Vec<String> = (0..4)
            .filter_map(|i| app.loading().stage_ms(i))
            .map(secs)
            .collect();
        let ready = if app.loading().from_cache() {
            format!(
                "ready (read from the reopen cache in {}; --no-cache analyses again)",
                ms[0]
            )
        } else {
            format!(
                "ready (parse {}, graph {}, dominators {}, duplicates {})",
                ms[0], ms[1], ms[2], ms[3]
            )
        };
        return match comparing_text(app) {
            Some(c) => format!("{c}{dot} {ready}"),
            None => ready,
        };
    }
    parts.join(&format!("{dot} "))
}

/// The comparison's part of the stage line: which older snapshot is being
/// analysed and how far, or that the comparison is there.
fn comparing_text(app: &App) -> Option<String> {
    let t = app.theme();
    match app.loading().comparing() {
        Comparing::Off => None,
        Comparing::Waiting(n) => Some(format!("{n} older snapshots wait")),
        Comparing::Running { snapshot, of, name } => {
            let p = app.progress();
            Some(format!(
                "snapshot {snapshot}/{of} {}: {} {:.0}%",
                fit(name, 24, t),
                p.stage.name(),
                p.fraction * 100.0
            ))
        }
        Comparing::Done(c) => Some(format!("compared with {} older", c.snapshots() - 1)),
        Comparing::Failed(e) => Some(format!("comparison failed: {e}")),
    }
}

fn draw_status(app: &App, area: Rect, f: &mut Frame) {
    let t = app.theme();
    let w = area.width as usize;
    if let Some(line) = app.input() {
        let label = match line.purpose {
            InputPurpose::Filter => format!("/ filter {}: ", app.pane().title()),
            InputPurpose::Exclude(prompt) => prompt.to_string(),
        };
        let pending = if app.filtering() && line.purpose == InputPurpose::Filter {
            format!("  filtering{}", t.ellipsis())
        } else {
            String::new()
        };
        let text = fit(&format!("{label}{}_{pending}", line.text), w, t);
        f.render_widget(Paragraph::new(text).style(t.bold()), area);
        return;
    }
    // Most urgent first: the line is cut at the terminal's width.
    let mut spans = Vec::new();
    if !app.status().is_empty() {
        if text_width(app.status()) + 2 > w {
            // Too long for the line (a full type name): wrapped above it.
            draw_long_status(app, area, f);
        }
        spans.push(Span::styled(format!(" {} ", app.status()), t.bold()));
    }
    let filter = app.filter(app.pane());
    if !filter.is_empty() && !app.overlaid() {
        let pending = if app.filtering() {
            format!(" (filtering{})", t.ellipsis())
        } else {
            String::new()
        };
        spans.push(Span::styled(
            format!(" filter: {filter}{pending} "),
            t.accent(),
        ));
    }
    if let Some((label, frac)) = app.job() {
        spans.push(Span::raw(format!(" {label}: {:.0}% ", frac * 100.0)));
    }
    if let Some(e) = app.loading().error() {
        spans.push(Span::styled(format!(" error: {e}"), t.warn()));
    } else {
        spans.push(Span::styled(format!(" {}", progress_text(app)), t.dim()));
    }
    let line = Line::from(spans);
    f.render_widget(Paragraph::new(line), area);
}

/// A status message wider than the status line (e.g. the full type name
/// `n` shows), in a box above the line, wrapped at any column: names have
/// no spaces to wrap at. It goes with the next key, as the status does.
fn draw_long_status(app: &App, status: Rect, f: &mut Frame) {
    let t = app.theme();
    let inner_w = (status.width as usize).saturating_sub(2).max(1);
    let lines = wrap_columns(app.status(), inner_w);
    let h = (lines.len() as u16 + 2).min(status.y.saturating_sub(2));
    if h < 3 {
        return;
    }
    let rect = Rect::new(status.x, status.y - h, status.width, h);
    f.render_widget(Clear, rect);
    let block = Block::bordered()
        .border_set(t.border())
        .title(Line::styled(" full text (any key closes) ", t.header()));
    let lines: Vec<Line> = lines.into_iter().map(Line::raw).collect();
    f.render_widget(Paragraph::new(lines).block(block), rect);
}

/// `s` cut into pieces of at most `width` columns.
fn wrap_columns(s: &str, width: usize) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut used = 0;
    for c in s.chars() {
        let cw = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + cw > width && used > 0 {
            out.push(String::new());
            used = 0;
        }
        out.last_mut().expect("never empty").push(c);
        used += cw;
    }
    out
}

/// The footer: the mode's key hints in priority order ([`keys::footer`]),
/// as many as fit; one that does not fit gives way to later, shorter ones.
fn draw_footer(app: &App, area: Rect, f: &mut Frame) {
    let t = app.theme();
    f.render_widget(
        Paragraph::new(Line::from(footer_spans(
            &keys::footer_with(app.mode(), |cmd| app.key_label(cmd)),
            area.width as usize,
            t,
        ))),
        area,
    );
}

fn footer_spans(
    hints: &[(String, &'static str)],
    width: usize,
    t: &super::theme::Theme,
) -> Vec<Span<'static>> {
    let mut spans = Vec::new();
    let mut used = 0usize;
    for (key, what) in hints {
        let item = format!(" {key} {what} ");
        if used + item.len() > width {
            continue;
        }
        used += item.len();
        spans.push(Span::styled(format!(" {key}"), t.header()));
        spans.push(Span::raw(format!(" {what} ")));
    }
    spans
}

/// The help overlay's lines for the app's theme.
pub fn help_lines(app: &App) -> Vec<Line<'static>> {
    super::help::lines(app.theme())
}
