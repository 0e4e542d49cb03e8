//! OpenAI Responses streaming (`"stream": true`): server-sent events, each a JSON object whose
//! `type` says what it is. Text, reasoning summaries and call arguments arrive as deltas; the
//! last event, `response.completed` (or `response.incomplete`), carries the whole response, from
//! which the finished reply is read exactly as a plain reply is, so the two are equal. A
//! `response.failed` or `error` event is the typed error the HTTP status of its code would be.
//!
//! Wire format: <https://platform.openai.com/docs/api-reference/responses-streaming>.

use serde::Deserialize;
use serde_json::Value;

use super::response::{PROVIDER, WireResponse, failed, message_of, response_error, response_of};
use crate::message::{AssistantMessage, ToolCall};
use crate::model::StreamEvent;
use crate::providers::common::{arguments_text, made_up_call_id};
use crate::providers::sse::{Out, Reassembler, bad_event};
use crate::providers::sse_decode::Event;
use crate::reasoning::Reasoning;

/// The reply so far, as its deltas built it: for the ids of the calls, and for a server whose
/// last event carries no `output`.
#[derive(Default)]
pub(crate) struct ResponsesReassembler {
    content: String,
    reasoning: Vec<Reasoning>,
    /// The item and summary part the last reasoning delta belonged to.
    reasoning_at: Option<(Option<String>, Option<u64>)>,
    calls: Vec<Call>,
}

/// A call begun in the stream: the item it is, and the call as it has come so far.
struct Call {
    item_id: Option<String>,
    output_index: Option<u64>,
    call: ToolCall,
}

impl Reassembler for ResponsesReassembler {
    fn take(&mut self, event: &Event, out: &mut Out) -> bool {
        let data = event.data.as_str();
        // The type is in the data; the event's name says it too, for a server that leaves it out.
        let kind = match serde_json::from_str::<Kind>(data) {
            Ok(Kind { kind: Some(kind) }) => kind,
            Ok(Kind { kind: None }) => event.event.clone(),
            Err(_) if data.trim() == "[DONE]" => return false,
            Err(error) => {
                out.push_back(Err(bad_event(error, data)));
                return true;
            }
        };
        match kind.as_str() {
            "response.output_item.added" => {
                let added = serde_json::from_str::<ItemAdded>(data)
                    .and_then(|added| self.item_added(added, out));
                if let Err(error) = added {
                    return fail(out, bad_event(error, data));
                }
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                if let Some(delta) = delta_of(data).and_then(|delta| delta.delta) {
                    self.content.push_str(&delta);
                    out.push_back(Ok(StreamEvent::TextDelta(delta)));
                }
            }
            "response.reasoning_summary_text.delta" => {
                if let Some(delta) = delta_of(data) {
                    self.reasoning_delta(delta, out);
                }
            }
            "response.function_call_arguments.delta" => {
                if let Some(delta) = delta_of(data) {
                    self.arguments_delta(delta, out);
                }
            }
            "response.completed" | "response.incomplete" => {
                match serde_json::from_str::<Done>(data) {
                    Ok(done) => self.finish(done.response, out),
                    Err(error) => out.push_back(Err(bad_event(error, data))),
                }
                return true;
            }
            "response.failed" => {
                let error = serde_json::from_str::<Failed>(data)
                    .ok()
                    .and_then(|failed| failed.response?.error);
                return fail(out, failed(error.as_ref()));
            }
            "error" => {
                let error = match serde_json::from_str::<Value>(data) {
                    Ok(Value::Object(mut fields)) => match fields.remove("error") {
                        // `{"type": "error", "error": {...}}` (or a bare message), as some
                        // servers send it.
                        Some(inner @ (Value::Object(_) | Value::String(_))) => inner,
                        // `{"type": "error", "code", "message", "param"}`, as documented.
                        _ => Value::Object(fields),
                    },
                    Ok(other) => other,
                    Err(error) => return fail(out, bad_event(error, data)),
                };
                return fail(out, response_error(&error));
            }
            _ => {}
        }
        false
    }
}

