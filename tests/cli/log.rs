//! `HEAPTUI_LOG` sends the program's own diagnostics to a file (never to a
//! terminal the UI may own). Through the binary: the subscriber is global
//! to a process, and this test binary runs many tests at once.

#[test]
fn stage_timings_go_to_the_file_named_by_heaptui_log() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("t.txt");
    std::fs::write(&dump, "t 1 T\no 1 1 10\nr 1 1 0\n").unwrap();
    let path = dir.path().join("heaptui.log");
    heaptui_testkit::common::heaptui()
        .env("HEAPTUI_LOG", &path)
        .arg("report")
        .arg(&dump)
        .assert()
        .success();
    let log = std::fs::read_to_string(&path).unwrap();
    // Each stage's span closes with its time, inside the analysis's.
    assert!(
        log.contains("analysis:dominators: heaptui::profile: close time.busy="),
        "{log}"
    );
    assert!(log.contains("heaptui::profile"), "{log}");
    assert!(!log.contains('\x1b'), "no colour codes in a file: {log}");
}
