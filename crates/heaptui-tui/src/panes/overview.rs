//! The Overview pane: what the file holds, roots by kind and flag,
//! reachability, the top dominators and duplicate sets, diagnostics. Built
//! from data already computed; at most a hundred or so lines per frame.

use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph};
use ratatui::Frame;

use super::dominators::reveal;
use super::duplicates::show_set;
use super::inspector::Target;
use super::{Ctx, Intent, Pane};
use crate::fmt::{
    bytes, count, count_width, counted, fit, percent, row_preview, text_width, type_name,
};
use crate::keys::Cmd;
use crate::theme::Theme;
use heaptui_core::analysis::Summary;
use heaptui_core::graph::duplicates::Duplicates;
use heaptui_core::graph::DominatorTree;
use heaptui_core::model::{root_flags, root_kind, Model, ObjectIdx};

/// The detail that names how an HPROF dump's objects were sized.
const LAYOUT: &str = "object layout";

/// The overview's scroll position and selected jump target.
#[derive(Debug, Clone, Default)]
pub struct OverviewPane {
    scroll: u16,
    /// The selected jump target (k-th target line). `None` until the user
    /// moves, so Enter never acts on a line that was never shown.
    selected: Option<usize>,
}

/// The overview's lines, and which of them are jump targets (line index,
/// target): the top dominators and the top duplicate sets.
pub fn lines(ctx: &Ctx, width: usize) -> (Vec<Line<'static>>, Vec<(usize, Target)>) {
    let mut page = Page {
        out: Vec::new(),
        targets: Vec::new(),
        theme: ctx.theme,
        width,
    };
    let Some(graph) = ctx.loading.graph() else {
        page.raw(format!(" {}", ctx.name));
        page.raw("");
        page.raw(match ctx.loading.error() {
            Some(e) => format!(" cannot open it: {e}"),
            None => " reading the dump; each pane opens as soon as its data exists.".into(),
        });
        return (page.out, page.targets);
    };
    let dump = &graph.dump;
    file_section(&mut page, ctx, dump);
    roots_section(&mut page, ctx);
    page.raw("");
    page.header(" Reachability");
    match (ctx.loading.dom(), ctx.loading.summary()) {
        (Some(dom), Some(s)) => {
            reachability(&mut page, s);
            page.raw("");
            top_dominators(&mut page, dump, dom);
        }
        _ => page.raw(" computing the dominator tree…"),
    }
    page.raw("");
    match ctx.loading.duplicates() {
        Some(d) => top_duplicates(&mut page, ctx, dump, d),
        None => page.raw(" duplicates: still detecting…"),
    }
    page.raw("");
    diagnostics(&mut page, dump);
    page.raw("");
    page.fitted(&memory_line(graph_spilled(ctx)));
    (page.out, page.targets)
}

/// The overview's lines as they are written, with the jump targets among
/// them.
struct Page<'a> {
    out: Vec<Line<'static>>,
    targets: Vec<(usize, Target)>,
    theme: &'a Theme,
    width: usize,
}

impl Page<'_> {
    fn header(&mut self, s: &str) {
        self.out
            .push(Line::styled(s.to_string(), self.theme.header()));
    }

    fn raw(&mut self, s: impl Into<String>) {
        self.out.push(Line::raw(s.into()));
    }

    /// A line cut to the width.
    fn fitted(&mut self, s: &str) {
        self.out.push(Line::raw(fit(s, self.width, self.theme)));
    }

    fn warn(&mut self, s: String) {
        self.out.push(Line::styled(s, self.theme.warn()));
    }

    /// The next line jumps to `target`.
    fn target(&mut self, target: Target) {
        self.targets.push((self.out.len(), target));
    }
}

/// The file, where the dump comes from (AppDomains, or the native
/// format's details), and the heap's size.
fn file_section(page: &mut Page, ctx: &Ctx, dump: &Model) {
    page.header(" File");
    page.raw(format!(
        " {}  ({})",
        heaptui_core::model::printable_path(&dump.path),
        bytes(dump.file_bytes)
    ));
    page.fitted(&origin(dump));
    // HPROF's object layout (how the sizes were found) on a line of its own.
    // What the parenthesis says goes on the next line.
    if let Some((_, v)) = dump.details.iter().find(|(k, _)| k == LAYOUT) {
        let (layout, how) = match v.split_once(" (") {
            Some((l, h)) => (l, Some(h.trim_end_matches(')'))),
            None => (v.as_str(), None),
        };
        page.fitted(&format!(" Object layout: {layout}"));
        if let Some(how) = how {
            page.fitted(&format!("   {how}"));
        }
    }
    // The figures the report prints, from the same Summary; the types
    // (those with instances, the Types pane's rows) come with it.
    let types = ctx.loading.summary().map_or(String::new(), |s| {
        format!(" {},", counted(s.types, "type", "types"))
    });
    page.raw(format!(
        " {}, {},{types} {}",
        counted(dump.objects() as u64, "object", "objects"),
        counted(dump.refs.edges() as u64, "reference", "references"),
        bytes(ctx.totals.bytes)
    ));
}

