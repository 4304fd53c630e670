//! The parser against every rule and bad-input case of docs/formats.md, with exact
//! counts and exact `line N: why` messages. Every parse here is repeated with
//! tiny chunk sizes (down to one byte, i.e. one line per chunk) and must give
//! the same dump: chunk boundaries may not change results or line numbers.

use heaptui_testkit::common;

use std::path::Path;

use heaptui_core::model::Model;
use heaptui_core::model::ObjectIdx;
use heaptui_core::testing::parse_text;
use heaptui_core::testing::parse_text_with_chunk;

use common::{fingerprint, fixture_bytes, ix};

/// Parses with the production chunk size and with tiny ones; all must agree.
fn parse(text: &[u8]) -> Model {
    let d = parse_text(Path::new("t.txt"), text).unwrap_or_else(|e| panic!("{e}"));
    let expected = fingerprint(&d);
    for chunk in [1, 2, 3, 7, 16, 64] {
        let c = parse_text_with_chunk(Path::new("t.txt"), text, chunk).unwrap();
        assert_eq!(
            fingerprint(&c),
            expected,
            "chunk size {chunk} changed the result"
        );
    }
    d
}

fn type_of<'a>(d: &'a Model, hex: &str) -> &'a str {
    d.type_name(ix(d, hex))
}

fn refs_of(d: &Model, hex: &str) -> Vec<String> {
    d.refs
        .neighbors(ix(d, hex).raw())
        .iter()
        .map(|r| d.id_hex(ObjectIdx(r)))
        .collect()
}

#[test]
fn seed_004_as_printed_accounts_for_every_problem() {
    let d = parse(&fixture_bytes("seed004_as_printed.txt"));
    assert_eq!(d.objects(), 6);
    let diag = &d.diagnostics;
    assert_eq!(diag.skipped_lines, 0);
    // 1ce056 names 8 objects, none of which is in the dump.
    assert_eq!(diag.dangling_references, 8);
    assert!(refs_of(&d, "1ce056").is_empty());
    // 1ce056 (type 1d), 22c81e and 22c823 (type 1b) use undefined type ids.
    assert_eq!(diag.undefined_types, 3);
    assert_eq!(type_of(&d, "1ce056"), "<unknown type 0x1d>");
    assert_eq!(type_of(&d, "22c81e"), "<unknown type 0x1b>");
    assert_eq!(type_of(&d, "22c823"), "<unknown type 0x1b>");
    assert_eq!(type_of(&d, "7c79f"), "System.RuntimeType");
    assert_eq!(type_of(&d, "1ce004"), "System.NullReferenceException");
    assert_eq!(diag.duplicate_objects, 0);
    // `r 22c81b 5 0` on line 9 names no object of the dump.
    assert_eq!(diag.missing_root_objects, 1);
    assert_eq!(d.roots.len(), 2);
    let lines: Vec<&str> = diag
        .messages
        .iter()
        .map(|m| m.split(':').next().unwrap())
        .collect();
    let mut expected = vec!["line 8"; 9];
    expected.extend(["line 9", "line 10", "line 12"]);
    assert_eq!(lines, expected, "{:#?}", diag.messages);
    for m in [
        "line 8: reference from 1ce056 to 1ce11f, which is not in the dump; dropped",
        "line 8: reference from 1ce056 to 1ce26d, which is not in the dump; dropped",
        "line 8: object 1ce056 has type id 1d, which this section never defines",
        "line 9: root for object 22c81b, which is not in the dump; ignored",
        "line 10: object 22c81e has type id 1b, which this section never defines",
    ] {
        assert!(diag.messages.iter().any(|x| x == m), "missing {m:?}");
    }
    assert_eq!(d.app_domains.len(), 2);
    assert_eq!(d.app_domains[1].name, "bubblecs.exe");
    assert_eq!(d.app_domains[1].version, "2");
    assert_eq!(d.app_domains[1].stamp, None);
    assert!(d.app_domains[1].closed);
    assert_eq!(d.app_domains[1].objects, 6);
}

