//! The session seam: where a run's conversation is kept between runs, by conversation id. A run
//! given a [`session`](super::RunRequest::session) holds its conversation, loads it, runs on it and
//! appends what it added; the stores themselves (memory, SQLite) are in `session/`.

use std::sync::Arc;
use std::time::SystemTime;

use super::context::Summary;
pub use super::locks::{ConversationHold, ConversationLocks};
use super::outcome::ChildRun;
use super::outcome::RunError;
use super::pause::PausedRun;
use crate::message::Message;
use crate::prices::PriceTable;
use crate::tool::BoxFuture;
use crate::usage::{Usage, UsageByModel};
use serde::{Deserialize, Serialize};

/// A conversation as stored: its messages, the paused run waiting in it (if any), the summaries
/// that stand for parts of it in requests, and what its runs used.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Conversation {
    /// Every message so far, whole (summaries do not replace any). A paused run's reply is here;
    /// its results come when it resumes.
    pub messages: Vec<Message>,
    /// The run waiting for decisions, if one is.
    pub paused: Option<PausedRun>,
    /// The summaries a context policy made of parts of it, oldest first, each saying which
    /// messages it stands for ([`Summary::covers`]): runs send the latest in their place.
    pub summaries: Vec<Summary>,
    /// What its runs used, by model: every model call's tokens and every summary's.
    pub usage: UsageByModel,
    /// The runs its calls started (agents called as tools), each whole, in the order they
    /// ended, with where the reply that started each is.
    pub children: Vec<KeptChild>,
    /// What its last model request sent, as far as the next run needs it: where the context
    /// policy cut the history, and what a prompt cache holds of it (`None`: no request yet, or
    /// one made before stores kept it).
    pub last_request: Option<LastRequest>,
}

/// What the last model request of a conversation sent, kept with it so that the next run's
/// requests go on from it: its context policy keeps the same cut while it fits (the prefix a
/// provider's prompt cache reuses stays the same), and a request that does not begin with it
/// whole is counted as a cache bust ([`Usage::cache_busts`]), across runs and processes as within
/// a run.
///
/// Positions are the stored conversation's (a system prompt a run puts in front is not one).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LastRequest {
    /// The first message its history kept (0: from the start); those before it, system messages
    /// aside, were left out or stood for by a summary.
    pub kept_from: usize,
    /// The end of the messages whose tool results it sent as a short note (`kept_from`: none).
    pub shortened_to: usize,
    /// How many messages it sent, as sent (after the policy's shape)...
    pub sent: usize,
    /// ...and a hash of its tool definitions and those messages. It is Rust's default hasher
    /// with fixed keys: a build with another Rust may hash differently, which counts one bust.
    pub hash: u64,
}

impl LastRequest {
    /// A request that kept its history from `kept_from`, its results up to `shortened_to` sent
    /// as a note, that sent `sent` messages hashing (with its tools) to `hash`.
    pub fn new(kept_from: usize, shortened_to: usize, sent: usize, hash: u64) -> Self {
        LastRequest {
            kept_from,
            shortened_to,
            sent,
            hash,
        }
    }
}

/// A run a conversation's call started (an agent called as a tool), kept with the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct KeptChild {
    /// The position of the reply whose call started it, in the conversation's messages.
    pub at: usize,
    /// The run.
    pub run: ChildRun,
}

impl KeptChild {
    /// `run`, started by a call of the reply at position `at`.
    pub fn new(at: usize, run: ChildRun) -> Self {
        KeptChild { at, run }
    }
}

impl Conversation {
    /// A conversation of `messages`, with no paused run, summary or usage.
    pub fn new(messages: Vec<Message>) -> Self {
        Conversation {
            messages,
            ..Conversation::default()
        }
    }

    /// The same, with `paused` waiting in it.
    pub fn with_paused(mut self, paused: Option<PausedRun>) -> Self {
        self.paused = paused;
        self
    }

    /// The same, with `summaries` of parts of it.
    pub fn with_summaries(mut self, summaries: Vec<Summary>) -> Self {
        self.summaries = summaries;
        self
    }

    /// The same, having used `usage`.
    pub fn with_usage(mut self, usage: UsageByModel) -> Self {
        self.usage = usage;
        self
    }

    /// The same, with `children`, the runs its calls started.
    pub fn with_children(mut self, children: Vec<KeptChild>) -> Self {
        self.children = children;
        self
    }

    /// The same, its last request `last`.
    pub fn with_last_request(mut self, last: Option<LastRequest>) -> Self {
        self.last_request = last;
        self
    }

    /// What its runs cost at `prices`; `None` when a model they asked has no price there.
    pub fn cost(&self, prices: &PriceTable) -> Option<f64> {
        prices.cost_by_model(&self.usage)
    }
}

/// What one write adds to a conversation ([`SessionStore::append`]): its new messages, the paused
/// run that now waits in it (`None` clears it), the summaries made since the last write, and what
/// was used since (added to the conversation's usage).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Append<'a> {
    /// The messages to add after the conversation's.
    pub messages: &'a [Message],
    /// The run that waits in the conversation now; `None` clears it.
    pub paused: Option<&'a PausedRun>,
    /// Summaries to keep with it, in its positions.
    pub summaries: &'a [Summary],
    /// What was used since the last write, by model.
    pub usage: UsageByModel,
    /// The runs of its calls that ended since the last write (agents called as tools).
    pub children: &'a [KeptChild],
    /// What its last model request sent, when a request was made since the last write (`None`
    /// keeps what is stored).
    pub last_request: Option<LastRequest>,
}

