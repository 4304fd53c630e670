//! The UI on native dumps: what the formats carry beyond the graph (field
//! names, array indices, string values) reaches the inspector.

use heaptui_testkit::common;
use heaptui_testkit::tui as tui_support;

use common::assert_contains_all;
use heaptui_core::model::ObjectIdx;
use heaptui_tui::pane_id::PaneId;
use heaptui_tui::panes::inspector::Target;
use tui_support::*;

fn hprof_app() -> heaptui_tui::app::App {
    let bytes: &'static [u8] = include_bytes!("../../fixtures/leaky.hprof.gz");
    let mut a = heaptui_testkit::tui::loaded_app("leaky.hprof.gz", bytes, 100, 40, COLOR);
    heaptui_tui::app::update(&mut a, heaptui_tui::app::Action::Tick);
    a
}

/// Opens the inspector on an object with keys, as a user does: the Types
/// pane, the object's type, its instances (`x`), its row, Enter. The keys
/// go through the real event loop, which runs the jobs (instances, the
/// retention path) before the next key.
fn inspect(a: &mut heaptui_tui::app::App, o: u32) {
    let ty = a.graph().unwrap().dump.types.get(o as usize);
    keys(a, "3 g");
    let mut steps = 0;
    while a.panes().types().instances().is_none() {
        let selected = a
            .pane_view(PaneId::Types)
            .selected_object(&a.ctx(PaneId::Types))
            .map(|s| a.graph().unwrap().dump.types.get(s.index()));
        if selected == Some(ty) {
            keys(a, "x");
        } else {
            keys(a, "Down");
            steps += 1;
            assert!(steps < 10_000, "type {ty} not in the Types pane");
        }
    }
    let row = (a.panes().types().instances().unwrap().rows().iter())
        .position(|&r| r == ObjectIdx(o))
        .expect("the object among its type's instances");
    keys(a, &"Down ".repeat(row));
    keys(a, "Enter");
    assert_eq!(a.inspector().map(|i| i.object()), Some(ObjectIdx(o)));
}

/// In the open inspector, selects the line of `o` and inspects it (Enter).
fn follow(a: &mut heaptui_tui::app::App, o: u32) {
    let ins = a.inspector().unwrap();
    let at = ins
        .entries()
        .iter()
        .position(|e| e.target == Some(Target::Object(ObjectIdx(o))))
        .expect("a line of the object");
    let from = ins.list().selected;
    assert!(at >= from);
    keys(a, &"Down ".repeat(at - from));
    keys(a, "Enter");
    assert_eq!(a.inspector().map(|i| i.object()), Some(ObjectIdx(o)));
}

#[test]
fn inspector_names_fields_indices_and_strings_of_an_hprof() {
    let mut a = hprof_app();
    // The `Leaky` class object (Leaky.java in fixtures): its statics.
    let g = a.graph().unwrap().clone();
    let class = (0..g.dump.objects() as u32)
        .find(|&o| {
            g.dump.type_name(ObjectIdx(o)) == "java.lang.Class"
                && g.dump.text_preview(ObjectIdx(o), 20).as_deref() == Some("Leaky")
        })
        .expect("the Leaky class");
    inspect(&mut a, class);
    let s = screen(&a);
    assert_contains_all(
        &s,
        &[
            "value \"Leaky\"",
            ".HELLO1 → char[] \"hello\"",
            ".LEAK → java.util.HashMap",
            ".DUPS → java.util.ArrayList",
        ],
    );
    // One step down: the list's retainer, domination path and retention
    // path name the static field they go through.
    let dups = g.dump.refs.neighbors(class).get(
        (0..g.dump.refs.neighbors(class).len())
            .find(|&i| {
                g.dump
                    .ref_label(ObjectIdx(class), i)
                    .map(|l| l.to_string())
                    .as_deref()
                    == Some(".DUPS")
            })
            .unwrap(),
    );
    follow(&mut a, dups);
    let s = screen(&a);
    assert!(s.contains(".elementData → java.lang.Object[]"), "{s}");
    assert!(
        s.matches(".DUPS in java.lang.Class \"Leaky\"").count() == 2,
        "retainer and dominator both named by the field:\n{s}"
    );
    assert!(
        s.contains(".DUPS → java.util.ArrayList"),
        "retention path:\n{s}"
    );
}

#[test]
fn text_dumps_show_no_labels() {
    let mut a = app(80, 24);
    keys(&mut a, "2 i");
    let s = screen(&a);
    assert!(!s.contains(" → "), "{s}");
    assert!(!s.contains("value \""), "{s}");
}

