//! The retained-size chart: one horizontal bar per child of the zoom root.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::DominatorsPane;
use crate::graph::DominatorTree;
use crate::model::Model;
use crate::tui::fmt::{bytes, fit, percent, text_width};
use crate::tui::theme::Theme;

pub fn draw_chart(
    pane: &DominatorsPane,
    dump: &Model,
    dom: &DominatorTree,
    theme: &Theme,
    area: Rect,
    f: &mut Frame,
) {
    let t = pane.tree();
    let highlight = pane.top_of_selection();
    let bars: Vec<Bar> = pane
        .top_level()
        .into_iter()
        .map(|id| Bar {
            label: t.chart_label(id, dump, theme, label_room(area.width)),
            bytes: t.sizes_of(id, dom).map_or(0, |s| s.0),
            selected: id == highlight,
        })
        .collect();
    let chart = RetainedChart {
        title: format!("Retained by {}", t.label),
        total: t.sizes_of(0, dom).map_or(0, |s| s.0),
        reachable: dom.reachable_bytes,
        bars: &bars,
        theme,
    };
    f.render_widget(chart, area);
}

/// Width of the chart's label column.
fn label_width(width: u16) -> usize {
    (width as usize * 3 / 5).clamp(10, 60)
}

/// Room for a type label in the chart, leaving space for size and percent
/// (` 1023.50 KiB 100.0%`).
fn label_room(width: u16) -> usize {
    label_width(width).saturating_sub(19).max(8)
}

/// One bar of the chart.
#[derive(Debug, Clone)]
pub struct Bar {
    pub label: String,
    pub bytes: u64,
    pub selected: bool,
}

/// The retained-size chart: one horizontal bar per child of the zoom root,
/// as long as its share of the root's retained bytes, labelled with type,
/// size and percent of the reachable heap. The selection is marked with
/// `>` and reverse video, never by colour alone.
pub struct RetainedChart<'a> {
    pub title: String,
    /// Retained bytes of the zoom root (the full bar length).
    pub total: u64,
    pub reachable: u64,
    pub bars: &'a [Bar],
    pub theme: &'a Theme,
}

impl ratatui::widgets::Widget for RetainedChart<'_> {
    fn render(self, area: Rect, buf: &mut ratatui::buffer::Buffer) {
        let theme = self.theme;
        let w = area.width as usize;
        let total = self.total.max(1);
        let mut lines = vec![Line::styled(
            fit(
                &format!(" {} ({})", self.title, bytes(self.total)),
                w,
                theme,
            ),
            theme.header(),
        )];
        let label_w = label_width(area.width);
        let bar_w = w.saturating_sub(label_w + 3);
        for b in self
            .bars
            .iter()
            .take(area.height.saturating_sub(1) as usize)
        {
            let eighths = ((b.bytes as u128 * bar_w as u128 * 8) / total as u128) as usize;
            // The name gives way, not the size and percent after it (but
            // keeps a few cells in a tiny chart).
            let nums = format!(" {} {}", bytes(b.bytes), percent(b.bytes, self.reachable));
            let name_w = label_w
                .saturating_sub(text_width(&nums))
                .max(text_width(&b.label).min(4));
            let name = fit(&b.label, name_w, theme);
            let label = fit(&format!("{name}{nums}"), label_w, theme);
            let mark = if b.selected { ">" } else { " " };
            let style = if b.selected {
                theme.selected()
            } else {
                theme.bold()
            };
            let mut spans = vec![
                Span::styled(format!("{mark}{label:<label_w$} "), style),
                Span::styled(theme.bar(eighths), theme.bar_style()),
            ];
            if eighths == 0 {
                spans.push(Span::styled(".", theme.dim()));
            }
            lines.push(Line::from(spans));
        }
        ratatui::widgets::Widget::render(Paragraph::new(lines), area, buf);
    }
}