impl<'a> Append<'a> {
    /// `messages` to add, nothing else.
    pub fn messages(messages: &'a [Message]) -> Self {
        Append {
            messages,
            ..Append::default()
        }
    }

    /// The same, `paused` waiting in the conversation.
    pub fn paused(mut self, paused: Option<&'a PausedRun>) -> Self {
        self.paused = paused;
        self
    }

    /// The same, with `summaries` to keep.
    pub fn summaries(mut self, summaries: &'a [Summary]) -> Self {
        self.summaries = summaries;
        self
    }

    /// The same, with `usage` used since the last write.
    pub fn usage(mut self, usage: UsageByModel) -> Self {
        self.usage = usage;
        self
    }

    /// The same, with `children` that ended since the last write.
    pub fn children(mut self, children: &'a [KeptChild]) -> Self {
        self.children = children;
        self
    }

    /// The same, its last request now `last` (`None` keeps what is stored).
    pub fn last_request(mut self, last: Option<LastRequest>) -> Self {
        self.last_request = last;
        self
    }
}

/// Why a conversation could not be loaded or saved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// The conversation changed since it was loaded (another process appended to it or cut it
    /// back): nothing was written.
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
    /// (`agent.resume_session(..)` with [`session`](crate::RunRequest::session)) before starting another.
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

    /// Appends `added`'s messages to conversation `id`, which must still have `expected_len`
    /// messages ([`SessionError::Conflict`] otherwise), sets its paused run (`None` clears it),
    /// keeps its summaries, sets its last request (when `added` has one) and adds its usage to
    /// the conversation's, all at once: after a crash
    /// either all of it is stored or none.
    fn append<'a>(
        &'a self,
        id: &'a str,
        expected_len: usize,
        added: Append<'a>,
    ) -> BoxFuture<'a, Result<(), SessionError>>;

    /// Cuts conversation `id` back to its first `keep` messages (to take back an answer and run
    /// again from the question, say), which must still have `expected_len` messages
    /// ([`SessionError::Conflict`] otherwise, and nothing is cut), all at once: after a crash
    /// either the whole cut is made or none. A paused run waits in the conversation's last
    /// message (its reply), so a cut clears it, and a summary of messages cut away goes with
    /// them (the usage stays: it was used); a `keep` of `expected_len` or more cuts nothing and
    /// changes nothing, as [`Vec::truncate`].
    fn truncate<'a>(
        &'a self,
        id: &'a str,
        expected_len: usize,
        keep: usize,
    ) -> BoxFuture<'a, Result<(), SessionError>>;

    /// The conversations whose ids start with `prefix` and hold messages, the most recently
    /// changed first (a chat list: a user's chats are those under their prefix).
    fn list<'a>(&'a self, prefix: &'a str) -> BoxFuture<'a, Result<Vec<Listed>, SessionError>>;

    /// Sets conversation `id`'s title (`None` takes it away). A conversation cut back to nothing
    /// loses its title with its messages; one that has no messages keeps none.
    fn set_title<'a>(
        &'a self,
        id: &'a str,
        title: Option<&'a str>,
    ) -> BoxFuture<'a, Result<(), SessionError>>;
}

/// A conversation as a list of them shows it: its id, its title if it has one, and when it last
/// changed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Listed {
    /// The conversation's id in the store.
    pub id: String,
    /// Its title, once one was set ([`SessionStore::set_title`]).
    pub title: Option<String>,
    /// When a message was last appended to it or it was last cut back.
    pub updated: SystemTime,
}

impl Listed {
    /// A listed conversation.
    pub fn new(id: impl Into<String>, title: Option<String>, updated: SystemTime) -> Self {
        Listed {
            id: id.into(),
            title,
            updated,
        }
    }
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
        added: Append<'a>,
    ) -> BoxFuture<'a, Result<(), SessionError>> {
        (**self).append(id, expected_len, added)
    }

    fn truncate<'a>(
        &'a self,
        id: &'a str,
        expected_len: usize,
        keep: usize,
    ) -> BoxFuture<'a, Result<(), SessionError>> {
        (**self).truncate(id, expected_len, keep)
    }

    fn list<'a>(&'a self, prefix: &'a str) -> BoxFuture<'a, Result<Vec<Listed>, SessionError>> {
        (**self).list(prefix)
    }

    fn set_title<'a>(
        &'a self,
        id: &'a str,
        title: Option<&'a str>,
    ) -> BoxFuture<'a, Result<(), SessionError>> {
        (**self).set_title(id, title)
    }
}

/// The run's error for a store's failure, with the conversation as far as it got.
pub(super) fn session_error(
    source: SessionError,
    messages: Vec<Message>,
    usage: Usage,
) -> RunError {
    RunError::Session {
        source,
        messages,
        usage,
    }
}
