//! The Suspects pane (docs/analyses.md, docs/ui.md): the leak suspects of
//! the opened snapshot (top-level dominators and types holding 10 % of the
//! reachable bytes) and, once the comparison with older snapshots is done,
//! the rows that grow steadily. Each row names the suspect and its
//! accumulation point; below the list, the selected suspect's type path
//! down to the point, its growth, the biggest types below the point and a
//! retention path. Enter opens the point in the Dominators pane. Every
//! text is built once when the suspects arrive, so frames cost a page.

use std::sync::Arc;

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};
use ratatui::Frame;

use super::dominators::reveal;
use super::table::{Page, ScrolledTable, TableRow};
use super::{Ctx, Intent, ListState, Pane};
use crate::compared::{signed_bytes, signed_bytes_width, steady_mark, Compared, NO_PATH};
use crate::fmt::{bytes, bytes_width, count, percent, text_width, type_name, Col, Columns};
use crate::keys::Cmd;
use crate::loading::{Arrived, Comparing};
use crate::theme::Theme;
use heaptui_core::analysis::domination_path;
use heaptui_core::analysis::{Suspect, SuspectKind};
use heaptui_core::graph::DominatorTree;
use heaptui_core::model::Model;
use heaptui_core::model::{ObjectIdx, ROW_PREVIEW_CHARS};
use heaptui_core::text::wrap;

/// Types of a domination path shown before and after the `…` of a long one.
const PATH_HEAD: usize = 3;
const PATH_TAIL: usize = 6;

/// One suspect as the pane shows it.
#[derive(Debug, Clone)]
pub struct SuspectRow {
    /// Why it is a suspect.
    pub kind: SuspectKind,
    /// Its retained bytes.
    pub retained: u64,
    /// Newest minus oldest retained bytes (growth suspects).
    pub growth: Option<i128>,
    /// The suspect's row grows in every snapshot.
    pub steady: bool,
    /// The suspect: `(before, type name, after)`, e.g. `("120 × ",
    /// "MyApp.Entry", "")` or `("", "MyApp.Log", " 7f3a…")`; the type name
    /// is shortened to fit.
    pub name: (String, String, String),
    /// The accumulation point, the same way.
    pub point_name: (String, String, String),
    /// The accumulation point (an object index).
    pub point: u32,
    /// The detail lines (without the type path, which wraps).
    pub detail: Vec<String>,
    /// The type path from the top-level dominator down to the point.
    pub path: String,
}

/// The Suspects pane: the leak suspects and the selected one's detail.
#[derive(Debug, Default)]
pub struct SuspectsPane {
    list: ListState,
    rows: Vec<SuspectRow>,
    /// The suspects the rows were built from (to tell a newer list).
    source: Option<Arc<Vec<Suspect>>>,
    widths: [usize; 2],
    /// The first line of the selected suspect's detail shown (`J`/`K`).
    detail_scroll: usize,
}

impl SuspectsPane {
    /// The rows, growing ones first.
    pub fn rows(&self) -> &[SuspectRow] {
        &self.rows
    }

    /// The first line of the selected suspect's detail shown.
    pub fn detail_scroll(&self) -> usize {
        self.detail_scroll
    }

    /// Builds the rows of a (new) suspect list: once per arrival, O(the
    /// suspects' paths).
    pub fn measure(
        &mut self,
        suspects: &Arc<Vec<Suspect>>,
        compared: Option<&Compared>,
        dump: &Model,
        dom: &DominatorTree,
        theme: &Theme,
    ) {
        if self
            .source
            .as_ref()
            .is_some_and(|s| Arc::ptr_eq(s, suspects))
        {
            return;
        }
        self.source = Some(suspects.clone());
        self.rows = suspects
            .iter()
            .map(|s| row(s, compared, dump, dom, theme))
            .collect();
        // Growing rows first (the leak candidates), by growth; then the
        // snapshot's own suspects as analysed (largest first).
        self.rows.sort_by_key(|r| {
            (
                std::cmp::Reverse(r.kind == SuspectKind::Growth),
                std::cmp::Reverse(if r.kind == SuspectKind::Growth {
                    r.growth.unwrap_or(0)
                } else {
                    0
                }),
            )
        });
        let max_growth = self
            .rows
            .iter()
            .filter_map(|r| r.growth)
            .map(|g| g.unsigned_abs().min(u64::MAX as u128) as u64)
            .max();
        self.widths = [
            bytes_width(dom.reachable_bytes),
            max_growth.map_or(0, signed_bytes_width),
        ];
        self.list.selected = self.list.selected.min(self.rows.len().saturating_sub(1));
    }

