//! Journeys through the real App (update + draw) on a TestBackend, driven
//! by finite key streams over the built-in demo heap. Deterministic: the
//! demo is analysed synchronously, stage times are zero, and every key
//! drains the jobs and filter requests it queued before the next one.

use heaptui_testkit::tui as tui_support;

use crossterm::event::{KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use heaptui_core::model::{ObjectIdx, TypeIdx};
use heaptui_core::progress::Progress;
use heaptui_testkit::tui::demo_app;
use heaptui_tui::app::{update, Action, App, Effect, PaneId};
use heaptui_tui::panes::dominators::TreeMode;
use heaptui_tui::theme::Theme;
use heaptui_tui::ui;
use heaptui_tui::worker::{run_job, Job, Msg};
use insta::assert_snapshot;
use tui_support::*;

const MONO: Theme = Theme {
    ascii: false,
    colors: heaptui_tui::theme::Colors::Mono,
};

/// The screen, asserted to contain none of the needles.
fn hides(a: &App, needles: &[&str]) -> String {
    let s = screen(a);
    for n in needles {
        assert!(!s.contains(n), "{n:?} shown:\n{s}");
    }
    s
}

/// Snapshots the screen as `tests/snapshots/tui_journeys__{name}.snap`.
fn snap(name: &str, a: &App) {
    assert_snapshot!(name, screen(a));
}

/// The selected row, asserted to contain `needle`.
fn selected_has(a: &App, needle: &str) {
    let row = selected_row(a);
    assert!(
        row.contains(needle),
        "{needle:?} not selected: {row}\n{}",
        screen(a)
    );
}

#[test]
fn overview_first_screen() {
    snap("overview_first_screen", &app(80, 24));
}

#[test]
fn overview_scrolls_to_duplicates_and_diagnostics() {
    // The first move selects the first target, the page then moves on.
    let mut a = after("PgDn PgDn");
    shows(&a, &["Top duplicate sets"]);
    snap("overview_scrolls_to_duplicates_and_diagnostics", &a);
    keys(&mut a, "G PgDn PgDn");
    shows(&a, &["none: every line was used"]);
    // The memory budget closes the page (the harness's, as --memory 1GiB).
    shows(&a, &["Memory budget 1 GiB (--memory)"]);
}

#[test]
fn overview_entries_jump() {
    let mut a = app(80, 24);
    // Nothing is selected until the first move, which brings the first
    // target (below the file summary) into view.
    assert_eq!(selected_row(&a), "");
    keys(&mut a, "Enter");
    assert_eq!(
        a.pane(),
        PaneId::Overview,
        "Enter without a selection does nothing"
    );
    keys(&mut a, "j");
    selected_has(&a, "FieldOps.Imaging.ImageCache 207380");
    keys(&mut a, "j");
    selected_has(&a, "FieldOps.UI.MainForm 208cb0");
    keys(&mut a, "Enter");
    assert_eq!(a.pane(), PaneId::Dominators);
    selected_has(&a, "FieldOps.UI.MainForm");
    keys(&mut a, "Bksp");
    assert_eq!(a.pane(), PaneId::Overview);
    keys(&mut a, "j j j j j j j j j Enter");
    assert_eq!(a.pane(), PaneId::Duplicates);
    shows(&a, &["Set #0"]);
    keys(&mut a, "Bksp i");
    let d = a.duplicates().cloned().unwrap();
    let first = a.graph().unwrap().dump.id_hex(ObjectIdx(d.members(0)[0]));
    shows(&a, &[&format!("Object {first}")]);
}

#[test]
fn dominators_grouped_tree_expand_and_path_mode() {
    let mut a = after("2");
    assert_eq!(a.pane(), PaneId::Dominators);
    // FileStreams are the third row: a group of six.
    keys(&mut a, "j j Right");
    snap("dominators_expanded", &a);
    keys(&mut a, "Right Right");
    selected_has(&a, "6 × System.Byte[]");
    keys(&mut a, "m");
    assert_eq!(
        a.panes().dominators().as_ref().unwrap().tree_mode(),
        TreeMode::Path
    );
    snap("dominators_path_mode", &a);
    hides(&a, &["ImageCache"]); // path mode hides rows off the path
    keys(&mut a, "m");
    shows(&a, &["ImageCache"]);
}

#[test]
fn dominators_instances_and_collapse() {
    // Instances listed by id.
    let mut a = after("2 j j x");
    shows(&a, &["System.IO.FileStream 2"]);
    keys(&mut a, "x Left");
    hides(&a, &["System.IO.FileStream 2"]);
}

#[test]
fn zoom_in_with_enter_and_out_with_backspace() {
    let mut a = after("2 Enter");
    shows(&a, &["all roots → FieldOps.Imaging.ImageCache"]); // the breadcrumb
    snap("zoomed", &a);
    let zooms = |a: &App| a.panes().dominators().as_ref().unwrap().zooms().len();
    keys(&mut a, "Enter");
    assert_eq!(zooms(&a), 3);
    keys(&mut a, "-");
    assert_eq!(zooms(&a), 2);
    keys(&mut a, "Bksp Bksp");
    assert_eq!(zooms(&a), 1);
}

#[test]
fn chart_toggles_on_narrow_and_sits_beside_the_tree_on_wide() {
    let mut a = after("2 c");
    shows(&a, &["Retained by all roots"]);
    snap("chart_narrow", &a);
    keys(&mut a, "j Enter");
    shows(&a, &["Retained by FieldOps.UI.MainForm"]); // zoom from the chart

    let mut w = app(200, 50);
    keys(&mut w, "2");
    shows(&w, &["Retained by all roots", "Retained Objects      %"]);
    snap("wide_200x50", &w);
}

#[test]
fn fuzzy_type_filter_ranks_and_enter_opens_the_largest_instance() {
    let mut a = after("3 / \"cachedimg\"");
    shows(&a, &["/ filter Types: cachedimg_"]);
    selected_has(&a, "FieldOps.Imaging.CachedImage");
    snap("types_filtered", &a);
    keys(&mut a, "Enter Enter");
    assert_eq!(a.pane(), PaneId::Dominators);
    selected_has(&a, "FieldOps.Imaging.CachedImage");
    snap("types_to_dominators", &a);
    keys(&mut a, "Bksp");
    assert_eq!(a.pane(), PaneId::Types);
    assert_eq!(a.filter(PaneId::Types), "cachedimg");
    keys(&mut a, "/ Esc");
    assert_eq!(a.filter(PaneId::Types), "");
}

#[test]
fn filter_tokens_arrays_and_generics() {
    let mut a = after("3 / \"[]\" Enter");
    let s = screen(&a);
    for l in s
        .lines()
        .skip(4)
        .take(5)
        .filter(|l| l.contains("System") || l.contains("Field"))
    {
        assert!(l.contains("[") || l.contains("…"), "only arrays: {l}");
    }
    keys(&mut a, "/ Esc / \"<str\" Enter");
    let s = hides(&a, &["System.Byte[]"]);
    assert!(
        s.contains("Generic.List<System.String>") || s.contains("Dictionary<System.String"),
        "{s}"
    );
}

#[test]
fn tree_filter_keeps_ancestors() {
    // Order lines live under MainForm (via the repository); the other
    // top-level rows disappear, MainForm stays as their ancestor.
    let a = after("2 / \"'orderline\" Enter");
    shows(&a, &["FieldOps.UI.MainForm"]);
    hides(&a, &["ImageCache"]);
    snap("tree_filtered", &a);
}

#[test]
fn immediate_dominators_with_exclude_pattern() {
    let mut a = after("3 / \"system.byte[]\" Enter d");
    shows(&a, &["Immediate dominators of System.Byte[]"]);
    keys(&mut a, "e \"System.*\" Enter");
    let s = shows(&a, &["skipping: System.*"]);
    assert!(
        !s.lines()
            .skip(12)
            .any(|l| l.contains("System.IO.FileStream")),
        "System.* skipped:\n{s}"
    );
    snap("immediate_dominators", &a);
    keys(&mut a, "Enter");
    assert_eq!(a.pane(), PaneId::Dominators);
}

#[test]
fn duplicates_detail_and_holding_set_jump() {
    let mut a = app(80, 24);
    // The image cache holds each photo several times: the CachedImage sets
    // (full) hold the sets of their pixel arrays (trivial).
    let d = a.duplicates().cloned().unwrap();
    let (id, held) = d
        .numbered()
        .find(|(_, s)| s.holding_set().is_some())
        .expect("a held set in the demo");
    let holder = held.holding_set().unwrap();
    let names = &a.graph().unwrap().dump.type_names;
    assert_eq!(names[held.type_index as usize].as_ref(), "System.Byte[]");
    assert_eq!(
        names[d.sets[holder as usize].type_index as usize].as_ref(),
        "FieldOps.Imaging.CachedImage"
    );
    keys(&mut a, "4");
    // The pane says what equality means.
    shows(&a, &["equal = same type, size and reference shape"]);
    snap("duplicates", &a);
    // Its row: held arrays are lone leaves, listed after the verified sets.
    for _ in 0..a.panes().duplicates().row_of_set(id).unwrap() {
        keys(&mut a, "j");
    }
    selected_has(&a, &format!("→#{holder}"));
    keys(&mut a, "Enter");
    shows(
        &a,
        &[
            &format!("Set #{id}"),
            "Members",
            "Instance graph",
            &format!("held by → set #{holder}"),
        ],
    );
    snap("duplicate_detail", &a);
    keys(&mut a, "H");
    // Jumped to the holding set, whose graph shows the held arrays.
    shows(
        &a,
        &[
            &format!("Set #{holder}"),
            "CachedImage",
            "Instance graph",
            "System.Byte[]",
        ],
    );
    snap("holding_set", &a);
    keys(&mut a, "Bksp");
    shows(&a, &[&format!("Set #{id}")]);
    keys(&mut a, "Bksp");
    assert!(a.panes().duplicates().detail().is_none());
}

#[test]
fn roots_by_kind_and_flags() {
    let mut a = after("5");
    shows(&a, &["static variable [-]", "GC handle [weak]"]);
    keys(&mut a, "Enter");
    snap("roots_expanded", &a);
}

#[test]
fn inspector_jumps_and_goes_back() {
    let mut a = after("2 i");
    shows(
        &a,
        &[
            "Object 207380 FieldOps.Imaging.ImageCache",
            "Root records",
            "static variable",
        ],
    );
    snap("inspector", &a);
    // First target: the first reference.
    keys(&mut a, "Enter");
    let obj = a.inspector().unwrap().object();
    assert_ne!(a.graph().unwrap().dump.id_hex(obj), "207380");
    keys(&mut a, "o");
    assert_eq!(a.pane(), PaneId::Dominators);
    assert!(a.inspector().is_none());
    keys(&mut a, "Bksp Bksp");
    shows(&a, &["Object 207380"]);
}

#[test]
fn history_goes_back_across_panes() {
    let mut a = after("2 3 4 Tab");
    assert_eq!(a.pane(), PaneId::Roots);
    keys(&mut a, "Bksp Bksp Esc");
    assert_eq!(a.pane(), PaneId::Dominators);
}

#[test]
fn help_is_generated_from_the_key_table() {
    let mut a = after("?");
    let descriptions: Vec<&str> = heaptui_tui::keys::KEYS
        .iter()
        .take(4)
        .map(|b| b.description)
        .collect();
    shows(&a, &descriptions);
    let all: String = ui::help_lines(&a)
        .iter()
        .map(|l| {
            l.spans
                .iter()
                .map(|s| s.content.as_ref())
                .collect::<String>()
                + "\n"
        })
        .collect();
    let table = heaptui_tui::keys::KEYS;
    for b in table {
        // Bindings of one command share a line, under the first description.
        let first = table
            .iter()
            .find(|f| f.mode == b.mode && f.cmd == b.cmd)
            .unwrap();
        let line = all
            .lines()
            .find(|l| l.ends_with(first.description) && l.contains(&b.key.label()))
            .unwrap_or_else(|| panic!("{:?} {:?} not in help", b.key, first.description));
        assert!(
            line.contains(&b.key.label()),
            "{} lists {}",
            line,
            b.key.label()
        );
    }
    snap("help", &a);
    keys(&mut a, "x");
    assert!(a.help().is_none());
}

#[test]
fn resize_and_small_terminals() {
    let mut a = after("2");
    update(&mut a, Action::Resize(60, 14));
    snap("resized_60x14", &a);
    update(&mut a, Action::Resize(20, 5));
    shows(&a, &["heaptui needs"]);
}

#[test]
fn no_color_keeps_the_selection_visible() {
    let mut a = demo_app(80, 24, MONO);
    keys(&mut a, "2 j");
    let buf = buffer(&a);
    let row = (0..24)
        .find(|&y| buf[(1, y)].symbol() == ">")
        .expect("a > marker");
    let cell = &buf[(5, row)];
    assert!(cell.modifier.contains(ratatui::style::Modifier::REVERSED));
    for y in 0..24 {
        for x in 0..80 {
            let c = &buf[(x, y)];
            assert_eq!(c.fg, ratatui::style::Color::Reset, "colour at {x},{y}");
            assert_eq!(c.bg, ratatui::style::Color::Reset);
        }
    }
    assert_snapshot!("no_color", text(&buf));
}

#[test]
fn ascii_mode_draws_only_ascii() {
    let mut a = demo_app(
        80,
        24,
        Theme {
            ascii: true,
            colors: heaptui_tui::theme::Colors::Mono,
        },
    );
    keys(&mut a, "2 j j Right c");
    let s = screen(&a);
    assert!(s.is_ascii(), "{s}");
    snap("ascii_chart", &a);
    keys(&mut a, "c 1");
    assert!(screen(&a).is_ascii());
}

#[test]
fn mouse_click_and_wheel() {
    let mut a = app(80, 24);
    let click = |col, row| MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: col,
        row,
        modifiers: KeyModifiers::NONE,
    };
    let tab = (0..80)
        .find(|&x| ui::tab_at(x, 80, Some(a.pane())) == Some(PaneId::Types))
        .unwrap();
    update(&mut a, Action::Mouse(click(tab, 1)));
    assert_eq!(a.pane(), PaneId::Types);
    update(&mut a, Action::Mouse(click(10, 7)));
    assert_eq!(a.panes().types().list().selected, 3);
    let wheel = MouseEvent {
        kind: MouseEventKind::ScrollDown,
        column: 10,
        row: 10,
        modifiers: KeyModifiers::NONE,
    };
    update(&mut a, Action::Mouse(wheel));
    assert_eq!(a.panes().types().list().selected, 6);
}

