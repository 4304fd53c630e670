//! The Duplicates pane: duplicate sets by additional bytes (SPEC §2.4) with
//! their holding sets, possible duplicates, and per set its members and the
//! instance graph of one member.

use std::sync::Arc;

use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph};
use ratatui::Frame;

use super::ListState;
use crate::graph::duplicates::{DuplicateSet, Duplicates};
use crate::graph::HeapGraph;
use crate::tui::app::{App, PaneId};
use crate::tui::fmt::{bytes, bytes_width, count, count_width, fit, type_name, Col, Columns};
use crate::tui::theme::Theme;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DupRow {
    Set(u32),
    /// Index into `Duplicates::possible`.
    Possible(u32),
}

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
            "Set #{} {} {} x {}, {} each, {} objects per copy, {} additional",
            s.id,
            theme.sep(),
            count(s.members.len() as u64),
            dump.type_names[s.type_index as usize],
            bytes(s.instance_bytes),
            count(s.objects_per_copy),
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

pub fn draw(app: &App, area: Rect, f: &mut Frame) {
    let theme = &app.theme;
    let pane = &app.dups_pane;
    let title = match app.loading.duplicates() {
        Some(d) => format!(
            " Duplicates: {} sets, {} in extra instances ",
            count(d.sets.len() as u64),
            bytes(app.totals.additional_bytes),
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
    let (Some(graph), Some(d)) = (app.loading.graph(), &pane.source) else {
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
    let mut lines = vec![
        Line::styled(
            fit(
                " equal = same type, size and reference shape (dumps hold no field values)",
                w,
                theme,
            ),
            theme.dim(),
        ),
        Line::styled(table.header(&cols, theme), theme.header()),
    ];
    let end = pane.rows.len().min(pane.list.offset + height);
    for (i, row) in (pane.list.offset..end).filter_map(|i| Some((i, pane.rows.get(i)?))) {
        let sel = i == pane.list.selected;
        let marker = if sel { ">" } else { " " };
        let text = match row {
            DupRow::Set(id) => {
                let s = &d.sets[id as usize];
                table.row(
                    marker,
                    &[
                        &format!("#{}", s.id),
                        &bytes(s.additional_bytes),
                        &count(s.members.len() as u64),
                        &bytes(s.instance_bytes),
                        &count(s.objects_per_copy),
                        if s.trivial { "trivial" } else { "full" },
                        &s.holding_set
                            .map_or("-".to_string(), |h| format!("{}#{h}", theme.arrow())),
                        &type_name(&dump.type_names[s.type_index as usize], type_w, theme),
                    ],
                    theme,
                )
            }
            DupRow::Possible(p) => {
                let p = &d.possible[p as usize];
                table.row(
                    marker,
                    &[
                        "?",
                        "-",
                        &count(p.instances.len() as u64),
                        "-",
                        "-",
                        "possible",
                        "D:detect",
                        &type_name(&dump.type_names[p.type_index as usize], type_w, theme),
                    ],
                    theme,
                )
            }
        };
        let text = fit(&text, w, theme);
        lines.push(Line::styled(
            text,
            if sel {
                theme.selected()
            } else {
                Default::default()
            },
        ));
    }
    if pane.rows.is_empty() {
        let empty = super::empty_message(
            app,
            PaneId::Duplicates,
            "duplicate sets",
            "no duplicate sets",
        );
        lines.push(Line::raw(fit(&empty, w, theme)));
    }
    f.render_widget(Paragraph::new(lines), inner);
}
