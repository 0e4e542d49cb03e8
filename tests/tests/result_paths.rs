//! Every path a call can take to the result the model reads: ran (text, parts, an error, a
//! panic), ran with new arguments from a hook, skipped or stopped by a hook, denied by an
//! approver, with no approver, deferred and resumed (approved, edited, denied, an external result
//! with parts, an external error), past the tool-call limit, cut off at the token limit,
//! cancelled and past the time limit with a call finished and one in flight, timed out (async)
//! and abandoned (sync), an unknown tool, bad arguments and bad JSON, a typed run's corrections,
//! acknowledgement and the calls it cannot run, a durable outcome unknown, and calls served over
//! MCP (ran, content the client names rather than shows, bad arguments, an approval the client
//! cannot ask for, a server gone).
//!
//! Each result must be exactly what [`ToolSet::result_message`] makes of the call and what became
//! of it, so the result limit, the parts rules and the texts apply the same on every path: a
//! small limit cuts every text with the marker. And with [`Chinese`] texts, no English sentence
//! reaches the model: nothing it read (system prompt, user corrections, results and their text
//! parts) holds three English words in a row.

use std::future::ready;
use std::sync::Arc;
use std::time::Duration;

use agent_core::testing::{ScriptStep, ScriptedModel};
use agent_core::{
    Agent, Approval, ArgumentIssue, AssistantMessage, BoxFuture, ChatResponse, Chinese,
    ContentNote, Decision, English, Expected, ExternalTool, FinishReason, Found, Hooks,
    Interruption, IssueKind, Journal, JsonType, Message, ModelError, NotRun, OutputProblem, Part,
    RemoteProblem, RunOutput, State, StopReason, SyntaxError, SyntaxProblem, Texts, ToolCall,
    ToolDecision, ToolDef, ToolError, ToolOutput, ToolResultMessage, ToolSet, agent, tool, tools,
};
use agent_mcp::{McpClient, McpServer};
use schemars::JsonSchema;
use serde::Deserialize;
use tests::japanese::Japanese;
use tests::{Progress, english_run, has_kana};

/// A one-pixel PNG, for results with an image.
const PNG: &[u8] = &[0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];

/// 把一句话重复三遍。
#[tool]
fn shout(
    /// 要重复的话
    words: String,
) -> String {
    words.repeat(3)
}

/// 拍一张照片：一段说明、一张图、一段注释。
#[tool]
fn snap(
    /// 拍什么
    what: String,
) -> Vec<Part> {
    vec![
        Part::text(format!("{what}的照片，请看")),
        Part::image("image/png", PNG),
        Part::text(format!("{what}，拍于今天早上")),
    ]
}

/// 报告的链接。
const REPORT: &str = "https://例子.中国/报告.pdf";

/// 取回一份报告：一段说明、报告的链接、一个压缩包。
#[tool]
fn fetch(
    /// 报告名
    name: String,
) -> Vec<Part> {
    vec![
        Part::text(format!("{name}如下")),
        Part::document_url(REPORT),
        Part::document("application/zip", PNG),
    ]
}

/// 总是失败。
#[tool]
fn sulk() -> Result<String, String> {
    Err("今天不想干活".to_owned())
}

/// 总是崩溃。
#[tool]
fn boom() -> String {
    panic!("炸了，炸了")
}

/// 删除一个文件（需要批准）。
#[tool(requires_approval)]
fn wipe(
    /// 文件路径
    path: String,
) -> String {
    format!("已删除 {path}")
}

/// 睡一个小时（异步）。
#[tool]
async fn nap() -> String {
    tokio::time::sleep(Duration::from_secs(3600)).await;
    "醒了醒了".to_owned()
}

/// 睡一会儿（同步，在阻塞线程上）。
#[tool]
fn doze() -> String {
    std::thread::sleep(Duration::from_millis(300));
    "醒了醒了".to_owned()
}

/// The language of a walk: the crate's two, or one defined outside it ([`Japanese`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Language {
    English,
    Chinese,
    Japanese,
}

impl Language {
    /// Its texts.
    fn texts(self) -> Arc<dyn Texts> {
        match self {
            Language::English => Arc::new(English),
            Language::Chinese => Arc::new(Chinese),
            Language::Japanese => Arc::new(Japanese),
        }
    }
}

/// How a walk is set up: the language, and the result limit when it is small.
#[derive(Debug, Clone, Copy)]
struct Setup {
    language: Language,
    limit: Option<usize>,
}

