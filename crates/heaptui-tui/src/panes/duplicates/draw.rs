//! Drawing the Duplicates pane: the list with its note and header, or a
//! set's detail.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::super::table::{Page, ScrolledTable, TableRow};
use super::super::{empty_message, Ctx};
use crate::compared::{signed_bytes, steady_empty, steady_mark};
use crate::fmt::{bytes, count, fit, type_name, type_with_preview, Columns};
use heaptui_core::model::{Model, ObjectIdx};

use super::*;
pub use crate::filtering::DupRow;

pub(super) fn draw(p: &DuplicatesPane, ctx: &Ctx, area: Rect, f: &mut Frame) {
    let title = title(p, ctx, area.width.saturating_sub(2) as usize);
    let inner = super::super::framed(f, area, &title, ctx.theme);
    let (Some(graph), Some(d)) = (ctx.loading.graph(), &p.source) else {
        f.render_widget(Paragraph::new(" detecting duplicates…"), inner);
        return;
    };
    match &p.detail {
        Some(det) => draw_detail(det, ctx.theme, inner, f),
        None if p.owners_on => match &p.owners {
            Some(v) => super::owners::draw(v, &graph.dump, ctx.theme, inner, f),
            None => f.render_widget(
                Paragraph::new(" charging duplicate copies to their owners…"),
                inner,
            ),
        },
        None => draw_list(p, ctx, &graph.dump, d, inner, f),
    }
}

/// The frame's title: the rows' totals, in as many words as fit in `room`.
fn title(p: &DuplicatesPane, ctx: &Ctx, room: usize) -> String {
    let theme = ctx.theme;
    let t = &p.totals;
    match (ctx.loading.duplicates(), &p.source) {
        (Some(_), Some(_)) if t.unverified_sets > 0 => {
            // The bytes are the extra copies' own (shallow) bytes, which
            // nested sets do not count twice: not the Additional
            // column's sum, so the words stay as long as they fit.
            let (sets, extra) = (count(t.sets), bytes(t.bytes));
            let sep = theme.sep();
            let unverified = count(t.unverified_sets);
            [
                format!(
                    " Duplicates: {sets} sets, {extra} in extra copies {sep} unverified: {unverified} sets, {} ",
                    bytes(t.unverified_bytes),
                ),
                format!(
                    " Dups: {sets} sets, {extra} in extra copies {sep} unverified: {unverified} sets, {} ",
                    bytes(t.unverified_bytes),
                ),
                format!(" Duplicates: {sets} sets, {extra} in extra copies {sep} {unverified} unverified "),
                format!(" Dups: {sets} sets, {extra} extra copies {sep} {unverified} unverified "),
            ]
            .into_iter()
            .find(|t| t.chars().count() <= room)
            .unwrap_or_else(|| format!(" Dups: {sets} sets, {extra} extra {sep} {unverified} unverified "))
        }
        (Some(_), Some(_)) => format!(
            " Duplicates: {} sets, {} in extra copies ",
            count(t.sets),
            bytes(t.bytes),
        ),
        _ => " Duplicates ".into(),
    }
}

/// A set's detail: its members and the instance graph of one.
fn draw_detail(det: &DupDetail, theme: &Theme, inner: Rect, f: &mut Frame) {
    let height = inner.height.saturating_sub(1) as usize;
    let back = if det.from_list {
        " Set detail (Backspace: back to the list)"
    } else {
        " Set detail (Backspace: back)"
    };
    let mut lines = vec![Line::styled(back, theme.header())];
    for (i, l) in det
        .lines
        .iter()
        .enumerate()
        .skip(det.list.offset)
        .take(height)
    {
        let sel = i == det.list.selected;
        let text = fit(
            &format!("{}{}", if sel { ">" } else { " " }, l.text),
            inner.width as usize,
            theme,
        );
        lines.push(Line::styled(
            text,
            if sel {
                theme.selected()
            } else if l.object.is_none() {
                theme.bold()
            } else {
                Default::default()
            },
        ));
    }
    f.render_widget(Paragraph::new(lines), inner);
}

