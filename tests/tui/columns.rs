//! Table columns never run together. A small dump with GiB objects is
//! analysed for real, then its counts are inflated to those of a
//! 10-million-object heap (a test cannot parse one), and every table is
//! drawn at 80×24 and 120×35: each number must sit whole under its header
//! with a blank before it, and only names may be shortened.

use heaptui_testkit::tui as tui_support;

use std::sync::Arc;

use heaptui_core::analysis::group_children_unsorted;
use heaptui_core::analysis::ImmediateDominators;
use heaptui_core::analysis::RootGroup;
use heaptui_core::analysis::Summary;
use heaptui_core::graph::duplicates::{DuplicateSet, Duplicates, PossibleDuplicates, SetLists};
use heaptui_core::model::{ObjectIdx, TypeIdx};
use heaptui_core::progress::Progress;
use heaptui_testkit::tui::run_jobs;
use heaptui_tui::app::{update, Action, App};
use heaptui_tui::theme::Theme;
use heaptui_tui::worker::{analyse, Input, Msg};
use insta::assert_snapshot;
use ratatui::layout::Rect;
use tui_support::*;

const MONO: Theme = Theme {
    ascii: false,
    colors: heaptui_tui::theme::Colors::Mono,
};

/// Sizes in hex: 0xfbbd7 B = 1006.96 KiB, 0xffe0000000 B = 1023.50 GiB.
const WIDE_DUMP: &str = "\
a 1 wide.exe
t 1 MyCompany.Product.Caching.LargeObjectCache<System.String,MyCompany.Product.Imaging.Bitmap>
t 2 System.Byte[]
t 3 MyCompany.Product.Imaging.Bitmap
t 4 System.String
o 10 1 18 20 30 31
o 20 2 fbbd7
o 30 3 20 40
o 31 3 20 41
o 40 2 ffe0000000
o 41 2 ffe0000000
o 50 4 1c
o 51 4 1c
r 10 4 0 4
r 50 1 0
r 51 3 1
c wide.exe
";

/// The tree's reachable objects and the types' counts are this many times
/// what they are (each object's retained objects stay: the tree's
/// children are read off them).
const SCALE: u32 = 2_000_000;

/// The wide heap's App at `w`×`h`, every stage done.
fn wide_app(w: u16, h: u16) -> App {
    wide_app_with(w, h, true)
}

/// `objects`: inflate the dominator tree's object counts too (the
/// overview would then count more reachable objects than the dump has).
fn wide_app_with(w: u16, h: u16, objects: bool) -> App {
    let mut app = App::new("wide.txt".into(), MONO, Rect::new(0, 0, w, h));
    let mut msgs = Vec::new();
    analyse(
        &Input::Bytes("wide.txt", WIDE_DUMP.as_bytes()),
        &Default::default(),
        None,
        &Progress::new(),
        &mut |m| {
            msgs.push(m);
            true
        },
    );
    let mut graph: Option<Arc<heaptui_core::graph::HeapGraph>> = None;
    for m in msgs {
        let m = match m {
            Msg::Dominators { mut stage, .. } => {
                let mut dom = (*stage.dom).clone();
                // Not each object's retained objects: the tree's children
                // are read off them (the subtrees' ranges of numbers).
                if objects {
                    dom.reachable_objects *= SCALE as u64;
                }
                let mut types = (*stage.types).clone();
                for t in &mut types {
                    t.count *= SCALE as u64;
                }
                // The row of the bug report: `19,6021006.96 KiB1006.91 KiB`.
                let s = types.iter_mut().find(|t| t.type_index == TypeIdx(3));
                let s = s.expect("System.String");
                s.count = 19_602;
                s.shallow_bytes = 1_031_127;
                s.min_retained_bytes = 1_031_076;
                let mut roots: Vec<RootGroup> = (*stage.roots).clone();
                for g in &mut roots {
                    g.roots = vec![g.roots[0]; 1_234_567];
                    g.objects = 10_000_000;
                }
                // The Overview's figures and the first rows, from the
                // inflated tree, as the worker would have computed them.
                let graph = graph.as_deref().expect("the graph comes first");
                let summary = &stage.summary;
                let weakly = (summary.weakly_held_objects, summary.weakly_held_bytes);
                let summary = Summary::new(graph, &dom, &types, weakly);
                let top = group_children_unsorted(&graph.dump, &dom, &[dom.super_root()]);
                stage.dom = Arc::new(dom);
                stage.types = Arc::new(types);
                stage.roots = Arc::new(roots);
                stage.summary = Arc::new(summary);
                stage.top = top.into_iter().map(Arc::new).collect();
                Msg::Dominators { stage, ms: 0 }
            }
            Msg::Duplicates { .. } => Msg::Duplicates {
                duplicates: Arc::new(wide_duplicates()),
                ms: 0,
            },
            Msg::Parsed { .. } => Msg::Parsed {
                ms: 0,
                cached: false,
            },
            Msg::Graph {
                graph: g, totals, ..
            } => {
                graph = Some(g.clone());
                Msg::Graph {
                    graph: g,
                    ms: 0,
                    totals,
                }
            }
            other => other,
        };
        update(&mut app, Action::Worker(m));
    }
    run_jobs(&mut app);
    update(&mut app, Action::Settle);
    update(&mut app, Action::Tick);
    app
}