#[test]
fn quit_at_once() {
    let mut a = app(80, 24);
    assert_eq!(keys(&mut a, "q"), vec![Effect::Quit]);
    assert_eq!(keys(&mut a, "/ CtrlC"), vec![Effect::Quit]);
}

#[test]
fn panes_work_as_their_data_arrives() {
    // Drive the stages by hand: every pane draws and takes keys before its
    // data exists.
    let mut a = App::new("x".into(), COLOR, ratatui::layout::Rect::new(0, 0, 80, 24));
    for p in "12345".chars() {
        keys(&mut a, &p.to_string());
        let _ = screen(&a);
    }
    keys(&mut a, "2");
    shows(&a, &["computing the dominator tree"]);
    let full = app(80, 24);
    update(
        &mut a,
        Action::Worker(Msg::Parsed {
            ms: 0,
            cached: false,
        }),
    );
    update(
        &mut a,
        Action::Worker(Msg::Graph {
            graph: full.graph().cloned().unwrap(),
            ms: 0,
            totals: heaptui_tui::loading::Totals::of(full.graph().unwrap()),
        }),
    );
    keys(&mut a, "1");
    shows(&a, &["3,526 objects"]);
    keys(&mut a, "4");
    shows(&a, &["detecting duplicates"]);
    snap("staged_before_dominators", &a);
}