/// Ends the stream with `error`.
fn fail(out: &mut Out, error: crate::model::ModelError) -> bool {
    out.push_back(Err(error));
    true
}

/// A delta event's fields; `None` when they are not there to read (the event is skipped).
fn delta_of(data: &str) -> Option<Delta> {
    serde_json::from_str(data).ok()
}

impl ResponsesReassembler {
    /// A new output item: a function call starts a call, whose place is its place among the
    /// reply's calls.
    fn item_added(&mut self, added: ItemAdded, out: &mut Out) -> Result<(), serde_json::Error> {
        if added.item.get("type").and_then(Value::as_str) != Some("function_call") {
            return Ok(());
        }
        let item: AddedCall = serde_json::from_value(added.item)?;
        let index = self.calls.len();
        let id = item
            .call_id
            .filter(|id| !id.is_empty())
            .unwrap_or_else(made_up_call_id);
        let call = ToolCall::new(id, item.name.unwrap_or_default(), item.arguments);
        out.push_back(Ok(StreamEvent::ToolCallStart {
            index,
            id: call.id.clone(),
            name: call.name.clone(),
        }));
        if !call.arguments.is_empty() {
            out.push_back(Ok(StreamEvent::ToolCallArguments {
                index,
                fragment: call.arguments.clone(),
            }));
        }
        self.calls.push(Call {
            item_id: item.id,
            output_index: added.output_index,
            call,
        });
        Ok(())
    }

    /// More of a call's arguments, for the call with its item id (or, failing that, its output
    /// index); a fragment for no call begun is dropped.
    fn arguments_delta(&mut self, delta: Delta, out: &mut Out) {
        let Some(fragment) = delta.delta.filter(|fragment| !fragment.is_empty()) else {
            return;
        };
        let by_item = delta.item_id.as_ref().and_then(|item_id| {
            self.calls
                .iter()
                .position(|call| call.item_id.as_ref() == Some(item_id))
        });
        let index = by_item.or_else(|| {
            let output_index = delta.output_index?;
            self.calls
                .iter()
                .position(|call| call.output_index == Some(output_index))
        });
        let Some(index) = index else {
            return;
        };
        if let Some(entry) = self.calls.get_mut(index) {
            entry.call.arguments.push_str(&fragment);
            out.push_back(Ok(StreamEvent::ToolCallArguments { index, fragment }));
        }
    }

    /// More of a reasoning summary: a new piece for each summary part of each item.
    fn reasoning_delta(&mut self, delta: Delta, out: &mut Out) {
        let Some(text) = delta.delta.filter(|text| !text.is_empty()) else {
            return;
        };
        let at = (delta.item_id, delta.summary_index);
        match self.reasoning.last_mut() {
            Some(piece) if self.reasoning_at.as_ref() == Some(&at) => piece.text.push_str(&text),
            _ => {
                let mut piece = Reasoning::new(PROVIDER, text.clone());
                piece.id.clone_from(&at.0);
                self.reasoning.push(piece);
                self.reasoning_at = Some(at);
            }
        }
        out.push_back(Ok(StreamEvent::ReasoningDelta(text)));
    }

    /// The finished reply, from the response the last event carries: its output read as a plain
    /// reply's is, a call without a `call_id` keeping the id it started with. A response without
    /// output (from a server that does not repeat it) finishes with what the deltas built.
    fn finish(&mut self, response: WireResponse, out: &mut Out) {
        let calls = std::mem::take(&mut self.calls);
        let (message, refused) = match response.output {
            Some(output) if !output.is_empty() => message_of(output, &mut |position, item_id| {
                started_id(&calls, position, item_id)
            }),
            _ => (
                AssistantMessage {
                    content: std::mem::take(&mut self.content),
                    tool_calls: calls.into_iter().map(|entry| entry.call).collect(),
                    reasoning: std::mem::take(&mut self.reasoning),
                },
                false,
            ),
        };
        let mut reply = response_of(
            message,
            refused,
            response.status.as_deref(),
            response.incomplete_details.as_ref(),
            response.usage.as_ref(),
        );
        reply.model = response.model.filter(|model| !model.is_empty());
        out.push_back(Ok(StreamEvent::Usage(reply.usage)));
        out.push_back(Ok(StreamEvent::Finished(reply)));
    }
}

