//! The Duplicates pane's owners view (`O`, docs/duplicates.md "Who holds
//! the copies") on the demo heap at 80×24: listed by wasted bytes as the
//! core computes them, an owner expands to its sets, Enter on a set opens
//! it and Backspace comes back, `o` shows the owner in the dominator tree,
//! `e` changes the exclude patterns.

use heaptui_core::analysis::{default_owner_globs, duplicate_owners, Owners};
use heaptui_core::graph::duplicates::SetLists;
use heaptui_testkit::tui::*;
use heaptui_tui::app::{App, PaneId};
use insta::assert_snapshot;

/// The owners as the core computes them with the demo's defaults.
fn core_owners(a: &App) -> Owners {
    let g = a.graph().unwrap();
    let dom = a.dom().unwrap();
    let d = a.duplicates().unwrap();
    duplicate_owners(&g.dump, dom, d, &default_owner_globs(g.dump.format))
}

#[test]
fn owners_view_lists_expands_opens_and_jumps() {
    let mut a = app(80, 24);
    let owners = core_owners(&a);
    let graph = a.graph().unwrap().clone();
    let dump = &graph.dump;
    let first = Owners::path_text(dump, &owners.owners[0]);
    assert_eq!(first, "FieldOps.Model.OrderLine[]");
    keys(&mut a, "4 O");
    assert!(a.panes().duplicates().shows_owners());
    shows(
        &a,
        &[
            "Wasted",
            "Owner",
            "System.* Microsoft.*",
            &first,
            "22 KiB",
            "704",
        ],
    );
    // The footer names the keys of the view.
    shows(&a, &["O sets", "o in tree"]);
    assert_snapshot!("owners", screen(&a));

    // The image cache's dictionary holds copies of cached images.
    let cache = owners
        .owners
        .iter()
        .position(|o| Owners::path_text(dump, o).starts_with("FieldOps.Imaging.ImageCache"))
        .expect("the image cache owns duplicates");
    let sets: Vec<u32> = owners.owners[cache].sets.iter().map(|s| s.set).collect();
    for _ in 0..cache {
        keys(&mut a, "j");
    }
    keys(&mut a, "Enter");
    let rows: Vec<String> = sets
        .iter()
        .map(|s| format!("→ #{s} FieldOps.Imaging.CachedImage"))
        .collect();
    shows(&a, &rows.iter().map(String::as_str).collect::<Vec<_>>());
    assert_snapshot!("owners_expanded", screen(&a));

    // Enter on a set opens it; Backspace comes back to the owners.
    keys(&mut a, "j Enter");
    assert!(!a.panes().duplicates().shows_owners());
    shows(&a, &[&format!("Set #{}", sets[0]), "Members"]);
    keys(&mut a, "Bksp");
    assert!(a.panes().duplicates().shows_owners());
    shows(&a, &[&rows[0]]);

    // o: the owner object in the dominator tree.
    keys(&mut a, "o");
    assert_eq!(a.pane(), PaneId::Dominators);
    let row = selected_row(&a);
    assert!(row.contains("FieldOps.Imaging.ImageCache"), "{row}");

    // O again: the sets.
    keys(&mut a, "4 O");
    assert!(!a.panes().duplicates().shows_owners());
    shows(&a, &["equal = same type, size and reference shape"]);
}

#[test]
fn exclude_patterns_move_the_owner_up() {
    let mut a = app(80, 24);
    keys(&mut a, "4 O e Space \"FieldOps.Model.*\" Enter");
    let s = shows(&a, &["System.* Microsoft.* FieldOps.Model.*"]);
    assert!(
        !s.contains("FieldOps.Model.OrderLine[]   "),
        "the order lines' arrays are walked past:\n{s}"
    );
    let v = a.panes().duplicates().owners().unwrap();
    let dump = &a.graph().unwrap().dump;
    let top = &v.owners().owners[0];
    assert!(!Owners::path_text(dump, top).starts_with("FieldOps.Model."));
    // Every byte is still charged once.
    assert_eq!(v.owners().bytes, core_owners(&a).bytes);
}