/// Sets numbered by their position in the result.
const WIDE_SET: u32 = 123_456;

/// Two sets with six-digit numbers (the last of [`WIDE_SET`] + 2 sets, a
/// set's number being its position: the others are pairs of 28-byte
/// strings), over a million members
/// and GiB sizes, and a type whose detection was cut short.
fn wide_duplicates() -> Duplicates {
    let set = |additional: u64, held: Option<u32>| {
        let mut s = DuplicateSet::new(1, 1_031_127, 10_000_000, additional, false);
        s.set_holding_set(held);
        s
    };
    let string = DuplicateSet::new(3, 28, 1, 28, false);
    let mut sets = vec![string; WIDE_SET as usize];
    sets.push(set(0xff_e000_0000, None));
    sets.push(set(1_031_076, Some(WIDE_SET)));
    let mut members = vec![vec![6, 7]; WIDE_SET as usize];
    members.extend([vec![1; 1_234_567], vec![1; 1_234_567]]);
    let mut held_by = vec![vec![]; WIDE_SET as usize + 1];
    held_by.push(vec![WIDE_SET]);
    let possible = vec![PossibleDuplicates {
        type_index: 2,
        instances: heaptui_core::mem::IdSet::from_sorted((2..2 + 1_234_567).collect()),
    }];
    Duplicates::from_parts(
        8,
        false,
        None,
        sets,
        SetLists::from_lists(members),
        SetLists::from_lists(held_by),
        possible,
        None,
        Vec::new(),
    )
}

/// The line of `screen` that contains every one of `needles`.
fn line_with(screen: &str, needles: &[&str]) -> Vec<char> {
    screen
        .lines()
        .find(|l| needles.iter().all(|n| l.contains(n)))
        .unwrap_or_else(|| panic!("no line with {needles:?}:\n{screen}"))
        .chars()
        .collect()
}

fn find(line: &[char], what: &str) -> Option<usize> {
    let w: Vec<char> = what.chars().collect();
    line.windows(w.len()).position(|x| x == w.as_slice())
}

