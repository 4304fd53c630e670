//! The reopen cache: a second open reads back exactly what the first
//! analysed, and a cache file that is truncated, altered, written for
//! another dump, by another version or left half-written is noticed,
//! removed and rebuilt — never trusted.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use heaptui_core::analysis::pipeline::{Input, StageResult};
use heaptui_core::analysis::Analysis;
use heaptui_core::cache::{self, CacheOptions, Note};
use heaptui_core::graph::duplicates::DuplicateOptions;
use heaptui_core::import::ImportOptions;
use heaptui_core::model::ObjectIdx;
use heaptui_core::progress::Progress;
use heaptui_core::report::{write_json, ReportOptions};

fn options(dir: &Path) -> CacheOptions {
    CacheOptions {
        dir: dir.join("cache"),
        min_file_bytes: 0,
        max_bytes: u64::MAX,
    }
}

/// Opens `dump` through the cache; returns the analysis, the stages seen
/// and the notes.
fn open(dump: &Path, cache: &CacheOptions) -> (Analysis, Vec<&'static str>, Vec<String>) {
    let notes = Arc::new(Mutex::new(Vec::new()));
    let sink = notes.clone();
    let note: Note = Arc::new(move |l| sink.lock().unwrap().push(l));
    let mut stages = Vec::new();
    let (a, pending) = cache::run(
        &Input::File(dump.to_path_buf(), ImportOptions::default()),
        &DuplicateOptions::default(),
        Some(cache),
        &Progress::new(),
        &mut |s| {
            stages.push(match s {
                StageResult::Imported { cached: false, .. } => "imported",
                StageResult::Imported { cached: true, .. } => "read back",
                StageResult::Graph { .. } => "graph",
                StageResult::Dominators { .. } => "dominators",
                StageResult::Duplicates { .. } => "duplicates",
            });
            true
        },
        note,
    )
    .unwrap();
    pending.wait();
    let notes = notes.lock().unwrap().clone();
    (a, stages, notes)
}

/// The whole JSON report with every object, less the timings.
fn json(a: &Analysis) -> String {
    let mut out = Vec::new();
    let opts = ReportOptions {
        objects: true,
        top: 0,
        ..ReportOptions::default()
    };
    write_json(&mut out, a, &opts).unwrap();
    let text = String::from_utf8(out).unwrap();
    text[..text.find("\"timings_ms\"").unwrap()].to_string()
}

fn cache_files(cache: &CacheOptions) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(&cache.dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

fn fixture_copy(dir: &Path, name: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name);
    let dst = dir.join(name);
    std::fs::copy(src, &dst).unwrap();
    dst
}

#[test]
fn a_second_open_reads_back_exactly_the_first_analysis() {
    let dir = tempfile::tempdir().unwrap();
    let cache = options(dir.path());
    for name in [
        "demo.dump.txt",
        "two_appdomains.txt",
        "weak_roots.txt",
        "dup_seed_held.txt",
    ] {
        let dump = fixture_copy(dir.path(), name);
        let first_use = !cache.dir.exists();
        let (first, stages, notes) = open(&dump, &cache);
        assert_eq!(stages, ["imported", "graph", "dominators", "duplicates"]);
        if first_use {
            // The directory's first use says where it is, what it took
            // and how it is bounded.
            assert_eq!(notes.len(), 1, "{notes:?}");
            let dir = cache.dir.display().to_string();
            assert!(notes[0].starts_with("kept this analysis ("), "{notes:?}");
            assert!(
                notes[0].contains(&format!(" in {dir} to reopen")),
                "{notes:?}"
            );
            assert!(notes[0].contains("--no-cache"), "{notes:?}");
        } else {
            assert!(notes.is_empty(), "{notes:?}");
        }
        let (second, stages, notes) = open(&dump, &cache);
        // Said so, for the status line and the report's timings.
        assert_eq!(stages, ["read back", "graph", "dominators", "duplicates"]);
        assert!(notes.is_empty(), "{notes:?}");
        assert!(!first.timings.cached && second.timings.cached, "{name}");
        assert_eq!(json(&first), json(&second), "{name}");
        assert_eq!(first.summary, second.summary, "{name}");
        assert_eq!(first.roots, second.roots, "{name}");
        assert_eq!(first.largest, second.largest, "{name}");
        // The id index is rebuilt on the first look-up.
        let d = second.dump();
        let last = d.ids.len() - 1;
        assert_eq!(
            d.index_of(d.ids.get(last)),
            Some(ObjectIdx::from_usize(last)),
            "{name}"
        );
        assert_eq!(d.index_of(u64::MAX - 3), None, "{name}");
        // The big arrays are used where they lie in the mapped file, not
        // copied; the first analysis owns its arrays.
        let mapped = [
            d.ids.is_mapped(),
            d.sizes.is_mapped(),
            d.refs.targets.is_mapped(),
            second.graph.retainers.is_mapped(),
            second.dom.idom.is_mapped(),
            second.dom.retained_arrays().0.is_mapped(),
            second.dom.retained_arrays().1.is_mapped(),
            second.dom.at_preorder.is_mapped(),
        ];
        assert_eq!(mapped, [true; 8], "{name}");
        assert!(!first.dump().sizes.is_mapped() && !first.dom.idom.is_mapped());
    }
    assert_eq!(cache_files(&cache).len(), 4);
}

