//! Shared fixtures for the integration tests in `tests/`: tools with every kind of parameter and
//! return type, helpers to run calls through a real `Agent` driven by a `ScriptedModel`, and a
//! loopback HTTP toolkit for the provider tests, and the Node side of the MCP interop tests.

pub mod a2a;
pub mod canonical;
pub mod chat;
pub mod chat_client;
pub mod child;
pub mod durable_service;
pub mod http;
pub mod japanese;
pub mod long_conversation;
pub mod netns;
pub mod node;
pub mod peers;
pub mod postgres;
pub mod python;
pub mod responses_wire;
pub mod restate;
pub mod schema_set;
pub mod session_contract;
pub mod tree;
pub mod vendors;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agent_core::testing::ScriptedModel;
use agent_core::{
    Agent, AssistantMessage, ChatResponse, Message, ModelError, Part, RunEvent, RunOutput,
    StreamEvent, ToolCall, ToolError, ToolResultMessage, tool,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A temperature unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    /// Degrees Celsius
    Celsius,
    /// Degrees Fahrenheit
    Fahrenheit,
}

/// Today's weather somewhere.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Weather {
    pub city: String,
    pub weather: String,
    pub temp: i32,
}

/// Look up today's weather for a city.
#[tool]
pub async fn get_weather(
    /// City name, e.g. "北京"
    city: String,
    /// Unit for temperatures; Celsius when left out
    unit: Option<Unit>,
) -> Result<Weather, String> {
    if city == "Atlantis" {
        return Err(format!("no weather station in {city}"));
    }
    let temp = match unit.unwrap_or(Unit::Celsius) {
        Unit::Celsius => 18,
        Unit::Fahrenheit => 64,
    };
    Ok(Weather {
        city,
        weather: "小雨".to_owned(),
        temp,
    })
}

/// A support ticket made from a customer's email.
#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
pub struct Ticket {
    /// One line saying what is wrong.
    pub title: String,
    /// How soon.
    pub priority: Priority,
    /// The customer's number, when the email gives it.
    pub customer: Option<u32>,
}

/// How soon someone must look at it.
#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    /// When there is time.
    Low,
    /// Today.
    High,
}

/// A stop on a route.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Stop {
    /// City name
    pub city: String,
    /// Nights to stay
    pub nights: u8,
}

/// Plan a route through several stops.
#[tool]
pub fn plan_route(
    /// The stops, in order
    stops: Vec<Stop>,
    /// Extra preferences
    preferences: Option<HashMap<String, bool>>,
) -> String {
    let names: Vec<&str> = stops.iter().map(|stop| stop.city.as_str()).collect();
    format!(
        "{} ({} preferences)",
        names.join(" -> "),
        preferences.map_or(0, |p| p.len())
    )
}

/// Tell the time (no parameters).
#[tool]
pub fn now() -> &'static str {
    "12:00"
}

/// Remember a note (returns nothing).
#[tool]
pub async fn remember(note: String) {
    let _ = note;
}

/// Tell the local time in a city.
#[tool]
pub fn get_time(
    /// City name
    city: String,
) -> String {
    format!("It is 08:30 in {city}.")
}

/// Forecast the weather for some days.
#[tool]
pub fn forecast(
    /// City name
    city: String,
    /// Days ahead
    #[arg(default = 3)]
    days: u32,
) -> String {
    format!("{city}: {days} days")
}

/// Always panics.
#[tool]
pub fn explode(reason: String) -> String {
    panic!("boom: {reason}")
}

/// Fails with a typed tool error.
#[tool]
pub fn refuse() -> Result<String, ToolError> {
    Err(ToolError::failed("not allowed today"))
}

/// Repeats a text many times.
#[tool]
pub fn repeat(text: String, times: usize) -> String {
    text.repeat(times)
}

/// A scripted model replying with `calls` first, then with `answer`.
pub fn model_calling(calls: impl IntoIterator<Item = ToolCall>, answer: &str) -> ScriptedModel {
    ScriptedModel::new([
        AssistantMessage::tool_calls(calls),
        AssistantMessage::text(answer),
    ])
}

/// A call with an id derived from its position.
pub fn call(index: usize, name: &str, arguments: &str) -> ToolCall {
    ToolCall::new(format!("call_{index}"), name, arguments)
}

/// The tool results of a run, in history order.
pub fn tool_results(output: &RunOutput) -> Vec<&ToolResultMessage> {
    results_in(&output.messages)
}

/// The tool results among `messages`, in order.
pub fn results_in(messages: &[Message]) -> Vec<&ToolResultMessage> {
    messages
        .iter()
        .filter_map(|message| match message {
            Message::Tool(result) => Some(result),
            _ => None,
        })
        .collect()
}

