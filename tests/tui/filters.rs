//! The `/` filter runs off the UI thread: a key only queues a request (one
//! per pane, the latest), the result is installed when it arrives, and a
//! result that a newer filter superseded is dropped. The App side is driven
//! by hand here: `update` without draining stands for "the filter thread has
//! not answered yet", `run_jobs` for "it has".

use heaptui_testkit::tui as tui_support;

use std::time::Duration;

use crossterm::event::KeyCode;
use heaptui_testkit::tui::run_jobs;
use heaptui_tui::app::{update, Action, App, Effect, PaneId};
use heaptui_tui::filtering::{compute, FilterRequest, FilterThread};
use heaptui_tui::worker::Msg;
use tui_support::*;

/// Types into the filter line without letting the filter thread answer.
fn type_only(a: &mut App, text: &str) {
    for c in text.chars() {
        update(a, Action::Key(ch(c)));
    }
}

/// The filter requests the App awaits, as the event loop hands them over.
fn take_requests(a: &mut App) -> Vec<FilterRequest> {
    a.awaited_filters()
}

/// Computes requests (as the filter thread would) and delivers the results.
fn deliver(a: &mut App, requests: Vec<FilterRequest>) {
    for r in requests {
        let f = compute(r, &|| false).expect("not superseded");
        update(a, Action::Worker(Msg::Filtered(f)));
    }
    update(a, Action::Settle);
    update(a, Action::Tick);
}

fn assert_shows(a: &App, yes: &[&str], no: &[&str]) {
    let s = screen(a);
    for n in yes {
        assert!(s.contains(n), "{n:?} missing:\n{s}");
    }
    for n in no {
        assert!(!s.contains(n), "{n:?} shown:\n{s}");
    }
}

#[test]
fn a_tree_filter_result_arrives_while_typing() {
    let mut a = app(80, 24);
    keys(&mut a, "2 /");
    type_only(&mut a, "'orderline");
    // Ten keys, one request: each key replaced the one before.
    assert_eq!(a.awaited_filters().len(), 1);
    assert!(a.filtering());
    // Until the result comes the tree is as it was, and the line says why.
    assert_shows(
        &a,
        &["/ filter Dominators: 'orderline_  filtering…", "ImageCache"],
        &[],
    );
    run_jobs(&mut a);
    assert!(!a.filtering());
    assert_shows(&a, &["FieldOps.UI.MainForm"], &["ImageCache", "filtering…"]);
    // Accepting an unchanged filter asks for nothing more.
    let effects = update(&mut a, Action::Key(key(KeyCode::Enter)));
    assert!(!effects.iter().any(|e| matches!(e, Effect::Filter(_))) && !a.filtering());
    assert_shows(&a, &["filter: 'orderline"], &["ImageCache"]);
}

#[test]
fn the_status_line_says_filtering_after_enter() {
    let mut a = app(80, 24);
    keys(&mut a, "4 /");
    type_only(&mut a, "'byte");
    update(&mut a, Action::Key(key(KeyCode::Enter)));
    assert_shows(&a, &["filter: 'byte (filtering…)"], &[]);
    run_jobs(&mut a);
    assert_shows(
        &a,
        &["filter: 'byte", "System.Byte[]"],
        &["filtering…", "CachedImage"],
    );
}

/// For one pane: filter `first`, which the thread takes; the user then
/// types `second` before the first result comes. The first result must not
/// be applied, neither before nor after the second.
fn superseded(pane_key: &str, first: &str, second: &str, only_first: &str, only_second: &str) {
    let mut a = app(80, 24);
    keys(&mut a, &format!("{pane_key} /"));
    let pane = a.pane();
    type_only(&mut a, first);
    let stale = take_requests(&mut a);
    assert_eq!(stale.len(), 1);
    let stale_gen = stale[0].generation;
    // Clear the line and type the newer filter.
    for _ in 0..first.chars().count() {
        update(&mut a, Action::Key(key(KeyCode::Backspace)));
    }
    type_only(&mut a, second);
    let before = screen(&a);
    let fresh = take_requests(&mut a);
    assert_eq!(fresh.len(), 1);
    assert!(fresh[0].generation > stale_gen);

    // The stale result arrives first: dropped, nothing changes.
    let stale_result = compute(stale.into_iter().next().unwrap(), &|| false).unwrap();
    update(&mut a, Action::Worker(Msg::Filtered(stale_result.clone())));
    assert_eq!(screen(&a), before, "a superseded result changed the view");
    assert!(a.filtering(), "still waiting for the newer result");

    deliver(&mut a, fresh);
    assert!(!a.filtering());
    assert_shows(&a, &[only_second], &[only_first]);
    assert_eq!(a.filter(pane), second);

    // And it stays dropped when it comes late.
    let after = screen(&a);
    update(&mut a, Action::Worker(Msg::Filtered(stale_result)));
    assert_eq!(screen(&a), after);
}

