//! The Duplicates pane's owners view (`O`): duplicate waste by the
//! structure that holds the copies (docs/duplicates.md, "Who holds the
//! copies"), computed once per detection result by a job, listed by wasted
//! bytes; an owner expands to its sets.

use std::sync::Arc;

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::super::dominators::reveal;
use super::super::{Ctx, Intent, ListState};
use super::show_set;
use super::DuplicatesPane;
use crate::compared::{signed_bytes, signed_count, steady_mark};
use crate::fmt::{bytes, count, fit, type_name};
use crate::keys::Cmd;
use crate::theme::Theme;
use crate::worker::Job;
use heaptui_core::analysis::Owners;

pub use super::owner_deltas::{GoneOwner, OwnerDelta, OwnerDeltas};
use heaptui_core::graph::duplicates::Duplicates;
use heaptui_core::model::{Model, ObjectIdx};

/// A row of the owners list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OwnerRow {
    /// An owner (a position in [`Owners::owners`]).
    Owner(u32),
    /// One of an expanded owner's sets: (owner, position in its `sets`).
    Set(u32, u32),
    /// With a comparison: an owner the newest snapshot lacks (a position
    /// in [`OwnerDeltas::gone`]).
    Gone(u32),
}

/// The owners' order (`s`): the second and third need a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OwnerSort {
    /// Wasted bytes, most first (the core's order).
    #[default]
    Wasted,
    /// Wasted bytes newest − oldest, most grown first.
    DeltaBytes,
    /// Extra copies newest − oldest, most grown first.
    DeltaCopies,
}

impl OwnerSort {
    /// What the status line says of it.
    pub fn describe(self) -> &'static str {
        match self {
            OwnerSort::Wasted => "owners by wasted bytes",
            OwnerSort::DeltaBytes => "owners by growth of wasted bytes (Δ wasted)",
            OwnerSort::DeltaCopies => "owners by growth of extra copies (Δ copies)",
        }
    }
}

/// What a filter lets through: owners (positions in [`Owners::owners`],
/// ascending) and gone owners (positions in [`OwnerDeltas::gone`]).
pub type Shown = (Arc<Vec<u32>>, Arc<Vec<u32>>);

/// The owners of one detection result, with the list's state.
#[derive(Debug)]
pub struct OwnersView {
    /// The detection result the owners were computed from.
    pub(crate) source: Arc<Duplicates>,
    /// The owners, by wasted bytes.
    pub(crate) owners: Arc<Owners>,
    /// With a comparison (and the default patterns): each owner's change.
    pub(crate) delta: Option<OwnerDeltas>,
    /// `/`: the owners the filter lets through (positions in `owners`,
    /// ascending) and the gone owners it lets through; `None`: all.
    shown: Option<Shown>,
    /// `s`.
    pub(crate) sort: OwnerSort,
    /// `t`: only the owners whose waste rises at every step.
    pub(crate) steady_only: bool,
    /// Per owner, whether its sets are listed under it.
    expanded: Vec<bool>,
    /// The owners and gone owners in display order (filtered, sorted).
    order: Vec<OwnerRow>,
    /// The rows in display order.
    rows: Vec<OwnerRow>,
    /// The selection and scroll.
    pub(crate) list: ListState,
}

impl OwnersView {
    /// The detection result the owners were computed from.
    pub fn source(&self) -> &Arc<Duplicates> {
        &self.source
    }

    /// The owners, by wasted bytes.
    pub fn owners(&self) -> &Owners {
        &self.owners
    }

    /// With a comparison (and the default patterns): each owner's change.
    pub fn delta(&self) -> Option<&OwnerDeltas> {
        self.delta.as_ref()
    }

    /// Whether only the owners that grow steadily are listed.
    pub fn steady_only(&self) -> bool {
        self.steady_only
    }

    /// `s`, `S` or `t`: the next (previous) order, or steady growers only;
    /// the status line says which. Without Δ figures the order stays.
    fn resort(&mut self, cmd: Cmd, ctx: &Ctx) -> Intent {
        if self.delta.is_none() {
            return Intent::status(match ctx.loading.compared() {
                Some(_) => "owners cut at other patterns than the defaults have no Δ: owners are listed by wasted bytes",
                None => "owners are listed by wasted bytes (no comparison: open older snapshots too for Δ)",
            });
        }
        if cmd == Cmd::SteadyOnly {
            self.steady_only = !self.steady_only;
        } else {
            self.sort = match (self.sort, cmd) {
                (OwnerSort::Wasted, Cmd::SortNext) | (OwnerSort::DeltaCopies, _) => {
                    OwnerSort::DeltaBytes
                }
                (OwnerSort::DeltaBytes, Cmd::SortNext) => OwnerSort::DeltaCopies,
                _ => OwnerSort::Wasted,
            };
        }
        self.reorder();
        self.list.selected = 0;
        self.list.offset = 0;
        Intent::status(match self.steady_only {
            true => format!(
                "{}; only those that grow steadily (t: all)",
                self.sort.describe()
            ),
            false => self.sort.describe().to_string(),
        })
    }