    fn columns(&self) -> Vec<Col> {
        let mut cols = vec![
            Col::text("Kind", "object".len()),
            Col::num("Retained", self.widths[0]),
        ];
        if self.widths[1] > 0 {
            cols.push(Col::num("Δ retained", self.widths[1] + 1));
        }
        cols.push(Col::name("Suspect → accumulation point"));
        cols
    }

    /// Lines of the list (header and rows) in a body of `inner` lines: at
    /// most half of it, so the detail keeps room.
    fn list_lines(&self, inner: u16) -> u16 {
        let want = self.rows.len().max(1) as u16 + 1;
        want.min((inner / 2).max(2))
    }

    fn visible_rows(&self, inner: u16) -> usize {
        self.list_lines(inner).saturating_sub(1) as usize
    }

    /// The detail's text area in a pane body: below the list and a rule,
    /// a blank each side.
    fn detail_area(&self, body: Rect) -> Rect {
        let inner = Rect {
            x: body.x + 1,
            y: body.y + 1,
            width: body.width.saturating_sub(2),
            height: body.height.saturating_sub(2),
        };
        let top = self.list_lines(inner.height) + 1;
        Rect {
            x: inner.x + 1,
            y: inner.y + top,
            width: inner.width.saturating_sub(2),
            height: inner.height.saturating_sub(top),
        }
    }

    /// The selected suspect's detail wrapped to `width`: the first line,
    /// the type path, the others, and how to open the point.
    fn detail_lines(&self, width: usize) -> Vec<(String, bool)> {
        let Some(r) = self.rows.get(self.list.selected) else {
            return Vec::new();
        };
        let mut text: Vec<String> = Vec::new();
        let mut it = r.detail.iter();
        text.extend(it.next().cloned());
        if !r.path.is_empty() {
            text.push(format!("Type path to the point: {}", r.path));
        }
        text.extend(it.cloned());
        let mut out: Vec<(String, bool)> = text
            .iter()
            .flat_map(|t| wrap(t, width))
            .map(|l| (l, false))
            .collect();
        out.extend(
            wrap(
                "Enter shows the accumulation point in the Dominators pane.",
                width,
            )
            .into_iter()
            .map(|l| (l, true)),
        );
        out
    }

    /// The largest detail scroll in a pane body: the last line at the
    /// bottom.
    fn max_scroll(&self, body: Rect) -> usize {
        let area = self.detail_area(body);
        self.detail_lines(area.width as usize)
            .len()
            .saturating_sub(area.height as usize)
    }
}

fn kind_label(kind: SuspectKind) -> &'static str {
    match kind {
        SuspectKind::Object => "object",
        SuspectKind::Type => "type",
        SuspectKind::Growth => "growth",
    }
}

/// An object's parts for a list cell: the name of its row (its type, or
/// `class X` for a Java class object) and the start of the text it holds
/// (the id is in the detail below, the list keeps the room for the names).
fn row_parts(dump: &Model, o: ObjectIdx) -> (String, String, String) {
    (
        String::new(),
        dump.row_type_name(o).to_string(),
        dump.row_quoted_preview(o, CELL_PREVIEW_CHARS),
    )
}

