//! What a run asks for, read from the AG-UI `RunAgentInput` a client posts: the thread and the
//! run, and either the user's new message (the last of `messages`, with the run's `context` after
//! it) or the answers to the interrupts the thread's last run ended with (`resume`).
//!
//! The server keeps the thread's conversation, so the messages before the last are not read: a
//! client cannot put words in the assistant's mouth or results in a tool's.

use agent_core::Part;
use serde::Deserialize;
use serde_json::Value;

/// A request the client got wrong: what to tell it (`400`).
pub(crate) type BadRequest = String;

/// A run, as asked.
#[derive(Debug, PartialEq)]
pub(crate) struct RunInput {
    pub(crate) thread_id: String,
    pub(crate) run_id: String,
    pub(crate) turn: Turn,
}

/// What the run does.
#[derive(Debug, PartialEq)]
pub(crate) enum Turn {
    /// Answer the user's new message: its text and its parts.
    Ask { text: String, parts: Vec<Part> },
    /// Go on with the paused run, given these answers to its interrupts.
    Resume(Vec<ResumeEntry>),
}

/// An answer to one interrupt.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ResumeEntry {
    pub(crate) interrupt_id: String,
    pub(crate) status: ResumeStatus,
    #[serde(default)]
    pub(crate) payload: Option<Value>,
}

/// Whether the interrupt was answered or cancelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ResumeStatus {
    Resolved,
    Cancelled,
}

/// The fields of `RunAgentInput` a run reads; the rest (`state`, `tools`, `forwardedProps`, ...)
/// are the client's own.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Body {
    thread_id: String,
    run_id: String,
    #[serde(default)]
    messages: Vec<Value>,
    #[serde(default)]
    context: Vec<ContextItem>,
    #[serde(default)]
    resume: Option<Vec<ResumeEntry>>,
}

/// A piece of ambient information the client gives the run.
#[derive(Deserialize)]
struct ContextItem {
    description: String,
    value: String,
}

/// Reads a `RunAgentInput` body.
pub(crate) fn parse(bytes: &[u8]) -> Result<RunInput, BadRequest> {
    let body: Body = serde_json::from_slice(bytes)
        .map_err(|error| format!("the body is not an AG-UI RunAgentInput: {error}"))?;
    if body.run_id.trim().is_empty() {
        return Err("the runId is empty".to_owned());
    }
    let turn =
        match body.resume {
            Some(entries) if !entries.is_empty() => Turn::Resume(entries),
            _ => {
                let (text, mut parts) = last_user_message(&body.messages)?;
                parts.extend(body.context.iter().map(|item| {
                    Part::text(format!("Context ({}): {}", item.description, item.value))
                }));
                Turn::Ask { text, parts }
            }
        };
    Ok(RunInput {
        thread_id: body.thread_id,
        run_id: body.run_id,
        turn,
    })
}

/// The text and parts of the last message, which must be the user's.
fn last_user_message(messages: &[Value]) -> Result<(String, Vec<Part>), BadRequest> {
    let Some(last) = messages.last() else {
        return Err("there is no message to answer: send the user's message last".to_owned());
    };
    let role = last.get("role").and_then(Value::as_str).unwrap_or_default();
    if role != "user" {
        return Err(format!(
            "the last message is the {role:?}'s, not the user's: a run answers the user's new \
             message, or goes on with `resume` after an interrupt"
        ));
    }
    match last.get("content") {
        Some(Value::String(text)) => Ok((text.clone(), Vec::new())),
        Some(Value::Array(parts)) => {
            let parts = parts.iter().map(part).collect::<Result<Vec<_>, _>>()?;
            Ok((String::new(), parts))
        }
        _ => Err("the user's message has no content (a string or an array of parts)".to_owned()),
    }
}

/// One part of the user's message: text, or an image, audio or document with its bytes or URL.
fn part(part: &Value) -> Result<Part, BadRequest> {
    let kind = part.get("type").and_then(Value::as_str).unwrap_or_default();
    if kind == "text" {
        let text = part.get("text").and_then(Value::as_str);
        return text
            .map(Part::text)
            .ok_or_else(|| "a text part has no text".to_owned());
    }
    let media = media(kind, part.get("source"))?;
    Ok(match kind {
        "image" => Part::Image(media),
        "audio" => Part::Audio(media),
        _ => Part::Document(media),
    })
}

