//! The model conformance suite: one contract for every [`Model`], checked the same way for each.
//!
//! Every model this crate ships runs it: each HTTP adapter against a loopback server speaking its
//! vendor's wire format, the model `providers::from_env` returns, the `Box`, `Arc` and `&`
//! wrappers, and [`ScriptedModel`]. Run it on your own models and wrappers too.
//!
//! The suite drives a [`Harness`] you write for your model: for each case it asks the harness to
//! [`prime`](Harness::prime) the model's backend with an [`Exchange`], a canonical reply (or a
//! [`Failure`]) described in neutral terms, which the harness turns into whatever the model reads:
//! a vendor's JSON body or server-sent events on a loopback server, a script, a recording. Then it
//! calls the model and checks what comes back.
//!
//! | case | what must hold |
//! |---|---|
//! | `text`, `one_call`, `parallel_calls`, `empty_arguments`, `usage` | `chat` gives exactly the canonical reply: text, calls (ids, names, arguments, in order), usage, finish reason (the name of the model that answered, [`ChatResponse::model`], is the model's own) |
//! | `tool_result_sent_back` | a history ending in a tool result reaches the backend with the result's text and the call's id or tool name (checked on [`Harness::last_request`]) |
//! | `error_authentication`, `error_rate_limited`, `error_quota_exhausted`, `error_invalid_request`, `error_overloaded`, `error_server`, `error_undecodable` | `chat` and `chat_stream` fail with the matching [`ModelError`] variant, carrying the provider's message (and, for a rate limit, its retry-after); a stream ends with the error and never with `Finished` |
//! | `error_stream_cut_off` | a stream that stops early ends with [`ModelError::Stream`] |
//! | `error_stream_event`, `error_stream_overloaded` | a stream that carries an error event ends with the variant the same error as an HTTP status gives ([`ModelError::Server`], [`ModelError::Overloaded`]), with its message, so [`ModelError::is_retryable`] agrees |
//! | `stream_text`, `stream_tool_calls` | `chat_stream` ends with exactly one [`StreamEvent::Finished`], equal to the canonical reply and to the plain `chat` reply (the answering model's name too); the text deltas add up to its text; each call starts once (`ToolCallStart`, with its id and name) before its argument fragments, which reassemble into its arguments; a `Usage` event equals the reply's usage. A model that [streams natively](Capabilities::streaming) must send the text in at least two `TextDelta`s and tell each call; one that does not may leave the call and usage events out, as the default `chat_stream` does |
//!
//! Error cases the harness does not list in [`Capabilities::failing_with`] are skipped.
//!
//! ```
//! use agent_core::testing::ScriptedModel;
//! use agent_core::testing::conformance;
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! // The scripted model is its own harness: priming it pushes the exchange onto its script.
//! let model = ScriptedModel::new(Vec::<agent_core::ChatResponse>::new());
//! let report = conformance::run(&model, &model).await;
//! report.assert_ok();
//! assert!(report.passed.contains(&"tool_result_sent_back"));
//! # });
//! ```

use std::fmt;
use std::future::Future;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::Value;

use super::{ScriptStep, ScriptedModel};
use crate::message::{AssistantMessage, Message, ToolCall, ToolResultMessage, Usage};
use crate::model::{ChatRequest, ChatResponse, FinishReason, Model, ModelError, StreamEvent};
use crate::tool::ToolDef;

/// How long one call of the model may take before its case fails.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(20);

/// What the suite needs from the side of a model it does not see: a way to make the model's next
/// call get a given answer, and the request the model last sent.
///
/// The methods return futures so that a harness can start servers and read their recordings;
/// write them as `async fn` in your `impl`.
pub trait Harness {
    /// What the model claims: native streaming, and which failures the harness can produce.
    fn capabilities(&self) -> Capabilities;

