//! The Roots pane: root records grouped by kind and flags with the retained
//! bytes of their objects; a group expands to its records.

use std::collections::HashSet;

use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph};
use ratatui::Frame;

use super::ListState;
use crate::analysis::roots::RootGroup;
use crate::dump::{root_flags, root_kind, Dump};
use crate::tui::app::App;
use crate::tui::fmt::{bytes, count, fit};

/// Records listed per expanded group at most.
const RECORDS_SHOWN: usize = 1000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootRow {
    Group(usize),
    /// (group, index into `Dump::roots`)
    Record(usize, u32),
    More(usize, usize),
}

#[derive(Debug, Default)]
pub struct RootsPane {
    pub list: ListState,
    pub rows: Vec<RootRow>,
    pub expanded: HashSet<usize>,
}

impl RootsPane {
    /// Rebuilds rows; with a type mask, records of other types are hidden
    /// and so are groups left empty. O(roots shown).
    pub fn rebuild(&mut self, dump: &Dump, groups: &[RootGroup], mask: Option<&[bool]>) {
        self.rows.clear();
        for (gi, g) in groups.iter().enumerate() {
            let ok = |r: &u32| {
                mask.is_none_or(|m| m[dump.types[dump.roots[*r as usize].object as usize] as usize])
            };
            if mask.is_some() && !g.roots.iter().any(ok) {
                continue;
            }
            self.rows.push(RootRow::Group(gi));
            if self.expanded.contains(&gi) {
                let recs: Vec<u32> = g.roots.iter().copied().filter(ok).collect();
                for &r in recs.iter().take(RECORDS_SHOWN) {
                    self.rows.push(RootRow::Record(gi, r));
                }
                if recs.len() > RECORDS_SHOWN {
                    self.rows
                        .push(RootRow::More(gi, recs.len() - RECORDS_SHOWN));
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
    let (Some(graph), Some(dom), Some(groups)) = (&app.graph, &app.dom, &app.roots) else {
        f.render_widget(Paragraph::new(" waiting for the dominator tree…"), inner);
        return;
    };
    let dump = &graph.dump;
    let w = inner.width as usize;
    let mut lines = vec![Line::styled(
        format!(
            " {:<36}{:>9}{:>9}{:>12}",
            "Kind [flags] / object", "Records", "Objects", "Retained"
        ),
        theme.header(),
    )];
    let height = inner.height.saturating_sub(1) as usize;
    for (i, row) in pane
        .rows
        .iter()
        .enumerate()
        .skip(pane.list.offset)
        .take(height)
    {
        let sel = i == pane.list.selected;
        let text = match *row {
            RootRow::Group(gi) => {
                let g = &groups[gi];
                let mark = if pane.expanded.contains(&gi) {
                    theme.expanded()
                } else {
                    theme.collapsed()
                };
                format!(
                    "{mark} {:<34}{:>9}{:>9}{:>12}",
                    fit(
                        &format!(
                            "{} [{}]",
                            root_kind::name(g.kind),
                            root_flags::describe(g.flags)
                        ),
                        34,
                        theme
                    ),
                    count(g.roots.len() as u64),
                    count(g.objects),
                    bytes(g.retained_bytes)
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
                let label = format!(
                    "{} {}{container}",
                    dump.type_name(root.object),
                    dump.id_hex(root.object)
                );
                format!(
                    "   {:<50}{:>12}",
                    fit(&label, 50, theme),
                    bytes(dom.retained_bytes[root.object as usize])
                )
            }
            RootRow::More(_, n) => {
                format!("    {} {} more records", theme.ellipsis(), count(n as u64))
            }
        };
        let text = fit(&format!("{}{text}", if sel { ">" } else { " " }), w, theme);
        lines.push(Line::styled(
            text,
            if sel {
                theme.selected()
            } else {
                Default::default()
            },
        ));
    }
    f.render_widget(Paragraph::new(lines), inner);
}