/// Whether this analysis put its arrays on disk (the reopen cache's
/// arrays are mapped too, but from the cache file).
fn graph_spilled(ctx: &Ctx) -> bool {
    !ctx.loading.from_cache() && ctx.loading.graph().is_some_and(|g| g.retainers.is_mapped())
}

/// The memory budget, and whether the heap was over it.
fn memory_line(spilled: bool) -> String {
    let budget = heaptui_core::mem::budget::get().describe();
    if spilled {
        format!(
            " Memory budget {budget}: over it, the big arrays are on disk in {}",
            heaptui_core::model::printable_path(&heaptui_core::mem::spill::dir())
        )
    } else {
        format!(" Memory budget {budget}")
    }
}

/// Only the text format has AppDomain sections; native dumps name their
/// format and runtime details instead.
fn origin(dump: &Model) -> String {
    if dump.format == heaptui_core::model::Format::Rpm {
        let domains = dump
            .app_domains
            .iter()
            .filter(|d| !d.is_implicit() || d.objects > 0)
            .map(|d| (d.display_name(), d.objects));
        format!(" AppDomains: {}", heaptui_core::text::app_domains(domains))
    } else {
        let details: Vec<String> = dump
            .details
            .iter()
            .filter(|(k, _)| k != LAYOUT)
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        format!(" {}: {}", dump.format.describe(), details.join(", "))
    }
}

/// The root records by kind and flags.
fn roots_section(page: &mut Page, ctx: &Ctx) {
    page.raw("");
    page.header(" Roots (kind / flags: records)");
    // A handful of kinds: measured per frame, so the names line up.
    let records_w = ctx.totals.root_kinds.iter().map(|r| r.2).max();
    let records_w = count_width(records_w.unwrap_or(0)).max(9);
    for &(k, fl, n) in &ctx.totals.root_kinds {
        page.raw(format!(
            " {:>records_w$}  {} [{}]",
            count(n),
            root_kind::name(k),
            root_flags::describe(fl)
        ));
    }
}

/// Reachable, unreachable, weakly held, and what references hold.
fn reachability(page: &mut Page, s: &Summary) {
    // No line counts more objects than the dump has.
    let objects_w = count_width(s.objects).max(9);
    let objects = |n: u64| {
        let noun = if n == 1 { "object " } else { "objects" };
        format!("{:>objects_w$} {noun}", count(n))
    };
    page.raw(format!(
        " reachable    {:>12} in {} ({})",
        bytes(s.reachable_bytes),
        objects(s.reachable_objects),
        percent(s.reachable_bytes, s.total_bytes)
    ));
    page.raw(format!(
        " unreachable  {:>12} in {} (garbage or weak only)",
        bytes(s.unreachable_bytes),
        objects(s.unreachable_objects)
    ));
    page.raw(format!(
        " weakly held  {:>12} in {} (part of unreachable)",
        bytes(s.weakly_held_bytes),
        objects(s.weakly_held_objects)
    ));
    let Some(h) = &s.held_by_references else {
        return;
    };
    if h.strong {
        page.raw(format!(
            " referents    retain, {} of them (--references all; R: not)",
            count(h.referents)
        ));
        return;
    }
    page.raw(format!(
        " by refs only {:>12} in {} (part of unreachable)",
        bytes(h.bytes()),
        objects(h.objects())
    ));
    for (k, &(o, b)) in heaptui_core::model::Strength::ALL
        .iter()
        .zip(&h.by_strength)
    {
        if o > 0 {
            page.raw(format!(
                "   {:<10} {:>12} in {}",
                k.key(),
                bytes(b),
                objects(o)
            ));
        }
    }
}

/// The ten largest dominators, each a jump target.
fn top_dominators(page: &mut Page, dump: &Model, dom: &DominatorTree) {
    page.header(" Top dominators (retained, % of reachable)");
    let (width, theme) = (page.width, page.theme);
    for &o in ObjectIdx::cast_slice(dom.largest_roots()).iter().take(10) {
        let rb = dom.retained_bytes(o.index());
        page.target(Target::Object(o));
        // The type is shortened so that the id still shows.
        let head = format!(
            " {:>11} {:>6}  ",
            bytes(rb),
            percent(rb, dom.reachable_bytes)
        );
        let id = dump.id_hex(o);
        let text = row_preview(dump, o, width.saturating_sub(head.len()));
        let room = width.saturating_sub(head.len() + 1 + id.len() + text_width(&text));
        page.fitted(&format!(
            "{head}{}{text} {id}",
            type_name(dump.type_name(o), room, theme)
        ));
    }
}

