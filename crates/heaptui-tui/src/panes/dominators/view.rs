//! Drawing the Dominators pane: the tree with its columns, the
//! breadcrumb and the comparison's title, beside or instead of the chart.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Block;
use ratatui::Frame;

use super::super::table::{ScrolledTable, TableRow};
use crate::compared::{signed_bytes, signed_count, steady_mark, NO_PATH};
use crate::fmt::{bytes, count, fit, fit_left, percent, text_width, Col, Columns};
use crate::theme::Theme;
use chart::draw_chart;
use heaptui_core::graph::DominatorTree;
use heaptui_core::model::Model;

use super::*;

impl DominatorsPane {
    /// What the title says of the comparison: the sort, the steady-only
    /// view and the keys that change them.
    fn comparison_title(&self, theme: &Theme) -> String {
        let Some(c) = &self.compared else {
            return String::new();
        };
        let sep = theme.sep();
        let older = c.snapshots() - 1;
        let order = if self.growth_order {
            "by Δ"
        } else {
            "s: by Δ"
        };
        let steady = if self.steady_only {
            "steady growth only"
        } else {
            "t: steady only"
        };
        format!(" {sep} Δ vs {older} older {sep} {order} {sep} {steady}")
    }
}

/// Draws the tree (and the chart beside it when wide enough); `empty` is
/// the line shown when no row is visible.
pub fn draw(
    pane: &DominatorsPane,
    dump: &Model,
    dom: &DominatorTree,
    theme: &Theme,
    empty: &str,
    area: Rect,
    f: &mut Frame,
) {
    let title_room = area.width.saturating_sub(20) as usize;
    let comparison = match pane.comparison_title(theme) {
        c if c.is_empty() => c,
        c => format!("{} ", c.trim_start()),
    };
    let crumb = format!("{} ", pane.breadcrumb(theme));
    let crumb_room = title_room
        .saturating_sub(text_width(&comparison))
        .max(title_room / 2)
        .min(text_width(&crumb));
    let block = Block::bordered()
        .border_set(theme.border())
        .title(Line::from(vec![
            Span::styled(
                format!(
                    " Dominators [{}] ",
                    match pane.mode {
                        TreeMode::Tree => "Tree",
                        TreeMode::Path => "Path",
                    }
                ),
                theme.header(),
            ),
            // Cut from the left: the current node, at the end, stays; the
            // comparison's keys follow it while they fit.
            Span::raw(fit_left(&crumb, crumb_room, theme)),
            Span::raw(fit(&comparison, title_room - crumb_room, theme)),
        ]));
    let inner = block.inner(area);
    f.render_widget(block, area);
    let wide = crate::layout::is_wide(area.width);
    if pane.chart_only && !wide {
        draw_chart(pane, dump, dom, theme, inner, f);
        return;
    }
    if wide {
        let [left, right] =
            Layout::horizontal([Constraint::Percentage(60), Constraint::Percentage(40)])
                .areas(inner);
        // A blank between the tree's last column and the chart's border.
        let left = Rect {
            width: left.width.saturating_sub(1),
            ..left
        };
        draw_tree(pane, dump, dom, theme, empty, left, f);
        let sep = Block::new()
            .borders(ratatui::widgets::Borders::LEFT)
            .border_set(theme.border());
        let right_inner = sep.inner(right);
        f.render_widget(sep, right);
        draw_chart(pane, dump, dom, theme, right_inner, f);
    } else {
        draw_tree(pane, dump, dom, theme, empty, inner, f);
    }
}

/// Rows available for tree lines in an inner area (one header line).
pub fn list_height(inner_height: u16) -> usize {
    inner_height.saturating_sub(1) as usize
}