#[test]
fn seed_004_corrected_has_no_diagnostics_and_keeps_the_stamp() {
    let d = parse(&fixture_bytes("seed004_corrected.txt"));
    assert_eq!(d.objects(), 15);
    assert_eq!(d.diagnostics, Default::default());
    assert_eq!(d.app_domains[1].stamp.as_deref(), Some("444d20df"));
    assert!(d.app_domains[1].closed);
    assert_eq!(
        refs_of(&d, "1ce056"),
        ["1ce11f", "1ce14c", "1ce079", "1ce113", "1ce116", "1ce267", "1ce26a", "1ce26d"],
        "references stay in field order"
    );
    assert_eq!(d.size_of(ix(&d, "1ce056")), 0x118);
}

#[test]
fn type_ids_are_scoped_to_their_section() {
    let d = parse(&fixture_bytes("two_appdomains.txt"));
    assert_eq!(type_of(&d, "100"), "First.Node");
    assert_eq!(type_of(&d, "108"), "System.String");
    assert_eq!(type_of(&d, "200"), "Second.Cache");
    assert_eq!(type_of(&d, "208"), "System.Byte[]");
    assert_eq!(type_of(&d, "210"), "System.String");
    // One name, one type: String under id 2 and under id 3 is one type.
    assert_eq!(d.type_of(ix(&d, "108")), d.type_of(ix(&d, "210")));
    // 200 (section 2) references 108 (section 1): objects are global.
    assert_eq!(refs_of(&d, "200"), ["208", "108", "210"]);
    // The static root's container 1 is Second.Cache in its own section.
    let stat = d.roots.iter().find(|r| r.kind == 4).unwrap();
    assert_eq!(stat.container, Some(1));
    assert_eq!(
        stat.container_type.map(|t| &*d.type_names[t.index()]),
        Some("Second.Cache")
    );
    assert_eq!(d.app_domains[1].objects, 2);
    assert_eq!(d.app_domains[2].objects, 3);
    assert_eq!(d.diagnostics.total(), 0);
}

#[test]
fn records_after_a_close_belong_to_the_implicit_section() {
    // Type 1 is defined inside x.exe only; the object after `c` cannot use it.
    let d = parse(b"a 1 x.exe\nt 1 Inside\nc x.exe\no 1 1 8\nr 1 1 0\n");
    assert_eq!(type_of(&d, "1"), "<unknown type 0x1>");
    assert_eq!(d.diagnostics.undefined_types, 1);
    assert_eq!(
        d.diagnostics.messages,
        ["line 4: object 1 has type id 1, which this section never defines"]
    );
    assert_eq!(d.app_domains[0].objects, 1);
    assert_eq!(d.app_domains[1].objects, 0);
}

#[test]
fn an_unclosed_section_ends_where_the_next_one_starts() {
    let d = parse(b"a 1 one.exe\nt 1 One\no 1 1 8\na 1 two.exe\nt 1 Two\no 2 1 8\n");
    assert_eq!(type_of(&d, "1"), "One");
    assert_eq!(type_of(&d, "2"), "Two");
    assert!(!d.app_domains[1].closed);
    assert!(!d.app_domains[2].closed);
    assert_eq!(d.diagnostics.total(), 0);
}

#[test]
fn whitespace_forward_references_and_missing_final_close() {
    let d = parse(&fixture_bytes("messy_whitespace.txt"));
    assert_eq!(d.diagnostics, Default::default());
    assert_eq!(d.objects(), 3);
    // Type 1 of the implicit section is defined after its object.
    assert_eq!(type_of(&d, "10"), "Fwd.Node<System.String, System.Int32>[]");
    assert_eq!(type_of(&d, "20"), "Open.Thing");
    assert_eq!(type_of(&d, "18"), "Open.Thing");
    // 10 references 18, which appears later in the file.
    assert_eq!(refs_of(&d, "10"), ["18"]);
    assert_eq!(d.size_of(ix(&d, "10")), 0x20);
    assert_eq!(d.size_of(ix(&d, "18")), 4);
    assert_eq!(d.roots.len(), 2);
    assert_eq!(d.roots[0].line, 5);
    assert_eq!(d.roots[1].line, 10);
    assert_eq!(d.app_domains[1].name, "open.exe");
    assert_eq!(d.app_domains[1].version, "3");
    assert!(!d.app_domains[1].closed, "no `c` record in the file");
    // 8 non-blank lines: 3 objects, 2 types, 2 roots, 1 section record.
    assert_eq!(d.records.objects, 3);
    assert_eq!(d.records.types, 2);
    assert_eq!(d.records.roots, 2);
    assert_eq!(d.records.sections, 1);
}

