//! What an answer stopped in the middle of a reply had said: a client's stop, or a client gone
//! for the rejoin window, cancels the run while the model is still writing, and the run keeps
//! only whole replies. The text the person already read is kept in the chat as the answer's last
//! message, so a reload shows what the stream showed, and the model sees it next turn.

use agent_core::session::{Append, SessionStore};
use agent_core::{AssistantMessage, Message, RunError, RunEvent, RunOutput, StopReason};

/// The text of the reply under way, read from the run's events.
#[derive(Debug, Default)]
pub(crate) struct ReplySoFar {
    text: String,
}

/// A reply cut off: its text, and the message the run's conversation ended with before it.
pub(crate) struct CutOff {
    text: String,
    after: Option<Message>,
}

impl ReplySoFar {
    /// Follows `event`: a step's start begins a new reply, the model's text adds to it.
    pub(crate) fn see<O>(&mut self, event: &RunEvent<O>) {
        match event {
            RunEvent::StepStarted { .. } => self.text.clear(),
            RunEvent::TextDelta(text) => self.text.push_str(text),
            _ => {}
        }
    }

    /// The reply the run was cancelled in the middle of, if `result` says it was and the run did
    /// not keep it (a reply whose calls were running when it stopped is kept whole by the run).
    pub(crate) fn cut_off(&self, result: &Result<RunOutput, RunError>) -> Option<CutOff> {
        let output = result.as_ref().ok()?;
        if output.stop_reason != StopReason::Cancelled || self.text.trim().is_empty() {
            return None;
        }
        // The messages since the question: the reply is there when it was complete.
        let kept = (output.messages.iter().rev())
            .take_while(|message| !matches!(message, Message::User { .. }))
            .any(|message| matches!(message, Message::Assistant(reply) if reply.content == self.text));
        (!kept).then(|| CutOff {
            text: self.text.clone(),
            after: output.messages.last().cloned(),
        })
    }
}

impl CutOff {
    /// Appends the reply's text to the chat kept under `key` in `store`, right after the message
    /// the run ended with: when another turn got in first (or a run waits), it is left out rather
    /// than put in the wrong place.
    pub(crate) async fn keep(self, store: &dyn SessionStore, key: &str) {
        let _hold = store.hold(key).await;
        let conversation = match store.load(key).await {
            Ok(conversation) => conversation,
            Err(problem) => {
                tracing::warn!(%problem, "a stopped reply could not be kept");
                return;
            }
        };
        if conversation.paused.is_some() || conversation.messages.last() != self.after.as_ref() {
            return;
        }
        let reply = [Message::Assistant(AssistantMessage::text(self.text))];
        let len = conversation.messages.len();
        if let Err(problem) = store.append(key, len, Append::messages(&reply)).await {
            tracing::warn!(%problem, "a stopped reply could not be kept");
        }
    }
}