#[test]
fn a_damaged_cache_is_noticed_removed_and_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let cache = options(dir.path());
    let dump = fixture_copy(dir.path(), "demo.dump.txt");
    let (fresh, _, _) = open(&dump, &cache);
    let expected = json(&fresh);
    let file = cache_files(&cache).pop().unwrap();
    let good = std::fs::read(&file).unwrap();
    let mut damages: Vec<(&str, Vec<u8>)> = vec![
        ("truncated", good[..good.len() / 2].to_vec()),
        ("empty", Vec::new()),
        (
            "cut by a crash before the trailer",
            good[..good.len() - 3].to_vec(),
        ),
    ];
    let mut older = good.clone();
    older[8] = older[8].wrapping_sub(1);
    damages.push(("an older version", older));
    for at in [good.len() / 3, good.len() / 2, good.len() - 40] {
        let mut flipped = good.clone();
        flipped[at] ^= 0x10;
        damages.push(("a flipped byte", flipped));
    }
    for (what, bytes) in damages {
        std::fs::write(&file, &bytes).unwrap();
        let (a, _, notes) = open(&dump, &cache);
        assert_eq!(json(&a), expected, "{what}");
        // A flipped padding byte changes nothing and needs no note.
        if bytes.len() != good.len() || what != "a flipped byte" || !notes.is_empty() {
            assert_eq!(notes.len(), 1, "{what}: {notes:?}");
            // A late section's damage is found after the first stages
            // (checked) were shown: only the duplicate sets are made again.
            assert!(
                notes[0].contains("analysing the dump again")
                    || notes[0].contains("detecting the duplicate sets again"),
                "{what}: {notes:?}"
            );
        }
        // Rebuilt: the file is whole again.
        assert_eq!(std::fs::read(&file).unwrap().len(), good.len(), "{what}");
    }
}

/// Where section `tag` lies in a cache file (cache/layout.rs's table:
/// per section tag u32, width u32, offset u64, length u64, crc u32, pad).
fn section(file: &[u8], tag: u32) -> std::ops::Range<usize> {
    let u32_at = |at: usize| u32::from_le_bytes(file[at..at + 4].try_into().unwrap());
    let u64_at = |at: usize| u64::from_le_bytes(file[at..at + 8].try_into().unwrap()) as usize;
    let trailer = file.len() - 16;
    let (table, count) = (u64_at(trailer), u32_at(trailer + 8) as usize);
    (0..count)
        .map(|i| table + 32 * i)
        .find(|&e| u32_at(e) == tag)
        .map(|e| {
            let start = u64_at(e + 8);
            start..start + u64_at(e + 16) * u32_at(e + 4) as usize
        })
        .expect("the section")
}

