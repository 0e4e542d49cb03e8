//! The peers of the A2A interop tests, all in one Python venv, `tests/a2a/.venv` (pinned by
//! `tests/a2a/requirements.txt`):
//! - the A2A TCK (the protocol's compatibility kit), which checks a server of ours: it is not
//!   in this repository but beside it, in `../shared/a2a-tck` ([`tck_dir`]), and runs from a copy;
//! - the official Python SDK (`a2a-sdk`): its client (`a2a/sdk_client.py`) talks to a server of
//!   ours, its server (`a2a/sdk_server.py`) answers a client of ours.
//!
//! The tests that use them need [`A2A_TCK`] or [`A2A_SDK`]: see [`crate::peers`] for what happens
//! when one is missing. None of them reaches beyond loopback, so they need no network namespace.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::node::client_report;
use crate::peers::Peer;

/// How long one run of the TCK may take (it takes about half a minute).
const TCK_TIMEOUT: Duration = Duration::from_secs(300);

/// `tests/a2a`, where `requirements.txt`, the venv and the SDK scripts are.
pub fn a2a_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("a2a")
}

fn python() -> PathBuf {
    a2a_dir().join(".venv/bin/python")
}

/// The A2A TCK: `$A2A_TCK_DIR` when set, else `../shared/a2a-tck` beside the repository. It is
/// read-only there; [`run_tck`] runs a copy.
pub fn tck_dir() -> PathBuf {
    match std::env::var_os("A2A_TCK_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/a2a-tck"),
    }
}

/// Whether the venv's Python imports `modules`; `Err` says what is missing.
fn imports(modules: &str, what: &str) -> Result<(), String> {
    let imported = std::process::Command::new(python())
        .args(["-c", &format!("import {modules}")])
        .output();
    match imported {
        Ok(output) if output.status.success() => Ok(()),
        Ok(_) => Err(format!("{what} is not installed in tests/a2a/.venv")),
        Err(_) => Err("tests/a2a/.venv has no Python".to_owned()),
    }
}

/// The A2A TCK, with its dependencies installed in `tests/a2a/.venv`.
pub static A2A_TCK: Peer = Peer {
    name: "the A2A TCK",
    why: "These tests run the A2A protocol's compatibility kit (TCK) against our A2A server",
    enable: "put the TCK in ../shared/a2a-tck beside the repository (or set A2A_TCK_DIR), then \
             run `python3 -m venv tests/a2a/.venv && tests/a2a/.venv/bin/pip install --no-deps \
             -r tests/a2a/requirements.txt`",
    detect: detect_tck,
};

fn detect_tck() -> Result<(), String> {
    imports(
        "pytest, httpx, jsonschema",
        "what the TCK needs (pytest, httpx, jsonschema)",
    )?;
    let tck = tck_dir();
    if tck.join("run_tck.py").is_file() {
        Ok(())
    } else {
        Err(format!("there is no TCK (run_tck.py) in {}", tck.display()))
    }
}

/// Python with the official A2A SDK installed in `tests/a2a/.venv`.
pub static A2A_SDK: Peer = Peer {
    name: "Python with the A2A SDK",
    why: "These tests check interoperability with the official Python A2A SDK's client and server",
    enable: "run `python3 -m venv tests/a2a/.venv && tests/a2a/.venv/bin/pip install --no-deps \
             -r tests/a2a/requirements.txt`",
    detect: || imports("a2a.client", "the `a2a-sdk` package"),
};

/// What a run of the TCK came to: the counts of pytest's summary line, and everything it printed.
#[derive(Debug, Clone)]
pub struct TckRun {
    /// Tests that passed.
    pub passed: usize,
    /// Tests that failed, and errors (a test that could not run).
    pub failed: usize,
    /// Tests skipped (those for a capability the agent's card does not declare).
    pub skipped: usize,
    /// Whether the TCK exited with 0: every test of the level passed.
    pub success: bool,
    /// Its stdout, then its stderr: pytest's report, for the message of a failing test.
    pub output: String,
}

