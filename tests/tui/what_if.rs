//! What a cut would free, from the TUI (`w`): a Dominators row (one object
//! or a group: all its objects), the inspector's selected reference and its
//! object; the answer lists the freed objects by type, Enter inspects the
//! one of a type that retains most. On the demo heap at 80×24.

use heaptui_testkit::tui as tui_support;

use insta::assert_snapshot;
use tui_support::*;

#[test]
fn an_object_row_frees_what_it_retains() {
    // MainForm retains 130.49 KiB in 3,111 objects (the Dominators row):
    // taking it out frees exactly that.
    let mut a = after("2 j");
    shows(&a, &["FieldOps.UI.MainForm 208cb0", "130.49 KiB   3,111"]);
    keys(&mut a, "w");
    shows(
        &a,
        &[
            "[Inspector]",
            "What if FieldOps.UI.MainForm 208cb0 were gone",
            "3,111 objects, 130.49 KiB no longer reachable",
            "w what if",
        ],
    );
    assert_snapshot!("what_if_object_row", screen(&a));
    // The first type row is selected; Enter inspects its largest freed object.
    let row = selected_row(&a);
    assert!(row.contains("System.String 1ce660"), "{row}");
    keys(&mut a, "Enter");
    shows(&a, &["Object 1ce660 System.String"]);
}

#[test]
fn a_reference_frees_less_than_its_holder() {
    // ImageCache's first reference is its dictionary: dropping it frees the
    // dictionary's 78 objects, not the cache itself (79 with it).
    let mut a = after("2 i");
    shows(&a, &["Object 207380 FieldOps.Imaging.ImageCache"]);
    keys(&mut a, "w");
    shows(
        &a,
        &[
            "What if the reference to 207340 were gone",
            "78 objects, 146.02 KiB no longer reachable",
        ],
    );
    assert_snapshot!("what_if_reference", screen(&a));
    // The object itself (selection off the reference lines): 79 objects.
    keys(&mut a, "w");
    shows(
        &a,
        &[
            "What if FieldOps.Imaging.ImageCache 207380 were gone",
            "79 objects, 146.04 KiB",
        ],
    );
}

#[test]
fn a_group_row_cuts_all_its_objects() {
    // `6 × System.IO.FileStream` retain 24.97 KiB in 24 objects together.
    let mut a = after("2 j j");
    shows(&a, &["6 × System.IO.FileStream", "24.97 KiB      24"]);
    // Before the job runs: the inspector on the row's first object says
    // what is coming, the status line names the job.
    use heaptui_tui::app::{update, Action, Effect};
    let effects = update(&mut a, Action::Key(ch('w')));
    assert!(effects.iter().any(|e| matches!(e, Effect::StartJob(_))));
    shows(
        &a,
        &[
            "What if 6 × System.IO.FileStream were gone",
            "computing… (in the background)",
        ],
    );
    keys(&mut a, "Bksp w");
    shows(
        &a,
        &[
            "What if 6 × System.IO.FileStream were gone",
            "24 objects, 24.97 KiB no longer reachable",
        ],
    );
}

#[test]
fn a_reference_held_elsewhere_frees_nothing() {
    // MainForm's retainer list holds ImageCache too, a static root: the
    // reference from MainForm to it frees nothing.
    let mut a = after("2 j i");
    let s = screen(&a);
    let line = s
        .lines()
        .position(|l| l.contains("FieldOps.Imaging.ImageCache 207380"))
        .unwrap_or_else(|| panic!("{s}"));
    let first = s.lines().position(|l| l.contains('>')).unwrap();
    keys(&mut a, &vec!["j"; line - first].join(" "));
    keys(&mut a, "w");
    shows(&a, &["nothing would be freed: other references hold it"]);
}

#[test]
fn a_java_static_field_line_is_a_reference_to_cut() {
    // Leaky.java's class: its static LEAK is the only reference to the
    // HashMap of 1,000 entries; the answer is the report's --what-if
    // Leaky.LEAK (3,874 objects, 115.44 KiB).
    let bytes: &'static [u8] = include_bytes!("../../fixtures/leaky.hprof.gz");
    let mut a = heaptui_tui::testing::loaded_app("leaky.hprof.gz", bytes, 80, 24, COLOR);
    heaptui_tui::app::update(&mut a, heaptui_tui::app::Action::Tick);
    keys(&mut a, "2 i");
    shows(
        &a,
        &[
            "Object fd5bf630 java.lang.Class",
            "ref LEAK → java.util.HashMap",
        ],
    );
    keys(&mut a, "j j j j");
    assert!(selected_row(&a).contains("ref LEAK"), "{}", screen(&a));
    keys(&mut a, "w");
    shows(
        &a,
        &[
            "What if the reference LEAK → fd5bfff0 were gone",
            "3,874 objects, 115.44 KiB no longer reachable",
            "1,000  31.25 KiB  java.util.HashMap$Node",
        ],
    );
}