#[test]
fn garbage_dangling_repeated_ids_and_roots() {
    let d = parse(&fixture_bytes("garbage_dangling.txt"));
    let diag = &d.diagnostics;
    assert_eq!(d.objects(), 5);
    assert_eq!(diag.skipped_lines, 0);
    assert_eq!(diag.dangling_references, 2);
    assert_eq!(diag.undefined_types, 1);
    assert_eq!(diag.duplicate_objects, 1);
    assert_eq!(diag.missing_root_objects, 1);
    assert_eq!(
        diag.messages,
        [
            "line 4: reference from 1 to dead, which is not in the dump; dropped",
            "line 6: reference from 3 to beef, which is not in the dump; dropped",
            "line 7: object 2 appears again; the first record is kept",
            "line 8: object 4 has type id 7, which this section never defines",
            "line 13: root for object 99, which is not in the dump; ignored",
        ]
    );
    // The first record of 2 wins: App.Leaf, 8 bytes, no references.
    assert_eq!(type_of(&d, "2"), "App.Leaf");
    assert_eq!(d.size_of(ix(&d, "2")), 8);
    assert!(refs_of(&d, "2").is_empty());
    // The dangling references are dropped, the others kept in order.
    assert_eq!(refs_of(&d, "1"), ["2", "3"]);
    assert!(refs_of(&d, "3").is_empty());
    assert_eq!(type_of(&d, "4"), "<unknown type 0x7>");
    // Three root records on object 1, all kept, in file order.
    assert_eq!(d.roots.len(), 3);
    assert!(d.roots.iter().all(|r| d.id_hex(r.object) == "1"));
    assert_eq!(
        d.roots.iter().map(|r| (r.kind, r.line)).collect::<Vec<_>>(),
        [(1, 10), (3, 11), (1, 12)]
    );
    assert_eq!(
        d.records.objects, 6,
        "the repeated record is still a record"
    );
    assert_eq!(d.records.roots, 4);
}

#[test]
fn repeated_ids_across_chunks_keep_the_first_and_renumber_references() {
    // 3 is repeated; 5 references 4, whose index shifts when 3's second
    // record is removed.
    let d = parse(b"t 1 T\no 3 1 1\no 4 1 2\no 3 1 99 4\no 5 1 3 4 3\nr 5 1 0\n");
    assert_eq!(d.objects(), 3);
    assert_eq!(d.ids.to_vec(), [3, 4, 5]);
    assert_eq!(d.sizes.to_vec(), [1, 2, 3]);
    assert_eq!(refs_of(&d, "5"), ["4", "3"]);
    assert!(refs_of(&d, "3").is_empty());
    assert_eq!(
        d.diagnostics.messages,
        ["line 4: object 3 appears again; the first record is kept"]
    );
}

#[test]
fn unknown_root_kinds_and_flag_bits_are_kept() {
    let d = parse(&fixture_bytes("unknown_kinds.txt"));
    assert_eq!(
        d.roots
            .iter()
            .map(|r| (r.kind, r.flags, r.is_strong()))
            .collect::<Vec<_>>(),
        [(9, 0, true), (1, 0x18, true), (1, 0x1a, false)]
    );
    assert_eq!(heaptui_core::model::root_kind::name(9), "kind 9");
    assert_eq!(heaptui_core::model::root_flags::describe(0x1a), "weak|0x18");
    assert_eq!(d.diagnostics.skipped_lines, 1);
    assert_eq!(d.diagnostics.messages, ["line 8: unknown record kind `x`"]);
}

