//! `heaptui mcp DUMP [OLDER…]`: a Model Context Protocol server over
//! standard input and output (docs/mcp.md), built on the official Rust SDK
//! (`rmcp`), so that a coding assistant can ask a heap dump exact
//! questions. The dumps are analysed once, in the background, through the
//! reopen cache ([`state`]); the tools ([`server`]) answer from memory
//! with small pages ([`page`]) of what the report and the TUI show
//! ([`answers`]).
//!
//! Safe by construction: no tool takes a path (the server reads only the
//! dumps of its command line); every answer is at most 32 KB of JSON; a
//! malformed call gets an error and the server goes on; text from the dump
//! is only ever JSON string data; `--redact` leaves out string contents and
//! field values. Standard output is the protocol's: logs go to
//! `HEAPTUI_LOG` (`heaptui_core::log`), a failed analysis to standard error
//! once.
//!
//! May import `heaptui_core`; nothing imports it but the binary.

#![deny(missing_docs)]

pub mod analyses;
pub mod answers;
pub mod page;
pub mod server;
pub mod state;

pub use state::Config;

use rmcp::ServiceExt;

/// Serves the tools over standard input and output until the client
/// closes them, then waits for the reopen cache's write (a cancelled
/// analysis writes none). `Err`: the server could not start.
pub fn serve(config: Config) -> Result<(), String> {
    let (shared, analysis) = state::start(&config);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("mcp")
        .enable_all()
        .build()
        .map_err(|e| format!("could not start the server's runtime: {e}"))?;
    let server = server::Server::new(shared.clone(), config.redact);
    let served = runtime.block_on(async move {
        let running = server
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| format!("the MCP session did not start: {e}"))?;
        running
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| format!("the MCP session ended badly: {e}"))
    });
    tracing::info!("mcp: the client closed the session");
    if matches!(shared.phase(), state::Phase::Loading) {
        shared.progress.cancel();
    }
    let _ = analysis.join();
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    served
}
