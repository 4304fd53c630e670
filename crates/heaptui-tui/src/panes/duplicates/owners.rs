//! The Duplicates pane's owners view (`O`): duplicate waste by the
//! structure that holds the copies (docs/duplicates.md, "Who holds the
//! copies"), computed once per detection result by a job, listed by wasted
//! bytes; an owner expands to its sets.

use std::sync::Arc;

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::super::{Ctx, Intent, ListState};
use super::DuplicatesPane;
use crate::fmt::{bytes, count, fit, type_name};
use crate::keys::Cmd;
use crate::theme::Theme;
use crate::worker::Job;
use heaptui_core::analysis::owners::Owners;
use heaptui_core::graph::duplicates::Duplicates;
use heaptui_core::model::{Model, ObjectIdx};

/// A row of the owners list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OwnerRow {
    /// An owner (a position in [`Owners::owners`]).
    Owner(u32),
    /// One of an expanded owner's sets: (owner, position in its `sets`).
    Set(u32, u32),
}

/// The owners of one detection result, with the list's state.
#[derive(Debug)]
pub struct OwnersView {
    /// The detection result the owners were computed from.
    pub source: Arc<Duplicates>,
    /// The owners, by wasted bytes.
    pub owners: Arc<Owners>,
    /// Per owner, whether its sets are listed under it.
    expanded: Vec<bool>,
    /// The rows in display order.
    rows: Vec<OwnerRow>,
    /// The selection and scroll.
    pub list: ListState,
}

impl OwnersView {
    /// The owners of `source`, every owner collapsed.
    pub fn new(source: Arc<Duplicates>, owners: Arc<Owners>) -> OwnersView {
        let mut v = OwnersView {
            expanded: vec![false; owners.owners.len()],
            source,
            owners,
            rows: Vec::new(),
            list: ListState::default(),
        };
        v.rebuild();
        v
    }

    fn rebuild(&mut self) {
        self.rows.clear();
        for (i, o) in self.owners.owners.iter().enumerate() {
            self.rows.push(OwnerRow::Owner(i as u32));
            if self.expanded[i] {
                self.rows
                    .extend((0..o.sets.len() as u32).map(|j| OwnerRow::Set(i as u32, j)));
            }
        }
    }

    /// How many rows are listed.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether no owner is listed.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The selected row.
    pub fn selected(&self) -> Option<OwnerRow> {
        self.rows.get(self.list.selected).copied()
    }

    /// The owner of the selected row (an owner's, or a set's under it).
    pub fn selected_owner(&self) -> Option<u32> {
        self.selected().map(|r| match r {
            OwnerRow::Owner(i) | OwnerRow::Set(i, _) => i,
        })
    }

    /// The set of the selected row, if it is a set's.
    pub fn selected_set(&self) -> Option<u32> {
        match self.selected()? {
            OwnerRow::Set(i, j) => Some(self.owners.owners[i as usize].sets[j as usize].set),
            OwnerRow::Owner(_) => None,
        }
    }

    /// Expands or collapses the selected owner (from a set's row, its
    /// owner collapses and is selected). O(rows).
    pub fn toggle(&mut self) {
        let Some(i) = self.selected_owner() else {
            return;
        };
        self.expanded[i as usize] = !self.expanded[i as usize];
        self.rebuild();
        self.list.selected = self
            .rows
            .iter()
            .position(|&r| r == OwnerRow::Owner(i))
            .unwrap_or(0);
    }

    /// The object to show for the selected row: the owner's instance
    /// charged most, or a set's first member.
    pub fn selected_object(&self) -> Option<ObjectIdx> {
        match self.selected()? {
            OwnerRow::Owner(i) => self.owners.owners[i as usize].top_instance,
            OwnerRow::Set(i, j) => {
                let s = self.owners.owners[i as usize].sets[j as usize].set;
                self.source.sets[s as usize]
                    .members
                    .first()
                    .map(|&m| ObjectIdx(m))
            }
        }
    }

    /// The owner's path for the status line and the list.
    pub fn path_text(&self, dump: &Model, owner: u32) -> String {
        let o = &self.owners.owners[owner as usize];
        let text = Owners::path_text(dump, o);
        if o.anchored || o.path.is_empty() {
            text
        } else {
            format!("{text} (held by roots)")
        }
    }
}

impl DuplicatesPane {
    /// The owners job for the newest detection result, unless its owners
    /// are there (or asked for already: the job's slot keeps the latest).
    pub(super) fn request_owners(&self, ctx: &Ctx) -> Vec<Intent> {
        let Some(d) = ctx.loading.duplicates() else {
            return vec![Intent::status("duplicates are still being detected")];
        };
        if self
            .owners
            .as_ref()
            .is_some_and(|v| Arc::ptr_eq(&v.source, d))
        {
            return Vec::new();
        }
        vec![Intent::Request {
            job: Job::Owners {
                duplicates: d.clone(),
                exclude: self.owner_exclude.clone(),
            },
            label: "charging duplicate copies to their owners".into(),
        }]
    }