/// Runs the TCK's MUST level over JSON-RPC against the A2A server at `sut_url` (the base URL,
/// where `/.well-known/agent-card.json` is), from a copy of [`tck_dir`] in a temporary folder
/// (the kit writes its reports where it runs); fails the test when it cannot run or takes more
/// than 5 minutes.
pub async fn run_tck(sut_url: &str) -> TckRun {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let scratch = std::env::temp_dir().join(format!(
        "a2a-tck-{}-{}",
        std::process::id(),
        RUNS.fetch_add(1, Ordering::SeqCst)
    ));
    let copy = scratch.join("a2a-tck");
    copy_tree(&tck_dir(), &copy)
        .unwrap_or_else(|error| panic!("the TCK is copied to {}: {error}", copy.display()));

    let mut child = Command::new(python())
        .current_dir(&copy)
        .args(["run_tck.py", "--sut-host", sut_url])
        .args(["--transport", "jsonrpc", "--level", "must"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // run_tck.py runs pytest as a child of its own: a group of their own, killed together.
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .expect("the TCK starts");
    let stdout = tokio::spawn(read_all(child.stdout.take().expect("stdout is piped")));
    let stderr = tokio::spawn(read_all(child.stderr.take().expect("stderr is piped")));
    let status = match tokio::time::timeout(TCK_TIMEOUT, child.wait()).await {
        Ok(status) => Some(status.expect("the TCK runs")),
        Err(_) => {
            if let Some(group) = child.id() {
                let _ = std::process::Command::new("kill")
                    .args(["-KILL", "--", &format!("-{group}")])
                    .status();
            }
            let _ = child.kill().await;
            None
        }
    };
    let output = stdout.await.expect("stdout is read") + &stderr.await.expect("stderr is read");
    let _ = std::fs::remove_dir_all(&scratch);
    let Some(status) = status else {
        panic!(
            "the TCK did not finish within {} s; its output:\n{output}",
            TCK_TIMEOUT.as_secs()
        );
    };
    let (passed, failed, skipped) = summary(&output);
    TckRun {
        passed,
        failed,
        skipped,
        success: status.success(),
        output,
    }
}

async fn read_all(mut pipe: impl AsyncRead + Unpin) -> String {
    let mut bytes = Vec::new();
    let _ = pipe.read_to_end(&mut bytes).await;
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Copies the folder `from` to `to` (which must not exist), every copy writable.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
            let mode = std::fs::metadata(&target)?.permissions().mode();
            std::fs::set_permissions(&target, std::fs::Permissions::from_mode(mode | 0o200))?;
        }
    }
    Ok(())
}

/// The counts (passed, failed and errors, skipped) of pytest's last summary line, such as
/// `2 failed, 79 passed, 154 skipped, 30 deselected in 31.90s` (run_tck.py runs it with `-q`, so
/// without the `=` around it); zeros without one.
fn summary(output: &str) -> (usize, usize, usize) {
    let counts = |line: &str| {
        let (tally, _) = line.rsplit_once(" in ")?;
        let (mut passed, mut failed, mut skipped, mut any) = (0, 0, 0, false);
        for part in tally
            .trim_matches(|c: char| c == '=' || c.is_whitespace())
            .split(", ")
        {
            let (count, outcome) = part.trim().split_once(' ')?;
            let count: usize = count.parse().ok()?;
            match outcome {
                "passed" => passed += count,
                "failed" | "error" | "errors" => failed += count,
                "skipped" => skipped += count,
                _ => {}
            }
            any = true;
        }
        any.then_some((passed, failed, skipped))
    };
    output.lines().rev().find_map(counts).unwrap_or((0, 0, 0))
}

/// Runs the official SDK's client (`a2a/sdk_client.py`) through `script`: `{url, steps}`, see the
/// script for the steps (`send`, `stream`, `get`, `cancel`). Returns `{card, steps}`: the agent
/// card as the SDK read it, and for each step its `result`, streamed `events` (each with its
/// `kind`) and `error` (what the SDK raised, or null), in ProtoJSON.
pub async fn sdk_client(script: &Value) -> Value {
    let mut command = Command::new(python());
    command.arg(a2a_dir().join("sdk_client.py"));
    client_report(command, script, "sdk_client.py").await
}

/// The official SDK's server (`a2a/sdk_server.py`, a weather agent: see the script) on a free
/// loopback port: the process (killed when dropped) and its base URL.
pub async fn sdk_server() -> (Child, String) {
    let mut child = Command::new(python())
        .arg(a2a_dir().join("sdk_server.py"))
        .arg("0")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("sdk_server.py starts");
    let stderr = child.stderr.take().expect("stderr is piped");
    let mut lines = BufReader::new(stderr).lines();
    let base = loop {
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .expect("sdk_server.py starts within 30 s")
            .expect("its stderr is readable")
            .expect("sdk_server.py exited before listening");
        if let Some(address) = line.strip_prefix("listening on ") {
            break address.to_owned();
        }
    };
    // Keep draining stderr so the server never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, base)
}

#[cfg(test)]
mod tests {
    use super::summary;

    #[test]
    fn the_summary_line_gives_the_counts() {
        let output = "......s.ss [100%]\n  jsonrpc: 79/94 (15 skipped) in all\n\
            2 failed, 79 passed, 154 skipped, 30 deselected, 1 error in 31.90s\n\
            --- Generated html report ---\n";
        assert_eq!(summary(output), (79, 3, 154));
        assert_eq!(summary("==== 81 passed in 2.01s ===="), (81, 0, 0));
        assert_eq!(summary("no tests ran in 0.01s"), (0, 0, 0));
    }
}