impl Setup {
    fn apply<S: Send + Sync + 'static>(self, agent: Agent<S>) -> Agent<S> {
        let agent = match self.language {
            Language::English => agent.texts(English),
            Language::Chinese => agent.texts(Chinese),
            Language::Japanese => agent.texts(Japanese),
        };
        match self.limit {
            Some(limit) => agent.result_limit(limit),
            None => agent,
        }
    }
}

/// One result checked: the path it took, what the model got, and what
/// [`ToolSet::result_message`] makes of the call and what should have become of it.
struct Checked {
    path: &'static str,
    got: ToolResultMessage,
    expected: ToolResultMessage,
}

/// Everything a walk saw.
#[derive(Default)]
struct Seen {
    checked: Vec<Checked>,
    /// Every text the model read that the agent wrote: system prompts, user messages, results
    /// and their text parts.
    read: Vec<String>,
}

impl Seen {
    /// Checks the result of `call` in `messages` against `outcome`, through `tools`.
    fn expect<S: Send + Sync + 'static>(
        &mut self,
        path: &'static str,
        tools: &ToolSet<S>,
        messages: &[Message],
        call: &ToolCall,
        outcome: Result<ToolOutput, ToolError>,
    ) {
        let got = messages
            .iter()
            .find_map(|message| match message {
                Message::Tool(result) if result.tool_call_id == call.id => Some(result.clone()),
                _ => None,
            })
            .unwrap_or_else(|| panic!("{path}: no result for {}", call.id));
        self.checked.push(Checked {
            path,
            got,
            expected: tools.result_message(call, outcome),
        });
    }

    /// Keeps every text of `messages` the agent wrote for the model to read.
    fn read_messages(&mut self, messages: &[Message]) {
        for message in messages {
            match message {
                Message::System { content } => self.read.push(content.clone()),
                Message::User { content, parts } => {
                    self.read.push(content.clone());
                    self.read.extend(texts_of(parts));
                }
                Message::Tool(result) => {
                    self.read.push(result.content.clone());
                    self.read.extend(texts_of(&result.parts));
                }
                // The model's own words.
                Message::Assistant(_) => {}
                other => panic!("a message this test cannot read: {other:?}"),
            }
        }
    }

    /// Keeps everything `model` was sent, and what a run ended with (results the model would
    /// read next).
    fn read_run(&mut self, model: &ScriptedModel, output: &RunOutput) {
        for request in model.requests() {
            self.read_messages(&request.messages);
        }
        self.read_messages(&output.messages);
    }
}

fn texts_of(parts: &[Part]) -> impl Iterator<Item = String> + '_ {
    parts.iter().filter_map(|part| match part {
        Part::Text { text } => Some(text.clone()),
        _ => None,
    })
}

fn text(text: &str) -> Result<ToolOutput, ToolError> {
    Ok(ToolOutput::Text(text.to_owned()))
}

/// What the dispatcher makes of a call not run, saying `why`.
fn not_run(why: NotRun) -> Result<ToolOutput, ToolError> {
    Err(ToolError::NotRun { why })
}

fn issue(path: &str, kind: IssueKind) -> ArgumentIssue {
    ArgumentIssue::new(path, kind)
}

fn invalid(issues: Vec<ArgumentIssue>) -> Result<ToolOutput, ToolError> {
    Err(ToolError::InvalidArguments { issues })
}

fn calls(calls: &[(&str, &str, &str)]) -> Vec<ToolCall> {
    calls
        .iter()
        .map(|(id, name, arguments)| ToolCall::new(*id, *name, *arguments))
        .collect()
}

/// A model that asks for `calls` in one reply, then answers.
fn model_calling(calls: &[ToolCall]) -> ScriptedModel {
    ScriptedModel::new([
        AssistantMessage::tool_calls(calls.to_vec()),
        AssistantMessage::text("好的。"),
    ])
}