#[test]
fn a_long_escaped_preview_leaves_room_for_the_type_name() {
    // At 80 columns: a String whose `value` is binary data (a JDK table)
    // previews as `\x00\x00…`, four columns a byte; the referenced array's
    // line must still name its type, id and size.
    let bytes: &'static [u8] = include_bytes!("../../fixtures/leaky.hprof.gz");
    let mut a = heaptui_testkit::tui::loaded_app("leaky.hprof.gz", bytes, 80, 24, COLOR);
    heaptui_tui::app::update(&mut a, heaptui_tui::app::Action::Tick);
    let g = a.graph().unwrap().clone();
    let binary = (0..g.dump.objects() as u32)
        .find(|&o| {
            g.dump.type_name(ObjectIdx(o)) == "java.lang.String"
                && g.dump
                    .text_preview(ObjectIdx(o), 40)
                    .is_some_and(|t| t.matches("\\x00").count() >= 10)
        })
        .expect("a String holding binary data");
    inspect(&mut a, binary);
    let s = screen(&a);
    let line = s
        .lines()
        .find(|l| l.contains(".value →"))
        .unwrap_or_else(|| panic!("no .value line:\n{s}"));
    assert!(line.contains(".value → byte[] \"\\x00"), "{line}");
    assert!(
        line.trim_end_matches(['│', ' ']).ends_with(')'),
        "id and size cut off: {line}"
    );
}

#[test]
fn rows_naming_one_object_show_its_text() {
    // The Dominators pane at 80×24: the class `Leaky` is a row of its own,
    // named by its class (not one of hundreds of `java.lang.Class`
    // objects), and its static map is one Enter away.
    let bytes: &'static [u8] = include_bytes!("../../fixtures/leaky.hprof.gz");
    let mut a = heaptui_testkit::tui::loaded_app("leaky.hprof.gz", bytes, 80, 24, COLOR);
    heaptui_tui::app::update(&mut a, heaptui_tui::app::Action::Tick);
    keys(&mut a, "2");
    let s = screen(&a);
    let line = s
        .lines()
        .find(|l| l.contains("class Leaky"))
        .unwrap_or_else(|| panic!("no row of the Leaky class:\n{s}"));
    assert!(line.contains("class Leaky fd5bf630"), "{line}");
    assert!(!s.contains("java.lang.Class"), "{s}");
    // Enter opens the class: its largest row is the static map.
    keys(&mut a, "Enter");
    let s = screen(&a);
    assert!(s.contains("all roots → class Leaky fd5bf630"), "{s}");
    let first = s.lines().find(|l| l.contains("▸")).unwrap();
    assert!(first.contains("java.util.HashMap fd5bfff0"), "{s}");
    // The Leaks pane's list and detail name it too; a cell too narrow for
    // the text beside the whole type name keeps the type name (the
    // object suspect is the first row under the JVM's sizes, with
    // referents retaining nothing).
    keys(&mut a, "6");
    let s = screen(&a);
    assert_contains_all(
        &s,
        &[
            "class Leaky → java.util.HashMap$Node[]",
            "One object, class Leaky, retains",
            "java.lang.String → byte[]  ",
        ],
    );
    // A row too narrow for 6 characters of text shows none, and keeps
    // the type and id.
    let g = a.graph().unwrap().clone();
    let class = (0..g.dump.objects() as u32)
        .map(ObjectIdx)
        .find(|&o| g.dump.id_hex(o) == "fd5bf630")
        .unwrap();
    let fit = |w| heaptui_tui::fmt::row_preview(&g.dump, class, w);
    assert_eq!(fit(200), " \"Leaky\"");
    assert_eq!(fit(8 + 1 + 12 + 3 + 6), " \"Leaky\"");
    assert_eq!(fit(8 + 1 + 12 + 3 + 5), "");
    // A long class name is cut to the room left.
    let long = (0..g.dump.objects() as u32)
        .map(ObjectIdx)
        .find(|&o| {
            g.dump.type_name(o) == "java.lang.Class"
                && g.dump
                    .text_preview(o, 100)
                    .is_some_and(|t| t.chars().count() > 30)
        })
        .unwrap();
    let cut = heaptui_tui::fmt::row_preview(&g.dump, long, 8 + 1 + 12 + 3 + 10);
    assert_eq!(cut.chars().count(), 2 + 1 + 10 + 1, "{cut}");
    assert!(cut.ends_with("…\""), "{cut}");
}