/// The texts of the tool results in `messages`, in history order.
pub fn result_texts(messages: &[Message]) -> Vec<&str> {
    messages
        .iter()
        .filter_map(|message| match message {
            Message::Tool(result) => Some(result.content.as_str()),
            _ => None,
        })
        .collect()
}

/// Runs `calls` in one model turn through an agent with every fixture tool, and returns the output.
pub async fn run_fixture_calls(
    calls: Vec<ToolCall>,
    configure: impl FnOnce(Agent) -> Agent,
) -> RunOutput {
    let model = model_calling(calls, "final answer");
    let agent = agent_core::agent!(
        model,
        get_weather,
        plan_route,
        now,
        remember,
        explode,
        refuse,
        repeat,
        forecast
    );
    configure(agent)
        .run("go")
        .await
        .expect("the scripted run succeeds")
}

/// The text of a streamed run: its text deltas, joined.
pub fn streamed_text(events: &[RunEvent]) -> String {
    events
        .iter()
        .filter_map(|event| match event {
            RunEvent::TextDelta(text) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// The reasoning of a streamed run: its reasoning deltas, joined.
pub fn streamed_reasoning(events: &[RunEvent]) -> String {
    events
        .iter()
        .filter_map(|event| match event {
            RunEvent::ReasoningDelta(text) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// The output a streamed run finished with; fails the test when it did not finish well.
pub fn streamed_output(events: &[RunEvent]) -> &RunOutput {
    match events.last() {
        Some(RunEvent::Finished(Ok(output))) => output,
        other => panic!("expected a finished run, got {other:?}"),
    }
}

/// The text deltas of a model's stream and the reply it finished with; fails the test when it did
/// not finish, or an event before its end was an error.
pub fn finished_stream(events: &[Result<StreamEvent, ModelError>]) -> (Vec<&str>, &ChatResponse) {
    let deltas = events
        .iter()
        .filter_map(|event| match event {
            Ok(StreamEvent::TextDelta(text)) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    match events.last() {
        Some(Ok(StreamEvent::Finished(reply))) => {
            assert!(events.iter().all(Result::is_ok), "{events:?}");
            (deltas, reply)
        }
        other => panic!("expected a finished stream, got {other:?} in {events:?}"),
    }
}

/// Serves `server`'s routes on a loopback port for the rest of the test; its base URL. A server
/// that does not identify its callers keeps its chats under their ids
/// (`ChatServer::shared_chats`): these tests drive it from clients that keep no cookies (a new
/// `reqwest` client, a Node process, per request) and read its store by chat id. The default, a
/// chat per browser known by its cookie, is served as it is by `tests/tests/web_visitors.rs` and
/// the browser's test.
pub async fn serve_chat<S, I>(server: agent_web::ChatServer<S, I>) -> String
where
    S: Send + Sync + 'static,
    I: agent_web::Identity<S>,
{
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(server.shared_chats().serve(listener));
    base
}

/// The first bytes of a PNG file: enough for the wire formats, which do not look inside.
pub const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

/// Deletes every file in a folder: a tool that needs a person's approval (it has effects).
#[tool(requires_approval, destructive)]
pub fn wipe(
    /// The folder.
    folder: String,
) -> String {
    format!("wiped {folder}")
}

/// Take a screenshot of a web page.
#[tool]
pub fn screenshot(
    /// The page's URL
    url: String,
) -> Vec<Part> {
    vec![
        Part::text(format!("Screenshot of {url}:")),
        Part::image("image/png", PNG),
    ]
}

/// What the tools of an interrupted run did: how many quick calls finished and how many slow
/// ones began, for a test to cancel the run at the moment it wants (one call finished, one in
/// flight).
#[derive(Clone, Default)]
pub struct Progress {
    quick_done: Arc<AtomicUsize>,
    slow_started: Arc<AtomicUsize>,
    changed: Arc<tokio::sync::Notify>,
}

impl Progress {
    /// A quick call finished.
    pub fn quick_finished(&self) {
        self.quick_done.fetch_add(1, Ordering::SeqCst);
        self.changed.notify_waiters();
    }

    /// A slow call began.
    pub fn slow_began(&self) {
        self.slow_started.fetch_add(1, Ordering::SeqCst);
        self.changed.notify_waiters();
    }

    /// Completes once `quick` calls finished and a slow call began.
    pub async fn reached(self, quick: usize) {
        loop {
            let notified = self.changed.notified();
            if self.quick_done.load(Ordering::SeqCst) >= quick
                && self.slow_started.load(Ordering::SeqCst) >= 1
            {
                return;
            }
            notified.await;
        }
    }
}

/// Whether `text` has three English words in a row: runs of ASCII letters separated only by
/// ASCII that is not a letter (spaces, punctuation, digits), not by any other character. What a
/// Chinese agent's model reads must have none.
pub fn english_run(text: &str) -> Option<String> {
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    for character in text.chars().chain(['\u{3000}']) {
        if character.is_ascii_alphabetic() {
            word.push(character);
            continue;
        }
        if !word.is_empty() {
            words.push(std::mem::take(&mut word));
            if words.len() >= 3 {
                return Some(words.join(" "));
            }
        }
        // Anything but ASCII (a Chinese character, a full-width sign) breaks a run of words.
        if !character.is_ascii() || character == '\n' {
            words.clear();
        }
    }
    None
}

/// Whether `text` holds kana, which only the Japanese texts write (the tests' own data is
/// Chinese, or Japanese written in kanji alone where it must not count).
pub fn has_kana(text: &str) -> bool {
    text.chars()
        .any(|character| ('\u{3040}'..='\u{30ff}').contains(&character))
}

/// The README's examples, compiled (and, where they are not `no_run`, run) as doc tests of this
/// crate, which has every crate of the workspace and every feature, so none can go stale. The
/// guide's chapters (`docs/src/`, an mdBook) follow, one holder each, the same way.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// The guide's introduction (`docs/src/introduction.md`): what it is and where each capability is.
#[cfg(doctest)]
#[doc = include_str!("../../docs/src/introduction.md")]
pub struct GuideIntroduction;

/// The guide's chapter on tools (`docs/src/tools.md`): `#[tool]`, `tool_fn`, toolboxes, the run's
/// context, the errors the model sees.
#[cfg(doctest)]
#[doc = include_str!("../../docs/src/tools.md")]
pub struct GuideTools;

/// The guide's chapter on models and providers (`docs/src/models.md`): the adapters, a model from
/// the environment, settings, reasoning, parts, models of one's own, fallback.
#[cfg(doctest)]
#[doc = include_str!("../../docs/src/models.md")]
pub struct GuideModels;

/// The guide's chapter on running an agent (`docs/src/running.md`): limits, hooks, seams, approval,
/// pauses, typed output, streaming, cancellation.
#[cfg(doctest)]
#[doc = include_str!("../../docs/src/running.md")]
pub struct GuideRunning;

/// The guide's chapter on sessions (`docs/src/sessions.md`): memory, SQLite, transcripts,
/// PostgreSQL.
#[cfg(doctest)]
#[doc = include_str!("../../docs/src/sessions.md")]
pub struct GuideSessions;

/// The guide's chapter on agents that call agents (`docs/src/agents.md`): agents as tools,
/// hand-offs, one budget for the tree.
#[cfg(doctest)]
#[doc = include_str!("../../docs/src/agents.md")]
pub struct GuideAgents;

/// The guide's chapter on guardrails (`docs/src/guardrails.md`): guards at each place, judges,
/// guards beside the model, holding text back, the lethal mix.
#[cfg(doctest)]
#[doc = include_str!("../../docs/src/guardrails.md")]
pub struct GuideGuardrails;

/// The guide's chapter on the web endpoint (`docs/src/web.md`): the chat endpoint, who is asking,
/// limits per user, a deployment on several machines.
#[cfg(doctest)]
#[doc = include_str!("../../docs/src/web.md")]
pub struct GuideWeb;

/// The guide's chapter on AG-UI (`docs/src/agui.md`): an agent served to AG-UI clients.
#[cfg(doctest)]
#[doc = include_str!("../../docs/src/agui.md")]
pub struct GuideAgui;

/// The guide's chapter on A2A (`docs/src/a2a.md`): an agent served to other agents, and a remote
/// agent as a tool.
#[cfg(doctest)]
#[doc = include_str!("../../docs/src/a2a.md")]
pub struct GuideA2a;

/// The guide's chapter on MCP (`docs/src/mcp.md`): tools served to MCP clients, and an MCP server's
/// tools in an agent.
#[cfg(doctest)]
#[doc = include_str!("../../docs/src/mcp.md")]
pub struct GuideMcp;

/// The guide's chapter on durable runs on Restate (`docs/src/durable.md`).
#[cfg(doctest)]
#[doc = include_str!("../../docs/src/durable.md")]
pub struct GuideDurable;

/// The guide's chapter on texts and languages (`docs/src/texts.md`).
#[cfg(doctest)]
#[doc = include_str!("../../docs/src/texts.md")]
pub struct GuideTexts;

/// The guide's chapter on testing an agent (`docs/src/testing.md`): the scripted model, the
/// conformance suite, this repository's tests.
#[cfg(doctest)]
#[doc = include_str!("../../docs/src/testing.md")]
pub struct GuideTesting;
