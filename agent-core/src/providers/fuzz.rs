//! The adapters' reply parsers, for the fuzz targets in `fuzz/` only: not a public API, and not
//! covered by semver. Compiled in with the `fuzzing` cargo feature.
//!
//! Each function takes bytes exactly as they would come off the wire and must return a reply or a
//! typed [`ModelError`], never panic, whatever the bytes.

use crate::model::{ChatResponse, ModelError, StreamEvent};

/// An OpenAI Chat Completions reply body, as `OpenAi::chat` reads it.
#[cfg(feature = "openai")]
pub fn openai_reply(body: &[u8]) -> Result<ChatResponse, ModelError> {
    super::openai::response::parse_response(body, super::openai::OPENAI_SERVICE)
}

/// An OpenAI Responses reply body, as `OpenAiResponses::chat` reads it.
#[cfg(feature = "openai")]
pub fn openai_responses_reply(body: &[u8]) -> Result<ChatResponse, ModelError> {
    super::openai_responses::response::parse_response(body)
}

/// An Anthropic Messages reply body, as `Anthropic::chat` reads it.
#[cfg(feature = "anthropic")]
pub fn anthropic_reply(body: &[u8]) -> Result<ChatResponse, ModelError> {
    super::anthropic::response::parse_response(body)
}

/// A Gemini `generateContent` reply body, as `Gemini::chat` reads it.
#[cfg(feature = "gemini")]
pub fn gemini_reply(body: &[u8]) -> Result<ChatResponse, ModelError> {
    super::gemini::response::parse_response(body)
}

/// An OpenAI server-sent-event stream, as `OpenAi::chat_stream` reads it: the events it yields.
#[cfg(feature = "openai")]
pub fn openai_stream(body: &[u8]) -> Vec<Result<StreamEvent, ModelError>> {
    super::sse::events_of_bytes::<super::openai::stream::OpenAiReassembler>(body)
}

/// An Anthropic server-sent-event stream, as `Anthropic::chat_stream` reads it: the events it
/// yields.
#[cfg(feature = "anthropic")]
pub fn anthropic_stream(body: &[u8]) -> Vec<Result<StreamEvent, ModelError>> {
    super::sse::events_of_bytes::<super::anthropic::stream::AnthropicReassembler>(body)
}

/// An OpenAI Responses server-sent-event stream, as `OpenAiResponses::chat_stream` reads it: the
/// events it yields.
#[cfg(feature = "openai")]
pub fn openai_responses_stream(body: &[u8]) -> Vec<Result<StreamEvent, ModelError>> {
    super::sse::events_of_bytes::<super::openai_responses::stream::ResponsesReassembler>(body)
}

/// A Gemini server-sent-event stream, as `Gemini::chat_stream` reads it: the events it yields.
#[cfg(feature = "gemini")]
pub fn gemini_stream(body: &[u8]) -> Vec<Result<StreamEvent, ModelError>> {
    super::sse::events_of_bytes::<super::gemini::stream::GeminiReassembler>(body)
}

/// Panics unless the events end exactly once, at the last one: with `Finished` or an error. What
/// every stream target checks of what its reader yields.
pub fn assert_ends_once(events: &[Result<StreamEvent, ModelError>]) {
    let last = events.len().saturating_sub(1);
    for (index, event) in events.iter().enumerate() {
        let ends = matches!(event, Err(_) | Ok(StreamEvent::Finished(_)));
        assert_eq!(
            ends,
            index == last,
            "only the last event ends the stream: {events:?}"
        );
    }
}

#[cfg(all(test, feature = "openai", feature = "anthropic", feature = "gemini"))]
mod tests {
    use super::*;

    fn finished(events: &[Result<StreamEvent, ModelError>]) -> &ChatResponse {
        match events.last() {
            Some(Ok(StreamEvent::Finished(reply))) => reply,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_stream_readers_read_whole_bodies_as_a_live_stream() {
        let openai = openai_stream(include_bytes!(
            "../../../tests/fixtures/openai/stream_chinese_text.sse"
        ));
        assert_eq!(
            finished(&openai).message.content,
            "北京今天有小雨，记得带伞。"
        );
        let anthropic = anthropic_stream(include_bytes!(
            "../../../tests/fixtures/anthropic/stream_two_tools.sse"
        ));
        assert_eq!(finished(&anthropic).message.tool_calls.len(), 2);
        let gemini = gemini_stream(include_bytes!(
            "../../../tests/fixtures/gemini/stream_answer.sse"
        ));
        assert!(!finished(&gemini).message.content.is_empty());
        for events in [&openai, &anthropic, &gemini] {
            assert_ends_once(events);
        }
        let cut = anthropic_stream(b"event: ping\ndata: {\"type\":\"ping\"}\n\n");
        assert!(matches!(cut.as_slice(), [Err(ModelError::Stream { .. })]));
    }
}
