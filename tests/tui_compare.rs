//! Comparing snapshots in the UI (SPEC §3 "Comparison", §2.5, §2.6):
//! journeys through the real event loop over the bundled demo series
//! (analysed synchronously, baselines included), and the Δ rows of the
//! Dominators pane checked against the library's comparison.

mod tui_support;

use heaptui::analysis::compare::{compare, Comparison, SnapshotSummary};
use heaptui::analysis::Analysis;
use heaptui::graph::duplicates::DuplicateOptions;
use heaptui::tui::app::{App, PaneId};
use heaptui::tui::loading::Comparing;
use heaptui::tui::panes::dominators::Item;
use heaptui::tui::{demo_series_app, loaded_series_app, DEMO_SERIES};
use insta::assert_snapshot;
use tui_support::*;

fn series(w: u16, h: u16) -> App {
    demo_series_app(w, h, COLOR)
}

fn shows(a: &App, needles: &[&str]) -> String {
    let s = screen(a);
    for n in needles {
        assert!(s.contains(n), "{n:?} missing:\n{s}");
    }
    s
}

fn hides(a: &App, needles: &[&str]) -> String {
    let s = screen(a);
    for n in needles {
        assert!(!s.contains(n), "{n:?} shown:\n{s}");
    }
    s
}

/// The demo series compared by the library alone (not through the UI).
fn library_comparison() -> Comparison {
    let summaries: Vec<SnapshotSummary> = DEMO_SERIES
        .iter()
        .map(|(n, t)| {
            let a = Analysis::from_bytes(n, t.as_bytes(), &DuplicateOptions::default()).unwrap();
            SnapshotSummary::of(&a)
        })
        .collect();
    compare(&summaries)
}

/// `+1.50 KiB` as the UI writes a growth.
fn plus(bytes: i128) -> String {
    assert!(bytes > 0);
    format!("+{}", heaptui::report::size(bytes as u64))
}

/// The body rows of the screen (below the header line of the pane).
fn body_rows(a: &App) -> Vec<String> {
    screen(a).lines().skip(4).map(str::to_string).collect()
}

#[test]
fn the_comparison_arrives_after_the_newest_analysis() {
    let a = series(80, 24);
    let Comparing::Done(c) = a.loading.comparing() else {
        panic!("no comparison: {:?}", a.loading.comparing());
    };
    assert_eq!(c.snapshots(), 3);
    assert_eq!(
        c.file_names(),
        [
            "demo-series.1.txt",
            "demo-series.2.txt",
            "demo-series.3.txt"
        ]
    );
    shows(
        &a,
        &[
            "demo-series.3.txt",
            "vs 2 older",
            "compared with 2 older",
            "6 Leaks",
        ],
    );
}

#[test]
fn growth_sort_puts_the_leaking_log_first_with_its_figures() {
    let mut a = series(80, 24);
    keys(&mut a, "2 s");
    let lib = library_comparison();
    let log = (1..lib.paths.len() as u32)
        .find(|&r| lib.path_names(r) == ["MyApp.Diagnostics.RequestLog"])
        .expect("the log's top-level row");
    assert!(lib.paths.grows_steadily(log));
    let growth = plus(lib.paths.growth(log));
    let rows = body_rows(&a);
    assert!(
        rows[0].contains("RequestLog") && rows[0].contains(&format!("{growth}↑")),
        "first row {:?}\n{}",
        rows[0],
        screen(&a)
    );
    // The pool grew more from the oldest to the newest, but not in every
    // round: it comes after the steady rows.
    assert!(rows[1].contains("ThumbnailPool"), "{}", screen(&a));
    assert_snapshot!("growth_sort", screen(&a));
    // Down the log: every row on the way grows steadily, with the
    // library's figures.
    keys(&mut a, "g Right Right Right Right Right");
    let entries = (1..lib.paths.len() as u32)
        .find(|&r| {
            lib.path_names(r)
                == [
                    "MyApp.Diagnostics.RequestLog",
                    "MyApp.Diagnostics.RequestLogEntry[]",
                    "MyApp.Diagnostics.RequestLogEntry",
                ]
        })
        .unwrap();
    let s = shows(
        &a,
        &["120 × M", &format!("{}↑", plus(lib.paths.growth(entries)))],
    );
    assert!(s.contains("by Δ"), "{s}");
    // Back to the retained order.
    keys(&mut a, "s");
    assert!(body_rows(&a)[0].contains("ThumbnailPool"), "{}", screen(&a));
}

