//! RPM text: any bytes the detector leaves to the text importer.
#![no_main]

#[path = "common.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    common::pipeline(data);
});
