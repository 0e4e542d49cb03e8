//! `GET /api/chat/{id}`: a chat read back as the AI SDK's `UIMessage`s, what `useChat` takes as
//! its `messages` after a reload: each question, and each answer as one message whose parts are its
//! steps (reasoning, text, each tool call in the state it is in, the files tools returned).
//!
//! An answer's id is one the endpoint reads back (it says where its question came, as a streamed
//! answer's does), so a regenerate or an edit after a reload places it. A call the chat's paused
//! run waits on is `approval-requested` (its approval's id the call's) or, for a client-side tool,
//! `input-available`, each with its grant (a `data-call-grant` part, as the stream gave it); a call
//! the person denied is `output-denied`, and one of a tool that needs approval that ran carries its
//! approval (`approved: true`), as the stream left it. Reading does not wait for a run under way:
//! the chat is read as it was when the answer began, with the answer's question, and the answer
//! is left out, for the client to rejoin its stream (`GET /api/chat/{id}/stream`) and read it
//! whole from its first chunk (an answer that goes on in the chat's last message, as an approval's
//! does, has the stream's id, so the stream goes on in it).

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Map, Value, json};

use super::answer::granted;
use super::chunks::{
    activity_chunk, activity_of, file_of, grant_chunk, input_of, paused_activity, summary_chunk,
};
use super::errors::store_failed;
use super::identity::Identity;
use super::live::Live;
use super::rewind::read_back_id;
use super::{Shared, chat_of, json_response, refuse};
use agent_core::ChildRun;
use agent_core::Part;
use agent_core::session::{Conversation, KeptChild, SessionError};
use agent_core::{AssistantMessage, Message, ToolCall, ToolResultMessage};
use agent_core::{NotRun, Texts};
use agent_core::{PausedRun, Waiting};

/// The caller's chat `chat_id` as `UIMessage`s (a JSON array); `404` when the caller has no chat
/// of that id (another user's included, as everywhere).
pub(super) async fn read_back<S: Send + Sync + 'static, I: Identity<S>>(
    State(shared): State<Arc<Shared<S, I>>>,
    Path(chat_id): Path<String>,
    request: axum::extract::Request,
) -> Response {
    let (parts, _) = request.into_parts();
    let key = match chat_of(&shared, parts, &chat_id).await {
        Ok(key) => key,
        Err(refused) => return refused,
    };
    let (conversation, underway) = match read(&shared, &key).await {
        Ok(read) => read,
        Err(error) => return store_failed(error, &chat_id),
    };
    if conversation.messages.is_empty() && conversation.paused.is_none() {
        let message = format!("there is no chat `{chat_id}`");
        return refuse(StatusCode::NOT_FOUND, &message);
    }
    let texts = shared.agent.tools().texts();
    let mut messages = ui_messages(&chat_id, &conversation, texts, &approval_tools(&shared));
    // An answer the run goes on with (an approval's, or the steps a regenerate kept) has the id
    // the stream gives it, so the stream a client rejoins goes on in it.
    if let Some(live) = underway
        && let Some(Value::Object(last)) = messages.last_mut()
        && last.get("role") == Some(&Value::from("assistant"))
    {
        last.insert("id".into(), live.begun.message_id.clone().into());
    }
    // The calls the chat waits on go out with their grants, as the stream gave them.
    let grants = granted(&shared.grants, &key, conversation.paused.as_ref());
    if let Some(Value::Object(last)) = messages.last_mut()
        && let Some(Value::Array(parts)) = last.get_mut("parts")
    {
        for (call_id, grant) in grants {
            let chunk = grant_chunk(call_id, grant);
            parts.push(serde_json::to_value(chunk).unwrap_or_default());
        }
    }
    json_response(&Value::Array(messages))
}

/// The chat kept under `key` as a read-back shows it, and the answer under way in it, if one is.
/// While an answer runs, the chat as it was when the answer began, with the answer's question:
/// every stored message before the answer, and none of the answer's, which the client reads from
/// the stream it rejoins (whole, from its first chunk), not twice. An answer that ends while the
/// chat is read leaves the chat read again, whole.
async fn read<S, I>(
    shared: &Shared<S, I>,
    key: &str,
) -> Result<(Conversation, Option<Arc<Live>>), SessionError> {
    let before = shared.live.get(key);
    let mut conversation = shared.store.load(key).await?;
    let Some(live) = shared.live.get(key).filter(|live| !live.is_done()) else {
        if before.is_some() {
            conversation = shared.store.load(key).await?;
        }
        return Ok((conversation, None));
    };
    let begun = &live.begun;
    conversation.messages.truncate(begun.kept);
    conversation.messages.extend(begun.question.clone());
    conversation.summaries.truncate(begun.summaries);
    conversation.children.retain(|child| child.at < begun.kept);
    // A paused run the answer goes on with is answered already.
    conversation.paused = None;
    Ok((conversation, Some(live)))
}

