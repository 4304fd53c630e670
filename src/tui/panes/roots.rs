//! The Roots pane: root records grouped by kind and flags with the retained
//! bytes of their objects; a group expands to its records.

use std::collections::HashSet;
use std::sync::Arc;

use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph};
use ratatui::Frame;

use super::ListState;
use crate::analysis::roots::RootGroup;
use crate::model::{root_flags, root_kind, Model};
use crate::tui::app::{App, PaneId};
use crate::tui::filtering::CHECK_EVERY;
use crate::tui::fmt::{bytes, bytes_width, count, count_width, fit, type_name, Col, Columns};

/// Records listed per expanded group at most.
const RECORDS_SHOWN: usize = 1000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootRow {
    Group(usize),
    /// (group, index into `Model::roots`)
    Record(usize, u32),
    More(usize, usize),
}

/// A root group under a filter: how many of its records match, and the
/// first [`RECORDS_SHOWN`] of them (all a view ever lists).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupMatch {
    pub records: usize,
    pub first: Vec<u32>,
}

/// Per group, its records whose object's type passes `mask` (O(roots); the
/// filter thread runs it). `None` when `superseded` says to give up.
pub fn match_groups(
    dump: &Model,
    groups: &[RootGroup],
    mask: &[bool],
    superseded: &dyn Fn() -> bool,
) -> Option<Vec<GroupMatch>> {
    let mut out = Vec::with_capacity(groups.len());
    for g in groups {
        let mut m = GroupMatch {
            records: 0,
            first: Vec::new(),
        };
        for (i, &r) in g.roots.iter().enumerate() {
            if i % CHECK_EVERY == 0 && superseded() {
                return None;
            }
            let object = dump.roots[r as usize].object;
            if mask[dump.types[object as usize] as usize] {
                m.records += 1;
                if m.first.len() < RECORDS_SHOWN {
                    m.first.push(r);
                }
            }
        }
        out.push(m);
    }
    Some(out)
}

#[derive(Debug, Default)]
pub struct RootsPane {
    pub list: ListState,
    pub rows: Vec<RootRow>,
    pub expanded: HashSet<usize>,
    /// The filter's matches per group (`None`: no filter).
    pub matches: Option<Arc<Vec<GroupMatch>>>,
    /// Widths of the records, objects and retained bytes of any row (see
    /// [`RootsPane::measure`]).
    pub widths: [usize; 3],
}

impl RootsPane {
    /// Sizes the number columns for the widest group, once per dump. A
    /// record's object retains no more than its group.
    pub fn measure(&mut self, groups: &[RootGroup]) {
        let max = |f: fn(&RootGroup) -> u64| groups.iter().map(f).max().unwrap_or(0);
        self.widths = [
            count_width(max(|g| g.roots.len() as u64)),
            count_width(max(|g| g.objects)),
            bytes_width(max(|g| g.retained_bytes)),
        ];
    }

    fn columns(&self) -> [Col; 4] {
        [
            Col::name("Kind [flags] / object"),
            Col::num("Records", self.widths[0]),
            Col::num("Objects", self.widths[1]),
            Col::num("Retained", self.widths[2]),
        ]
    }

    /// Rebuilds rows from the groups, the expanded set and the filter's
    /// matches: groups without a match are hidden. O(groups + records
    /// shown), so expanding a group of a million records costs a page.
    pub fn rebuild(&mut self, groups: &[RootGroup]) {
        self.rows.clear();
        for (gi, g) in groups.iter().enumerate() {
            let (records, first): (usize, &[u32]) = match &self.matches {
                Some(m) => (m[gi].records, &m[gi].first),
                None => (g.roots.len(), &g.roots[..g.roots.len().min(RECORDS_SHOWN)]),
            };
            if self.matches.is_some() && records == 0 {
                continue;
            }
            self.rows.push(RootRow::Group(gi));
            if self.expanded.contains(&gi) {
                for &r in first {
                    self.rows.push(RootRow::Record(gi, r));
                }
                if records > first.len() {
                    self.rows.push(RootRow::More(gi, records - first.len()));
                }
            }
        }
        self.list.scroll(self.rows.len(), usize::MAX);
    }
}

pub fn draw(app: &App, area: Rect, f: &mut Frame) {
    let theme = &app.theme;
    let pane = &app.roots_pane;
    let block = Block::bordered()
        .border_set(theme.border())
        .title(Line::styled(" Roots by kind and flags ", theme.header()));
    let inner = block.inner(area);
    f.render_widget(block, area);
    let (Some(graph), Some(dom), Some(groups)) =
        (app.loading.graph(), app.loading.dom(), app.loading.roots())
    else {
        f.render_widget(Paragraph::new(" waiting for the dominator tree…"), inner);
        return;
    };
    let dump = &graph.dump;
    let w = inner.width as usize;
    let cols = pane.columns();
    let table = Columns::new(w, &cols);
    // A record's label spans the name, records and objects columns.
    let label_w = table.span(0, 3);
    let mut lines = vec![Line::styled(table.header(&cols, theme), theme.header())];
    let height = inner.height.saturating_sub(1) as usize;
    for (i, row) in pane
        .rows
        .iter()
        .enumerate()
        .skip(pane.list.offset)
        .take(height)
    {
        let sel = i == pane.list.selected;
        let sel_mark = if sel { ">" } else { " " };
        let text = match *row {
            RootRow::Group(gi) => {
                let g = &groups[gi];
                let mark = if pane.expanded.contains(&gi) {
                    theme.expanded()
                } else {
                    theme.collapsed()
                };
                let name = format!(
                    "{mark} {} [{}]",
                    root_kind::name(g.kind),
                    root_flags::describe(g.flags)
                );
                table.row(
                    sel_mark,
                    &[
                        &name,
                        &count(g.roots.len() as u64),
                        &count(g.objects),
                        &bytes(g.retained_bytes),
                    ],
                    theme,
                )
            }
            RootRow::Record(_, r) => {
                let root = &dump.roots[r as usize];
                // Statics name their declaring class when it is not the
                // object's own type.
                let container = root
                    .container_type
                    .filter(|&t| t != dump.types[root.object as usize])
                    .map(|t| format!(" (static of {})", dump.type_names[t as usize]))
                    .unwrap_or_default();
                // The type gives way to the id; a long declaring class is
                // cut at the end.
                let id = dump.id_hex(root.object);
                let room = label_w
                    .saturating_sub(4 + id.len() + container.chars().count())
                    .max(12);
                let label = format!(
                    "   {} {id}{container}",
                    type_name(dump.type_name(root.object), room, theme)
                );
                format!(
                    "{sel_mark}{:<label_w$} {:>rw$}",
                    fit(&label, label_w, theme),
                    bytes(dom.retained_bytes[root.object as usize]),
                    rw = table.width(3),
                )
            }
            RootRow::More(_, n) => {
                format!(
                    "{sel_mark}   {} {} more records",
                    theme.ellipsis(),
                    count(n as u64)
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
        let empty =
            super::empty_message(app, PaneId::Roots, "roots", "the dump has no root records");
        lines.push(Line::raw(fit(&empty, w, theme)));
    }
    f.render_widget(Paragraph::new(lines), inner);
}
