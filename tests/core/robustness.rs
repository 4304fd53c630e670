//! Fuzz-ish robustness: random byte soup and random mutations of valid dumps
//! go through the parser (at several chunk sizes) and the whole analysis and
//! report. Nothing may panic, chunking may not change the result, and every
//! non-blank line must be accounted for: records read + skipped lines.

use heaptui_testkit::common;

use std::path::Path;

use proptest::prelude::*;

use heaptui_core::analysis::Analysis;
use heaptui_core::graph::duplicates::DuplicateOptions;
use heaptui_core::model::Model;
use heaptui_core::progress::Progress;
use heaptui_core::report::{write_json, write_text, ReportOptions};
use heaptui_core::testing::parse_text;
use heaptui_core::testing::parse_text_with_chunk;

use common::{fingerprint, fixture_bytes};

/// Lines with at least one byte other than the blanks docs/formats.md tolerates
/// (space, tab, CR; vertical tab and form feed count as blanks too).
fn non_blank_lines(bytes: &[u8]) -> u64 {
    bytes
        .split(|&b| b == b'\n')
        .filter(|l| {
            l.iter()
                .any(|b| !matches!(b, b' ' | b'\t' | b'\r' | 0x0b | 0x0c))
        })
        .count() as u64
}

fn check(bytes: &[u8]) -> Result<(), TestCaseError> {
    let parsed = parse_text(Path::new("fuzz.txt"), bytes);
    for chunk in [1, 5, 40] {
        let other = parse_text_with_chunk(Path::new("fuzz.txt"), bytes, chunk);
        match (&parsed, &other) {
            (Ok(a), Ok(b)) => prop_assert_eq!(fingerprint(a), fingerprint(b)),
            (Err(a), Err(b)) => prop_assert_eq!(a, b),
            _ => prop_assert!(false, "chunk size {} changed success", chunk),
        }
    }
    let dump: Model = match parsed {
        Ok(d) => d,
        Err(e) => {
            prop_assert!(!e.reason.is_empty() && !e.reason.contains('\n'));
            return Ok(());
        }
    };
    let d = &dump.diagnostics;
    prop_assert_eq!(
        dump.records.total() + d.skipped_lines,
        non_blank_lines(bytes),
        "every non-blank line is a record or a skipped line"
    );
    prop_assert_eq!(
        dump.records.objects,
        dump.objects() as u64 + d.duplicate_objects
    );
    prop_assert_eq!(
        dump.records.roots,
        dump.roots.len() as u64 + d.missing_root_objects
    );
    prop_assert!(d.messages.len() as u64 <= d.total().min(100));
    let a = Analysis::from_dump(dump, &DuplicateOptions::default(), &Progress::new())
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let opts = ReportOptions {
        top: 0,
        objects: true,
        immediate_dominators: Some((heaptui_core::analysis::Glob::new("*"), None)),
        ..ReportOptions::default()
    };
    let mut out = Vec::new();
    write_json(&mut out, &a, &opts).unwrap();
    serde_json::from_slice::<serde_json::Value>(&out)
        .map_err(|e| TestCaseError::fail(format!("invalid JSON: {e}")))?;
    write_text(&mut Vec::new(), &a, &opts).unwrap();
    Ok(())
}

/// Bytes drawn mostly from the format's alphabet, so that many lines are
/// almost-records rather than pure noise.
fn soup() -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![
        6 => proptest::sample::select(b"otrac 0123456789abcdefABCDEF\n".to_vec()),
        1 => proptest::sample::select(b"\t\r\x0b\x0cxg-<>[],.\xff\xe9".to_vec()),
        1 => any::<u8>(),
    ];
    proptest::collection::vec(byte, 0..600)
}