    /// Arranges for the model's next call, a [`Call::Chat`] or a [`Call::Stream`], to be answered
    /// as `exchange` says, replacing whatever was arranged before. An HTTP harness encodes the
    /// reply as its vendor documents it: a JSON body for `chat`, server-sent events (the text in
    /// several pieces) for `chat_stream`; a failure as the matching status and error body, or for
    /// the stream failures as a cut-off stream or an error event.
    fn prime(&self, exchange: &Exchange, call: Call) -> impl Future<Output = ()>;

    /// The last request the model sent, as JSON: the wire body for an HTTP model, or any JSON
    /// form of the history it was given. `None` when it sent none.
    fn last_request(&self) -> impl Future<Output = Option<Value>>;
}

/// What a model claims, as its [`Harness`] declares it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Capabilities {
    /// Whether the model streams natively (rather than through the default
    /// [`Model::chat_stream`], which yields the whole reply at once).
    pub streams_natively: bool,
    /// The failures the harness can make the model meet.
    pub failures: Vec<ErrorKind>,
}

impl Capabilities {
    /// No native streaming, no failures.
    pub fn new() -> Self {
        Capabilities::default()
    }

    /// The model streams natively: the suite then wants text in pieces and each call told.
    pub fn streaming(mut self) -> Self {
        self.streams_natively = true;
        self
    }

    /// Adds failures the harness can produce.
    pub fn failing_with(mut self, kinds: impl IntoIterator<Item = ErrorKind>) -> Self {
        for kind in kinds {
            if !self.failures.contains(&kind) {
                self.failures.push(kind);
            }
        }
        self
    }
}

/// Which method of the model the next call is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// [`Model::chat`].
    Chat,
    /// [`Model::chat_stream`].
    Stream,
}

/// How the model's next call is to be answered.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Exchange {
    /// With this reply, exactly.
    Reply(ChatResponse),
    /// With this failure.
    Fail(Failure),
}

/// A kind of failure a model must report as its typed [`ModelError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The credentials are refused (HTTP 401): [`ModelError::Authentication`].
    Authentication,
    /// Too many requests (HTTP 429), with a delay to wait: [`ModelError::RateLimited`].
    RateLimited,
    /// The quota or credit is used up (HTTP 402, or a 429 whose body says so: OpenAI's
    /// `insufficient_quota`, a Gemini daily quota): [`ModelError::QuotaExhausted`], not retried.
    QuotaExhausted,
    /// The request is refused as invalid (HTTP 400): [`ModelError::InvalidRequest`].
    InvalidRequest,
    /// The provider is overloaded (HTTP 529 or 503): [`ModelError::Overloaded`].
    Overloaded,
    /// The provider failed (HTTP 500): [`ModelError::Server`].
    Server,
    /// A successful status with a body (or, streaming, an event) that is not the documented
    /// shape: [`ModelError::Decode`].
    Undecodable,
    /// A stream that stops before the reply is finished: [`ModelError::Stream`].
    StreamCutOff,
    /// A stream that carries an error event for a failure on the provider's side (Anthropic's
    /// `api_error`, OpenAI's `server_error`, Gemini's `INTERNAL`): the [`ModelError::Server`] an
    /// HTTP 500 gives, with its message.
    StreamErrorEvent,
    /// A stream that carries an error event saying the provider is overloaded (Anthropic's
    /// `overloaded_error`): the [`ModelError::Overloaded`] an HTTP 529 or 503 gives, retryable.
    StreamOverloaded,
}

impl ErrorKind {
    /// Every kind.
    pub const ALL: [ErrorKind; 10] = [
        ErrorKind::Authentication,
        ErrorKind::RateLimited,
        ErrorKind::QuotaExhausted,
        ErrorKind::InvalidRequest,
        ErrorKind::Overloaded,
        ErrorKind::Server,
        ErrorKind::Undecodable,
        ErrorKind::StreamCutOff,
        ErrorKind::StreamErrorEvent,
        ErrorKind::StreamOverloaded,
    ];

