//! The `/` filter off the UI thread. A key in the filter line only records
//! the text and answers a [`FilterRequest`] (an effect of `update`, which
//! the event loop hands over); the `heaptui-filter` thread
//! computes what the pane shows (tree marks, duplicate rows, root matches,
//! the Types candidates fed to nucleo) and sends it back as a
//! [`Msg::Filtered`]. Latest request wins, per pane: every request carries a
//! generation, the thread skips or abandons a request once a newer one for
//! its pane was sent, and the App drops any result whose generation it no
//! longer waits for. So no key press does work proportional to the heap,
//! the duplicate sets or the roots, whatever the heap size. Imports the
//! matcher and the messages (`msg`), never a pane or `app` (the panes take
//! their row types from here).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crossbeam_channel::{unbounded, Sender};
use nucleo::Injector;

use super::matcher::{inject_types, type_mask};
use super::msg::Msg;
pub use super::msg::{DupRow, FilterResult, Filtered, GroupMatch, OwnersMatch};
use super::pane_id::PaneId;
use heaptui_core::analysis::Owners;
use heaptui_core::analysis::RootGroup;
use heaptui_core::analysis::TypeStats;
use heaptui_core::analysis::{subtrees_with_match, TypeFilter};
use heaptui_core::graph::duplicates::Duplicates;
use heaptui_core::graph::{DominatorTree, HeapGraph};
use heaptui_core::model::Model;

/// One filter computation for one pane.
#[derive(Clone)]
pub struct FilterRequest {
    /// The pane whose filter it is.
    pub pane: PaneId,
    /// The request's generation: a newer request for the pane supersedes it.
    pub generation: u64,
    /// The parsed filter text.
    pub filter: TypeFilter,
    /// The data it runs over.
    pub work: FilterWork,
}

/// A request is known by its pane and generation (its work is shared data).
impl PartialEq for FilterRequest {
    fn eq(&self, other: &Self) -> bool {
        (self.pane, self.generation) == (other.pane, other.generation)
    }
}

impl Eq for FilterRequest {}

impl std::fmt::Debug for FilterRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FilterRequest")
            .field("pane", &self.pane)
            .field("generation", &self.generation)
            .finish_non_exhaustive()
    }
}

/// The data a pane's filter runs over (shared, immutable).
#[derive(Clone)]
pub enum FilterWork {
    /// Marks of the dominator subtrees that hold a match.
    Tree {
        /// The heap graph (the objects' types).
        graph: Arc<HeapGraph>,
        /// The dominator tree to mark.
        dom: Arc<DominatorTree>,
    },
    /// The duplicate sets and possible duplicates of matching types.
    Duplicates {
        /// The heap graph (the sets' type names).
        graph: Arc<HeapGraph>,
        /// The detection result to select from.
        duplicates: Arc<Duplicates>,
        /// With a comparison: the type names of the sets the newest
        /// snapshot lacks ([`DupRow::Gone`]).
        gone: Arc<Vec<Box<str>>>,
        /// The owners view's owners, and the paths (type names joined by
        /// ` / `) of the owners gone from the newest snapshot.
        owners: Option<(Arc<Owners>, Arc<Vec<String>>)>,
    },
    /// Per root group, the records whose object's type matches.
    Roots {
        /// The heap graph (the records' objects and types).
        graph: Arc<HeapGraph>,
        /// The root groups.
        groups: Arc<Vec<RootGroup>>,
    },
    /// The types passing the structural tokens, pushed into the nucleo
    /// matcher (which ranks the fuzzy text on its own threads).
    Types {
        /// The heap graph (the type names).
        graph: Arc<HeapGraph>,
        /// Every type's statistics.
        types: Arc<Vec<TypeStats>>,
        /// The pane's sort: positions in `types`, in the order to inject;
        /// a position `types.len() + j` is the gone type `gone[j]`.
        order: Arc<Vec<u32>>,
        /// With a comparison: the types of the baselines the newest
        /// snapshot lacks, injected as type index `names + j`.
        gone: Arc<Vec<Box<str>>>,
        /// Where the passing types go (the matcher's input).
        injector: Injector<u32>,
    },
}

/// Records listed per expanded root group at most.
pub const RECORDS_SHOWN: usize = 1000;

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
            if mask[dump.type_of(object).index()] {
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

/// Items between two looks at the "superseded" flag in long loops.
pub const CHECK_EVERY: usize = 1 << 16;

/// Runs a request to completion, or gives up (`None`) as soon as
/// `superseded` says a newer request for the pane exists.
pub fn compute(req: FilterRequest, superseded: &dyn Fn() -> bool) -> Option<Filtered> {
    let _busy = heaptui_core::mem::busy();
    let FilterRequest {
        pane,
        generation,
        filter,
        work,
    } = req;
    let result = match work {
        FilterWork::Tree { graph, dom } => {
            let mask = type_mask(&graph.dump.type_names, &filter);
            if superseded() {
                return None;
            }
            FilterResult::Tree(Arc::new(subtrees_with_match(&graph.dump, &dom, &mask)))
        }
        FilterWork::Duplicates {
            graph,
            duplicates,
            gone,
            owners,
        } => {
            let mask = type_mask(&graph.dump.type_names, &filter);
            let gone = type_mask(&gone, &filter);
            let text = TextMatch::new(&graph.dump, &filter);
            let rows = duplicate_rows(&duplicates, &mask, &gone, &text, superseded)?;
            let owners = owners
                .map(|(owners, gone)| match_owners(&duplicates, owners, &gone, &mask, &filter));
            FilterResult::Duplicates {
                source: duplicates,
                rows: Arc::new(rows),
                owners,
            }
        }
        FilterWork::Roots { graph, groups } => {
            let mask = type_mask(&graph.dump.type_names, &filter);
            FilterResult::Roots(Arc::new(match_groups(
                &graph.dump,
                &groups,
                &mask,
                superseded,
            )?))
        }
        FilterWork::Types {
            graph,
            types,
            order,
            gone,
            injector,
        } => {
            let names = &graph.dump.type_names;
            let sorted = order.iter().filter_map(|&p| match types.get(p as usize) {
                Some(t) => Some((t.type_index.raw(), &*names[t.type_index.index()])),
                None => {
                    let j = p as usize - types.len();
                    let name = gone.get(j)?;
                    Some(((names.len() + j) as u32, &**name))
                }
            });
            inject_types(&injector, sorted, &filter);
            FilterResult::Types
        }
    };
    Some(Filtered {
        pane,
        generation,
        result,
    })
}

/// A duplicate set matches a filter by the text its members hold too:
/// the list shows that text beside the type (`java.lang.String
/// "value-196"`), so a user filters by it. Every word of the filter must
/// be in the text, ignoring case.
struct TextMatch<'a> {
    dump: &'a Model,
    words: Vec<String>,
}

