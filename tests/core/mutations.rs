//! Random mutations of a small dump of every format heaptui reads (RPM text,
//! HPROF, V8 heap snapshot, .NET gcdump, gzip, and a reopen-cache file) are
//! run through the real binary (`heaptui report`): each ends with exit
//! status 0 (read, perhaps with diagnostics) or 2 (refused in one line),
//! never a panic (101) or a death by signal. Many more mutations of the
//! same inputs run in-process through the library, which is where the
//! importers' bugs would show first.
//!
//! The generator is seeded (`HEAPTUI_MUTATION_SEED` overrides the seed,
//! `HEAPTUI_MUTATIONS` the count per format through the binary): a failure
//! names its seed and case, and the input is kept under
//! `target/mutation-failures/` to become a regression test.

use heaptui_testkit::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use heaptui_core::analysis::Analysis;
use heaptui_core::graph::duplicates::DuplicateOptions;
use heaptui_core::progress::Progress;

use common::fixture_bytes;
use heaptui_testkit::rng::SplitMix64 as Rng;

/// Values that sit on the edges of the widths a parser reads.
const INTERESTING: &[&[u8]] = &[
    &[0],
    &[0xff],
    &[0x7f],
    &[0x80],
    &[0xff, 0xff, 0xff, 0xff],
    &[0x7f, 0xff, 0xff, 0xff],
    &[0x80, 0, 0, 0],
    &[0, 0, 0, 0],
    &[0xff; 8],
    b"ffffffffffffffff",
    b"-1",
    b"\n",
    b" ",
    b"0",
    b"\"",
    b"[",
    b"]",
    b"{",
    b",",
    b"o 1 1 ffffffffffff 1\n",
    b"r 1 ffffffff 0\n",
];

/// One to four mutations of `input`: bytes flipped, overwritten with edge
/// values, inserted, deleted, duplicated, or the file cut short.
fn mutate(input: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut b = input.to_vec();
    for _ in 0..1 + rng.index(4) {
        let len = b.len().max(1);
        let at = rng.index(len).min(b.len());
        match rng.index(8) {
            0 => {
                if let Some(x) = b.get_mut(at) {
                    *x ^= 1 << rng.index(8);
                }
            }
            1 => {
                if let Some(x) = b.get_mut(at) {
                    *x = rng.next_u64() as u8;
                }
            }
            2 => {
                let v = INTERESTING[rng.index(INTERESTING.len())];
                let end = (at + v.len()).min(b.len());
                b.splice(at..end, v.iter().copied());
            }
            3 => {
                let v = INTERESTING[rng.index(INTERESTING.len())];
                b.splice(at..at, v.iter().copied());
            }
            4 => {
                let end = (at + 1 + rng.index(64)).min(b.len());
                b.drain(at..end);
            }
            5 => {
                let end = (at + 1 + rng.index(256)).min(b.len());
                let copy = b[at..end].to_vec();
                let to = rng.index(b.len() + 1);
                b.splice(to..to, copy);
            }
            6 => b.truncate(at),
            _ => {
                // A run of random bytes (lengths, counts, ids).
                let n = 1 + rng.index(8);
                let end = (at + n).min(b.len());
                let v: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
                b.splice(at..end, v);
            }
        }
    }
    b
}

// ------------------------------------------------------------ the inputs

/// A small HPROF heap: strings, two classes (one with an object and an int
/// field), instances, an object array, a char array, roots.
fn small_hprof() -> Vec<u8> {
    let id = |v: u64| v.to_be_bytes();
    let mut out = b"JAVA PROFILE 1.0.2\0".to_vec();
    out.extend(8u32.to_be_bytes());
    out.extend(0x18c_0000_0000u64.to_be_bytes());
    let record = |out: &mut Vec<u8>, tag: u8, body: &[u8]| {
        out.push(tag);
        out.extend(0u32.to_be_bytes());
        out.extend((body.len() as u32).to_be_bytes());
        out.extend(body);
    };
    for (sid, text) in [
        (1u64, "java.lang.Object"),
        (2, "Node"),
        (3, "next"),
        (4, "n"),
    ] {
        let mut b = id(sid).to_vec();
        b.extend(text.as_bytes());
        record(&mut out, 0x01, &b);
    }
    for (serial, class, name) in [(1u32, 0x100u64, 1u64), (2, 0x200, 2)] {
        let mut b = serial.to_be_bytes().to_vec();
        b.extend(id(class));
        b.extend(0u32.to_be_bytes());
        b.extend(id(name));
        record(&mut out, 0x02, &b);
    }
    let mut seg = Vec::new();
    let class_dump = |seg: &mut Vec<u8>, class: u64, sup: u64, size: u32, fields: &[(u64, u8)]| {
        seg.push(0x20);
        seg.extend(id(class));
        seg.extend(0u32.to_be_bytes());
        seg.extend(id(sup));
        for _ in 0..5 {
            seg.extend(id(0));
        }
        seg.extend(size.to_be_bytes());
        seg.extend(0u16.to_be_bytes());
        seg.extend(0u16.to_be_bytes());
        seg.extend((fields.len() as u16).to_be_bytes());
        for &(name, ty) in fields {
            seg.extend(id(name));
            seg.push(ty);
        }
    };
    class_dump(&mut seg, 0x100, 0, 0, &[]);
    class_dump(&mut seg, 0x200, 0x100, 12, &[(3, 2), (4, 10)]);
    for (obj, next, n) in [
        (0x1000u64, 0x1010u64, 7u32),
        (0x1010, 0x1020, 7),
        (0x1020, 0, 9),
    ] {
        seg.push(0x21);
        seg.extend(id(obj));
        seg.extend(0u32.to_be_bytes());
        seg.extend(id(0x200));
        seg.extend(12u32.to_be_bytes());
        seg.extend(id(next));
        seg.extend(n.to_be_bytes());
    }
    seg.push(0x22);
    seg.extend(id(0x2000));
    seg.extend(0u32.to_be_bytes());
    seg.extend(2u32.to_be_bytes());
    seg.extend(id(0x100));
    seg.extend(id(0x1000));
    seg.extend(id(0x1020));
    seg.push(0x23);
    seg.extend(id(0x3000));
    seg.extend(0u32.to_be_bytes());
    seg.extend(3u32.to_be_bytes());
    seg.push(5);
    seg.extend([0, b'a', 0, b'b', 0, b'c']);
    seg.push(0x05);
    seg.extend(id(0x100));
    seg.push(0x01);
    seg.extend(id(0x2000));
    seg.extend(id(0x9));
    seg.push(0x01);
    seg.extend(id(0x3000));
    seg.extend(id(0xa));
    record(&mut out, 0x1c, &seg);
    record(&mut out, 0x2c, &[]);
    out
}

