//! A signed-in user's chats: `GET /api/chats` lists them (newest first, with their titles) and
//! `PATCH /api/chat/{id}` renames one. A chat is titled when its first question is answered, by
//! the server's [`Titler`] (the question's first words, unless the server gives its own). A server
//! that does not identify callers lists nothing: its chats are the clients' own to keep.

use std::sync::Arc;
use std::time::SystemTime;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::identity::Identity;
use super::{Shared, chat_of, json_response, refuse, store_failed};
use crate::run::RunOutput;

/// What a chat's title is made from its first exchange: the question's text and the run that
/// answered it; `None` leaves the chat untitled. See [`ChatServer::title`](super::ChatServer::title).
pub(crate) type Titler = Arc<dyn Fn(&str, &RunOutput) -> Option<String> + Send + Sync>;

/// The most characters a title keeps.
pub const MAX_TITLE: usize = 80;

/// The default title: the question's first line, its first words up to about 60 characters.
pub(crate) fn first_words(question: &str) -> Option<String> {
    let line = question
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())?;
    if line.chars().count() <= 60 {
        return Some(line.to_owned());
    }
    let mut title = String::new();
    for word in line.split_whitespace() {
        if title.chars().count() + word.chars().count() > 60 {
            break;
        }
        if !title.is_empty() {
            title.push(' ');
        }
        title.push_str(word);
    }
    if title.is_empty() {
        // One long word: cut at a character.
        title = line.chars().take(60).collect();
    }
    title.push('…');
    Some(title)
}

/// A title as kept: trimmed, without control characters, at most [`MAX_TITLE`] characters;
/// `None` when nothing is left.
pub(crate) fn clean_title(title: &str) -> Option<String> {
    let cleaned: String = title
        .trim()
        .chars()
        .filter(|character| !character.is_control())
        .take(MAX_TITLE)
        .collect();
    (!cleaned.is_empty()).then_some(cleaned)
}

/// `GET /api/chats`: the caller's chats, newest first: `[{"id", "title", "updatedAt"}]`
/// (`updatedAt` in milliseconds since 1970).
pub(super) async fn list<S: Send + Sync + 'static, I: Identity<S>>(
    State(shared): State<Arc<Shared<S, I>>>,
    request: axum::extract::Request,
) -> Response {
    let (parts, _) = request.into_parts();
    let caller = match shared.identity.caller(parts).await {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    let Some(prefix) = caller.prefix() else {
        return json_response(&json!([]));
    };
    let listed = match shared.store.list(&prefix).await {
        Ok(listed) => listed,
        Err(error) => return store_failed(error),
    };
    let chats: Vec<Value> = listed
        .into_iter()
        .filter_map(|chat| {
            // A chat id holds no control character: a longer owner's keys are not this one's.
            let id = chat.id.strip_prefix(&prefix)?;
            (!id.contains('\u{1f}')).then(
                || json!({ "id": id, "title": chat.title, "updatedAt": millis(chat.updated) }),
            )
        })
        .collect();
    json_response(&Value::Array(chats))
}

/// `PATCH /api/chat/{id}` with `{"title": "..."}` (or `null` to take it away): `204`; `404` when
/// the caller has no chat of that id; `400` for a body without a title.
pub(super) async fn rename<S: Send + Sync + 'static, I: Identity<S>>(
    State(shared): State<Arc<Shared<S, I>>>,
    Path(chat_id): Path<String>,
    request: axum::extract::Request,
) -> Response {
    let (parts, body) = request.into_parts();
    let key = match chat_of(&shared, parts, &chat_id).await {
        Ok(key) => key,
        Err(refused) => return refused,
    };
    let Ok(bytes) = axum::body::to_bytes(body, 64 * 1024).await else {
        return refuse(StatusCode::PAYLOAD_TOO_LARGE, "the body is over 64 KiB");
    };
    let title = match title_of(&bytes) {
        Ok(title) => title,
        Err(problem) => return refuse(StatusCode::BAD_REQUEST, &problem),
    };
    let store = &*shared.store;
    match store.load(&key).await {
        Ok(conversation) if conversation.messages.is_empty() => {
            let message = format!("there is no chat `{chat_id}`");
            return refuse(StatusCode::NOT_FOUND, &message);
        }
        Ok(_) => {}
        Err(error) => return store_failed(error),
    }
    match store.set_title(&key, title.as_deref()).await {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(error) => store_failed(error),
    }
}

/// The title a rename body asks for: `{"title": "..."}`, or `null` for none.
fn title_of(body: &Bytes) -> Result<Option<String>, String> {
    let body: Value =
        serde_json::from_slice(body).map_err(|error| format!("the body is not JSON: {error}"))?;
    match body.get("title") {
        Some(Value::String(title)) => Ok(clean_title(title)),
        Some(Value::Null) => Ok(None),
        _ => Err("a rename is {\"title\": \"...\"} (or null to take the title away)".to_owned()),
    }
}

/// A time in milliseconds since 1970.
fn millis(time: SystemTime) -> u64 {
    let since = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_title_is_the_questions_first_words() {
        assert_eq!(
            first_words("  Weather in Oslo?\nmore").as_deref(),
            Some("Weather in Oslo?")
        );
        let long = "Please plan a three day trip through the fjords with a stop in Bergen and Flåm";
        let title = first_words(long).unwrap();
        assert!(
            title.ends_with('…') && title.chars().count() <= 61,
            "{title}"
        );
        assert!(long.starts_with(title.trim_end_matches('…')));
        assert_eq!(first_words(" \n "), None);
        assert_eq!(clean_title(" a\u{7}b "), Some("ab".to_owned()));
        assert_eq!(clean_title("   "), None);
    }
}
