//! The merged paths to the roots (`M`) on the demo heap at 80×24: from the
//! Types pane, a group row of the Dominators pane and a duplicate set;
//! expanding and collapsing, Enter into the inspector and back, `e` to
//! skip the platform's types, Backspace out; and the job in the
//! background, its progress on the status line.

use heaptui_testkit::tui as tui_support;

use heaptui_core::progress::Progress;
use heaptui_tui::app::{update, Action, Effect};
use heaptui_tui::worker::{run_job, Job};
use insta::assert_snapshot;
use tui_support::*;

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
    a.set_inline_job_limit(0);
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

/// Comparing snapshots, `M` on a type shows each node's Δ objects against
/// the oldest snapshot, as `report --paths TYPE --baseline` computes it
/// (the same core walk on each snapshot, matched by path names).
#[test]
fn paths_of_a_type_show_their_change_when_comparing() {
    use heaptui_core::analysis::objects_of_types;
    use heaptui_core::analysis::Glob;
    use heaptui_core::analysis::{merged_paths, path_ids, PathFigures};
    use heaptui_core::progress::Progress;
    let name = "MyApp.Diagnostics.RequestLogEntry";
    // The report's computation, on the oldest and the newest snapshot.
    let analyse = |text: &'static str| {
        let input = heaptui_core::analysis::pipeline::Input::Bytes("s", text.as_bytes());
        let note: heaptui_core::cache::Note = std::sync::Arc::new(|_| {});
        let options = Default::default();
        let (a, pending) = heaptui_core::cache::run(
            &input,
            &options,
            None,
            &Progress::new(),
            &mut |_| true,
            note,
        )
        .unwrap();
        pending.wait();
        a
    };
    let series = heaptui_core::demo::DEMO_SERIES;
    let (old, new) = (analyse(series[0].1), analyse(series[2].1));
    let tree = |a: &heaptui_core::analysis::Analysis| {
        let set = objects_of_types(a.dump(), &Glob::new(name));
        merged_paths(&a.graph, &a.dom, &set, &[], &Progress::new()).unwrap()
    };
    let (m_old, m_new) = (tree(&old), tree(&new));
    let oldest = PathFigures::of(&m_old, old.dump());
    let ids = path_ids(&m_new, new.dump());
    // The node the most entries pass through below the roots.
    let top = m_new.nodes[0].children[0];
    let want = m_new.nodes[top as usize].count as i128 - oldest.objects(ids[top as usize]) as i128;
    assert!(want > 0, "the log grows");

    let mut a = heaptui_testkit::tui::demo_series_app(80, 24, COLOR);
    keys(&mut a, &format!("3 / \"{name}\" Enter"));
    run_jobs(&mut a);
    keys(&mut a, "M");
    let r = a.paths().expect("the overlay").result().clone();
    let b = r.baselines.as_ref().expect("the baselines' figures");
    assert_eq!(b.figures.len(), 2);
    assert_eq!(b.delta(top, r.paths.nodes[top as usize].count), want);
    let s = screen(&a);
    assert!(s.contains("Δ objects"), "{s}");
    assert!(s.contains(&format!("+{want}")), "{s}");
    assert_snapshot!("paths_delta_80x24", s);
}
