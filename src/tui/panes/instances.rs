//! The instances of one type (MAT's "list objects", DevTools' expanded
//! constructor): a virtual list of object id, shallow and retained size,
//! sortable by each column, reached from the Types pane with `x`; Enter
//! inspects an object. The objects of every type come from a
//! [`TypeObjects`] index built once (O(objects)); a frame formats only the
//! visible rows, and a sort orders the type's instances once per key.

use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Block;
use ratatui::Frame;

use super::table::{ScrolledTable, Sort, TableRow};
use super::ListState;
use crate::graph::{DominatorTree, HeapGraph};
use crate::model::Model;
use crate::tui::fmt::{bytes, bytes_width, count, fit, Col, Columns};
use crate::tui::theme::Theme;

/// The objects of every type, grouped by type (compressed rows: the
/// objects of type `t` are `objects[starts[t]..starts[t + 1]]`, in dump
/// order). Built once per dump in two passes over the objects.
#[derive(Debug, Clone, Default)]
pub struct TypeObjects {
    starts: Vec<u32>,
    objects: Vec<u32>,
}

impl TypeObjects {
    /// `types[o]` is the type of object `o`, below `type_count`.
    pub fn build(types: &[u32], type_count: usize) -> TypeObjects {
        let mut starts = vec![0u32; type_count + 1];
        for &t in types {
            starts[t as usize + 1] += 1;
        }
        for i in 1..starts.len() {
            starts[i] += starts[i - 1];
        }
        let mut next = starts.clone();
        let mut objects = vec![0u32; types.len()];
        for (o, &t) in types.iter().enumerate() {
            let slot = &mut next[t as usize];
            objects[*slot as usize] = o as u32;
            *slot += 1;
        }
        TypeObjects { starts, objects }
    }

    /// The objects of type `t`, in dump order.
    pub fn of(&self, t: u32) -> &[u32] {
        let t = t as usize;
        match (self.starts.get(t), self.starts.get(t + 1)) {
            (Some(&a), Some(&b)) => &self.objects[a as usize..b as usize],
            _ => &[],
        }
    }
}

/// Object, Shallow, Retained (the sortable columns, in this order).
const OBJECT: usize = 0;
const SHALLOW: usize = 1;
const RETAINED: usize = 2;

/// The list of a type's instances.
#[derive(Debug, Clone)]
pub struct InstancesView {
    pub type_index: u32,
    /// The instances in the current sort order (the permutation itself).
    pub rows: Vec<u32>,
    pub sort: Sort,
    pub list: ListState,
    /// Widths of the id, shallow and retained values (measured once).
    widths: [usize; 3],
}

impl InstancesView {
    /// The instances of `type_index`, largest retained first. O(k log k)
    /// for a type of k instances, once.
    pub fn new(
        type_index: u32,
        objects: &[u32],
        dump: &Model,
        dom: Option<&DominatorTree>,
    ) -> InstancesView {
        let mut widths = [0usize; 3];
        let mut max_shallow = 0;
        let mut max_retained = 0;
        for &o in objects {
            max_shallow = max_shallow.max(dump.sizes[o as usize]);
            max_retained = max_retained.max(retained(dom, o));
        }
        widths[0] = objects.last().map_or(0, |&o| dump.id_hex(o).len());
        widths[1] = bytes_width(max_shallow);
        widths[2] = bytes_width(max_retained).max(1);
        let mut view = InstancesView {
            type_index,
            rows: objects.to_vec(),
            sort: Sort {
                column: RETAINED,
                descending: true,
            },
            list: ListState::default(),
            widths,
        };
        view.order(dump, dom);
        view
    }

    pub fn columns(&self) -> [Col; 3] {
        let mut cols = [
            Col::name("Object").sortable(),
            Col::num("Shallow", self.widths[1]).sortable(),
            Col::num("Retained", self.widths[2]).sortable(),
        ];
        self.sort.mark(&mut cols);
        cols
    }

