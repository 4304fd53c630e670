//! The merged paths to the roots (docs/analyses.md): an overlay over the
//! pane it was asked from (`M` on a type, a group row or a duplicate set),
//! as the inspector is. The tree arrives whole from a job
//! ([`PathsResult`]); the overlay keeps which nodes are expanded and the
//! visible rows, made again on each expand or collapse (they cost the
//! rows shown, never the tree), so a frame draws one page.

use std::collections::HashSet;
use std::sync::Arc;

use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::dominators::reveal;
use super::{framed, Ctx, Intent, ListState, Pane};
use crate::compared::signed_count;
use crate::fmt::{bytes, count, fit, text_width, type_name};
use crate::keys::Cmd;
use crate::msg::{PathsResult, PathsTarget};
use crate::worker::Job;
use heaptui_core::analysis::{MergedPaths, Step};
use heaptui_core::model::ObjectIdx;

/// How many levels the first view opens along the path most objects take.
const OPEN_LEVELS: usize = 30;
/// Deeper nodes are not indented further.
const MAX_INDENT: usize = 12;

/// The overlay's state: the tree, what is expanded, the visible rows and
/// the selection.
#[derive(Debug, Clone)]
pub struct PathsView {
    result: Arc<PathsResult>,
    /// Shared with the history's copies until it changes.
    expanded: Arc<HashSet<u32>>,
    /// Visible nodes, depth first (the top node is never a row); shared
    /// with the history's copies, which every key makes.
    rows: Arc<Vec<u32>>,
    list: ListState,
}

impl PathsView {
    /// The tree opened along the path most of the objects take (while it
    /// holds at least half of them), that path's last node selected and
    /// open.
    pub fn new(result: Arc<PathsResult>) -> PathsView {
        let mut v = PathsView {
            result,
            expanded: Arc::default(),
            rows: Arc::default(),
            list: ListState::default(),
        };
        let m = &v.result.paths;
        let total = m.reachable();
        let mut at = 0u32;
        let mut chain = Vec::new();
        while chain.len() < OPEN_LEVELS {
            match m.nodes[at as usize].children.first() {
                Some(&c) if m.nodes[c as usize].count * 2 >= total => {
                    chain.push(c);
                    at = c;
                }
                _ => break,
            }
        }
        Arc::make_mut(&mut v.expanded).extend(chain.iter().copied());
        v.flatten();
        if let Some(last) = chain.last() {
            v.list.selected = v.rows.iter().position(|r| r == last).unwrap_or(0);
        }
        v
    }

    /// What the overlay shows.
    pub fn result(&self) -> &Arc<PathsResult> {
        &self.result
    }

    /// The visible nodes, depth first.
    pub fn rows(&self) -> &[u32] {
        &self.rows
    }

    /// The selected row.
    pub fn selected(&self) -> usize {
        self.list.selected
    }

    fn paths(&self) -> &MergedPaths {
        &self.result.paths
    }

    fn selected_node(&self) -> Option<u32> {
        self.rows.get(self.list.selected).copied()
    }

    /// The visible rows again: the top's children, and the children of
    /// every expanded node shown.
    fn flatten(&mut self) {
        let m = &self.result.paths;
        let mut rows = Vec::new();
        let mut stack: Vec<u32> = m.nodes[0].children.iter().rev().copied().collect();
        while let Some(n) = stack.pop() {
            rows.push(n);
            if self.expanded.contains(&n) {
                stack.extend(m.nodes[n as usize].children.iter().rev());
            }
        }
        self.rows = Arc::new(rows);
    }

    /// Expands or collapses the selected node; `None` toggles. Right on an
    /// open node goes to its first child, Left on a closed one to its parent.
    fn expand(&mut self, open: Option<bool>) {
        let Some(n) = self.selected_node() else {
            return;
        };
        let node = &self.paths().nodes[n as usize];
        let has_children = !node.children.is_empty();
        let is_open = self.expanded.contains(&n);
        match (open.unwrap_or(!is_open), is_open) {
            (true, false) if has_children => {
                Arc::make_mut(&mut self.expanded).insert(n);
            }
            (true, true) => {
                self.list.selected += 1;
                return;
            }
            (false, true) => {
                Arc::make_mut(&mut self.expanded).remove(&n);
            }
            (false, false) => {
                let parent = node.parent;
                if let Some(p) = self.rows.iter().position(|&r| r == parent) {
                    self.list.selected = p;
                }
                return;
            }
            _ => return,
        }
        self.flatten();
    }

    /// The title: what was asked about and how much of it is reachable.
    fn title(&self, ctx: &Ctx) -> String {
        let r = &self.result;
        let m = &r.paths;
        let what = match (&r.target, ctx.loading.graph()) {
            (PathsTarget::Type(t), Some(g)) => {
                format!("{} × {}", count(m.targets), g.dump.name_of_type(*t))
            }
            (PathsTarget::Type(_), None) => String::new(),
            (PathsTarget::Objects { label, .. }, _) => label.clone(),
        };
        let unreachable = if m.unreachable > 0 {
            format!(", {} unreachable", count(m.unreachable))
        } else {
            String::new()
        };
        let skip = if r.skipped.is_empty() {
            String::new()
        } else {
            format!(", skipping {}", r.skipped.join(" "))
        };
        format!(" Paths from the roots to {what}{unreachable}{skip} ")
    }

