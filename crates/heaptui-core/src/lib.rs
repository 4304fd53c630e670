#![deny(unsafe_code)]
pub mod analysis;
pub mod cache;
pub mod demo;
pub mod graph;
pub mod import;
pub mod log;
#[allow(unsafe_code)]
pub mod mem;
pub mod model;
pub mod progress;
pub mod report;
