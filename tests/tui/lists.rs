//! Journeys through the list panes at 80×24 on the demo heap: sorting by
//! any column (keys and header clicks), a type's instances, duplicate sets
//! whose equality cannot be verified, the group/instances state of the
//! dominator tree, and Backspace out of a set's detail.

use heaptui_testkit::tui as tui_support;

use crossterm::event::{KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use heaptui_tui::app::{update, Action, App, PaneId};
use heaptui_tui::panes::duplicates::DupRow;
use insta::assert_snapshot;
use tui_support::*;

fn snap(name: &str, a: &App) {
    assert_snapshot!(name, screen(a));
}

fn click(a: &mut App, column: u16, row: u16) {
    update(
        a,
        Action::Mouse(MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column,
            row,
            modifiers: KeyModifiers::NONE,
        }),
    );
}

/// The values in the column of the body rows under `header` (right-aligned
/// values ending where the header's text ends).
fn column_values(a: &App, header: &str) -> Vec<String> {
    let s = screen(a);
    let lines: Vec<&str> = s.lines().collect();
    let (hy, hx) = lines
        .iter()
        .enumerate()
        .find_map(|(y, l)| l.find(header).map(|x| (y, x)))
        .unwrap_or_else(|| panic!("no {header:?} header:\n{s}"));
    let end = lines[hy][..hx].chars().count() + header.chars().count();
    lines[hy + 1..]
        .iter()
        .take_while(|l| !l.starts_with('└'))
        .filter_map(|l| {
            let chars: Vec<char> = l.chars().collect();
            if chars.len() < end {
                return None;
            }
            let cell: String = chars[..end].iter().collect();
            let mut words = cell.split_whitespace().rev();
            let last = words.next()?;
            if !last.starts_with(|c: char| c.is_ascii_digit())
                && !matches!(last, "B" | "KiB" | "MiB" | "GiB" | "TiB")
            {
                return None;
            }
            let word = match last {
                "B" | "KiB" | "MiB" | "GiB" | "TiB" => format!("{} {last}", words.next()?),
                _ => last.to_string(),
            };
            Some(word)
        })
        .collect()
}

/// `12.5 KiB` / `1,234` / `40 B` as a number, for order checks.
fn value(s: &str) -> f64 {
    let mut parts = s.split_whitespace();
    let n: f64 = parts.next().unwrap().replace(',', "").parse().unwrap();
    match parts.next() {
        Some("KiB") => n * 1024.0,
        Some("MiB") => n * 1024.0 * 1024.0,
        Some("GiB") => n * 1024.0 * 1024.0 * 1024.0,
        Some("TiB") => n * 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => n,
    }
}

fn descending(values: &[String]) -> bool {
    values.windows(2).all(|w| value(&w[0]) >= value(&w[1]))
}

fn ascending(values: &[String]) -> bool {
    values.windows(2).all(|w| value(&w[0]) <= value(&w[1]))
}

#[test]
fn types_sort_by_retained_by_default_and_by_any_column() {
    let mut a = after("3");
    shows(&a, &["Min ret. ▼"]);
    let retained = column_values(&a, "Min ret. ▼");
    assert!(retained.len() > 5 && descending(&retained), "{retained:?}");
    snap("types_sorted_by_retained", &a);
    // `s` cycles to the next sortable column: Type (A to Z), then Count.
    keys(&mut a, "s");
    shows(&a, &["Type ▲", "sorted by Type, A to Z"]);
    keys(&mut a, "s");
    shows(&a, &["Count ▼", "sorted by Count, largest first"]);
    let counts = column_values(&a, "Count ▼");
    assert!(descending(&counts), "{counts:?}");
    // `S` reverses.
    keys(&mut a, "S");
    shows(&a, &["Count ▲", "smallest first"]);
    let counts = column_values(&a, "Count ▲");
    assert!(ascending(&counts), "{counts:?}");
    snap("types_sorted_by_count_ascending", &a);
    // A click on the Shallow header sorts by it; a second one reverses.
    let s = screen(&a);
    let (y, line) = s
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains("Shallow"))
        .unwrap();
    let x = line[..line.find("Shallow").unwrap()].chars().count() as u16 + 2;
    click(&mut a, x, y as u16);
    shows(&a, &["Shallow ▼"]);
    assert!(descending(&column_values(&a, "Shallow ▼")));
    click(&mut a, x, y as u16);
    shows(&a, &["Shallow ▲"]);
    assert!(ascending(&column_values(&a, "Shallow ▲")));
}

#[test]
fn a_types_instances_sort_and_open_in_the_inspector() {
    let mut a = after("3 / \"OrderLine\" Enter");
    let row = selected_row(&a);
    assert!(row.contains("FieldOps.Model.OrderLine"), "{row}");
    keys(&mut a, "x");
    shows(
        &a,
        &[
            "Instances of FieldOps.Model.OrderLine",
            "Retained ▼",
            "Object",
        ],
    );
    let retained = column_values(&a, "Retained ▼");
    assert!(retained.len() > 5 && descending(&retained), "{retained:?}");
    // The footer names the list's keys.
    shows(&a, &["s sort"]);
    snap("type_instances", &a);
    keys(&mut a, "s");
    shows(&a, &["Object ▲", "sorted by Object, A to Z"]);
    keys(&mut a, "s");
    shows(&a, &["Shallow ▼"]);
    // Enter inspects the selected instance; Backspace returns to the list,
    // and once more to the types.
    let id = selected_row(&a)
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_ascii_hexdigit()))
        .find(|w| w.len() > 4 && w.chars().all(|c| c.is_ascii_hexdigit()))
        .map(str::to_string)
        .expect("an id on the selected row");
    keys(&mut a, "Enter");
    assert!(a.inspector().is_some());
    shows(&a, &[&format!("Object {id}")]);
    keys(&mut a, "Bksp");
    assert!(a.inspector().is_none());
    shows(&a, &["Instances of FieldOps.Model.OrderLine"]);
    keys(&mut a, "Bksp");
    shows(&a, &["Types (", "Min ret. ▼"]);
    assert_eq!(a.pane(), PaneId::Types);
}