    /// Whether only a streamed call can meet it.
    pub fn is_stream_only(self) -> bool {
        matches!(
            self,
            ErrorKind::StreamCutOff | ErrorKind::StreamErrorEvent | ErrorKind::StreamOverloaded
        )
    }

    /// The suite's name for the case that checks it.
    pub fn case(self) -> &'static str {
        match self {
            ErrorKind::Authentication => "error_authentication",
            ErrorKind::RateLimited => "error_rate_limited",
            ErrorKind::QuotaExhausted => "error_quota_exhausted",
            ErrorKind::InvalidRequest => "error_invalid_request",
            ErrorKind::Overloaded => "error_overloaded",
            ErrorKind::Server => "error_server",
            ErrorKind::Undecodable => "error_undecodable",
            ErrorKind::StreamCutOff => "error_stream_cut_off",
            ErrorKind::StreamErrorEvent => "error_stream_event",
            ErrorKind::StreamOverloaded => "error_stream_overloaded",
        }
    }
}

/// A failure to produce: its kind, the provider's message, and (for a rate limit) how long the
/// provider asks the caller to wait.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Failure {
    /// What kind of failure.
    pub kind: ErrorKind,
    /// The provider's message: the harness puts it where its vendor puts error messages, and the
    /// suite wants it back in the error (empty for the kinds that carry none).
    pub message: String,
    /// How long to wait, for [`ErrorKind::RateLimited`] (whole seconds, so every vendor's header or
    /// body can say it).
    pub retry_after: Option<Duration>,
}

impl Failure {
    /// The suite's failure of this kind.
    pub fn of(kind: ErrorKind) -> Self {
        let message = match kind {
            ErrorKind::Authentication => "Incorrect API key provided (conformance)",
            ErrorKind::RateLimited => "Rate limit reached for requests (conformance)",
            ErrorKind::QuotaExhausted => {
                "You exceeded your current quota, please check your plan and billing details (conformance)"
            }
            ErrorKind::InvalidRequest => "Invalid value for 'messages' (conformance)",
            ErrorKind::Overloaded => "Overloaded (conformance)",
            ErrorKind::Server => {
                "The server had an error while processing the request (conformance)"
            }
            ErrorKind::StreamErrorEvent => "An internal error interrupted the stream (conformance)",
            ErrorKind::StreamOverloaded => "Overloaded, in the middle of the stream (conformance)",
            ErrorKind::Undecodable | ErrorKind::StreamCutOff => "",
        };
        Failure {
            kind,
            message: message.to_owned(),
            retry_after: (kind == ErrorKind::RateLimited).then_some(Duration::from_secs(2)),
        }
    }

    /// The [`ModelError`] a model without a wire format (a test double) fails with for it: the
    /// variant the suite expects, with the message and delay.
    pub fn to_model_error(&self) -> ModelError {
        let message = self.message.clone();
        match self.kind {
            ErrorKind::Authentication => ModelError::Authentication {
                status: 401,
                message,
            },
            ErrorKind::RateLimited => ModelError::RateLimited {
                retry_after: self.retry_after,
                message,
            },
            ErrorKind::QuotaExhausted => ModelError::QuotaExhausted { message },
            ErrorKind::InvalidRequest => ModelError::InvalidRequest {
                status: 400,
                message,
            },
            ErrorKind::Overloaded => ModelError::Overloaded {
                status: 529,
                message,
            },
            ErrorKind::Server => ModelError::Server {
                status: 500,
                message,
            },
            ErrorKind::Undecodable => ModelError::Decode {
                message: "expected value at line 1 column 1".to_owned(),
                excerpt: "<html>".to_owned(),
            },
            ErrorKind::StreamCutOff => ModelError::Stream {
                message: "the stream was cut off before the reply was finished".to_owned(),
            },
            ErrorKind::StreamErrorEvent => ModelError::Server {
                status: 500,
                message,
            },
            ErrorKind::StreamOverloaded => ModelError::Overloaded {
                status: 529,
                message,
            },
        }
    }

