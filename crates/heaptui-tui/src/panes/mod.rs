//! One file per pane; each pane owns its state (private fields), its keys,
//! its drawing, its place in the history, the stages and job results it
//! takes and the jumps it lands, all through the [`Pane`] trait; it reads
//! shared data through a [`Ctx`] and answers with [`Intent`]s that the
//! router (`app`) carries out. Panes import the data modules (loading,
//! filtering, msg, worker jobs), the key table and the formatting helpers;
//! never `app` or `ui`. [`Panes`] holds every pane's state, expanded from
//! the registry in `pane_id` (one line per pane), so the router reaches a
//! pane by its [`PaneId`].

pub mod dominators;
pub mod duplicates;
pub mod inspector;
pub mod instances;
pub mod overview;
pub mod paths;
pub mod roots;
pub mod suspects;
pub mod table;
pub mod types;
pub mod what_if;

use ratatui::layout::Rect;
use ratatui::Frame;

use super::filtering::{FilterResult, FilterWork};
use super::keys::{Cmd, Mode};
use super::loading::{Arrived, Loading, Totals};
use super::msg::Msg;
use super::theme::Theme;
use super::worker::Job;
use heaptui_core::analysis::TypeFilter;
use heaptui_core::model::ObjectIdx;

pub use super::pane_id::PaneId;

/// Expands the pane registry into [`Panes`]: one field per pane, reached
/// by [`PaneId`] (the fields are private: the router reaches a pane only
/// through the [`Pane`] trait; tests read a pane through its accessor).
macro_rules! define_panes {
    ($($id:ident => $field:ident: $state:ty, mode $mode:ident, $title:literal, tab $tab:literal, short $short:literal, help $help:literal;)*) => {
        /// Every pane's state, one field per line of the registry.
        #[derive(Default)]
        pub struct Panes {
            $($field: $state,)*
        }

        impl Panes {
            $(
                #[doc = concat!("The ", $title, " pane's state.")]
                pub fn $field(&self) -> &$state {
                    &self.$field
                }
            )*

            /// The state of pane `id`, as a [`Pane`].
            pub fn get(&self, id: PaneId) -> &dyn Pane {
                match id {
                    $(PaneId::$id => &self.$field,)*
                }
            }

            /// The state of pane `id`, as a [`Pane`] to change.
            pub fn get_mut(&mut self, id: PaneId) -> &mut dyn Pane {
                match id {
                    $(PaneId::$id => &mut self.$field,)*
                }
            }

            /// The key mode of pane `id` in its current state.
            pub fn mode(&self, id: PaneId) -> Mode {
                let base = match id {
                    $(PaneId::$id => Mode::$mode,)*
                };
                self.get(id).mode(base)
            }
        }
    };
}

super::pane_id::pane_registry!(define_panes);

/// What a pane may read besides its own state.
pub struct Ctx<'a> {
    /// The dump's name as the title shows it.
    pub name: &'a str,
    /// Colours and glyphs.
    pub theme: &'a Theme,
    /// How far the analysis got, with its results.
    pub loading: &'a Loading,
    /// Whole-heap sums, computed once.
    pub totals: &'a Totals,
    /// The frame's pane body (borders included).
    pub body: Rect,
    /// The pane's filter text.
    pub filter: &'a str,
    /// Whether the pane waits for its filter's result.
    pub filtering: bool,
}

impl Ctx<'_> {
    /// Rows of a list in the pane body (inside borders, below the header).
    pub fn rows(&self) -> usize {
        self.body.height.saturating_sub(3) as usize
    }
}