/// The id a call without a `call_id` started with in the stream: the one begun for the same item,
/// else the one begun in the same place; a new one if none was.
fn started_id(calls: &[Call], position: usize, item_id: Option<&str>) -> String {
    let same_item = item_id.and_then(|item_id| {
        calls
            .iter()
            .find(|call| call.item_id.as_deref() == Some(item_id))
    });
    same_item
        .or_else(|| calls.get(position))
        .map_or_else(made_up_call_id, |call| call.call.id.clone())
}

#[derive(Deserialize)]
struct Kind {
    #[serde(rename = "type")]
    kind: Option<String>,
}

#[derive(Deserialize)]
struct ItemAdded {
    #[serde(default)]
    output_index: Option<u64>,
    /// Read further only when it is a function call.
    item: Value,
}

#[derive(Deserialize)]
struct AddedCall {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    call_id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    /// Empty when the call starts; its deltas follow.
    #[serde(default, deserialize_with = "arguments_text")]
    arguments: String,
}

#[derive(Deserialize)]
struct Delta {
    #[serde(default)]
    item_id: Option<String>,
    #[serde(default)]
    output_index: Option<u64>,
    #[serde(default)]
    summary_index: Option<u64>,
    #[serde(default)]
    delta: Option<String>,
}

#[derive(Deserialize)]
struct Done {
    response: WireResponse,
}

#[derive(Deserialize)]
struct Failed {
    #[serde(default)]
    response: Option<FailedResponse>,
}

