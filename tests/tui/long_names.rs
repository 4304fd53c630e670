//! Type names of a megabyte (a hostile or broken dump can hold them): the
//! importer cuts them to their head and tail, so every row that shows a
//! name costs a bounded amount, whatever the name is made of.

use heaptui_testkit::tui as tui_support;

use std::time::Instant;

use heaptui_tui::theme::Theme;
use tui_support::*;

const MONO: Theme = Theme {
    ascii: false,
    colors: heaptui_tui::theme::Colors::Mono,
};

/// A text dump with several types whose names are `len` bytes of `unit`
/// repeated, plus ordinary ones, all with instances.
fn dump(unit: &str, len: usize) -> &'static str {
    let long: String = unit.repeat(len / unit.len());
    let mut text = String::from("t 1 Small\n");
    for t in 2..6u32 {
        text += &format!("t {t} {long}{t}\n");
    }
    for o in 1..200u32 {
        text += &format!("o {o:x} {} {}\n", 1 + o % 5, 8 + o % 7);
    }
    text += "r 1 1 0\n";
    Box::leak(text.into_boxed_str())
}

#[test]
fn megabyte_names_are_cut_at_import_so_each_row_costs_a_bounded_amount() {
    for unit in ["a.", "Abc", "é"] {
        let text = dump(unit, 1 << 20);
        let mut a = text_app(text, 80, 24);
        let g = a.graph().unwrap().clone();
        for name in g.dump.type_names.iter() {
            assert!(
                name.len() <= heaptui_core::import::MAX_NAME_BYTES,
                "{unit:?}: a {}-byte name reached the model",
                name.len()
            );
        }
        // The four long types stay four types, each told by its tail.
        let long: Vec<&str> = g
            .dump
            .type_names
            .iter()
            .map(|n| &**n)
            .filter(|n| n.contains(" bytes]…"))
            .collect();
        assert_eq!(long.len(), 4, "{unit:?}");
        for t in 2..6 {
            assert!(
                long.iter().any(|n| n.ends_with(&format!("{t}"))),
                "{unit:?}"
            );
        }
        keys(&mut a, "3 Down Down PgDn PgUp");
        assert!(screen(&a).contains("Small"), "{unit:?}\n{}", screen(&a));
    }
}

/// Fitting a name to a row is linear in its length (it was quadratic in
/// its parts: 10 KB of `a.` took 4 s). A measurement, not a timed test:
/// `cargo test --test tui long_names -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement; prints the times"]
fn fitting_a_megabyte_name_takes() {
    for unit in ["a.", "Abc.", "x", "é"] {
        let big: String = unit.repeat(1_000_000 / unit.len());
        let t = Instant::now();
        let out = heaptui_tui::fmt::type_name(&big, 60, &MONO);
        assert!(heaptui_tui::fmt::text_width(&out) <= 60);
        eprintln!("{unit:?}: 1 MB fitted in {:?}", t.elapsed());
    }
}