#[test]
fn precise_retained_on_request() {
    let mut a = after("3 / \"'CachedImage\" Enter");
    let computed = |row: &str| !row.trim_end_matches('│').ends_with('-');
    assert!(!computed(&selected_row(&a)), "not computed yet");
    keys(&mut a, "p");
    // Freeing every CachedImage frees its bytes, names and thumbnails.
    let row = selected_row(&a);
    assert!(
        row.contains("FieldOps.Imaging.CachedImage") && row.contains("KiB") && computed(&row),
        "{row}"
    );
    let p = a.panes().types().precise().values().next().unwrap();
    let names = &a.graph().unwrap().dump.type_names;
    let min = a
        .types()
        .unwrap()
        .iter()
        .find(|t| names[t.type_index.index()].as_ref() == "FieldOps.Imaging.CachedImage")
        .unwrap()
        .min_retained_bytes;
    assert!(p.bytes >= min, "precise {} >= minimum {min}", p.bytes);
}

#[test]
fn tree_mode_emphasises_the_domination_path() {
    let mut a = demo_app(80, 24, MONO);
    keys(&mut a, "2 j j Right Right");
    let buf = buffer(&a);
    let find = |needle: &str| {
        (0..24u16)
            .find(|&y| text(&buf).lines().nth(y as usize).unwrap().contains(needle))
            .unwrap()
    };
    let parent = find("6 × System.IO.FileStream");
    let other = find("FieldOps.UI.MainForm");
    let bold = |y: u16| {
        buf[(10, y)]
            .modifier
            .contains(ratatui::style::Modifier::BOLD)
    };
    assert!(bold(parent), "the selection's dominator is bold");
    assert!(!bold(other), "rows off the path are not");
}

