//! The binary's tests, one binary: the command line, the reports kept
//! byte for byte (tests/reports/), the JSON contract of docs/json.md,
//! the memory budget's spill to disk,
//! HEAPTUI_LOG, the MCP server (`--features mcp`), and the UI in a real pseudo-terminal. One module per subject;
//! the helpers they share are heaptui-testkit's (a dev-dependency).

mod cli;
mod docs;
mod log;
#[cfg(feature = "mcp")]
mod mcp;
mod paths;
mod reports;
mod spill;
mod terminal;
