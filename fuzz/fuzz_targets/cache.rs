//! The reopen cache's reader and decoder: a hostile cache file is refused
//! or read, never a panic, a hang or an out-of-bounds read.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = heaptui_core::testing::decode_cache_bytes(data);
});