    /// One row's text, `w` columns wide.
    fn row_text(&self, i: usize, w: usize, ctx: &Ctx) -> String {
        let m = self.paths();
        let t = ctx.theme;
        let id = self.rows[i];
        let n = &m.nodes[id as usize];
        let mark = if n.children.is_empty() {
            " "
        } else if self.expanded.contains(&id) {
            t.expanded()
        } else {
            t.collapsed()
        };
        let indent = "  ".repeat((n.depth as usize).saturating_sub(1).min(MAX_INDENT));
        let delta = match &self.result.baselines {
            Some(b) => format!(" {:>9}", signed_count(b.delta(id, n.count), t)),
            None => String::new(),
        };
        let head = format!(
            "{}{:>9}{delta} {:>10}  {indent}{mark} ",
            if i == self.list.selected { ">" } else { " " },
            count(n.count),
            bytes(n.retained_bytes),
        );
        let room = w.saturating_sub(text_width(&head));
        let name = match (n.step, ctx.loading.graph()) {
            (Step::Type(ty), Some(g)) => type_name(g.dump.name_of_type(ty), room, t),
            (step, Some(g)) => fit(&step.name(&g.dump), room, t),
            (_, None) => String::new(),
        };
        format!("{head}{name}")
    }
}

/// What `M` asks for in the Types, Dominators and Duplicates panes.
pub fn request(target: PathsTarget, ctx: &Ctx) -> Intent {
    request_skip(target, false, ctx)
}

/// The merged paths of `target`, the platform's types skipped or not;
/// comparing snapshots, a type's in every snapshot too.
fn request_skip(target: PathsTarget, skip: bool, ctx: &Ctx) -> Intent {
    let baselines = match target {
        PathsTarget::Type(_) => ctx.loading.baseline_sources().cloned(),
        PathsTarget::Objects { .. } => None,
    };
    let label = match baselines {
        Some(_) => "merged paths, in every snapshot",
        None => "merged paths",
    };
    Intent::Request {
        job: Job::MergedPaths {
            target,
            skip,
            baselines,
        },
        label: label.into(),
    }
}

/// The target of a few objects, called `label`.
pub fn objects(label: String, objects: Vec<ObjectIdx>) -> PathsTarget {
    PathsTarget::Objects {
        label,
        objects: Arc::new(objects),
    }
}

impl Pane for PathsView {
    fn key(&mut self, cmd: Cmd, ctx: &Ctx) -> Vec<Intent> {
        match cmd {
            Cmd::Expand => self.expand(Some(true)),
            Cmd::Collapse => self.expand(Some(false)),
            Cmd::ToggleExpand => self.expand(None),
            Cmd::Open => {
                return match self.selected_object(ctx) {
                    Some(o) => vec![Intent::Inspect(o)],
                    None => {
                        self.expand(None);
                        Vec::new()
                    }
                }
            }
            Cmd::OpenInDominators => {
                return match self.selected_object(ctx) {
                    Some(o) => vec![Intent::Jump(reveal(o))],
                    None => vec![Intent::status("a root kind has no object: expand it")],
                }
            }
            Cmd::SkipPlatform => {
                let r = &self.result;
                let format = ctx.loading.graph().map(|g| g.dump.format);
                let none =
                    format.is_none_or(|f| heaptui_core::analysis::default_excludes(f).is_empty());
                if none && !r.skip {
                    return vec![Intent::status("no platform types to skip in this format")];
                }
                return vec![request_skip(r.target.clone(), !r.skip, ctx)];
            }
            _ => return Vec::new(),
        }
        self.fit(ctx);
        Vec::new()
    }

    fn step(&mut self, delta: isize, ctx: &Ctx) -> Vec<Intent> {
        self.list.step(delta, self.rows.len(), ctx.rows());
        Vec::new()
    }

    fn selected_object(&self, _ctx: &Ctx) -> Option<ObjectIdx> {
        self.paths().nodes[self.selected_node()? as usize].object
    }

    fn fit(&mut self, ctx: &Ctx) {
        self.list.scroll(self.rows.len(), ctx.rows());
    }

    fn filterable(&self) -> bool {
        false
    }

    fn click_geometry(&self) -> Option<(usize, usize, u16)> {
        Some((self.list.selected, self.list.offset, 2))
    }

    fn draw(&self, ctx: &Ctx, area: Rect, f: &mut Frame) {
        let t = ctx.theme;
        let inner = framed(f, area, &self.title(ctx), t);
        let w = inner.width as usize;
        let mut lines = vec![Line::styled(
            fit(
                &format!(
                    " {:>9}{} {:>10}  Path from the roots (Enter inspects)",
                    "Objects",
                    match self.result.baselines {
                        Some(_) => format!(" {:>9}", "Δ objects"),
                        None => String::new(),
                    },
                    "Retained"
                ),
                w,
                t,
            ),
            t.header(),
        )];
        if self.rows.is_empty() {
            let m = self.paths();
            lines.push(Line::raw(fit(
                &format!(
                    " none of the {} objects is reachable from a strong root",
                    count(m.targets)
                ),
                w,
                t,
            )));
        }
        let height = (inner.height as usize).saturating_sub(1);
        for i in (self.list.offset..self.rows.len()).take(height) {
            let text = fit(&self.row_text(i, w, ctx), w, t);
            lines.push(if i == self.list.selected {
                Line::styled(text, t.selected())
            } else {
                Line::raw(text)
            });
        }
        f.render_widget(Paragraph::new(lines), inner);
    }
}