#[test]
fn the_steady_key_shows_only_steadily_growing_rows() {
    let mut a = series(80, 24);
    keys(&mut a, "2 t");
    let s = hides(&a, &["ThumbnailPool", "MyApp.Orders.Order", "Cache"]);
    assert!(s.contains("steady growth only"), "{s}");
    let rows: Vec<String> = body_rows(&a)
        .into_iter()
        .filter(|r| r.contains('▸') || r.contains('▾'))
        .collect();
    assert_eq!(rows.len(), 1, "{s}");
    assert!(
        rows[0].contains("RequestLog") && rows[0].contains('↑'),
        "{s}"
    );
    assert_snapshot!("steady_only", s);
    // Expanding keeps to the growing rows; t again shows everything.
    keys(&mut a, "Right Right");
    shows(&a, &["RequestLogEntry[]"]);
    keys(&mut a, "t");
    shows(&a, &["ThumbnailPool", "t: steady only"]);
}

#[test]
fn without_a_comparison_the_keys_say_why() {
    let mut a = app(80, 24);
    keys(&mut a, "2 s");
    shows(&a, &["no comparison: open several snapshots"]);
    hides(&a, &["Δ retained"]);
}

#[test]
fn the_suspects_pane_lists_the_growing_row_first() {
    let mut a = series(80, 24);
    keys(&mut a, "6");
    assert_eq!(a.pane, PaneId::Suspects);
    let s = shows(
        &a,
        &[
            "Leak suspects",
            "growth",
            "object",
            "Accumulation point: MyApp.Diagnostics.RequestLogEntry[]",
            "40 → 80 → 120",
        ],
    );
    assert!(selected_row(&a).contains("growth"), "{s}");
    assert_snapshot!("suspects", s);
    // The next suspect: the pool, an object whose row grew but not steadily.
    keys(&mut a, "Down");
    let row = selected_row(&a);
    assert!(row.contains("object") && row.contains("+"), "{row}");
    shows(&a, &["ThumbnailPool"]);
}

#[test]
fn enter_on_a_suspect_opens_its_accumulation_point_in_the_dominators() {
    let mut a = series(80, 24);
    keys(&mut a, "6 Enter");
    assert_eq!(a.pane, PaneId::Dominators);
    let row = selected_row(&a);
    assert!(row.contains("RequestLogEntry[]"), "{row}\n{}", screen(&a));
    assert!(row.contains('↑'), "the point's row grows steadily: {row}");
    // The point is the one the suspect names.
    let point = a.panes.suspects_pane.rows[0].point;
    let d = a.panes.dominators.as_ref().unwrap();
    let t = d.tree();
    let shown = match &t.nodes[t.selected as usize].item {
        Item::Instance(o) => *o,
        Item::Group(g) => g.members[0],
        other => panic!("{other:?}"),
    };
    assert_eq!(shown, point);
    assert_snapshot!("suspect_to_dominators", screen(&a));
    // Back returns to the suspects.
    keys(&mut a, "Bksp");
    assert_eq!(a.pane, PaneId::Suspects);
}

#[test]
fn wide_comparison_screens() {
    let mut a = series(200, 50);
    keys(&mut a, "2 s g Right Right Right");
    shows(&a, &["Δ count", "+80"]);
    assert_snapshot!("wide_growth_200x50", screen(&a));
    keys(&mut a, "6");
    assert_snapshot!("wide_suspects_200x50", screen(&a));
}

#[test]
fn every_comparison_screen_draws_small() {
    for (w, h) in [(60, 20), (40, 12)] {
        let mut a = series(w, h);
        for script in ["2 s t", "6 Down Enter"] {
            keys(&mut a, script);
            let _ = screen(&a);
        }
    }
}

const SEED002: [(&str, &[u8]); 2] = [
    (
        "seed002_before.txt",
        include_bytes!("../fixtures/seed002_before.txt"),
    ),
    (
        "seed002_after.txt",
        include_bytes!("../fixtures/seed002_after.txt"),
    ),
];

