//! The call-policy seam: one ruling per call the model made. What the whole reply decides comes
//! first (`rule`: the answer check's say over final-answer calls, a call cut off at the token
//! limit, the tool-call limit); each call left open is then ruled on when it starts (`decide`:
//! the hooks, external tools, the approver, whether the run can wait).

use super::answer::Verdict;
use super::calls::Slot;
use super::{Ask, Run};
use crate::message::{AssistantMessage, ToolCall};
use crate::run::hooks::{Approval, ToolDecision};
use crate::run::pause::{PendingCall, Waiting};
use crate::texts::NotRun;
use crate::tool::{Tool, ToolOutput};
use crate::tool_error::ToolError;

/// What is to become of one call.
pub(super) enum Ruling {
    /// Run it as the model asked.
    Run,
    /// Run it with these arguments instead (a hook rewrote them, or a person edited them).
    RunWith(String),
    /// Answer it without running it: why it was not run, or what stands for its result (an
    /// external call's answer, a final answer acknowledged or corrected).
    Answer(Result<ToolOutput, ToolError>),
    /// Wait for a person or the caller: the run pauses.
    Wait(PendingCall),
}

/// What the reply decides of its calls before any runs (their rulings go into their slots).
pub(super) struct Rulings {
    /// How many count against the tool-call limit (at most what it allows).
    pub(super) counted: usize,
    /// Whether more were asked for than it allows.
    pub(super) over_limit: bool,
}

impl<S: Send + Sync + 'static> Run<'_, S> {
    /// Rules on what the whole reply decides: a typed run's final-answer calls (acknowledged or
    /// corrected, as `verdict` says) and the calls an answer makes moot, the call cut off at the
    /// output token limit, and the calls past the tool-call limit (which counts only calls that
    /// could run). Each call gets a slot in `slots`, in call order: its ruling, or none to rule
    /// on it when it starts.
    pub(super) fn rule(
        &self,
        reply: &AssistantMessage,
        cut_off: bool,
        verdict: &Verdict,
        ask: Ask,
        slots: &mut Vec<Slot>,
    ) -> Rulings {
        let calls = &reply.tool_calls;
        let cut_off = cut_off_call(reply, cut_off);
        let limit = self.agent.limits.max_tool_calls;
        let allowed = limit.map_or(usize::MAX, |limit| limit.saturating_sub(self.tool_calls));
        // Nothing more runs once the answer is taken, or when this was its last try.
        let answer_ends = match verdict {
            Verdict::Taken { .. } => Some(NotRun::AnswerGiven),
            Verdict::Rejected if self.output_retries_spent() => Some(NotRun::RunEnded),
            _ if ask == Ask::FinalAnswer => Some(NotRun::RunEnded),
            _ => None,
        };
        slots.clear();
        if answer_ends.is_none()
            && cut_off.is_none()
            && self.output.is_none()
            && calls.len() <= allowed
        {
            // Nothing the reply decides: every call is ruled on when it starts.
            slots.resize_with(calls.len(), || Slot::Open(None));
            return Rulings {
                counted: calls.len(),
                over_limit: false,
            };
        }
        let mut acknowledged = false;
        let mut counted = 0;
        let mut over_limit = false;
        slots.extend(calls.iter().enumerate().map(|(index, call)| {
            if self.is_output_call(call) {
                return Slot::Open(Some(Box::new(
                    self.answer_ruling(verdict, &mut acknowledged),
                )));
            }
            let why = if let Some(why) = answer_ends {
                why
            } else if cut_off == Some(index) {
                NotRun::CutOff
            } else if counted < allowed {
                counted += 1;
                return Slot::Open(None);
            } else {
                over_limit = true;
                NotRun::ToolCallLimit(limit.unwrap_or_default())
            };
            Slot::Open(Some(Box::new(self.refuse(why))))
        }));
        Rulings {
            counted,
            over_limit,
        }
    }