/// What a pane asks of the router.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Intent {
    /// Remember where the user was before this key (a history step).
    History,
    /// Go to a place in another pane (the pane that takes it decides
    /// whether it can: [`Pane::prepare_jump`]).
    Jump(Jump),
    /// Open the inspector on an object.
    Inspect(ObjectIdx),
    /// Run a job (inline on small heaps, else in the background).
    Request {
        /// The work.
        job: Job,
        /// What the status line calls it while it runs.
        label: String,
    },
    /// A line for the status bar.
    Status(String),
    /// Open the input line on the pane's exclude pattern(s) (the answer
    /// comes to [`Pane::edited`]).
    EditExclude {
        /// The text to start from.
        text: String,
        /// What the input line says before it.
        prompt: &'static str,
    },
    /// Apply the pane's filter again (its rows come in a new order, or
    /// new data arrived).
    Refilter,
}

impl Intent {
    /// A status-bar line.
    pub fn status(text: impl Into<String>) -> Intent {
        Intent::Status(text.into())
    }

    /// [`Intent::Refilter`] when `refilter`, else nothing.
    pub fn refilter_if(refilter: bool) -> Vec<Intent> {
        match refilter {
            true => vec![Intent::Refilter],
            false => Vec::new(),
        }
    }
}

/// How a pane takes a new filter text.
pub enum FilterPlan {
    /// The pane's data is not there yet: nothing changes.
    NotReady,
    /// Applied at once (no filter, or nothing new to compute).
    Applied,
    /// Applied at once; no older result may be installed any more.
    Cleared,
    /// To be computed off the UI thread; the result comes to
    /// [`Pane::filtered`].
    Work(FilterWork),
}

/// What a tick found in a pane that ranks on other threads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ticked {
    /// The rows changed: selections are fitted again.
    pub changed: bool,
    /// Still ranking, or a new ranking is ready: the frame is to be drawn.
    pub busy: bool,
}

impl Ticked {
    /// Changed or busy in either.
    pub fn or(self, other: Ticked) -> Ticked {
        Ticked {
            changed: self.changed || other.changed,
            busy: self.busy || other.busy,
        }
    }
}

/// Where the user was in a pane, as the pane saved it for the history
/// ([`Pane::save`]): a few numbers (selections, depths), never rows.
pub type Saved = Box<dyn std::any::Any>;

/// What a [`Jump`] carries: a place that only the pane it goes to reads
/// (as only a pane reads what it [`Pane::save`]d). Any value that is
/// `Clone`, `Eq` and `Debug` is one; the pane that takes jumps declares its place type beside a
/// constructor of the jump (`dominators::reveal`, `duplicates::show_set`),
/// so a pane that takes a new kind of jump adds nothing here.
pub trait Place: std::any::Any + std::fmt::Debug {
    /// As `Any`, for the target pane to read its own type back.
    fn as_any(&self) -> &dyn std::any::Any;
    /// Whether `other` is the same place (same type, equal value).
    fn same(&self, other: &dyn Place) -> bool;
    /// A boxed copy.
    fn boxed(&self) -> Box<dyn Place>;
}

impl<T: std::any::Any + std::fmt::Debug + Clone + Eq> Place for T {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn same(&self, other: &dyn Place) -> bool {
        other.as_any().downcast_ref::<T>() == Some(self)
    }

    fn boxed(&self) -> Box<dyn Place> {
        Box::new(self.clone())
    }
}

/// A move from one pane (or the inspector) to a place in another: the
/// pane that takes it and the place there. The router asks that pane
/// ([`Pane::prepare_jump`], [`Pane::jump`]) and reads nothing else of it.
#[derive(Debug)]
pub struct Jump {
    pane: PaneId,
    place: Box<dyn Place>,
}

impl Jump {
    /// A jump to `place` in pane `pane` (the pane's own constructor calls
    /// this with its place type).
    pub fn to(pane: PaneId, place: impl Place) -> Jump {
        Jump {
            pane,
            place: Box::new(place),
        }
    }

    /// The pane that takes the jump.
    pub fn pane(&self) -> PaneId {
        self.pane
    }

    /// The place, when it is a `P` (what the target pane reads).
    pub fn place<P: Place>(&self) -> Option<&P> {
        self.place.as_any().downcast_ref()
    }
}