/// A late section (the duplicate sets' members) that fails its check is
/// found after the first screen's stages were handed over: those were
/// checked and stay; the sets are detected again, said in one line, and
/// the file written again.
#[test]
fn a_damaged_duplicate_section_is_detected_again_after_the_first_stages() {
    let dir = tempfile::tempdir().unwrap();
    let cache = options(dir.path());
    let dump = fixture_copy(dir.path(), "dup_seed_held.txt");
    let (fresh, _, _) = open(&dump, &cache);
    assert!(!fresh.duplicates.sets.is_empty());
    let file = cache_files(&cache).pop().unwrap();
    let good = std::fs::read(&file).unwrap();
    // The set members' items: tag 35.
    let members = section(&good, 35);
    assert!(!members.is_empty());
    let mut bad = good.clone();
    bad[members.start] ^= 0x01;
    std::fs::write(&file, &bad).unwrap();
    let (a, stages, notes) = open(&dump, &cache);
    assert_eq!(stages, ["read back", "graph", "dominators", "duplicates"]);
    assert_eq!(json(&a), json(&fresh));
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("checksum mismatch; detecting the duplicate sets again"),
        "{notes:?}"
    );
    assert_eq!(std::fs::read(&file).unwrap(), good, "written again");
    let (b, stages, notes) = open(&dump, &cache);
    assert_eq!(stages[0], "read back");
    assert!(notes.is_empty() && b.timings.cached, "{notes:?}");
    assert_eq!(json(&b), json(&fresh));
}

#[test]
fn a_cache_of_another_dump_or_a_changed_dump_is_not_used() {
    let dir = tempfile::tempdir().unwrap();
    let cache = options(dir.path());
    let a = fixture_copy(dir.path(), "demo.dump.txt");
    let b = fixture_copy(dir.path(), "two_appdomains.txt");
    let (_, _, _) = open(&a, &cache);
    let (fresh_b, _, _) = open(&b, &cache);
    let files = cache_files(&cache);
    assert_eq!(files.len(), 2);
    // b's cache file now holds a's analysis: its key says so.
    let a_file = files
        .iter()
        .find(|f| {
            std::fs::read(f)
                .unwrap()
                .windows(13)
                .any(|w| w == b"demo.dump.txt")
        })
        .unwrap();
    let b_file = files.iter().find(|f| *f != a_file).unwrap();
    std::fs::copy(a_file, b_file).unwrap();
    let (again, _, notes) = open(&b, &cache);
    assert_eq!(json(&again), json(&fresh_b));
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("another dump"), "{notes:?}");
    // A changed dump has another key: the old analysis is not used …
    let mut text = std::fs::read_to_string(&b).unwrap();
    text.push_str("o 7777 1 10\n");
    std::fs::write(&b, text).unwrap();
    let (changed, _, notes) = open(&b, &cache);
    assert_eq!(changed.summary.objects, fresh_b.summary.objects + 1);
    // … in the same file, which the new analysis replaces: stale files do
    // not pile up.
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(cache_files(&cache).len(), 2);
}

#[test]
fn the_directory_is_capped_least_recently_used_first() {
    let dir = tempfile::tempdir().unwrap();
    let mut cache = options(dir.path());
    let a = fixture_copy(dir.path(), "demo.dump.txt");
    let b = fixture_copy(dir.path(), "two_appdomains.txt");
    open(&a, &cache);
    let one = cache_files(&cache)[0].clone();
    let size = std::fs::metadata(&one).unwrap().len();
    // Room for the bigger file only: b's arrival pushes a's out.
    cache.max_bytes = size;
    std::thread::sleep(std::time::Duration::from_millis(20));
    open(&b, &cache);
    let left = cache_files(&cache);
    assert_eq!(left.len(), 1);
    assert_ne!(left[0], one);
    // A leftover temporary file of a writer that died is ignored.
    std::fs::write(cache.dir.join(".tmp-1-dead"), b"HEAPTUIC half").unwrap();
    let (again, _, notes) = open(&b, &cache);
    assert!(notes.is_empty());
    assert!(again.summary.objects > 0);
}

/// A cache file over the cap on its own stays when it is written (a big
/// heap's cache is bigger than the default cap); the next dump's file
/// pushes it out.
#[test]
fn the_file_just_written_stays_even_alone_over_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let mut cache = options(dir.path());
    cache.max_bytes = 1;
    let a = fixture_copy(dir.path(), "demo.dump.txt");
    let b = fixture_copy(dir.path(), "two_appdomains.txt");
    open(&a, &cache);
    let first = cache_files(&cache);
    assert_eq!(first.len(), 1, "the file just written was removed");
    let (_, stages, _) = open(&a, &cache);
    assert_eq!(stages[0], "read back");
    std::thread::sleep(std::time::Duration::from_millis(20));
    open(&b, &cache);
    let left = cache_files(&cache);
    assert_eq!(left.len(), 1);
    assert_ne!(left, first, "the older file stayed over the cap");
}