/// The note on what "equal" means, then the list of sets.
fn draw_list(
    pane: &DuplicatesPane,
    ctx: &Ctx,
    dump: &Model,
    d: &Duplicates,
    inner: Rect,
    f: &mut Frame,
) {
    let theme = ctx.theme;
    let w = inner.width as usize;
    let height = list_height(inner.height);
    let mut cols = pane.columns(theme);
    pane.sort.mark(&mut cols);
    let table = Columns::new(w, &cols);
    let type_w = table.width(7);
    // Where the dump has values and field names (HPROF, V8), members
    // were compared by them: no caveat (docs/duplicates.md).
    let caveat = if pane.steady_only {
        " only the sets that grow in every snapshot (t shows every set)"
    } else if d.has_values() {
        " equal = same type, size, values and fields, all the way down"
    } else {
        " equal = same type, size and reference shape (dumps hold no field values)"
    };
    let note = Line::styled(fit(caveat, w, theme), theme.dim());
    let [note_area, list_area] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(inner);
    f.render_widget(Paragraph::new(note), note_area);
    let row = |i: usize| match pane.row(i)? {
        DupRow::Set(id) => Some(TableRow::of(set_cells(pane, dump, d, id, type_w, theme))),
        DupRow::Gone(j) => {
            let g = pane.gone.get(j as usize)?;
            Some(TableRow::of(gone_cells(g, type_w, theme)).style(theme.dim()))
        }
        DupRow::Possible(p) => {
            let p = &d.possible[p as usize];
            let mut cells = vec![
                "?".into(),
                "-".into(),
                count(p.instances.len() as u64),
                "-".into(),
                "-".into(),
                "possible".into(),
                "D:detect".into(),
                type_name(&dump.type_names[p.type_index as usize], type_w, theme),
            ];
            if pane.delta.is_some() {
                cells.push(String::new());
            }
            Some(TableRow::of(cells))
        }
    };
    let page = Page {
        list: &pane.list,
        len: pane.rows.len(),
        height,
        selected: theme.selected(),
    };
    let empty = || {
        if pane.steady_only && ctx.filter.trim().is_empty() {
            let n = pane.compared.as_ref().map_or(0, |c| c.snapshots());
            steady_empty(n, "sets")
        } else {
            empty_message(ctx, false, "duplicate sets", "no duplicate sets")
        }
    };
    f.render_widget(
        ScrolledTable::page(&table, &cols, theme, page, row, empty),
        list_area,
    );
}

/// The cells of a set of the baselines that the newest snapshot lacks.
fn gone_cells(g: &GoneSet, type_w: usize, theme: &Theme) -> Vec<String> {
    vec![
        "gone".into(),
        bytes(0),
        "0".into(),
        bytes(g.instance_bytes),
        count(g.objects_per_copy),
        "-".into(),
        "-".into(),
        type_name(&g.name, type_w, theme),
        format!("{} ", signed_bytes(g.delta, theme)),
    ]
}

/// The cells of a set's row.
fn set_cells(
    pane: &DuplicatesPane,
    dump: &Model,
    d: &Duplicates,
    id: u32,
    type_w: usize,
    theme: &Theme,
) -> Vec<String> {
    let s = &d.sets[id as usize];
    let mut cells = vec![
        format!("#{id}"),
        bytes(s.additional_bytes),
        count(d.members(id).len() as u64),
        bytes(s.instance_bytes),
        count(s.objects_per_copy),
        (if d.is_unverified(s) {
            "unverified"
        } else if s.trivial() {
            "trivial"
        } else {
            "full"
        })
        .into(),
        s.holding_set()
            .map_or("-".to_string(), |h| format!("{}#{h}", theme.arrow())),
        // Every member of a set holds the same text.
        type_with_preview(
            dump,
            &dump.type_names[s.type_index as usize],
            d.members(id).first().map(|&m| ObjectIdx(m)),
            type_w,
            theme,
        ),
    ];
    if let Some(x) = &pane.delta {
        let i = id as usize;
        let mark = if x.steady[i] { steady_mark(theme) } else { " " };
        cells.push(format!("{}{mark}", signed_bytes(x.delta[i], theme)));
    }
    cells
}