/// One bad line after a valid object: the line is skipped with this message.
fn skipped_as(line: &[u8], why: &str) {
    let mut text = b"t 1 T\no 1 1 8\n".to_vec();
    text.extend_from_slice(line);
    text.extend_from_slice(b"\no 2 1 8\n");
    let d = parse(&text);
    assert_eq!(d.objects(), 2, "{line:?}");
    assert_eq!(d.diagnostics.skipped_lines, 1, "{line:?}");
    assert_eq!(d.diagnostics.messages, [format!("line 3: {why}")]);
    assert_eq!(d.records.total() + 1, 4);
}

#[test]
fn unparsable_lines_are_skipped_with_their_reason() {
    skipped_as(b"o 1g 1 8", "bad hex in object id `1g`");
    skipped_as(b"o 0x10 1 8", "bad hex in object id `0x10`");
    skipped_as(b"o 10 zz 8", "bad hex in type id `zz`");
    skipped_as(b"o 10 1 -8", "bad hex in size `-8`");
    skipped_as(b"o 10 1 8 1 q", "bad hex in reference 2 `q`");
    skipped_as(b"o 10 1", "object record needs an id, a type id and a size");
    skipped_as(b"o", "object record needs an id, a type id and a size");
    skipped_as(b"r 1 1", "root record needs an object id, a kind and flags");
    skipped_as(b"r x 1 0", "bad hex in root object id `x`");
    skipped_as(b"r 1 k 0", "bad hex in root kind `k`");
    skipped_as(b"r 1 1 f!", "bad hex in root flags `f!`");
    skipped_as(b"r 1 4 0 nope", "bad hex in root container `nope`");
    skipped_as(b"t", "type record without a type id");
    skipped_as(b"t 5", "type record without a name");
    skipped_as(b"t 5   \t", "type record without a name");
    skipped_as(b"t g Foo", "bad hex in type id `g`");
    skipped_as(b"a 1", "AppDomain record needs a version and a name");
    skipped_as(b"c", "end-AppDomain record without a name");
    skipped_as(b"q 1 2 3", "unknown record kind `q`");
    skipped_as(b"O 1 1 8", "unknown record kind `O`");
    skipped_as(b"ob 1 1 8", "unknown record kind `ob`");
    // 17 significant hex digits do not fit 64 bits.
    skipped_as(
        b"o 10000000000000000 1 8",
        "bad hex in object id `10000000000000000`",
    );
    skipped_as(
        b"o 5 1 8 1ffffffffffffffff",
        "bad hex in reference 1 `1ffffffffffffffff`",
    );
    // Non-UTF-8 bytes in a number are shown lossily.
    skipped_as(b"o 1\xff 1 8", "bad hex in object id `1\u{fffd}`");
}

#[test]
fn a_skipped_object_line_leaves_no_object_behind() {
    // The bad reference aborts the whole record: 10 must not exist.
    let d = parse(b"t 1 T\no 10 1 8 1 q\no 1 1 8 10\nr 1 1 0\n");
    assert_eq!(d.ids.to_vec(), [1]);
    assert_eq!(d.diagnostics.dangling_references, 1);
    assert_eq!(d.refs.edges(), 0);
}

/// A dump cut in the middle of a record (`head -c`) says so in its first
/// message, before the references to the objects cut off; a last line
/// without a line end that is a whole record is not a cut.
#[test]
fn a_dump_cut_in_a_record_says_it_ended_early() {
    let text = fixture_bytes("demo.dump.txt");
    let starts: Vec<usize> = text
        .iter()
        .enumerate()
        .filter(|&(_, &b)| b == b'\n')
        .map(|(i, _)| i + 1)
        .collect();
    // Cut after a line's record kind and first field, at a third, half and
    // near the end of the file; each cut line's number is its index + 1.
    for n in [starts.len() / 3, starts.len() / 2, starts.len() - 5] {
        let at = starts[n];
        let line = &text[at..];
        let cut = at + line.iter().position(|&b| b == b' ').unwrap() + 2;
        let d = parse(&text[..cut]);
        let first = &d.diagnostics.messages[0];
        assert!(
            first.starts_with(&format!(
                "line {}: the file ended early: its last line stops in the middle of a record (a cut file): ",
                n + 2
            )),
            "cut at {cut}: {:?}",
            &d.diagnostics.messages[..3.min(d.diagnostics.messages.len())]
        );
        assert!(d.diagnostics.skipped_lines >= 1);
        // The cut line's reason is in that message, not in one of its own.
        let line = format!("line {}: ", n + 2);
        assert_eq!(
            d.diagnostics
                .messages
                .iter()
                .filter(|m| m.starts_with(&line))
                .count(),
            1
        );
    }
    // A whole last record without a line end, or a cut at a line's end:
    // nothing ended early.
    for cut in [starts[100] - 1, starts[100]] {
        let d = parse(&text[..cut]);
        assert!(
            d.diagnostics
                .messages
                .iter()
                .all(|m| !m.contains("ended early")),
            "{:?}",
            d.diagnostics.messages
        );
    }
}

