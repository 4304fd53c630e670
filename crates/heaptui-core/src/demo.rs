//! The bundled sample heaps: `heaptui --demo` and `heaptui report` without
//! a file open [`DEMO_DUMP`]; `heaptui --demo-compare` opens [`DEMO_SERIES`].
//! Imports nothing of the crate.

/// The built-in sample heap of `heaptui --demo` (see fixtures/demo.gen.py).
pub const DEMO_DUMP: &str = include_str!("../../../fixtures/demo.dump.txt");
/// The name [`DEMO_DUMP`] is shown under.
pub const DEMO_NAME: &str = "demo.dump.txt";

/// The built-in series of `heaptui --demo-compare`, oldest first: three
/// snapshots of one program with a leak (fixtures/demo-series.*.txt).
pub const DEMO_SERIES: [(&str, &str); 3] = [
    (
        "demo-series.1.txt",
        include_str!("../../../fixtures/demo-series.1.txt"),
    ),
    (
        "demo-series.2.txt",
        include_str!("../../../fixtures/demo-series.2.txt"),
    ),
    (
        "demo-series.3.txt",
        include_str!("../../../fixtures/demo-series.3.txt"),
    ),
];
