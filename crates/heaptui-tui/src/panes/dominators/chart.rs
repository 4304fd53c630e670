//! The retained-size chart: an icicle of the zoom root. One bar per child
//! of the zoom root, and under each bar its own children (and theirs) as
//! nested segments of it, all on one scale: the zoom root's retained bytes
//! are the full width.
//!
//! The nested levels come from the grouped dominator tree: a child's
//! grouped children already built in the tree are used as they are; the
//! others are grouped once when the zoom root (or the filter) changes and
//! kept until it changes again, never per frame.

use std::cell::RefCell;
use std::sync::Arc;

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::{groups_inline, DominatorsPane, Item, Marks, Tree};
use crate::fmt::{bytes, count, fit, percent, text_width, type_name};
use crate::theme::Theme;
use heaptui_core::analysis::group_children_unsorted;
use heaptui_core::analysis::Group;
use heaptui_core::graph::DominatorTree;
use heaptui_core::model::Model;

/// Nested levels below each bar (the icicle is `1 + LEVELS` deep).
pub const LEVELS: usize = 2;

/// Segments smaller than this share of the zoom root are not grouped
/// further: they are under one cell even in a 200-column chart.
const MIN_SHARE: u64 = 160;

pub fn draw_chart(
    pane: &DominatorsPane,
    dump: &Model,
    dom: &DominatorTree,
    theme: &Theme,
    area: Rect,
    f: &mut Frame,
) {
    let t = pane.tree();
    let highlight = pane.top_of_selection();
    let total = t.sizes_of(0, dom).map_or(0, |s| s.0);
    let top = pane.top_level();
    let nested = nested_levels(&pane.chart_cache, t, &top, &pane.marks, dump, dom, total);
    let bars: Vec<Bar> = top
        .iter()
        .zip(nested.iter())
        .map(|(&id, levels)| Bar {
            label: t.chart_label(id, dump, theme, label_room(area.width)),
            bytes: t.sizes_of(id, dom).map_or(0, |s| s.0),
            selected: id == highlight,
            levels: levels.clone(),
        })
        .collect();
    let chart = RetainedChart {
        title: format!("Retained by {}", t.label),
        total,
        reachable: dom.reachable_bytes,
        bars: &bars,
        theme,
    };
    f.render_widget(chart, area);
}

/// Width of the chart's label column: half, the bars and their nested
/// levels get the rest.
fn label_width(width: u16) -> usize {
    (width as usize / 2).clamp(10, 48)
}

/// Room for a type label in the chart, leaving space for size and percent
/// (` 1023.50 KiB 100.0%`).
fn label_room(width: u16) -> usize {
    label_width(width).saturating_sub(19).max(8)
}

/// One segment of a nested level: a grouped child, placed by its offset
/// (bytes) from the start of the bar it belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seg {
    pub offset: u64,
    pub bytes: u64,
    /// The type's full name (shortened when drawn).
    pub name: String,
    /// Objects in the group (`3×` before the name when more than one).
    pub count: u64,
}

/// One bar of the chart.
#[derive(Debug, Clone)]
pub struct Bar {
    /// The row's type (with its count for a group), as the bar is labelled.
    pub label: String,
    /// Its retained bytes (the bar's length).
    pub bytes: u64,
    /// Whether the selection is in it.
    pub selected: bool,
    /// The nested levels under the bar, outermost first; each level's
    /// segments lie within their parents'.
    pub levels: Vec<Vec<Seg>>,
}

/// What the nested levels were computed for: a zoom level (tree id), its
/// visible top rows and the filter marks (held, so compared by identity:
/// a held `Arc` cannot be freed and its address reused by newer marks).
#[derive(Debug)]
struct Key {
    tree: u64,
    top: Vec<u32>,
    marks: Marks,
}

impl Key {
    fn same(&self, tree: u64, top: &[u32], marks: &Marks) -> bool {
        let same_marks = match (&self.marks, marks) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        };
        self.tree == tree && self.top == top && same_marks
    }
}

