//! The adapters' request builders, for the benchmarks in `benches/` only: not a public API, and
//! not covered by semver. Compiled in with the `bench-internals` cargo feature.
//!
//! For each adapter, two ways to the same request body: `*_request` builds it from the history as
//! a request does (wire structs, schema dialects) and serializes it; `*_floor` builds the wire
//! struct once and returns what serializes it again: the floor no adapter can beat.

use crate::model::{ChatRequest, ModelError, StreamEvent};

/// The body `OpenAi::chat` sends for `request`, built and serialized.
#[cfg(feature = "openai")]
pub fn openai_request(
    model: &super::OpenAi,
    request: ChatRequest<'_>,
) -> Result<Vec<u8>, ModelError> {
    super::common::encode(&model.request_body(request, false)?)
}

/// The same body's wire struct, built once; the closure serializes it.
#[cfg(feature = "openai")]
pub fn openai_floor<'a>(
    model: &'a super::OpenAi,
    request: ChatRequest<'a>,
) -> Result<impl Fn() -> Vec<u8> + 'a, ModelError> {
    let body = model.request_body(request, false)?;
    Ok(move || serde_json::to_vec(&body).unwrap_or_default())
}

/// The body `OpenAiResponses::chat` sends for `request`, built and serialized.
#[cfg(feature = "openai")]
pub fn openai_responses_request(
    model: &super::OpenAiResponses,
    request: ChatRequest<'_>,
) -> Result<Vec<u8>, ModelError> {
    super::common::encode(&model.request_body(request, false)?)
}

/// The same body's wire struct, built once; the closure serializes it.
#[cfg(feature = "openai")]
pub fn openai_responses_floor<'a>(
    model: &'a super::OpenAiResponses,
    request: ChatRequest<'a>,
) -> Result<impl Fn() -> Vec<u8> + 'a, ModelError> {
    let body = model.request_body(request, false)?;
    Ok(move || serde_json::to_vec(&body).unwrap_or_default())
}

/// The body `Anthropic::chat` sends for `request`, built and serialized.
#[cfg(feature = "anthropic")]
pub fn anthropic_request(
    model: &super::Anthropic,
    request: ChatRequest<'_>,
) -> Result<Vec<u8>, ModelError> {
    super::common::encode(&model.request_body(request, false)?)
}

/// The same body's wire struct, built once; the closure serializes it.
#[cfg(feature = "anthropic")]
pub fn anthropic_floor<'a>(
    model: &'a super::Anthropic,
    request: ChatRequest<'a>,
) -> Result<impl Fn() -> Vec<u8> + 'a, ModelError> {
    let body = model.request_body(request, false)?;
    Ok(move || serde_json::to_vec(&body).unwrap_or_default())
}

/// The body `Gemini::chat` sends for `request`, built and serialized.
#[cfg(feature = "gemini")]
pub fn gemini_request(
    model: &super::Gemini,
    request: ChatRequest<'_>,
) -> Result<Vec<u8>, ModelError> {
    super::common::encode(&model.request_body(request)?)
}

/// The same body's wire struct, built once; the closure serializes it.
#[cfg(feature = "gemini")]
pub fn gemini_floor<'a>(
    model: &'a super::Gemini,
    request: ChatRequest<'a>,
) -> Result<impl Fn() -> Vec<u8> + 'a, ModelError> {
    let body = model.request_body(request)?;
    Ok(move || serde_json::to_vec(&body).unwrap_or_default())
}

/// The events `OpenAi::chat_stream` yields for a server-sent-event body arriving in `pieces`.
#[cfg(feature = "openai")]
pub fn openai_stream(pieces: &'static [&'static [u8]]) -> Vec<Result<StreamEvent, ModelError>> {
    super::sse::events_of_pieces::<super::openai::stream::OpenAiReassembler, _>(
        pieces.iter().copied(),
    )
}

/// The events `OpenAiResponses::chat_stream` yields for a body arriving in `pieces`.
#[cfg(feature = "openai")]
pub fn openai_responses_stream(
    pieces: &'static [&'static [u8]],
) -> Vec<Result<StreamEvent, ModelError>> {
    super::sse::events_of_pieces::<super::openai_responses::stream::ResponsesReassembler, _>(
        pieces.iter().copied(),
    )
}

/// The events `Anthropic::chat_stream` yields for a body arriving in `pieces`.
#[cfg(feature = "anthropic")]
pub fn anthropic_stream(pieces: &'static [&'static [u8]]) -> Vec<Result<StreamEvent, ModelError>> {
    super::sse::events_of_pieces::<super::anthropic::stream::AnthropicReassembler, _>(
        pieces.iter().copied(),
    )
}

/// The events `Gemini::chat_stream` yields for a body arriving in `pieces`.
#[cfg(feature = "gemini")]
pub fn gemini_stream(pieces: &'static [&'static [u8]]) -> Vec<Result<StreamEvent, ModelError>> {
    super::sse::events_of_pieces::<super::gemini::stream::GeminiReassembler, _>(
        pieces.iter().copied(),
    )
}
