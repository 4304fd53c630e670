//! The Duplicates pane: duplicate sets by additional bytes (SPEC §2.4) with
//! their holding sets, possible duplicates, and per set its members and the
//! instance graph of one member.

use std::sync::Arc;

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph};
use ratatui::Frame;

use super::table::{ScrolledTable, TableRow};
use super::{empty_message, Ctx, FilterPlan, Intent, ListState, Pane};
use crate::analysis::filter::TypeFilter;
use crate::graph::duplicates::{DuplicateSet, Duplicates};
use crate::graph::HeapGraph;
use crate::tui::filtering::{FilterResult, FilterWork};
use crate::tui::fmt::{bytes, bytes_width, count, count_width, fit, type_name, Col, Columns};
use crate::tui::keys::Cmd;
use crate::tui::theme::Theme;
use crate::tui::worker::Job;

pub use crate::tui::filtering::DupRow;

#[derive(Debug, Clone)]
pub struct DetailLine {
    pub text: String,
    pub object: Option<u32>,
}

#[derive(Debug, Clone)]
pub struct DupDetail {
    pub set: u32,
    pub lines: Vec<DetailLine>,
    pub list: ListState,
}

/// The rows of the list: every set then every possible-duplicates type
/// (no filter: nothing to store), or the filter thread's selection (sets
/// in set order, then possible duplicates).
#[derive(Debug, Clone)]
pub enum DupRows {
    All { sets: usize, possible: usize },
    Filtered(Arc<Vec<DupRow>>),
}

impl Default for DupRows {
    fn default() -> Self {
        DupRows::All {
            sets: 0,
            possible: 0,
        }
    }
}

impl DupRows {
    pub fn len(&self) -> usize {
        match self {
            DupRows::All { sets, possible } => sets + possible,
            DupRows::Filtered(rows) => rows.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, i: usize) -> Option<DupRow> {
        match self {
            &DupRows::All { sets, possible } => {
                if i < sets {
                    Some(DupRow::Set(i as u32))
                } else if i < sets + possible {
                    Some(DupRow::Possible((i - sets) as u32))
                } else {
                    None
                }
            }
            DupRows::Filtered(rows) => rows.get(i).copied(),
        }
    }

    fn sets(&self) -> usize {
        match self {
            DupRows::All { sets, .. } => *sets,
            DupRows::Filtered(rows) => rows.partition_point(|r| matches!(r, DupRow::Set(_))),
        }
    }

    /// The row of a set (set ids are positions, rows keep set order).
    pub fn row_of_set(&self, set: u32) -> Option<usize> {
        match self {
            DupRows::All { sets, .. } => ((set as usize) < *sets).then_some(set as usize),
            DupRows::Filtered(rows) => {
                let sets = &rows[..self.sets()];
                sets.binary_search_by_key(&set, |r| match r {
                    DupRow::Set(s) => *s,
                    DupRow::Possible(_) => u32::MAX,
                })
                .ok()
            }
        }
    }
}

#[derive(Debug, Default)]
pub struct DuplicatesPane {
    pub list: ListState,
    pub rows: DupRows,
    /// The detection result `rows` index into. It trails
    /// `App::duplicates` while a filter over a newer result is computed,
    /// so rows and sets always agree.
    pub source: Option<Arc<Duplicates>>,
    pub detail: Option<DupDetail>,
    /// Column widths for `source` (see [`DupWidths::measure`]).
    pub widths: DupWidths,
}

/// Widths of the list's values over every set and possible-duplicates type
/// of a detection result: measured once per result (O(sets), no text
/// formatted), so filtering never moves the columns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DupWidths {
    /// Digits of the largest set id (`#` comes on top).
    pub id_digits: usize,
    pub additional: usize,
    pub instances: usize,
    pub instance_bytes: usize,
    pub objects_per_copy: usize,
    /// Digits of the largest holding set id (the arrow and `#` on top).
    pub holder_digits: usize,
    /// There are possible-duplicates rows (`possible`, `D:detect`).
    pub possible: bool,
}

impl DupWidths {
    pub fn measure(d: &Duplicates) -> DupWidths {
        let max = |f: &dyn Fn(&DuplicateSet) -> u64| d.sets.iter().map(f).max().unwrap_or(0);
        let possible = d.possible.iter().map(|p| p.instances.len() as u64).max();
        let digits = |n: u64| n.to_string().len();
        DupWidths {
            id_digits: digits(max(&|s| s.id as u64)),
            additional: bytes_width(max(&|s| s.additional_bytes)),
            instances: count_width(max(&|s| s.members.len() as u64).max(possible.unwrap_or(0))),
            instance_bytes: bytes_width(max(&|s| s.instance_bytes)),
            objects_per_copy: count_width(max(&|s| s.objects_per_copy)),
            holder_digits: digits(max(&|s| s.holding_set.map_or(0, u64::from))),
            possible: possible.is_some(),
        }
    }

