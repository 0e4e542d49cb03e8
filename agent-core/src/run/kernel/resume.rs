//! A paused run going on: each decision on a waiting call is a ruling (approve: run it, with
//! edited arguments if given; deny: answer it as not run; an external result: answer it with
//! that result), carried out as a step's calls are; then every call of the reply that paused is
//! answered in the transcript, in the order the model made them.

use super::calls::Slot;
use super::{Ending, Run};
use crate::content::Part;
use crate::message::{Message, ToolResultMessage};
use crate::reasons::not_run::NotRun;
use crate::reasons::tool_error::ToolError;
use crate::run::events::LiveEvent;
use crate::run::outcome::StopReason;
use crate::run::pause::{Decision, PausedRun, PendingCall};
use crate::run::seams::Ruling;
use crate::tool::ToolOutput;

/// A paused run and one decision per waiting call, checked against each other.
pub(crate) struct Resumption {
    pub(crate) paused: PausedRun,
    pub(crate) decisions: Vec<(PendingCall, Decision)>,
}

impl<S: Send + Sync + 'static> Run<'_, S> {
    /// Carries out the decisions on a paused run's waiting calls, then puts every result of the
    /// reply, in call order, into the transcript, and keeps it. The run ends here (`Some`) when
    /// it was interrupted while the approved calls ran, or when the reply asked for more calls
    /// than the tool-call limit allows; every call is answered either way.
    pub(super) async fn resume(&mut self, resumption: Resumption) -> Option<Ending> {
        let Resumption { paused, decisions } = resumption;
        let state = *paused.0;
        let (calls, mut slots): (Vec<_>, Vec<_>) = decisions
            .into_iter()
            .map(|(pending, decision)| {
                let ruling = match decision {
                    Decision::Approve => Ruling::Run,
                    Decision::ApproveWith { arguments } => Ruling::RunWith(arguments),
                    Decision::Deny { reason } => Ruling::not_run(NotRun::Denied(reason)),
                    Decision::Result {
                        content,
                        parts,
                        is_error,
                    } => Ruling::Answer(external_outcome(content, parts, is_error)),
                };
                (pending.call, Slot::Open(Some(ruling)))
            })
            .unzip();
        self.messages = state.messages;
        let step = self.tally.step_usage.len();
        let interrupted = self.run_calls(step, &calls, &mut slots).await;
        let why = interrupted.map_or(NotRun::RunEnded, |interrupt| interrupt.not_run());
        let decided: Vec<ToolResultMessage> = (slots.into_iter())
            .zip(&calls)
            .map(|(slot, call)| self.result(slot, call, interrupted, why.clone()))
            .collect();
        for result in &decided {
            self.emit(|| LiveEvent::ToolResult(result.clone()));
        }
        // Every call of the reply, answered in the order the model made them.
        let mut finished = state.finished;
        finished.extend(decided);
        if let Some(Message::Assistant(reply)) = self.messages.last() {
            let place = |result: &ToolResultMessage| {
                let mut calls = reply.tool_calls.iter();
                (calls.position(|call| call.id == result.tool_call_id)).unwrap_or(usize::MAX)
            };
            finished.sort_by_key(place);
        }
        self.messages
            .extend(finished.into_iter().map(Message::Tool));
        if let Err(ending) = self.keep(None).await {
            return Some(ending);
        }
        if let Some(interrupt) = interrupted {
            return Some(Ending::Stopped(interrupt.stop_reason(), None));
        }
        // The step that paused asked for more calls than allowed: it ends the run, as it would have.
        let limit = self.agent.limits.max_tool_calls?;
        (state.over_tool_call_limit)
            .then_some(Ending::Stopped(StopReason::ToolCallLimit { limit }, None))
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