#[test]
fn unverified_duplicate_sets_are_shown_and_counted_apart() {
    let mut a = after("4");
    let d = a.duplicates().cloned().unwrap();
    assert!(!d.has_values(), "the demo holds no values");
    let totals = d.all_totals();
    assert!(totals.sets > 0 && totals.unverified_sets > 0, "{totals:?}");
    // The header counts verified sets and their waste apart.
    let s = shows(&a, &["Additional ▼", "unverified:"]);
    let title = s.lines().nth(2).unwrap().to_string();
    assert!(
        title.contains(&format!("{} sets", totals.sets))
            && title.contains(&format!("unverified: {} sets", totals.unverified_sets)),
        "{title}"
    );
    // Verified sets first; the unverified ones after every one of them.
    let rows: Vec<String> = s.lines().skip(5).take(17).map(str::to_string).collect();
    assert!(!rows[0].contains("unverified"), "{s}");
    snap("duplicates_unverified_apart", &a);
    // Narrow, the header still counts the unverified sets.
    let mut narrow = app(60, 20);
    keys(&mut narrow, "4");
    shows(
        &narrow,
        &[&format!("{} unverified ", totals.unverified_sets)],
    );
    keys(&mut a, "G");
    assert!(selected_row(&a).contains("unverified") || selected_row(&a).contains("possible"));
    // A filter's header totals are those of the rows it leaves.
    keys(&mut a, "g / \"String\" Enter");
    let p = a.panes().duplicates();
    let sets = (0..p.len()).filter_map(|i| match p.row(i) {
        Some(DupRow::Set(s)) => Some(s),
        _ => None,
    });
    let filtered = d.totals(sets);
    assert_eq!(*p.totals(), filtered);
    assert!(filtered.unverified_sets < totals.unverified_sets);
    let s = screen(&a);
    let title = s.lines().nth(2).unwrap();
    assert!(
        title.contains(&format!("unverified: {} sets", filtered.unverified_sets)),
        "{s}"
    );
}

#[test]
fn duplicates_sort_by_instances() {
    let a = after("4 s");
    shows(&a, &["Inst. ▼", "sorted by Inst, largest first"]);
    let s = screen(&a);
    // Within the verified sets, by instance count.
    let verified: Vec<String> = column_values(&a, "Inst. ▼")
        .into_iter()
        .zip(s.lines().skip(5))
        .filter(|(_, l)| !l.contains("unverified"))
        .map(|(v, _)| v)
        .collect();
    assert!(verified.len() > 3 && descending(&verified), "{s}");
}

#[test]
fn roots_sort_by_records() {
    let mut a = after("5");
    shows(&a, &["Retained ▼"]);
    keys(&mut a, "S");
    shows(&a, &["Retained ▲"]);
    keys(&mut a, "s s");
    shows(&a, &["Records ▼"]);
    assert!(descending(&column_values(&a, "Records ▼")));
    snap("roots_sorted_by_records", &a);
}

#[test]
fn backspace_in_a_set_detail_goes_back_to_the_list() {
    // 4, Enter (set detail), Enter (a member: the inspector), 4 (the
    // detail again), Backspace: the list, as the detail's header says.
    let mut a = after("4 Enter");
    shows(&a, &["Backspace: back to the list"]);
    keys(&mut a, "Enter");
    assert!(a.inspector().is_some());
    keys(&mut a, "4");
    assert!(a.inspector().is_none());
    shows(&a, &["Backspace: back to the list"]);
    keys(&mut a, "Bksp");
    assert!(a.inspector().is_none(), "landed on the inspector");
    assert_eq!(a.pane(), PaneId::Duplicates);
    assert!(a.panes().duplicates().detail().is_none());
    shows(&a, &["Additional ▼"]);
}

#[test]
fn the_group_instances_toggle_shows_its_state() {
    let mut a = after("2");
    // The footer offers `x instances` on a group.
    let group = loop {
        let row = selected_row(&a);
        if row.contains(" × ") {
            break row;
        }
        keys(&mut a, "j");
        assert!(a.status().is_empty());
    };
    assert!(!group.contains("(instances)"), "{group}");
    shows(&a, &["x instances"]);
    keys(&mut a, "x");
    let row = selected_row(&a);
    assert!(row.contains("(instances)"), "{row}");
    shows(&a, &["x group"]);
    snap("dominators_group_instances", &a);
    keys(&mut a, "x");
    assert!(!selected_row(&a).contains("(instances)"));
    shows(&a, &["x instances"]);
    // On one object `x` says why it does nothing.
    keys(&mut a, "g");
    let row = selected_row(&a);
    assert!(!row.contains(" × "), "{row}");
    keys(&mut a, "x");
    assert!(a.status().contains("one object:"), "{}", a.status());
    let s = screen(&a);
    assert!(!s.lines().last().unwrap().contains("x instances"), "{s}");
}