#[test]
fn owners_before_the_duplicates_arrive_say_so() {
    use heaptui_tui::app::{update, Action};
    use heaptui_tui::worker::Msg;
    let mut a = App::new("x".into(), COLOR, ratatui::layout::Rect::new(0, 0, 80, 24));
    let full = app(80, 24);
    update(
        &mut a,
        Action::Worker(Msg::Graph {
            graph: full.graph().cloned().unwrap(),
            ms: 0,
            totals: heaptui_tui::loading::Totals::of(full.graph().unwrap()),
        }),
    );
    keys(&mut a, "4 O");
    assert!(!a.panes().duplicates().shows_owners());
    shows(&a, &["still being detected"]);
}

/// A new detection result (a `D`) reaches an owners view already shown,
/// with no key: its owners are those of the new result.
#[test]
fn owners_follow_a_new_detection_without_a_key() {
    use heaptui_tui::app::{update, Action};
    use heaptui_tui::worker::Msg;
    let mut a = app(80, 24);
    let exact = (**a.duplicates().unwrap()).clone();
    let ty = a
        .graph()
        .unwrap()
        .dump
        .type_names
        .iter()
        .position(|n| n.as_ref() == "FieldOps.Imaging.CachedImage")
        .unwrap() as u32;
    // The sets of other types, numbered again, with their lists.
    let kept: Vec<u32> = (0..exact.sets.len() as u32)
        .filter(|&p| exact.sets[p as usize].type_index != ty)
        .collect();
    let sets = kept
        .iter()
        .map(|&p| exact.sets[p as usize].clone())
        .collect();
    let cut = heaptui_core::graph::duplicates::Duplicates::from_parts(
        a.graph().unwrap().objects(),
        exact.has_values(),
        exact.mode,
        sets,
        SetLists::from_lists(kept.iter().map(|&p| exact.members(p))),
        SetLists::from_lists(kept.iter().map(|&p| exact.held_by(p))),
        exact.possible.clone(),
        exact.budget_per_type,
        exact.finished_types.clone(),
    );
    let send = |a: &mut App, d: heaptui_core::graph::duplicates::Duplicates| {
        let duplicates = std::sync::Arc::new(d);
        update(a, Action::Worker(Msg::Duplicates { duplicates, ms: 0 }));
    };
    send(&mut a, cut);
    keys(&mut a, "4 O");
    assert!(!screen(&a).contains("ImageCache /"));
    send(&mut a, exact);
    let v = a.panes().duplicates().owners().unwrap();
    assert!(std::sync::Arc::ptr_eq(v.source(), a.duplicates().unwrap()));
    shows(&a, &["ImageCache /"]);
}

/// `/` in the owners view filters the owners: by a type of the path or of
/// the sets; Esc shows them all again.
#[test]
fn slash_filters_the_owners() {
    let mut a = app(80, 24);
    keys(&mut a, "4 O");
    let all = a.panes().duplicates().owners().unwrap().len();
    keys(&mut a, "/ \"imagecache\" Enter");
    run_jobs(&mut a);
    let v = a.panes().duplicates().owners().unwrap();
    assert!(!v.is_empty() && v.len() < all, "{} of {all}", v.len());
    let graph = a.graph().unwrap().clone();
    let dump = &graph.dump;
    shows(&a, &["filtered:", "ImageCache /"]);
    let s = screen(&a);
    assert!(!s.contains("FieldOps.Model.OrderLine[]"), "{s}");
    // A duplicate type filters the owners of its copies.
    keys(&mut a, "/ Esc / \"cachedimage\" Enter");
    run_jobs(&mut a);
    let v = a.panes().duplicates().owners().unwrap();
    let owners = &v.owners().owners;
    let d = a.duplicates().unwrap();
    let want = owners
        .iter()
        .filter(|o| {
            o.sets.iter().any(|s| {
                dump.type_names[d.sets[s.set as usize].type_index as usize].contains("CachedImage")
            }) || Owners::path_text(dump, o)
                .to_lowercase()
                .contains("cachedimage")
        })
        .count();
    assert_eq!(v.len(), want);
    keys(&mut a, "/ Esc");
    assert_eq!(a.panes().duplicates().owners().unwrap().len(), all);
}