#[test]
fn the_dominators_filter_finds_a_class_by_the_name_of_its_row() {
    // `/` filters rows by what they are named: the class `Leaky`'s row
    // (`class Leaky`) and nothing of the other classes.
    let bytes: &'static [u8] = include_bytes!("../../fixtures/leaky.hprof.gz");
    let mut a = heaptui_testkit::tui::loaded_app("leaky.hprof.gz", bytes, 80, 24, COLOR);
    heaptui_tui::app::update(&mut a, heaptui_tui::app::Action::Tick);
    keys(&mut a, "2 / \"class\" Space \"Leaky\" Enter");
    let s = screen(&a);
    let rows: Vec<&str> = s.lines().filter(|l| l.contains("▸")).collect();
    assert_eq!(rows.len(), 1, "{s}");
    assert!(rows[0].contains("class Leaky fd5bf630"), "{s}");
    // `n` names the row as it is shown.
    keys(&mut a, "n");
    assert_eq!(a.status(), "class Leaky");
}

#[test]
fn duplicate_sets_show_the_text_their_members_hold() {
    // Sets of one type tell apart in the list without opening them: the
    // 50 copies of "duplicate me please" are named in their row, and so
    // is the byte array each copy holds (its Latin-1 characters).
    let mut a = hprof_app();
    keys(&mut a, "4");
    let s = screen(&a);
    let rows: Vec<&str> = s.lines().filter(|l| l.contains("\"duplicate me")).collect();
    assert_eq!(rows.len(), 2, "{s}");
    assert!(rows[0].contains("String \"duplicate"), "{s}");
    assert!(rows[1].contains("byte[] \"duplicate"), "{s}");
    // At 80 columns the text still shows beside a shortened type name.
    let bytes: &'static [u8] = include_bytes!("../../fixtures/leaky.hprof.gz");
    let mut a = heaptui_testkit::tui::loaded_app("leaky.hprof.gz", bytes, 80, 24, COLOR);
    heaptui_tui::app::update(&mut a, heaptui_tui::app::Action::Tick);
    keys(&mut a, "4");
    let s = screen(&a);
    assert!(s.contains("\"duplicate"), "{s}");
}

#[test]
fn the_duplicates_filter_finds_sets_by_their_text() {
    // The filter matches the text a set's row shows as well as its type
    // (ignoring case): the string copies and their arrays, and no other set.
    let mut a = hprof_app();
    keys(&mut a, "4 / \"DUPLICATE\" Space \"ME\" Enter");
    let s = screen(&a);
    let rows: Vec<&str> = s.lines().filter(|l| l.contains("#")).collect();
    assert_eq!(rows.len(), 2, "{s}");
    assert!(rows.iter().all(|r| r.contains("\"duplicate me")), "{s}");
    // Words must all be in the text; a type name still matches by itself.
    keys(&mut a, "/ Esc / \"duplicate\" Space \"you\" Enter");
    let s = screen(&a);
    assert!(!s.contains("\"duplicate me"), "{s}");
    keys(&mut a, "/ Esc / \"SoftReference\" Enter");
    let s = screen(&a);
    assert!(
        s.contains("SoftReference[]") && !s.contains("\"duplicate"),
        "{s}"
    );
}

#[test]
fn duplicate_members_show_their_text() {
    // The largest set of duplicate Strings holds the 50 copies of
    // "duplicate me please": its members' lines say so.
    let mut a = hprof_app();
    keys(&mut a, "4");
    let mut steps = 0;
    loop {
        keys(&mut a, "Enter");
        let s = screen(&a);
        if s.contains("java.lang.String \"duplicate me please\"") {
            break;
        }
        keys(&mut a, "Esc Down");
        steps += 1;
        assert!(steps < 30, "no set of the duplicated strings:\n{s}");
    }
}

/// A soft reference's referent is listed, marked with its kind, though it
/// is not a reference the analysis follows; its holder is among the
/// referent's retainers; `R` asks for the analysis again.
#[test]
fn the_inspector_marks_a_referent_with_its_kind() {
    let mut a = hprof_app();
    let g = a.graph().unwrap().clone();
    let referents = g.dump.referents.as_ref().expect("an HPROF has referents");
    assert!(!referents.strong);
    let soft = referents
        .list()
        .iter()
        .find(|r| {
            r.strength == heaptui_core::model::Strength::Soft
                && g.dump.type_name(r.reference) == "java.lang.ref.SoftReference"
        })
        .copied()
        .expect("a SoftReference");
    inspect(&mut a, soft.reference.raw());
    let s = screen(&a);
    assert!(s.contains(".referent [soft] → "), "{s}");
    follow(&mut a, soft.referent.raw());
    let s = screen(&a);
    assert!(
        s.contains(".referent [soft] in java.lang.ref.SoftReference"),
        "{s}"
    );
    assert_eq!(
        keys(&mut a, "R"),
        vec![heaptui_tui::app::Effect::ToggleReferences]
    );
}

