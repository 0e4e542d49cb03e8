//! What the durable-run tests share besides the Restate server ([`crate::restate`]): the service
//! process (the test binary run again as the service, killed and restarted to force a replay),
//! both its sides (serving, and being started, waited for and killed), the counters its tools
//! bump (files, whose values tell whether a step ran twice), and the OpenAI Chat Completions
//! replies its scripted models give.

use std::path::Path;
use std::process::{ExitCode, Stdio};
use std::time::Duration;

use agent_restate::restate_sdk::prelude::{Endpoint, ServiceOptions};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use wiremock::ResponseTemplate;

use crate::http::json_reply;

/// The service side: serves `endpoint` on the loopback `port` until the process is killed,
/// saying `listening` once it can be reached (what [`ServiceProcess::start`] waits for).
pub fn serve_on(port: u16, endpoint: Endpoint) -> ExitCode {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime")
        .block_on(async move {
            let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
                .await
                .expect("the service port is free");
            println!("listening");
            agent_restate::serve(endpoint, listener).await;
        });
    ExitCode::SUCCESS
}

/// Quick retries: a killed service is back within a second.
pub fn quick_retries() -> ServiceOptions {
    ServiceOptions::new()
        .retry_policy_initial_interval(Duration::from_millis(100))
        .retry_policy_max_interval(Duration::from_millis(500))
}

/// In a service told to stop at `point` (by the environment variable `stop_at`): says so on
/// stdout, then waits to be killed.
pub fn stop_here_if_told(stop_at: &str, point: &str) {
    if std::env::var(stop_at).is_ok_and(|told| told == point) {
        println!("{point}");
        loop {
            std::thread::park();
        }
    }
}

/// The service process (this test binary again), with the lines it prints.
pub struct ServiceProcess {
    child: Child,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
}

impl ServiceProcess {
    /// Starts this binary with `env` set and `unset` removed, and waits until it says
    /// `listening`.
    pub async fn start(env: &[(&str, &str)], unset: &[&str]) -> Self {
        let mut command = Command::new(std::env::current_exe().expect("this binary"));
        command.stdout(Stdio::piped()).kill_on_drop(true);
        for name in unset {
            command.env_remove(name);
        }
        for (name, value) in env {
            command.env(name, value);
        }
        let mut child = command.spawn().expect("the service starts");
        let stdout = child.stdout.take().expect("its stdout");
        let mut service = ServiceProcess {
            child,
            lines: BufReader::new(stdout).lines(),
        };
        service.expect_line("listening").await;
        service
    }

    /// Waits (a minute at most) for the next line the service prints, which must be `expected`.
    pub async fn expect_line(&mut self, expected: &str) {
        let line = tokio::time::timeout(Duration::from_secs(60), self.lines.next_line())
            .await
            .unwrap_or_else(|_| panic!("the service never said {expected:?}"))
            .expect("its stdout is readable");
        assert_eq!(line.as_deref(), Some(expected));
    }

    /// SIGKILL: no shutdown, no goodbye to the Restate server.
    pub async fn kill(mut self) {
        self.child.kill().await.expect("the service is killed");
    }
}

/// Adds one to the counter file `name` in the folder the environment variable `folder` names;
/// the new value.
pub fn add_one(folder: &str, name: &str) -> u32 {
    let path = Path::new(&std::env::var(folder).expect("the counters folder")).join(name);
    let value = std::fs::read_to_string(&path)
        .map(|text| text.trim().parse::<u32>().expect("a counter"))
        .unwrap_or(0)
        + 1;
    std::fs::write(&path, value.to_string()).expect("the counter is written");
    value
}

/// The counter `name` in `counters`, if it was ever bumped.
pub fn counter(counters: &Path, name: &str) -> Option<String> {
    std::fs::read_to_string(counters.join(name)).ok()
}

/// A fresh counters folder named after `name`, removed when the test is over (passed or not).
pub fn counters_folder(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("agent-core-durable-{name}-"))
        .tempdir()
        .expect("a counters folder")
}

/// An OpenAI Chat Completions reply calling `name` with `arguments` (10 tokens in, 5 out).
pub fn tool_call_reply(index: usize, name: &str, arguments: &Value) -> ResponseTemplate {
    json_reply(
        200,
        &json!({
            "id": format!("chatcmpl-{index}"),
            "object": "chat.completion",
            "model": "gpt-test",
            "choices": [{
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": null,
                    "tool_calls": [{
                        "id": format!("call_{index}"),
                        "type": "function",
                        "function": { "name": name, "arguments": arguments.to_string() }
                    }]
                }
            }],
            "usage": { "prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15 }
        })
        .to_string(),
    )
}

/// An OpenAI Chat Completions reply answering `text` (10 tokens in, 5 out).
pub fn answer_reply(text: &str) -> ResponseTemplate {
    json_reply(
        200,
        &json!({
            "id": "chatcmpl-final",
            "object": "chat.completion",
            "model": "gpt-test",
            "choices": [{
                "index": 0,
                "finish_reason": "stop",
                "message": { "role": "assistant", "content": text }
            }],
            "usage": { "prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15 }
        })
        .to_string(),
    )
}
