//! The Python side of the MCP interop tests: the official Python SDK's client
//! (`mcp-python/client.py`), installed with its pinned dependencies in `tests/mcp-python/.venv`.
//!
//! The tests that use it need [`PYTHON_MCP`]: see [`crate::peers`] for what happens when it is
//! missing.

use std::path::PathBuf;

use serde_json::Value;
use tokio::process::Command;

use crate::node::client_report;
use crate::peers::Peer;

/// `tests/mcp-python`, where `requirements.txt` and the client are.
pub fn python_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("mcp-python")
}

fn python() -> PathBuf {
    python_dir().join(".venv/bin/python")
}

/// Python with the official MCP SDK installed in `tests/mcp-python/.venv`.
pub static PYTHON_MCP: Peer = Peer {
    name: "Python with the MCP SDK",
    why: "These tests check interoperability with the official Python MCP SDK's client, which \
          reads the spec more strictly than the TypeScript one",
    enable: "run `python3 -m venv tests/mcp-python/.venv && tests/mcp-python/.venv/bin/pip install \
             --no-deps -r tests/mcp-python/requirements.txt`",
    detect: detect_python,
};

fn detect_python() -> Result<(), String> {
    let imported = std::process::Command::new(python())
        .args(["-c", "import mcp.client.session"])
        .output();
    match imported {
        Ok(output) if output.status.success() => Ok(()),
        Ok(_) => Err("the `mcp` package is not installed in tests/mcp-python/.venv".to_owned()),
        Err(_) => Err("tests/mcp-python/.venv has no Python".to_owned()),
    }
}

/// Runs the Python SDK's client with `arguments` (`stdio <command...>` or `http <url>`), making
/// `calls`; returns its report: `{serverInfo, tools, calls, warnings}`.
pub async fn python_client(arguments: &[&str], calls: &Value) -> Value {
    let mut command = Command::new(python());
    command.arg(python_dir().join("client.py")).args(arguments);
    client_report(command, calls, "client.py").await
}