/// The inspector lists every field with its value: the leaking HashMap's
/// size, threshold and load factor; the Leaky class's statics; an int[]'s
/// elements.
#[test]
fn the_inspector_shows_every_field_with_its_value() {
    let mut a = hprof_app();
    let g = a.graph().unwrap().clone();
    let d = &g.dump;
    let map = d.index_of(0xfd5bfff0).unwrap();
    assert_eq!(d.type_name(map), "java.util.HashMap");
    inspect(&mut a, map.raw());
    let s = screen(&a);
    assert_contains_all(
        &s,
        &[
            "Fields, own class first (8)",
            "float loadFactor = 0.75",
            "int threshold = 1536",
            "int size = 1000",
            "ref table → java.util.HashMap$Node[]",
            "ref keySet = null",
        ],
    );
    let class = d.index_of(0xfd5bf630).unwrap();
    let mut a = hprof_app();
    inspect(&mut a, class.raw());
    let s = screen(&a);
    assert_contains_all(
        &s,
        &[
            "Static fields (6)",
            "ref LEAK → java.util.HashMap",
            "ref NUMBERS → int[]",
        ],
    );
    let numbers = d.index_of(0xfd5c00a8).unwrap();
    let mut a = hprof_app();
    inspect(&mut a, numbers.raw());
    let s = screen(&a);
    assert_contains_all(&s, &["int[5]", "{1, 2, 3, 4, 5}"]);
}

/// The Roots pane groups an HPROF's Java frame roots by thread, each
/// record naming its frame; the inspector names a root's thread and frame,
/// and the retention path starts at them (`fixtures/leaky.hprof.gz`: the
/// main thread sleeps in `Leaky.main`, line 27, holding its `String[]`
/// arguments).
#[test]
fn java_frame_roots_show_their_thread_and_frame() {
    let mut a = hprof_app();
    // The groups by retained bytes: static, GC handle, internal, local.
    keys(&mut a, "5 Down Down Down Enter");
    let s = screen(&a);
    assert_contains_all(
        &s,
        &[
            "▾ local variable [-]",
            "thread main: 1 record",
            "java.lang.String[] fd5bff08 in Leaky.main:27",
            "thread Finalizer: 5 records",
        ],
    );
    // The record under the main thread's row, inspected.
    keys(&mut a, "Down Down Enter");
    let s = screen(&a);
    assert_contains_all(
        &s,
        &[
            "Object fd5bff08 java.lang.String[]",
            "local variable [-] in thread main, Leaky.main(Leaky.java:27)",
            "root (thread main, frame Leaky.main:27) java.lang.String[] fd5bff08",
        ],
    );
}

/// At 40 columns the names give way, never a figure: every size in the
/// Types and Dominators panes keeps its unit.
#[test]
fn at_40_columns_sizes_are_never_cut() {
    let bytes: &'static [u8] = include_bytes!("../../fixtures/node_leak.heapsnapshot.gz");
    let mut a = heaptui_testkit::tui::loaded_app("node_leak.heapsnapshot.gz", bytes, 40, 24, COLOR);
    heaptui_tui::app::update(&mut a, heaptui_tui::app::Action::Tick);
    for pane in ["3", "2"] {
        keys(&mut a, pane);
        let s = screen(&a);
        let rows: Vec<&str> = s.lines().filter(|l| l.contains("iB")).collect();
        assert!(rows.len() > 5, "{s}");
        for row in rows {
            // Every "Ki", "Mi" is followed by its "B".
            for cut in [" Ki", " Mi", " Gi"] {
                assert!(!row.contains(&format!("{cut}│")), "{row}\n{s}");
                assert!(!row.contains(&format!("{cut} ")), "{row}\n{s}");
            }
        }
    }
}

#[test]
fn an_accumulation_point_that_is_a_class_is_named_by_its_class() {
    // In the class_leak comparison one growth suspect accumulates at a
    // class object: the Leaks pane's list names it `class …`, as the
    // Dominators pane does, not `java.lang.Class`.
    let old: &'static [u8] = include_bytes!("../../fixtures/class_leak.1.hprof.gz");
    let new: &'static [u8] = include_bytes!("../../fixtures/class_leak.2.hprof.gz");
    let series = [
        ("class_leak.1.hprof.gz", old),
        ("class_leak.2.hprof.gz", new),
    ];
    let mut a = heaptui_testkit::tui::loaded_series_app(&series, 120, 30, COLOR);
    heaptui_tui::app::update(&mut a, heaptui_tui::app::Action::Tick);
    keys(&mut a, "6");
    let s = screen(&a);
    let row = s
        .lines()
        .find(|l| l.contains("1 × class java.lang.StringUTF16 →"))
        .unwrap_or_else(|| panic!("no suspect of the class:\n{s}"));
    assert!(row.contains("→ class java.lang.StringUTF16"), "{row}");
}