#[test]
fn sixty_four_bit_ids_and_leading_zeros() {
    let d = parse(
        b"t 1 T\no ffffffffffffffff 1 8 00000000000000000000001\no 1 1 1000000000000\nr FFFFFFFFFFFFFFFF 1 0\n",
    );
    assert_eq!(d.ids.to_vec(), [u64::MAX, 1]);
    assert_eq!(d.id_hex(ObjectIdx(0)), "ffffffffffffffff");
    assert_eq!(refs_of(&d, "ffffffffffffffff"), ["1"]);
    assert_eq!(d.sizes.get(1), 1 << 48, "sizes are u64, up to 2^48");
    assert_eq!(d.roots.len(), 1, "uppercase hex is hex");
    assert_eq!(d.diagnostics.total(), 0);
}

#[test]
fn sizes_around_two_bytes_survive_the_chunks_narrow_form() {
    // A chunk keeps sizes below 65,535 in 2 bytes and the others apart;
    // repeated records (dropped, one of them large) must not shift them.
    let d = parse(
        b"t 1 T\no 1 1 fffe\no 2 1 ffff\no 1 1 123456\no 3 1 10000\no 4 1 0\n\
          o 2 1 fffffffff\no 5 1 1000000000000\no 6 1 fffe\n",
    );
    assert_eq!(d.ids.to_vec(), [1, 2, 3, 4, 5, 6]);
    assert_eq!(
        d.sizes.to_vec(),
        [0xfffe, 0xffff, 0x10000, 0, 1 << 48, 0xfffe]
    );
}

#[test]
fn degrees_around_two_bytes_survive_the_chunks_narrow_form() {
    // A chunk keeps numbers of references below 65,535 in 2 bytes and the
    // others apart; a dropped record with many must not shift them.
    let many = |n: usize| " 1".repeat(n);
    let text = format!(
        "t 1 T\no 1 1 8{}\no 2 1 8{}\no 1 1 8{}\no 3 1 8{}\no 4 1 8 2\n",
        many(0xfffe),
        many(0xffff),
        many(0x10000),
        many(0x10001),
    );
    let d = parse(text.as_bytes());
    assert_eq!(d.ids.to_vec(), [1, 2, 3, 4]);
    let degrees: Vec<usize> = (0..4).map(|i| d.refs.neighbors(i).len()).collect();
    assert_eq!(degrees, [0xfffe, 0xffff, 0x10001, 1]);
    assert_eq!(refs_of(&d, "4"), ["2"]);
}

#[test]
fn sizes_no_object_can_have_are_skipped() {
    // Over 2^48 bytes (a 48-bit address space): a corrupt line, not a size
    // to add up (sums of such sizes would overflow u64).
    skipped_as(
        b"o 10 1 1000000000001",
        "size 1000000000001 is larger than any object can be (2^48 bytes)",
    );
    skipped_as(
        b"o 10 1 ffffffffffffffff",
        "size ffffffffffffffff is larger than any object can be (2^48 bytes)",
    );
}