#[test]
fn every_pane_draws_at_every_size() {
    // From the minimum up to wide, with overlays: nothing may panic and the
    // frame always fits.
    for (w, h) in [(30, 8), (31, 9), (40, 12), (80, 24), (120, 40), (250, 60)] {
        let mut a = app(w, h);
        for script in [
            "1",
            "2 j Right x",
            "2 c",
            "2 m",
            "3 d",
            "4 Enter",
            "5 Enter j",
            "2 i",
            "?",
            "3 /",
        ] {
            keys(&mut a, script);
            let s = screen(&a);
            assert_eq!(s.lines().count(), h as usize);
            keys(&mut a, "Esc Esc");
        }
    }
}

#[test]
fn a_dump_that_cannot_be_used_shows_why() {
    let mut a = App::new(
        "bad.txt".into(),
        COLOR,
        ratatui::layout::Rect::new(0, 0, 80, 24),
    );
    update(
        &mut a,
        Action::Worker(Msg::Failed("bad.txt: the file is empty".into())),
    );
    shows(
        &a,
        &[
            "Cannot open the dump",
            "bad.txt: the file is empty",
            "error: bad.txt: the file is empty",
        ],
    );
    keys(&mut a, "2 3 4 5 ?");
    assert_eq!(keys(&mut a, "Esc q"), vec![Effect::Quit]);
}