    /// `O`: the owners view, or the sets again.
    pub(super) fn toggle_owners(&mut self, ctx: &Ctx) -> Vec<Intent> {
        if !self.owners_on && ctx.loading.duplicates().is_none() {
            return vec![Intent::status(
                "duplicates are still being detected: their owners follow",
            )];
        }
        self.owners_on = !self.owners_on;
        self.detail = None;
        if !self.owners_on {
            return vec![Intent::status("duplicate sets")];
        }
        let mut out = vec![Intent::status(
            "owners by wasted bytes: Enter lists the sets, o shows the owner",
        )];
        out.extend(self.request_owners(ctx));
        out
    }

    /// A key in the owners view; `None` for the keys it leaves to the sets'.
    pub(super) fn owners_key(&mut self, cmd: Cmd, ctx: &Ctx) -> Option<Vec<Intent>> {
        let mut out = self.request_owners(ctx);
        let v = self.owners.as_mut();
        match cmd {
            Cmd::Open | Cmd::Expand | Cmd::Collapse => {
                let v = v?;
                match (cmd, v.selected_set()) {
                    (Cmd::Open, Some(set)) => out.push(Intent::JumpToSet { set, open: true }),
                    (Cmd::Collapse, Some(_)) | (_, None) => v.toggle(),
                    _ => {}
                }
            }
            Cmd::OpenInDominators => {
                let v = v?;
                if let Some(i) = v.selected_owner() {
                    out.push(match v.owners.owners[i as usize].top_instance {
                        Some(o) => Intent::Reveal(o),
                        None => Intent::status(
                            "GC roots hold these copies directly: no owner object to show",
                        ),
                    });
                }
            }
            Cmd::ExcludePattern => {
                let current = match (&self.owner_exclude, v) {
                    (Some(p), _) => p.join(" "),
                    (None, Some(v)) => v.owners.exclude.join(" "),
                    (None, None) => String::new(),
                };
                out.push(Intent::EditExclude(current));
            }
            Cmd::SortNext | Cmd::SortReverse | Cmd::SteadyOnly | Cmd::DetectPossible => {
                out.push(Intent::status(
                    "owners are listed by wasted bytes (O: the sets, to sort them)",
                ));
            }
            _ => return None,
        }
        Some(out)
    }
}

/// Width of the numbers before an owner's path: wasted, sets, copies.
const NUMBERS: usize = 10 + 1 + 6 + 1 + 9 + 2;

/// The owners list: a note, a header, the rows.
pub fn draw(v: &OwnersView, dump: &Model, theme: &Theme, inner: Rect, f: &mut Frame) {
    let w = inner.width as usize;
    let [note_area, header_area, list_area] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Min(0),
    ])
    .areas(inner);
    let exclude = if v.owners.exclude.is_empty() {
        "nothing".to_string()
    } else {
        v.owners.exclude.join(" ")
    };
    let note = format!(" extra copies by owner, cut past {exclude} (e: patterns)");
    f.render_widget(
        Paragraph::new(Line::styled(fit(&note, w, theme), theme.dim())),
        note_area,
    );
    let header = format!(
        " {:>10} {:>6} {:>9}  Owner {} copies' dominator",
        "Wasted",
        "Sets",
        "Copies",
        theme.arrow()
    );
    f.render_widget(
        Paragraph::new(Line::styled(fit(&header, w, theme), theme.header())),
        header_area,
    );
    if v.is_empty() {
        let text = " no owners: no verified duplicate sets";
        f.render_widget(Paragraph::new(fit(text, w, theme)), list_area);
        return;
    }
    let height = list_area.height as usize;
    let path_w = w.saturating_sub(NUMBERS + 1);
    let lines: Vec<Line> = (v.list.offset..v.rows.len().min(v.list.offset + height))
        .map(|i| {
            let text = row_text(v, dump, v.rows[i], path_w, theme);
            let sel = i == v.list.selected;
            let text = fit(&format!("{}{text}", if sel { ">" } else { " " }), w, theme);
            match v.rows[i] {
                _ if sel => Line::styled(text, theme.selected()),
                OwnerRow::Set(..) => Line::styled(text, theme.dim()),
                OwnerRow::Owner(_) => Line::raw(text),
            }
        })
        .collect();
    f.render_widget(Paragraph::new(lines), list_area);
}

fn row_text(v: &OwnersView, dump: &Model, row: OwnerRow, path_w: usize, theme: &Theme) -> String {
    match row {
        OwnerRow::Owner(i) => {
            let o = &v.owners.owners[i as usize];
            format!(
                "{:>10} {:>6} {:>9}  {}",
                bytes(o.bytes),
                count(o.sets.len() as u64),
                count(o.copies),
                type_name(&v.path_text(dump, i), path_w, theme)
            )
        }
        OwnerRow::Set(i, j) => {
            let share = v.owners.owners[i as usize].sets[j as usize];
            let s = &v.source.sets[share.set as usize];
            let what = format!(
                "#{} {}{}",
                s.id,
                dump.type_names[s.type_index as usize],
                s.members
                    .first()
                    .map(|&m| dump.quoted_preview(ObjectIdx(m), 40))
                    .unwrap_or_default()
            );
            format!(
                "{:>10} {:>6} {:>9}  {} {}",
                bytes(share.bytes),
                "",
                count(share.copies),
                theme.arrow(),
                fit(&what, path_w.saturating_sub(2), theme)
            )
        }
    }
}