    /// Whether `error` is how a model reports this failure.
    fn check(&self, error: &ModelError) -> Result<(), String> {
        let carries = |message: &str| {
            if message.contains(&self.message) {
                Ok(())
            } else {
                Err(format!(
                    "the error's message {message:?} does not carry the provider's {:?}",
                    self.message
                ))
            }
        };
        match (self.kind, error) {
            (ErrorKind::Authentication, ModelError::Authentication { message, .. })
            | (ErrorKind::InvalidRequest, ModelError::InvalidRequest { message, .. })
            | (ErrorKind::QuotaExhausted, ModelError::QuotaExhausted { message })
            | (ErrorKind::Overloaded, ModelError::Overloaded { message, .. })
            | (ErrorKind::StreamOverloaded, ModelError::Overloaded { message, .. })
            | (ErrorKind::Server, ModelError::Server { message, .. })
            | (ErrorKind::StreamErrorEvent, ModelError::Server { message, .. }) => carries(message),
            (
                ErrorKind::RateLimited,
                ModelError::RateLimited {
                    retry_after,
                    message,
                },
            ) => {
                if *retry_after != self.retry_after {
                    return Err(format!(
                        "retry_after is {retry_after:?}, the provider said {:?}",
                        self.retry_after
                    ));
                }
                carries(message)
            }
            (ErrorKind::Undecodable, ModelError::Decode { .. })
            | (ErrorKind::StreamCutOff, ModelError::Stream { .. }) => Ok(()),
            (kind, other) => Err(format!("expected the error for {kind:?}, got {other:?}")),
        }
    }
}

impl From<Failure> for ScriptStep {
    fn from(failure: Failure) -> Self {
        ScriptStep::error(move || failure.to_model_error())
    }
}

/// The scripted model is its own harness: priming pushes the exchange onto its script, and the
/// last request is its last [`RecordedRequest`](super::RecordedRequest) as JSON. It does not
/// stream natively and can fail every way.
impl Harness for ScriptedModel {
    fn capabilities(&self) -> Capabilities {
        Capabilities::new().failing_with(ErrorKind::ALL)
    }

    async fn prime(&self, exchange: &Exchange, _call: Call) {
        match exchange {
            Exchange::Reply(reply) => self.push(reply.clone()),
            Exchange::Fail(failure) => self.push(failure.clone()),
        }
    }

    async fn last_request(&self) -> Option<Value> {
        ScriptedModel::last_request(self).and_then(|request| serde_json::to_value(request).ok())
    }
}

/// What the suite found: the cases that passed, failed, and were skipped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Report {
    /// The cases that passed, in the order they ran.
    pub passed: Vec<&'static str>,
    /// The cases that failed, and why.
    pub failed: Vec<CaseFailure>,
    /// The error cases the harness cannot produce.
    pub skipped: Vec<&'static str>,
}

/// A case that failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseFailure {
    /// The case's name (see the table in the [module docs](self)).
    pub case: &'static str,
    /// What did not hold.
    pub reason: String,
}

impl Report {
    /// Whether every case that ran passed.
    pub fn is_ok(&self) -> bool {
        self.failed.is_empty()
    }

    /// The failure of this case, if it failed.
    pub fn failure(&self, case: &str) -> Option<&CaseFailure> {
        self.failed.iter().find(|failure| failure.case == case)
    }

    /// Panics, naming every failed case and why, unless all passed.
    #[track_caller]
    pub fn assert_ok(&self) {
        if !self.is_ok() {
            panic!("{self}");
        }
    }