/// A reason longer than the screen is wide wraps onto the next lines:
/// its last words are on screen (it was once cut at the terminal width).
#[test]
fn a_long_reason_wraps_instead_of_being_cut() {
    let mut a = App::new(
        "README.md".into(),
        COLOR,
        ratatui::layout::Rect::new(0, 0, 80, 24),
    );
    let reason = "README.md: no object records (`o …`) found; 12 lines could not be \
                  parsed, first: line 1: unknown record `#` (expected a, c, t, o or r) \
                  and so on tail-marker";
    update(&mut a, Action::Worker(Msg::Failed(reason.into())));
    shows(&a, &["Cannot open the dump", "tail-marker"]);
}

#[test]
fn possible_duplicates_are_listed_and_detected_on_request() {
    possible_duplicates_detected(false);
}

/// On a large heap `D` runs in the background: the status line says so
/// until the result lands, then says "ready" again.
#[test]
fn possible_duplicates_detected_in_the_background_end_ready() {
    possible_duplicates_detected(true);
}

fn possible_duplicates_detected(background: bool) {
    let mut a = app(80, 24);
    if background {
        a.set_inline_job_limit(0);
    }
    // As if a work budget had cut detection short for the CachedImage type.
    let exact = (**a.duplicates().unwrap()).clone();
    let graph = a.graph().cloned().unwrap();
    let ty = graph
        .dump
        .type_names
        .iter()
        .position(|n| n.as_ref() == "FieldOps.Imaging.CachedImage")
        .unwrap() as u32;
    let mut cut = exact.clone();
    let instances: Vec<u32> = (0..graph.objects() as u32)
        .filter(|&o| graph.dump.types.get(o as usize) == TypeIdx(ty))
        .collect();
    cut.sets.retain(|s| s.type_index != ty);
    cut.possible
        .push(heaptui_core::graph::duplicates::PossibleDuplicates {
            type_index: ty,
            instances: heaptui_core::mem::IdSet::from_sorted(instances),
        });
    update(
        &mut a,
        Action::Worker(Msg::Duplicates {
            duplicates: std::sync::Arc::new(cut),
            ms: 0,
        }),
    );
    keys(&mut a, "4 / \"'cachedimage\" Enter");
    shows(&a, &["possible", "D:detect"]);
    keys(&mut a, "G");
    if background {
        let effects = update(&mut a, Action::Key(ch('D')));
        let [Effect::StartJob(job)] = &effects[..] else {
            panic!("{effects:?}");
        };
        shows(&a, &["detecting duplicates: 0%"]);
        let (graph, dom) = (a.graph().unwrap().clone(), a.dom().unwrap().clone());
        let msg = run_job(job.clone(), &graph, &dom, &Progress::new()).expect("a result");
        update(&mut a, Action::Worker(msg));
        hides(&a, &["detecting duplicates"]);
        shows(&a, &["ready"]);
    } else {
        keys(&mut a, "D");
    }
    assert_eq!(
        a.duplicates().unwrap().possible.len(),
        exact.possible.len(),
        "decided"
    );
    assert_eq!(a.duplicates().unwrap().sets.len(), exact.sets.len());
    if background {
        // (Filters run in the background too here: the rows follow when
        // the filter lands.)
        assert!(a.job().is_none(), "the job landed");
    } else {
        hides(&a, &["D:detect"]);
    }
}