/// Characters of an object's text in a list cell or a path step.
const CELL_PREVIEW_CHARS: usize = 20;

/// The comparison row of a suspect: the growing row itself, the top-level
/// row of a type, or the row an object belongs to (down its domination
/// path, O(depth), once).
fn suspect_path(s: &Suspect, c: &Compared, dump: &Model, dom: &DominatorTree) -> u32 {
    match (s.kind, &s.growth, s.object) {
        (SuspectKind::Growth, Some(g), _) => g.path,
        (SuspectKind::Type, _, _) => c.child(0, s.type_index),
        (SuspectKind::Object, _, Some(o)) => {
            let mut chain = domination_path(dom, o);
            chain.reverse();
            chain.iter().fold(0, |p, &x| c.child(p, dump.row_type(x)))
        }
        _ => NO_PATH,
    }
}

/// A list cell: the prefix, the type name shortened to fit, and the
/// suffix (an object's text) where it fits beside the whole type name.
fn cell(parts: &(String, String, String), width: usize, theme: &Theme) -> String {
    let (before, after) = (text_width(&parts.0), text_width(&parts.2));
    let suffix = match before + text_width(&parts.1) + after <= width {
        true => parts.2.as_str(),
        false => "",
    };
    format!(
        "{}{}{suffix}",
        parts.0,
        type_name(
            &parts.1,
            width.saturating_sub(before + text_width(suffix)),
            theme
        ),
    )
}

fn row(
    s: &Suspect,
    compared: Option<&Compared>,
    dump: &Model,
    dom: &DominatorTree,
    theme: &Theme,
) -> SuspectRow {
    let ty = dump
        .type_names
        .get(s.type_index.index())
        .map_or("?", |n| &**n);
    let point = s.accumulation_point;
    let point_ok = (point as usize) < dump.objects();
    let x = if theme.ascii { "x" } else { "×" };
    let name_parts = match (s.kind, s.object) {
        (SuspectKind::Object, Some(o)) => row_parts(dump, o),
        _ => (
            format!("{} {x} ", count(s.instances)),
            ty.to_string(),
            String::new(),
        ),
    };
    let name = format!("{}{}{}", name_parts.0, name_parts.1, name_parts.2);
    let point_parts = if point_ok {
        row_parts(dump, ObjectIdx(point))
    } else {
        (String::new(), "-".into(), String::new())
    };
    let path_id = compared.map_or(NO_PATH, |c| suspect_path(s, c, dump, dom));
    let point = point_ok.then_some(point);
    let mut detail = detail_lines(s, &name, ty, point, dump, dom, theme);
    let path = match point {
        Some(point) => {
            let mut chain = domination_path(dom, ObjectIdx(point));
            chain.reverse();
            let names: Vec<String> = chain
                .iter()
                .map(|&o| type_name(dump.row_type_name(o), 40, theme))
                .collect();
            shorten(&names, " / ", theme)
        }
        None => String::new(),
    };
    let (growth, steady) = match compared {
        Some(c) if path_id != NO_PATH => (Some(c.growth(path_id)), c.steady(path_id)),
        _ => (None, false),
    };
    if let (Some(c), SuspectKind::Object | SuspectKind::Type, true) =
        (compared, s.kind, path_id != NO_PATH)
    {
        let f = c.cmp.paths.figures_of(path_id);
        let arrow = format!(" {} ", theme.arrow());
        let sizes: Vec<String> = f.iter().map(|x| bytes(x.retained_bytes)).collect();
        detail.insert(
            1,
            format!(
                "Its row retained {} (oldest to newest).",
                sizes.join(&arrow)
            ),
        );
    }
    SuspectRow {
        kind: s.kind,
        retained: s.retained_bytes,
        growth,
        steady,
        name: name_parts,
        point_name: point_parts,
        point: s.accumulation_point,
        detail,
        path,
    }
}