    /// Sorts the rows by the current sort; ties in dump order.
    fn order(&mut self, dump: &Model, dom: Option<&DominatorTree>) {
        self.rows.sort_unstable();
        match self.sort.column {
            OBJECT => self.sort.order(&mut self.rows, |o| o),
            SHALLOW => self.sort.order(&mut self.rows, |o| dump.sizes[o as usize]),
            _ => self.sort.order(&mut self.rows, |o| retained(dom, o)),
        }
        self.list = ListState::default();
    }

    /// Applies a new sort (a key or a header click); the selection goes to
    /// the first row.
    pub fn resort(&mut self, sort: Sort, dump: &Model, dom: Option<&DominatorTree>) {
        self.sort = sort;
        self.order(dump, dom);
    }

    pub fn selected(&self) -> Option<u32> {
        self.rows.get(self.list.selected).copied()
    }
}

/// Retained bytes of an object; an unreachable one retains nothing.
fn retained(dom: Option<&DominatorTree>, o: u32) -> u64 {
    match dom {
        Some(d) if d.is_reachable(o) => d.retained_bytes[o as usize],
        _ => 0,
    }
}

impl InstancesView {
    /// Draws the list in `area` (a bordered block); a frame formats the
    /// visible rows only.
    pub fn render(
        &self,
        graph: &HeapGraph,
        dom: Option<&DominatorTree>,
        theme: &Theme,
        area: Rect,
        f: &mut Frame,
    ) {
        let view = self;
        let dump = &graph.dump;
        let title = format!(
            " Instances of {} ({}) {} Enter inspects, Bksp back ",
            dump.type_names[view.type_index as usize],
            count(view.rows.len() as u64),
            theme.sep()
        );
        let block = Block::bordered()
            .border_set(theme.border())
            .title(Line::styled(
                fit(&title, area.width.saturating_sub(2) as usize, theme),
                theme.header(),
            ));
        let inner = block.inner(area);
        f.render_widget(block, area);
        let cols = view.columns();
        let table = Columns::new(inner.width as usize, &cols);
        let height = inner.height.saturating_sub(1) as usize;
        let mut shown = Vec::with_capacity(height);
        for (i, &o) in view
            .rows
            .iter()
            .enumerate()
            .skip(view.list.offset)
            .take(height)
        {
            let sel = i == view.list.selected;
            let reachable = dom.is_some_and(|d| d.is_reachable(o));
            let retained = if reachable {
                bytes(retained(dom, o))
            } else {
                "-".into()
            };
            let id = dump.id_hex(o);
            let id = if reachable || dom.is_none() {
                id
            } else {
                format!("{id} (unreachable)")
            };
            let cells = vec![id, bytes(dump.sizes[o as usize]), retained];
            let style = if sel {
                theme.selected()
            } else {
                Default::default()
            };
            shown.push(TableRow::cells(cells, sel, style));
        }
        if inner.height == 0 {
            return;
        }
        f.render_widget(
            ScrolledTable {
                columns: &table,
                header: &cols,
                theme,
                rows: shown,
                empty: Some(" (no instances)".into()),
            },
            inner,
        );
    }
}

/// The column under cell `x` of the list's header (inside the border).
pub fn header_column(view: &InstancesView, width: usize, x: usize) -> Option<usize> {
    Columns::new(width, &view.columns()).column_at(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_objects_groups_objects_by_type_in_dump_order() {
        let types = [2, 0, 2, 1, 2, 0];
        let t = TypeObjects::build(&types, 4);
        assert_eq!(t.of(0), &[1, 5]);
        assert_eq!(t.of(1), &[3]);
        assert_eq!(t.of(2), &[0, 2, 4]);
        assert_eq!(t.of(3), &[] as &[u32]);
        assert_eq!(t.of(9), &[] as &[u32]);
    }
}
