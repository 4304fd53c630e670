//! Comparing snapshots in the UI (docs/ui.md, docs/analyses.md):
//! journeys through the real event loop over the bundled demo series
//! (analysed synchronously, baselines included), and the Δ rows of the
//! Dominators pane checked against the library's comparison.

use heaptui_testkit::tui as tui_support;

use heaptui_core::analysis::Analysis;
use heaptui_core::analysis::{compare, Comparison, SnapshotSummary};
use heaptui_core::demo::DEMO_SERIES;
use heaptui_core::graph::duplicates::DuplicateOptions;
use heaptui_testkit::tui::{demo_series_app, loaded_series_app};
use heaptui_tui::app::{App, PaneId};
use heaptui_tui::loading::Comparing;
use heaptui_tui::panes::dominators::Item;
use insta::assert_snapshot;
use tui_support::*;

fn series(w: u16, h: u16) -> App {
    demo_series_app(w, h, COLOR)
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
    format!("+{}", heaptui_core::report::size(bytes as u64))
}

/// The body rows of the screen (below the header line of the pane).
fn body_rows(a: &App) -> Vec<String> {
    screen(a).lines().skip(4).map(str::to_string).collect()
}

#[test]
fn the_comparison_arrives_after_the_newest_analysis() {
    let a = series(80, 24);
    let Comparing::Done(c) = a.loading().comparing() else {
        panic!("no comparison: {:?}", a.loading().comparing());
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
    assert_eq!(a.pane(), PaneId::Suspects);
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
    assert_eq!(a.pane(), PaneId::Dominators);
    let row = selected_row(&a);
    assert!(row.contains("RequestLogEntry[]"), "{row}\n{}", screen(&a));
    assert!(row.contains('↑'), "the point's row grows steadily: {row}");
    // The point is the one the suspect names.
    let point = a.panes().suspects().rows()[0].point;
    let d = a.panes().dominators().as_ref().unwrap();
    let t = d.tree();
    let shown = match &t.nodes()[t.selected() as usize].item {
        Item::Instance(o) => *o,
        Item::Group(g) => g.members[0],
        other => panic!("{other:?}"),
    };
    assert_eq!(shown, point);
    assert_snapshot!("suspect_to_dominators", screen(&a));
    // Back returns to the suspects.
    keys(&mut a, "Bksp");
    assert_eq!(a.pane(), PaneId::Suspects);
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
        include_bytes!("../../fixtures/seed002_before.txt"),
    ),
    (
        "seed002_after.txt",
        include_bytes!("../../fixtures/seed002_after.txt"),
    ),
];

#[test]
fn seed_002_no_dominator_row_changes_and_only_three_types_shrink() {
    let mut a = loaded_series_app(&SEED002, 80, 24, COLOR);
    let c = a.loading().compared().expect("compared").clone();
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
    let c = a.loading().compared().expect("compared").clone();
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
    let s = shows(&b, &["2 gone", "−28 B"]);
    let string_row = s.lines().find(|l| l.contains("System.String")).unwrap();
    assert!(string_row.contains("−28 B"), "{string_row}");
    for l in s.lines().filter(|l| l.contains("App.")) {
        assert!(l.trim_end_matches(['│', ' ']).ends_with("0 B"), "{l}\n{s}");
    }
}

/// Two duplicate sets of one kind (App.Pair, 0x18 bytes, 2 objects per
/// copy: pairs of a name and pairs of a blob): the name pairs grow from 3
/// copies to 5, the blob pairs stay at 2.
const TWO_SETS: [(&str, &[u8]); 2] = [
    (
        "pairs.1.txt",
        b"a 1 t.exe\nt 1 App.Main\nt 2 App.Pair\nt 3 App.Name\nt 4 App.Blob\n\
o 10 1 40 20 21 22 23 24\n\
o 20 2 18 30\no 21 2 18 31\no 22 2 18 32\no 23 2 18 33\no 24 2 18 34\n\
o 30 3 20\no 31 3 20\no 32 3 20\no 33 4 30\no 34 4 30\n\
r 10 4 0 1\nc t.exe\n",
    ),
    (
        "pairs.2.txt",
        b"a 1 t.exe\nt 1 App.Main\nt 2 App.Pair\nt 3 App.Name\nt 4 App.Blob\n\
o 50 1 40 60 61 62 63 64 65 66\n\
o 60 2 18 70\no 61 2 18 71\no 62 2 18 72\no 63 2 18 73\no 64 2 18 74\n\
o 65 2 18 75\no 66 2 18 76\n\
o 70 3 20\no 71 3 20\no 72 3 20\no 73 3 20\no 74 3 20\no 75 4 30\no 76 4 30\n\
r 50 4 0 1\nc t.exe\n",
    ),
];