impl Clone for Jump {
    fn clone(&self) -> Jump {
        Jump {
            pane: self.pane,
            place: self.place.boxed(),
        }
    }
}

impl PartialEq for Jump {
    fn eq(&self, other: &Jump) -> bool {
        self.pane == other.pane && self.place.same(&*other.place)
    }
}

impl Eq for Jump {}

/// Whether a pane takes a jump now ([`Pane::prepare_jump`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Landing {
    /// Not now: the status line says why (or nothing).
    Refused(Option<String>),
    /// Yes; `drop_filter`: the pane's filter would hide the target, so the
    /// router clears it first.
    Taken {
        /// Whether the pane's filter must be cleared first.
        drop_filter: bool,
    },
}

/// A pane: its keys, its drawing, and what the router asks of it.
pub trait Pane {
    /// A command of the pane's mode (or a global one the router passes on:
    /// Open, Expand, Collapse, ToggleExpand and the pane's own keys).
    fn key(&mut self, cmd: Cmd, ctx: &Ctx) -> Vec<Intent>;

    /// The key mode while the pane has the focus: `base` (the registry's),
    /// or a mode of a list inside the pane.
    fn mode(&self, base: Mode) -> Mode {
        base
    }

    /// Moves the selection by `delta` rows (arrows, pages, wheel).
    fn step(&mut self, delta: isize, ctx: &Ctx) -> Vec<Intent>;

    /// Draws the pane into `area`.
    fn draw(&self, ctx: &Ctx, area: Rect, f: &mut Frame);

    /// The object that `i` inspects.
    fn selected_object(&self, ctx: &Ctx) -> Option<ObjectIdx>;

    /// The full type name of the selected row (`t`): its object's type.
    fn full_name(&self, ctx: &Ctx) -> Option<String> {
        let (object, graph) = (self.selected_object(ctx)?, ctx.loading.graph()?);
        Some(graph.dump.type_name(object).to_string())
    }

    /// Keeps the selection visible in the body of `ctx` (resize, new data).
    fn fit(&mut self, _ctx: &Ctx) {}

    /// Backspace inside the pane before the history (closing a split);
    /// true when taken.
    fn back(&mut self) -> bool {
        false
    }

    /// The filter text changed.
    fn filter(&mut self, _filter: &TypeFilter, _ctx: &Ctx) -> FilterPlan {
        FilterPlan::NotReady
    }

    /// A filter result for this pane arrived (and is the awaited one).
    fn filtered(&mut self, _result: FilterResult, _ctx: &Ctx) {}

    /// Once per frame: advances what the pane ranks on other threads.
    fn tick(&mut self) -> Ticked {
        Ticked::default()
    }

    /// Lets that ranking finish (settled runs: tests, the tape).
    fn settle(&mut self) {}

    /// Where the user is in the pane, for the history (O(1)).
    fn save(&self) -> Saved {
        Box::new(())
    }

    /// Goes back to a place [`Pane::save`] gave.
    fn restore(&mut self, _saved: &Saved, _ctx: &Ctx) {}

    /// A stage of the analysis arrived (its data is in `ctx.loading`):
    /// what the pane asks for then, [`Intent::Refilter`] (its filter
    /// applied again) and [`Intent::Request`] (a job, as its view of the
    /// new data) only; other intents are ignored.
    fn arrived(&mut self, _what: Arrived, _ctx: &Ctx) -> Vec<Intent> {
        Vec::new()
    }

    /// A job was asked for (by this pane or another): the pane may say its
    /// answer is coming (the inspector, for a what-if on its object).
    fn requested(&mut self, _job: &Job) {}

    /// A job's result: taken (with what the pane asks next), or handed
    /// back when it is not this pane's.
    fn receive(&mut self, msg: Msg, _ctx: &Ctx) -> Result<Vec<Intent>, Msg> {
        Err(msg)
    }