#[test]
fn sizes_that_add_up_past_u64_make_the_dump_unusable() {
    // 2^16 + 1 objects of 2^48 bytes: more than 2^64 in total.
    let mut text = String::from("t 1 T\n");
    for i in 0..(1u32 << 16) + 1 {
        text.push_str(&format!("o {i:x} 1 1000000000000\n"));
    }
    let e = parse_text(Path::new("x.txt"), text.as_bytes()).unwrap_err();
    assert_eq!(
        e.reason,
        "object sizes add up to more than 2^64 bytes; not a heap dump"
    );
    // The type line and 2^16 - 1 objects: (2^16 - 1) × 2^48 < 2^64 fits.
    let fits: String = text.lines().take(1 << 16).collect::<Vec<_>>().join("\n");
    let d = parse_text(Path::new("x.txt"), fits.as_bytes()).unwrap();
    assert_eq!(d.total_bytes(), ((1u64 << 16) - 1) << 48);
}

#[test]
fn non_utf8_type_names_are_shown_lossily() {
    let d = parse(b"t 1 Caf\xe9.\xff<T>\no 1 1 8\n");
    assert_eq!(type_of(&d, "1"), "Caf\u{fffd}.\u{fffd}<T>");
    assert_eq!(d.diagnostics.total(), 0);
}

#[test]
fn a_type_redefined_in_its_section_keeps_the_first_name() {
    let d = parse(b"t 1 First\nt 1 Second\no 1 1 8\n");
    assert_eq!(type_of(&d, "1"), "First");
    assert_eq!(d.diagnostics.skipped_lines, 1);
    assert_eq!(
        d.diagnostics.messages,
        ["line 2: type id 1 defined again in this section; the first definition is kept"]
    );
}

#[test]
fn messages_are_capped_at_100_but_counts_are_complete() {
    // 150 bad lines spread over many chunks, interleaved with dangling
    // references so two categories compete for the first 100 messages.
    let mut text = String::from("t 1 T\n");
    for i in 0..150 {
        text.push_str(&format!("o {:x} 1 8 dead\n", 0x1000 + i));
        text.push_str("bogus\n");
    }
    let d = parse(text.as_bytes());
    let diag = &d.diagnostics;
    assert_eq!(diag.skipped_lines, 150);
    assert_eq!(diag.dangling_references, 150);
    assert_eq!(diag.messages.len(), 100);
    // Line 2 is the first object, line 3 the first bogus line, and so on:
    // the first 100 messages are lines 2..=101 in order.
    for (k, m) in diag.messages.iter().enumerate() {
        let line = k + 2;
        let want = if line % 2 == 0 {
            format!(
                "line {line}: reference from {:x} to dead, which is not in the dump; dropped",
                0x1000 + (line - 2) / 2
            )
        } else {
            format!("line {line}: unknown record kind `bogus`")
        };
        assert_eq!(m, &want);
    }
}

#[test]
fn a_dump_concatenated_with_itself() {
    // `cat dump dump`: 150 objects, each rooted. The second copy repeats
    // the type (a skipped line), every object (first record wins) and every
    // root (kept: an object may have several roots).
    let mut one = String::from("t 1 T\n");
    for i in 0..150 {
        one.push_str(&format!("o {:x} 1 8\nr {:x} 1 0\n", 0x100 + i, 0x100 + i));
    }
    let d = parse(format!("{one}{one}").as_bytes());
    let diag = &d.diagnostics;
    assert_eq!(d.objects(), 150);
    assert_eq!(d.roots.len(), 300);
    assert_eq!(diag.duplicate_objects, 150);
    assert_eq!(diag.skipped_lines, 1);
    assert_eq!(diag.messages.len(), 100);
    // Copy 1 is lines 1..=301; line 302 repeats the type, then objects on
    // lines 303, 305, …
    assert_eq!(
        diag.messages[0],
        "line 302: type id 1 defined again in this section; the first definition is kept"
    );
    for (k, m) in diag.messages[1..].iter().enumerate() {
        assert_eq!(
            m,
            &format!(
                "line {}: object {:x} appears again; the first record is kept",
                303 + 2 * k,
                0x100 + k
            )
        );
    }
}

#[test]
fn many_roots_of_missing_objects() {
    let mut text = String::from("t 1 T\no 1 1 8\n");
    for i in 0..250 {
        text.push_str(&format!("r {:x} 1 0\n", 0x1000 + i));
    }
    let d = parse(text.as_bytes());
    assert_eq!(d.diagnostics.missing_root_objects, 250);
    assert_eq!(d.diagnostics.messages.len(), 100);
    assert_eq!(
        d.diagnostics.messages[99],
        "line 102: root for object 1063, which is not in the dump; ignored"
    );
}

