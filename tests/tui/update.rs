//! The pure `update`: an event changes the model and returns effects for
//! the loop; nothing runs until the loop carries them out.

use heaptui_testkit::tui as tui_support;

use crossterm::event::KeyCode;
use heaptui_tui::app::{update, Action, Effect, PaneId};
use heaptui_tui::worker::{Job, Msg};
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
    assert_eq!(a.pane(), PaneId::Dominators);
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
    assert!(a.panes().types().precise().is_empty());
    let graph = a.graph().cloned().unwrap();
    let dom = a.dom().cloned().unwrap();
    let job = Job::Precise {
        type_index: *type_index,
    };
    let msg = heaptui_tui::worker::run_job(job, &graph, &dom, &Default::default()).unwrap();
    assert!(matches!(msg, Msg::Precise { .. }));
    assert_eq!(update(&mut a, Action::Worker(msg)), vec![]);
    assert!(a.panes().types().precise().contains_key(type_index));
    assert!(a.job().is_none());
}

#[test]
fn a_panicked_stage_keeps_the_keys_working_and_quits_with_the_failure() {
    let mut a = app(80, 24);
    update(&mut a, Action::Worker(Msg::Panicked("boom".into())));
    let s = screen(&a);
    assert!(s.contains("Analysis failed") && s.contains("boom"), "{s}");
    assert_eq!(update(&mut a, Action::Key(key(KeyCode::Tab))), vec![]);
    assert_eq!(update(&mut a, Action::Key(ch('q'))), vec![Effect::Quit]);
    assert!(a.loading().failure().is_some());
}

#[test]
fn panes_answer_keys_with_intents_and_change_only_themselves() {
    use heaptui_tui::keys::Cmd;
    use heaptui_tui::panes::dominators::{reveal, RevealObject};
    use heaptui_tui::panes::duplicates::show_set;
    use heaptui_tui::panes::Intent;

    let mut a = app(80, 24);
    keys(&mut a, "j");
    let history = a.history_len();
    // Overview: Enter on the first target asks to show it in the tree.
    let intents = a.ask(Some(PaneId::Overview), Cmd::Open);
    let [Intent::Jump(jump)] = intents.as_slice() else {
        panic!("{intents:?}");
    };
    assert_eq!(jump.pane(), PaneId::Dominators);
    let Some(&RevealObject(o)) = jump.place() else {
        panic!("{jump:?}");
    };
    assert_eq!(a.graph().unwrap().dump.id_hex(o), "207380");
    assert_eq!(
        a.pane(),
        PaneId::Overview,
        "the pane does not switch itself"
    );

    // Dominators: a zoom is a history step the router records.
    let intents = a.ask(Some(PaneId::Dominators), Cmd::Open);
    assert_eq!(intents, vec![Intent::History]);
    assert_eq!(a.panes().dominators().as_ref().unwrap().zooms().len(), 2);
    assert_eq!(a.history_len(), history, "nothing recorded by the pane");

    // Duplicates: H on a held set asks for its holding set.
    let d = a.duplicates().cloned().unwrap();
    let (id, held) = d
        .numbered()
        .find(|(_, s)| s.holding_set().is_some())
        .unwrap();
    let row = a.panes().duplicates().row_of_set(id).unwrap();
    keys(&mut a, &format!("4 {}", "Down ".repeat(row)));
    let intents = a.ask(Some(PaneId::Duplicates), Cmd::JumpHoldingSet);
    assert_eq!(
        intents,
        vec![Intent::Jump(show_set(held.holding_set().unwrap(), false))]
    );

    // The inspector: o shows its object in the tree.
    keys(&mut a, "2 i");
    let object = a.inspector().unwrap().object();
    assert_eq!(
        a.ask(None, Cmd::OpenInDominators),
        vec![Intent::Jump(reveal(object))]
    );
}