/// A media part's bytes or URL; `kind` names the part for errors.
fn media(kind: &str, source: Option<&Value>) -> Result<agent_core::Media, BadRequest> {
    if !matches!(kind, "image" | "audio" | "document") {
        return Err(format!(
            "a part of type {kind:?} cannot be read: send text, image, audio or document parts"
        ));
    }
    let field = |name: &str| source.and_then(|source| source.get(name)?.as_str());
    let mime_type = field("mimeType");
    match (field("type"), field("value")) {
        (Some("data"), Some(data)) => {
            let mime_type = mime_type.ok_or_else(|| format!("the {kind} part has no mimeType"))?;
            Ok(agent_core::Media::base64(mime_type, data))
        }
        (Some("url"), Some(url)) => {
            let mime_type = mime_type.unwrap_or(match kind {
                "image" => "image/*",
                "audio" => "audio/*",
                _ => "application/octet-stream",
            });
            Ok(agent_core::Media::url(mime_type, url))
        }
        (Some(other), _) if other != "data" && other != "url" => Err(format!(
            "the {kind} part's source is a {other:?}: send its bytes (`data`) or a URL"
        )),
        _ => Err(format!("the {kind} part has no source value")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parsed(body: Value) -> Result<RunInput, BadRequest> {
        parse(body.to_string().as_bytes())
    }

    #[test]
    fn the_last_user_message_is_the_turn_and_the_context_follows_it() {
        let input = parsed(json!({
            "threadId": "t", "runId": "r", "state": {}, "tools": [], "forwardedProps": {},
            "messages": [
                {"id": "1", "role": "user", "content": "earlier"},
                {"id": "2", "role": "assistant", "content": "made up"},
                {"id": "3", "role": "user", "content": "Umbrella?"}
            ],
            "context": [{"description": "city", "value": "Paris"}]
        }))
        .unwrap();
        assert_eq!(input.thread_id, "t");
        assert_eq!(
            input.turn,
            Turn::Ask {
                text: "Umbrella?".into(),
                parts: vec![Part::text("Context (city): Paris")],
            }
        );
    }

    #[test]
    fn parts_carry_their_bytes_or_url() {
        let input = parsed(json!({
            "threadId": "t", "runId": "r",
            "messages": [{"id": "1", "role": "user", "content": [
                {"type": "text", "text": "What is this?"},
                {"type": "image", "source": {"type": "data", "value": "iVBO", "mimeType": "image/png"}},
                {"type": "document", "source": {"type": "url", "value": "https://example.com/a.pdf", "mimeType": "application/pdf"}}
            ]}]
        }))
        .unwrap();
        let Turn::Ask { text, parts } = input.turn else {
            panic!("a question")
        };
        assert_eq!(text, "");
        assert_eq!(
            parts,
            vec![
                Part::text("What is this?"),
                Part::Image(agent_core::Media::base64("image/png", "iVBO")),
                Part::Document(agent_core::Media::url(
                    "application/pdf",
                    "https://example.com/a.pdf"
                )),
            ]
        );
    }

    #[test]
    fn resume_entries_are_the_turn_when_given() {
        let input = parsed(json!({
            "threadId": "t", "runId": "r", "messages": [],
            "resume": [{"interruptId": "i", "status": "resolved", "payload": {"approved": true}}]
        }))
        .unwrap();
        assert_eq!(
            input.turn,
            Turn::Resume(vec![ResumeEntry {
                interrupt_id: "i".into(),
                status: ResumeStatus::Resolved,
                payload: Some(json!({"approved": true})),
            }])
        );
    }

    #[test]
    fn what_cannot_be_a_turn_is_refused_with_why() {
        let no_message = parsed(json!({"threadId": "t", "runId": "r", "messages": []}));
        assert!(no_message.unwrap_err().contains("no message to answer"));
        let assistant_last = parsed(json!({"threadId": "t", "runId": "r",
            "messages": [{"id": "1", "role": "assistant", "content": "hi"}]}));
        assert!(assistant_last.unwrap_err().contains("not the user's"));
        let file = parsed(
            json!({"threadId": "t", "runId": "r", "messages": [{"id": "1",
            "role": "user", "content": [{"type": "video", "source": {"type": "file", "value": "f"}}]}]}),
        );
        assert!(file.unwrap_err().contains("\"video\" cannot be read"));
        let not_json = parse(b"{");
        assert!(not_json.unwrap_err().contains("not an AG-UI RunAgentInput"));
        let bad_status = parsed(json!({"threadId": "t", "runId": "r", "messages": [],
            "resume": [{"interruptId": "i", "status": "maybe"}]}));
        assert!(bad_status.is_err());
    }
}
