//! Dumps written to hurt: endless or special files, sizes and ids chosen to
//! blow up memory or time, values past the model's widths, and text meant
//! for the terminal rather than for the reader. Each test pins one attack.

use heaptui_testkit::common;

use std::path::Path;
use std::time::Duration;

use assert_cmd::Command;

use heaptui_core::model::ObjectIdx;
use heaptui_core::testing::parse_text;

use common::fixture;

fn heaptui() -> Command {
    let mut c = common::heaptui();
    // A regression must fail the test, not hang it.
    c.timeout(Duration::from_secs(60));
    c
}

/// `/dev/zero` never ends and holds only NULs: refused after its first
/// bytes, with one line and exit code 2 (it used to be read whole).
#[test]
fn an_endless_device_is_refused_after_its_first_bytes() {
    let out = heaptui().args(["report", "/dev/zero"]).output().unwrap();
    common::assert_refused(&out, "/dev/zero", "binary data");
}

/// A pipe of real dump text still works.
#[test]
fn a_dump_piped_through_stdin_is_read() {
    let text = std::fs::read(fixture("two_appdomains.txt")).unwrap();
    let out = heaptui()
        .args(["report", "/dev/stdin", "--json"])
        .write_stdin(text)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["summary"]["objects"].as_u64().unwrap() > 0);
}

/// Type ids above 2^20 in many small sections keep their scoping; the
/// memory side is pinned by the type tables' unit test.
#[test]
fn many_small_sections_with_large_type_ids() {
    let mut text = String::new();
    for s in 0..500u64 {
        text += &format!("a 1 d{s}\nt fffff T{s}\no {:x} fffff 10\nc d{s}\n", s + 1);
    }
    let d = parse_text(Path::new("h.txt"), text.as_bytes()).unwrap();
    assert_eq!(d.objects(), 500);
    assert_eq!(d.app_domains.len(), 501);
    assert_eq!(d.type_name(ObjectIdx(499)), "T499");
    assert_eq!(d.diagnostics.total(), 0);
}

/// Object ids that the unkeyed id hash sent to one slot: the index reads
/// about as many slots for them as for ordinary ids.
#[test]
fn crafted_object_ids_cost_what_ordinary_ones_do() {
    // The inverse of 0x9E3779B97F4A7C15 mod 2^64 (Newton's iteration).
    let c: u64 = 0x9E37_79B9_7F4A_7C15;
    let inverse = (0..6).fold(c, |x: u64, _| {
        x.wrapping_mul(2u64.wrapping_sub(c.wrapping_mul(x)))
    });
    assert_eq!(inverse.wrapping_mul(c), 1);
    let dump = |ids: &mut dyn Iterator<Item = u64>| {
        let mut text = String::from("t 1 T\n");
        for id in ids {
            text += &format!("o {id:x} 1 8\n");
        }
        parse_text(Path::new("h.txt"), text.as_bytes()).unwrap()
    };
    let n = 20_000u64;
    let crafted = dump(&mut (1..=n).map(|j| j.wrapping_mul(inverse)));
    let ordinary = dump(&mut (0..n).map(|i| 0x1c_0000 + 8 * i));
    assert_eq!(crafted.objects(), n as usize);
    let probes = |d: &heaptui_core::model::Model| d.id_index.probes(&d.ids);
    assert!(
        probes(&crafted) <= 3 * probes(&ordinary).max(2 * n),
        "crafted {} vs ordinary {}",
        probes(&crafted),
        probes(&ordinary)
    );
}

/// A type name, an AppDomain name and a bad line that hold terminal escape
/// sequences (set the window title, red background): no ESC or BEL byte
/// reaches the report, text or JSON; the escaped text is shown instead.
#[test]
fn terminal_escapes_in_a_dump_never_reach_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("escapes.txt");
    let mut dump =
        b"a 1 app\x1b]2;x\x07.exe\nt 1 Evil\x1b[41mType\no 1 1 8\nr 1 1 0\no \x1b]2;x\x07 1 8\n"
            .to_vec();
    // Enough ordinary lines that the control bytes are not mistaken for
    // binary data.
    for id in 2..40 {
        dump.extend(format!("o {id:x} 1 8 1\n").bytes());
    }
    dump.extend(b"c app\n");
    std::fs::write(&path, dump).unwrap();
    for json in [false, true] {
        let mut cmd = heaptui();
        cmd.arg("report").arg(&path);
        if json {
            cmd.arg("--json");
        }
        let out = cmd.output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            !text.bytes().any(|b| b == 0x1b || b == 0x07),
            "raw escape in {text}"
        );
        for shown in [
            "Evil\\x1b[41mType",
            "app\\x1b]2;x\\x07.exe",
            "`\\x1b]2;x\\x07`",
        ] {
            let shown = if json {
                shown.replace('\\', "\\\\")
            } else {
                shown.to_string()
            };
            assert!(text.contains(&shown), "{shown} not in {text}");
        }
    }
}