#[test]
fn small_dumps_and_no_cache_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut cache = options(dir.path());
    cache.min_file_bytes = 1 << 30;
    let a = fixture_copy(dir.path(), "demo.dump.txt");
    open(&a, &cache);
    assert!(cache_files(&cache).is_empty());
}

#[test]
fn a_comparison_caches_every_snapshot_and_reads_them_back_alike() {
    let dir = tempfile::tempdir().unwrap();
    let cache = options(dir.path());
    let files: Vec<PathBuf> = [
        "demo-series.1.txt",
        "demo-series.2.txt",
        "demo-series.3.txt",
    ]
    .iter()
    .map(|n| fixture_copy(dir.path(), n))
    .collect();
    let compare = || {
        let note: Note = Arc::new(|l| panic!("unexpected note: {l}"));
        let (c, a, pending) = cache::compare_files(
            &files,
            ImportOptions::default(),
            &DuplicateOptions::default(),
            Some(&cache),
            &Progress::new(),
            heaptui_core::analysis::Schedule::Sequential,
            note,
        )
        .unwrap();
        pending.wait();
        (c, json(&a))
    };
    let (first, first_json) = compare();
    assert_eq!(cache_files(&cache).len(), 3, "one cache file per snapshot");
    let (again, again_json) = compare();
    assert_eq!(format!("{first:?}"), format!("{again:?}"));
    assert_eq!(first_json, again_json);
    // And both agree with the comparison made without a cache.
    let (plain, _) = heaptui_core::analysis::compare_files(
        &files,
        ImportOptions::default(),
        &DuplicateOptions::default(),
        &Progress::new(),
        heaptui_core::analysis::Schedule::Parallel,
    )
    .unwrap();
    assert_eq!(format!("{first:?}"), format!("{plain:?}"));
}

/// A gzipped HPROF reopened from the cache: the referents and every
/// field's value (decoded from the class table and the values the cache
/// keeps) are what the first analysis had.
#[test]
fn fields_and_referents_survive_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let cache = options(dir.path());
    let dump = fixture_copy(dir.path(), "leaky.hprof.gz");
    let (fresh, stages, _) = open(&dump, &cache);
    assert_eq!(stages[0], "imported");
    let (again, stages, notes) = open(&dump, &cache);
    assert_eq!(stages[0], "read back", "{notes:?}");
    let (d1, d2) = (fresh.dump(), again.dump());
    assert_eq!(d1.referents, d2.referents);
    assert_eq!(d1.java_classes, d2.java_classes);
    assert_eq!(fresh.summary, again.summary);
    // Class objects' rows (`class Leaky`) are made again from what the
    // cache keeps.
    assert!(d2.row_types().len() > 500);
    let rows = |d: &heaptui_core::model::Model| -> Vec<String> {
        d.object_indices()
            .filter(|&o| d.has_row_type(o))
            .map(|o| d.row_type_name(o).to_string())
            .collect()
    };
    assert_eq!(rows(d1), rows(d2));
    assert!(rows(d2).iter().any(|r| r == "class Leaky"));
    let map = d2
        .object_indices()
        .find(|&o| d2.type_name(o) == "java.util.HashMap" && d2.size_of(o) > 0 && {
            matches!(d2.fields(o), Some(heaptui_core::model::ObjectFields::Instance(f))
                if f.iter().any(|f| f.name == "size" && f.value == heaptui_core::model::FieldValue::Primitive("1000".into())))
        })
        .expect("the leaking HashMap, size 1000, read back");
    assert_eq!(d1.fields(map), d2.fields(map));
    let decoded = d2
        .object_indices()
        .filter(|&o| d2.fields(o).is_some())
        .count();
    assert_eq!(
        decoded,
        d1.object_indices()
            .filter(|&o| d1.fields(o).is_some())
            .count()
    );
}