impl<'a> TextMatch<'a> {
    fn new(dump: &'a Model, filter: &TypeFilter) -> TextMatch<'a> {
        let words = filter
            .fuzzy
            .split_whitespace()
            .map(str::to_lowercase)
            .collect();
        TextMatch { dump, words }
    }

    /// Whether the text of `member` (as much as a row shows) holds every
    /// word; never without words or text.
    fn matches(&self, member: Option<&u32>) -> bool {
        if self.words.is_empty() {
            return false;
        }
        let max = heaptui_core::model::ROW_PREVIEW_CHARS;
        member
            .and_then(|&m| {
                self.dump
                    .text_preview(heaptui_core::model::ObjectIdx(m), max)
            })
            .is_some_and(|t| {
                let t = t.to_lowercase();
                self.words.iter().all(|w| t.contains(w.as_str()))
            })
    }
}

/// The rows of the Duplicates pane for a type mask: sets (in set order,
/// so a set's row can be found by binary search) whose type passes `mask`
/// or whose text `text` matches, the gone sets whose `gone` mask is set,
/// then possible duplicates.
fn duplicate_rows(
    d: &Duplicates,
    mask: &[bool],
    gone: &[bool],
    text: &TextMatch,
    superseded: &dyn Fn() -> bool,
) -> Option<Vec<DupRow>> {
    let mut rows = Vec::new();
    for (i, s) in d.numbered() {
        if (i as usize).is_multiple_of(CHECK_EVERY) && superseded() {
            return None;
        }
        if mask[s.type_index as usize] || text.matches(d.members(i).first()) {
            rows.push(DupRow::Set(i));
        }
    }
    rows.extend(
        (0..gone.len() as u32)
            .filter(|&j| gone[j as usize])
            .map(DupRow::Gone),
    );
    for (i, p) in d.possible.iter().enumerate() {
        if mask[p.type_index as usize] {
            rows.push(DupRow::Possible(i as u32));
        }
    }
    Some(rows)
}

/// The owners whose path or sets hold a type the filter lets through
/// (`mask`), and the gone owners with such a type on their path. O(owners'
/// paths and sets).
fn match_owners(
    d: &Duplicates,
    owners: Arc<Owners>,
    gone: &[String],
    mask: &[bool],
    filter: &TypeFilter,
) -> OwnersMatch {
    let shown = (0..owners.owners.len() as u32)
        .filter(|&i| {
            let o = &owners.owners[i as usize];
            o.path.iter().any(|t| mask[t.index()])
                || o.sets.iter().any(|s| {
                    d.sets
                        .get(s.set as usize)
                        .is_some_and(|s| mask[s.type_index as usize])
                })
        })
        .collect();
    let mut names: Vec<Box<str>> = Vec::new();
    let mut of: Vec<u32> = Vec::new();
    for (j, path) in gone.iter().enumerate() {
        for name in path.split(" / ") {
            names.push(name.into());
            of.push(j as u32);
        }
    }
    let mut gone: Vec<u32> = type_mask(&names, filter)
        .iter()
        .zip(&of)
        .filter(|(&m, _)| m)
        .map(|(_, &j)| j)
        .collect();
    gone.dedup();
    OwnersMatch {
        owners,
        shown: Arc::new(shown),
        gone: Arc::new(gone),
    }
}

/// The event loop's handle on the filter thread.
pub struct FilterThread {
    tx: Sender<FilterRequest>,
    /// Per pane, the newest generation sent.
    latest: Arc<[AtomicU64; PaneId::COUNT]>,
}

impl FilterThread {
    /// Starts the `heaptui-filter` thread; it ends when the handle is dropped.
    pub fn spawn(results: Sender<Msg>) -> std::io::Result<FilterThread> {
        let (tx, rx) = unbounded::<FilterRequest>();
        let latest: Arc<[AtomicU64; PaneId::COUNT]> = Arc::new(Default::default());
        let seen = latest.clone();
        std::thread::Builder::new()
            .name("heaptui-filter".into())
            .spawn(move || {
                for req in rx {
                    let (pane, generation) = (req.pane.index(), req.generation);
                    let superseded = || seen[pane].load(Ordering::Relaxed) != generation;
                    if superseded() {
                        continue;
                    }
                    if let Some(done) = compute(req, &superseded) {
                        if !superseded() && results.send(Msg::Filtered(done)).is_err() {
                            return;
                        }
                    }
                }
            })?;
        Ok(FilterThread { tx, latest })
    }

    /// Queues `req`, superseding the pane's older requests.
    pub fn send(&self, req: FilterRequest) {
        self.latest[req.pane.index()].store(req.generation, Ordering::Relaxed);
        let _ = self.tx.send(req);
    }
}
