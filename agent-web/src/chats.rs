//! A signed-in user's chats: `GET /api/chats` lists them (newest first, with their titles) and
//! `PATCH /api/chat/{id}` renames one (titles are made in `titles.rs`). A server that does not
//! identify callers lists each visitor's (a browser known by its cookie), and one that shares its
//! chats by id lists nothing: its chats are the clients' own to keep.

use std::sync::Arc;
use std::time::SystemTime;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::errors::store_failed;
use super::identity::Identity;
use super::titles::clean_title;
use super::{Shared, caller_of, chat_of, json_response, refuse};

/// `GET /api/chats`: the caller's chats, newest first: `[{"id", "title", "updatedAt"}]`
/// (`updatedAt` in milliseconds since 1970).
pub(super) async fn list<S: Send + Sync + 'static, I: Identity<S>>(
    State(shared): State<Arc<Shared<S, I>>>,
    request: axum::extract::Request,
) -> Response {
    let (parts, _) = request.into_parts();
    let caller = match caller_of(&shared, parts).await {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    let Some(prefix) = caller.prefix() else {
        return json_response(&json!([]));
    };
    let listed = match shared.store.list(&prefix).await {
        Ok(listed) => listed,
        Err(error) => return store_failed(error, ""),
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
        Err(error) => return store_failed(error, &chat_id),
    }
    match store.set_title(&key, title.as_deref()).await {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(error) => store_failed(error, &chat_id),
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
