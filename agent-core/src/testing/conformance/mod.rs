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
//! | `error_authentication`, `error_rate_limited`, `error_quota_exhausted`, `error_invalid_request`, `error_context_overflow`, `error_overloaded`, `error_server`, `error_undecodable` | `chat` and `chat_stream` fail with the matching [`ModelError`] variant, carrying the provider's message (and, for a rate limit, its retry-after); a stream ends with the error and never with `Finished` |
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

mod canonical;
mod cases;
mod failure;
mod report;
mod scripted;
mod streams;

use std::future::Future;
use std::time::Duration;

use serde_json::Value;

use crate::model::{ChatResponse, Model};
#[cfg(doc)]
use crate::model::{ModelError, StreamEvent};
#[cfg(doc)]
use crate::testing::ScriptedModel;
use canonical::{
    Conversation, empty_arguments_reply, one_call_reply, parallel_calls_reply, text_reply,
    usage_reply,
};
use cases::{check_chat, check_failure, check_tool_result};
pub use failure::{ErrorKind, Failure};
pub use report::{CaseFailure, Report};
use streams::check_stream;

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
