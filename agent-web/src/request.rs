//! What `useChat` sends: the chat's id, its messages (`UIMessage`s with parts), and what it asks
//! for (`trigger`: a new message, one in place of an earlier one when `messageId` names it, or
//! `regenerate-message` with the `messageId` of the answer to take back). The server keeps the
//! conversation, so only the last message, the user's new one, is taken; the others are checked
//! for shape, and read only to place an edited message (the answer before it, see [`Turn::Edit`]).

use base64::Engine as _;
use serde::Deserialize;
use serde_json::Value;

use super::grants::GRANT_PART;
use agent_core::Decision;
use agent_core::{Media, Part};

/// A chat request's body.
#[derive(Debug, Deserialize)]
pub(crate) struct ChatBody {
    /// The chat's id: the conversation it belongs to.
    pub(crate) id: String,
    pub(crate) messages: Vec<UiMessage>,
    /// `submit-message` (the default) or `regenerate-message`.
    #[serde(default)]
    pub(crate) trigger: Option<String>,
    /// With `regenerate-message`: the message whose answer is taken back (the answer itself, or
    /// the user's message before it). With `submit-message` and the user's message last: that
    /// message, sent in place of an earlier one (`sendMessage({ text, messageId })`) or new.
    #[serde(default, rename = "messageId")]
    pub(crate) message_id: Option<String>,
}

/// One message as the client has it.
#[derive(Debug, Deserialize)]
pub(crate) struct UiMessage {
    /// The client's id for it: an answered approval's message goes on under the same id.
    #[serde(default)]
    pub(crate) id: Option<String>,
    pub(crate) role: String,
    pub(crate) parts: Vec<Value>,
}

/// The user's new message: its text and parts.
#[derive(Debug, PartialEq)]
pub(crate) struct UserInput {
    pub(crate) text: String,
    pub(crate) parts: Vec<Part>,
}

/// What a request asks for: the answer to a new message, going on with a paused run once the
/// person answered its approval requests, or another answer to a question already answered.
#[derive(Debug, PartialEq)]
pub(crate) enum Turn {
    Message(UserInput),
    /// Take back an answer and answer its question again: the question is the request's last
    /// message (`question`, with its id `question_id`); `message_id` names the answer taken back
    /// or the question itself (`None`: the chat's last answer).
    Regenerate {
        message_id: Option<String>,
        question: UserInput,
        question_id: Option<String>,
    },
    /// The user's message sent with its own id as `messageId`: in place of the question the chat
    /// kept there (`sendMessage({ text, messageId })` edits an earlier message: the client drops
    /// the turns after it and sends the messages up to it), or a new one. Where it goes is read
    /// from the request's messages before it: the last answer (`after`) and the user messages
    /// after that answer (`unanswered`).
    Edit {
        /// The request's `messageId`.
        message_id: String,
        question: UserInput,
        /// The id of the request's last message, the question.
        question_id: Option<String>,
        /// The last assistant message before the question; `None`: the question is the chat's
        /// first.
        after: Option<Answer>,
        /// The user's messages between that answer and the question (sent, never answered: a
        /// request refused, say), as far as they read.
        unanswered: Vec<UserInput>,
    },
    /// Decisions by call id, from the tool parts the person answered, and the id of the
    /// assistant message they were answered in (its answer goes on in that message).
    Approvals {
        message_id: Option<String>,
        decisions: Vec<(String, Decision)>,
        /// The grants the message holds (`data-call-grant` parts), by call id.
        grants: Vec<(String, String)>,
    },
}

/// An answer as the client shows it, before an edited question.
#[derive(Debug, PartialEq)]
pub(crate) struct Answer {
    /// Its message id (the server's, from the answer's `start` chunk).
    pub(crate) id: Option<String>,
    /// The question it answered: the user's message before it in the request, if the request has
    /// one and it reads.
    pub(crate) question: Option<UserInput>,
}

/// A request read: its chat id, what it asks for, and whether it goes on with a chat (its
/// messages show an answer, it asks for one again, or it edits a message), which a chat the
/// caller does not have cannot do.
#[derive(Debug)]
pub(crate) struct Parsed {
    pub(crate) id: String,
    pub(crate) turn: Turn,
    pub(crate) continues: bool,
}

/// Why a request is refused (a `400` with this text).
pub(crate) type BadRequest = String;

/// The longest chat id, in bytes: it keys the session store.
const MAX_CHAT_ID: usize = 200;