/// A small V8 heap snapshot: a root, two objects sharing a string.
const SMALL_SNAPSHOT: &str = r#"{"snapshot":{"meta":{"node_fields":["type","name","id","self_size","edge_count","trace_node_id","detachedness"],"node_types":[["hidden","array","string","object","code","closure","regexp","number","native","synthetic","concatenated string","sliced string","symbol","bigint","object shape"],"string","number","number","number","number","number"],"edge_fields":["type","name_or_index","to_node"],"edge_types":[["context","element","property","internal","hidden","shortcut","weak"],"string_or_number","node"]},"node_count":4,"edge_count":4},
"nodes":[9,1,1,0,2,0,0,3,2,3,32,1,0,0,3,2,5,32,1,0,0,2,3,7,20,0,0,0],
"edges":[2,4,7,2,5,14,2,6,21,2,6,21],
"strings":["","(GC roots)","Thing","hello","a","b","s"]}
"#;

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// The inputs mutated, by format name. The gcdump is the one real dump
/// (PerfView's test file, 213 KiB); the others are small, so a run is
/// mostly the parser's edges rather than its inner loops.
fn inputs() -> Vec<(&'static str, Vec<u8>)> {
    let text = fixture_bytes("suspects.txt");
    vec![
        ("text", text.clone()),
        ("hprof", small_hprof()),
        ("heapsnapshot", SMALL_SNAPSHOT.as_bytes().to_vec()),
        ("gcdump", fixture_bytes("perfview_test1.gcdump")),
        ("gz", gzip(&fixture_bytes("dominator_shapes.txt"))),
    ]
}

// ------------------------------------------------------ through the binary

/// Mutations per format through the binary. The default, 1,000 in all
/// (167 for each of the six inputs), takes 12 s on two busy cores; a
/// process per case is the cost (1,000 per format took 1 min 45 s there,
/// see docs/fuzzing.md). The in-process test covers many more.
fn cases_per_format() -> usize {
    std::env::var("HEAPTUI_MUTATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(167)
}

fn seed() -> u64 {
    std::env::var("HEAPTUI_MUTATION_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x4ea9_7001)
}

/// Keeps a failing input for a regression test; returns where.
fn keep(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mutation-failures");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Runs `heaptui report` on `dump`, killing it after a minute: `None` when
/// it ended with 0 or 2, else what went wrong.
fn run_report(dump: &Path, cache_dir: Option<&Path>) -> Option<String> {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("heaptui"));
    cmd.arg("report")
        .arg(dump)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .env_remove("HEAPTUI_LOG");
    match cache_dir {
        Some(dir) => {
            cmd.env("XDG_CACHE_HOME", dir).env("HEAPTUI_CACHE_MIN", "0");
        }
        None => {
            cmd.arg("--no-cache");
        }
    }
    let mut child = cmd.spawn().unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            return Some("still running after 60 s".into());
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let mut err = String::new();
    use std::io::Read;
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    match status.code() {
        Some(0) | Some(2) => None,
        Some(c) => Some(format!("exit {c}: {err}")),
        None => Some(format!("killed by a signal ({status:?}): {err}")),
    }
}

/// One case by index, in a worker's own directory: `None` when it passed,
/// else what went wrong and the input.
type Case<'a> = dyn Fn(usize, &Path) -> Option<(String, Vec<u8>)> + Sync + 'a;

/// Runs every case of one format through the binary on `workers` threads,
/// each case given by index so the set does not depend on scheduling.
fn through_binary(format: &str, cases: usize, workers: usize, run: &Case<'_>) -> Vec<String> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                let dir = tempfile::tempdir().unwrap();
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= cases {
                        break;
                    }
                    if let Some((why, bytes)) = run(i, dir.path()) {
                        let kept = keep(&format!("{format}-{:x}-{i}", seed()), &bytes);
                        failures.lock().unwrap().push(format!(
                            "{format} case {i}: {why} (input: {})",
                            kept.display()
                        ));
                    }
                }
            });
        }
    });
    failures.into_inner().unwrap()
}