/// A FIFO, or a symbolic link to one, where the cache file goes: the open
/// used to block for ever. Now a note and a fresh analysis.
#[test]
fn a_fifo_at_the_cache_path_is_noted_and_never_opened_for_long() {
    let dir = tempfile::tempdir().unwrap();
    let cache = options(dir.path());
    let dump = fixture_copy(dir.path(), "demo.dump.txt");
    let (fresh, _, _) = open(&dump, &cache);
    let file = cache_files(&cache).pop().unwrap();
    let fifo = dir.path().join("fifo");
    for link in [false, true] {
        std::fs::remove_file(&file).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(if link { &fifo } else { &file })
            .status()
            .unwrap();
        assert!(made.success());
        if link {
            std::os::unix::fs::symlink(&fifo, &file).unwrap();
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let (d, c) = (dump.clone(), cache.clone());
        std::thread::spawn(move || tx.send(open(&d, &c)).unwrap());
        let (a, _, notes) = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the open hangs on the FIFO");
        assert_eq!(json(&a), json(&fresh));
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("not a regular file"), "{notes:?}");
        // Replaced by a cache file again.
        assert!(std::fs::symlink_metadata(&file).unwrap().is_file());
    }
}

/// Bytes changed in the middle of the dump, its size kept and its
/// modification time put back (`touch -r`): the key changes (the inode's
/// change time, and sampled content), the old analysis is not used.
#[test]
fn a_dump_changed_in_place_with_its_time_restored_is_analysed_again() {
    let dir = tempfile::tempdir().unwrap();
    let cache = options(dir.path());
    let dump = fixture_copy(dir.path(), "demo.dump.txt");
    let (fresh, _, _) = open(&dump, &cache);
    let meta = std::fs::metadata(&dump).unwrap();
    let text = std::fs::read_to_string(&dump).unwrap();
    // Some object's size, a digit for a digit, near the middle.
    let at = text[text.len() / 2..].find("\no ").unwrap() + text.len() / 2 + 1;
    let line_end = at + text[at..].find('\n').unwrap();
    let line = &text[at..line_end];
    let digit = line.rfind(|c: char| c.is_ascii_digit()).unwrap();
    let mut bytes = text.clone().into_bytes();
    let b = &mut bytes[at + digit];
    *b = if *b == b'9' { b'8' } else { *b + 1 };
    std::fs::write(&dump, &bytes).unwrap();
    let f = std::fs::File::options().write(true).open(&dump).unwrap();
    f.set_modified(meta.modified().unwrap()).unwrap();
    drop(f);
    let after = std::fs::metadata(&dump).unwrap();
    assert_eq!(
        (after.len(), after.modified().unwrap()),
        (meta.len(), meta.modified().unwrap())
    );
    let (again, stages, _) = open(&dump, &cache);
    assert_eq!(stages[0], "imported", "the old analysis was used");
    assert_ne!(json(&again), json(&fresh));
}

/// Temporary files of writers that are gone are removed at once; those of
/// running writers count against the cap.
#[test]
fn temporary_files_are_removed_when_stale_and_counted_against_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let mut cache = options(dir.path());
    let dump = fixture_copy(dir.path(), "demo.dump.txt");
    open(&dump, &cache);
    let file = cache_files(&cache).pop().unwrap();
    let size = std::fs::metadata(&file).unwrap().len();
    // No process has this id (ids stay below 2^22 on Linux).
    let dead = cache.dir.join(".tmp-2147483600-1");
    std::fs::write(&dead, vec![0u8; 1 << 20]).unwrap();
    let live = cache.dir.join(format!(".tmp-{}-1", std::process::id()));
    std::fs::write(&live, vec![0u8; 64]).unwrap();
    cache.max_bytes = size + 64;
    cache::prune(&cache);
    assert!(!dead.exists(), "a dead writer's file stays");
    assert!(live.exists() && file.exists());
    // One byte less: the running writer's file counts, the cache file goes.
    cache.max_bytes = size + 63;
    cache::prune(&cache);
    assert!(live.exists() && !file.exists());
}

/// An HPROF's root places (threads and frames) and details (the object
/// layout found) come back from the cache as imported.
#[test]
fn root_threads_frames_and_the_layout_come_back_from_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let cache = options(dir.path());
    let dump = fixture_copy(dir.path(), "leaky.hprof.gz");
    let (first, ..) = open(&dump, &cache);
    let (second, stages, _) = open(&dump, &cache);
    assert_eq!(stages[0], "read back");
    let (a, b) = (first.dump(), second.dump());
    assert!(!a.root_places.of_root.is_empty());
    assert!(a
        .root_places
        .frames
        .iter()
        .any(|f| &**f == "Leaky.main(Leaky.java:27)"));
    assert_eq!(a.root_places, b.root_places);
    assert_eq!(a.details, b.details);
    assert_eq!(json(&first), json(&second));
}
