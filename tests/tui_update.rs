//! The pure `update`: an event changes the model and returns effects for
//! the loop; nothing runs until the loop carries them out.

mod tui_support;

use crossterm::event::KeyCode;
use heaptui::tui::app::{update, Action, Effect, PaneId};
use heaptui::tui::worker::{Job, Msg};
use tui_support::*;

#[test]
fn quit_and_signals_are_effects() {
    let mut a = app(80, 24);
    assert_eq!(update(&mut a, Action::Key(ch('q'))), vec![Effect::Quit]);
    assert_eq!(
        update(&mut a, Action::Signal(libc::SIGTERM)),
        vec![Effect::Signalled(libc::SIGTERM)]
    );
    assert_eq!(update(&mut a, Action::Key(ch('2'))), vec![]);
    assert_eq!(a.pane, PaneId::Dominators);
}

#[test]
fn a_background_job_is_an_effect_and_its_result_a_message() {
    let mut a = app(80, 24);
    keys(&mut a, "3 / \"'CachedImage\" Enter");
    let effects = update(&mut a, Action::Key(ch('p')));
    let [Effect::StartJob(Job::Precise { type_index })] = effects.as_slice() else {
        panic!("expected one precise job: {effects:?}");
    };
    // Requested, not run: the row says so until the result arrives.
    assert!(selected_row(&a).contains("running"), "{}", selected_row(&a));
    assert!(a.types_pane.precise.is_empty());
    let graph = a.graph().cloned().unwrap();
    let dom = a.dom().cloned().unwrap();
    let job = Job::Precise {
        type_index: *type_index,
    };
    let msg = heaptui::tui::worker::run_job(job, &graph, &dom, &Default::default()).unwrap();
    assert!(matches!(msg, Msg::Precise { .. }));
    assert_eq!(update(&mut a, Action::Worker(msg)), vec![]);
    assert!(a.types_pane.precise.contains_key(type_index));
    assert!(a.job.is_none());
}

#[test]
fn a_panicked_stage_keeps_the_keys_working_and_quits_with_the_failure() {
    let mut a = app(80, 24);
    update(&mut a, Action::Worker(Msg::Panicked("boom".into())));
    let s = screen(&a);
    assert!(s.contains("Analysis failed") && s.contains("boom"), "{s}");
    assert_eq!(update(&mut a, Action::Key(key(KeyCode::Tab))), vec![]);
    assert_eq!(update(&mut a, Action::Key(ch('q'))), vec![Effect::Quit]);
    assert!(a.loading.failure().is_some());
}
