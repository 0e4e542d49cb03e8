//! A paused run going on: each decision on a waiting call is a ruling (approve: run it, with
//! edited arguments if given; deny: answer it as not run; an external result: answer it with
//! that result), carried out as a step's calls are; then every call of the reply that paused is
//! answered in the transcript, in the order the model made them.

use std::future::Future;
use std::pin::Pin;

use super::Run;
use super::calls::Slot;
use super::policy::Ruling;
use crate::content::Part;
use crate::message::{Message, ToolCall, ToolResultMessage};
use crate::run::events::LiveEvent;
use crate::run::outcome::StopReason;
use crate::run::pause::{Decision, PausedRun, PendingCall};
use crate::texts::NotRun;
use crate::tool::ToolOutput;
use crate::tool_error::ToolError;

/// A paused run and one decision per waiting call, checked against each other.
pub(crate) struct Resumption {
    pub(crate) paused: PausedRun,
    pub(crate) decisions: Vec<(PendingCall, Decision)>,
}

impl<S: Send + Sync + 'static> Run<'_, S> {
    /// Carries out the decisions on a paused run's waiting calls, then puts every result of the
    /// reply, in call order, into the transcript. A cancellation or the time limit while the
    /// approved calls run ends the run (the stop reason), every call answered; so does a reply
    /// that asked for more calls than the tool-call limit allows.
    pub(super) async fn resume<C: Future<Output = ()> + Send>(
        &mut self,
        resumption: Box<Resumption>,
        cancel: &mut Pin<&mut C>,
    ) -> Option<StopReason> {
        let Resumption { paused, decisions } = *resumption;
        let (calls, mut slots): (Vec<ToolCall>, Vec<Slot>) = decisions
            .into_iter()
            .map(|(pending, decision)| {
                let ruling = self.decided(decision);
                (pending.call, Slot::Open(Some(Box::new(ruling))))
            })
            .unzip();
        let interrupted = self.carry_out(&calls, &mut slots, cancel).await;
        let mut decided: Vec<ToolResultMessage> = slots
            .into_iter()
            .zip(&calls)
            .map(|(slot, call)| self.result(slot, call, NotRun::RunEnded))
            .collect();
        for result in &decided {
            self.emit(|| LiveEvent::ToolResult(result.clone()));
        }
        // Every call of the reply, answered in the order the model made them.
        let state = *paused.0;
        let mut finished = state.finished;
        finished.append(&mut decided);
        if let Some(Message::Assistant(reply)) = state.messages.last() {
            let place = |result: &ToolResultMessage| {
                let mut calls = reply.tool_calls.iter();
                calls
                    .position(|call| call.id == result.tool_call_id)
                    .unwrap_or(usize::MAX)
            };
            finished.sort_by_key(place);
        }
        self.messages = state.messages;
        self.messages
            .extend(finished.into_iter().map(Message::Tool));
        if let Some(interrupt) = interrupted {
            return Some(self.interrupted(interrupt));
        }
        // The step that paused asked for more calls than allowed: it ends the run, as it would have.
        let limit = self.agent.limits.max_tool_calls?;
        state
            .over_tool_call_limit
            .then_some(StopReason::ToolCallLimit { limit })
    }

    /// The ruling a person's or the caller's decision makes.
    fn decided(&self, decision: Decision) -> Ruling {
        match decision {
            Decision::Approve => Ruling::Run,
            Decision::ApproveWith { arguments } => Ruling::RunWith(arguments),
            Decision::Deny { reason } => self.refuse(NotRun::Denied(reason.as_deref())),
            Decision::Result {
                content,
                parts,
                is_error,
            } => Ruling::Answer(external_outcome(content, parts, is_error)),
        }
    }
}

/// What became of an external call, as the caller answered it: its text and parts, or its
/// error (which has no parts: [`PendingCall::check`] refuses an error with parts).
fn external_outcome(
    content: String,
    parts: Vec<Part>,
    is_error: bool,
) -> Result<ToolOutput, ToolError> {
    if is_error {
        return Err(ToolError::failed(content));
    }
    if parts.is_empty() {
        return Ok(ToolOutput::Text(content));
    }
    let text = Part::Text { text: content };
    Ok(ToolOutput::Parts(
        std::iter::once(text).chain(parts).collect(),
    ))
}
