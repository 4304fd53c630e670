pub mod analysis;
pub mod dump;
pub mod gen;
pub mod graph;
pub mod mem;
pub mod progress;
pub mod report;
pub mod tui;
