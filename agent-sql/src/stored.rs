//! A conversation as the stores on a database keep it: each message as JSON text, in order, and
//! the paused run's saved form beside them; read back with what is wrong in it and where.

use agent_core::Message;
use agent_core::PausedRun;
use agent_core::session::SessionError;

/// The messages' texts, to store in order.
pub(super) fn message_bodies(messages: &[Message]) -> Result<Vec<String>, SessionError> {
    messages
        .iter()
        .map(|message| {
            serde_json::to_string(message).map_err(|error| SessionError::Store {
                message: error.to_string(),
            })
        })
        .collect()
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