/// Per top row, its nested levels.
type Nested = Arc<Vec<Vec<Vec<Seg>>>>;

/// The pane's last nested levels, reused while their key holds (every
/// frame until the zoom root, the visible rows or the filter change). A
/// copy of the pane starts empty.
#[derive(Debug, Default)]
pub struct NestedCache(RefCell<Option<(Key, Nested)>>);

impl Clone for NestedCache {
    fn clone(&self) -> Self {
        NestedCache::default()
    }
}

/// The nested levels under each of `top`, from `cache` when its key holds.
fn nested_levels(
    cache: &NestedCache,
    t: &Tree,
    top: &[u32],
    marks: &Marks,
    dump: &Model,
    dom: &DominatorTree,
    total: u64,
) -> Nested {
    let mut cell = cache.0.borrow_mut();
    if let Some((k, v)) = cell.as_ref() {
        if k.same(t.id, top, marks) {
            return v.clone();
        }
    }
    let v: Nested = Arc::new(
        top.iter()
            .map(|&id| levels_under(t, id, marks, dump, dom, total))
            .collect(),
    );
    let key = Key {
        tree: t.id,
        top: top.to_vec(),
        marks: marks.clone(),
    };
    *cell = Some((key, v.clone()));
    v
}

/// A group's place in a level: its offset from the bar's start.
struct Placed {
    offset: u64,
    group: Arc<Group>,
}

/// The nested levels under top row `id`.
fn levels_under(
    t: &Tree,
    id: u32,
    marks: &Marks,
    dump: &Model,
    dom: &DominatorTree,
    total: u64,
) -> Vec<Vec<Seg>> {
    let big = |b: u64| b.saturating_mul(MIN_SHARE) >= total;
    let node = &t.nodes[id as usize];
    let bar_bytes = t.sizes_of(id, dom).map_or(0, |s| s.0);
    if !big(bar_bytes) {
        return Vec::new();
    }
    // Level 1: the row's grouped children, from the tree when built there.
    let built: Option<Vec<Arc<Group>>> = match (&node.children, node.instances) {
        (Some(children), false) => Some(
            children
                .iter()
                .filter_map(|&c| match &t.nodes[c as usize].item {
                    Item::Group(g) => Some(g.clone()),
                    _ => None,
                })
                .collect(),
        ),
        _ => None,
    };
    let first = match built {
        Some(groups) => groups,
        None => group(&t.objects(id, dom), marks, dump, dom),
    };
    let mut levels: Vec<Vec<Placed>> = vec![place(0, first)];
    while levels.len() < LEVELS {
        let mut next = Vec::new();
        for p in levels.last().expect("one level at least") {
            if big(p.group.retained_bytes) {
                let groups = group(&p.group.members, marks, dump, dom);
                next.extend(place(p.offset, groups));
            }
        }
        levels.push(next);
    }
    levels
        .into_iter()
        .map(|level| {
            level
                .into_iter()
                .map(|p| Seg {
                    offset: p.offset,
                    bytes: p.group.retained_bytes,
                    name: dump.type_names[p.group.type_index.index()].to_string(),
                    count: p.group.members.len() as u64,
                })
                .collect::<Vec<Seg>>()
        })
        .take_while(|l| !l.is_empty())
        .collect()
}

/// The grouped dominator-tree children of `parents`, largest first (none
/// for more parents or children than the tree groups inline: that is a
/// job's work).
fn group(parents: &[u32], marks: &Marks, dump: &Model, dom: &DominatorTree) -> Vec<Arc<Group>> {
    if !groups_inline(parents, dom) {
        return Vec::new();
    }
    let mut groups = group_children_unsorted(dump, dom, parents);
    if let Some(m) = marks {
        groups.retain(|g| g.members.iter().any(|&o| m[o as usize]));
    }
    groups.into_iter().map(Arc::new).collect()
}

