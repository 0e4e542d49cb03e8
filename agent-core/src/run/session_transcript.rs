//! A session run's transcript: the value at the transcript seam for a run in a session. Each
//! part of the transcript the run completes is appended to the conversation in the store, one
//! transaction each, with the summaries made, the usage and the child runs that ended since.

use super::context::{LastSent, RunSummaries};
use super::outcome::{RunError, RunOutput, StopReason};
use super::pause::PausedRun;
use super::seams::{Transcript, Used};
use super::store::{Append, KeptChild, SessionError, SessionStore, session_error};
use super::tree::Family;
use crate::message::Message;
use crate::tool::BoxFuture;

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
    /// What the run's last model request sent, stored with each write.
    sent: &'a LastSent,
    /// The run's model calls whose usage is stored (a resumed run's from before its pause
    /// included).
    steps_kept: usize,
    /// Where the runs the run's calls start end, of which the first `children_kept` are stored.
    family: Option<&'a Family>,
    children_kept: usize,
}

impl<'a> SessionTranscript<'a> {
    /// The transcript of conversation `id` in `store`, loaded at `place`; `summaries` and `sent`:
    /// the run's;
    /// `steps`: the model calls the run had made when it began (a resumed run's, stored at its
    /// pause).
    pub(super) fn new(
        store: &'a dyn SessionStore,
        id: &'a str,
        place: Place,
        summaries: &'a RunSummaries,
        sent: &'a LastSent,
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
            sent,
            steps_kept: steps,
            family,
            // Those that ended before (a resumed run's, before its pause) are stored.
            children_kept: family.map_or(0, Family::ended),
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
    /// summaries made and the usage since the last write, and what the last request sent.
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
            .children(&children)
            .last_request(self.sent.to_store());
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
