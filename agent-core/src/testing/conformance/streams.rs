//! The streaming cases: a streamed reply ends in exactly the canonical reply, its deltas and call
//! events adding up to it.

use serde_json::Value;

use super::canonical::{Conversation, chat, same_reply, stream};
use super::{Call, Exchange, Harness};
use crate::model::{ChatResponse, Model, ModelError, StreamEvent};

pub(super) async fn check_stream<M: Model + ?Sized, H: Harness>(
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
pub(super) struct StreamedCall<'e> {
    id: &'e str,
    name: &'e str,
    arguments: String,
}

/// Checks a stream's events against each other and returns the reply it finished with; `native`
/// is whether the model claims native streaming (else its call events may be missing).
pub(super) fn check_events(
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
pub(super) fn same_arguments(streamed: &str, finished: &str) -> bool {
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
