//! The hprof importer: its magic, then the fuzzer's bytes.
#![no_main]

#[path = "common.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let mut bytes = b"JAVA PROFILE 1.0.2\0".to_vec();
    bytes.extend_from_slice(data);
    common::pipeline(&bytes);
});
