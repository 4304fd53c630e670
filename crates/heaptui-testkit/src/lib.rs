//! What heaptui's tests, benchmarks and examples share, and the binary does
//! not ship: a dev-dependency only.
//!
//! - [`gen`]: large, realistic heap dumps in the .NET CF text format;
//! - [`gcdump`]: a writer of .NET gcdump files;
//! - [`common`]: fixtures, the real dumps (`HEAPTUI_REAL_HEAPS`), small
//!   random heaps and their brute-force oracle;
//! - [`native`]: a native dump checked against its text conversion;
//! - [`tui`]: the UI harness (an App loaded synchronously, the settled event
//!   loop, from heaptui-tui's `testing` feature), key streams and screens;
//! - [`pty`]: the binary run in a pseudo-terminal, its screen read back;
//! - [`rng`]: the seeded generator they all draw from.

pub mod common;
pub mod gcdump;
pub mod gen;
pub mod native;
pub mod pty;
pub mod rng;
pub mod tui;