    /// Whether a call of `tool` (the one of its name, if any) has anyone to consult when it
    /// starts: a hook, or, for a tool that waits for the caller or needs approval, the approver.
    /// A call with no one to consult runs as the model asked.
    #[inline]
    pub(super) fn consults_on(&self, tool: Option<&dyn Tool<S>>) -> bool {
        !self.agent.hooks.is_empty()
            || tool.is_some_and(|tool| {
                let annotations = &tool.definition().annotations;
                annotations.external || annotations.requires_approval
            })
    }

    /// Rules on a call of `tool` (the one of its name, if any) when it starts, where the reply
    /// did not: the hooks in turn (run, run with other arguments, skip, stop the run), then an
    /// external tool's call waits for the caller, and one that needs approval goes to the
    /// approver (approved, denied, or left to a person: it waits).
    pub(super) async fn decide(&self, call: &ToolCall, tool: Option<&dyn Tool<S>>) -> Ruling {
        let definition = tool.map(|tool| tool.definition());
        // Boxed: few hooks rewrite a call, and every call's future would carry room for one.
        let mut rewritten: Option<Box<ToolCall>> = None;
        for hook in &self.agent.hooks {
            let current = rewritten.as_deref().unwrap_or(call);
            let decided = hook
                .before_tool_call(self.context, current, definition)
                .await;
            match decided {
                ToolDecision::Run => {}
                ToolDecision::RunWith { arguments } => {
                    rewritten = Some(Box::new(ToolCall {
                        arguments,
                        ..current.clone()
                    }));
                }
                ToolDecision::Skip { reason } => return self.refuse(NotRun::Skipped(&reason)),
                ToolDecision::Stop { reason } => {
                    let refused = self.refuse(NotRun::Skipped(&reason));
                    // The first stop asked for is the one reported.
                    let _ = self.stop_request.set(reason);
                    return refused;
                }
            }
        }
        let annotations = definition.map(|definition| &definition.annotations);
        if annotations.is_some_and(|annotations| annotations.external) {
            return self.wait(
                rewritten.map_or_else(|| call.clone(), |call| *call),
                Waiting::Result,
            );
        }
        if let Some(definition) = definition.filter(|def| def.annotations.requires_approval) {
            let Some(approver) = &self.agent.approver else {
                return self.refuse(NotRun::NoApprover);
            };
            let current = rewritten.as_deref().unwrap_or(call);
            match approver.approve(self.context, current, definition).await {
                Approval::Approve => {}
                Approval::Deny { reason } => {
                    return self.refuse(NotRun::Denied(reason.as_deref()));
                }
                Approval::Defer => {
                    let call = rewritten.map_or_else(|| call.clone(), |call| *call);
                    return self.wait(call, Waiting::Approval);
                }
            }
        }
        match rewritten {
            Some(rewritten) => Ruling::RunWith(rewritten.arguments),
            None => Ruling::Run,
        }
    }

    /// A call that waits, or, in a run that cannot pause (a typed run), why it is not run.
    fn wait(&self, call: ToolCall, waits_for: Waiting) -> Ruling {
        if self.output.is_some() {
            return self.refuse(NotRun::CannotWait);
        }
        Ruling::Wait(PendingCall { call, waits_for })
    }

    /// A call answered without running, saying why in the run's words.
    pub(super) fn refuse(&self, why: NotRun<'_>) -> Ruling {
        Ruling::Answer(Err(self.agent.tools.refusal(why)))
    }
}

/// The place of the call a reply was cut off in: at the output token limit (the finish reason
/// [`Length`](crate::FinishReason::Length)), its last call, when that call's arguments are not
/// whole JSON. Such a call is answered with [`NotRun::CutOff`] rather than run, or parsed as if
/// the model had written bad arguments. An empty argument text means `{}`, here as everywhere:
/// that call runs.
#[inline]
fn cut_off_call(reply: &AssistantMessage, at_token_limit: bool) -> Option<usize> {
    if !at_token_limit {
        return None;
    }
    let last = reply.tool_calls.len().checked_sub(1)?;
    let arguments = reply.tool_calls[last].arguments.trim();
    let unfinished =
        !arguments.is_empty() && serde_json::from_str::<serde::de::IgnoredAny>(arguments).is_err();
    unfinished.then_some(last)
}
