//! Drawing the Types pane: the list (with the instance list or the
//! immediate dominators of the selected type below it).

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::super::table::{Page, ScrolledTable, TableRow};
use super::super::{empty_message, Ctx};
use super::*;
use crate::compared::{signed_bytes, steady_empty, steady_mark};
use crate::fmt::{bytes, count, fit, type_name, Columns};
use crate::theme::Theme;
use heaptui_core::model::Model;

pub(super) fn draw(p: &TypesPane, ctx: &Ctx, area: Rect, f: &mut Frame) {
    let theme = ctx.theme;
    if let (Some(view), Some(graph)) = (&p.instances, ctx.loading.graph()) {
        let dom = ctx.loading.dom().map(|d| &**d);
        view.render(graph, dom, theme, area, f);
        return;
    }
    let inner = super::super::framed(f, area, &title(p, theme), theme);
    let (Some(graph), Some(_)) = (ctx.loading.graph(), ctx.loading.types()) else {
        f.render_widget(
            Paragraph::new(" waiting for the dominator tree (min retained sizes need it)"),
            inner,
        );
        return;
    };
    let dump = &graph.dump;
    let (top_h, bottom_h) = p.split(inner.height);
    let [top, bottom] =
        Layout::vertical([Constraint::Length(top_h), Constraint::Length(bottom_h)]).areas(inner);
    draw_types(p, ctx, dump, top, f);
    if let Some(imm) = &p.imm {
        draw_immediate_dominators(imm, p.imm_focus, dump, theme, bottom, f);
    }
}

/// The frame's title: how many types show, and the comparison's state.
fn title(p: &TypesPane, theme: &Theme) -> String {
    let shown = format!(
        " Types ({} shown{}{}) ",
        count(p.matcher.count() as u64),
        if p.ranked { ", best matches first" } else { "" },
        if p.matcher.running { ", running" } else { "" }
    );
    let comparison = match &p.delta {
        Some(d) => {
            let sep = theme.sep();
            let gone = match d.gone.len() {
                0 => String::new(),
                n => format!(" {sep} {} gone", count(n as u64)),
            };
            let steady = if d.steady_only {
                "steady growth only"
            } else {
                "t: steady only"
            };
            format!("{sep} Δ vs oldest{gone} {sep} {steady} ")
        }
        None => String::new(),
    };
    shown + &comparison
}

/// The list of types (the matcher's rows in view).
fn draw_types(pane: &TypesPane, ctx: &Ctx, dump: &Model, top: Rect, f: &mut Frame) {
    let theme = ctx.theme;
    let cols = pane.columns();
    let table = Columns::new(top.width as usize, &cols);
    let height = top.height.saturating_sub(1) as usize;
    let rows = pane.matcher.rows(pane.list.offset, height);
    let row = |i: usize| -> Option<TableRow> {
        let item = *rows.get(i - pane.list.offset)?;
        let d = pane.delta.as_ref();
        match pane.type_row(item) {
            TypeRow::Type(ty) => type_row(pane, ctx, dump, ty, table.width(0)),
            TypeRow::Gone(j) => {
                let g = d?.gone.get(j as usize)?;
                let gone = "(gone) ";
                let name = type_name(&g.name, table.width(0).saturating_sub(gone.len()), theme);
                let mut cells = vec![format!("{gone}{name}"), "0".into(), bytes(0), bytes(0)];
                cells.push("-".into());
                cells.push(format!("{} ", signed_bytes(g.delta, theme)));
                Some(TableRow::of(cells).style(theme.dim()))
            }
        }
    };
    let page = Page {
        list: &pane.list,
        len: pane.matcher.count(),
        height,
        selected: if pane.imm_focus {
            theme.bold()
        } else {
            theme.selected()
        },
    };
    let empty = || match &pane.delta {
        Some(d) if d.steady_only && ctx.filter.trim().is_empty() => {
            steady_empty(d.snapshots, "types")
        }
        _ => empty_message(
            ctx,
            pane.matcher.running,
            "types",
            "the dump defines no types",
        ),
    };
    f.render_widget(
        ScrolledTable::page(&table, &cols, theme, page, row, empty),
        top,
    );
}

/// The row of a type of the opened snapshot, its name cut to `name_w`.
fn type_row(
    pane: &TypesPane,
    ctx: &Ctx,
    dump: &Model,
    ty: TypeIdx,
    name_w: usize,
) -> Option<TableRow> {
    let theme = ctx.theme;
    let s = ctx.loading.type_stats(ty)?;
    let precise = match (pane.precise.get(&ty), pane.precise_running) {
        (Some(p), _) => bytes(p.bytes),
        (None, Some(r)) if r == ty => "running".into(),
        _ => "-".into(),
    };
    let mut cells = vec![
        type_name(dump.name_of_type(ty), name_w, theme),
        count(s.count),
        bytes(s.shallow_bytes),
        bytes(s.min_retained_bytes),
        precise,
    ];
    if let Some(d) = &pane.delta {
        let mark = if d.steady[ty.index()] {
            steady_mark(theme)
        } else {
            " "
        };
        cells.push(format!(
            "{}{mark}",
            signed_bytes(d.delta[ty.index()], theme)
        ));
    }
    Some(TableRow::of(cells))
}

/// The lower split: the immediate dominators of the selected type.
fn draw_immediate_dominators(
    imm: &ImmView,
    focus: bool,
    dump: &Model,
    theme: &Theme,
    bottom: Rect,
    f: &mut Frame,
) {
    let w = bottom.width as usize;
    let cols = imm.columns();
    let table = Columns::new(w, &cols);
    let excl = if imm.exclude.is_empty() {
        "none (e to set)".to_string()
    } else {
        imm.exclude.clone()
    };
    let title = Line::styled(
        fit(
            &format!(
                " Immediate dominators of {} {} skipping: {excl}",
                dump.type_names[imm.type_index.index()],
                theme.sep()
            ),
            w,
            theme,
        ),
        theme.header(),
    );
    let [title_area, list_area] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(bottom);
    f.render_widget(Paragraph::new(title), title_area);
    let row = |i: usize| {
        let r = imm.rows.get(i)?;
        // The type is shortened, not the count of dominators after it.
        let name = match r.type_index {
            Some(t) => {
                let n = format!(" ({})", count(r.dominators.len() as u64));
                let room = table.width(0).saturating_sub(n.len());
                format!("{}{n}", type_name(dump.name_of_type(t), room, theme))
            }
            None => "<GC roots directly>".into(),
        };
        Some(TableRow::of(vec![
            name,
            count(r.dominated_objects),
            bytes(r.dominated_shallow_bytes),
            bytes(r.dominators_retained_bytes),
        ]))
    };
    let page = Page {
        list: &imm.list,
        len: imm.rows.len(),
        height: bottom.height.saturating_sub(2) as usize,
        // The marker alone while the focus is on the types.
        selected: if focus {
            theme.selected()
        } else {
            Default::default()
        },
    };
    let empty = || " (no reachable instances)".to_string();
    f.render_widget(
        ScrolledTable::page(&table, &cols, theme, page, row, empty),
        list_area,
    );
}
