//! OpenAI Responses (`POST {base}/responses`): OpenAI's newer API, the one its reasoning models
//! are built around. This adapter uses it statelessly by default: the whole history goes with
//! every request (`store: false`), and the reasoning of earlier replies goes back as the encrypted
//! items the API handed out (`include: ["reasoning.encrypted_content"]`), so nothing depends on
//! what the server kept.
//!
//! Wire format: <https://platform.openai.com/docs/api-reference/responses/create> and
//! <https://platform.openai.com/docs/api-reference/responses/object>; errors as
//! <https://platform.openai.com/docs/guides/error-codes>.
//!
//! The folder: this file holds [`OpenAiResponses`], its builder and its [`Model`] impl;
//! `request.rs` the request body, `response.rs` the response object (a reply, and what a stream's
//! last event carries), `stream.rs` the streamed reply.

use std::fmt;

use super::common::{Common, KeyHeader, common_builder_methods, encode};
use super::http::Endpoint;
use super::openai::{OPENAI_BASE_URL, is_reasoning_model};
use crate::model::{BoxStream, StreamEvent};
use crate::model::{ChatRequest, ChatResponse, Model, ModelError};
use crate::tool::BoxFuture;

mod request;
pub(super) mod response;
pub(super) mod stream;

use request::{Options, WireRequest};
use response::parse_response;

/// A model behind the OpenAI Responses API.
///
/// Stateless unless [`store`](Self::store) says otherwise: every request carries the whole
/// conversation, and a reasoning model's reasoning goes back in the encrypted form the API gave
/// it, so a tool loop keeps its chain of thought without the server keeping anything. Tools are
/// sent in strict mode wherever strict mode can express their schema
/// ([`strict_tools`](Self::strict_tools)).
///
/// ```
/// use agent_core::providers::OpenAiResponses;
/// use agent_core::{Effort, ModelSettings, Thinking};
///
/// let gpt = OpenAiResponses::new("gpt-5").api_key("sk-...").max_tokens(4_000);
/// assert_eq!(gpt.model(), "gpt-5");
/// let local = OpenAiResponses::new("gpt-oss-20b").base_url("http://127.0.0.1:8000/v1");
/// // Reasoning effort (with a readable summary) is a per-request setting.
/// let settings = ModelSettings::new().thinking(Thinking::Effort(Effort::Low));
/// # let _ = (local, settings);
/// ```
pub struct OpenAiResponses {
    common: Common,
    url: Endpoint,
    strict_tools: bool,
    store: bool,
    /// Whether to ask for encrypted reasoning when not storing; `None`: by the model's name.
    encrypted_reasoning: Option<bool>,
}

impl OpenAiResponses {
    /// A model on OpenAI's endpoint; give it a key with [`api_key`](Self::api_key).
    pub fn new(model: impl Into<String>) -> Self {
        OpenAiResponses {
            common: Common::new(model),
            url: Endpoint::join(OPENAI_BASE_URL, "responses"),
            strict_tools: true,
            store: false,
            encrypted_reasoning: None,
        }
    }

    common_builder_methods!();

    /// Sends requests to another service that speaks the Responses API: `base` is the part
    /// before `/responses`, e.g. `http://127.0.0.1:8000/v1` for vLLM.
    pub fn base_url(mut self, base: &str) -> Self {
        self.url = Endpoint::join(base, "responses");
        self
    }

    /// Whether tools go in strict mode (Structured Outputs), so the model's arguments always fit
    /// their schema; on by default. A tool whose schema strict mode cannot express (a map) goes
    /// without it either way. Every tool says which (`strict: true` or `false`), since the
    /// Responses API takes a tool that does not say as strict.
    pub fn strict_tools(mut self, strict: bool) -> Self {
        self.strict_tools = strict;
        self
    }

    /// Whether OpenAI keeps each response (`store`); off by default.
    ///
    /// Off, the adapter asks for the encrypted form of the reasoning and sends it back with the
    /// history: nothing depends on what the server kept (and zero-data-retention organizations
    /// can use it). On, responses are kept (for the dashboard, evals, distillation), but earlier
    /// reasoning is not sent back: the API pairs a kept reasoning item by id with the items that
    /// followed it, whose ids a transcript does not keep, and refuses the request when they are
    /// missing. The history itself goes whole with every request either way.
    pub fn store(mut self, store: bool) -> Self {
        self.store = store;
        self
    }

    /// Whether reasoning comes back encrypted, to be sent back with the history (only when not
    /// storing). By default, for the models that reason (o-series, GPT-5 and later, Codex): the
    /// API refuses the request for a model that does not. Say so for a model whose name does not
    /// tell (a compatible service's reasoning model).
    pub fn encrypted_reasoning(mut self, encrypted: bool) -> Self {
        self.encrypted_reasoning = Some(encrypted);
        self
    }

    fn asks_for_encrypted_reasoning(&self) -> bool {
        !self.store
            && self
                .encrypted_reasoning
                .unwrap_or_else(|| is_reasoning_model(&self.common.model))
    }

    /// The request body for this conversation, as it goes on the wire; `stream` asks for a
    /// streamed reply. Refuses what the API cannot take (audio) before anything is sent.
    pub(crate) fn request_body<'a>(
        &'a self,
        request: ChatRequest<'a>,
        stream: bool,
    ) -> Result<WireRequest<'a>, ModelError> {
        let options = Options {
            strict_tools: self.strict_tools,
            store: self.store,
            encrypted_reasoning: self.asks_for_encrypted_reasoning(),
        };
        request::request_body(&self.common, options, request, stream)
    }

    fn key_header() -> KeyHeader {
        KeyHeader {
            name: reqwest::header::AUTHORIZATION,
            prefix: "Bearer ",
        }
    }
}

impl Model for OpenAiResponses {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let body = self
            .request_body(request, false)
            .and_then(|body| encode(&body));
        Box::pin(
            self.common
                .send(&self.url, Self::key_header(), body, parse_response),
        )
    }

    fn chat_stream<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxStream<'a, Result<StreamEvent, ModelError>> {
        let body = self
            .request_body(request, true)
            .and_then(|body| encode(&body));
        let request = self
            .common
            .stream_request(&self.url, Self::key_header(), body);
        super::sse::stream_reply::<stream::ResponsesReassembler>(request)
    }

    fn model_id(&self) -> Option<&str> {
        Some(&self.common.model)
    }
}

impl fmt::Debug for OpenAiResponses {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiResponses")
            .field("url", &self.url)
            .field("common", &self.common)
            .field("strict_tools", &self.strict_tools)
            .field("store", &self.store)
            .field("encrypted_reasoning", &self.encrypted_reasoning)
            .finish()
    }
}