/// The conversation of chat `chat_id` as `UIMessage`s: the system prompt left out, each question
/// one message, each answer (every step up to the next question) one more. The conversation is
/// shown whole; where a summary stands for the messages before it in the model's requests, the
/// message it starts at has a `data-summary` part (its text), which the page shows as a note
/// above it.
pub(crate) fn ui_messages(
    chat_id: &str,
    conversation: &Conversation,
    texts: &dyn Texts,
    approval_tools: &[&str],
) -> Vec<Value> {
    let messages = &conversation.messages;
    let mut out = Vec::new();
    let mut at = 0;
    while at < messages.len() {
        match &messages[at] {
            Message::User { content, parts } => {
                let mut shown = summary_parts(conversation, at..at + 1);
                shown.extend(user_parts(content, parts));
                out.push(json!({
                    "id": format!("user-{at}"),
                    "role": "user",
                    "parts": shown,
                }));
                at += 1;
            }
            Message::Assistant(_) | Message::Tool(_) => {
                // The answer: every message up to the next question. Its id names the question's
                // place, as the streamed answer's did.
                let end = messages[at..]
                    .iter()
                    .position(|message| matches!(message, Message::User { .. }))
                    .map_or(messages.len(), |offset| at + offset);
                let question = messages[..at]
                    .iter()
                    .rposition(|message| matches!(message, Message::User { .. }))
                    .unwrap_or(0);
                let answer = Answer {
                    messages: &messages[at..end],
                    paused: conversation.paused.as_ref(),
                    children: &conversation.children,
                    last: end == messages.len(),
                    denied: texts.not_run(&NotRun::Denied(None)),
                    approval_tools,
                };
                let mut shown = summary_parts(conversation, at..end);
                shown.extend(answer.parts());
                out.push(json!({
                    "id": read_back_id(chat_id, question),
                    "role": "assistant",
                    "parts": shown,
                }));
                at = end;
            }
            _ => at += 1,
        }
    }
    out
}

/// A `data-summary` part for each summary of `conversation` that starts being sent at one of the
/// messages `at` (it stands for those before), as the stream sends it.
fn summary_parts(conversation: &Conversation, at: std::ops::Range<usize>) -> Vec<Value> {
    (conversation.summaries.iter())
        .filter(|summary| at.contains(&summary.covers.end))
        .map(|summary| serde_json::to_value(summary_chunk(summary)).unwrap_or_default())
        .collect()
}

/// A question's parts: its text, then its other texts and files.
fn user_parts(content: &str, parts: &[Part]) -> Vec<Value> {
    let mut out = Vec::new();
    if !content.is_empty() {
        out.push(json!({ "type": "text", "text": content }));
    }
    for part in parts {
        match part {
            Part::Text { text } => out.push(json!({ "type": "text", "text": text })),
            other => out.extend(file(other)),
        }
    }
    out
}

/// One answer's messages, and what is known of its calls.
struct Answer<'a> {
    messages: &'a [Message],
    paused: Option<&'a PausedRun>,
    /// The runs the conversation's calls started (agents called as tools).
    children: &'a [KeptChild],
    /// Whether it is the conversation's last answer (the one a paused run waits in).
    last: bool,
    /// The text a result of a call the person denied holds.
    denied: String,
    /// The agent's tools whose calls need approval: one that ran was approved.
    approval_tools: &'a [&'a str],
}