/// The request, or why the body will not do.
pub(crate) fn parse(body: &[u8]) -> Result<Parsed, BadRequest> {
    let deserializer = &mut serde_json::Deserializer::from_slice(body);
    let chat: ChatBody = serde_path_to_error::deserialize(&mut *deserializer).map_err(|error| {
        format!(
            "the body is not a chat request: {}: {}",
            error.path(),
            error.inner()
        )
    })?;
    // One request a body: what follows its JSON (a second request glued on) refuses it whole.
    deserializer
        .end()
        .map_err(|error| format!("the body has more after its JSON: {error}"))?;
    let continues = chat.trigger.as_deref() == Some("regenerate-message")
        || chat.message_id.is_some()
        || chat
            .messages
            .iter()
            .any(|message| message.role == "assistant");
    let (id, turn) = read(chat)?;
    Ok(Parsed {
        id,
        turn,
        continues,
    })
}

/// The chat id and what to do.
fn read(chat: ChatBody) -> Result<(String, Turn), BadRequest> {
    check_chat_id(&chat.id)?;
    for (at, message) in chat.messages.iter().enumerate() {
        for part in &message.parts {
            check_part(part).map_err(|problem| format!("messages[{at}]: {problem}"))?;
        }
    }
    let regenerate = match chat.trigger.as_deref() {
        None | Some("submit-message") => false,
        Some("regenerate-message") => true,
        Some(other) => {
            return Err(format!(
                "unknown trigger `{other}`: a request submits a message (`submit-message`) or \
                 asks for an answer again (`regenerate-message`)"
            ));
        }
    };
    let Some(last) = chat.messages.last() else {
        return Err("the request has no messages".to_owned());
    };
    if regenerate && last.role != "user" {
        return Err(format!(
            "a regenerate request ends with the user's message whose answer is asked for again, \
             not the {}'s",
            last.role
        ));
    }
    if last.role == "assistant" {
        let approvals = approvals(last)?;
        if approvals.is_empty() {
            return Err(
                "the last message is the assistant's, with no approval or tool result answered"
                    .to_owned(),
            );
        }
        let message_id = last.id.clone();
        return Ok((
            chat.id,
            Turn::Approvals {
                message_id,
                decisions: approvals,
                grants: grants(last),
            },
        ));
    }
    if last.role != "user" {
        return Err(format!(
            "the last message must be the user's, not the {}'s",
            last.role
        ));
    }
    let input = user_input(last)?;
    if regenerate {
        let turn = Turn::Regenerate {
            message_id: chat.message_id,
            question: input,
            question_id: last.id.clone(),
        };
        return Ok((chat.id, turn));
    }
    if let Some(message_id) = chat.message_id {
        let before = &chat.messages[..chat.messages.len() - 1];
        let answer_at = before
            .iter()
            .rposition(|message| message.role == "assistant");
        let after = answer_at.map(|at| Answer {
            id: before[at].id.clone(),
            question: before[..at]
                .iter()
                .rfind(|message| message.role == "user")
                .and_then(|message| user_input(message).ok()),
        });
        let unanswered = before[answer_at.map_or(0, |at| at + 1)..]
            .iter()
            .filter(|message| message.role == "user")
            .filter_map(|message| user_input(message).ok())
            .collect();
        let turn = Turn::Edit {
            message_id,
            question: input,
            question_id: last.id.clone(),
            after,
            unanswered,
        };
        return Ok((chat.id, turn));
    }
    Ok((chat.id, Turn::Message(input)))
}

/// A user's message: its first text, then its other texts and files.
fn user_input(message: &UiMessage) -> Result<UserInput, BadRequest> {
    let mut input = UserInput {
        text: String::new(),
        parts: Vec::new(),
    };
    for part in &message.parts {
        match part_type(part) {
            "text" => {
                let text = part.get("text").and_then(Value::as_str).unwrap_or_default();
                if input.text.is_empty() && input.parts.is_empty() {
                    input.text = text.to_owned();
                } else {
                    input.parts.push(Part::text(text));
                }
            }
            "file" => input.parts.push(file_part(part)?),
            // A user's message holds text and files; the rest is the client's own bookkeeping.
            _ => {}
        }
    }
    if input.text.trim().is_empty() && input.parts.is_empty() {
        return Err("the user's message is empty".to_owned());
    }
    Ok(input)
}