#[test]
fn two_duplicate_sets_of_one_kind_get_a_delta_each() {
    let mut a = loaded_series_app(&TWO_SETS, 80, 24, COLOR);
    let c = a.loading().compared().expect("compared").clone();
    // The library: one row per set, matched by rank within the kind.
    let pairs: Vec<_> = c
        .cmp
        .duplicates
        .iter()
        .filter(|d| c.type_name(d.type_id) == "App.Pair")
        .collect();
    assert_eq!(pairs.len(), 2, "{pairs:?}");
    let pair = 0x18 + 0x20;
    let (names, blobs) = (pairs[0], pairs[1]);
    assert_eq!((names.rank, blobs.rank), (0, 1));
    assert_eq!(names.instances, [3, 5]);
    assert_eq!(names.additional_bytes, [2 * pair, 4 * pair]);
    assert_eq!(blobs.instances, [2, 2]);
    assert_eq!(blobs.additional_bytes, [0x18 + 0x30, 0x18 + 0x30]);
    // The pane: each Pair row shows its own set's Δ.
    keys(&mut a, "4");
    let s = screen(&a);
    let rows: Vec<&str> = s.lines().filter(|l| l.contains("App.Pair")).collect();
    assert_eq!(rows.len(), 2, "{s}");
    let grown = format!("+{}", heaptui_core::report::size(2 * pair));
    assert!(
        rows.iter().filter(|r| r.contains(&grown)).count() == 1
            && rows
                .iter()
                .filter(|r| r.trim_end_matches(['│', ' ']).ends_with(" 0 B"))
                .count()
                == 1,
        "{s}"
    );
}

/// Between two snapshots the blobs (a duplicate set of their own), the
/// temporary object and its local-variable root went away.
const GONE: [(&str, &[u8]); 2] = [
    (
        "before.txt",
        b"a 1 t.exe\nt 1 App.Main\nt 2 App.Pair\nt 3 App.Name\nt 4 App.Blob\nt 5 App.Temp\n\
o 10 1 40 20 21 22 23\n\
o 20 2 18 30\no 21 2 18 31\no 30 3 20\no 31 3 20\n\
o 22 4 30\no 23 4 30\no 40 5 50\n\
r 10 4 0\nr 40 1 0\nc t.exe\n",
    ),
    (
        "after.txt",
        b"a 1 t.exe\nt 1 App.Main\nt 2 App.Pair\nt 3 App.Name\n\
o 50 1 40 60 61\n\
o 60 2 18 70\no 61 2 18 71\no 70 3 20\no 71 3 20\n\
r 50 4 0\nc t.exe\n",
    ),
];

#[test]
fn gone_rows_in_types_duplicates_and_roots() {
    let mut a = loaded_series_app(&GONE, 80, 24, COLOR);
    // Types: the gone types are rows of their own, marked, with their loss
    // (Blob 2 × 0x30, Temp 0x50), sorted with the Δ column.
    keys(&mut a, "3");
    let s = shows(
        &a,
        &[
            "2 gone",
            "(gone) App.Blob",
            "(gone) App.Temp",
            "−96 B",
            "−80 B",
        ],
    );
    assert_snapshot!("gone_types", s);
    // Sorted by Δ, smallest first: the biggest loss on top.
    keys(&mut a, "s S");
    assert!(
        selected_row(&a).contains("(gone) App.Blob"),
        "{}",
        screen(&a)
    );
    let rows = body_rows(&a);
    assert!(rows[1].contains("(gone) App.Temp"), "{}", screen(&a));
    // Enter says why nothing opens, and so do x, p and d.
    for k in ["Enter", "x", "p", "d"] {
        keys(&mut a, k);
        shows(
            &a,
            &[
                "this type is gone now (2 instances, 96 B in snapshot 1)",
                "nothing to open",
            ],
        );
    }
    assert!(a.panes().types().instances().is_none());
    // A filter keeps the gone rows whose names match.
    keys(&mut a, "/ \"Temp\" Enter");
    let s = shows(&a, &["(gone) App.Temp"]);
    assert!(!s.contains("App.Blob"), "{s}");
    keys(&mut a, "/ Esc");

    // Duplicates: the blobs' set is gone (one extra copy of 0x30 bytes).
    keys(&mut a, "4");
    let s = shows(&a, &["gone", "App.Blob", "−48 B"]);
    let blob = s.lines().find(|l| l.contains("App.Blob")).unwrap();
    assert!(blob.contains("gone") && blob.contains("−48 B"), "{blob}");
    assert_snapshot!("gone_duplicates", s);
    // The gone set sorts with the Δ column, biggest loss first.
    while !screen(&a).contains("Δ addit. ") {
        keys(&mut a, "s");
    }
    keys(&mut a, "S g");
    assert!(selected_row(&a).contains("App.Blob"), "{}", screen(&a));
    keys(&mut a, "Enter");
    shows(
        &a,
        &[
            "this set is gone now (2 copies, 48 B extra in snapshot 1)",
            "nothing to open",
        ],
    );
    assert!(a.panes().duplicates().detail().is_none());

    // Roots: the local variable's group is gone, with its loss.
    keys(&mut a, "5");
    let s = shows(&a, &["(gone) local variable", "−80 B"]);
    assert_snapshot!("gone_roots", s);
    keys(&mut a, "G Enter");
    shows(
        &a,
        &[
            "this group is gone now (1 record, 80 B retained in snapshot 1)",
            "nothing to open",
        ],
    );
}