#[test]
fn seed_002_no_dominator_row_changes_and_only_three_types_shrink() {
    let mut a = loaded_series_app(&SEED002, 80, 24, COLOR);
    let c = a.loading.compared().expect("compared").clone();
    keys(&mut a, "2 Right Right Right Right Right Right Right Right");
    // Every surviving id moved, yet every row is the same row: Δ 0.
    let s = screen(&a);
    let tree_rows: Vec<&str> = s
        .lines()
        .filter(|l| l.contains("App.") || l.contains("System."))
        .collect();
    assert!(tree_rows.len() >= 5, "{s}");
    for r in &tree_rows {
        assert!(r.trim_end_matches(['│', ' ']).ends_with("0 B"), "{r}\n{s}");
    }
    assert!(!s.contains("(gone)") && !s.contains('−'), "{s}");
    // Types: only the three collected objects' types shrink.
    let shrunk: Vec<(String, i128)> = c
        .cmp
        .types
        .iter()
        .filter(|t| t.shallow_growth() != 0)
        .map(|t| (c.type_name(t.type_id).to_string(), t.shallow_growth()))
        .collect();
    assert_eq!(
        shrunk
            .iter()
            .map(|x| x.0.as_str())
            .collect::<Vec<_>>()
            .len(),
        3
    );
    for (name, bytes) in [
        ("System.String", -0x1c),
        ("System.Text.StringBuilder", -0x18),
        ("System.Char[]", -0x40),
    ] {
        assert!(
            shrunk.contains(&(name.to_string(), bytes)),
            "{name}: {shrunk:?}"
        );
    }
}

/// A cache that empties between two snapshots: its items' row vanishes.
const EMPTIED: [(&str, &[u8]); 2] = [
    (
        "full.txt",
        b"a 1 t.exe\nt 1 App.Main\nt 2 App.Cache\nt 3 App.Item\nt 4 App.Log\n\
o 10 1 20 11 14\no 11 2 18 12 13\no 12 3 40\no 13 3 40\no 14 4 10\nr 10 4 0 1\nc t.exe\n",
    ),
    (
        "empty.txt",
        b"a 1 t.exe\nt 1 App.Main\nt 2 App.Cache\nt 4 App.Log\n\
o 20 1 20 21 24\no 21 2 18\no 24 4 10\nr 20 4 0 1\nc t.exe\n",
    ),
];

#[test]
fn vanished_rows_are_listed_with_their_negative_delta() {
    let mut a = loaded_series_app(&EMPTIED, 80, 24, COLOR);
    let c = a.loading.compared().expect("compared").clone();
    // The merged rows: Main / Cache / Item is absent now.
    let item = (1..c.cmp.paths.len() as u32)
        .find(|&r| c.cmp.path_names(r) == ["App.Main", "App.Cache", "App.Item"])
        .unwrap();
    let cache = c.cmp.paths.parent[item as usize];
    assert_eq!(c.vanished(cache), vec![item]);
    assert_eq!(c.growth(item), -0x80);
    keys(&mut a, "2 Right Down Right");
    let s = shows(&a, &["(gone) 2 × App.Item", "−128 B"]);
    // The cache's own Δ is the items' loss.
    let cache_row = s.lines().find(|l| l.contains("App.Cache")).unwrap();
    assert!(cache_row.contains("−128 B"), "{cache_row}");
    assert_snapshot!("vanished", s);
    // A gone row cannot be zoomed into; it retains nothing now.
    keys(&mut a, "Down Enter");
    shows(&a, &["gone from the newest snapshot"]);
}

#[test]
fn types_duplicates_and_roots_get_a_sortable_delta_column() {
    let lib = library_comparison();
    let mut a = series(80, 24);
    // Types: s moves the sort from Min ret. to the Δ column.
    keys(&mut a, "3 s");
    let s = shows(&a, &["Δ shallow ▼", "Δ vs oldest"]);
    let top = &lib.types[0];
    let name = &lib.type_names[top.type_id as usize];
    let short = name.rsplit('.').next().unwrap();
    let first = body_rows(&a)[0].clone();
    assert!(
        first.contains(short) && first.contains(&plus(top.shallow_growth())),
        "{first}\n{s}"
    );
    assert_snapshot!("types_by_delta", s);
    // Duplicates and Roots show theirs.
    keys(&mut a, "4");
    shows(&a, &["Δ addit."]);
    keys(&mut a, "5");
    shows(&a, &["Δ retained"]);
    // Seed 002: the one collected String shows its loss; the two types
    // that vanished are counted in the title.
    let mut b = loaded_series_app(&SEED002, 80, 24, COLOR);
    keys(&mut b, "3");
    let s = shows(&b, &["2 types gone", "−28 B"]);
    let string_row = s.lines().find(|l| l.contains("System.String")).unwrap();
    assert!(string_row.contains("−28 B"), "{string_row}");
    for l in s.lines().filter(|l| l.contains("App.")) {
        assert!(l.trim_end_matches(['│', ' ']).ends_with("0 B"), "{l}\n{s}");
    }
}