#[test]
fn a_superseded_tree_filter_is_not_applied() {
    superseded(
        "2",
        "'imagecache",
        "'orderline",
        "FieldOps.Imaging.ImageCache",
        "FieldOps.UI.MainForm",
    );
}

#[test]
fn a_superseded_duplicates_filter_is_not_applied() {
    superseded("4", "'cachedimage", "'byte", "CachedImage", "System.Byte[]");
}

#[test]
fn a_superseded_roots_filter_is_not_applied() {
    // Groups without a matching record are hidden.
    superseded(
        "5",
        "'filestream",
        "'imagecache",
        "finalizer",
        "static variable",
    );
}

#[test]
fn a_superseded_types_filter_is_not_applied() {
    // Structural tokens change the candidates: arrays, then generics.
    superseded("3", "[]", "<", "System.Byte[]", "List<");
}

#[test]
fn clearing_a_filter_drops_its_pending_result() {
    let mut a = app(80, 24);
    keys(&mut a, "2 /");
    type_only(&mut a, "'orderline");
    let stale = take_requests(&mut a);
    update(&mut a, Action::Key(key(KeyCode::Esc)));
    assert!(!a.filtering() && a.filter(PaneId::Dominators).is_empty());
    for r in stale {
        let f = compute(r, &|| false).unwrap();
        update(&mut a, Action::Worker(Msg::Filtered(f)));
    }
    assert_shows(&a, &["ImageCache", "MainForm"], &[]);
}

#[test]
fn a_superseded_computation_gives_up() {
    let mut a = app(80, 24);
    keys(&mut a, "4 /");
    type_only(&mut a, "'byte");
    let r = take_requests(&mut a).pop().unwrap();
    assert!(compute(r, &|| true).is_none());
}

#[test]
fn the_filter_thread_answers_the_latest_request() {
    let mut a = app(80, 24);
    keys(&mut a, "2 /");
    let (tx, rx) = crossbeam_channel::bounded::<Msg>(16);
    let thread = FilterThread::spawn(tx).unwrap();
    // A burst of keys, each request sent as the loop would send it.
    let mut last = 0;
    for c in "'orderline".chars() {
        type_only(&mut a, &c.to_string());
        for r in take_requests(&mut a) {
            last = r.generation;
            thread.send(r);
        }
    }
    // Older results may come (computed before they were superseded), in
    // order; the newest always comes, and then nothing more.
    let mut seen = Vec::new();
    loop {
        let Msg::Filtered(f) = rx.recv_timeout(Duration::from_secs(30)).unwrap() else {
            panic!("only filter results");
        };
        seen.push(f.generation);
        update(&mut a, Action::Worker(Msg::Filtered(f)));
        if *seen.last().unwrap() == last {
            break;
        }
    }
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
    assert!(!a.filtering());
    assert_shows(&a, &["FieldOps.UI.MainForm"], &["ImageCache"]);
    drop(thread);
    assert!(rx.recv_timeout(Duration::from_secs(5)).is_err());
}

#[test]
fn a_filter_that_matches_nothing_says_so_in_every_list() {
    for (pane, noun) in [
        ("2", "objects"),
        ("3", "types"),
        ("4", "duplicate sets"),
        ("5", "roots"),
    ] {
        let mut a = app(80, 24);
        keys(&mut a, &format!("{pane} / \"zqzqz\" Enter"));
        let message = format!(" (no {noun} match `zqzqz`; Esc clears the filter)");
        assert_shows(&a, &[&message], &["filtering…"]);
        // While a longer filter is computed the list says so, not "no match".
        keys(&mut a, "/");
        type_only(&mut a, "q");
        assert_shows(&a, &[" (filtering…)"], &[&format!("no {noun} match")]);
        run_jobs(&mut a);
        update(&mut a, Action::Settle);
        update(&mut a, Action::Tick);
        assert_shows(&a, &["match `zqzqzq`"], &["(filtering…)"]);
        keys(&mut a, "Enter Esc");
        assert_shows(&a, &[], &["match `", "(filtering…)"]);
    }
}

#[test]
fn an_empty_list_says_why_without_a_filter() {
    // No root records: nothing is reachable, so there are no dominators
    // and no duplicates either.
    let mut a = text_app("t 1 T\no 1 1 8\no 2 1 8\n", 80, 24);
    keys(&mut a, "5");
    assert_shows(&a, &[" (the dump has no root records)"], &[]);
    keys(&mut a, "2");
    assert_shows(&a, &[" (no object is reachable from a strong root)"], &[]);
    keys(&mut a, "4");
    assert_shows(&a, &[" (no duplicate sets)"], &[]);
}
