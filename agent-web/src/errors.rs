//! What a client is told when the session store or a run fails: words of the endpoint's own, never
//! the store's. A store's error names the conversation by its store key (the owner and the chat id
//! joined), and a run's error can name the calls a paused run waits on: neither is the client's to
//! read, so each failure is worded here from what it is, and the store's own words go to the
//! server's log only.

use axum::http::StatusCode;
use axum::response::Response;

use super::refuse;
use agent_core::RunError;
use agent_core::session::SessionError;

/// The status and the words a client gets for `error` of the store, on the chat the client calls
/// `chat_id` (empty for a list of chats).
fn session_refusal(error: &SessionError, chat_id: &str) -> (StatusCode, String) {
    // A list of chats names none.
    let chat = if chat_id.is_empty() {
        "your chats".to_owned()
    } else {
        format!("chat `{chat_id}`")
    };
    match error {
        SessionError::Conflict { .. } => (
            StatusCode::CONFLICT,
            format!("{chat} changed meanwhile (another request wrote to it): read it again"),
        ),
        SessionError::Paused { .. } => (
            StatusCode::CONFLICT,
            format!(
                "{chat} waits for answers to its calls: approve, deny or answer them \
                 first"
            ),
        ),
        SessionError::NotPaused { .. } => (
            StatusCode::FORBIDDEN,
            format!("{chat} has no call waiting for an answer: read the chat again"),
        ),
        SessionError::Corrupt { position, .. } => {
            tracing::error!(%error, "a chat does not load");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("message {position} of {chat} does not load"),
            )
        }
        // The store itself failed (or a failure of a later agent-core): its words may hold
        // anything, so they go to the log.
        _ => {
            tracing::error!(%error, "the session store failed");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("the store of {chat} failed; try again later"),
            )
        }
    }
}

/// The refusal of a request whose store failed with `error`, on the caller's chat `chat_id`:
/// `409` when another request changed the chat meanwhile (or a run waits in it), `500` when the
/// store failed; in the endpoint's words, which never hold the store's key.
pub(crate) fn store_failed(error: SessionError, chat_id: &str) -> Response {
    let (status, words) = session_refusal(&error, chat_id);
    refuse(status, &words)
}

/// The text of the `error` chunk an answer in chat `chat_id` ends with when its run fails: the
/// run's own words, but for a failure of the store, worded as [`store_failed`] words it.
pub(crate) fn run_failed(error: &RunError, chat_id: &str) -> String {
    match error {
        RunError::Session { source, .. } => session_refusal(source, chat_id).1,
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_wording_holds_the_store_key_or_the_waiting_calls() {
        let key = "owner-7\u{1f}chat-1";
        let errors = [
            SessionError::Conflict {
                id: key.to_owned(),
                expected: 2,
                found: 3,
            },
            SessionError::Paused {
                id: key.to_owned(),
                waiting: vec!["call_secret".to_owned()],
            },
            SessionError::NotPaused { id: key.to_owned() },
            SessionError::Corrupt {
                id: key.to_owned(),
                position: 4,
                message: format!("bad row in {key}"),
            },
            SessionError::Store {
                message: format!("could not write {key}"),
            },
        ];
        for error in errors {
            let (_, words) = session_refusal(&error, "chat-1");
            assert!(words.contains("chat-1"), "{words}");
            assert!(!words.contains("owner-7"), "{error:?}: {words}");
            assert!(!words.contains("call_secret"), "{error:?}: {words}");
            assert!(!words.contains('\u{1f}'), "{error:?}: {words}");
        }
    }
}