/// The tool ran: text, parts, its error, its panic.
async fn ran(setup: Setup, seen: &mut Seen) {
    let calls = calls(&[
        ("c_text", "shout", r#"{"words":"下雨了"}"#),
        ("c_parts", "snap", r#"{"what":"雨伞"}"#),
        ("c_error", "sulk", "{}"),
        ("c_panic", "boom", ""),
    ]);
    let model = model_calling(&calls);
    let agent: Agent = setup.apply(agent!(model.clone(), shout, snap, sulk, boom));
    let output = agent.run("去做吧").await.unwrap();
    let tools = agent.tools();
    let parts = ToolOutput::Parts(vec![
        Part::text("雨伞的照片，请看"),
        Part::image("image/png", PNG),
        Part::text("雨伞，拍于今天早上"),
    ]);
    let m = &output.messages;
    seen.expect("ran", tools, m, &calls[0], text("下雨了下雨了下雨了"));
    seen.expect("ran with parts", tools, m, &calls[1], Ok(parts));
    seen.expect(
        "ran and failed",
        tools,
        m,
        &calls[2],
        Err(ToolError::failed("今天不想干活")),
    );
    let panicked = ToolError::Panicked {
        message: Some("炸了，炸了".to_owned()),
    };
    seen.expect("ran and panicked", tools, m, &calls[3], Err(panicked));
    seen.read_run(&model, &output);
}

/// Rewrites, skips and stops calls by their ids.
struct Steer;

impl<S> Hooks<S> for Steer {
    fn before_tool_call<'a>(
        &'a self,
        _context: &'a S,
        call: &'a ToolCall,
        _tool: Option<&'a ToolDef>,
    ) -> BoxFuture<'a, ToolDecision> {
        let decision = match call.id.as_str() {
            "c_rewrite" => ToolDecision::RunWith {
                arguments: r#"{"words":"晴天"}"#.to_owned(),
            },
            "c_skip" => ToolDecision::Skip {
                reason: "今天不用查".to_owned(),
            },
            "c_stop" => ToolDecision::Stop {
                reason: "到此为止吧".to_owned(),
            },
            _ => ToolDecision::Run,
        };
        Box::pin(ready(decision))
    }
}