    /// The owners of `source`, every owner collapsed.
    pub fn new(
        source: Arc<Duplicates>,
        owners: Arc<Owners>,
        delta: Option<OwnerDeltas>,
    ) -> OwnersView {
        let mut v = OwnersView {
            expanded: vec![false; owners.owners.len()],
            source,
            owners,
            delta,
            shown: None,
            sort: OwnerSort::default(),
            steady_only: false,
            order: Vec::new(),
            rows: Vec::new(),
            list: ListState::default(),
        };
        v.reorder();
        v
    }

    /// The filter's result: the owners and gone owners it lets through.
    pub fn set_shown(&mut self, shown: Option<Shown>) {
        self.shown = shown;
        self.reorder();
        self.list.selected = self.list.selected.min(self.rows.len().saturating_sub(1));
    }

    /// Whether a filter narrows the owners.
    pub fn filtered(&self) -> bool {
        self.shown.is_some()
    }

    /// Puts the owners in the view's order, filter and `t`. O(owners log
    /// owners), on a sort, filter or `t` only.
    pub fn reorder(&mut self) {
        let n = self.owners.owners.len() as u32;
        let gone = self.delta.as_ref().map_or(0, |d| d.gone.len()) as u32;
        let mut order: Vec<OwnerRow> = match &self.shown {
            Some((owners, gone)) => owners
                .iter()
                .map(|&i| OwnerRow::Owner(i))
                .chain(gone.iter().map(|&j| OwnerRow::Gone(j)))
                .collect(),
            None => (0..n)
                .map(OwnerRow::Owner)
                .chain((0..gone).map(OwnerRow::Gone))
                .collect(),
        };
        if let Some(d) = &self.delta {
            let of = |r: &OwnerRow| match *r {
                OwnerRow::Owner(i) => d.owners[i as usize],
                OwnerRow::Gone(j) => d.gone[j as usize].delta,
                OwnerRow::Set(..) => OwnerDelta::default(),
            };
            if self.steady_only {
                order.retain(|r| of(r).steady);
            }
            match self.sort {
                OwnerSort::Wasted => {}
                OwnerSort::DeltaBytes => order.sort_by_key(|r| std::cmp::Reverse(of(r).bytes)),
                OwnerSort::DeltaCopies => order.sort_by_key(|r| std::cmp::Reverse(of(r).copies)),
            }
        }
        self.order = order;
        self.rebuild();
    }

    fn rebuild(&mut self) {
        self.rows.clear();
        for &r in &self.order {
            self.rows.push(r);
            if let OwnerRow::Owner(i) = r {
                if self.expanded[i as usize] {
                    let sets = self.owners.owners[i as usize].sets.len() as u32;
                    self.rows.extend((0..sets).map(|j| OwnerRow::Set(i, j)));
                }
            }
        }
    }

    /// The owner's change, with a comparison.
    pub fn delta_of(&self, owner: u32) -> Option<OwnerDelta> {
        self.delta.as_ref()?.owners.get(owner as usize).copied()
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
        match self.selected()? {
            OwnerRow::Owner(i) | OwnerRow::Set(i, _) => Some(i),
            OwnerRow::Gone(_) => None,
        }
    }