    fn record(&mut self, case: &'static str, outcome: Result<(), String>) {
        match outcome {
            Ok(()) => self.passed.push(case),
            Err(reason) => self.failed.push(CaseFailure { case, reason }),
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_ok() {
            return write!(
                f,
                "the model conforms: {} cases passed, {} skipped",
                self.passed.len(),
                self.skipped.len()
            );
        }
        write!(
            f,
            "the model does not conform: {} of {} cases failed",
            self.failed.len(),
            self.failed.len() + self.passed.len()
        )?;
        for failure in &self.failed {
            write!(f, "\n- {}: {}", failure.case, failure.reason)?;
        }
        Ok(())
    }
}

/// Runs every case on `model`, primed through `harness`, and reports.
pub async fn run<M: Model + ?Sized, H: Harness>(model: &M, harness: &H) -> Report {
    let capabilities = harness.capabilities();
    let conversation = Conversation::new();
    let mut report = Report::default();
    for (case, reply) in [
        ("text", text_reply()),
        ("one_call", one_call_reply()),
        ("parallel_calls", parallel_calls_reply()),
        ("empty_arguments", empty_arguments_reply()),
        ("usage", usage_reply()),
    ] {
        let outcome = check_chat(model, harness, &conversation, &reply).await;
        report.record(case, outcome);
    }
    report.record(
        "tool_result_sent_back",
        check_tool_result(model, harness).await,
    );
    for kind in ErrorKind::ALL {
        if capabilities.failures.contains(&kind) {
            let outcome = check_failure(model, harness, &conversation, &Failure::of(kind)).await;
            report.record(kind.case(), outcome);
        } else {
            report.skipped.push(kind.case());
        }
    }
    let native = capabilities.streams_natively;
    for (case, reply) in [
        ("stream_text", text_reply()),
        ("stream_tool_calls", parallel_calls_reply()),
    ] {
        let outcome = check_stream(model, harness, &conversation, &reply, native).await;
        report.record(case, outcome);
    }
    report
}

/// [`run`], then panics naming every failed case unless all passed.
#[track_caller]
pub fn assert_conforms<'a, M: Model + ?Sized, H: Harness>(
    model: &'a M,
    harness: &'a H,
) -> impl Future<Output = Report> + 'a {
    let caller = std::panic::Location::caller();
    async move {
        let report = run(model, harness).await;
        if !report.is_ok() {
            panic!("{report}\n(conformance run from {caller})");
        }
        report
    }
}

/// The history and tools of a request.
struct Conversation {
    messages: Vec<Message>,
    tools: Vec<ToolDef>,
}

impl Conversation {
    fn new() -> Self {
        Conversation {
            messages: vec![
                Message::system("You are under a conformance test. Answer briefly."),
                Message::user("Do I need an umbrella in Beijing today?"),
            ],
            tools: tools(),
        }
    }

    fn request(&self) -> ChatRequest<'_> {
        ChatRequest::new(&self.messages, &self.tools)
    }
}

fn tools() -> Vec<ToolDef> {
    let city = serde_json::json!({"type": "string", "description": "City name"});
    vec![
        ToolDef::new(
            "get_weather",
            "Look up today's weather for a city.",
            serde_json::json!({
                "type": "object",
                "properties": {
                    "city": city,
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}
                },
                "required": ["city"]
            }),
        ),
        ToolDef::new(
            "get_time",
            "Tell the local time in a city.",
            serde_json::json!({"type": "object", "properties": {"city": city}, "required": ["city"]}),
        ),
        ToolDef::new(
            "now",
            "Tell the time here.",
            serde_json::json!({"type": "object", "properties": {}}),
        ),
    ]
}

fn text_reply() -> ChatResponse {
    ChatResponse::new(AssistantMessage::text(
        "Light rain in Beijing today, 18°C: take an umbrella. 北京今天有小雨，记得带伞。",
    ))
    .with_usage(Usage {
        input_tokens: 42,
        output_tokens: 17,
    })
    .with_finish_reason(FinishReason::Stop)
}

fn one_call_reply() -> ChatResponse {
    ChatResponse::new(AssistantMessage::tool_calls([ToolCall::new(
        "call_conf_1",
        "get_weather",
        r#"{"city":"Beijing","unit":"celsius"}"#,
    )]))
    .with_usage(Usage {
        input_tokens: 40,
        output_tokens: 12,
    })
    .with_finish_reason(FinishReason::ToolCalls)
}