/// The person's answers in an assistant message: each tool part in the state
/// `approval-responded`, with `approval: {id, approved, reason?}`.
fn approvals(message: &UiMessage) -> Result<Vec<(String, Decision)>, BadRequest> {
    let mut decisions = Vec::new();
    for part in &message.parts {
        let is_tool = part_type(part).starts_with("tool-") || part_type(part) == "dynamic-tool";
        if !is_tool {
            continue;
        }
        let call_id = part
            .get("toolCallId")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let decision = match part.get("state").and_then(Value::as_str) {
            Some("approval-responded") => approval(part, call_id)?,
            // A client-side tool's result, as `addToolOutput` leaves it (the server's own calls
            // have this state too: the server keeps only the calls its paused run waits on).
            Some("output-available") => Decision::Result {
                content: match part.get("output") {
                    Some(Value::String(text)) => text.clone(),
                    Some(output) => output.to_string(),
                    None => String::new(),
                },
                parts: Vec::new(),
                is_error: false,
            },
            Some("output-error") => Decision::Result {
                content: part
                    .get("errorText")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                parts: Vec::new(),
                is_error: true,
            },
            _ => continue,
        };
        decisions.push((call_id.to_owned(), decision));
    }
    Ok(decisions)
}

/// The grants a message holds: its `data-call-grant` parts' `{toolCallId, grant}`, by call id.
fn grants(message: &UiMessage) -> Vec<(String, String)> {
    message
        .parts
        .iter()
        .filter(|part| part_type(part) == GRANT_PART)
        .filter_map(|part| {
            let data = part.get("data")?;
            let call_id = data.get("toolCallId")?.as_str()?;
            let grant = data.get("grant")?.as_str()?;
            Some((call_id.to_owned(), grant.to_owned()))
        })
        .collect()
}

/// The person's answer to an approval request.
fn approval(part: &Value, call_id: &str) -> Result<Decision, BadRequest> {
    let approval = part
        .get("approval")
        .ok_or_else(|| format!("the answered call `{call_id}` has no `approval`"))?;
    let approved = approval
        .get("approved")
        .and_then(Value::as_bool)
        .ok_or_else(|| format!("the approval of `{call_id}` has no `approved`"))?;
    Ok(if approved {
        Decision::Approve
    } else {
        Decision::Deny {
            reason: approval
                .get("reason")
                .and_then(Value::as_str)
                .map(str::to_owned),
        }
    })
}

fn part_type(part: &Value) -> &str {
    part.get("type").and_then(Value::as_str).unwrap_or_default()
}

/// What a chat id must be, wherever a request names one: 1 to [`MAX_CHAT_ID`] bytes, not all
/// blank, and no control character (a caller's store key joins their owner and the chat id with
/// one).
pub(crate) fn check_chat_id(id: &str) -> Result<(), BadRequest> {
    if id.trim().is_empty() || id.len() > MAX_CHAT_ID {
        return Err(format!(
            "the chat id must be 1 to {MAX_CHAT_ID} bytes (UTF-8), not {}",
            id.len()
        ));
    }
    if id.chars().any(char::is_control) {
        return Err("the chat id has a control character".to_owned());
    }
    Ok(())
}

