//! `HEAPTUI_LOG` sends the program's own diagnostics to a file (never to a
//! terminal the UI may own). One test per process: the subscriber is global.

#[test]
fn stage_timings_go_to_the_file_named_by_heaptui_log() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("heaptui.log");
    std::env::set_var("HEAPTUI_LOG", &path);
    assert!(heaptui_core::log::init());
    let text = "t 1 T\no 1 1 10\nr 1 1 0\n";
    heaptui_core::analysis::Analysis::from_bytes("t.txt", text.as_bytes(), &Default::default())
        .unwrap();
    let log = std::fs::read_to_string(&path).unwrap();
    assert!(log.contains("analysis/dominators:"), "{log}");
    assert!(log.contains("heaptui::profile"), "{log}");
    assert!(!log.contains('\x1b'), "no colour codes in a file: {log}");
}