/// `w` on an owner: what its extra copies hold, exactly what the core's
/// cut of those copies frees; on a set: its copies but the first.
#[test]
fn w_asks_what_the_extra_copies_free() {
    use heaptui_core::analysis::owner_copies;
    use heaptui_core::analysis::Glob;
    use heaptui_core::analysis::{what_if, Cut};
    use heaptui_core::progress::Progress;
    let mut a = app(80, 24);
    let owners = core_owners(&a);
    let (g, dom, d) = (
        a.graph().unwrap().clone(),
        a.dom().unwrap().clone(),
        a.duplicates().unwrap().clone(),
    );
    let globs: Vec<Glob> = owners.exclude.iter().map(|p| Glob::new(p)).collect();
    let copies = owner_copies(&g.dump, &dom, &d, &globs, &owners.owners[0]);
    assert_eq!(copies.len() as u64, owners.owners[0].copies);
    let cut = Cut {
        objects: copies,
        edges: Vec::new(),
    };
    let freed = what_if(&g, &dom, &cut, &Progress::new()).unwrap();
    keys(&mut a, "4 O w");
    let s = shows(
        &a,
        &["704 extra copies owned by FieldOps.Model.OrderLine[]"],
    );
    let words = format!("{} objects", heaptui_core::text::count(freed.objects));
    assert!(s.contains(&words), "{words}:\n{s}");
    assert_snapshot!("owners_what_if", s);

    // A set: all its members but the first.
    let cut = Cut {
        objects: d.members(0)[1..]
            .iter()
            .map(|&m| heaptui_core::model::ObjectIdx(m))
            .collect(),
        edges: Vec::new(),
    };
    let freed = what_if(&g, &dom, &cut, &Progress::new()).unwrap();
    let mut a = app(80, 24);
    keys(&mut a, "4 w");
    let words = format!("{} objects", heaptui_core::text::count(freed.objects));
    shows(&a, &["extra copies of set #0", &words]);
}

/// Comparing snapshots, the owners view shows each owner's Δ wasted and Δ
/// copies as `report --baseline` computes them, `s` sorts by them, `t`
/// keeps the steady growers; 80×24 and 160×45.
#[test]
fn owners_show_their_change_when_comparing() {
    for (w, h) in [(80, 24), (160, 45)] {
        let mut a = heaptui_testkit::tui::demo_series_app(w, h, COLOR);
        keys(&mut a, "4 O");
        let v = a.panes().duplicates().owners().unwrap();
        assert!(v.delta().is_some(), "the comparison's Δ");
        shows(&a, &["Δ wasted", "Δ copies"]);
        keys(&mut a, "s");
        let row = selected_row(&a);
        // The request log's array wastes 3.12 KiB more (31 → 111 copies).
        assert!(row.contains("RequestLogEntry[]"), "{row}");
        assert!(row.contains("+3.12 KiB") && row.contains("+80"), "{row}");
        assert_snapshot!(format!("owners_delta_{w}x{h}"), screen(&a));
        keys(&mut a, "t");
        let v = a.panes().duplicates().owners().unwrap();
        assert!(v.steady_only());
        assert!(!v.is_empty() && v.len() < v.owners().owners.len());
    }
}

/// Owners of the older snapshot that the newest lacks are rows of their
/// own, `gone` with their negative Δ; Enter on one says so.
#[test]
fn gone_owners_are_listed_with_their_negative_delta() {
    let demo = heaptui_core::demo::DEMO_DUMP.as_bytes();
    let newest = heaptui_core::demo::DEMO_SERIES[2];
    let series = [("demo.dump.txt", demo), (newest.0, newest.1.as_bytes())];
    let mut a = heaptui_testkit::tui::loaded_series_app(&series, 80, 24, COLOR);
    keys(&mut a, "4 O");
    let v = a.panes().duplicates().owners().unwrap();
    let gone = &v.delta().expect("the comparison's Δ").gone;
    // The demo's top owner is gone from the series' snapshot.
    let lines = gone
        .iter()
        .find(|g| g.path == "FieldOps.Model.OrderLine[]")
        .expect("the order lines' array is gone");
    assert_eq!(lines.delta.bytes, -22 * 1024);
    assert_eq!(lines.delta.copies, -704);
    keys(&mut a, "G");
    shows(&a, &["gone", "(gone)", "−"]);
    keys(&mut a, "Enter");
    shows(&a, &["this owner is gone now"]);
}
