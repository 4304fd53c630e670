//! What heaptui's tests, benchmarks and examples share, and the binary does
//! not ship: a dev-dependency only.
//!
//! - [`gen`]: large, realistic heap dumps in the .NET CF text format;
//! - [`gcdump`]: a writer of .NET gcdump files;
//! - [`tui`]: the UI harness (an App loaded synchronously, the settled event
//!   loop), from heaptui-tui's `testing` feature.

pub mod gcdump;
pub mod gen;

/// The UI harness: heaptui-tui's `testing` module.
pub mod tui {
    pub use heaptui_tui::testing::*;
}