    /// Set, Additional, Inst., Per inst, Per copy, Kind, Held by, Type.
    fn columns(&self, theme: &Theme) -> [Col; 8] {
        let mut held = theme.arrow().chars().count() + 1 + self.holder_digits;
        let mut kind = "trivial".len();
        if self.possible {
            held = held.max("D:detect".len());
            kind = "possible".len();
        }
        [
            Col::text("Set", 1 + self.id_digits),
            Col::num("Additional", self.additional),
            Col::num("Inst.", self.instances),
            // On a narrow terminal the type name needs the room more (the
            // set's detail still shows both).
            Col::num("Per inst", self.instance_bytes).optional(1),
            Col::num("Per copy", self.objects_per_copy).optional(2),
            Col::text("Kind", kind),
            Col::text("Held by", held),
            Col::name("Type"),
        ]
    }
}

/// Objects listed in a member's instance graph at most.
const GRAPH_LIMIT: usize = 300;

impl DuplicatesPane {
    /// Shows `rows` of `source`. O(1), but O(sets) for a new `source`.
    pub fn show(&mut self, source: Arc<Duplicates>, rows: DupRows) {
        if !self
            .source
            .as_ref()
            .is_some_and(|s| Arc::ptr_eq(s, &source))
        {
            self.widths = DupWidths::measure(&source);
        }
        self.rows = rows;
        self.source = Some(source);
        self.list.scroll(self.rows.len(), usize::MAX);
    }

    /// Shows every set and possible-duplicates type of `source`.
    pub fn show_all(&mut self, source: Arc<Duplicates>) {
        let rows = DupRows::All {
            sets: source.sets.len(),
            possible: source.possible.len(),
        };
        self.show(source, rows);
    }

    pub fn row_of_set(&self, set: u32) -> Option<usize> {
        self.rows.row_of_set(set)
    }
}

/// Rows of sets below the note and the header.
pub fn list_height(inner_height: u16) -> usize {
    inner_height.saturating_sub(2) as usize
}

/// Members, then the instance graph of the first member: a depth-first
/// walk of its references, each object listed once (later visits marked).
pub fn detail(graph: &HeapGraph, d: &Duplicates, set: u32, theme: &Theme) -> DupDetail {
    let dump = &graph.dump;
    let s = &d.sets[set as usize];
    let mut lines = vec![DetailLine {
        text: format!(
            "Set #{} {} {} x {}, {} each, {} per copy, {} additional",
            s.id,
            theme.sep(),
            count(s.members.len() as u64),
            dump.type_names[s.type_index as usize],
            bytes(s.instance_bytes),
            crate::tui::fmt::counted(s.objects_per_copy, "object", "objects"),
            bytes(s.additional_bytes)
        ),
        object: None,
    }];
    if let Some(h) = s.holding_set {
        lines.push(DetailLine {
            text: format!("held by {} set #{h} (H jumps there)", theme.arrow()),
            object: None,
        });
    }
    lines.push(DetailLine {
        text: "Members (Enter inspects):".into(),
        object: None,
    });
    for &m in &s.members {
        lines.push(DetailLine {
            text: format!("  {} {}", dump.id_hex(m), dump.type_name(m)),
            object: Some(m),
        });
    }
    let Some(&first) = s.members.first() else {
        return DupDetail {
            set,
            lines,
            list: ListState::default(),
        };
    };
    lines.push(DetailLine {
        text: format!("Instance graph of {}:", dump.id_hex(first)),
        object: None,
    });
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![(first, 0usize)];
    let mut listed = 0;
    while let Some((o, depth)) = stack.pop() {
        if listed == GRAPH_LIMIT {
            lines.push(DetailLine {
                text: format!("  {} (first {GRAPH_LIMIT} objects shown)", theme.ellipsis()),
                object: None,
            });
            break;
        }
        listed += 1;
        let again = !seen.insert(o);
        lines.push(DetailLine {
            text: format!(
                "  {}{} {} {}{}",
                "  ".repeat(depth),
                dump.type_name(o),
                dump.id_hex(o),
                bytes(dump.sizes[o as usize]),
                if again { " (again)" } else { "" }
            ),
            object: Some(o),
        });
        if !again {
            for &r in graph.refs(o).iter().rev() {
                stack.push((r, depth + 1));
            }
        }
    }
    // Start on the first member: the lines above it are headings.
    let first = lines.iter().position(|l| l.object.is_some()).unwrap_or(0);
    DupDetail {
        set,
        lines,
        list: ListState {
            selected: first,
            offset: 0,
        },
    }
}

