//! The Overview pane: what the file holds, roots by kind and flag,
//! reachability, the top dominators and duplicate sets, diagnostics. Built
//! from data already computed; at most a hundred or so lines per frame.

use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph};
use ratatui::Frame;

use crate::model::{root_flags, root_kind};
use crate::tui::app::App;
use crate::tui::fmt::{bytes, count, count_width, fit, percent, type_name};
use crate::tui::panes::inspector::Target;

/// The overview's lines, and which of them are jump targets (line index,
/// target): the top dominators and the top duplicate sets.
pub fn lines(app: &App, width: usize) -> (Vec<Line<'static>>, Vec<(usize, Target)>) {
    let theme = &app.theme;
    let mut out: Vec<Line<'static>> = Vec::new();
    let mut targets: Vec<(usize, Target)> = Vec::new();
    let h = |s: &str| Line::styled(s.to_string(), theme.header());
    let Some(graph) = app.loading.graph() else {
        out.push(Line::raw(format!(" {}", app.name)));
        out.push(Line::raw(""));
        out.push(Line::raw(match app.loading.error() {
            Some(e) => format!(" cannot open it: {e}"),
            None => " reading the dump; each pane opens as soon as its data exists.".into(),
        }));
        return (out, targets);
    };
    let dump = &graph.dump;
    let total = app.totals.bytes;
    out.push(h(" File"));
    out.push(Line::raw(format!(
        " {}  ({})",
        dump.path.display(),
        bytes(dump.file_bytes)
    )));
    let domains: Vec<String> = dump
        .app_domains
        .iter()
        .filter(|d| !d.is_implicit() || d.objects > 0)
        .map(|d| format!("{} ({} objects)", d.display_name(), count(d.objects)))
        .collect();
    out.push(Line::raw(fit(
        &format!(" AppDomains: {}", domains.join(", ")),
        width,
        theme,
    )));
    out.push(Line::raw(format!(
        " {} objects, {} references, {} types, {}",
        count(dump.objects() as u64),
        count(dump.refs.edges() as u64),
        count(dump.type_names.len() as u64),
        bytes(total)
    )));
    out.push(Line::raw(""));
    out.push(h(" Roots (kind / flags: records)"));
    // A handful of kinds: measured per frame, so the names line up.
    let records_w = app.totals.root_kinds.iter().map(|r| r.2).max();
    let records_w = count_width(records_w.unwrap_or(0)).max(9);
    for &(k, fl, n) in &app.totals.root_kinds {
        out.push(Line::raw(format!(
            " {:>records_w$}  {} [{}]",
            count(n),
            root_kind::name(k),
            root_flags::describe(fl)
        )));
    }
    out.push(Line::raw(""));
    out.push(h(" Reachability"));
    if let Some(dom) = app.loading.dom() {
        let (wo, wb) = app.loading.dominated().map_or((0, 0), |d| d.weakly_held);
        // No line counts more objects than the dump has.
        let objects_w = count_width(dump.objects() as u64).max(9);
        let un_o = dump.objects() as u64 - dom.reachable_objects;
        let un_b = total - dom.reachable_bytes;
        out.push(Line::raw(format!(
            " reachable    {:>12} in {:>objects_w$} objects ({})",
            bytes(dom.reachable_bytes),
            count(dom.reachable_objects),
            percent(dom.reachable_bytes, total)
        )));
        out.push(Line::raw(format!(
            " unreachable  {:>12} in {:>objects_w$} objects (garbage or weak only)",
            bytes(un_b),
            count(un_o)
        )));
        out.push(Line::raw(format!(
            " weakly held  {:>12} in {:>objects_w$} objects (part of unreachable)",
            bytes(wb),
            count(wo)
        )));
        out.push(Line::raw(""));
        out.push(h(" Top dominators (retained, % of reachable)"));
        for &o in dom.children_of(dom.super_root()).iter().take(10) {
            let rb = dom.retained_bytes[o as usize];
            targets.push((out.len(), Target::Object(o)));
            // The type is shortened so that the id still shows.
            let head = format!(
                " {:>11} {:>6}  ",
                bytes(rb),
                percent(rb, dom.reachable_bytes)
            );
            let id = dump.id_hex(o);
            let room = width.saturating_sub(head.len() + 1 + id.len());
            out.push(Line::raw(fit(
                &format!("{head}{} {id}", type_name(dump.type_name(o), room, theme)),
                width,
                theme,
            )));
        }
    } else {
        out.push(Line::raw(" computing the dominator tree…"));
    }
    out.push(Line::raw(""));
    match app.loading.duplicates() {
        Some(d) => {
            out.push(h(" Top duplicate sets (additional bytes)"));
            for s in d.sets.iter().take(10) {
                targets.push((out.len(), Target::Set(s.id)));
                out.push(Line::raw(fit(
                    &format!(
                        " {:>11}  #{:<4} {} x {}",
                        bytes(s.additional_bytes),
                        s.id,
                        count(s.members.len() as u64),
                        dump.type_names[s.type_index as usize]
                    ),
                    width,
                    theme,
                )));
            }
            if d.sets.is_empty() {
                out.push(Line::raw(" no duplicate sets"));
            }
        }
        None => out.push(Line::raw(" duplicates: still detecting…")),
    }
    out.push(Line::raw(""));
    let dg = &dump.diagnostics;
    out.push(h(" Diagnostics"));
    if dg.total() == 0 {
        out.push(Line::raw(" none: every line was used"));
    } else {
        out.push(Line::styled(
            format!(
                " skipped lines {}, dangling references {}, undefined types {}, duplicate objects {}, missing root objects {}",
                dg.skipped_lines, dg.dangling_references, dg.undefined_types, dg.duplicate_objects, dg.missing_root_objects
            ),
            theme.warn(),
        ));
        for m in &dg.messages {
            out.push(Line::raw(fit(&format!("   {m}"), width, theme)));
        }
    }
    (out, targets)
}

pub fn draw(app: &App, area: Rect, f: &mut Frame) {
    let theme = &app.theme;
    let block = Block::bordered()
        .border_set(theme.border())
        .title(Line::styled(
            " Overview (Enter on a dominator or set jumps there) ",
            theme.header(),
        ));
    let inner = block.inner(area);
    let (mut lines, targets) = lines(app, inner.width as usize);
    if let Some(&(at, _)) = app.overview_sel.and_then(|k| targets.get(k)) {
        // The selection: a `>` marker and reverse video.
        let text: String = lines[at].spans.iter().map(|s| s.content.as_ref()).collect();
        let text = format!(">{}", text.strip_prefix(' ').unwrap_or(&text));
        lines[at] = Line::styled(text, theme.selected());
    }
    let max = lines.len().saturating_sub(inner.height as usize) as u16;
    f.render_widget(
        Paragraph::new(lines)
            .block(block)
            .scroll((app.overview_scroll.min(max), 0)),
        area,
    );
}