/// The sentences of a suspect's detail: what retains how much, its growth,
/// the accumulation point (`point`, when it is an object of the dump), the
/// biggest types below it, the retention path from a root.
fn detail_lines(
    s: &Suspect,
    name: &str,
    ty: &str,
    point: Option<u32>,
    dump: &Model,
    dom: &DominatorTree,
    theme: &Theme,
) -> Vec<String> {
    let mut detail = Vec::new();
    let share = percent(s.retained_bytes, dom.reachable_bytes);
    detail.push(match s.kind {
        SuspectKind::Object => format!(
            "One object, {name}, retains {} ({share} of the reachable bytes).",
            bytes(s.retained_bytes)
        ),
        SuspectKind::Type => format!(
            "{} top-level instances of {ty} retain {} ({share}).",
            count(s.instances),
            bytes(s.retained_bytes)
        ),
        SuspectKind::Growth => format!(
            "The row {name} grows in every snapshot; it retains {} now ({share}).",
            bytes(s.retained_bytes)
        ),
    });
    if let Some(g) = &s.growth {
        let arrow = format!(" {} ", theme.arrow());
        let sizes: Vec<String> = g.retained_bytes.iter().map(|&b| bytes(b)).collect();
        let counts: Vec<String> = g.count.iter().map(|&c| count(c)).collect();
        detail.push(format!(
            "Retained {}, instances {} (oldest to newest).",
            sizes.join(&arrow),
            counts.join(&arrow)
        ));
    }
    if let Some(point) = point {
        let point_name = dump.object_label(ObjectIdx(point), ROW_PREVIEW_CHARS);
        detail.push(format!(
            "Accumulation point: {point_name}, retains {} ({}).",
            bytes(dom.retained_bytes(point as usize)),
            percent(dom.retained_bytes(point as usize), dom.reachable_bytes)
        ));
    }
    if !s.top_types.is_empty() {
        let top: Vec<String> = s
            .top_types
            .iter()
            .take(5)
            .map(|&(t, b)| {
                let n = dump.type_names.get(t.index()).map_or("?", |n| &**n);
                format!("{} {}", type_name(n, 40, theme), bytes(b))
            })
            .collect();
        detail.push(format!("Biggest below the point: {}.", top.join(", ")));
    }
    if !s.retention_path.is_empty() {
        let names: Vec<String> = s
            .retention_path
            .iter()
            .map(|&o| {
                let text = dump.quoted_preview(o, CELL_PREVIEW_CHARS);
                format!("{}{text}", type_name(dump.type_name(o), 30, theme))
            })
            .collect();
        // The root's thread and frame, where it lies in one.
        let place = dump
            .root_place_of(s.retention_path[0])
            .map_or(String::new(), |p| format!(" ({p})"));
        detail.push(format!(
            "Retention path from a root{place}: {}.",
            shorten(&names, &format!(" {} ", theme.arrow()), theme)
        ));
    }
    detail
}

/// Joins `parts` with `sep`, keeping the first and last few of a long one.
fn shorten(parts: &[String], sep: &str, theme: &Theme) -> String {
    if parts.len() <= PATH_HEAD + PATH_TAIL + 1 {
        return parts.join(sep);
    }
    let mut out: Vec<String> = parts[..PATH_HEAD].to_vec();
    out.push(format!(
        "{} {} more",
        theme.ellipsis(),
        count((parts.len() - PATH_HEAD - PATH_TAIL) as u64)
    ));
    out.extend(parts[parts.len() - PATH_TAIL..].iter().cloned());
    out.join(sep)
}

/// The title's word on the comparison: waiting, running, done or failed.
fn comparison_state(ctx: &Ctx) -> String {
    let t = ctx.theme;
    match ctx.loading.comparing() {
        Comparing::Off => String::new(),
        Comparing::Waiting(n) => format!("{} growth: waits for {n} older ", t.sep()),
        Comparing::Running { snapshot, of, .. } => format!(
            "{} growth: analysing snapshot {snapshot}/{of}{} ",
            t.sep(),
            t.ellipsis()
        ),
        Comparing::Done(c) => format!(
            "{} compared with {} older ",
            t.sep(),
            c.snapshots().saturating_sub(1)
        ),
        Comparing::Failed(_) => format!("{} comparison failed ", t.sep()),
    }
}

