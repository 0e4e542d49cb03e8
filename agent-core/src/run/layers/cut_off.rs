//! A call cut off at the output token limit, as a call policy: not run.

use crate::message::AssistantMessage;
use crate::reasons::not_run::NotRun;
use crate::run::seams::{CallPolicy, ReplyRulings, Ruling, RunStatus};

/// Answers the call a reply was cut off in, at the output token limit (the finish reason
/// [`Length`](crate::FinishReason::Length)), with [`NotRun::CutOff`]: its last call, when that
/// call's arguments are not whole JSON, rather than running it or telling the model it wrote bad
/// arguments. An empty argument text means `{}`, here as everywhere: that call runs.
#[derive(Debug, Clone, Copy, Default)]
pub struct CutOffCalls;

impl<S> CallPolicy<S> for CutOffCalls {
    fn on_reply(
        &self,
        _status: &RunStatus<'_>,
        reply: &AssistantMessage,
        cut_off: bool,
        rulings: &mut ReplyRulings<'_>,
    ) {
        let Some(last) = reply.tool_calls.len().checked_sub(1).filter(|_| cut_off) else {
            return;
        };
        let arguments = reply.tool_calls[last].arguments.trim();
        let unfinished = !arguments.is_empty()
            && serde_json::from_str::<serde::de::IgnoredAny>(arguments).is_err();
        if unfinished {
            rulings.rule(last, Ruling::not_run(NotRun::CutOff));
        }
    }
}
