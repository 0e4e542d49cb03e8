//! What can go wrong setting up MCP: starting, connecting, serving, listing.

/// An error of the SDK or of the system, boxed.
type Source = Box<dyn std::error::Error + Send + Sync>;

/// Why an MCP server could not be started, reached or served. Failures of single tool calls are
/// not these: they become error results for the model.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The server process could not be started.
    #[error("could not start the MCP server `{command}`: {source}")]
    Spawn {
        /// The program that was to be run.
        command: String,
        /// Why it did not start.
        #[source]
        source: std::io::Error,
    },
    /// The connection or the protocol handshake (`initialize`) failed.
    #[error("could not connect to the MCP server {server}: {source}")]
    Connect {
        /// The command or URL of the server.
        server: String,
        /// What failed.
        #[source]
        source: Source,
    },
    /// A request to a connected server failed (the server is gone, or answered with an error).
    #[error("the MCP server {server} did not answer `{method}`: {source}")]
    Request {
        /// The server's name.
        server: String,
        /// The MCP method, e.g. `tools/list`.
        method: &'static str,
        /// What failed.
        #[source]
        source: Source,
    },
    /// Serving failed: the client never completed the handshake, or the transport broke.
    #[error("serving MCP failed: {source}")]
    Serve {
        /// What failed.
        #[source]
        source: Source,
    },
}