#[test]
fn esc_clears_an_active_filter_before_going_back() {
    let mut a = after("2 3 / \"str\" Enter");
    assert_eq!(a.filter(PaneId::Types), "str");
    keys(&mut a, "Esc");
    assert_eq!(a.filter(PaneId::Types), "");
    assert_eq!(a.pane(), PaneId::Types);
    keys(&mut a, "Esc");
    assert_eq!(a.pane(), PaneId::Dominators);
}

// ----- issue 14: the first ten minutes --------------------------------------

#[test]
fn help_says_how_it_scrolls_and_marks_more_below() {
    let mut a = after("?");
    shows(&a, &["any other key closes", "more ↓ (j/PgDn)"]);
    hides(&a, &["↑ more"]);
    keys(&mut a, "PgDn PgDn PgDn PgDn PgDn PgDn PgDn PgDn PgDn PgDn");
    assert!(a.help().is_some(), "PgDn scrolls, it does not close");
    shows(&a, &["↑ more (k/PgUp)", "Mouse", "wheel"]);
    hides(&a, &["more ↓"]);
    snap("help_bottom_80x24", &a);
    // Scrolling stopped at the bottom: one `k` shows the line above.
    keys(&mut a, "k");
    shows(&a, &["more ↓ (j/PgDn)"]);
    keys(&mut a, "x");
    assert!(a.help().is_none());
}