/// Why there is no suspect.
fn draw_none(ctx: &Ctx, inner: Rect, f: &mut Frame) {
    let mut lines = vec![Line::raw(
        " No suspect: no top-level dominator and no type holds 10 % of the reachable bytes.",
    )];
    if ctx.loading.comparison_pending() {
        lines.push(Line::raw(
            " Rows that grow in every snapshot are added once the older snapshots are analysed.",
        ));
    } else if ctx.loading.compared().is_some() {
        lines.push(Line::raw(" And no row grows in every snapshot."));
    }
    f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
}

impl SuspectsPane {
    /// The list of suspects, each with its accumulation point.
    fn draw_list(&self, t: &Theme, list_area: Rect, f: &mut Frame) {
        let cols = self.columns();
        let table = Columns::new(list_area.width as usize, &cols);
        let with_growth = self.widths[1] > 0;
        let name_w = table.width(cols.len() - 1);
        let row = |i: usize| {
            let r = self.rows.get(i)?;
            let mut cells = vec![kind_label(r.kind).to_string(), bytes(r.retained)];
            if with_growth {
                let mark = if r.steady { steady_mark(t) } else { " " };
                cells.push(
                    r.growth
                        .map(|g| format!("{}{mark}", signed_bytes(g, t)))
                        .unwrap_or_default(),
                );
            }
            // The suspect and its point share the name column.
            let arrow = format!(" {} ", t.arrow());
            let half = name_w.saturating_sub(text_width(&arrow)) / 2;
            let point = cell(&r.point_name, half, t);
            let name = cell(
                &r.name,
                name_w.saturating_sub(text_width(&arrow) + text_width(&point)),
                t,
            );
            cells.push(format!("{name}{arrow}{point}"));
            Some(TableRow::of(cells))
        };
        let page = Page {
            list: &self.list,
            len: self.rows.len(),
            height: list_area.height.saturating_sub(1) as usize,
            selected: t.selected(),
        };
        f.render_widget(
            ScrolledTable::page(&table, &cols, t, page, row, String::new),
            list_area,
        );
    }

    /// The selected suspect's detail, wrapped here so that the scroll
    /// (`J`/`K`) can stop at its last line; the rule above says which lines
    /// are shown.
    fn draw_detail(&self, t: &Theme, area: Rect, detail_area: Rect, f: &mut Frame) {
        let text_area = self.detail_area(area);
        let lines = self.detail_lines(text_area.width as usize);
        let height = text_area.height as usize;
        let first = self.detail_scroll.min(lines.len().saturating_sub(height));
        let rule_w = detail_area.width as usize;
        let mut rule = t.border().horizontal_top.repeat(rule_w);
        if lines.len() > height && height > 0 {
            let last = (first + height).min(lines.len());
            let more = match (first > 0, last < lines.len()) {
                (_, true) => "J: more",
                (true, false) => "K: back up",
                _ => "",
            };
            let label = format!(
                " detail {}{}{} of {} {} {more} ",
                first + 1,
                if t.ascii { "-" } else { "–" },
                last,
                lines.len(),
                t.sep()
            );
            if text_width(&label) + 2 <= rule_w {
                let h = t.border().horizontal_top;
                rule = format!(
                    "{h}{label}{}",
                    h.repeat(rule_w.saturating_sub(text_width(&label) + 1))
                );
            }
        }
        f.render_widget(Paragraph::new(Line::styled(rule, t.dim())), detail_area);
        let shown: Vec<Line> = lines
            .into_iter()
            .skip(first)
            .take(height)
            .map(|(l, dim)| {
                if dim {
                    Line::styled(l, t.dim())
                } else {
                    Line::raw(l)
                }
            })
            .collect();
        f.render_widget(Paragraph::new(shown), text_area);
    }
}