impl Answer<'_> {
    /// The answer's parts: each step's start, reasoning and text, then its calls in their states
    /// (each followed by the files its result holds).
    fn parts(&self) -> Vec<Value> {
        let mut parts = Vec::new();
        for message in self.messages {
            let Message::Assistant(reply) = message else {
                continue;
            };
            parts.push(json!({ "type": "step-start" }));
            parts.extend(reply_parts(reply));
            for call in &reply.tool_calls {
                parts.push(self.call_part(call));
                if let Some(result) = self.result_of(&call.id) {
                    parts.extend(result.parts.iter().filter_map(file));
                }
                parts.extend(self.activity_part(call));
            }
        }
        // A call an agent called as a tool waits on is one of the answer's tool parts, in a step
        // of its own, as the stream made it.
        let waiting: Vec<&ToolCall> = (self.waiting().into_iter())
            .flat_map(|paused| {
                (paused.pending().iter())
                    .filter(|pending| paused.waiting_in(&pending.call.id).is_some())
                    .map(|pending| &pending.call)
            })
            .collect();
        if !waiting.is_empty() {
            parts.push(json!({ "type": "step-start" }));
        }
        for call in waiting {
            parts.push(self.call_part(call));
        }
        parts
    }

    /// The paused run that waits in this answer, if one does (it is the conversation's last).
    fn waiting(&self) -> Option<&PausedRun> {
        self.paused.filter(|_| self.last)
    }

    /// What the agents `call` started did, as the stream's activity part showed it: every call of
    /// theirs, each with its result.
    fn activity_part(&self, call: &ToolCall) -> Option<Value> {
        let mut calls = Vec::new();
        match (self.children.iter()).find(|child| child.run.call_id == call.id) {
            Some(child) => activity(&child.run, &mut calls),
            // A child that waits: what it did before it paused.
            None => {
                let paused = self.waiting().map(paused_activity).unwrap_or_default();
                let (_, shown) = paused.into_iter().find(|(id, _)| *id == call.id)?;
                calls = shown;
            }
        }
        let chunk = activity_chunk(&call.id, &calls);
        Some(serde_json::to_value(chunk).unwrap_or_default())
    }

    fn result_of(&self, call_id: &str) -> Option<&ToolResultMessage> {
        self.messages.iter().find_map(|message| match message {
            Message::Tool(result) if result.tool_call_id == call_id => Some(result),
            _ => None,
        })
    }

    /// A call as a tool part in the state it is in.
    fn call_part(&self, call: &ToolCall) -> Value {
        let mut part = Map::new();
        part.insert("type".into(), format!("tool-{}", call.name).into());
        part.insert("toolCallId".into(), call.id.clone().into());
        part.insert("input".into(), input_of(call));
        let waiting = self
            .paused
            .iter()
            .flat_map(|paused| paused.pending())
            .find(|pending| pending.call.id == call.id);
        let state = match (self.result_of(&call.id), waiting) {
            (Some(result), _) if result.is_error && result.content.contains(&self.denied) => {
                let approval = json!({ "id": call.id, "approved": false });
                part.insert("approval".into(), approval);
                "output-denied"
            }
            (Some(result), _) if result.is_error => {
                part.insert("errorText".into(), result.content.clone().into());
                self.approved(call, &mut part);
                "output-error"
            }
            (Some(result), _) => {
                let output = serde_json::from_str(&result.content)
                    .unwrap_or_else(|_| Value::String(result.content.clone()));
                part.insert("output".into(), output);
                self.approved(call, &mut part);
                "output-available"
            }
            (None, Some(pending)) if pending.waits_for == Waiting::Approval => {
                part.insert("approval".into(), json!({ "id": call.id }));
                "approval-requested"
            }
            // A client-side call waiting for its result, or (in a store written by hand) a call
            // with none.
            (None, _) => "input-available",
        };
        part.insert("state".into(), state.into());
        Value::Object(part)
    }
}

impl Answer<'_> {
    /// Marks `call`, which has its result, approved (as the stream left it once the person
    /// approved it) when its tool needs approval: it ran, so it was approved.
    fn approved(&self, call: &ToolCall, part: &mut Map<String, Value>) {
        if self.approval_tools.contains(&call.name.as_str()) {
            part.insert(
                "approval".into(),
                json!({ "id": call.id, "approved": true }),
            );
        }
    }
}

/// The agent's tools whose calls need approval, by name.
fn approval_tools<S: Send + Sync + 'static, I>(shared: &Shared<S, I>) -> Vec<&str> {
    (shared.agent.tools().definitions().iter())
        .filter(|definition| definition.annotations.requires_approval)
        .map(|definition| definition.name.as_str())
        .collect()
}

/// The calls of `child`'s run, each with its result, and after each the calls of the runs it
/// started, as activity entries.
fn activity(child: &ChildRun, calls: &mut Vec<Value>) {
    let (messages, children) = match &child.outcome {
        Ok(run) => (&run.messages[..], &run.children[..]),
        Err(failure) => (&failure.messages[..], &[][..]),
    };
    activity_of(child.path.as_str(), messages, &[], calls, |call, calls| {
        for grandchild in children.iter().filter(|run| run.call_id == call.id) {
            activity(grandchild, calls);
        }
    });
}

/// A reply's reasoning, then its text.
fn reply_parts(reply: &AssistantMessage) -> Vec<Value> {
    let reasoning = reply
        .reasoning
        .iter()
        .filter(|piece| !piece.text.is_empty())
        .map(|piece| json!({ "type": "reasoning", "text": piece.text, "state": "done" }));
    let text = (!reply.content.is_empty())
        .then(|| json!({ "type": "text", "text": reply.content, "state": "done" }));
    reasoning.chain(text).collect()
}

/// A part as a file part; `None` for text.
fn file(part: &Part) -> Option<Value> {
    let (url, media_type) = file_of(part)?;
    Some(json!({ "type": "file", "mediaType": media_type, "url": url }))
}