/// A part of a kind the protocol defines, with the fields its kind needs, each a string.
fn check_part(part: &Value) -> Result<(), BadRequest> {
    let kind = part_type(part);
    let needs: &[&str] = match kind {
        "text" | "reasoning" => &["text"],
        "file" => &["mediaType", "url"],
        "step-start" => &[],
        "source-url" => &["sourceId", "url"],
        "source-document" => &["sourceId", "mediaType", "title"],
        "dynamic-tool" => &["toolName", "toolCallId", "state"],
        _ if kind.starts_with("tool-") => &["toolCallId", "state"],
        _ if kind.starts_with("data-") => &[],
        "" => return Err("a part has no `type`".to_owned()),
        other => return Err(format!("unknown part type `{other}`")),
    };
    // Every field a kind needs is text.
    for field in needs {
        match part.get(*field) {
            None => return Err(format!("a `{kind}` part has no `{field}`")),
            Some(value) if !value.is_string() => {
                return Err(format!(
                    "a `{kind}` part's `{field}` is not a string: {value}"
                ));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// A file part (`data:` URL or a URL the provider fetches) as an image, document or audio part.
fn file_part(part: &Value) -> Result<Part, BadRequest> {
    let media_type = part
        .get("mediaType")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let url = part.get("url").and_then(Value::as_str).unwrap_or_default();
    let media = match url.strip_prefix("data:") {
        Some(rest) => {
            let (header, data) = rest
                .split_once(',')
                .ok_or("a file's data URL has no data")?;
            if !header.ends_with(";base64") {
                return Err("a file's data URL must be base64".to_owned());
            }
            // Checked here, or the model would be the first to find out (and the chat would keep
            // the bad part).
            if base64::engine::general_purpose::STANDARD
                .decode(data)
                .is_err()
            {
                return Err("a file's data URL does not hold valid base64".to_owned());
            }
            Media::base64(media_type, data)
        }
        None if url.starts_with("https://") || url.starts_with("http://") => {
            Media::url(media_type, url)
        }
        None => {
            return Err(format!(
                "a file's URL must be a data: or http(s) URL, not `{url}`"
            ));
        }
    };
    let media = match part.get("filename").and_then(Value::as_str) {
        Some(name) => media.with_name(name),
        None => media,
    };
    Ok(if media_type.starts_with("image/") {
        Part::Image(media)
    } else if media_type.starts_with("audio/") {
        Part::Audio(media)
    } else {
        Part::Document(media)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_user_message_is_the_input() {
        let body = serde_json::json!({
            "id": "chat-1",
            "trigger": "submit-message",
            "messages": [
                {"id": "m1", "role": "user", "parts": [{"type": "text", "text": "hi"}]},
                {"id": "m2", "role": "assistant", "parts": [
                    {"type": "step-start"},
                    {"type": "tool-get_weather", "toolCallId": "c1", "state": "output-available",
                     "input": {}, "output": "rain"},
                    {"type": "text", "text": "Rain."}
                ]},
                {"id": "m3", "role": "user", "parts": [
                    {"type": "text", "text": "What is this?"},
                    {"type": "file", "mediaType": "image/png", "url": "data:image/png;base64,iVBORw==",
                     "filename": "a.png"}
                ]}
            ]
        });
        let Parsed { id, turn, .. } = parse(body.to_string().as_bytes()).unwrap();
        assert_eq!(id, "chat-1");
        let Turn::Message(input) = turn else {
            panic!("{turn:?}");
        };
        assert_eq!(input.text, "What is this?");
        assert_eq!(
            input.parts,
            [Part::Image(
                Media::base64("image/png", "iVBORw==").with_name("a.png")
            )]
        );
    }

    #[test]
    fn bad_bodies_say_what_is_wrong() {
        let cases = [
            ("{", "the body is not a chat request"),
            (r#"{"id":"c","messages":[]}"#, "the request has no messages"),
            (
                r#"{"id":"c","messages":[{"role":"user","parts":[{"type":"hologram"}]}]}"#,
                "messages[0]: unknown part type `hologram`",
            ),
            (
                r#"{"id":"c","messages":[{"role":"user","parts":[{"type":"file","url":"x"}]}]}"#,
                "messages[0]: a `file` part has no `mediaType`",
            ),
            (
                r#"{"id":"c","messages":[{"role":"assistant","parts":[]}]}"#,
                "the last message is the assistant's, with no approval or tool result answered",
            ),
            (
                r#"{"id":"c","messages":[{"role":"system","parts":[]}]}"#,
                "the last message must be the user's",
            ),
            (
                r#"{"id":"","messages":[{"role":"user","parts":[{"type":"text","text":"x"}]}]}"#,
                "the chat id must be",
            ),
            (
                r#"{"id":"c","messages":[{"role":"user","parts":[{"type":"file","mediaType":"image/png","url":"data:image/png;base64,not base64!"}]}]}"#,
                "a file's data URL does not hold valid base64",
            ),
        ];
        for (body, says) in cases {
            let error = parse(body.as_bytes()).unwrap_err();
            assert!(error.starts_with(says), "{body}: {error}");
        }
    }

    #[test]
    fn a_regenerate_names_its_question_and_the_answer_taken_back() {
        let body = serde_json::json!({
            "id": "chat-1",
            "trigger": "regenerate-message",
            "messageId": "msg-chat-1-1-0",
            "messages": [{"id": "m1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}]
        });
        let Parsed { turn, .. } = parse(body.to_string().as_bytes()).unwrap();
        assert_eq!(
            turn,
            Turn::Regenerate {
                message_id: Some("msg-chat-1-1-0".to_owned()),
                question: UserInput {
                    text: "hi".to_owned(),
                    parts: Vec::new()
                },
                question_id: Some("m1".to_owned()),
            }
        );
        let ends_with_answer = serde_json::json!({
            "id": "chat-1",
            "trigger": "regenerate-message",
            "messages": [{"role": "assistant", "parts": [{"type": "text", "text": "hi"}]}]
        });
        let error = parse(ends_with_answer.to_string().as_bytes()).unwrap_err();
        assert!(error.starts_with("a regenerate request ends with the user's message"));
        let unknown = serde_json::json!({
            "id": "chat-1",
            "trigger": "resume-stream",
            "messages": [{"role": "user", "parts": [{"type": "text", "text": "hi"}]}]
        });
        let error = parse(unknown.to_string().as_bytes()).unwrap_err();
        assert!(
            error.starts_with("unknown trigger `resume-stream`"),
            "{error}"
        );
    }

    #[test]
    fn an_edit_brings_the_answer_before_it_and_the_messages_between() {
        let user = |id: &str, text: &str| {
            let parts = [serde_json::json!({"type": "text", "text": text})];
            serde_json::json!({"id": id, "role": "user", "parts": parts})
        };
        let body = serde_json::json!({
            "id": "chat-1",
            "trigger": "submit-message",
            "messageId": "m4",
            "messages": [
                user("m1", "Hi"),
                {"id": "msg-chat-1-0-0", "role": "assistant",
                 "parts": [{"type": "text", "text": "Hello!"}]},
                user("m2", "Still there?"),
                {"id": "m3", "role": "user", "parts": [{"type": "step-start"}]},
                user("m4", "Weather?")
            ]
        });
        let Parsed { turn, .. } = parse(body.to_string().as_bytes()).unwrap();
        let input = |text: &str| UserInput {
            text: text.to_owned(),
            parts: Vec::new(),
        };
        assert_eq!(
            turn,
            Turn::Edit {
                message_id: "m4".to_owned(),
                question: input("Weather?"),
                question_id: Some("m4".to_owned()),
                after: Some(Answer {
                    id: Some("msg-chat-1-0-0".to_owned()),
                    question: Some(input("Hi")),
                }),
                // A message that does not read was refused, and is passed over.
                unanswered: vec![input("Still there?")],
            }
        );
        // The first question edited: nothing before it.
        let first = serde_json::json!({
            "id": "chat-1",
            "messageId": "m1",
            "messages": [user("m1", "Hello")]
        });
        let Parsed { turn, .. } = parse(first.to_string().as_bytes()).unwrap();
        let Turn::Edit {
            after, unanswered, ..
        } = turn
        else {
            panic!("{turn:?}");
        };
        assert_eq!((after, unanswered), (None, Vec::new()));
    }

    #[test]
    fn a_request_that_shows_an_answer_or_asks_again_goes_on_with_a_chat() {
        let user = serde_json::json!({"role": "user", "parts": [{"type": "text", "text": "hi"}]});
        let answer =
            serde_json::json!({"role": "assistant", "parts": [{"type": "text", "text": "yo"}]});
        let cases = [
            (serde_json::json!({"id": "c", "messages": [user]}), false),
            (
                serde_json::json!({"id": "c", "messages": [user, answer, user]}),
                true,
            ),
            (
                serde_json::json!({"id": "c", "trigger": "regenerate-message", "messages": [user]}),
                true,
            ),
            (
                serde_json::json!({"id": "c", "messageId": "m1", "messages": [user]}),
                true,
            ),
        ];
        for (body, continues) in cases {
            let parsed = parse(body.to_string().as_bytes()).unwrap();
            assert_eq!(parsed.continues, continues, "{body}");
        }
        let control = serde_json::json!({"id": "a\u{1f}b", "messages": [user]});
        let error = parse(control.to_string().as_bytes()).unwrap_err();
        assert_eq!(error, "the chat id has a control character");
    }

    #[test]
    fn the_chat_id_limit_is_in_bytes_and_says_so() {
        let body = |id: &str| {
            serde_json::json!({"id": id, "messages": [{"role": "user", "parts": [{"type": "text", "text": "x"}]}]})
                .to_string()
        };
        // 66 CJK characters are 198 bytes; 67 are 201, though far fewer than 200 characters.
        assert!(parse(body(&"聊".repeat(66)).as_bytes()).is_ok());
        let error = parse(body(&"聊".repeat(67)).as_bytes()).unwrap_err();
        assert_eq!(error, "the chat id must be 1 to 200 bytes (UTF-8), not 201");
    }
}