#[derive(Deserialize)]
struct FailedResponse {
    #[serde(default)]
    error: Option<Value>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ChatResponse, FinishReason, ModelError};

    const STREAM: &str = concat!(
        "event: response.created\n",
        "data: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_1\",\"status\":\"in_progress\",\"output\":[]}}\n\n",
        "event: response.output_item.added\n",
        "data: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"type\":\"reasoning\",\"id\":\"rs_1\",\"summary\":[]}}\n\n",
        "event: response.reasoning_summary_text.delta\n",
        "data: {\"type\":\"response.reasoning_summary_text.delta\",\"item_id\":\"rs_1\",\"output_index\":0,\"summary_index\":0,\"delta\":\"下雨\"}\n\n",
        "event: response.reasoning_summary_text.delta\n",
        "data: {\"type\":\"response.reasoning_summary_text.delta\",\"item_id\":\"rs_1\",\"output_index\":0,\"summary_index\":0,\"delta\":\"吗？\"}\n\n",
        "event: response.output_text.delta\n",
        "data: {\"type\":\"response.output_text.delta\",\"item_id\":\"msg_1\",\"output_index\":1,\"content_index\":0,\"delta\":\"查一下\"}\n\n",
        "event: response.output_item.added\n",
        "data: {\"type\":\"response.output_item.added\",\"output_index\":2,\"item\":{\"type\":\"function_call\",\"id\":\"fc_1\",\"name\":\"get_weather\",\"arguments\":\"\"}}\n\n",
        "event: response.function_call_arguments.delta\n",
        "data: {\"type\":\"response.function_call_arguments.delta\",\"item_id\":\"fc_1\",\"output_index\":2,\"delta\":\"{\\\"city\\\":\"}\n\n",
        "event: response.function_call_arguments.delta\n",
        "data: {\"type\":\"response.function_call_arguments.delta\",\"item_id\":\"fc_1\",\"output_index\":2,\"delta\":\"\\\"北京\\\"}\"}\n\n",
        "event: response.completed\n",
        "data: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\",\"output\":[",
        "{\"type\":\"reasoning\",\"id\":\"rs_1\",\"summary\":[{\"type\":\"summary_text\",\"text\":\"下雨吗？\"}],\"encrypted_content\":\"gAAA\"},",
        "{\"type\":\"message\",\"id\":\"msg_1\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"查一下\"}]},",
        "{\"type\":\"function_call\",\"id\":\"fc_1\",\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"北京\\\"}\"}",
        "],\"usage\":{\"input_tokens\":5,\"output_tokens\":9}}}\n\n",
    );

    /// The events `body` yields when it arrives in `chunks`, read as the shared driver reads them.
    fn events_of(chunks: Vec<Vec<u8>>) -> Vec<Result<StreamEvent, ModelError>> {
        crate::providers::sse::events_of_pieces::<ResponsesReassembler, _>(chunks)
    }

    fn finished(events: &[Result<StreamEvent, ModelError>]) -> &ChatResponse {
        match events.last() {
            Some(Ok(StreamEvent::Finished(reply))) => reply,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_stream_split_at_any_byte_gives_the_same_events() {
        let whole = events_of(vec![STREAM.as_bytes().to_vec()]);
        let reply = finished(&whole);
        assert_eq!(reply.message.content, "查一下");
        assert_eq!(reply.finish_reason, Some(FinishReason::ToolCalls));
        assert_eq!(reply.usage.output_tokens, 9);
        // The call had no call_id: the finished reply keeps the id its start made up.
        let Some(Ok(StreamEvent::ToolCallStart { id, .. })) = whole
            .iter()
            .find(|event| matches!(event, Ok(StreamEvent::ToolCallStart { .. })))
        else {
            panic!("{whole:?}")
        };
        assert_eq!(reply.message.tool_calls[0].id, *id);
        assert_eq!(
            reply.message.reasoning,
            [Reasoning::new(PROVIDER, "下雨吗？")
                .with_id("rs_1")
                .with_encrypted("gAAA")]
        );
        let reasoning: Vec<&StreamEvent> = whole
            .iter()
            .filter_map(|event| event.as_ref().ok())
            .filter(|event| matches!(event, StreamEvent::ReasoningDelta(_)))
            .collect();
        assert_eq!(
            reasoning,
            [
                &StreamEvent::ReasoningDelta("下雨".into()),
                &StreamEvent::ReasoningDelta("吗？".into())
            ]
        );

        let bytes = STREAM.as_bytes();
        for at in 0..=bytes.len() {
            let split = events_of(vec![bytes[..at].to_vec(), bytes[at..].to_vec()]);
            let (split_reply, whole_reply) = (finished(&split), finished(&whole));
            // Made-up ids differ from one reading to the next; everything else is the same.
            assert_eq!(split.len(), whole.len(), "split at {at}");
            assert_eq!(split_reply.message.content, whole_reply.message.content);
            assert_eq!(split_reply.message.reasoning, whole_reply.message.reasoning);
            assert_eq!(
                split_reply.message.tool_calls[0].arguments,
                whole_reply.message.tool_calls[0].arguments
            );
            assert_eq!(split_reply.usage, whole_reply.usage);
        }
    }

    #[test]
    fn a_stream_that_stops_early_is_cut_off_and_garbage_never_panics() {
        let bytes = STREAM.as_bytes();
        let cut = STREAM.find("event: response.completed").unwrap();
        let events = events_of(vec![bytes[..cut].to_vec()]);
        assert!(
            matches!(events.last(), Some(Err(ModelError::Stream { message })) if message.contains("cut off")),
            "{events:?}"
        );
        // Cut anywhere before the last event's data line is whole: an error. Cut after it, where
        // only the blank line is missing: the whole reply, as the live reader gives it (some
        // servers close the connection straight after the last `data:` line).
        let last_line_end = bytes.len() - 1;
        for end in 0..last_line_end {
            let events = events_of(vec![bytes[..end].to_vec()]);
            assert!(events.last().is_some_and(Result::is_err), "cut at {end}");
        }
        let events = events_of(vec![bytes[..last_line_end].to_vec()]);
        assert_eq!(finished(&events).message.content, "查一下");
        let events = events_of(vec![
            b"data: {\"type\":\"response.completed\",\"response\":{\"output\":7}}\n\n".to_vec(),
        ]);
        assert!(
            matches!(events.as_slice(), [Err(ModelError::Decode { .. })]),
            "{events:?}"
        );
    }
}