impl Pane for SuspectsPane {
    fn arrived(&mut self, what: Arrived, ctx: &Ctx) -> Vec<Intent> {
        if !matches!(what, Arrived::Suspects | Arrived::Comparison) {
            return Vec::new();
        }
        let (Some(graph), Some(dom), Some(s)) = (
            ctx.loading.graph(),
            ctx.loading.dom(),
            ctx.loading.suspects(),
        ) else {
            return Vec::new();
        };
        let compared = ctx.loading.compared().map(|c| &**c);
        self.measure(s, compared, &graph.dump, dom, ctx.theme);
        Vec::new()
    }

    fn filterable(&self) -> bool {
        false
    }

    fn key(&mut self, cmd: Cmd, ctx: &Ctx) -> Vec<Intent> {
        match cmd {
            Cmd::DetailDown | Cmd::DetailUp => {
                let max = self.max_scroll(ctx.body);
                self.detail_scroll = match cmd {
                    Cmd::DetailDown => (self.detail_scroll + 1).min(max),
                    _ => self.detail_scroll.saturating_sub(1).min(max),
                };
                if max == 0 {
                    vec![Intent::status("the whole detail is shown")]
                } else {
                    Vec::new()
                }
            }
            Cmd::Open => match self.rows.get(self.list.selected) {
                Some(r) if r.point != u32::MAX => vec![Intent::Jump(reveal(ObjectIdx(r.point)))],
                Some(_) => vec![Intent::status("this suspect has no accumulation point")],
                None => Vec::new(),
            },
            _ => Vec::new(),
        }
    }

    fn step(&mut self, delta: isize, ctx: &Ctx) -> Vec<Intent> {
        let inner = ctx.body.height.saturating_sub(2);
        let before = self.list.selected;
        self.list
            .step(delta, self.rows.len(), self.visible_rows(inner));
        if self.list.selected != before {
            self.detail_scroll = 0;
        }
        Vec::new()
    }

    fn fit(&mut self, ctx: &Ctx) {
        let inner = ctx.body.height.saturating_sub(2);
        self.list.scroll(self.rows.len(), self.visible_rows(inner));
        self.detail_scroll = self.detail_scroll.min(self.max_scroll(ctx.body));
    }

    fn selected_object(&self, _ctx: &Ctx) -> Option<ObjectIdx> {
        self.rows
            .get(self.list.selected)
            .map(|r| r.point)
            .filter(|&p| p != u32::MAX)
            .map(ObjectIdx)
    }

    fn click_geometry(&self) -> Option<(usize, usize, u16)> {
        Some((self.list.selected, self.list.offset, 2))
    }

    fn draw(&self, ctx: &Ctx, area: Rect, f: &mut Frame) {
        let t = ctx.theme;
        let block = Block::bordered()
            .border_set(t.border())
            .title(Line::from(vec![
                Span::styled(" Leak suspects ", t.header()),
                Span::raw(comparison_state(ctx)),
            ]));
        let inner = block.inner(area);
        f.render_widget(block, area);
        let (Some(_), Some(_)) = (ctx.loading.graph(), ctx.loading.suspects()) else {
            let msg = if ctx.loading.error().is_some() {
                " no data"
            } else {
                " finding the leak suspects (after the duplicates)…"
            };
            f.render_widget(Paragraph::new(msg), inner);
            return;
        };
        if self.rows.is_empty() {
            draw_none(ctx, inner, f);
            return;
        }
        let [list_area, detail_area] = Layout::vertical([
            Constraint::Length(self.list_lines(inner.height)),
            Constraint::Min(0),
        ])
        .areas(inner);
        self.draw_list(t, list_area, f);
        self.draw_detail(t, area, detail_area, f);
    }
}
