//! The suite's canonical conversation and replies, and calls of the model within the time limit.

use std::future::Future;

use futures_util::StreamExt;

use super::CALL_TIMEOUT;
use crate::message::{AssistantMessage, Message, ToolCall};
use crate::model::{ChatRequest, ChatResponse, FinishReason, Model, ModelError, StreamEvent};
use crate::tool::ToolDef;
use crate::usage::Usage;

/// The history and tools of a request.
pub(super) struct Conversation {
    pub(super) messages: Vec<Message>,
    tools: Vec<ToolDef>,
}

impl Conversation {
    pub(super) fn new() -> Self {
        Conversation {
            messages: vec![
                Message::system("You are under a conformance test. Answer briefly."),
                Message::user("Do I need an umbrella in Beijing today?"),
            ],
            tools: tools(),
        }
    }

    pub(super) fn request(&self) -> ChatRequest<'_> {
        ChatRequest::new(&self.messages, &self.tools)
    }
}

pub(super) fn tools() -> Vec<ToolDef> {
    let city = serde_json::json!({"type": "string", "description": "City name"});
    vec![
        ToolDef::new(
            "get_weather",
            "Look up today's weather for a city.",
            serde_json::json!({
                "type": "object",
                "properties": {
                    "city": city,
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}
                },
                "required": ["city"]
            }),
        ),
        ToolDef::new(
            "get_time",
            "Tell the local time in a city.",
            serde_json::json!({"type": "object", "properties": {"city": city}, "required": ["city"]}),
        ),
        ToolDef::new(
            "now",
            "Tell the time here.",
            serde_json::json!({"type": "object", "properties": {}}),
        ),
    ]
}

pub(super) fn text_reply() -> ChatResponse {
    ChatResponse::new(AssistantMessage::text(
        "Light rain in Beijing today, 18°C: take an umbrella. 北京今天有小雨，记得带伞。",
    ))
    .with_usage(Usage::new(42, 17))
    .with_finish_reason(FinishReason::Stop)
}

pub(super) fn one_call_reply() -> ChatResponse {
    ChatResponse::new(AssistantMessage::tool_calls([ToolCall::new(
        "call_conf_1",
        "get_weather",
        r#"{"city":"Beijing","unit":"celsius"}"#,
    )]))
    .with_usage(Usage::new(40, 12))
    .with_finish_reason(FinishReason::ToolCalls)
}

pub(super) fn parallel_calls_reply() -> ChatResponse {
    let mut reply = AssistantMessage::text("Let me check both.");
    reply.tool_calls = vec![
        ToolCall::new("call_conf_2", "get_weather", r#"{"city":"北京"}"#),
        ToolCall::new(
            "call_conf_3",
            "get_time",
            r#"{"city":"Beijing \"the capital\""}"#,
        ),
        ToolCall::new("call_conf_4", "now", "{}"),
    ];
    ChatResponse::new(reply)
        .with_usage(Usage::new(51, 33))
        .with_finish_reason(FinishReason::ToolCalls)
}

pub(super) fn empty_arguments_reply() -> ChatResponse {
    ChatResponse::new(AssistantMessage::tool_calls([ToolCall::new(
        "call_conf_5",
        "now",
        "{}",
    )]))
    .with_usage(Usage::new(38, 5))
    .with_finish_reason(FinishReason::ToolCalls)
}

pub(super) fn usage_reply() -> ChatResponse {
    ChatResponse::new(AssistantMessage::text("Yes."))
        .with_usage(Usage::new(123_456, 7_890))
        .with_finish_reason(FinishReason::Stop)
}

/// Awaits a call of the model, or fails after [`CALL_TIMEOUT`].
pub(super) async fn within<T>(call: impl Future<Output = T>) -> Result<T, String> {
    let call = std::pin::pin!(call);
    let timer = futures_timer::Delay::new(CALL_TIMEOUT);
    match futures_util::future::select(call, timer).await {
        futures_util::future::Either::Left((value, _)) => Ok(value),
        futures_util::future::Either::Right(_) => Err(format!(
            "the model did not answer within {} s",
            CALL_TIMEOUT.as_secs()
        )),
    }
}

pub(super) async fn chat<M: Model + ?Sized>(
    model: &M,
    conversation: &Conversation,
) -> Result<Result<ChatResponse, ModelError>, String> {
    within(model.chat(conversation.request())).await
}

pub(super) async fn stream<M: Model + ?Sized>(
    model: &M,
    conversation: &Conversation,
) -> Result<Vec<Result<StreamEvent, ModelError>>, String> {
    within(
        model
            .chat_stream(conversation.request())
            .collect::<Vec<_>>(),
    )
    .await
}

/// Whether `got` is the canonical reply `expected`; the name of the model that answered
/// ([`ChatResponse::model`]) is the model's own, not the suite's.
pub(super) fn same_reply(
    got: &ChatResponse,
    expected: &ChatResponse,
    what: &str,
) -> Result<(), String> {
    let mut named_alike = got.clone();
    named_alike.model.clone_from(&expected.model);
    if named_alike == *expected {
        Ok(())
    } else {
        Err(format!(
            "{what} differs from the scripted one:\n  got:      {got:?}\n  expected: {expected:?}"
        ))
    }
}
