//! The run's limits as a call policy: its token budgets before each model call, and its limit
//! of tool calls on each reply. (The step limit is the loop's shape, and the time limit the
//! run's interruption: they cut what is in flight.)

use crate::limits::Limits;
use crate::message::AssistantMessage;
use crate::reasons::not_run::NotRun;
use crate::run::outcome::{StopReason, TokenKind};
use crate::run::seams::{CallPolicy, ReplyRulings, Ruling, RunStatus};

impl<S> CallPolicy<S> for Limits {
    /// Stops the run before a model call once its input or output tokens are spent.
    fn before_step(&self, status: &RunStatus<'_>) -> Option<StopReason> {
        let used = status.usage;
        let spent = |limit: Option<u64>, used: u64| limit.filter(|&limit| used >= limit);
        if let Some(limit) = spent(self.max_input_tokens, used.input_tokens) {
            let (kind, used) = (TokenKind::Input, used.input_tokens);
            return Some(StopReason::TokenLimit { kind, limit, used });
        }
        let limit = spent(self.max_output_tokens, used.output_tokens)?;
        let (kind, used) = (TokenKind::Output, used.output_tokens);
        Some(StopReason::TokenLimit { kind, limit, used })
    }

    /// The calls past the tool-call limit (counting only calls still to be ruled on, which
    /// could run) are not run, and the run ends after the step.
    fn on_reply(
        &self,
        status: &RunStatus<'_>,
        _reply: &AssistantMessage,
        _cut_off: bool,
        rulings: &mut ReplyRulings<'_>,
    ) {
        let Some(limit) = self.max_tool_calls else {
            return;
        };
        let allowed = limit.saturating_sub(status.tool_calls);
        let over: Vec<usize> = rulings.open().skip(allowed).collect();
        if over.is_empty() {
            return;
        }
        for index in over {
            rulings.rule(index, Ruling::not_run(NotRun::ToolCallLimit(limit)));
        }
        rulings.stop_after(StopReason::ToolCallLimit { limit });
    }
}
