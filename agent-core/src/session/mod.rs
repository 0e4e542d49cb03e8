//! Conversations that outlive a run and its process: a [`SessionStore`] keeps each
//! conversation's messages (and a paused run, if one waits) by conversation id, and
//! [`Agent::run_in`](crate::Agent::run_in) loads, runs and appends in one call.
//!
//! Two stores ship: [`MemorySessions`] and, with the `sqlite` feature, `SqliteSessions` (bundled
//! SQLite: nothing to install).
//!
//! **Concurrent runs on one conversation are serialized**: a run holds its conversation from load
//! to append, and a second run on it waits for the first to finish, then sees its messages. Runs on
//! different conversations do not wait for each other. As a safety net across processes (two
//! programs on one SQLite file), an append is refused with [`SessionError::Conflict`] when the
//! conversation changed since it was loaded, and nothing is written.

mod locks;
mod memory;
#[cfg(feature = "sqlite")]
mod sqlite;

use std::sync::Arc;

pub use locks::{ConversationHold, ConversationLocks};
pub use memory::MemorySessions;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteSessions;

use crate::agent::Agent;
use crate::message::{Message, Usage};
use crate::run::{Decision, PausedRun, RunError, RunOutput, StopReason};
use crate::tool::BoxFuture;

/// A conversation as stored: its messages, and the paused run waiting in it, if any.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Conversation {
    /// Every message so far. A paused run's reply is here; its results come when it resumes.
    pub messages: Vec<Message>,
    /// The run waiting for decisions, if one is.
    pub paused: Option<PausedRun>,
}

/// Why a conversation could not be loaded or saved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// The conversation changed since it was loaded (another process appended to it): nothing
    /// was written.
    #[error("conversation `{id}` has {found} messages, not the {expected} it had when loaded")]
    Conflict {
        /// The conversation.
        id: String,
        /// How many messages it had when loaded.
        expected: usize,
        /// How many it has now.
        found: usize,
    },
    /// A run waits in the conversation for decisions on its calls: resume it
    /// ([`Agent::resume_in`](crate::Agent::resume_in)) before starting another.
    #[error("conversation `{id}` has a paused run waiting for {waiting:?}; resume it first")]
    Paused {
        /// The conversation.
        id: String,
        /// The ids of the waiting calls.
        waiting: Vec<String>,
    },
    /// The conversation has no paused run to resume.
    #[error("conversation `{id}` has no paused run")]
    NotPaused {
        /// The conversation.
        id: String,
    },
    /// A stored message does not load (written by another program, or damaged).
    #[error("conversation `{id}`, message {position}, does not load: {message}")]
    Corrupt {
        /// The conversation.
        id: String,
        /// The message's place, from 0.
        position: usize,
        /// What is wrong.
        message: String,
    },
    /// The store itself failed (the database could not be opened, read or written).
    #[error("the session store failed: {message}")]
    Store {
        /// What failed.
        message: String,
    },
}

/// Where conversations are kept, by id. Implement it over your own database; hold each
/// conversation with a [`ConversationLocks`] so runs on it are serialized.
pub trait SessionStore: Send + Sync {
    /// Waits until no other run holds conversation `id`, then holds it until the hold drops.
    fn hold<'a>(&'a self, id: &'a str) -> BoxFuture<'a, ConversationHold>;

    /// The conversation `id`; empty when there is none yet.
    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Conversation, SessionError>>;

    /// Appends `messages` to conversation `id`, which must still have `expected_len` messages
    /// ([`SessionError::Conflict`] otherwise), and sets its paused run (`None` clears it), all
    /// at once: after a crash either all of it is stored or none.
    fn append<'a>(
        &'a self,
        id: &'a str,
        expected_len: usize,
        messages: &'a [Message],
        paused: Option<&'a PausedRun>,
    ) -> BoxFuture<'a, Result<(), SessionError>>;
}

impl<T: SessionStore + ?Sized> SessionStore for Arc<T> {
    fn hold<'a>(&'a self, id: &'a str) -> BoxFuture<'a, ConversationHold> {
        (**self).hold(id)
    }

    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Conversation, SessionError>> {
        (**self).load(id)
    }

    fn append<'a>(
        &'a self,
        id: &'a str,
        expected_len: usize,
        messages: &'a [Message],
        paused: Option<&'a PausedRun>,
    ) -> BoxFuture<'a, Result<(), SessionError>> {
        (**self).append(id, expected_len, messages, paused)
    }
}

fn session_error(source: SessionError, messages: Vec<Message>, usage: Usage) -> RunError {
    RunError::Session {
        source,
        messages,
        usage,
    }
}