fn workers() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 8))
}

/// Case `i` of `format`: its own generator, so a case can be replayed alone.
fn rng_for(format: &str, i: usize) -> Rng {
    let salt = format
        .bytes()
        .fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64));
    Rng(seed() ^ salt.wrapping_mul(0x1000_0001) ^ (i as u64).wrapping_mul(0x9E37_79B9))
}

#[test]
fn mutated_dumps_exit_0_or_2_through_the_binary() {
    let cases = cases_per_format();
    let started = Instant::now();
    let mut failures = Vec::new();
    for (format, input) in inputs() {
        let t = Instant::now();
        failures.extend(through_binary(format, cases, workers(), &|i, dir| {
            let bytes = mutate(&input, &mut rng_for(format, i));
            let path = dir.join("dump");
            std::fs::write(&path, &bytes).unwrap();
            run_report(&path, None).map(|why| (why, bytes))
        }));
        eprintln!("{format}: {cases} mutations in {:.1?}", t.elapsed());
    }
    eprintln!("all formats: {:.1?}", started.elapsed());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A valid cache file of a small dump, mutated and left where the binary
/// looks for it: read back (0), or noticed, removed and rebuilt (0); a
/// mutation the checks miss must still never panic.
#[test]
fn mutated_cache_files_exit_0_or_2_through_the_binary() {
    let cases = cases_per_format();
    let t = Instant::now();
    let failures = through_binary("cache", cases, workers(), &|i, dir| {
        let dump = dir.join("dump.txt");
        let cache = dir.join("cache");
        let file = match std::fs::read_dir(cache.join("heaptui")) {
            Ok(mut d) => d.next().map(|e| e.unwrap().path()),
            Err(_) => None,
        };
        // The first case of each worker writes the dump and its cache file.
        let file = match file {
            Some(f) if dump.exists() => f,
            _ => {
                std::fs::write(&dump, fixture_bytes("suspects.txt")).unwrap();
                assert_eq!(run_report(&dump, Some(&cache)), None);
                let mut d = std::fs::read_dir(cache.join("heaptui")).unwrap();
                let f = d.next().expect("a cache file").unwrap().path();
                std::fs::copy(&f, dir.join("pristine")).unwrap();
                f
            }
        };
        let pristine = std::fs::read(dir.join("pristine")).unwrap();
        let bytes = mutate(&pristine, &mut rng_for("cache", i));
        std::fs::write(&file, &bytes).unwrap();
        run_report(&dump, Some(&cache)).map(|why| (why, bytes))
    });
    eprintln!("cache: {cases} mutations in {:.1?}", t.elapsed());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ------------------------------------------------------------- in-process

/// Many more mutations through the library: import, graph, dominators and
/// duplicates (with a small work budget), as `report` runs them.
#[test]
fn many_more_mutations_in_process() {
    let per_format: usize = std::env::var("HEAPTUI_MUTATIONS_IN_PROCESS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5000);
    let options = DuplicateOptions {
        budget_per_type: Some(10_000),
        ..DuplicateOptions::default()
    };
    for (format, input) in inputs() {
        // The unmutated input is a usable dump: the mutations start from
        // the importer's paths, not from its first refusal.
        let model = heaptui_core::import::import_bytes(Path::new("m"), &input)
            .unwrap_or_else(|e| panic!("{format}: {e}"));
        assert!(model.objects() > 2, "{format}");
        assert_eq!(
            model.diagnostics.total(),
            0,
            "{format}: {:?}",
            model.diagnostics
        );
        // The gcdump is 50 times the size of the others: fewer of it.
        let n = if format == "gcdump" {
            per_format / 10
        } else {
            per_format
        };
        let t = Instant::now();
        for i in 0..n {
            let bytes = mutate(&input, &mut rng_for(format, 1_000_000 + i));
            let result = std::panic::catch_unwind(|| {
                if let Ok(model) = heaptui_core::import::import_bytes(Path::new("m"), &bytes) {
                    let _ = Analysis::from_dump(model, &options, &Progress::new());
                }
            });
            if result.is_err() {
                let kept = keep(&format!("{format}-in-process-{:x}-{i}", seed()), &bytes);
                panic!("{format} case {i} panicked (input: {})", kept.display());
            }
        }
        eprintln!("{format}: {n} in-process mutations in {:.1?}", t.elapsed());
    }
}