impl DuplicatesPane {
    /// Whether the rows are those of `d` with no filter result pending.
    pub fn shows(&self, d: &Arc<Duplicates>) -> bool {
        self.source.as_ref().is_some_and(|s| Arc::ptr_eq(s, d))
    }

    /// Selects `set` (which must be among the rows, else the first row) and
    /// opens its detail or closes any.
    pub fn select_set(
        &mut self,
        set: u32,
        open: bool,
        graph: Option<&Arc<HeapGraph>>,
        theme: &Theme,
    ) {
        self.list.selected = self.row_of_set(set).unwrap_or(0);
        self.detail = match (open, graph, &self.source) {
            (true, Some(g), Some(d)) => Some(detail(g, d, set, theme)),
            _ => None,
        };
    }

    /// The set the Duplicates keys act on: the detail's, or the selected row's.
    fn current_set(&self) -> Option<u32> {
        match &self.detail {
            Some(det) => Some(det.set),
            None => match self.rows.get(self.list.selected) {
                Some(DupRow::Set(s)) => Some(s),
                _ => None,
            },
        }
    }

    fn detect_possible(&self, ctx: &Ctx) -> Vec<Intent> {
        let Some(DupRow::Possible(p)) = self.rows.get(self.list.selected) else {
            return vec![Intent::status("select a possible-duplicates row")];
        };
        let (Some(shown), Some(current)) = (&self.source, ctx.loading.duplicates()) else {
            return Vec::new();
        };
        let job = Job::DetectDuplicates {
            type_index: shown.possible[p as usize].type_index,
            current: current.clone(),
        };
        vec![Intent::Request {
            job,
            label: "detecting duplicates".into(),
        }]
    }
}

impl Pane for DuplicatesPane {
    fn key(&mut self, cmd: Cmd, ctx: &Ctx) -> Vec<Intent> {
        match cmd {
            Cmd::Open => {
                let (Some(graph), Some(d)) = (ctx.loading.graph(), self.source.clone()) else {
                    return Vec::new();
                };
                if let Some(det) = &self.detail {
                    return match det.lines.get(det.list.selected).and_then(|l| l.object) {
                        Some(o) => vec![Intent::Inspect(o)],
                        None => Vec::new(),
                    };
                }
                match self.rows.get(self.list.selected) {
                    Some(DupRow::Set(s)) => {
                        self.detail = Some(detail(graph, &d, s, ctx.theme));
                        vec![Intent::History]
                    }
                    Some(DupRow::Possible(_)) => self.detect_possible(ctx),
                    None => Vec::new(),
                }
            }
            Cmd::JumpHoldingSet => {
                let Some(d) = &self.source else {
                    return Vec::new();
                };
                match self
                    .current_set()
                    .and_then(|s| d.sets[s as usize].holding_set)
                {
                    Some(h) => vec![Intent::JumpToSet {
                        set: h,
                        open: self.detail.is_some(),
                    }],
                    None => vec![Intent::status("this set is not held by another set")],
                }
            }
            Cmd::DetectPossible => self.detect_possible(ctx),
            _ => Vec::new(),
        }
    }

    fn step(&mut self, delta: isize, ctx: &Ctx) -> Vec<Intent> {
        let h = ctx.rows();
        if let Some(det) = &mut self.detail {
            let n = det.lines.len();
            det.list.step(delta, n, h);
        } else {
            let n = self.rows.len();
            self.list.step(delta, n, h.saturating_sub(1));
        }
        Vec::new()
    }

    fn selected_object(&self, _ctx: &Ctx) -> Option<u32> {
        let d = self.source.as_ref()?;
        if let Some(det) = &self.detail {
            if let Some(o) = det.lines.get(det.list.selected).and_then(|l| l.object) {
                return Some(o);
            }
            return d.sets[det.set as usize].members.first().copied();
        }
        match self.rows.get(self.list.selected)? {
            DupRow::Set(s) => d.sets[s as usize].members.first().copied(),
            DupRow::Possible(p) => d.possible[p as usize].instances.first().copied(),
        }
    }

    fn fit(&mut self, ctx: &Ctx) {
        let h = ctx.rows();
        let n = self.rows.len();
        self.list.scroll(n, h.saturating_sub(1));
        if let Some(det) = &mut self.detail {
            det.list.scroll(det.lines.len(), h);
        }
    }