#[test]
fn the_footer_keeps_filter_and_inspect_at_80_and_60_columns() {
    for (w, h) in [(80, 24), (60, 20)] {
        let mut a = app(w, h);
        for pane in ["2", "3", "4", "5"] {
            keys(&mut a, pane);
            let s = screen(&a);
            let footer = s.lines().last().unwrap();
            for hint in ["? help", "q quit", "/ filter", "i inspect"] {
                assert!(footer.contains(hint), "{w}: pane {pane}: {footer}");
            }
        }
    }
}

#[test]
fn overview_counts_types_as_the_types_pane_and_the_report_do() {
    let mut a = after("");
    let summary = a.loading().summary().unwrap().clone();
    let types = a.loading().types().unwrap().len() as u64;
    assert_eq!(summary.types, types);
    shows(&a, &[&format!(" {types} types, ")]);
    hides(&a, &["45 types"]);
    keys(&mut a, "3");
    shows(&a, &[&format!("Types ({types} shown)")]);
}

#[test]
fn zoomed_chart_bars_and_percentages_share_one_scale() {
    let mut a = app(60, 20);
    keys(&mut a, "2 c j Enter");
    // MainForm: 39.6% of the heap; its Repository child 95.5% of it.
    shows(&a, &["39.6% of the heap", "95.5%"]);
    hides(&a, &["37.8%"]);
    snap("zoomed_chart_60x20", &a);
    // The breadcrumb is cut from the left: the current node stays.
    keys(&mut a, "Enter");
    let s = screen(&a);
    let title = s.lines().nth(2).unwrap();
    assert!(title.contains("…"), "{title}");
    assert!(title.contains("CustomerRepository"), "{title}");
}

#[test]
fn the_chart_is_an_icicle_with_nested_levels() {
    let a = after("2 c");
    // Under ImageCache: its dictionary, and under that the entries.
    let s = shows(&a, &["▏Dict", "Entry[]"]);
    let bar = s.lines().position(|l| l.contains("ImageCache")).unwrap();
    let l2 = s.lines().nth(bar + 1).unwrap();
    let l3 = s.lines().nth(bar + 2).unwrap();
    assert!(l2.contains("▏Dict") && l3.contains("Entry[]"), "{s}");
    snap("chart_icicle_80x24", &a);
}

#[test]
fn narrow_names_stay_different_and_n_shows_the_full_one() {
    let mut a = app(60, 20);
    // Both lists, whatever the sort puts first.
    keys(&mut a, "3 / \"list<\" Enter");
    // (How much of a namespace stays depends on the column's width.)
    let s = shows(&a, &["5 Roots", "List<OrderLine>", "List<F.M.Order>"]);
    hides(&a, &["S.C.G.List<F.M.Or…"]);
    let _ = s;
    snap("types_60x20", &a);
    // `n` shows the selected row's full name (here the zoomed ImageCache's
    // dictionary), wrapped when it is longer than the line.
    keys(&mut a, "Esc 2 Enter n");
    shows(
        &a,
        &[
            "full text",
            "System.Collections.Generic.Dictionary<System.String,",
            "CachedImage>",
        ],
    );
    snap("full_name_60x20", &a);
    keys(&mut a, "j");
    hides(&a, &["full text"]);
}

