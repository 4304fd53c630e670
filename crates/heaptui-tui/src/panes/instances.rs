//! The instances of one type (MAT's "list objects", DevTools' expanded
//! constructor): a virtual list of object id, shallow and retained size,
//! sortable by each column, reached from the Types pane with `x`; Enter
//! inspects an object. Listing and sorting are a worker job (the type →
//! objects index and an O(k log k) sort for k instances, see
//! `instance_rows`), so a type of millions of instances never stalls a
//! key: the list says it is working until the rows land. A frame formats
//! only the visible rows.

use std::sync::Arc;

use ratatui::layout::Rect;
use ratatui::Frame;

use super::table::{ScrolledTable, Sort, TableRow};
use super::{Intent, ListState};
use crate::fmt::{bytes, bytes_width, count, Col, Columns};
use crate::instance_rows::{retained, InstanceKey, InstanceRows, TypeObjects};
use crate::theme::Theme;
use crate::worker::Job;
use heaptui_core::graph::{DominatorTree, HeapGraph};
use heaptui_core::model::{ObjectIdx, TypeIdx, ROW_PREVIEW_CHARS};

/// Object, Shallow, Retained (the sortable columns, in this order).
const OBJECT: usize = 0;
const SHALLOW: usize = 1;
const RETAINED: usize = 2;

/// The list of a type's instances.
#[derive(Debug, Clone)]
pub struct InstancesView {
    /// The type.
    pub(crate) type_index: TypeIdx,
    /// The instances in the current sort order (the permutation itself).
    pub(crate) rows: Vec<ObjectIdx>,
    /// The order of `rows`.
    pub(crate) sort: Sort,
    /// The order asked of the job under way, if any (`rows` keep the
    /// previous order until it lands).
    pub(crate) pending: Option<Sort>,
    /// The selected row and the scroll.
    pub(crate) list: ListState,
    /// Widths of the shallow and retained values (measured by the job).
    widths: [usize; 2],
}

impl InstancesView {
    /// The type's instances in the view's order.
    pub fn rows(&self) -> &[ObjectIdx] {
        &self.rows
    }

    /// The instances of `type_index`, largest retained first, asked of the
    /// worker (`index`: the type → objects index when it was built
    /// already). The view waits for the rows; the intent asks for them.
    pub fn open(type_index: TypeIdx, index: Option<Arc<TypeObjects>>) -> (InstancesView, Intent) {
        let sort = Sort {
            column: RETAINED,
            descending: true,
        };
        let view = InstancesView {
            type_index,
            rows: Vec::new(),
            sort,
            pending: Some(sort),
            list: ListState::default(),
            widths: [0, 1],
        };
        let intent = view.request(sort, index, "listing instances");
        (view, intent)
    }

    fn request(&self, sort: Sort, index: Option<Arc<TypeObjects>>, label: &str) -> Intent {
        let key = match sort.column {
            OBJECT => InstanceKey::Object,
            SHALLOW => InstanceKey::Shallow,
            _ => InstanceKey::Retained,
        };
        Intent::Request {
            job: Job::Instances {
                type_index: self.type_index,
                key,
                descending: sort.descending,
                index,
            },
            label: label.into(),
        }
    }

    /// The list's columns: Object, Shallow, Retained.
    pub fn columns(&self) -> [Col; 3] {
        let mut cols = [
            Col::name("Object").sortable(),
            Col::num("Shallow", self.widths[0]).sortable(),
            Col::num("Retained", self.widths[1]).sortable(),
        ];
        self.sort.mark(&mut cols);
        cols
    }

    /// The order the next sort key starts from: the one asked for last.
    pub fn wanted(&self) -> Sort {
        self.pending.unwrap_or(self.sort)
    }

    /// Asks for a new order (a key or a header click); the rows keep the
    /// current one until the job's result lands.
    pub fn resort(&mut self, sort: Sort, index: Option<Arc<TypeObjects>>) -> Intent {
        self.pending = Some(sort);
        self.request(sort, index, "sorting instances")
    }

    /// Installs the job's rows if they are the ones this view waits for
    /// (same type, the order asked for last); the selection goes to the
    /// first row.
    pub fn arrived(&mut self, r: InstanceRows) {
        let Some(wanted) = self.pending else {
            return;
        };
        let column = match r.key {
            InstanceKey::Object => OBJECT,
            InstanceKey::Shallow => SHALLOW,
            InstanceKey::Retained => RETAINED,
        };
        if r.type_index != self.type_index
            || column != wanted.column
            || r.descending != wanted.descending
        {
            return;
        }
        self.rows = r.rows;
        self.sort = wanted;
        self.pending = None;
        self.widths = [
            bytes_width(r.max_shallow),
            bytes_width(r.max_retained).max(1),
        ];
        self.list = ListState::default();
    }

    /// Whether the rows are still to come (the first listing).
    pub fn listing(&self) -> bool {
        self.pending.is_some() && self.rows.is_empty()
    }

    /// The selected instance.
    pub fn selected(&self) -> Option<ObjectIdx> {
        self.rows.get(self.list.selected).copied()
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
        let shown = if view.listing() {
            theme.ellipsis().to_string()
        } else {
            count(view.rows.len() as u64)
        };
        let title = format!(
            " Instances of {} ({shown}) {} Enter inspects, Bksp back ",
            dump.type_names[view.type_index.index()],
            theme.sep()
        );
        let inner = super::framed(f, area, &title, theme);
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
            let reachable = dom.is_some_and(|d| d.is_reachable(o.raw()));
            let retained = if reachable {
                bytes(retained(dom, o.raw()))
            } else {
                "-".into()
            };
            // The id, whether it is unreachable, then the object's text
            // where it holds some (cut first where the column is narrow).
            let id = dump.id_hex(o);
            let id = if reachable || dom.is_none() {
                id
            } else {
                format!("{id} (unreachable)")
            };
            let id = format!("{id}{}", dump.quoted_preview(o, ROW_PREVIEW_CHARS));
            let cells = vec![id, bytes(dump.sizes.get(o.index())), retained];
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
                empty: Some(if view.listing() {
                    format!(" (listing instances{})", theme.ellipsis())
                } else {
                    " (no instances)".into()
                }),
            },
            inner,
        );
    }
}

/// The column under cell `x` of the list's header (inside the border).
pub fn header_column(view: &InstancesView, width: usize, x: usize) -> Option<usize> {
    Columns::new(width, &view.columns()).column_at(x)
}
