//! What the agents a run works with read is in the run's language too: a child agent called as a
//! tool (its input's description, and its failure as the caller reads it), a guard's judge (the
//! request it is asked, and the schema of its answer), a hand-off that passes a summary on (the
//! summary's description, a summary that is missing, the summary shown to the agent handed to),
//! and a remote agent called over A2A (its input's description, bad arguments, a task that waits
//! for input).
//!
//! Each path is walked with the crate's [`Chinese`] and with a language written outside it
//! ([`Japanese`]), every agent set to the language; nothing any model was sent (its messages,
//! the descriptions of its tools and of their parameters, a native answer format's) may hold
//! three English words in a row, and every error result in Japanese is in its words (it holds
//! kana, which the walk's data, Chinese, has none of). The English words that were here before
//! (`AgentInput`'s doc comment, a `RunError`'s `Display`, the judge's prompt, the A2A tool's
//! errors) fail it.

use std::sync::Arc;

use agent_a2a::{A2aClient, A2aServer};
use agent_core::guard::{At, Judge};
use agent_core::testing::{RecordedRequest, ScriptedModel};
use agent_core::{
    Agent, AgentFailure, ArgumentIssue, AssistantMessage, Chinese, ExternalTool, Handoff,
    HandoffHistory, IssueKind, Message, NotRun, Part, RemoteAgentProblem, TaskEnd, Texts, ToolCall,
    ToolError, ToolResultMessage, agent, tool,
};
use serde_json::Value;
use tests::japanese::Japanese;
use tests::{english_run, has_kana};

/// 把一句话重复两遍。
#[tool]
fn echo(
    /// 要重复的话
    words: String,
) -> String {
    words.repeat(2)
}

