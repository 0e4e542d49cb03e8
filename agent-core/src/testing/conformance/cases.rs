//! The cases on whole replies: a reply given back exactly, a tool result sent back, and each
//! failure reported as its typed error by `chat` and `chat_stream`.

use serde_json::Value;

use super::canonical::{Conversation, chat, same_reply, stream, text_reply};
use super::{Call, Exchange, Failure, Harness};
use crate::message::{AssistantMessage, Message, ToolCall, ToolResultMessage};
use crate::model::{ChatResponse, Model, StreamEvent};

pub(super) async fn check_chat<M: Model + ?Sized, H: Harness>(
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

pub(super) async fn check_tool_result<M: Model + ?Sized, H: Harness>(
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
pub(super) fn collect_strings<'v>(value: &'v Value, out: &mut Vec<&'v str>) {
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

pub(super) async fn check_failure<M: Model + ?Sized, H: Harness>(
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
