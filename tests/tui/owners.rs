//! The Duplicates pane's owners view (`O`, docs/duplicates.md "Who holds
//! the copies") on the demo heap at 80×24: listed by wasted bytes as the
//! core computes them, an owner expands to its sets, Enter on a set opens
//! it and Backspace comes back, `o` shows the owner in the dominator tree,
//! `e` changes the exclude patterns.

use heaptui_core::analysis::owners::{default_owner_globs, duplicate_owners, Owners};
use heaptui_testkit::tui::*;
use heaptui_tui::app::{App, PaneId};
use insta::assert_snapshot;

fn shows(a: &App, needles: &[&str]) -> String {
    let s = screen(a);
    for n in needles {
        assert!(s.contains(n), "{n:?} missing:\n{s}");
    }
    s
}

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
    assert!(a.panes.duplicates().shows_owners());
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
    assert!(!a.panes.duplicates().shows_owners());
    shows(&a, &[&format!("Set #{}", sets[0]), "Members"]);
    keys(&mut a, "Bksp");
    assert!(a.panes.duplicates().shows_owners());
    shows(&a, &[&rows[0]]);

    // o: the owner object in the dominator tree.
    keys(&mut a, "o");
    assert_eq!(a.pane, PaneId::Dominators);
    let row = selected_row(&a);
    assert!(row.contains("FieldOps.Imaging.ImageCache"), "{row}");

    // O again: the sets.
    keys(&mut a, "4 O");
    assert!(!a.panes.duplicates().shows_owners());
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
    let v = a.panes.duplicates().owners().unwrap();
    let dump = &a.graph().unwrap().dump;
    let top = &v.owners.owners[0];
    assert!(!Owners::path_text(dump, top).starts_with("FieldOps.Model."));
    // Every byte is still charged once.
    assert_eq!(v.owners.bytes, core_owners(&a).bytes);
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
    assert!(!a.panes.duplicates().shows_owners());
    shows(&a, &["still being detected"]);
}