/// Everything a walk saw: each text a model read, and each error result, with its path.
#[derive(Default)]
struct Read {
    texts: Vec<(&'static str, String)>,
    errors: Vec<(&'static str, ToolResultMessage)>,
}

impl Read {
    /// Keeps what `model` was sent on each request.
    fn model(&mut self, path: &'static str, model: &ScriptedModel) {
        for request in model.requests() {
            self.request(path, &request);
        }
    }

    /// Keeps a request's texts: its messages (the models' own replies left out), its tools'
    /// descriptions and their parameters', and a native answer format's.
    fn request(&mut self, path: &'static str, request: &RecordedRequest) {
        self.messages(path, &request.messages);
        for tool in &request.tools {
            self.texts.push((path, tool.description.clone()));
            self.descriptions(path, &tool.parameters);
        }
        if let Some(format) = &request.response_format {
            self.texts
                .extend(format.description.clone().map(|text| (path, text)));
            self.descriptions(path, &format.schema);
        }
    }

    /// Keeps the texts of `messages` the agents wrote.
    fn messages(&mut self, path: &'static str, messages: &[Message]) {
        for message in messages {
            let (content, parts) = match message {
                Message::System { content } => (content, &[][..]),
                Message::User { content, parts } => (content, &parts[..]),
                Message::Tool(result) => (&result.content, &result.parts[..]),
                // The model's own words.
                Message::Assistant(_) => continue,
                other => panic!("a message this test cannot read: {other:?}"),
            };
            self.texts.push((path, content.clone()));
            for part in parts {
                if let Part::Text { text } = part {
                    self.texts.push((path, text.clone()));
                }
            }
        }
    }

    /// Keeps every description in a JSON schema, however deep.
    fn descriptions(&mut self, path: &'static str, schema: &Value) {
        match schema {
            Value::Object(map) => {
                for (key, value) in map {
                    match (key.as_str(), value) {
                        ("description", Value::String(text)) => {
                            self.texts.push((path, text.clone()))
                        }
                        _ => self.descriptions(path, value),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|item| self.descriptions(path, item)),
            _ => {}
        }
    }

    /// The result of call `id` in `messages`, which must be an error; kept.
    fn error(&mut self, path: &'static str, messages: &[Message], id: &str) -> ToolResultMessage {
        let result = messages
            .iter()
            .find_map(|message| match message {
                Message::Tool(result) if result.tool_call_id == id => Some(result.clone()),
                _ => None,
            })
            .unwrap_or_else(|| panic!("{path}: no result for {id}"));
        assert!(result.is_error, "{path}: {result:?}");
        self.errors.push((path, result.clone()));
        result
    }
}

/// A child agent whose model fails, called as a tool: the caller reads the failure.
async fn failing_child<T: Texts + Copy>(texts: T, read: &mut Read) {
    let child_model = ScriptedModel::new(Vec::<AssistantMessage>::new());
    let child = Agent::new(child_model.clone())
        .named("researcher")
        .texts(texts);
    let call = ToolCall::new("c_child", "research", r#"{"input":"东京的天气"}"#);
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([call.clone()]),
        AssistantMessage::text("好的。"),
    ]);
    let caller: Agent = Agent::new(model.clone())
        .named("triage")
        .texts(texts)
        .try_tool(child.as_tool("research", "查天气。"))
        .unwrap();
    let output = caller.run("查一下").await.unwrap();
    let got = read.error("a failing child", &output.messages, &call.id);
    let failed = ToolError::AgentFailed {
        agent: "researcher".into(),
        why: AgentFailure::Model {
            step: 1,
            message: String::new(),
        },
    };
    assert_eq!(got, caller.tools().result_message(&call, Err(failed)));
    read.model("a failing child: its caller", &model);
    read.model("a failing child", &child_model);
    read.messages("a failing child: its caller", &output.messages);
}

/// A judge of the input (which it allows) and of calls (one it refuses).
async fn judged<T: Texts + Copy>(texts: T, read: &mut Read) {
    let verdict = |allow: bool| {
        let arguments = format!(r#"{{"allow":{allow},"reason":"看起来有风险"}}"#);
        AssistantMessage::tool_calls([ToolCall::new("j", "final_result", arguments)])
    };
    let judge_model = ScriptedModel::new([verdict(true), verdict(false)]);
    let judge = Agent::new(judge_model.clone())
        .texts(texts)
        .system("判断内容是否安全。");
    let call = ToolCall::new("c_judged", "echo", r#"{"words":"删掉一切"}"#);
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([call.clone()]),
        AssistantMessage::text("好的。"),
    ]);
    let agent: Agent = agent!(model.clone(), echo).texts(texts).guard(
        At::INPUT | At::CALLS,
        Judge::new("caution", judge).refusing(),
    );
    let output = agent.run("去做吧").await.unwrap();
    let got = read.error("a judge", &output.messages, &call.id);
    let refused = ToolError::NotRun {
        why: NotRun::Guarded {
            guard: "caution".into(),
            reason: "看起来有风险".into(),
        },
    };
    assert_eq!(got, agent.tools().result_message(&call, Err(refused)));
    assert_eq!(
        judge_model.requests().len(),
        2,
        "the input and the call judged"
    );
    read.model("a judge", &judge_model);
    read.model("a judge: the guarded agent", &model);
    read.messages("a judge: the guarded agent", &output.messages);
}

/// A hand-off that passes a summary on: first called without one, then with it.
async fn handed_off<T: Texts + Copy>(texts: T, read: &mut Read) {
    let billing_model = ScriptedModel::new([AssistantMessage::text("退款已经办好了。")]);
    let billing = Agent::new(billing_model.clone())
        .named("billing")
        .texts(texts)
        .system("处理退款和账单。");
    let missing = ToolCall::new("h_missing", "transfer_to_billing", "{}");
    let handing = ToolCall::new(
        "h_summary",
        "transfer_to_billing",
        r#"{"summary":"梅女士，七号订单，要退款"}"#,
    );
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([missing.clone()]),
        AssistantMessage::tool_calls([handing]),
    ]);
    let handoff = Handoff::to(billing, "退款和账单。").history(HandoffHistory::Summary);
    let triage: Agent = Agent::new(model.clone())
        .named("triage")
        .texts(texts)
        .try_handoff(handoff)
        .unwrap();
    let output = triage.run("请给我退款").await.unwrap();
    assert_eq!(output.text, "退款已经办好了。");
    let got = read.error("a hand-off's summary", &output.messages, &missing.id);
    let issue = ArgumentIssue::new("summary", IssueKind::Missing { field: None });
    let invalid = ToolError::InvalidArguments {
        issues: vec![issue],
    };
    assert_eq!(got, triage.tools().result_message(&missing, Err(invalid)));
    let shown = billing_model.requests()[0].messages[1].content().to_owned();
    assert!(shown.contains("梅女士，七号订单，要退款"), "{shown}");
    read.model("a hand-off's summary", &model);
    read.model("a hand-off's summary: the agent handed to", &billing_model);
    read.messages("a hand-off's summary", &output.messages);
}

/// A remote agent over A2A, served on loopback: answered, called with bad arguments, and a task
/// that waits for input (the served agent calls a tool its caller runs).
async fn over_a2a<T: Texts + Copy>(texts: T, read: &mut Read) {
    let served_model = ScriptedModel::new([
        AssistantMessage::text("晴天。"),
        AssistantMessage::tool_calls([ToolCall::new("w", "where_am_i", "{}")]),
    ]);
    let where_am_i = ExternalTool::with_parameters(
        "where_am_i",
        "用户在哪里。",
        serde_json::json!({ "type": "object", "properties": {} }),
    );
    let served: Agent = Agent::new(served_model)
        .named("weather")
        .try_tool(where_am_i)
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let serving = tokio::spawn(A2aServer::new(Arc::new(served)).serve(listener));
    let client = A2aClient::connect(&url).await.unwrap();
    let tool = client
        .into_tool("ask_weather", "问远程的天气代理。")
        .texts(&texts);

    let bad = ToolCall::new("c_bad", "ask_weather", r#"{"question":"天气"}"#);
    let waiting = ToolCall::new("c_wait", "ask_weather", r#"{"input":"我在哪里"}"#);
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([
            ToolCall::new("c_ok", "ask_weather", r#"{"input":"今天天气"}"#),
            bad.clone(),
        ]),
        AssistantMessage::tool_calls([waiting.clone()]),
        AssistantMessage::text("好的。"),
    ]);
    let caller: Agent = Agent::new(model.clone())
        .texts(texts)
        .try_tool(tool)
        .unwrap();
    let output = caller.run("天气如何").await.unwrap();
    let got = read.error("over A2A, bad arguments", &output.messages, &bad.id);
    let missing = ArgumentIssue::new("input", IssueKind::Missing { field: None });
    let invalid = ToolError::InvalidArguments {
        issues: vec![missing],
    };
    assert_eq!(got, caller.tools().result_message(&bad, Err(invalid)));
    let got = read.error("over A2A, waits for input", &output.messages, &waiting.id);
    let bare = |message: &str| {
        let problem = RemoteAgentProblem::Task {
            state: TaskEnd::WaitsForInput,
            message: message.to_owned(),
        };
        let waits = ToolError::RemoteAgent {
            agent: "weather".into(),
            problem,
        };
        caller.tools().result_message(&waiting, Err(waits)).content
    };
    // What the remote agent said of its task is its own words, data as an MCP server's are:
    // they are taken out of what the walk checks. (Our own A2A server words them in English
    // whatever the served agent's texts: `agent_handler.rs`, left for another change.)
    let said = got.content.strip_prefix(&bare("")).unwrap_or_default();
    let said = said.trim_start_matches(['：', ':', ' ']).to_owned();
    assert!(!said.is_empty(), "{}", got.content);
    assert_eq!(got.content, bare(&said));
    read.model("over A2A", &model);
    read.messages("over A2A", &output.messages);
    for (path, text) in &mut read.texts {
        if path.starts_with("over A2A") {
            *text = text.replace(&said, "");
        }
    }
    for (_, result) in &mut read.errors {
        result.content = result.content.replace(&said, "");
    }
    serving.abort();
}

/// Every path, every agent in `texts`.
async fn walk<T: Texts + Copy>(texts: T) -> Read {
    let mut read = Read::default();
    failing_child(texts, &mut read).await;
    judged(texts, &mut read).await;
    handed_off(texts, &mut read).await;
    over_a2a(texts, &mut read).await;
    assert_eq!(read.errors.len(), 5, "every error path is walked");
    read
}

/// Fails on the first text with three English words in a row.
fn assert_no_english(read: &Read) {
    for (path, text) in &read.texts {
        if let Some(run) = english_run(text) {
            panic!("{path}: English words `{run}` reached a model in {text:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_english_reaches_the_agents_a_chinese_run_works_with() {
    let read = walk(Chinese).await;
    assert_no_english(&read);
}

/// The Japanese walk: a language defined outside the crate words what every agent a run works
/// with reads, and every error result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_language_defined_outside_the_crate_words_what_other_agents_read() {
    let read = walk(Japanese).await;
    assert_no_english(&read);
    for (path, result) in &read.errors {
        assert!(has_kana(&result.content), "{path}: {:?}", result.content);
    }
    // The judge was asked in Japanese, and the description of an agent's input is Japanese's.
    let asked = |words: &str| read.texts.iter().any(|(_, text)| text.contains(words));
    assert!(asked("この呼び出しを調べてください"));
    assert!(asked(Japanese.agent_input()));
    assert!(asked(Japanese.handoff_summary()));
}
