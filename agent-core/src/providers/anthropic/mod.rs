//! Anthropic Messages (`POST {base}/v1/messages`).
//!
//! Wire format: <https://docs.anthropic.com/en/api/messages>, the tool-use guide
//! <https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use>, the vision
//! and PDF guides (<https://docs.anthropic.com/en/docs/build-with-claude/vision>,
//! <https://docs.anthropic.com/en/docs/build-with-claude/pdf-support>) and the extended-thinking
//! guide <https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking>.
//!
//! - Parts: images (JPEG, PNG, GIF, WebP) as bytes or by URL, PDFs as bytes or by URL (titled
//!   with [`Media::name`](crate::Media::name)), `text/plain` documents as bytes (sent as the
//!   text); audio and other types are refused with [`ModelError::Unsupported`] before anything
//!   is sent. A tool result with parts sends its text and parts as `tool_result` content blocks.
//! - Reasoning: `thinking` blocks become [`Reasoning`] with the block's `signature`,
//!   `redacted_thinking` blocks a [`Reasoning`] with empty text and the block's `data` as
//!   [`encrypted`](Reasoning::encrypted). They go back first in their assistant turn, in order and
//!   unchanged, as the API requires within a tool loop; pieces with neither a signature nor data
//!   (which the API would refuse) and other providers' pieces are not sent.
//! - Thinking: [`Thinking::Off`] is `{"type": "disabled"}`; an effort or a budget is
//!   `{"type": "enabled", "budget_tokens": ...}`, a budget under the API's minimum of 1,024 raised
//!   to it. `max_tokens` must exceed the budget: when the cap the request would have had does not,
//!   the budget is added to it, so the answer keeps its usual room after the thinking. With
//!   thinking on the API refuses a forced tool choice and a temperature other than 1: such a
//!   request fails with [`ModelError::Unsupported`] instead of a setting being dropped.
//!
//! The folder: this file holds [`Anthropic`], its builder and its [`Model`] impl; `request.rs`
//! the request body, `response.rs` the reply, `stream.rs` the streamed reply.

use std::fmt;

use reqwest::header::{HeaderName, HeaderValue};

use super::common::{Common, KeyHeader, common_builder_methods, encode};
use super::http::Endpoint;
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
use response::parse_response;

/// Anthropic's own endpoint.
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";

/// The API version this adapter speaks.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// A Claude model behind the Anthropic Messages API.
///
/// - **Parts**: images (JPEG, PNG, GIF, WebP) as bytes or by URL; PDF documents as bytes or by
///   URL, titled with their [`Media::name`](crate::Media::name); `text/plain` documents as bytes
///   (UTF-8). Audio, other types, and plain text by URL fail with [`ModelError::Unsupported`]
///   before anything is sent. A tool result's parts go inside its `tool_result`.
/// - **Reasoning**: each `thinking` block is a [`Reasoning`] from `"anthropic"` with its
///   signature, each `redacted_thinking` block one with empty text and its data as
///   [`encrypted`](Reasoning::encrypted). They go back at the head of their turn, unchanged, so a
///   tool loop with thinking on is accepted.
/// - **Thinking** ([`ModelSettings::thinking`](crate::ModelSettings::thinking)): a budget (an
///   effort's by [`Thinking::budget_tokens`]), raised to the API's minimum of 1,024; when the reply
///   cap ([`max_tokens`](Self::max_tokens), 4096 unless set) is not above the budget, the request
///   asks for the budget plus the cap. [`Thinking::Off`] disables thinking. With thinking on, a
///   tool choice that forces a call or a temperature other than 1 fails with
///   [`ModelError::Unsupported`] (the API refuses them): for a typed run use
///   [`OutputMode::Native`](crate::OutputMode::Native) or
///   [`OutputMode::Prompted`](crate::OutputMode::Prompted).
///
/// ```
/// use agent_core::providers::Anthropic;
///
/// let claude = Anthropic::new("claude-sonnet-4-5").api_key("sk-ant-...").max_tokens(2048);
/// ```
pub struct Anthropic {
    common: Common,
    url: Endpoint,
}

impl Anthropic {
    /// A model on Anthropic's endpoint, replies capped at 4096 tokens unless
    /// [`max_tokens`](Self::max_tokens) says otherwise (the API requires a cap).
    pub fn new(model: impl Into<String>) -> Self {
        let mut common = Common::new(model);
        common.insert_header(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(ANTHROPIC_VERSION),
        );
        Anthropic {
            common,
            url: Endpoint::join(ANTHROPIC_BASE_URL, "v1/messages"),
        }
    }

    common_builder_methods!();

    /// Sends requests elsewhere: `base` is the part before `/v1/messages`.
    pub fn base_url(mut self, base: &str) -> Self {
        self.url = Endpoint::join(base, "v1/messages");
        self
    }

    /// The request body for this conversation, as it goes on the wire; `stream` asks for a
    /// streamed reply.
    pub(crate) fn request_body<'a>(
        &'a self,
        request: ChatRequest<'a>,
        stream: bool,
    ) -> Result<WireRequest<'a>, ModelError> {
        request::request_body(&self.common, request, stream)
    }
}

impl Model for Anthropic {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let body = self
            .request_body(request, false)
            .and_then(|body| encode(&body));
        Box::pin(
            self.common
                .send(&self.url, key_header(), body, parse_response),
        )
    }

    fn chat_stream<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxStream<'a, Result<StreamEvent, ModelError>> {
        let body = self
            .request_body(request, true)
            .and_then(|body| encode(&body));
        let request = self.common.stream_request(&self.url, key_header(), body);
        super::sse::stream_reply::<stream::AnthropicReassembler>(request)
    }

    fn model_id(&self) -> Option<&str> {
        Some(&self.common.model)
    }
}

fn key_header() -> KeyHeader {
    KeyHeader {
        name: HeaderName::from_static("x-api-key"),
        prefix: "",
    }
}

impl fmt::Debug for Anthropic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Anthropic")
            .field("url", &self.url)
            .field("common", &self.common)
            .finish()
    }
}