    fn filter(&mut self, filter: &TypeFilter, ctx: &Ctx) -> FilterPlan {
        let (Some(graph), Some(duplicates)) = (ctx.loading.graph(), ctx.loading.duplicates())
        else {
            return FilterPlan::NotReady;
        };
        if filter.is_empty() {
            self.show_all(duplicates.clone());
            FilterPlan::Cleared
        } else {
            FilterPlan::Work(FilterWork::Duplicates {
                graph: graph.clone(),
                duplicates: duplicates.clone(),
            })
        }
    }

    fn filtered(&mut self, result: FilterResult, _ctx: &Ctx) {
        if let FilterResult::Duplicates { source, rows } = result {
            self.show(source, DupRows::Filtered(rows));
        }
    }

    fn click_geometry(&self) -> Option<(usize, usize, u16)> {
        Some(match &self.detail {
            Some(det) => (det.list.selected, det.list.offset, 2),
            None => (self.list.selected, self.list.offset, 3),
        })
    }

    fn draw(&self, ctx: &Ctx, area: Rect, f: &mut Frame) {
        let theme = ctx.theme;
        let pane = self;
        let title = match ctx.loading.duplicates() {
            Some(d) => format!(
                " Duplicates: {} sets, {} in extra instances ",
                count(d.sets.len() as u64),
                bytes(ctx.totals.additional_bytes),
            ),
            None => " Duplicates ".into(),
        };
        let block = Block::bordered()
            .border_set(theme.border())
            .title(Line::styled(
                fit(&title, area.width.saturating_sub(2) as usize, theme),
                theme.header(),
            ));
        let inner = block.inner(area);
        f.render_widget(block, area);
        let (Some(graph), Some(d)) = (ctx.loading.graph(), &pane.source) else {
            f.render_widget(Paragraph::new(" detecting duplicates…"), inner);
            return;
        };
        let dump = &graph.dump;
        let height = inner.height.saturating_sub(1) as usize;
        if let Some(det) = &pane.detail {
            let mut lines = vec![Line::styled(
                " Set detail (Backspace: back to the list)",
                theme.header(),
            )];
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
            return;
        }
        let w = inner.width as usize;
        let height = list_height(inner.height);
        let cols = pane.widths.columns(theme);
        let table = Columns::new(w, &cols);
        let type_w = table.width(7);
        // Where the dump has values and field names (HPROF, V8), members
        // were compared by them: no caveat (SPEC 2.4).
        let caveat = if d.has_values() {
            " equal = same type, size, values and fields, all the way down"
        } else {
            " equal = same type, size and reference shape (dumps hold no field values)"
        };
        let note = Line::styled(fit(caveat, w, theme), theme.dim());
        let [note_area, list_area] =
            Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(inner);
        f.render_widget(Paragraph::new(note), note_area);
        let mut shown = Vec::new();
        let end = pane.rows.len().min(pane.list.offset + height);
        for (i, row) in (pane.list.offset..end).filter_map(|i| Some((i, pane.rows.get(i)?))) {
            let sel = i == pane.list.selected;
            let cells: Vec<String> = match row {
                DupRow::Set(id) => {
                    let s = &d.sets[id as usize];
                    vec![
                        format!("#{}", s.id),
                        bytes(s.additional_bytes),
                        count(s.members.len() as u64),
                        bytes(s.instance_bytes),
                        count(s.objects_per_copy),
                        (if s.trivial { "trivial" } else { "full" }).into(),
                        s.holding_set
                            .map_or("-".to_string(), |h| format!("{}#{h}", theme.arrow())),
                        type_name(&dump.type_names[s.type_index as usize], type_w, theme),
                    ]
                }
                DupRow::Possible(p) => {
                    let p = &d.possible[p as usize];
                    vec![
                        "?".into(),
                        "-".into(),
                        count(p.instances.len() as u64),
                        "-".into(),
                        "-".into(),
                        "possible".into(),
                        "D:detect".into(),
                        type_name(&dump.type_names[p.type_index as usize], type_w, theme),
                    ]
                }
            };
            let style = if sel {
                theme.selected()
            } else {
                Default::default()
            };
            shown.push(TableRow::cells(cells, sel, style));
        }
        let empty = pane
            .rows
            .is_empty()
            .then(|| empty_message(ctx, false, "duplicate sets", "no duplicate sets"));
        f.render_widget(
            ScrolledTable {
                columns: &table,
                header: &cols,
                theme,
                rows: shown,
                empty,
            },
            list_area,
        );
    }
}