/// In the row that contains `key`, each value sits whole under its header
/// (right-aligned numbers end where their header ends; left-aligned text,
/// marked with a leading `<`, starts where it starts) with a blank before
/// it and a blank or the border after it.
fn assert_cells(screen: &str, key: &str, cells: &[(&str, &str)]) {
    let labels: Vec<&str> = cells.iter().map(|c| c.0).collect();
    let header = line_with(screen, &labels);
    let row = line_with(screen, &[key]);
    let show = || {
        format!(
            "\n{}\n{}\n{screen}",
            String::from_iter(&header),
            String::from_iter(&row)
        )
    };
    for &(label, value) in cells {
        let (value, left) = match value.strip_prefix('<') {
            Some(v) => (v, true),
            None => (value, false),
        };
        let at = find(&header, label).unwrap();
        let n = value.chars().count();
        // A sorted column's header ends with its mark (`Retained ▼`).
        let mut reach = label.chars().count();
        if matches!(
            header.get(at + reach..at + reach + 2),
            Some([' ', '▼' | '▲'])
        ) {
            reach += 2;
        }
        let start = if left {
            at
        } else {
            (at + reach).checked_sub(n).unwrap_or_else(|| {
                panic!(
                    "{value:?} is wider than its header {label:?} reaches{}",
                    show()
                )
            })
        };
        let cell: String = row.iter().skip(start).take(n).collect();
        assert_eq!(cell, value, "under {label:?}{}", show());
        assert!(
            start > 0 && row[start - 1] == ' ',
            "no blank before {value:?} under {label:?}{}",
            show()
        );
        if let Some(&c) = row.get(start + n) {
            assert!(
                c == ' ' || c == '│',
                "{value:?} under {label:?} runs into {c:?}{}",
                show()
            );
        }
    }
}

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 35)];

#[test]
fn types_columns_keep_a_blank_between_wide_values() {
    for (w, h) in SIZES {
        let mut a = wide_app(w, h);
        keys(&mut a, "3");
        let s = screen(&a);
        assert_cells(
            &s,
            // The row of the type, not of a generic type over it.
            "System.String ",
            &[
                ("Count", "19,602"),
                ("Shallow", "1006.96 KiB"),
                ("Min ret.", "1006.91 KiB"),
                ("Precise", "-"),
            ],
        );
        assert_cells(
            &s,
            "System.Byte[]",
            &[("Count", "6,000,000"), ("Shallow", "2.00 TiB")],
        );
        // A long name is shortened, never the numbers after it.
        assert_cells(
            &s,
            "LargeObjectCache",
            &[("Count", "2,000,000"), ("Min ret.", "2.00 TiB")],
        );
        if w == 80 {
            assert_snapshot!("wide_types_80x24", s);
        }
    }
}

#[test]
fn immediate_dominators_columns_keep_a_blank_between_wide_values() {
    for (w, h) in SIZES {
        let mut a = wide_app(w, h);
        keys(&mut a, "3");
        update(
            &mut a,
            Action::Worker(Msg::ImmediateDominators {
                type_index: TypeIdx(1),
                exclude: String::new(),
                rows: vec![ImmediateDominators {
                    type_index: Some(TypeIdx(0)),
                    dominators: vec![ObjectIdx(0); 12_345],
                    dominated_objects: 10_000_000,
                    dominated_shallow_bytes: 1_031_127,
                    dominators_retained_bytes: 0xff_e000_0000,
                }],
            }),
        );
        let s = screen(&a);
        assert_cells(
            &s,
            "(12,345)",
            &[
                ("Objects", "10,000,000"),
                ("Dominated", "1006.96 KiB"),
                ("Dom. retain", "1023.50 GiB"),
            ],
        );
        if w == 80 {
            assert_snapshot!("wide_immediate_dominators_80x24", s);
        }
    }
}

#[test]
fn dominators_columns_keep_a_blank_between_wide_values() {
    for (w, h) in SIZES {
        let mut a = wide_app(w, h);
        keys(&mut a, "2 Right");
        let s = screen(&a);
        assert_cells(
            &s,
            "LargeObjectCache",
            &[("Retained", "2.00 TiB"), ("Objects", "6"), ("%", "100.0%")],
        );
        assert_cells(
            &s,
            "2 × MyCompany.Product.Imaging.Bitmap",
            &[("Retained", "2.00 TiB"), ("Objects", "4"), ("%", "100.0%")],
        );
        assert_cells(
            &s,
            "Byte[] 20",
            &[("Retained", "1006.96 KiB"), ("Objects", "1"), ("%", "0.0%")],
        );
        if w == 80 {
            assert_snapshot!("wide_dominators_80x24", s);
        }
    }
}