impl<S: Send + Sync + 'static> Agent<S> {
    /// [`run_in`](Agent::run_in) with a per-run context.
    pub async fn run_in_with(
        &self,
        context: &S,
        store: &dyn SessionStore,
        conversation: &str,
        input: impl Into<String>,
    ) -> Result<RunOutput, RunError> {
        let _hold = store.hold(conversation).await;
        let stored = store
            .load(conversation)
            .await
            .map_err(|source| session_error(source, Vec::new(), Usage::default()))?;
        if let Some(paused) = &stored.paused {
            let source = SessionError::Paused {
                id: conversation.to_owned(),
                waiting: paused
                    .pending()
                    .iter()
                    .map(|pending| pending.call.id.clone())
                    .collect(),
            };
            return Err(session_error(source, stored.messages, Usage::default()));
        }
        let place = Place::of(&stored.messages);
        let run = self.run_with(context, input);
        let outcome = if stored.messages.is_empty() {
            run.await
        } else {
            run.history(stored.messages).await
        };
        save(store, conversation, place, outcome).await
    }

    /// [`resume_in`](Agent::resume_in) with a per-run context.
    pub async fn resume_in_with(
        &self,
        context: &S,
        store: &dyn SessionStore,
        conversation: &str,
        decisions: impl IntoIterator<Item = (impl Into<String>, Decision)>,
    ) -> Result<RunOutput, RunError> {
        let _hold = store.hold(conversation).await;
        let stored = store
            .load(conversation)
            .await
            .map_err(|source| session_error(source, Vec::new(), Usage::default()))?;
        let Some(paused) = stored.paused else {
            let source = SessionError::NotPaused {
                id: conversation.to_owned(),
            };
            return Err(session_error(source, stored.messages, Usage::default()));
        };
        let place = Place::of(&stored.messages);
        let outcome = self.resume_paused_with(context, paused, decisions).await;
        save(store, conversation, place, outcome).await
    }
}

impl Agent<()> {
    /// Runs on conversation `conversation` of `store`: loads it (a new one starts with the
    /// system prompt), runs on `input`, and appends the run's new messages; a run that pauses
    /// keeps its paused run in the store for [`resume_in`](Agent::resume_in). Runs on one
    /// conversation are serialized (see [the module](crate::session)). A run that fails after it
    /// began appends its transcript as well (the question, and every call it made, answered), so
    /// its tools' effects are on record and not repeated by the next run; the error is returned.
    pub async fn run_in(
        &self,
        store: &dyn SessionStore,
        conversation: &str,
        input: impl Into<String>,
    ) -> Result<RunOutput, RunError> {
        self.run_in_with(&(), store, conversation, input).await
    }

    /// Resumes the paused run of conversation `conversation` with one decision per waiting
    /// call (see [`resume_paused`](Agent::resume_paused)), and appends what follows.
    pub async fn resume_in(
        &self,
        store: &dyn SessionStore,
        conversation: &str,
        decisions: impl IntoIterator<Item = (impl Into<String>, Decision)>,
    ) -> Result<RunOutput, RunError> {
        self.resume_in_with(&(), store, conversation, decisions)
            .await
    }
}

/// Where a run's new messages begin in its transcript, for a conversation as loaded.
#[derive(Clone, Copy)]
pub(crate) struct Place {
    /// How many messages the conversation had.
    pub(crate) loaded: usize,
    /// Where the run's new messages begin: after the loaded ones, and after the system prompt a
    /// run puts before a stored history that has none (which is not stored).
    new_from: usize,
}

impl Place {
    pub(crate) fn of(messages: &[Message]) -> Self {
        let prompt_added =
            matches!(messages.first(), Some(first) if !matches!(first, Message::System { .. }));
        Place {
            loaded: messages.len(),
            new_from: messages.len() + usize::from(prompt_added),
        }
    }
}

/// Appends what a run added to the conversation. A paused run's new messages end at its reply:
/// the results come, in call order, when it resumes. A run that failed after it began appends its
/// transcript too (every call in it is answered): what its tools did is not done again by the
/// next run, and a paused run whose decisions were carried out is no longer paused.
pub(crate) async fn save(
    store: &dyn SessionStore,
    conversation: &str,
    place: Place,
    outcome: Result<RunOutput, RunError>,
) -> Result<RunOutput, RunError> {
    let (written, paused) = match &outcome {
        Ok(output) => match &output.paused {
            Some(paused) if output.stop_reason == StopReason::Paused => {
                (paused.messages(), Some(paused))
            }
            _ => (&output.messages[..], None),
        },
        // Refused before anything ran: nothing to keep, and a paused run stays paused.
        Err(RunError::Resume { .. } | RunError::Session { .. }) => return outcome,
        Err(error) => (error.messages(), None),
    };
    let new = written.get(place.new_from..).unwrap_or_default();
    let saved = store.append(conversation, place.loaded, new, paused).await;
    match (outcome, saved) {
        (outcome, Ok(())) => outcome,
        (Ok(output), Err(source)) => Err(session_error(source, output.messages, output.usage)),
        // The run's own failure says more than the store's.
        (Err(error), Err(_)) => Err(error),
    }
}