/// The ten largest verified duplicate sets, each a jump target, and what
/// is not counted.
fn top_duplicates(page: &mut Page, ctx: &Ctx, dump: &Model, d: &Duplicates) {
    page.header(" Top duplicate sets (additional bytes)");
    // Sets whose equality cannot be verified stay out of the top
    // (counted on a line of their own).
    for (i, s) in ctx
        .totals
        .top_sets
        .iter()
        .filter_map(|&i| Some((i, d.sets.get(i as usize)?)))
    {
        page.target(Target::Set(i));
        page.fitted(&format!(
            " {:>11}  #{:<4} {} x {}",
            bytes(s.additional_bytes),
            i,
            count(d.members(i).len() as u64),
            dump.type_names[s.type_index as usize]
        ));
    }
    let totals = ctx.totals.duplicates;
    if totals.sets == 0 {
        page.raw(" no duplicate sets");
    }
    if totals.unverified_sets > 0 {
        page.fitted(&format!(
            " not counted: {} unverified sets, {} (equal only in type and size)",
            count(totals.unverified_sets),
            bytes(totals.unverified_bytes)
        ));
    }
}

/// What the reader skipped or could not resolve.
fn diagnostics(page: &mut Page, dump: &Model) {
    let dg = &dump.diagnostics;
    page.header(" Diagnostics");
    if dg.total() == 0 {
        page.raw(" none: every line was used");
        return;
    }
    page.warn(format!(
        " skipped lines {}, dangling references {}, undefined types {}, duplicate objects {}, missing root objects {}",
        dg.skipped_lines, dg.dangling_references, dg.undefined_types, dg.duplicate_objects, dg.missing_root_objects
    ));
    if dg.clamped_roots > 0 {
        page.warn(format!(
            " roots whose kind or flags did not fit in 32 bits (kept, cut to fit) {}",
            dg.clamped_roots
        ));
    }
    for m in &dg.messages {
        page.fitted(&format!("   {m}"));
    }
}

impl Pane for OverviewPane {
    fn filterable(&self) -> bool {
        false
    }

    fn key(&mut self, cmd: Cmd, ctx: &Ctx) -> Vec<Intent> {
        if cmd != Cmd::Open {
            return Vec::new();
        }
        let (_, targets) = lines(ctx, 80);
        match self.selected.and_then(|k| targets.get(k)).map(|t| t.1) {
            Some(Target::Object(o)) => vec![Intent::Jump(reveal(o))],
            Some(Target::Set(s)) => vec![Intent::Jump(show_set(s, true))],
            None => Vec::new(),
        }
    }

    /// Moves among the jump targets and keeps the selected one on screen;
    /// with none (still loading), just scrolls.
    fn step(&mut self, delta: isize, ctx: &Ctx) -> Vec<Intent> {
        let width = ctx.body.width.saturating_sub(2) as usize;
        let (lines, targets) = lines(ctx, width);
        let h = ctx.body.height.saturating_sub(2) as usize;
        if targets.is_empty() || (delta > 0 && self.selected == Some(targets.len() - 1)) {
            // Past the last target: scroll on to the diagnostics.
            let max = lines.len().saturating_sub(h) as isize;
            self.scroll = (self.scroll as isize + delta).clamp(0, max) as u16;
            return Vec::new();
        }
        // The first move selects the first target.
        let k = match self.selected {
            None => 0,
            Some(k) => (k as isize + delta).clamp(0, targets.len() as isize - 1) as usize,
        };
        self.selected = Some(k);
        let at = targets[k].0;
        let mut scroll = self.scroll as usize;
        if at < scroll + 1 {
            scroll = at.saturating_sub(1);
        } else if at >= scroll + h {
            scroll = at + 1 - h;
        }
        // The first target also shows the file header above it.
        if k == 0 && delta < 0 {
            scroll = 0;
        }
        self.scroll = scroll as u16;
        Vec::new()
    }

    fn selected_object(&self, ctx: &Ctx) -> Option<ObjectIdx> {
        let (_, targets) = lines(ctx, 80);
        match targets.get(self.selected?)?.1 {
            Target::Object(o) => Some(o),
            Target::Set(s) => ctx
                .loading
                .duplicates()?
                .members(s)
                .first()
                .copied()
                .map(ObjectIdx),
        }
    }

    fn draw(&self, ctx: &Ctx, area: Rect, f: &mut Frame) {
        let theme = ctx.theme;
        let block = Block::bordered()
            .border_set(theme.border())
            .title(Line::styled(
                " Overview (Enter on a dominator or set jumps there) ",
                theme.header(),
            ));
        let inner = block.inner(area);
        let (mut lines, targets) = lines(ctx, inner.width as usize);
        if let Some(&(at, _)) = self.selected.and_then(|k| targets.get(k)) {
            // The selection: a `>` marker and reverse video.
            let text: String = lines[at].spans.iter().map(|s| s.content.as_ref()).collect();
            let text = format!(">{}", text.strip_prefix(' ').unwrap_or(&text));
            lines[at] = Line::styled(text, theme.selected());
        }
        let max = lines.len().saturating_sub(inner.height as usize) as u16;
        f.render_widget(
            Paragraph::new(lines)
                .block(block)
                .scroll((self.scroll.min(max), 0)),
            area,
        );
    }
}