#[test]
fn the_steady_key_narrows_types_duplicates_and_roots() {
    let mut a = series(80, 24);
    let lib = library_comparison();
    let roots_rise = lib.roots.iter().any(|r| {
        r.figures
            .windows(2)
            .all(|w| w[1].retained_bytes > w[0].retained_bytes)
    });
    assert!(!roots_rise, "the demo's roots hold steady");
    for (pane, title) in [("3", "Types"), ("4", "Dup"), ("5", "Roots")] {
        keys(&mut a, pane);
        let all = body_rows(&a).len();
        keys(&mut a, "t");
        let s = screen(&a);
        assert!(s.contains(title), "{s}");
        let listed: Vec<String> = body_rows(&a)
            .into_iter()
            .filter(|r| r.contains('+') || r.contains('−') || r.contains(" 0 B"))
            .collect();
        if pane == "5" {
            assert!(listed.is_empty(), "{s}");
            assert!(
                s.contains("none of the root groups grows in every snapshot"),
                "{s}"
            );
        } else {
            assert!(!listed.is_empty(), "{pane}: nothing grows steadily?\n{s}");
        }
        for r in &listed {
            assert!(
                r.contains('↑'),
                "{pane}: a row that does not grow steadily: {r}\n{s}"
            );
        }
        assert!(
            s.contains("grow in every snapshot") || s.contains("steady growth only"),
            "{s}"
        );
        assert_snapshot!(format!("steady_only_pane_{pane}"), s);
        keys(&mut a, "t");
        let s = shows(&a, &["again"]);
        assert!(body_rows(&a).len() == all, "{s}");
    }
    // The footer names the key.
    keys(&mut a, "5");
    shows(&a, &["t steady"]);
}

#[test]
fn with_two_snapshots_the_steady_key_says_what_it_can_mean() {
    let mut a = loaded_series_app(&SEED002, 80, 24, COLOR);
    for pane in ["3", "4", "5"] {
        keys(&mut a, pane);
        keys(&mut a, "t");
        shows(
            &a,
            &["2 snapshots: only the", "steady growth needs 3 or more"],
        );
        keys(&mut a, "t");
    }
    // Without a comparison the key says why it does nothing.
    let mut b = app(80, 24);
    for pane in ["3", "4", "5"] {
        keys(&mut b, pane);
        keys(&mut b, "t");
        shows(&b, &["no comparison: open several snapshots"]);
    }
}

#[test]
fn the_suspects_detail_scrolls_to_its_last_line() {
    for (w, h) in [(80, 24), (60, 20)] {
        let mut a = series(w, h);
        keys(&mut a, "6");
        let s = screen(&a);
        assert!(s.contains("J: more"), "{w}x{h}: the detail is cut\n{s}");
        assert!(!s.contains("Enter shows the accumulation point"), "{s}");
        // J down to the end: the retention path and the last line show.
        keys(&mut a, "J J J J J J J J J J J J J J J J J J J J J J J J");
        let s = shows(&a, &["Enter shows the accumulation point", "K: back up"]);
        assert!(s.contains("RequestLogEntry[]."), "{s}");
        assert_snapshot!(format!("suspect_detail_end_{w}x{h}"), s);
        // K goes back up; another suspect starts at its top.
        keys(&mut a, "K");
        shows(&a, &["J: more"]);
        keys(&mut a, "Down");
        assert_eq!(a.panes().suspects().detail_scroll(), 0);
    }
}

#[test]
fn comparison_lists_keep_their_figures_at_60x20() {
    let mut a = loaded_series_app(&GONE, 60, 20, COLOR);
    keys(&mut a, "4");
    // The Δ column makes room by dropping Held by and Kind, not by
    // squeezing the figures.
    let s = screen(&a);
    let pair = s
        .lines()
        .find(|l| l.contains("App.Pair"))
        .expect("pair row");
    assert!(pair.contains("56 B") && pair.contains("0 B"), "{s}");
    let blob = s
        .lines()
        .find(|l| l.contains("App.Blob"))
        .expect("gone row");
    assert!(blob.contains("gone") && blob.contains("−48 B"), "{s}");
    keys(&mut a, "3");
    shows(&a, &["(gone) App.Blob", "−96 B"]);
    keys(&mut a, "5");
    shows(&a, &["(gone) loc", "−80 B"]);
}