#[test]
fn a_monochrome_terminal_gets_no_colour() {
    let theme = Theme::from_vars(false, |k| match k {
        "TERM" => Some("xterm-mono".into()),
        "COLORTERM" => Some("truecolor".into()),
        "LANG" => Some("en_US.UTF-8".into()),
        _ => None,
    });
    assert!(!theme.color());
    let mut a = demo_app(80, 24, theme);
    for script in ["", "2 j", "2 c", "3", "?"] {
        keys(&mut a, script);
        let buf = buffer(&a);
        for y in 0..24 {
            for x in 0..80 {
                let c = &buf[(x, y)];
                assert_eq!(c.fg, ratatui::style::Color::Reset, "{script}: {x},{y}");
                assert_eq!(c.bg, ratatui::style::Color::Reset, "{script}: {x},{y}");
            }
        }
        keys(&mut a, "Esc");
    }
    // The selection still shows, by reverse video and the marker.
    keys(&mut a, "Esc 2 j");
    selected_has(&a, "MainForm");
}

/// As on a heap of millions of objects, `x` and the instance list's sort
/// keys run as background jobs: the key returns at once, the list says it
/// is working (the rows of the previous order stay), and the result shows
/// when the job lands. Through the real loop (which runs the job) the
/// screen is the one the inline job gives on a small heap.
#[test]
fn instances_are_listed_and_sorted_by_a_background_job() {
    let script = "3 / \"OrderLine\" Enter x";
    let inline = after(script);
    let mut a = app(80, 24);
    a.set_inline_job_limit(0);
    keys(&mut a, script);
    assert_eq!(screen(&a), screen(&inline), "the job's rows, as inline");
    assert!(a.job().is_none(), "the job landed");

    // One key at a time by hand: the job waits in the effects.
    let mut a = app(80, 24);
    a.set_inline_job_limit(0);
    keys(&mut a, "3 / \"OrderLine\" Enter");
    let effects = update(&mut a, Action::Key(ch('x')));
    let [Effect::StartJob(job)] = &effects[..] else {
        panic!("{effects:?}");
    };
    assert!(matches!(job, Job::Instances { .. }), "{job:?}");
    shows(
        &a,
        &[
            "Instances of FieldOps.Model.OrderLine (…)",
            "(listing instances…)",
            "listing instances: 0%",
        ],
    );
    let land = |a: &mut App, job: Job| {
        let (graph, dom) = (a.graph().unwrap().clone(), a.dom().unwrap().clone());
        let msg = run_job(job, &graph, &dom, &Progress::new()).expect("a result");
        update(a, Action::Worker(msg));
    };
    land(&mut a, job.clone());
    assert_eq!(screen(&a), screen(&inline));

    // A sort: the old rows stay until the new order lands.
    let effects = update(&mut a, Action::Key(ch('s')));
    let [Effect::StartJob(job)] = &effects[..] else {
        panic!("{effects:?}");
    };
    shows(&a, &["Retained ▼", "sorting instances: 0%"]);
    // A second key before the first sort lands goes on from the order
    // asked for (Object, then Shallow); the first result is stale.
    let first = job.clone();
    let effects = update(&mut a, Action::Key(ch('s')));
    let [Effect::StartJob(second)] = &effects[..] else {
        panic!("{effects:?}");
    };
    land(&mut a, first);
    shows(&a, &["Retained ▼"]);
    land(&mut a, second.clone());
    shows(&a, &["Shallow ▼"]);
    hides(&a, &["sorting instances"]);
    assert_eq!(screen(&a), screen(&after(&format!("{script} s s"))));
}

#[test]
fn the_exclude_line_says_what_the_pane_asked_for() {
    // The Types pane takes one glob for the immediate dominators, the
    // owners view several: each pane names its prompt.
    shows(&after("3 e"), &["exclude pattern (glob, e.g. System.*): "]);
    shows(
        &after("4 O e"),
        &["owners cut past (globs, space between): "],
    );
}