fn parallel_calls_reply() -> ChatResponse {
    let mut reply = AssistantMessage::text("Let me check both.");
    reply.tool_calls = vec![
        ToolCall::new("call_conf_2", "get_weather", r#"{"city":"北京"}"#),
        ToolCall::new(
            "call_conf_3",
            "get_time",
            r#"{"city":"Beijing \"the capital\""}"#,
        ),
        ToolCall::new("call_conf_4", "now", "{}"),
    ];
    ChatResponse::new(reply)
        .with_usage(Usage {
            input_tokens: 51,
            output_tokens: 33,
        })
        .with_finish_reason(FinishReason::ToolCalls)
}

fn empty_arguments_reply() -> ChatResponse {
    ChatResponse::new(AssistantMessage::tool_calls([ToolCall::new(
        "call_conf_5",
        "now",
        "{}",
    )]))
    .with_usage(Usage {
        input_tokens: 38,
        output_tokens: 5,
    })
    .with_finish_reason(FinishReason::ToolCalls)
}

fn usage_reply() -> ChatResponse {
    ChatResponse::new(AssistantMessage::text("Yes."))
        .with_usage(Usage {
            input_tokens: 123_456,
            output_tokens: 7_890,
        })
        .with_finish_reason(FinishReason::Stop)
}

/// Awaits a call of the model, or fails after [`CALL_TIMEOUT`].
async fn within<T>(call: impl Future<Output = T>) -> Result<T, String> {
    let call = std::pin::pin!(call);
    let timer = futures_timer::Delay::new(CALL_TIMEOUT);
    match futures_util::future::select(call, timer).await {
        futures_util::future::Either::Left((value, _)) => Ok(value),
        futures_util::future::Either::Right(_) => Err(format!(
            "the model did not answer within {} s",
            CALL_TIMEOUT.as_secs()
        )),
    }
}

async fn chat<M: Model + ?Sized>(
    model: &M,
    conversation: &Conversation,
) -> Result<Result<ChatResponse, ModelError>, String> {
    within(model.chat(conversation.request())).await
}

async fn stream<M: Model + ?Sized>(
    model: &M,
    conversation: &Conversation,
) -> Result<Vec<Result<StreamEvent, ModelError>>, String> {
    within(
        model
            .chat_stream(conversation.request())
            .collect::<Vec<_>>(),
    )
    .await
}

/// Whether `got` is the canonical reply `expected`; the name of the model that answered
/// ([`ChatResponse::model`]) is the model's own, not the suite's.
fn same_reply(got: &ChatResponse, expected: &ChatResponse, what: &str) -> Result<(), String> {
    let mut named_alike = got.clone();
    named_alike.model.clone_from(&expected.model);
    if named_alike == *expected {
        Ok(())
    } else {
        Err(format!(
            "{what} differs from the scripted one:\n  got:      {got:?}\n  expected: {expected:?}"
        ))
    }
}

async fn check_chat<M: Model + ?Sized, H: Harness>(
    model: &M,
    harness: &H,
    conversation: &Conversation,
    reply: &ChatResponse,
) -> Result<(), String> {
    harness
        .prime(&Exchange::Reply(reply.clone()), Call::Chat)
        .await;
    let got = chat(model, conversation)
        .await?
        .map_err(|error| format!("chat failed: {error} ({error:?})"))?;
    same_reply(&got, reply, "the reply")
}

async fn check_tool_result<M: Model + ?Sized, H: Harness>(
    model: &M,
    harness: &H,
) -> Result<(), String> {
    const RESULT: &str = "Light rain, 18 degrees (result conformance-7Q2)";
    const CALL_ID: &str = "call_conf_result";
    let mut conversation = Conversation::new();
    conversation
        .messages
        .push(Message::Assistant(AssistantMessage::tool_calls([
            ToolCall::new(CALL_ID, "get_weather", r#"{"city":"Beijing"}"#),
        ])));
    conversation
        .messages
        .push(Message::Tool(ToolResultMessage::new(CALL_ID, RESULT)));
    let reply = text_reply();
    harness
        .prime(&Exchange::Reply(reply.clone()), Call::Chat)
        .await;
    let got = chat(model, &conversation)
        .await?
        .map_err(|error| format!("chat after a tool result failed: {error} ({error:?})"))?;
    same_reply(&got, &reply, "the reply")?;
    let Some(request) = harness.last_request().await else {
        return Err("the harness saw no request".to_owned());
    };
    let mut strings = Vec::new();
    collect_strings(&request, &mut strings);
    if !strings.iter().any(|text| text.contains(RESULT)) {
        return Err(format!(
            "the request does not carry the tool result {RESULT:?}: {request}"
        ));
    }
    if !strings
        .iter()
        .any(|text| text.contains(CALL_ID) || *text == "get_weather")
    {
        return Err(format!(
            "the request does not say which call the result answers (neither {CALL_ID:?} nor the tool's name): {request}"
        ));
    }
    Ok(())
}

/// Every string in a JSON value, keys included.
fn collect_strings<'v>(value: &'v Value, out: &mut Vec<&'v str>) {
    match value {
        Value::String(text) => out.push(text),
        Value::Array(items) => items.iter().for_each(|item| collect_strings(item, out)),
        Value::Object(fields) => {
            for (key, field) in fields {
                out.push(key);
                collect_strings(field, out);
            }
        }
        _ => {}
    }
}

async fn check_failure<M: Model + ?Sized, H: Harness>(
    model: &M,
    harness: &H,
    conversation: &Conversation,
    failure: &Failure,
) -> Result<(), String> {
    let exchange = Exchange::Fail(failure.clone());
    if !failure.kind.is_stream_only() {
        harness.prime(&exchange, Call::Chat).await;
        match chat(model, conversation).await? {
            Ok(reply) => return Err(format!("chat succeeded: {reply:?}")),
            Err(error) => failure
                .check(&error)
                .map_err(|why| format!("chat: {why}"))?,
        }
    }
    harness.prime(&exchange, Call::Stream).await;
    let events = stream(model, conversation).await?;
    let Some((last, before)) = events.split_last() else {
        return Err("chat_stream ended without an event".to_owned());
    };
    for event in before {
        match event {
            Ok(StreamEvent::Finished(_)) => {
                return Err(format!("chat_stream finished a reply: {events:?}"));
            }
            Err(error) => {
                return Err(format!(
                    "chat_stream went on after an error ({error}): {events:?}"
                ));
            }
            Ok(_) => {}
        }
    }
    match last {
        Ok(event) => Err(format!(
            "chat_stream ended with {event:?}, not with an error"
        )),
        Err(error) => failure
            .check(error)
            .map_err(|why| format!("chat_stream: {why}")),
    }
}

async fn check_stream<M: Model + ?Sized, H: Harness>(
    model: &M,
    harness: &H,
    conversation: &Conversation,
    reply: &ChatResponse,
    native: bool,
) -> Result<(), String> {
    harness
        .prime(&Exchange::Reply(reply.clone()), Call::Stream)
        .await;
    let events = stream(model, conversation).await?;
    let finished = check_events(&events, native)?;
    same_reply(finished, reply, "the streamed reply")?;

    harness
        .prime(&Exchange::Reply(reply.clone()), Call::Chat)
        .await;
    let plain = chat(model, conversation)
        .await?
        .map_err(|error| format!("chat failed: {error} ({error:?})"))?;
    if &plain != finished {
        return Err(format!(
            "the streamed reply differs from the plain chat reply:\n  streamed: {finished:?}\n  chat:     {plain:?}"
        ));
    }
    Ok(())
}

/// A call as its stream events built it.
struct StreamedCall<'e> {
    id: &'e str,
    name: &'e str,
    arguments: String,
}

