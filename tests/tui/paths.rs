//! The merged paths to the roots (`M`) on the demo heap at 80×24: from the
//! Types pane, a group row of the Dominators pane and a duplicate set;
//! expanding and collapsing, Enter into the inspector and back, `e` to
//! skip the platform's types, Backspace out; and the job in the
//! background, its progress on the status line.

use heaptui_testkit::tui as tui_support;

use heaptui_core::progress::Progress;
use heaptui_tui::app::{update, Action, App, Effect};
use heaptui_tui::worker::{run_job, Job};
use insta::assert_snapshot;
use tui_support::*;

fn after(script: &str) -> App {
    let mut a = app(80, 24);
    keys(&mut a, script);
    a
}

fn shows(a: &App, needles: &[&str]) -> String {
    let s = screen(a);
    for n in needles {
        assert!(s.contains(n), "{n:?} missing:\n{s}");
    }
    s
}

/// Types pane, filtered to the byte arrays, then `M`.
const BYTES: &str = "3 / \"Byte[]\" Enter M";

#[test]
fn a_types_paths_open_along_the_path_most_take() {
    let a = after(BYTES);
    shows(
        &a,
        &[
            "[Paths]",
            "Paths from the roots to 78 × System.Byte[]",
            "▾ roots: local variable",
            "▾ FieldOps.Sync.SyncAgent",
            "▸ roots: static variable",
        ],
    );
    assert!(selected_row(&a).contains("System.Byte[]"), "{}", screen(&a));
    assert_snapshot!("paths_of_a_type", screen(&a));
}

#[test]
fn nodes_expand_collapse_and_enter_inspects_then_back() {
    let mut a = after(BYTES);
    let opened = screen(&a);
    // The last root kind: Right opens it, Left closes it again.
    keys(&mut a, "G Right");
    shows(&a, &["▾ roots: GC handle"]);
    keys(&mut a, "Left");
    shows(&a, &["▸ roots: GC handle"]);
    keys(&mut a, "Space");
    shows(&a, &["▾ roots: GC handle"]);
    // Left on a child goes to its parent.
    keys(&mut a, "Down Left");
    assert!(selected_row(&a).contains("roots: GC handle"));

    // Enter on a type's node inspects its object; Backspace comes back.
    let mut a = after(BYTES);
    keys(&mut a, "Enter");
    shows(&a, &["[Inspector]", "System.Byte[]"]);
    keys(&mut a, "Bksp");
    assert_eq!(screen(&a), opened, "back to the paths as they were");
    // Out of the paths to the Types pane.
    keys(&mut a, "Bksp");
    let s = screen(&a);
    assert!(!s.contains("[Paths]") && s.contains("[3 Types]"), "{s}");
}

#[test]
fn e_skips_the_platforms_types_and_back() {
    let mut a = after(BYTES);
    keys(&mut a, "e");
    let s = shows(
        &a,
        &[
            "skipping System.* Microsoft.*",
            "▾ FieldOps.Sync.WorkItem[]",
        ],
    );
    assert!(!s.contains("S.C.Generic.List"), "{s}");
    keys(&mut a, "e");
    assert_eq!(screen(&a), screen(&after(BYTES)));
    // One history step for both: Backspace leaves the paths.
    keys(&mut a, "Bksp");
    assert!(!screen(&a).contains("[Paths]"));
}

#[test]
fn a_group_row_and_a_duplicate_set_have_paths_too() {
    let a = after("4 M");
    shows(
        &a,
        &[
            "Paths from the roots to set #0: 5 × FieldOps.Imaging.CachedImage",
            "FieldOps.Imaging.ImageCache",
        ],
    );
    assert_snapshot!("paths_of_a_duplicate_set", screen(&a));
    // The Dominators pane's third row: six FileStreams, then the six byte
    // arrays under them.
    let mut a = after("2 j j M");
    shows(
        &a,
        &[
            "Paths from the roots to 6 × System.IO.FileStream",
            "[Paths]",
        ],
    );
    keys(&mut a, "Bksp Right j M");
    shows(
        &a,
        &[
            "Paths from the roots to 6 × System.Byte[]",
            "System.IO.FileStream",
        ],
    );
    assert_snapshot!("paths_of_a_group_row", screen(&a));
}

#[test]
fn on_a_big_heap_the_paths_come_from_a_background_job() {
    let mut a = app(80, 24);
    a.inline_job_limit = 0;
    keys(&mut a, "3 / \"Byte[]\" Enter");
    let effects = update(&mut a, Action::Key(ch('M')));
    let [Effect::StartJob(job)] = &effects[..] else {
        panic!("{effects:?}");
    };
    assert!(
        matches!(job, Job::MergedPaths { skip: false, .. }),
        "{job:?}"
    );
    shows(&a, &["merged paths: 0%"]);
    let (graph, dom) = (a.graph().unwrap().clone(), a.dom().unwrap().clone());
    let msg = run_job(job.clone(), &graph, &dom, &Progress::new()).expect("a result");
    update(&mut a, Action::Worker(msg));
    assert_eq!(screen(&a), screen(&after(BYTES)));
    // Cancelled (a newer request took its slot), it answers nothing.
    let p = Progress::new();
    p.cancel();
    assert!(run_job(job.clone(), &graph, &dom, &p).is_none());
}
