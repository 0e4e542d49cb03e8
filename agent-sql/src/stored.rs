//! A conversation as the stores on a database keep it: each message as JSON text, in order, the
//! paused run's saved form beside them, each summary and each child run as JSON text and the
//! usage as JSON; read back with what is wrong in it and where.

use agent_core::session::SessionError;
use agent_core::{Message, PausedRun, UsageByModel};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// The JSON texts of `items` (messages, summaries), to store in order.
pub(super) fn bodies<T: Serialize>(items: &[T]) -> Result<Vec<String>, SessionError> {
    items.iter().map(body).collect()
}

/// The JSON text of `item`.
pub(super) fn body<T: Serialize>(item: &T) -> Result<String, SessionError> {
    serde_json::to_string(item).map_err(|error| SessionError::Store {
        message: error.to_string(),
    })
}

/// The `kind` number `index` kept with conversation `id` of `len` messages (a summary, a child
/// run), read from its text.
pub(super) fn kept_from<T: DeserializeOwned>(
    id: &str,
    len: usize,
    kind: &str,
    index: usize,
    body: &str,
) -> Result<T, SessionError> {
    serde_json::from_str(body).map_err(|error| SessionError::Corrupt {
        id: id.to_owned(),
        position: len,
        message: format!("its {kind} {index}: {error}"),
    })
}

/// The usage of conversation `id` of `len` messages, read from its text (none: nothing used).
pub(super) fn usage_from(
    id: &str,
    len: usize,
    text: Option<&str>,
) -> Result<UsageByModel, SessionError> {
    let Some(text) = text else {
        return Ok(UsageByModel::default());
    };
    serde_json::from_str(text).map_err(|error| SessionError::Corrupt {
        id: id.to_owned(),
        position: len,
        message: format!("its usage: {error}"),
    })
}

/// The message stored at `position` of conversation `id`, read from its text.
pub(super) fn message_from(id: &str, position: usize, body: &str) -> Result<Message, SessionError> {
    serde_json::from_str(body).map_err(|error| SessionError::Corrupt {
        id: id.to_owned(),
        position,
        message: error.to_string(),
    })
}

/// The paused run stored with conversation `id` of `len` messages, read from its saved form.
pub(super) fn paused_from(id: &str, len: usize, text: &str) -> Result<PausedRun, SessionError> {
    PausedRun::from_json(text).map_err(|error| SessionError::Corrupt {
        id: id.to_owned(),
        position: len,
        message: format!("its paused run: {error}"),
    })
}
