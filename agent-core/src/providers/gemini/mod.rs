//! Google Gemini `generateContent` (`POST {base}/models/{model}:generateContent`).
//!
//! Wire format: <https://ai.google.dev/api/generate-content>, the function-calling guide
//! <https://ai.google.dev/gemini-api/docs/function-calling>, the thinking guide
//! <https://ai.google.dev/gemini-api/docs/thinking> and the thought-signatures guide
//! <https://ai.google.dev/gemini-api/docs/thought-signatures>.
//!
//! - Parts: images, documents and audio alike, as `inlineData` (bytes) or `fileData` (a URL or a
//!   file URI). A tool result's parts follow the `functionResponse` parts of their turn as parts
//!   of the same `user` turn, each result's introduced by a line naming its function: a
//!   `functionResponse` itself carries JSON only (its newer `parts` field takes only inline
//!   images and PDFs, from Gemini 3 on), while sibling parts work with every model.
//! - Reasoning: thought parts (`thought: true`) become [`Reasoning`] with their
//!   `thoughtSignature`. Thought parts in a row make one piece until one of them brings a
//!   signature, which closes it: so a thought streamed in pieces is the same reasoning as the
//!   thought whole. A signature on the reply's text (Gemini 3 puts one on its last part, in a
//!   stream often on an empty text part) is kept as a [`Reasoning`] with empty text, the
//!   signature and the id [`TEXT_SIGNATURE`]; a function call's signature stays on its
//!   [`ToolCall::signature`]. A model turn goes back as its thought parts in order (with
//!   `thought: true` and their signatures), then its text with the text's signature (or, when
//!   the text is empty, an empty text part with it after the calls, where Gemini puts it), then
//!   its calls with theirs. Thinking tokens (`thoughtsTokenCount`) count as output tokens: they
//!   are billed as output.
//! - Thinking: `generationConfig.thinkingConfig`. Gemini 3 models (by name) take a
//!   `thinkingLevel`: `low` for a low effort (and for [`Thinking::Off`], as Gemini 3 cannot stop
//!   thinking), `high` above (the levels every Gemini 3 model takes). Older models take a
//!   `thinkingBudget`: the budget of [`Thinking::budget_tokens`], 0 for off. Thought summaries are
//!   asked for (`includeThoughts`) whenever thinking is on.
//!
//! The folder: this file holds [`Gemini`], its builder and its [`Model`] impl; `request.rs` the
//! request body, `response.rs` the reply (and a streamed reply's chunks), `stream.rs` the
//! streamed reply.

use std::fmt;

use reqwest::header::HeaderName;

use super::common::{Common, KeyHeader, common_builder_methods, encode};
use super::http::{Endpoint, join_url};
#[cfg(doc)]
use crate::message::ToolCall;
use crate::model::{BoxStream, StreamEvent};
use crate::model::{ChatRequest, ChatResponse, Model, ModelError};
#[cfg(doc)]
use crate::reasoning::Reasoning;
#[cfg(doc)]
use crate::settings::Thinking;
use crate::tool::BoxFuture;

mod request;
pub(super) mod response;
pub(super) mod stream;

use request::WireRequest;
#[cfg(doc)]
use response::TEXT_SIGNATURE;
use response::parse_response;

/// Gemini's own endpoint.
pub const GEMINI_BASE_URL: &str = "https://generativelanguage.googleapis.com/v1beta";

/// A Gemini model behind the `generateContent` API.
///
/// - **Parts**: images, documents and audio as bytes (`inlineData`) or by URL or file URI
///   (`fileData`). A tool result's parts follow the function responses of their turn, introduced
///   by a line naming the function.
/// - **Reasoning**: thought summaries are [`Reasoning`] from `"gemini"` with their thought
///   signatures. A signature Gemini puts on the reply's text is a [`Reasoning`] with empty text,
///   that signature and the id `"text"`; a function call's is its
///   [`ToolCall::signature`]. All go back where they came from. Thinking tokens count as output.
/// - **Thinking** ([`ModelSettings::thinking`](crate::ModelSettings::thinking)): `thinkingBudget`
///   ([`Thinking::budget_tokens`], 0 for [`Thinking::Off`]) with thought summaries included; for
///   Gemini 3 models (`gemini-3...`) `thinkingLevel` instead: `low` for a low effort and for off
///   (Gemini 3 always thinks), `high` for medium and high. Gemini 2.5 Pro cannot stop thinking
///   either and refuses a budget of 0.
///
/// ```
/// use agent_core::providers::Gemini;
///
/// let gemini = Gemini::new("gemini-2.5-flash").api_key("...");
/// ```
pub struct Gemini {
    common: Common,
    base_url: String,
    /// The model's `generateContent` and `streamGenerateContent` URLs, made from `base_url`.
    generate: Endpoint,
    stream: Endpoint,
    json_schema: bool,
}

