//! The example tools (`get_weather`, `get_time`, `rain_radar`, whose image goes out as MCP image
//! content) served over MCP: the same `#[tool]` functions the `weather` example gives its agent.
//!
//! - `cargo run -p examples --bin mcp_server` serves one client on stdin/stdout (what an MCP host
//!   such as Claude Desktop or the MCP Inspector spawns).
//! - `cargo run -p examples --bin mcp_server -- --http 127.0.0.1:8000` serves streamable HTTP at
//!   `http://127.0.0.1:8000/mcp` until Ctrl-C. Port 0 picks a free port; the address is printed on
//!   stderr either way.

use std::process::ExitCode;

use agent_core::tools;
use agent_mcp::McpServer;
use examples::weather::{get_time, get_weather, rain_radar};

/// How the server is reached.
enum Transport {
    Stdio,
    Http(String),
}

fn parse_arguments() -> Result<Transport, String> {
    let mut arguments = std::env::args().skip(1);
    match arguments.next().as_deref() {
        None | Some("--stdio") => Ok(Transport::Stdio),
        Some("--http") => Ok(Transport::Http(
            arguments
                .next()
                .unwrap_or_else(|| "127.0.0.1:8000".to_owned()),
        )),
        Some(other) => Err(format!(
            "unknown argument `{other}`; usage: mcp_server [--stdio | --http ADDRESS]"
        )),
    }
}

fn server() -> McpServer {
    McpServer::new(tools!(get_weather, get_time, rain_radar))
        .name("agent-core-weather")
        .version(env!("CARGO_PKG_VERSION"))
        .instructions("Sample weather data for Beijing and Shanghai, and the local time.")
}

async fn serve(transport: Transport) -> Result<(), Box<dyn std::error::Error>> {
    match transport {
        Transport::Stdio => server().serve_stdio().await?,
        Transport::Http(address) => {
            let listener = tokio::net::TcpListener::bind(&address).await?;
            // On stderr, like every message: a script starting the server reads the port here.
            eprintln!("listening on http://{}/mcp", listener.local_addr()?);
            let ctrl_c = async {
                let _ = tokio::signal::ctrl_c().await;
            };
            server().serve_http(listener, ctrl_c).await?;
        }
    }
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    let transport = match parse_arguments() {
        Ok(transport) => transport,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    match serve(transport).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}
