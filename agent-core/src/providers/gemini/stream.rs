//! Gemini streaming (`streamGenerateContent?alt=sse`): each server-sent event carries a whole
//! `GenerateContentResponse` chunk. Text and thought parts arrive piece by piece (thoughts as
//! [`StreamEvent::ReasoningDelta`]), function calls whole; the stream simply ends after the chunk
//! with the finish reason. Thought pieces and signatures are joined by the rule the non-streaming
//! reply follows ([`push_reasoning`]), so both give the same reply.
//!
//! Wire format: <https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent>.

use super::response::{parse_chunk, push_reasoning};
use crate::message::{AssistantMessage, ToolCall};
use crate::model::StreamEvent;
use crate::model::{ChatResponse, FinishReason};
use crate::providers::sse::{Out, Reassembler, cut_off};
use crate::providers::sse_decode::Event;
use crate::reasoning::Reasoning;
use crate::usage::Usage;

#[derive(Default)]
pub(crate) struct GeminiReassembler {
    content: String,
    reasoning: Vec<Reasoning>,
    calls: Vec<ToolCall>,
    finish_reason: Option<FinishReason>,
    usage: Usage,
    /// The model that answered, as the chunks name it.
    model: Option<String>,
}

impl Reassembler for GeminiReassembler {
    fn take(&mut self, event: &Event, out: &mut Out) -> bool {
        // Each chunk is a reply in the non-streaming shape; the adapter's own parser reads it.
        let chunk = match parse_chunk(event.data.as_bytes()) {
            Ok(chunk) => chunk,
            Err(error) => {
                out.push_back(Err(error));
                return true;
            }
        };
        if chunk.model.is_some() {
            self.model = chunk.model;
        }
        if chunk.usage != Usage::default() {
            // Each chunk reports the usage so far.
            self.usage = chunk.usage;
        }
        for piece in chunk.message.reasoning {
            if !piece.text.is_empty() {
                out.push_back(Ok(StreamEvent::ReasoningDelta(piece.text.clone())));
            }
            push_reasoning(&mut self.reasoning, piece);
        }
        if !chunk.message.content.is_empty() {
            self.content.push_str(&chunk.message.content);
            out.push_back(Ok(StreamEvent::TextDelta(chunk.message.content)));
        }
        for call in chunk.message.tool_calls {
            let index = self.calls.len();
            out.push_back(Ok(StreamEvent::ToolCallStart {
                index,
                id: call.id.clone(),
                name: call.name.clone(),
            }));
            out.push_back(Ok(StreamEvent::ToolCallArguments {
                index,
                fragment: call.arguments.clone(),
            }));
            self.calls.push(call);
        }
        if chunk.finish_reason.is_some() {
            self.finish_reason = chunk.finish_reason;
        }
        false
    }

    fn at_end(&mut self) -> Result<StreamEvent, crate::model::ModelError> {
        // Gemini has no end marker: the reply is whole once a chunk gave the finish reason.
        let Some(mut reason) = self.finish_reason.take() else {
            return Err(cut_off());
        };
        if reason == FinishReason::Stop && !self.calls.is_empty() {
            reason = FinishReason::ToolCalls;
        }
        let message = AssistantMessage {
            content: std::mem::take(&mut self.content),
            tool_calls: std::mem::take(&mut self.calls),
            reasoning: std::mem::take(&mut self.reasoning),
        };
        let mut response = ChatResponse::new(message).with_usage(self.usage);
        response.finish_reason = Some(reason);
        response.model = self.model.take();
        Ok(StreamEvent::Finished(response))
    }
}