impl Gemini {
    /// A model on Google's endpoint. Schemas go as JSON Schema (`parametersJsonSchema`,
    /// `responseJsonSchema`) to models that take it (Gemini 2.5 and later, by the model's name),
    /// else in Gemini's OpenAPI subset: see [`json_schema`](Self::json_schema).
    pub fn new(model: impl Into<String>) -> Self {
        let model = model.into();
        let json_schema = takes_json_schema(&model);
        Gemini {
            generate: method_url(GEMINI_BASE_URL, &model, "generateContent"),
            stream: method_url(GEMINI_BASE_URL, &model, "streamGenerateContent?alt=sse"),
            common: Common::new(model),
            base_url: GEMINI_BASE_URL.to_owned(),
            json_schema,
        }
    }

    /// Chooses how schemas are sent. JSON Schema (`parametersJsonSchema`, `responseJsonSchema`)
    /// keeps what the tool's schema says: references (recursive types too), maps with the type
    /// of their values, `const`, every standard format. Gemini's OpenAPI subset (`parameters`,
    /// `responseSchema`), which older models need, has none of those: references are inlined up
    /// to a depth of 8 (a recursive type is cut there), a map is a bare object, and the formats
    /// it does not know are dropped.
    pub fn json_schema(mut self, json_schema: bool) -> Self {
        self.json_schema = json_schema;
        self
    }

    common_builder_methods!();

    /// Sends requests elsewhere: `base` is the part before `/models/{model}:generateContent`.
    pub fn base_url(mut self, base: &str) -> Self {
        self.base_url = base.to_owned();
        self.generate = method_url(base, &self.common.model, "generateContent");
        self.stream = method_url(base, &self.common.model, "streamGenerateContent?alt=sse");
        self
    }

    /// The request body for this conversation, as it goes on the wire (the same for a streamed
    /// reply: the URL asks for the stream).
    pub(crate) fn request_body<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> Result<WireRequest<'a>, ModelError> {
        request::request_body(&self.common, self.json_schema, request)
    }
}

/// The URL of one of `model`'s methods (`generateContent`, `streamGenerateContent`) under `base`.
fn method_url(base: &str, model: &str, method: &str) -> Endpoint {
    Endpoint::new(join_url(base, &format!("models/{model}:{method}")))
}

impl Model for Gemini {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let body = self.request_body(request).and_then(|body| encode(&body));
        Box::pin(
            self.common
                .send(&self.generate, key_header(), body, parse_response),
        )
    }

    fn chat_stream<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxStream<'a, Result<StreamEvent, ModelError>> {
        let body = self.request_body(request).and_then(|body| encode(&body));
        let request = self.common.stream_request(&self.stream, key_header(), body);
        super::sse::stream_reply::<stream::GeminiReassembler>(request)
    }

    fn model_id(&self) -> Option<&str> {
        Some(&self.common.model)
    }
}

fn key_header() -> KeyHeader {
    KeyHeader {
        name: HeaderName::from_static("x-goog-api-key"),
        prefix: "",
    }
}

impl fmt::Debug for Gemini {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Gemini")
            .field("base_url", &self.base_url)
            .field("json_schema", &self.json_schema)
            .field("common", &self.common)
            .finish()
    }
}

/// Whether a Gemini model takes JSON Schema, by its name: 2.5 and every later version do (and
/// names this code does not know, which are newer), 1.x and 2.0 do not.
fn takes_json_schema(model: &str) -> bool {
    let name = model.rsplit('/').next().unwrap_or(model);
    !["gemini-1.", "gemini-2.0", "gemini-pro", "gemini-ultra"]
        .iter()
        .any(|old| name.starts_with(old))
}