fn draw_tree(
    pane: &DominatorsPane,
    dump: &Model,
    dom: &DominatorTree,
    theme: &Theme,
    empty: &str,
    area: Rect,
    f: &mut Frame,
) {
    let t = pane.tree();
    let cols = tree_columns(pane, area.width);
    let table = Columns::new(area.width as usize, &cols);
    let row = RowContext {
        pane,
        dump,
        dom,
        theme,
        name_w: table.width(0),
        columns: cols.len(),
        on_path: t.ancestors(t.selected),
    };
    let height = list_height(area.height);
    let rows = (t.flat.iter().skip(t.offset).take(height))
        .map(|&id| row.of(id))
        .collect();
    f.render_widget(
        ScrolledTable {
            columns: &table,
            header: &cols,
            theme,
            rows,
            empty: t.flat.is_empty().then(|| empty.to_string()),
        },
        area,
    );
}

/// The tree's columns, with the Δ ones when comparing (Δ count from 100
/// cells on).
fn tree_columns(pane: &DominatorsPane, width: u16) -> Vec<Col> {
    let mut cols = vec![
        Col::name("Type"),
        Col::num("Retained", pane.widths[0]),
        Col::num("Objects", pane.widths[1]),
        Col::num("%", "100.0%".len()),
    ];
    if pane.compared.is_some() {
        // The steady mark takes one more cell after the Δ.
        cols[2] = cols[2].optional(2);
        cols[3] = cols[3].optional(1);
        cols.push(Col::num("Δ retained", pane.delta_widths[0] + 1));
        if width >= 100 {
            cols.push(Col::num("Δ count", pane.delta_widths[1]));
        }
    }
    cols
}

/// What every row of one frame of the tree needs.
struct RowContext<'a> {
    pane: &'a DominatorsPane,
    dump: &'a Model,
    dom: &'a DominatorTree,
    theme: &'a Theme,
    name_w: usize,
    columns: usize,
    /// The selected node's ancestors (drawn bold).
    on_path: Vec<u32>,
}

impl RowContext<'_> {
    /// The row of node `id`: indented label, sizes, and the Δ cells.
    fn of(&self, id: u32) -> TableRow {
        let (t, dom, theme) = (self.pane.tree(), self.dom, self.theme);
        let n = &t.nodes[id as usize];
        let indent = indent_of(n.depth);
        let marker = if !t.has_children(id, dom) {
            " "
        } else if n.expanded {
            theme.expanded()
        } else {
            theme.collapsed()
        };
        let room = self.name_w.saturating_sub(text_width(&indent) + 2);
        let loading = if n.loading { " (grouping…)" } else { "" };
        let label = format!(
            "{indent}{marker} {}{loading}",
            t.label_within(
                id,
                self.dump,
                theme,
                room.saturating_sub(loading.chars().count())
            )
        );
        let (rb, ro) = t.sizes_of(id, dom).unwrap_or((0, 0));
        let selected = id == t.selected;
        let more = matches!(n.item, Item::More { .. });
        let mut cells = if more {
            vec![label]
        } else {
            vec![
                label,
                bytes(rb),
                count(ro),
                percent(rb, dom.reachable_bytes),
            ]
        };
        if let (Some(c), false) = (&self.pane.compared, more) {
            if n.path == NO_PATH {
                cells.resize(self.columns, String::new());
            } else {
                let mark = if c.steady(n.path) {
                    steady_mark(theme)
                } else {
                    " "
                };
                cells.push(format!("{}{mark}", signed_bytes(c.growth(n.path), theme)));
                if cells.len() < self.columns {
                    cells.push(signed_count(c.count_growth(n.path), theme));
                }
            }
        }
        let style = if selected {
            theme.selected()
        } else if self.on_path.contains(&id) {
            theme.bold()
        } else {
            ratatui::style::Style::new()
        };
        TableRow::cells(cells, selected, style)
    }
}

/// The indentation of a row at `depth` (top level 1): two spaces a level
/// up to [`MAX_INDENT`], then the level as `·123 ` in the same width.
pub(super) fn indent_of(depth: u32) -> String {
    let level = depth.saturating_sub(1);
    if level <= MAX_INDENT {
        return "  ".repeat(level as usize);
    }
    let width = 2 * MAX_INDENT as usize;
    format!("{:>width$}", format!("·{depth} "))
}