    /// The set of the selected row, if it is a set's.
    pub fn selected_set(&self) -> Option<u32> {
        match self.selected()? {
            OwnerRow::Set(i, j) => Some(self.owners.owners[i as usize].sets[j as usize].set),
            OwnerRow::Owner(_) | OwnerRow::Gone(_) => None,
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
                self.source.members(s).first().map(|&m| ObjectIdx(m))
            }
            OwnerRow::Gone(_) => None,
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
        if let (Some(OwnerRow::Gone(j)), Cmd::Open | Cmd::OpenInDominators | Cmd::WhatIf) =
            (v.as_ref().and_then(|v| v.selected()), cmd)
        {
            let g = &v?.delta.as_ref()?.gone[j as usize];
            out.push(Intent::status(format!(
                "this owner is gone now ({} wasted in snapshot {}): nothing to show",
                bytes(g.last_bytes),
                g.last_seen + 1
            )));
            return Some(out);
        }
        match cmd {
            Cmd::Open | Cmd::Expand | Cmd::Collapse => {
                let v = v?;
                match (cmd, v.selected_set()) {
                    (Cmd::Open, Some(set)) => out.push(Intent::Jump(show_set(set, true))),
                    (Cmd::Collapse, Some(_)) | (_, None) => v.toggle(),
                    _ => {}
                }
            }
            Cmd::WhatIf => {
                let v = v?;
                out.extend(match v.selected() {
                    Some(OwnerRow::Set(_, _)) => {
                        let set = v.selected_set()?;
                        super::what_if_set(&v.source, set, ctx)
                    }
                    Some(OwnerRow::Owner(i)) => what_if_owner(v, i, ctx),
                    _ => Vec::new(),
                });
            }
            Cmd::SortNext | Cmd::SortReverse | Cmd::SteadyOnly => out.push(v?.resort(cmd, ctx)),
            Cmd::OpenInDominators => {
                let v = v?;
                if let Some(i) = v.selected_owner() {
                    out.push(match v.owners.owners[i as usize].top_instance {
                        Some(o) => Intent::Jump(reveal(o)),
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
                // Several globs, where the Types pane takes one.
                out.push(Intent::EditExclude {
                    text: current,
                    prompt: "owners cut past (globs, space between): ",
                });
            }
            Cmd::DetectPossible => {
                out.push(Intent::status("O: back to the sets for this key"));
            }
            _ => return None,
        }
        Some(out)
    }
}

/// `w` on an owner: what would be freed if the extra copies charged to
/// it were gone (found by the job: [`owner_copies`](heaptui_core::analysis::owner_copies)),
/// the inspector opening on the owner object charged most (or the first
/// copy of the roots' own).
fn what_if_owner(v: &OwnersView, i: u32, ctx: &Ctx) -> Vec<Intent> {
    let o = &v.owners.owners[i as usize];
    let anchor = o.top_instance.or_else(|| {
        let set = o.sets.first()?.set;
        v.source.sets.get(set as usize)?;
        v.source.members(set).get(1).map(|&m| ObjectIdx(m))
    });
    let (Some(anchor), Some(g)) = (anchor, ctx.loading.graph()) else {
        return Vec::new();
    };
    let label = format!(
        "the {} extra {} owned by {}",
        count(o.copies),
        if o.copies == 1 { "copy" } else { "copies" },
        crate::fmt::type_name(&v.path_text(&g.dump, i), 60, ctx.theme)
    );
    let owner = crate::worker::OwnerCut {
        duplicates: v.source.clone(),
        owners: v.owners.clone(),
        owner: i,
    };
    super::what_if_request(anchor, label, Default::default(), Some(owner))
}

/// The numbers before an owner's path: their widths and whether the
/// comparison's Δ columns and the Sets column are shown.
#[derive(Debug, Clone, Copy)]
struct Cells {
    delta: bool,
    sets: bool,
}

/// Width of a Δ wasted cell (a signed size and the steady mark).
const DELTA_BYTES: usize = 12;
/// Width of a Δ copies cell.
const DELTA_COPIES: usize = 10;
/// A terminal at least this wide shows the Sets column beside the Δ ones.
const WIDE: usize = 110;

impl Cells {
    fn of(v: &OwnersView, w: usize) -> Cells {
        let delta = v.delta.is_some();
        Cells {
            delta,
            sets: !delta || w >= WIDE,
        }
    }

    /// Width of the numbers, the separators included.
    fn numbers(self) -> usize {
        let mut n = 10 + 1 + 9 + 2;
        if self.sets {
            n += 7;
        }
        if self.delta {
            n += DELTA_BYTES + 1 + DELTA_COPIES + 1;
        }
        n
    }

    /// The numbers of a row: wasted, Δ wasted, sets, copies, Δ copies.
    fn cells(
        self,
        wasted: &str,
        d_bytes: &str,
        sets: &str,
        copies: &str,
        d_copies: &str,
    ) -> String {
        let mut out = format!("{wasted:>10}");
        if self.delta {
            out.push_str(&format!(" {d_bytes:>DELTA_BYTES$}"));
        }
        if self.sets {
            out.push_str(&format!(" {sets:>6}"));
        }
        out.push_str(&format!(" {copies:>9}"));
        if self.delta {
            out.push_str(&format!(" {d_copies:>DELTA_COPIES$}"));
        }
        out.push_str("  ");
        out
    }
}

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
    let mut note = format!(" extra copies by owner, cut past {exclude} (e: patterns)");
    if v.filtered() {
        note = format!(" filtered: {}", note.trim_start());
    }
    if v.steady_only {
        note = format!(" steady growth only (t): {}", note.trim_start());
    }
    f.render_widget(
        Paragraph::new(Line::styled(fit(&note, w, theme), theme.dim())),
        note_area,
    );
    let l = Cells::of(v, w);
    let marked = |name: &str, sort: OwnerSort| match l.delta && v.sort == sort {
        true => format!("{name}{}", if theme.ascii { "v" } else { "▼" }),
        false => name.to_string(),
    };
    let header = format!(
        " {}Owner {} copies' dominator",
        l.cells(
            &marked("Wasted", OwnerSort::Wasted),
            &marked("Δ wasted", OwnerSort::DeltaBytes),
            "Sets",
            "Copies",
            &marked("Δ copies", OwnerSort::DeltaCopies),
        ),
        theme.arrow()
    );
    f.render_widget(
        Paragraph::new(Line::styled(fit(&header, w, theme), theme.header())),
        header_area,
    );
    if v.is_empty() {
        let text = match (v.filtered() || v.steady_only, v.owners.owners.is_empty()) {
            (true, false) => " no owner matches (/ Esc: all)",
            _ => " no owners: no verified duplicate sets",
        };
        f.render_widget(Paragraph::new(fit(text, w, theme)), list_area);
        return;
    }
    let height = list_area.height as usize;
    let path_w = w.saturating_sub(l.numbers() + 1);
    let lines: Vec<Line> = (v.list.offset..v.rows.len().min(v.list.offset + height))
        .map(|i| {
            let text = row_text(v, dump, v.rows[i], l, path_w, theme);
            let sel = i == v.list.selected;
            let text = fit(&format!("{}{text}", if sel { ">" } else { " " }), w, theme);
            match v.rows[i] {
                _ if sel => Line::styled(text, theme.selected()),
                OwnerRow::Set(..) | OwnerRow::Gone(_) => Line::styled(text, theme.dim()),
                OwnerRow::Owner(_) => Line::raw(text),
            }
        })
        .collect();
    f.render_widget(Paragraph::new(lines), list_area);
}

/// A Δ pair's cells: signed bytes (with the steady mark) and copies.
fn delta_cells(d: Option<OwnerDelta>, theme: &Theme) -> (String, String) {
    match d {
        Some(d) => {
            let mark = if d.steady { steady_mark(theme) } else { "" };
            (
                format!("{}{mark}", signed_bytes(d.bytes, theme)),
                signed_count(d.copies, theme),
            )
        }
        None => (String::new(), String::new()),
    }
}

fn row_text(
    v: &OwnersView,
    dump: &Model,
    row: OwnerRow,
    l: Cells,
    path_w: usize,
    theme: &Theme,
) -> String {
    match row {
        OwnerRow::Owner(i) => {
            let o = &v.owners.owners[i as usize];
            let (db, dc) = delta_cells(v.delta_of(i), theme);
            let cells = l.cells(
                &bytes(o.bytes),
                &db,
                &count(o.sets.len() as u64),
                &count(o.copies),
                &dc,
            );
            format!("{cells}{}", type_name(&v.path_text(dump, i), path_w, theme))
        }
        OwnerRow::Gone(j) => {
            let Some(g) = v.delta.as_ref().and_then(|d| d.gone.get(j as usize)) else {
                return String::new();
            };
            let (db, dc) = delta_cells(Some(g.delta), theme);
            let cells = l.cells("gone", &db, "", "0", &dc);
            let path = type_name(&g.path, path_w.saturating_sub(7), theme);
            format!("{cells}{path} (gone)")
        }
        OwnerRow::Set(i, j) => {
            let share = v.owners.owners[i as usize].sets[j as usize];
            let s = &v.source.sets[share.set as usize];
            let what = format!(
                "#{} {}{}",
                share.set,
                dump.type_names[s.type_index as usize],
                v.source
                    .members(share.set)
                    .first()
                    .map(|&m| dump.quoted_preview(ObjectIdx(m), 40))
                    .unwrap_or_default()
            );
            let cells = l.cells(
                &bytes(share.bytes(&v.source)),
                "",
                "",
                &count(share.copies.into()),
                "",
            );
            format!(
                "{cells}{} {}",
                theme.arrow(),
                fit(&what, path_w.saturating_sub(2), theme)
            )
        }
    }
}
