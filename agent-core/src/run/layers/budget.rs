//! A run's part in the [`Budget`] its tree of agents shares, at two seams: as a call policy it
//! takes a request from the budget before each model call (the run ends when there is none) and
//! the tool calls of each reply (those past it are not run); as a model-call layer it counts what
//! each reply used, by the agent that made it.

use crate::budget::{Budget, BudgetItem};
use crate::message::AssistantMessage;
use crate::model::{ChatResponse, ModelError};
use crate::reasons::not_run::NotRun;
use crate::run::outcome::StopReason;
use crate::run::seams::{CallPolicy, ModelCall, ModelLayer, Next, ReplyRulings, Ruling, RunStatus};
use crate::tool::BoxFuture;
use crate::tool::scope::AgentPath;

/// One run's spending from its budget, as the agent at `agent`.
#[derive(Clone)]
pub(crate) struct Spending {
    pub(crate) budget: Budget,
    pub(crate) agent: AgentPath,
}

impl<S> CallPolicy<S> for Spending {
    /// Takes the step's request (last of the policies, so that a request is taken only when it
    /// is made), or ends the run with what ran out; or, for a budget that pauses, has the run
    /// wait for a person to raise it.
    fn before_step(&self, status: &RunStatus<'_>) -> Option<StopReason> {
        let item = self.budget.take_request().err()?;
        if self.budget.pauses() && status.can_pause {
            return Some(StopReason::Paused);
        }
        Some(StopReason::BudgetSpent { item })
    }

    /// Takes the reply's calls still open from the budget; those it has no room for are not
    /// run, and the run ends after the step.
    fn on_reply(
        &self,
        _status: &RunStatus<'_>,
        _reply: &AssistantMessage,
        _cut_off: bool,
        rulings: &mut ReplyRulings<'_>,
    ) {
        let open: Vec<usize> = rulings.open().collect();
        if open.is_empty() {
            return;
        }
        let granted = self.budget.take_tool_calls(open.len() as u64);
        let over = usize::try_from(granted).map_or(0, |granted| open.len().saturating_sub(granted));
        if over == 0 {
            return;
        }
        for index in open.into_iter().rev().take(over) {
            rulings.rule(index, Ruling::not_run(NotRun::BudgetSpent));
        }
        rulings.stop_after(StopReason::BudgetSpent {
            item: BudgetItem::ToolCalls,
        });
    }
}

impl<S: Sync> ModelLayer<S> for Spending {
    /// Counts what the reply used against the budget, for this run's agent.
    fn call<'a>(
        &'a self,
        call: ModelCall<'a, S>,
        next: Next<'a, S>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async move {
            let response = next.call(call).await?;
            let model = response.model.as_deref();
            self.budget
                .spend(self.agent.as_str(), model, response.usage);
            Ok(response)
        })
    }
}
