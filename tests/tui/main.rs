//! The UI's tests, one binary: journeys through the panes on the demo heap
//! and on small crafted heaps, drawn on a test backend; insta snapshots in
//! tests/tui/snapshots/. One module per subject;
//! the helpers they share are heaptui-testkit's (a dev-dependency).

mod columns;
mod compare;
mod filters;
mod journeys;
mod lists;
mod long_names;
mod native;
mod owners;
mod paths;
mod tape;
mod tree;
mod update;
mod what_if;
mod widgets;