    /// Whether the pane takes `jump` now (the router then records the
    /// history, focuses the pane and calls [`Pane::jump`]).
    fn prepare_jump(&self, _jump: &Jump, _ctx: &Ctx) -> Landing {
        Landing::Refused(None)
    }

    /// Goes to the place `jump` names; `dropped_filter`: the router cleared
    /// the pane's filter for it. Answers with jobs to run.
    fn jump(&mut self, _jump: Jump, _dropped_filter: bool, _ctx: &Ctx) -> Vec<Intent> {
        Vec::new()
    }

    /// Whether `/` filters this pane.
    fn filterable(&self) -> bool {
        true
    }

    /// The text the pane asked to edit ([`Intent::EditExclude`]) was
    /// accepted.
    fn edited(&mut self, _text: String, _ctx: &Ctx) -> Vec<Intent> {
        Vec::new()
    }

    /// For a mouse click: the selected row, the first visible row, and the
    /// lines between the body's top and the first row. `None`: no list.
    fn click_geometry(&self) -> Option<(usize, usize, u16)> {
        None
    }

    /// The footer label of a key in the pane's current state (`Some("")`
    /// hides it); `None`: the key table's.
    fn key_label(&self, _cmd: Cmd) -> Option<&'static str> {
        None
    }

    /// A click on the list's header row at cell `x` (inside the border):
    /// sorts by that column when it is sortable.
    fn click_header(&mut self, _x: usize, _ctx: &Ctx) -> Vec<Intent> {
        Vec::new()
    }
}

/// The line a list shows instead of rows: that the filter is still being
/// applied, that it matched nothing (`no roots match `Foo``), or, with no
/// filter, `unfiltered` (why the data set itself is empty). Every list
/// phrases it the same way.
/// Draws a list pane's frame titled `title` (cut to the width with an
/// ellipsis) and returns the area inside it.
pub fn framed(f: &mut Frame, area: Rect, title: &str, theme: &Theme) -> Rect {
    let width = area.width.saturating_sub(2) as usize;
    let block = ratatui::widgets::Block::bordered()
        .border_set(theme.border())
        .title(ratatui::text::Line::styled(
            super::fmt::fit(title, width, theme),
            theme.header(),
        ));
    let inner = block.inner(area);
    f.render_widget(block, area);
    inner
}

/// The note an empty list shows after its noun: filtering, `unfiltered` without a filter, or that nothing matches the filter.
pub fn empty_message(ctx: &Ctx, busy: bool, noun: &str, unfiltered: &str) -> String {
    let filter = ctx.filter.trim();
    if busy || ctx.filtering {
        format!(" (filtering{})", ctx.theme.ellipsis())
    } else if filter.is_empty() {
        format!(" ({unfiltered})")
    } else {
        format!(" (no {noun} match `{filter}`; Esc clears the filter)")
    }
}

pub use table::ListState;

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    struct Here(u32);

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    struct There(u32);

    #[test]
    fn a_jump_gives_its_place_back_only_as_its_own_type() {
        let jump = Jump::to(PaneId::Roots, Here(7));
        assert_eq!(jump.pane(), PaneId::Roots);
        assert_eq!(jump.place::<Here>(), Some(&Here(7)));
        assert_eq!(jump.place::<There>(), None);
        let copy = jump.clone();
        assert_eq!(copy.place::<Here>(), Some(&Here(7)));
        assert_eq!(copy, jump);
    }

    #[test]
    fn jumps_are_equal_when_pane_place_type_and_value_are() {
        let jump = Jump::to(PaneId::Roots, Here(7));
        assert_ne!(jump, Jump::to(PaneId::Roots, Here(8)));
        assert_ne!(jump, Jump::to(PaneId::Roots, There(7)));
        assert_ne!(jump, Jump::to(PaneId::Types, Here(7)));
        assert_eq!(jump, Jump::to(PaneId::Roots, Here(7)));
    }
}