/// A hook ran a call with new arguments, skipped one and stopped the run at another.
async fn hooked(setup: Setup, seen: &mut Seen) {
    let calls = calls(&[
        ("c_rewrite", "shout", r#"{"words":"下雨"}"#),
        ("c_skip", "shout", r#"{"words":"刮风"}"#),
        ("c_stop", "shout", r#"{"words":"打雷"}"#),
    ]);
    let model = model_calling(&calls);
    let agent: Agent = setup.apply(agent!(model.clone(), shout).hook(Steer));
    let output = agent.run("去做吧").await.unwrap();
    assert!(matches!(output.stop_reason, StopReason::Stopped { .. }));
    let tools = agent.tools();
    let m = &output.messages;
    seen.expect(
        "ran with new arguments",
        tools,
        m,
        &calls[0],
        text("晴天晴天晴天"),
    );
    let skipped = not_run(NotRun::Skipped("今天不用查".into()));
    seen.expect("skipped by a hook", tools, m, &calls[1], skipped);
    let stopped = not_run(NotRun::Skipped("到此为止吧".into()));
    seen.expect("stopped by a hook", tools, m, &calls[2], stopped);
    seen.read_run(&model, &output);
}

/// An approver denied a call; an agent with no approver could not ask.
async fn denied(setup: Setup, seen: &mut Seen) {
    let calls = calls(&[("c_denied", "wipe", r#"{"path":"旧日志"}"#)]);
    let model = model_calling(&calls);
    let agent: Agent = setup
        .apply(agent!(model.clone(), wipe))
        .approve_with(|_, _| {
            ready(Approval::Deny {
                reason: Some("不行，留着".to_owned()),
            })
        });
    let output = agent.run("去做吧").await.unwrap();
    let tools = agent.tools();
    let refused = not_run(NotRun::Denied(Some("不行，留着".into())));
    seen.expect("denied", tools, &output.messages, &calls[0], refused);
    seen.read_run(&model, &output);

    let calls = self::calls(&[("c_unasked", "wipe", r#"{"path":"旧日志"}"#)]);
    let model = model_calling(&calls);
    let agent: Agent = setup.apply(agent!(model.clone(), wipe));
    let output = agent.run("去做吧").await.unwrap();
    let tools = agent.tools();
    let refused = not_run(NotRun::NoApprover);
    seen.expect("no approver", tools, &output.messages, &calls[0], refused);
    seen.read_run(&model, &output);
}

/// Calls that waited for a person and for the caller, resumed with each kind of decision.
async fn deferred(setup: Setup, seen: &mut Seen) {
    let calls = calls(&[
        ("c_yes", "wipe", r#"{"path":"甲"}"#),
        ("c_edit", "wipe", r#"{"path":"乙"}"#),
        ("c_no", "wipe", r#"{"path":"丙"}"#),
        ("c_where", "locate", "{}"),
        ("c_broken", "locate", "{}"),
    ]);
    let model = model_calling(&calls);
    let locate = ExternalTool::with_parameters(
        "locate",
        "问用户的浏览器他在哪里。",
        serde_json::json!({ "type": "object", "properties": {} }),
    );
    let agent: Agent = setup
        .apply(agent!(model.clone(), wipe))
        .try_tool(locate)
        .unwrap()
        .defer_approvals();
    let first = agent.run("去做吧").await.unwrap();
    assert_eq!(first.stop_reason, StopReason::Paused);
    seen.read_run(&model, &first);
    let paused = first.paused.expect("a paused run");
    let decisions = [
        ("c_yes", Decision::Approve),
        (
            "c_edit",
            Decision::ApproveWith {
                arguments: r#"{"path":"丁"}"#.to_owned(),
            },
        ),
        ("c_no", Decision::deny("周五再说")),
        (
            "c_where",
            Decision::Result {
                content: "在奥斯陆市中心".to_owned(),
                parts: vec![Part::image("image/png", PNG), Part::text("地图的截图说明")],
                is_error: false,
            },
        ),
        (
            "c_broken",
            Decision::Result {
                content: "浏览器拒绝了定位".to_owned(),
                parts: Vec::new(),
                is_error: true,
            },
        ),
    ];
    let output = agent.resume(paused, decisions).await.unwrap();
    let tools = agent.tools();
    let m = &output.messages;
    seen.expect("resumed, approved", tools, m, &calls[0], text("已删除 甲"));
    seen.expect("resumed, edited", tools, m, &calls[1], text("已删除 丁"));
    let refused = not_run(NotRun::Denied(Some("周五再说".into())));
    seen.expect("resumed, denied", tools, m, &calls[2], refused);
    let external = ToolOutput::Parts(vec![
        Part::text("在奥斯陆市中心"),
        Part::image("image/png", PNG),
        Part::text("地图的截图说明"),
    ]);
    seen.expect(
        "resumed, external result",
        tools,
        m,
        &calls[3],
        Ok(external),
    );
    let failed = Err(ToolError::failed("浏览器拒绝了定位"));
    seen.expect("resumed, external error", tools, m, &calls[4], failed);
    seen.read_run(&model, &output);
}

/// The run's tool-call limit; a reply cut off at the output token limit.
async fn limited(setup: Setup, seen: &mut Seen) {
    let calls = calls(&[
        ("c_first", "shout", r#"{"words":"一二"}"#),
        ("c_over", "shout", r#"{"words":"三四"}"#),
    ]);
    let model = model_calling(&calls);
    let agent: Agent = setup.apply(agent!(model.clone(), shout)).max_tool_calls(1);
    let output = agent.run("去做吧").await.unwrap();
    let tools = agent.tools();
    seen.expect(
        "within the limit",
        tools,
        &output.messages,
        &calls[0],
        text("一二一二一二"),
    );
    let over = not_run(NotRun::ToolCallLimit(1));
    seen.expect("tool-call limit", tools, &output.messages, &calls[1], over);
    seen.read_run(&model, &output);

    let cut = ToolCall::new("c_cut", "shout", r#"{"words":"很长很长"#);
    let reply = AssistantMessage::tool_calls([cut.clone()]);
    let model = ScriptedModel::from_steps([
        ScriptStep::reply(ChatResponse::new(reply).with_finish_reason(FinishReason::Length)),
        ScriptStep::reply(AssistantMessage::text("好的。")),
    ]);
    let agent: Agent = setup.apply(agent!(model.clone(), shout));
    let output = agent.run("去做吧").await.unwrap();
    let tools = agent.tools();
    let refused = not_run(NotRun::CutOff);
    seen.expect("cut off", tools, &output.messages, &cut, refused);
    seen.read_run(&model, &output);
}

/// 马上写好。
#[tool]
async fn quick(State(progress): State<Progress>) -> String {
    progress.quick_finished();
    "马上写好了".to_owned()
}

/// 要一个小时。
#[tool]
async fn slow(State(progress): State<Progress>) -> String {
    progress.slow_began();
    tokio::time::sleep(Duration::from_secs(3600)).await;
    "报告写好了".to_owned()
}

/// A run cancelled, and one past its time limit, each with one call finished and one in flight.
async fn interrupted(setup: Setup, seen: &mut Seen) {
    let calls = calls(&[("c_quick", "quick", "{}"), ("c_slow", "slow", "{}")]);
    for cancel in [true, false] {
        let progress = Progress::default();
        let model = model_calling(&calls);
        let agent: Agent<Progress> = setup.apply(agent!(model.clone(), quick, slow));
        let (agent, by, path) = if cancel {
            (agent, Interruption::Cancelled, "cancelled")
        } else {
            let agent = agent.time_limit(Duration::from_millis(300));
            (agent, Interruption::TimeLimit, "time limit")
        };
        let agent = agent.bind_context(progress.clone());
        let output = if cancel {
            agent.run("去做吧").until(progress.reached(1)).await
        } else {
            agent.run("去做吧").await
        }
        .unwrap();
        let tools = agent.tools();
        let m = &output.messages;
        seen.expect(
            "finished before the end",
            tools,
            m,
            &calls[0],
            text("马上写好了"),
        );
        let interrupted = Err(ToolError::Interrupted { by });
        seen.expect(path, tools, m, &calls[1], interrupted);
        seen.read_run(&model, &output);
    }
}

/// An async tool timed out; a sync one was abandoned.
async fn timed_out(setup: Setup, seen: &mut Seen) {
    let calls = calls(&[("c_nap", "nap", "{}"), ("c_doze", "doze", "{}")]);
    let model = model_calling(&calls);
    let after = Duration::from_millis(50);
    let agent: Agent = setup
        .apply(agent!(model.clone(), nap, doze))
        .tool_timeout(after);
    let output = agent.run("去做吧").await.unwrap();
    let tools = agent.tools();
    let m = &output.messages;
    let timed_out = Err(ToolError::TimedOut { after });
    seen.expect("timed out", tools, m, &calls[0], timed_out);
    let abandoned = Err(ToolError::Abandoned { after });
    seen.expect("abandoned", tools, m, &calls[1], abandoned);
    seen.read_run(&model, &output);
}

/// A tool no one has; arguments that do not fit, and that are not JSON.
async fn malformed(setup: Setup, seen: &mut Seen) {
    let calls = calls(&[
        ("c_unknown", "nope", "{}"),
        ("c_type", "shout", r#"{"words":5}"#),
        ("c_missing", "shout", "{}"),
        ("c_extra", "shout", r#"{"words":"雨","loud":true}"#),
        ("c_json", "shout", r#"{"words":"#),
        ("c_array", "shout", "[1]"),
    ]);
    let model = model_calling(&calls);
    let agent: Agent = setup.apply(agent!(model.clone(), shout));
    let output = agent.run("去做吧").await.unwrap();
    let tools = agent.tools();
    let m = &output.messages;
    let unknown = ToolError::UnknownTool {
        name: "nope".to_owned(),
        available: vec!["shout".to_owned()].into(),
    };
    seen.expect("unknown tool", tools, m, &calls[0], Err(unknown));
    let wrong_type = IssueKind::InvalidType {
        found: Found::Value {
            kind: JsonType::Integer,
            text: "5".to_owned(),
        },
        expected: Expected::Type(JsonType::String),
    };
    let wrong_type = invalid(vec![issue("words", wrong_type)]);
    seen.expect("bad arguments: a type", tools, m, &calls[1], wrong_type);
    let missing = invalid(vec![issue("words", IssueKind::Missing { field: None })]);
    seen.expect("bad arguments: missing", tools, m, &calls[2], missing);
    let unknown_field = IssueKind::UnknownField {
        field: None,
        expected: Some(vec!["words".to_owned()]),
    };
    let unknown_field = invalid(vec![issue("loud", unknown_field)]);
    seen.expect("bad arguments: unknown", tools, m, &calls[3], unknown_field);
    let not_json = ToolError::InvalidJson {
        error: SyntaxError {
            problem: SyntaxProblem::UnfinishedValue,
            line: 1,
            column: 9,
        },
    };
    seen.expect("bad JSON", tools, m, &calls[4], Err(not_json));
    let not_an_object = IssueKind::NotAnObject {
        found: JsonType::Array,
    };
    let not_an_object = invalid(vec![issue("", not_an_object)]);
    seen.expect(
        "bad arguments: not an object",
        tools,
        m,
        &calls[5],
        not_an_object,
    );
    seen.read_run(&model, &output);
}

/// A typed run's answer.
#[derive(Debug, PartialEq, Deserialize, JsonSchema)]
struct Place {
    /// 城市名
    city: String,
}

/// A typed run: a call it cannot wait for, an answer in words, an answer that does not fit, and
/// the answer taken with a call beside it.
async fn typed(setup: Setup, seen: &mut Seen) {
    let wait = ToolCall::new("c_wait", "wipe", r#"{"path":"甲"}"#);
    let bad = ToolCall::new("c_bad", "final_result", r#"{"city":5}"#);
    let good = ToolCall::new("c_good", "final_result", r#"{"city":"北京"}"#);
    let beside = ToolCall::new("c_beside", "shout", r#"{"words":"雨雨"}"#);
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([wait.clone()]),
        AssistantMessage::text("我觉得是北京。"),
        AssistantMessage::tool_calls([bad.clone()]),
        AssistantMessage::tool_calls([good.clone(), beside.clone()]),
    ]);
    let agent: Agent = setup
        .apply(agent!(model.clone(), wipe, shout))
        .defer_approvals();
    let out = agent.run("给我一个城市").output::<Place>().await.unwrap();
    assert_eq!(out.value.city, "北京");
    let tools = agent.tools();
    let texts = tools.texts();
    let m = &out.run.messages;
    seen.expect("cannot wait", tools, m, &wait, not_run(NotRun::CannotWait));
    let problem = OutputProblem::Invalid {
        issues: vec![issue(
            "city",
            IssueKind::WrongType {
                expected: vec![JsonType::String],
                found: Found::Value {
                    kind: JsonType::Integer,
                    text: "5".to_owned(),
                },
            },
        )],
    };
    let rejected = ToolError::AnswerRejected {
        correction: texts.output_correction(&problem),
    };
    seen.expect("answer corrected", tools, m, &bad, Err(rejected));
    let received = text(texts.output_received());
    seen.expect("answer received", tools, m, &good, received);
    let given = not_run(NotRun::AnswerGiven);
    seen.expect("beside the answer", tools, m, &beside, given);
    // The answer in words is corrected with a user message in the agent's words, cut to the
    // result limit as a result is.
    let in_words = texts.output_correction(&OutputProblem::NotGiven {
        tool: "final_result".to_owned(),
    });
    let in_words = tools.result_message(&bad, text(&in_words)).content;
    assert!(
        m.iter().any(
            |message| matches!(message, Message::User { content, .. } if *content == in_words)
        ),
        "no correction `{in_words}` in {m:#?}"
    );
    seen.read_run(&model, &out.run);
}

/// A journal that lost the result of `c_lost`: the service stopped while it ran.
struct Lossy;

impl Journal for Lossy {
    fn model_call<'a>(
        &'a self,
        _step: usize,
        call: BoxFuture<'a, Result<ChatResponse, ModelError>>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        call
    }

    fn context_call<'a>(
        &'a self,
        _step: usize,
        call: BoxFuture<'a, Result<ChatResponse, ModelError>>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        call
    }

    fn tool_call<'a>(
        &'a self,
        call: &'a ToolCall,
        _definition: Option<&'a ToolDef>,
        run: BoxFuture<'a, ToolResultMessage>,
    ) -> BoxFuture<'a, Result<ToolResultMessage, ToolError>> {
        Box::pin(async move {
            if call.id == "c_lost" {
                return Err(ToolError::OutcomeUnknown {
                    tool: call.name.clone(),
                });
            }
            Ok(run.await)
        })
    }
}

/// A durable run whose journal lost a call's outcome.
async fn journaled(setup: Setup, seen: &mut Seen) {
    let calls = calls(&[
        ("c_kept", "shout", r#"{"words":"记下"}"#),
        ("c_lost", "shout", r#"{"words":"丢了"}"#),
    ]);
    let model = model_calling(&calls);
    let agent: Agent = setup.apply(agent!(model.clone(), shout));
    let output = agent.run("去做吧").journal(&Lossy).await.unwrap();
    let tools = agent.tools();
    let m = &output.messages;
    seen.expect("journaled", tools, m, &calls[0], text("记下记下记下"));
    let lost = Err(ToolError::OutcomeUnknown {
        tool: "shout".to_owned(),
    });
    seen.expect("durable outcome unknown", tools, m, &calls[1], lost);
    seen.read_run(&model, &output);
}

/// Calls served over MCP, in process: one that runs, one whose result holds content the client
/// can only name (a link, an archive), one with bad arguments, one needing an approval the client
/// cannot ask for, and one after the server is gone.
async fn over_mcp(setup: Setup, seen: &mut Seen) {
    let mut served: ToolSet = tools!(shout, wipe, fetch);
    served.set_texts(setup.language.texts());
    let server = McpServer::new(served).name("远端");
    // The served set, as the server words its results (without a lead-in).
    let remote = server.tools().clone();
    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    let serving = tokio::spawn(async move {
        let (read, write) = tokio::io::split(server_end);
        let _ = server.serve_io(read, write).await;
    });
    let (read, write) = tokio::io::split(client_end);
    let client = McpClient::connect_io(read, write).await.unwrap();
    // The client names what it cannot show in the agent's words.
    let client = match setup.language {
        Language::English => client.texts(English),
        Language::Chinese => client.texts(Chinese),
        Language::Japanese => client.texts(Japanese),
    };
    let calls = calls(&[
        ("c_remote", "shout", r#"{"words":"下雪"}"#),
        ("c_remote_bad", "shout", r#"{"words":5}"#),
        ("c_remote_ask", "wipe", r#"{"path":"甲"}"#),
        ("c_remote_named", "fetch", r#"{"name":"周报"}"#),
    ]);
    let model = model_calling(&calls);
    let remote_tools = client.tools().await.unwrap();
    let agent: Agent = setup.apply(
        Agent::new(model.clone())
            .try_tools(remote_tools.clone())
            .unwrap(),
    );
    let output = agent.run("去做吧").await.unwrap();
    let tools = agent.tools();
    let m = &output.messages;
    seen.expect("over MCP", tools, m, &calls[0], text("下雪下雪下雪"));
    // The link and the archive reach the client as a resource link and an embedded blob of a
    // type no model reads: it names them, in its texts, after the result's text.
    let texts = tools.texts();
    let link = texts.content_note(ContentNote::ResourceLink {
        name: "document",
        uri: REPORT,
    });
    let archive = texts.content_note(ContentNote::BinaryResource {
        uri: "attachment:///document",
        media_type: Some("application/zip"),
    });
    let named = text(&format!("周报如下\n{link}\n{archive}"));
    seen.expect("over MCP, content named", tools, m, &calls[3], named);
    // The server's words are the remote tool's error: the agent puts its lead-in before them.
    let wrong_type = IssueKind::InvalidType {
        found: Found::Value {
            kind: JsonType::Integer,
            text: "5".to_owned(),
        },
        expected: Expected::Type(JsonType::String),
    };
    let served_words = remote.result_message(&calls[1], invalid(vec![issue("words", wrong_type)]));
    let bad = Err(ToolError::failed(served_words.content));
    seen.expect("over MCP, bad arguments", tools, m, &calls[1], bad);
    let unasked = ToolError::NotRun {
        why: NotRun::ApprovalImpossible("wipe".into()),
    };
    let served_words = remote.result_message(&calls[2], Err(unasked));
    let refused = Err(ToolError::failed(served_words.content));
    seen.expect(
        "over MCP, approval impossible",
        tools,
        m,
        &calls[2],
        refused,
    );
    seen.read_run(&model, &output);

    serving.abort();
    let _ = serving.await;
    // The server's loop winds down after its task is gone (a call in that moment is answered
    // "cancelled"): the server is gone once the client sees its side closed.
    tokio::time::timeout(Duration::from_secs(10), async {
        while client.is_connected() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await
    .expect("the client sees the server gone");
    let gone = ToolCall::new("c_remote_gone", "shout", r#"{"words":"还在吗"}"#);
    let model = model_calling(std::slice::from_ref(&gone));
    let agent: Agent = setup.apply(Agent::new(model.clone()).try_tools(remote_tools).unwrap());
    let output = agent.run("去做吧").await.unwrap();
    let tools = agent.tools();
    let unreachable = Err(ToolError::Remote {
        server: client.server_name().clone(),
        problem: RemoteProblem::Unreachable,
    });
    seen.expect(
        "over MCP, server gone",
        tools,
        &output.messages,
        &gone,
        unreachable,
    );
    seen.read_run(&model, &output);
}

/// Every path, set up so.
async fn walk(setup: Setup) -> Seen {
    let mut seen = Seen::default();
    ran(setup, &mut seen).await;
    hooked(setup, &mut seen).await;
    denied(setup, &mut seen).await;
    deferred(setup, &mut seen).await;
    limited(setup, &mut seen).await;
    interrupted(setup, &mut seen).await;
    timed_out(setup, &mut seen).await;
    malformed(setup, &mut seen).await;
    typed(setup, &mut seen).await;
    journaled(setup, &mut seen).await;
    over_mcp(setup, &mut seen).await;
    seen
}

/// Every result is the one `result_message` makes of its call and outcome.
fn assert_made_by_result_message(seen: &Seen) {
    assert_eq!(seen.checked.len(), 40, "every path is walked");
    for Checked {
        path,
        got,
        expected,
    } in &seen.checked
    {
        assert_eq!(got.tool_call_id, expected.tool_call_id, "{path}");
        assert_eq!(got.is_error, expected.is_error, "{path}: {}", got.content);
        assert_eq!(
            got.content, expected.content,
            "{path}: the model read other words than `result_message` makes of this outcome"
        );
        assert_eq!(got.parts, expected.parts, "{path}");
    }
}

#[test]
fn english_runs_are_found() {
    assert_eq!(
        english_run("出错：invalid type: integer `5`").as_deref(),
        Some("invalid type integer")
    );
    assert_eq!(english_run("参数校验失败：words：缺少必填字段"), None);
    assert_eq!(english_run("不存在工具 nope，MCP 服务器 `远端`"), None);
    assert_eq!(english_run("应为 \"low\"、\"high\" 之一"), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_path_is_made_by_result_message() {
    let seen = walk(Setup {
        language: Language::English,
        limit: None,
    })
    .await;
    assert_made_by_result_message(&seen);
    // The English words themselves, on a few paths.
    let content = |path: &str| {
        let checked = seen.checked.iter().find(|checked| checked.path == path);
        checked.unwrap().got.content.clone()
    };
    assert_eq!(
        content("bad arguments: a type"),
        "Error: invalid arguments: words: invalid type: integer `5`, expected a string"
    );
    assert_eq!(
        content("bad JSON"),
        "Error: the arguments are not valid JSON: EOF while parsing a value at line 1 column 9"
    );
    assert_eq!(
        content("over MCP, approval impossible"),
        "Error: the call was not run: `wipe` needs the user's approval, and approval was not \
         possible: this client cannot ask the user (it does not support elicitation)"
    );
    assert_eq!(
        content("over MCP, server gone"),
        "Error: the MCP server `远端` cannot be reached: it stopped or closed the connection"
    );
    assert_eq!(
        content("over MCP, content named"),
        "周报如下\n[resource link document: https://例子.中国/报告.pdf]\n\
         [resource attachment:///document: application/zip]"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_result_limit_cuts_every_text_on_every_path() {
    for language in [Language::English, Language::Chinese, Language::Japanese] {
        let limit = 4;
        let seen = walk(Setup {
            language,
            limit: Some(limit),
        })
        .await;
        assert_made_by_result_message(&seen);
        let marker = match language {
            Language::English => format!("\n[result truncated: showing the first {limit} of "),
            Language::Chinese => "\n（结果过长，已截断）".to_owned(),
            Language::Japanese => "\n［結果が長すぎるため、".to_owned(),
        };
        for Checked { path, got, .. } in &seen.checked {
            for text in std::iter::once(got.content.clone()).chain(texts_of(&got.parts)) {
                assert!(text.contains(&marker), "{path}: {text:?} is not cut");
                let shown = &text[..text.find(&marker).unwrap()];
                assert_eq!(shown.chars().count(), limit, "{path}: {text:?}");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_english_sentence_reaches_a_chinese_model() {
    let seen = walk(Setup {
        language: Language::Chinese,
        limit: None,
    })
    .await;
    assert_made_by_result_message(&seen);
    assert!(seen.read.len() > seen.checked.len());
    for text in &seen.read {
        if let Some(run) = english_run(text) {
            panic!("English words `{run}` reached the model in {text:?}");
        }
    }
    // The reference loop's words, where it has them.
    let content = |path: &str| {
        let checked = seen.checked.iter().find(|checked| checked.path == path);
        checked.unwrap().got.content.clone()
    };
    assert_eq!(content("unknown tool"), "不存在工具 nope");
    assert_eq!(
        content("bad arguments: a type"),
        "参数校验失败：words：类型不对：应为字符串，实际为 5"
    );
    assert_eq!(content("ran and failed"), "出错：今天不想干活");
    assert_eq!(
        content("over MCP, content named"),
        "周报如下\n[资源链接 document：https://例子.中国/报告.pdf]\n\
         [资源 attachment:///document：application/zip]"
    );
}

/// A language defined outside the crate ([`Japanese`], in `tests/src/japanese.rs`) words every
/// result on every path: the model reads no English, and every error result and system prompt
/// is in that language's words (they hold kana, which neither the crate's languages nor the
/// walk's data have).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_language_defined_outside_the_crate_words_every_result() {
    let seen = walk(Setup {
        language: Language::Japanese,
        limit: None,
    })
    .await;
    assert_made_by_result_message(&seen);
    for text in &seen.read {
        if let Some(run) = english_run(text) {
            panic!("English words `{run}` reached the model in {text:?}");
        }
    }
    for Checked { path, got, .. } in &seen.checked {
        if got.is_error {
            assert!(has_kana(&got.content), "{path}: {:?}", got.content);
        }
    }
    let prompts: Vec<_> = seen
        .read
        .iter()
        .filter(|text| text.starts_with("あなたはツールを使えるアシスタントです"))
        .collect();
    assert!(!prompts.is_empty(), "the system prompt is the language's");
    let content = |path: &str| {
        let checked = seen.checked.iter().find(|checked| checked.path == path);
        checked.unwrap().got.content.clone()
    };
    assert_eq!(
        content("bad arguments: a type"),
        "エラー：引数が正しくありません：words：型が違います：文字列が必要ですが、5でした"
    );
    assert_eq!(
        content("over MCP, server gone"),
        "エラー：MCP サーバー「远端」に接続できません。止まったか、接続を閉じました"
    );
    assert_eq!(
        content("over MCP, content named"),
        "周报如下\n［リソースへのリンク document：https://例子.中国/报告.pdf］\n\
         ［リソース attachment:///document：application/zip］"
    );
}