#[test]
fn line_numbers_stay_exact_when_every_line_is_its_own_chunk() {
    // Blank lines, CRLF and a last line without newline shift nothing.
    let text = b"\r\n\nt 1 T\r\n  \no 1 1 8 2\r\n\t\nxx\r\no 1 1 8\nr 3 1 0";
    let d = parse(text);
    assert_eq!(
        d.diagnostics.messages,
        [
            "line 5: reference from 1 to 2, which is not in the dump; dropped",
            "line 7: unknown record kind `xx`",
            "line 8: object 1 appears again; the first record is kept",
            "line 9: root for object 3, which is not in the dump; ignored",
        ]
    );
}

#[test]
fn a_utf8_byte_order_mark_is_not_part_of_line_1() {
    let plain = fixture_bytes("seed004_corrected.txt");
    let mut bom = b"\xef\xbb\xbf".to_vec();
    bom.extend_from_slice(&plain);
    let d = parse(&bom);
    assert_eq!(d.app_domains[1].name, "bubblecs.exe");
    assert_eq!(fingerprint(&d), fingerprint(&parse(&plain)));
}

#[test]
fn unusable_input_is_an_error_naming_the_reason() {
    let err = |bytes: &[u8]| parse_text(Path::new("x.txt"), bytes).unwrap_err();
    assert_eq!(err(b"").reason, "the file is empty");
    assert!(err(b"\n\n  \r\n").reason.starts_with("no object records"));
    assert!(err(b"t 1 T\nr 1 1 0\n")
        .reason
        .starts_with("no object records"));
    // Text with no record in its first lines: the formats heaptui reads,
    // and the first bytes, escaped.
    let junk = err(b"hello\nworld\n");
    assert_eq!(
        junk.reason,
        "not a heap dump heaptui reads (HPROF, V8 heap snapshot, .NET gcdump, RPM text): \
         no record of any in its first 2 lines; it starts with \"hello\\x0aworld\\x0a\""
    );
    let js = err(b"// server.js\nconst http = require('http');\n");
    assert!(
        js.reason
            .contains("it starts with \"// server.js\\x0aconst http \u{2026}\""),
        "{}",
        js.reason
    );
    // Binary: in hex.
    let class = err(b"\xca\xfe\xba\xbe\x00\x00\x00\x3d\x00\x0f");
    assert!(
        class
            .reason
            .ends_with("it starts with bytes ca fe ba be 00 00 00 3d 00 0f"),
        "{}",
        class.reason
    );
    // Records further down than the first lines are looked for no more,
    // but a dump with records among unparsable lines is a dump.
    let d = parse_text(Path::new("x.txt"), b"# a note\no 1 1 8\nr 1 1 0\n").unwrap();
    assert_eq!(d.objects(), 1);
    // gzip magic, then binary.
    let gz = [
        0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x4b, 0x4c,
    ];
    assert!(err(&gz).reason.contains("binary data"));
    assert_eq!(err(b"").path, Path::new("x.txt"));
    // UTF-16 (e.g. Windows PowerShell's `>`) is named as such.
    assert!(err(b"\xff\xfeo\x00 \x001\x00")
        .reason
        .starts_with("UTF-16 text"));
    assert!(err(b"\xfe\xff\x00o\x00 \x001")
        .reason
        .starts_with("UTF-16 text"));
}

#[test]
fn a_generated_heap_parses_the_same_in_small_chunks() {
    // Two AppDomains, forward references, statics, weak handles: thousands
    // of chunk boundaries at 1 KiB, fewer at 64 KiB, none by default.
    let bytes = heaptui_testkit::gen::generate_bytes(&heaptui_testkit::gen::GenOptions {
        objects: 20_000,
        seed: 7,
    });
    let whole = parse_text(Path::new("g.txt"), &bytes).unwrap();
    assert!(whole.objects() > 19_000);
    assert!(whole.app_domains.len() >= 3, "two sections + implicit");
    let expected = fingerprint(&whole);
    for chunk in [1 << 10, 64 << 10] {
        let d = parse_text_with_chunk(Path::new("g.txt"), &bytes, chunk).unwrap();
        assert!(fingerprint(&d) == expected, "chunk size {chunk}");
    }
    // Every line of the generator's output is a record.
    let lines = bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .count();
    assert_eq!(whole.records.total(), lines as u64);
    assert_eq!(whole.diagnostics.total(), 0);
}

