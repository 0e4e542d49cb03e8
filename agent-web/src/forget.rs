//! `DELETE /api/chat/{id}`: a chat forgotten at its owner's request (a "delete this conversation"
//! button), its messages and any run waiting in it gone from the session store.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::errors::store_failed;
use super::identity::Identity;
use super::{Shared, chat_of, refuse};

/// Forgets the caller's chat `chat_id`: `204`, or `404` when the caller has no chat of that id
/// (another user's chat included, as everywhere). A chat a run is answering is forgotten once the
/// run has ended (the run holds the conversation until then).
pub(super) async fn forget<S: Send + Sync + 'static, I: Identity<S>>(
    State(shared): State<Arc<Shared<S, I>>>,
    Path(chat_id): Path<String>,
    request: axum::extract::Request,
) -> Response {
    let (parts, _) = request.into_parts();
    let key = match chat_of(&shared, parts, &chat_id).await {
        Ok(key) => key,
        Err(refused) => return refused,
    };
    let store = &*shared.store;
    let _hold = store.hold(&key).await;
    let conversation = match store.load(&key).await {
        Ok(conversation) => conversation,
        Err(error) => return store_failed(error, &chat_id),
    };
    let len = conversation.messages.len();
    if len == 0 && conversation.paused.is_none() {
        return refuse(
            StatusCode::NOT_FOUND,
            &format!("there is no chat `{chat_id}`"),
        );
    }
    match store.truncate(&key, len, 0).await {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(error) => store_failed(error, &chat_id),
    }
}