/// Lines of plausible tokens: record kinds, small and huge hex numbers, bad
/// hex, names, separated by runs of blanks, some with CRLF.
fn token_lines() -> impl Strategy<Value = Vec<u8>> {
    let kind = proptest::sample::select(vec!["o", "o", "o", "r", "r", "t", "a", "c", "x", ""]);
    let token = prop_oneof![
        12 => (0u8..12).prop_map(|v| format!("{v:x}")),
        1 => Just("ffffffffffffffff".to_string()),
        1 => Just("10000000000000000".to_string()),
        1 => Just("0x1".to_string()),
        1 => Just("Sys.T<a, b>[]".to_string()),
        1 => Just("\u{e9}".to_string()),
    ];
    let sep = proptest::sample::select(vec![" ", " ", "  ", "\t", " \t "]);
    let line = (
        kind,
        proptest::collection::vec((sep.clone(), token), 0..6),
        sep,
        any::<bool>(),
    )
        .prop_map(|(k, toks, tail, crlf)| {
            let mut l = k.to_string();
            for (s, t) in toks {
                l.push_str(s);
                l.push_str(&t);
            }
            if crlf {
                l.push_str(tail);
                l.push('\r');
            }
            l
        });
    proptest::collection::vec(line, 0..40).prop_map(|ls| ls.join("\n").into_bytes())
}

#[derive(Debug, Clone)]
enum Mutation {
    DeleteByte(usize),
    InsertByte(usize, u8),
    ReplaceByte(usize, u8),
    DuplicateLine(usize),
    DeleteLine(usize),
    SwapLines(usize, usize),
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let b = proptest::sample::select(b" \t\r\n0fzo r t a c\xff".to_vec());
    prop_oneof![
        any::<usize>().prop_map(Mutation::DeleteByte),
        (any::<usize>(), b.clone()).prop_map(|(i, c)| Mutation::InsertByte(i, c)),
        (any::<usize>(), b).prop_map(|(i, c)| Mutation::ReplaceByte(i, c)),
        any::<usize>().prop_map(Mutation::DuplicateLine),
        any::<usize>().prop_map(Mutation::DeleteLine),
        (any::<usize>(), any::<usize>()).prop_map(|(i, j)| Mutation::SwapLines(i, j)),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

fn apply(bytes: &mut Vec<u8>, m: &Mutation) {
    if bytes.is_empty() {
        return;
    }
    let n = bytes.len();
    let mut lines: Vec<Vec<u8>> = bytes.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    let l = lines.len();
    match *m {
        Mutation::DeleteByte(i) => {
            bytes.remove(i % n);
            return;
        }
        Mutation::InsertByte(i, c) => {
            bytes.insert(i % (n + 1), c);
            return;
        }
        Mutation::ReplaceByte(i, c) => {
            bytes[i % n] = c;
            return;
        }
        Mutation::Truncate(i) => {
            bytes.truncate(i % n);
            return;
        }
        Mutation::DuplicateLine(i) => {
            let line = lines[i % l].clone();
            lines.insert(i % l, line);
        }
        Mutation::DeleteLine(i) => {
            lines.remove(i % l);
        }
        Mutation::SwapLines(i, j) => lines.swap(i % l, j % l),
    }
    *bytes = lines.join(&b'\n');
}

const FIXTURES: [&str; 11] = [
    "seed004_as_printed.txt",
    "seed004_corrected.txt",
    "two_appdomains.txt",
    "devtools_six_nodes.txt",
    "lengauer_tarjan.txt",
    "dominator_shapes.txt",
    "weak_roots.txt",
    "garbage_dangling.txt",
    "messy_whitespace.txt",
    "unknown_kinds.txt",
    "queries.txt",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn byte_soup_never_panics_and_every_line_is_accounted_for(bytes in soup()) {
        check(&bytes)?;
    }

    #[test]
    fn token_soup_never_panics_and_every_line_is_accounted_for(bytes in token_lines()) {
        check(&bytes)?;
    }

    #[test]
    fn mutated_fixtures_never_panic_and_every_line_is_accounted_for(
        which in 0..FIXTURES.len(),
        mutations in proptest::collection::vec(mutation(), 1..8),
    ) {
        let mut bytes = fixture_bytes(FIXTURES[which]);
        for m in &mutations {
            apply(&mut bytes, m);
        }
        check(&bytes)?;
    }
}

#[test]
fn every_fixture_accounts_for_every_line() {
    for name in FIXTURES {
        let bytes = fixture_bytes(name);
        check(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

/// The token soup is only useful if many of its inputs get past the parser
/// into the analysis and the report; byte soup mostly exercises rejection.
#[test]
fn token_soup_mostly_yields_usable_dumps() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let usable = (0..500)
        .filter(|_| {
            let t = token_lines().new_tree(&mut runner).unwrap().current();
            parse_text(Path::new("x"), &t).is_ok()
        })
        .count();
    assert!(usable >= 150, "only {usable} of 500 token soups parse");
}