#[test]
fn first_record_wins_for_many_scattered_repeats() {
    // 40,000 ids, each written 4 times at pseudo-random places; the size
    // of a record is its line number, so the kept size names the record.
    // Exercises the parallel id index's compare-and-swap on repeated ids.
    let ids = 40_000u64;
    let mut order: Vec<u64> = (0..4 * ids).map(|k| k % ids).collect();
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for i in (1..order.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        order.swap(i, (x % (i as u64 + 1)) as usize);
    }
    let mut text = String::from("t 1 T\n");
    let mut first_line = vec![0u64; ids as usize];
    for (k, &id) in order.iter().enumerate() {
        let line = k as u64 + 2;
        if first_line[id as usize] == 0 {
            first_line[id as usize] = line;
        }
        text.push_str(&format!(
            "o {:x} 1 {line:x} {:x}\n",
            0x10_0000 + id * 8,
            0x10_0000 + ((id + 1) % ids) * 8
        ));
    }
    let d = parse_text(Path::new("r.txt"), text.as_bytes()).unwrap();
    assert_eq!(d.objects() as u64, ids);
    assert_eq!(d.diagnostics.duplicate_objects, 3 * ids);
    for o in 0..d.objects() as u32 {
        let id = (d.ids.get(o as usize) - 0x10_0000) / 8;
        assert_eq!(
            d.sizes.get(o as usize),
            first_line[id as usize],
            "object {id}"
        );
        // The kept record's reference resolves to the next id's kept index.
        let next = d.refs.neighbors(o);
        assert_eq!(next.len(), 1);
        assert_eq!(
            d.ids.get(next.get(0) as usize),
            0x10_0000 + ((id + 1) % ids) * 8
        );
    }
    // Objects are in file order of their first record.
    assert!(d
        .ids
        .to_vec()
        .windows(2)
        .all(|w| first_line[((w[0] - 0x10_0000) / 8) as usize]
            < first_line[((w[1] - 0x10_0000) / 8) as usize]));
    let chunked = parse_text_with_chunk(Path::new("r.txt"), text.as_bytes(), 4096).unwrap();
    assert!(fingerprint(&chunked) == fingerprint(&d));
}

#[test]
fn root_kinds_and_flags_over_32_bits_are_kept_cut_to_fit_and_explained() {
    let d = parse(
        b"t 1 T\no 1 1 8\no 2 1 8\nr 1 100000000 0\nr 2 1 300000002\nr 1 ffffffffffffffff 1ffffffff\nr 2 5 0\n",
    );
    assert_eq!(
        d.roots
            .iter()
            .map(|r| (r.object.raw(), r.kind, r.flags, r.is_strong()))
            .collect::<Vec<_>>(),
        [
            (0, u32::MAX, 0, true),
            // The weak bit is below 32 bits: still weak.
            (1, 1, 2, false),
            (0, u32::MAX, u32::MAX, false),
            (1, 5, 0, true),
        ]
    );
    let diag = &d.diagnostics;
    assert_eq!(diag.skipped_lines, 0);
    assert_eq!(diag.clamped_roots, 3);
    assert_eq!(diag.total(), 3);
    assert_eq!(
        diag.messages,
        [
            "line 4: root kind 100000000 is out of range (over 32 bits); kept as kind ffffffff",
            "line 5: root flags 300000002 are out of range (over 32 bits); kept as flags 2",
            "line 6: root kind ffffffffffffffff and flags 1ffffffff are out of range (over 32 bits); kept as kind ffffffff, flags ffffffff",
        ]
    );
    assert_eq!(d.records.roots, 4);
}