/// Checks a stream's events against each other and returns the reply it finished with; `native`
/// is whether the model claims native streaming (else its call events may be missing).
fn check_events(
    events: &[Result<StreamEvent, ModelError>],
    native: bool,
) -> Result<&ChatResponse, String> {
    let Some((last, before)) = events.split_last() else {
        return Err("chat_stream ended without an event".to_owned());
    };
    let Ok(StreamEvent::Finished(reply)) = last else {
        return Err(format!(
            "chat_stream did not end with Finished: {last:?} (events: {events:?})"
        ));
    };
    let mut text = String::new();
    let mut text_deltas = 0;
    let mut calls: Vec<StreamedCall<'_>> = Vec::new();
    let mut usage = None;
    for event in before {
        match event {
            Err(error) => return Err(format!("chat_stream failed: {error} ({error:?})")),
            Ok(StreamEvent::Finished(_)) => {
                return Err(format!(
                    "chat_stream yielded Finished before its last event: {events:?}"
                ));
            }
            Ok(StreamEvent::TextDelta(delta)) => {
                text.push_str(delta);
                text_deltas += 1;
            }
            Ok(StreamEvent::ToolCallStart { index, id, name }) => {
                if *index != calls.len() {
                    return Err(format!(
                        "ToolCallStart for index {index} where call {} was next: {events:?}",
                        calls.len()
                    ));
                }
                calls.push(StreamedCall {
                    id,
                    name,
                    arguments: String::new(),
                });
            }
            Ok(StreamEvent::ToolCallArguments { index, fragment }) => {
                let Some(call) = calls.get_mut(*index) else {
                    return Err(format!(
                        "argument fragment for call {index} before its ToolCallStart: {events:?}"
                    ));
                };
                call.arguments.push_str(fragment);
            }
            Ok(StreamEvent::Usage(reported)) => usage = Some(*reported),
            Ok(StreamEvent::ReasoningDelta(_)) => {}
        }
    }
    if text != reply.message.content {
        return Err(format!(
            "the text deltas add up to {text:?}, the reply's text is {:?}",
            reply.message.content
        ));
    }
    if native && !reply.message.content.is_empty() && text_deltas < 2 {
        return Err(format!(
            "the model claims native streaming, but its text came in {text_deltas} delta(s): {events:?}"
        ));
    }
    let calls_left_out = !native && calls.is_empty();
    if !calls_left_out && calls.len() != reply.message.tool_calls.len() {
        return Err(format!(
            "{} calls started in the stream, the reply has {}: {events:?}",
            calls.len(),
            reply.message.tool_calls.len()
        ));
    }
    for (index, (streamed, call)) in calls.iter().zip(&reply.message.tool_calls).enumerate() {
        if (streamed.id, streamed.name) != (call.id.as_str(), call.name.as_str()) {
            return Err(format!(
                "call {index} started as {}/{}, finished as {}/{}",
                streamed.id, streamed.name, call.id, call.name
            ));
        }
        if !same_arguments(&streamed.arguments, &call.arguments) {
            return Err(format!(
                "the fragments of call {index} add up to {:?}, its arguments are {:?}",
                streamed.arguments, call.arguments
            ));
        }
    }
    if let Some(usage) = usage
        && usage != reply.usage
    {
        return Err(format!(
            "the Usage event says {usage:?}, the reply {:?}",
            reply.usage
        ));
    }
    Ok(reply)
}

/// The same text, or the same JSON (an adapter may write the arguments of the finished reply
/// without the whitespace its provider streamed).
fn same_arguments(streamed: &str, finished: &str) -> bool {
    if streamed == finished {
        return true;
    }
    match (
        serde_json::from_str::<Value>(streamed),
        serde_json::from_str::<Value>(finished),
    ) {
        (Ok(streamed), Ok(finished)) => streamed == finished,
        _ => false,
    }
}
