//! MCP, the Model Context Protocol, through the official Rust SDK ([`rmcp`]): serve tools to any
//! MCP client, and use any MCP server's tools in an agent.
//!
//! **Serve** the tools you give [`agent!`](agent_core::agent) with [`McpServer`], over stdio or streamable
//! HTTP. Calls go through the same dispatcher as in an agent: a bad argument is a result with
//! `isError: true` the client's model can act on; an unknown tool is the protocol error the spec
//! asks for (`-32602`).
//!
//! ```no_run
//! use agent_mcp::McpServer;
//! use agent_core::{ToolSet, tool, tools};
//!
//! /// Tell the time.
//! #[tool(read_only)]
//! fn now() -> &'static str { "12:00" }
//!
//! # async fn serve() -> Result<(), agent_mcp::McpError> {
//! McpServer::new(tools!(now)).name("clock").serve_stdio().await
//! # }
//! ```
//!
//! **Use** a server's tools with [`McpClient`]: spawn it ([`McpClient::spawn`]) or connect by URL
//! ([`McpClient::connect`]), list its tools ([`McpClient::tools`]) and hand them to an agent next to
//! native ones ([`Agent::try_tools`](agent_core::Agent::try_tools)). Their schemas go through the same
//! per-provider transforms as a `#[tool]`'s; a server that dies mid-run gives error results.
//!
//! ```no_run
//! use agent_mcp::McpClient;
//! use agent_core::{Agent, testing::ScriptedModel};
//!
//! # async fn run(model: ScriptedModel) -> Result<(), Box<dyn std::error::Error>> {
//! let mut command = tokio::process::Command::new("npx");
//! command.args(["-y", "@modelcontextprotocol/server-everything"]);
//! let everything = McpClient::spawn(command).await?;
//! let agent = Agent::new(model).try_tools(everything.tools().await?)?;
//! let out = agent.run("Add 2 and 3").await?;
//! # Ok(()) }
//! ```

mod client;
mod content;
mod error;
mod server;

pub use client::{McpClient, McpTool};
pub use error::McpError;
pub use server::McpServer;

/// The MCP SDK this module is built on, for what it offers beyond this module (other transports,
/// resources, prompts) and for the types of [`McpServer::http_service`].
pub use rmcp;