#[test]
fn duplicates_columns_keep_a_blank_between_wide_values() {
    for (w, h) in SIZES {
        let mut a = wide_app(w, h);
        keys(&mut a, "4");
        let s = screen(&a);
        let mut cells = vec![
            ("Set", "<#123457"),
            ("Additional", "1006.91 KiB"),
            ("Inst.", "1,234,567"),
            ("Per inst", "1006.96 KiB"),
            ("Per copy", "10,000,000"),
            ("Kind", "<full"),
            ("Held by", "<→#123456"),
        ];
        if w == 80 {
            // The type needs the room more than the objects per copy.
            cells.retain(|c| c.0 != "Per copy");
            assert!(!s.contains("Per copy"), "{s}");
            assert!(s.contains(" System.Byte[]"), "{s}");
        }
        assert_cells(&s, "#123457", &cells);
        // The possible duplicates come after every set.
        keys(&mut a, "G");
        let last = screen(&a);
        assert_cells(
            &last,
            "possible",
            &[
                ("Inst.", "1,234,567"),
                ("Kind", "<possible"),
                ("Held by", "<D:detect"),
            ],
        );
        if w == 80 {
            assert_snapshot!("wide_duplicates_80x24", s);
        }
    }
}

#[test]
fn roots_columns_keep_a_blank_between_wide_values() {
    for (w, h) in SIZES {
        let mut a = wide_app(w, h);
        keys(&mut a, "5 Right");
        let s = screen(&a);
        assert_cells(
            &s,
            "static variable [-]",
            &[
                ("Records", "1,234,567"),
                ("Objects", "10,000,000"),
                ("Retained", "2.00 TiB"),
            ],
        );
        // A record row: its retained bytes under the group's, its type
        // shortened so that its id and declaring class still show.
        assert_cells(
            &s,
            " 10 (static of System.String)",
            &[("Retained", "2.00 TiB")],
        );
        if w == 80 {
            assert_snapshot!("wide_roots_80x24", s);
        }
    }
}

#[test]
fn overview_root_counts_line_up_with_wide_values() {
    let mut a = wide_app_with(80, 24, false);
    a.totals_mut().root_kinds = vec![(1, 0, 12_345_678), (3, 1, 5), (4, 0, 1)];
    let s = screen(&a);
    assert!(s.contains(" 12,345,678  local variable [-]"), "{s}");
    let starts: Vec<usize> = ["local variable", "GC handle", "static variable"]
        .iter()
        .map(|k| find(&line_with(&s, &[k]), k).unwrap())
        .collect();
    assert!(starts.iter().all(|&x| x == starts[0]), "{starts:?}\n{s}");
    // A top dominator's long type is shortened, its id kept.
    assert!(
        s.contains("   2.00 TiB 100.0%  M.P.C.LargeObjectCache<"),
        "{s}"
    );
    assert!(s.contains("Bitmap> 10 "), "{s}");
    assert_snapshot!("wide_overview_80x24", s);
}

#[test]
fn inspector_lines_keep_numbers_with_a_long_type_name() {
    let mut a = wide_app(80, 24);
    keys(&mut a, "2 Right Down i");
    let s = screen(&a);
    assert!(
        s.contains("Object 30 MyCompany.Product.Imaging.Bitmap"),
        "{s}"
    );
    assert!(s.contains("retained 1023.50 GiB in 2 objects"), "{s}");
    assert!(s.contains(" System.Byte[] 40 (1023.50 GiB)"), "{s}");
    // The retainer: its long type shortened, its id and size whole.
    assert!(s.contains("Bitmap> 10 (24 B)"), "{s}");
    assert_snapshot!("wide_inspector_80x24", s);
}