/// Groups laid side by side from `offset`, largest first as grouped.
fn place(offset: u64, groups: Vec<Arc<Group>>) -> Vec<Placed> {
    let mut at = offset;
    groups
        .into_iter()
        .map(|group| {
            let p = Placed { offset: at, group };
            at += p.group.retained_bytes;
            p
        })
        .collect()
}

/// The retained-size chart: one horizontal bar per child of the zoom root,
/// as long as its share of the root's retained bytes, labelled with type,
/// size and that share; under it, its nested levels on the same scale.
/// The selection is marked with `>` and reverse video, never by colour
/// alone.
pub struct RetainedChart<'a> {
    /// The chart's title (the zoom root).
    pub title: String,
    /// Retained bytes of the zoom root (the full bar length).
    pub total: u64,
    /// Bytes of the whole reachable heap (for the zoom root's share).
    pub reachable: u64,
    /// The bars, one per top-level row, in the tree's order.
    pub bars: &'a [Bar],
    /// Colours and glyphs.
    pub theme: &'a Theme,
}

impl RetainedChart<'_> {
    /// The title line: the zoom root, its size and, when it is not the
    /// whole reachable heap, its share of that (the bars' percentages are
    /// shares of the zoom root, the scale the bars are drawn on).
    fn title_line(&self, w: usize) -> String {
        let nums = if self.total == self.reachable || self.reachable == 0 {
            format!(" ({})", bytes(self.total))
        } else {
            format!(
                " ({}, {} of the heap)",
                bytes(self.total),
                percent(self.total, self.reachable)
            )
        };
        // The name gives way to the numbers.
        let room = w.saturating_sub(text_width(&nums) + 1).max(8);
        let title = fit(&self.title, room, self.theme);
        fit(&format!(" {title}{nums}"), w, self.theme)
    }
}

impl ratatui::widgets::Widget for RetainedChart<'_> {
    fn render(self, area: Rect, buf: &mut ratatui::buffer::Buffer) {
        let theme = self.theme;
        let w = area.width as usize;
        let total = self.total.max(1);
        let label_w = label_width(area.width);
        let bar_w = w.saturating_sub(label_w + 3);
        let cells = |b: u64| ((b as u128 * bar_w as u128) / total as u128) as usize;
        // Each bar and the nested levels that show something.
        let mut blocks: Vec<Vec<Line>> = Vec::with_capacity(self.bars.len());
        let mut selected_block = 0;
        for (i, b) in self.bars.iter().enumerate() {
            let eighths = ((b.bytes as u128 * bar_w as u128 * 8) / total as u128) as usize;
            // The name gives way, not the size and percent after it (but
            // keeps a few cells in a tiny chart).
            let nums = format!(" {} {}", bytes(b.bytes), percent(b.bytes, self.total));
            let name_w = label_w
                .saturating_sub(text_width(&nums))
                .max(text_width(&b.label).min(4));
            let name = fit(&b.label, name_w, theme);
            let label = fit(&format!("{name}{nums}"), label_w, theme);
            let mark = if b.selected { ">" } else { " " };
            let style = if b.selected {
                selected_block = i;
                theme.selected()
            } else {
                theme.bold()
            };
            let mut spans = vec![
                Span::styled(format!("{mark}{label:<label_w$} "), style),
                Span::styled(theme.bar(eighths), theme.bar_style()),
            ];
            if eighths == 0 {
                spans.push(Span::styled(".", theme.dim()));
            }
            let mut block = vec![Line::from(spans)];
            for level in &b.levels {
                if let Some(text) = level_text(level, bar_w, &cells, theme) {
                    block.push(Line::from(vec![
                        Span::raw(" ".repeat(label_w + 2)),
                        Span::styled(text, theme.dim()),
                    ]));
                }
            }
            blocks.push(block);
        }
        // Scrolled so that the selected bar and its levels show.
        let room = area.height.saturating_sub(1) as usize;
        let mut first = 0;
        let upto = |first: usize| -> usize {
            blocks[first..=selected_block.min(blocks.len().saturating_sub(1))]
                .iter()
                .map(Vec::len)
                .sum()
        };
        while !blocks.is_empty() && first < selected_block && upto(first) > room {
            first += 1;
        }
        let mut lines = vec![Line::styled(self.title_line(w), theme.header())];
        lines.extend(blocks.into_iter().skip(first).flatten().take(room));
        ratatui::widgets::Widget::render(Paragraph::new(lines), area, buf);
    }
}

