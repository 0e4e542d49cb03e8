//! A paused run going on: each decision on a waiting call is a ruling (approve: run it, with
//! edited arguments if given; deny: answer it as not run; an external result: answer it with
//! that result), carried out as a step's calls are; then every call of the reply that paused is
//! answered in the transcript, in the order the model made them.

use super::calls::Slot;
use super::{Ending, Run};
use crate::content::Part;
use crate::message::{Message, ToolCall};
use crate::reasons::not_run::NotRun;
use crate::reasons::tool_error::ToolError;
use crate::run::events::LiveEvent;
use crate::run::outcome::StopReason;
use crate::run::pause::{ChildResume, Decision, PausedRun, PendingCall};
use crate::run::seams::Ruling;
use crate::tool::ToolOutput;

/// A paused run and one decision per waiting call, checked against each other.
pub(crate) struct Resumption {
    pub(crate) paused: PausedRun,
    /// The decisions on the run's own waiting calls.
    pub(crate) decisions: Vec<(PendingCall, Decision)>,
    /// Its paused children, each with the decisions on its waiting calls (handed to the run's
    /// family as it starts).
    pub(crate) children: Vec<ChildResume>,
    /// The calls to run again: those whose children go on.
    pub(crate) rerun: Vec<ToolCall>,
}

impl<S: Send + Sync + 'static> Run<'_, S> {
    /// Carries out the decisions on a paused run's waiting calls (and goes on with its paused
    /// children, whose calls run again), then puts every result of the reply, in call order, into
    /// the transcript, and keeps it. The run ends here (`Some`) when it was interrupted while the
    /// calls ran, when the reply asked for more calls than the tool-call limit allows, or when a
    /// child paused again (the run pauses again with it); every call is answered either way.
    pub(super) async fn resume(&mut self, resumption: Resumption) -> Option<Ending> {
        let Resumption {
            paused,
            decisions,
            rerun,
            ..
        } = resumption;
        let state = *paused.0;
        self.messages = state.messages;
        let at = self.messages.len() - 1;
        // Every call of the reply, in order: answered before the pause, decided now, or run
        // again for a child that goes on.
        let mut decided: Vec<(String, Ruling)> = (decisions.into_iter())
            .map(|(pending, decision)| (pending.call.id, ruling(decision)))
            .collect();
        decided.extend(rerun.into_iter().map(|call| (call.id, Ruling::Run)));
        let mut finished = state.finished;
        let mut slots: Vec<Slot> = (self.calls_at(at).iter())
            .map(|call| {
                let answered = finished
                    .iter()
                    .position(|result| result.tool_call_id == call.id);
                if let Some(index) = answered {
                    return Slot::Answered(finished.swap_remove(index));
                }
                let ruling = decided.iter().position(|(id, _)| *id == call.id);
                let ruling = ruling.map(|index| decided.swap_remove(index).1);
                // A call with neither cannot be: the paused run was checked as it loaded.
                Slot::Open(Some(ruling.unwrap_or(Ruling::not_run(NotRun::RunEnded))))
            })
            .collect();
        // Results from before the pause were streamed then.
        let streamed: Vec<bool> = (slots.iter())
            .map(|slot| matches!(slot, Slot::Answered(_)))
            .collect();
        let step = self.tally.step_usage.len();
        let interrupted = self.run_calls(step, self.calls_at(at), &mut slots).await;
        let waits = interrupted.is_none() && slots.iter().any(Slot::waits);
        if waits {
            return Some(self.pause(at, slots, &None).await);
        }
        let why = interrupted.map_or(NotRun::RunEnded, |interrupt| interrupt.not_run());
        for (index, slot) in slots.into_iter().enumerate() {
            let result = self.result(slot, &self.calls_at(at)[index], interrupted, why.clone());
            if !streamed[index] {
                self.emit(|| LiveEvent::ToolResult(result.clone()));
            }
            self.messages.push(Message::Tool(result));
        }
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

/// The ruling a person's decision on a waiting call makes: approve runs it (with edited
/// arguments if given), deny answers it as not run, an external result answers it with that
/// result.
fn ruling(decision: Decision) -> Ruling {
    match decision {
        Decision::Approve => Ruling::Run,
        Decision::ApproveWith { arguments } => Ruling::RunWith(arguments),
        Decision::Deny { reason } => Ruling::not_run(NotRun::Denied(reason)),
        Decision::Result {
            content,
            parts,
            is_error,
        } => Ruling::Answer(external_outcome(content, parts, is_error)),
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