/// A V8 snapshot whose constructor name and property name hold terminal
/// escapes: the text report shows them escaped, in every format (the
/// import boundary makes every importer's names printable).
#[test]
fn escapes_in_native_names_never_reach_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("evil.heapsnapshot");
    let snapshot = r#"{"snapshot":{"meta":{"node_fields":["type","name","id","self_size","edge_count"],"node_types":[["synthetic","object"],"string","number","number","number"],"edge_fields":["type","name_or_index","to_node"],"edge_types":[["property","element"],"string_or_number","node"]},"node_count":2,"edge_count":1},
"nodes":[0,0,1,0,1,1,1,3,16,0],
"edges":[0,2,5],
"strings":["","\u001b]2;pwned\u0007Evil","x\u001b[41m"]}"#;
    std::fs::write(&path, snapshot).unwrap();
    let out = heaptui()
        .args(["report", "--no-cache"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text}");
    assert!(text.contains("\\x1b]2;pwned\\x07Evil"), "{text}");
}

/// A mapped dump cut while the parser's threads walk it: several threads
/// fault at once and each runs the SIGBUS handler. One message, with one
/// prefix (their writes once interleaved into "heaptui: heaptui: …").
#[test]
fn a_dump_cut_under_parallel_readers_is_reported_once() {
    use std::os::unix::process::ExitStatusExt;
    use std::time::Instant;
    // A sparse 4 GiB dump: seconds of parsing in 8 MiB chunks on every
    // thread. It is cut as soon as the process maps it.
    let (_dir, path, file) = common::sparse_dump();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("heaptui"))
        .args(["report", "--no-cache"])
        .arg(&path)
        .env("RAYON_NUM_THREADS", "8")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let maps = format!("/proc/{}/maps", child.id());
    let name = path.display().to_string();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !std::fs::read_to_string(&maps)
        .unwrap_or_default()
        .contains(&name)
    {
        assert!(Instant::now() < deadline, "the dump was never mapped");
        assert!(child.try_wait().unwrap().is_none(), "heaptui ended early");
        std::thread::sleep(Duration::from_millis(1));
    }
    // Let the parser's threads spread over the file first.
    std::thread::sleep(Duration::from_millis(200));
    file.set_len(0).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.signal(), None, "killed by a signal");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(
        err,
        format!(
            "heaptui: {name}: the dump file shrank while it was being read \
             (truncated by another process); nothing was written\n"
        )
    );
}

/// The gcdump fuzz target's one finding (a "slow unit": 10 s under the
/// fuzzer's instrumentation on a loaded machine): PerfView's test dump with
/// 14 k bytes mutated, giving 12,683 dangling references and 226 corrupt
/// records. It is read with diagnostics, in a fraction of a second.
#[test]
fn the_fuzzers_slow_gcdump_is_read_quickly() {
    let started = std::time::Instant::now();
    let out = heaptui()
        .args(["report", "--no-cache", "--json"])
        .arg(fixture("fuzz_gcdump_slow_unit.gcdump"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["diagnostics"]["dangling_references"], 12_683);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

/// A file name with an escape sequence or a bidi override is shown
/// escaped in the report's header and in the exit-2 line (it used to
/// retitle the terminal).
#[test]
fn escapes_in_file_names_never_reach_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let name = "x\x1b]2;retitled\x07\u{202e}txt.dump";
    let path = dir.path().join(name);
    std::fs::copy(fixture("two_appdomains.txt"), &path).unwrap();
    let out = heaptui()
        .args(["report", "--no-cache", "--top", "1"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("x\\x1b]2;retitled\\x07\\u{202e}txt.dump"),
        "{text}"
    );
    assert!(!text.contains(['\x1b', '\x07', '\u{202e}']));
    std::fs::write(&path, b"\0\0\0 not a dump").unwrap();
    let out = heaptui().args(["report"]).arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("x\\x1b]2;retitled"), "{err}");
    assert!(!err.contains(['\x1b', '\x07', '\u{202e}']), "{err:?}");
}