/// Narrowest segment drawn (its edge and three letters).
const SEG_MIN: usize = 4;

/// One nested level as text under the bar: each segment from its first
/// cell, a boundary mark then as much of its name as fits; `None` when no
/// segment is [`SEG_MIN`] cells wide (nothing readable to draw).
fn level_text(
    level: &[Seg],
    bar_w: usize,
    cells: &dyn Fn(u64) -> usize,
    theme: &Theme,
) -> Option<String> {
    let edge = if theme.ascii { "|" } else { "▏" };
    let mut row: Vec<String> = vec![" ".to_string(); bar_w];
    let mut any = false;
    for s in level {
        let start = cells(s.offset);
        let end = cells(s.offset + s.bytes).min(bar_w);
        // A segment shows with a few letters of its name, or not at all.
        if end < start + SEG_MIN || start >= bar_w {
            continue;
        }
        any = true;
        let w = end - start - 1;
        let x = if theme.ascii { "x" } else { "×" };
        let n = format!("{}{x}", count(s.count));
        // The count goes first when it leaves room for the name.
        let label = if s.count > 1 && w >= text_width(&n) + 6 {
            format!("{n}{}", type_name(&s.name, w - text_width(&n), theme))
        } else {
            type_name(&s.name, w, theme)
        };
        let label = fit(&label, w, theme);
        row[start] = edge.to_string();
        let mut at = start + 1;
        for c in label.chars() {
            let cw = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
            if cw == 0 || at + cw > end {
                continue;
            }
            row[at] = c.to_string();
            for k in 1..cw {
                row[at + k] = String::new();
            }
            at += cw;
        }
    }
    any.then(|| row.concat().trim_end().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::theme::Colors;

    fn seg(offset: u64, bytes: u64, name: &str, count: u64) -> Seg {
        Seg {
            offset,
            bytes,
            name: name.into(),
            count,
        }
    }

    #[test]
    fn a_level_places_segments_on_the_bar_scale() {
        let t = Theme {
            ascii: true,
            colors: Colors::Mono,
        };
        // 24 cells for 1000 bytes.
        let cells = |b: u64| (b * 24 / 1000) as usize;
        let level = [
            seg(0, 500, "System.Collections.Generic.List<A.Order>", 1),
            seg(500, 400, "A.B.Line", 3),
            seg(900, 80, "Tiny", 1), // 2 cells: too narrow to draw
        ];
        let text = level_text(&level, 24, &cells, &t).unwrap();
        assert_eq!(text, "|List<Order>|3xB.Line");
        assert_eq!(text.len(), 21);
        // Only segments too narrow to read: no line at all.
        assert_eq!(level_text(&level[2..], 24, &cells, &t), None);
    }

    #[test]
    fn the_title_keeps_the_heap_share_when_the_name_is_long() {
        let t = Theme {
            ascii: true,
            colors: Colors::Mono,
        };
        let chart = RetainedChart {
            title: "Retained by A.Very.Long.Name.Of.A.Type 1234".into(),
            total: 250,
            reachable: 1000,
            bars: &[],
            theme: &t,
        };
        assert_eq!(
            chart.title_line(50),
            " Retained by A.Very.... (250 B, 25.0% of the heap)"
        );
    }
}
