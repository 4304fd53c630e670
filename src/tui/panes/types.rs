//! The Types pane: type statistics (SPEC §2.2) ranked by the nucleo
//! matcher, precise retained bytes on request, and the immediate dominators
//! of a type's instances with an exclude pattern (§2.3).

use std::collections::HashMap;

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph};
use ratatui::Frame;

use super::ListState;
use crate::analysis::{ImmediateDominators, PreciseRetained};
use crate::tui::app::App;
use crate::tui::fmt::{bytes, count, fit, type_name};

#[derive(Debug, Clone)]
pub struct ImmView {
    pub type_index: u32,
    pub exclude: String,
    pub rows: Vec<ImmediateDominators>,
    pub list: ListState,
}

#[derive(Debug, Default)]
pub struct TypesPane {
    pub list: ListState,
    pub precise: HashMap<u32, PreciseRetained>,
    pub precise_running: Option<u32>,
    pub imm: Option<ImmView>,
    /// Focus is on the immediate-dominators list.
    pub imm_focus: bool,
    /// The exclude pattern for immediate dominators (a glob, may be empty).
    pub exclude: String,
}

impl TypesPane {
    /// Rows of the type list and of the lower split, for a body of `inner` rows.
    pub fn split(&self, inner: u16) -> (u16, u16) {
        if self.imm.is_some() {
            let top = inner / 2;
            (top, inner - top)
        } else {
            (inner, 0)
        }
    }
}

pub fn draw(app: &App, area: Rect, f: &mut Frame) {
    let theme = &app.theme;
    let pane = &app.types_pane;
    let block = Block::bordered()
        .border_set(theme.border())
        .title(Line::styled(
            format!(
                " Types ({} shown{}) ",
                count(app.matcher.count() as u64),
                if app.matcher.running { ", running" } else { "" }
            ),
            theme.header(),
        ));
    let inner = block.inner(area);
    f.render_widget(block, area);
    let (Some(graph), Some(_)) = (&app.graph, &app.types) else {
        f.render_widget(
            Paragraph::new(" waiting for the dominator tree (min retained sizes need it)"),
            inner,
        );
        return;
    };
    let dump = &graph.dump;
    let (top_h, bottom_h) = pane.split(inner.height);
    let [top, bottom] =
        Layout::vertical([Constraint::Length(top_h), Constraint::Length(bottom_h)]).areas(inner);
    let w = top.width as usize;
    let name_w = w.saturating_sub(9 + 11 * 3 + 1);
    let mut lines = vec![Line::styled(
        format!(
            " {:<name_w$}{:>9}{:>11}{:>11}{:>11}",
            "Type", "Count", "Shallow", "Min ret.", "Precise"
        ),
        theme.header(),
    )];
    let height = top.height.saturating_sub(1) as usize;
    let rows = app.matcher.rows(pane.list.offset, height);
    for (i, ty) in rows.iter().enumerate() {
        let Some(s) = app.type_stats(*ty) else {
            continue;
        };
        let selected = pane.list.offset + i == pane.list.selected;
        let precise = match (pane.precise.get(ty), pane.precise_running) {
            (Some(p), _) => bytes(p.bytes),
            (None, Some(r)) if r == *ty => "running".into(),
            _ => "-".into(),
        };
        let text = format!(
            "{}{:<name_w$}{:>9}{:>11}{:>11}{:>11}",
            if selected { ">" } else { " " },
            type_name(&dump.type_names[*ty as usize], name_w, theme),
            count(s.count),
            bytes(s.shallow_bytes),
            bytes(s.min_retained_bytes),
            precise
        );
        let style = if selected && !pane.imm_focus {
            theme.selected()
        } else if selected {
            theme.bold()
        } else {
            Default::default()
        };
        lines.push(Line::styled(text, style));
    }
    if rows.is_empty() {
        lines.push(Line::raw(if app.matcher.running {
            " (matching…)"
        } else {
            " (no type matches the filter)"
        }));
    }
    f.render_widget(Paragraph::new(lines), top);

    if let Some(imm) = &pane.imm {
        let w = bottom.width as usize;
        let name_w = w.saturating_sub(10 + 11 + 12 + 1);
        let excl = if imm.exclude.is_empty() {
            "none (e to set)".to_string()
        } else {
            imm.exclude.clone()
        };
        let mut lines = vec![
            Line::styled(
                fit(
                    &format!(
                        " Immediate dominators of {} {} skipping: {excl}",
                        dump.type_names[imm.type_index as usize],
                        theme.sep()
                    ),
                    w,
                    theme,
                ),
                theme.header(),
            ),
            Line::styled(
                format!(
                    " {:<name_w$}{:>10}{:>11}{:>12}",
                    "Dominator type", "Objects", "Dominated", "Dom. retain"
                ),
                theme.header(),
            ),
        ];
        let height = bottom.height.saturating_sub(2) as usize;
        for (i, r) in imm
            .rows
            .iter()
            .enumerate()
            .skip(imm.list.offset)
            .take(height)
        {
            let selected = i == imm.list.selected;
            let name = match r.type_index {
                Some(t) => format!(
                    "{} ({})",
                    dump.type_names[t as usize],
                    count(r.dominators.len() as u64)
                ),
                None => "<GC roots directly>".into(),
            };
            let text = format!(
                "{}{:<name_w$}{:>10}{:>11}{:>12}",
                if selected { ">" } else { " " },
                fit(&name, name_w, theme),
                count(r.dominated_objects),
                bytes(r.dominated_shallow_bytes),
                bytes(r.dominators_retained_bytes),
            );
            lines.push(Line::styled(
                text,
                if selected && pane.imm_focus {
                    theme.selected()
                } else {
                    Default::default()
                },
            ));
        }
        if imm.rows.is_empty() {
            lines.push(Line::raw(" (no reachable instances)"));
        }
        f.render_widget(Paragraph::new(lines), bottom);
    }
}
