//! The session seam: where a run's conversation is kept between runs, by conversation id. A run
//! given a [`session`](super::RunRequest::session) holds its conversation, loads it, runs on it and
//! appends what it added; the stores themselves (memory, SQLite) are in `session/`.

use std::sync::Arc;
use std::time::SystemTime;

use super::context::{RunSummaries, Summary};
pub use super::locks::{ConversationHold, ConversationLocks};
use super::outcome::{RunError, RunOutput, StopReason};
use super::pause::PausedRun;
use super::seams::{Transcript, Used};
use super::tree::{ChildRun, Family};
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
    /// keeps its summaries and adds its usage to the conversation's, all at once: after a crash
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

/// Where a run's new messages begin in its transcript, for a conversation as loaded.
#[derive(Debug, Clone, Copy)]
pub(super) struct Place {
    /// How many messages the conversation had.
    pub(super) loaded: usize,
    /// Where the run's new messages begin: after the loaded ones, after the system prompt a run
    /// puts before a stored history that has none, and after the results a repair put among
    /// them (neither is stored).
    pub(super) new_from: usize,
}

impl Place {
    /// The place of `messages` as loaded.
    pub(super) fn of(messages: &[Message]) -> Self {
        let prompt_added =
            matches!(messages.first(), Some(first) if !matches!(first, Message::System { .. }));
        Place {
            loaded: messages.len(),
            new_from: messages.len() + usize::from(prompt_added),
        }
    }
}

/// A session run's transcript: each part of it the run completes is appended to the
/// conversation in the store (a step's reply before its calls run, the step's results, a
/// pause), one transaction each, so a run that dies keeps every step it finished; whatever is
/// left when it ends is appended by [`close`](SessionTranscript::close).
pub(super) struct SessionTranscript<'a> {
    store: &'a dyn SessionStore,
    id: &'a str,
    place: Place,
    /// The run's messages up to here are stored.
    kept: usize,
    /// The summaries the run knows, of which it made the first `summaries_kept` stored.
    summaries: &'a RunSummaries,
    summaries_kept: usize,
    /// The run's model calls whose usage is stored (a resumed run's from before its pause
    /// included).
    steps_kept: usize,
    /// Where the runs the run's calls start end, of which the first `children_kept` are stored.
    family: Option<&'a Family>,
    children_kept: usize,
}

impl<'a> SessionTranscript<'a> {
    /// The transcript of conversation `id` in `store`, loaded at `place`; `summaries`: the run's;
    /// `steps`: the model calls the run had made when it began (a resumed run's, stored at its
    /// pause).
    pub(super) fn new(
        store: &'a dyn SessionStore,
        id: &'a str,
        place: Place,
        summaries: &'a RunSummaries,
        steps: usize,
        family: Option<&'a Family>,
    ) -> Self {
        SessionTranscript {
            store,
            id,
            place,
            kept: place.new_from,
            summaries,
            summaries_kept: 0,
            steps_kept: steps,
            family,
            children_kept: 0,
        }
    }

    /// The runs that ended since the last write, each with the store's position of the reply in
    /// `messages` (the run's) whose call started it; and how many ended.
    fn children_since(&self, messages: &[Message]) -> (Vec<KeptChild>, usize) {
        let Some(family) = self.family else {
            return (Vec::new(), 0);
        };
        let ended = family.ended_since(self.children_kept);
        let count = ended.len();
        let kept = (ended.into_iter())
            .filter_map(|run| {
                let at = messages.iter().position(|message| match message {
                    Message::Assistant(reply) => {
                        (reply.tool_calls.iter()).any(|call| call.id == run.call_id)
                    }
                    _ => false,
                })?;
                // The run's position in the store's (the system prompt a run put in front of a
                // stored conversation is not stored).
                let at = (at + self.place.loaded).checked_sub(self.place.new_from)?;
                Some(KeptChild { at, run })
            })
            .collect();
        (kept, count)
    }

    /// Appends `messages` from where the store's copy ends, sets the paused run, and keeps the
    /// summaries made and the usage since the last write.
    async fn append(
        &mut self,
        messages: &[Message],
        paused: Option<&PausedRun>,
        used: Used<'_>,
    ) -> Result<(), SessionError> {
        let new = messages.get(self.kept..).unwrap_or_default();
        let expected = self.place.loaded + (self.kept - self.place.new_from);
        let summaries = self.summaries.made_since(self.summaries_kept);
        let mut usage = used.by_model(self.steps_kept);
        for summary in &summaries {
            usage.add(summary.model.as_deref(), summary.usage);
        }
        let (children, ended) = self.children_since(messages);
        let added = Append::messages(new)
            .paused(paused)
            .summaries(&summaries)
            .usage(usage)
            .children(&children);
        self.store.append(self.id, expected, added).await?;
        self.kept = self.kept.max(messages.len());
        self.children_kept += ended;
        self.summaries_kept += summaries.len();
        self.steps_kept = used.steps.len();
        Ok(())
    }

    /// Appends what the run added and no step kept yet. A paused run was kept when it paused.
    /// A run that failed after the model answered or a call ran appends its transcript too (every
    /// call in it is answered): what its tools did is not done again by the next run, and a
    /// paused run whose decisions were carried out is no longer paused. A request refused as it
    /// is, before either, appends nothing.
    pub(super) async fn close(
        mut self,
        outcome: Result<RunOutput, RunError>,
    ) -> Result<RunOutput, RunError> {
        let messages = match &outcome {
            Ok(output) if output.stop_reason == StopReason::Paused => return outcome,
            Ok(output) => &output.messages[..],
            // Refused before anything ran, or the store already failed: nothing to keep.
            Err(RunError::Resume { .. } | RunError::Session { .. }) => return outcome,
            // The request refused as it is (a part the provider cannot take, a body it finds
            // invalid, by every model of a fallback chain) before the model answered anything or
            // a call ran: the conversation stays
            // as it was, or every later run would send the same input and be refused again. (A
            // provider that is down keeps the question: the next run goes on from it.)
            Err(RunError::Model {
                source, messages, ..
            }) if source.is_refusal()
                && !messages
                    .get(self.place.new_from..)
                    .is_some_and(anything_done) =>
            {
                return outcome;
            }
            Err(error) => error.messages(),
        };
        if messages.len() <= self.kept {
            return outcome;
        }
        let used = match &outcome {
            Ok(output) => Used::new(&output.step_usage, &output.step_models),
            // Every model call that answered was kept with its reply.
            Err(_) => Used::default(),
        };
        let saved = self.append(messages, None, used).await;
        match (outcome, saved) {
            (outcome, Ok(())) => outcome,
            (Ok(output), Err(source)) => Err(session_error(source, output.messages, output.usage)),
            // The run's own failure says more than the store's.
            (Err(error), Err(_)) => Err(error),
        }
    }
}

impl Transcript for SessionTranscript<'_> {
    fn keep<'a>(
        &'a mut self,
        messages: &'a [Message],
        paused: Option<&'a PausedRun>,
        used: Used<'a>,
    ) -> BoxFuture<'a, Result<(), SessionError>> {
        Box::pin(self.append(messages, paused, used))
    }
}

/// Whether a run's new messages hold anything that happened: a reply of the model or a call's
/// result (its input alone is not).
fn anything_done(new: &[Message]) -> bool {
    new.iter()
        .any(|message| matches!(message, Message::Assistant(_) | Message::Tool(_)))
}
