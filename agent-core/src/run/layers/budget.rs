//! A run's part in the [`Budget`] its tree of agents shares, at two seams: as a call policy it
//! takes a request from the budget before each model call, with the tokens it is expected to use
//! reserved when the budget limits tokens (the run ends when there is no room), and the tool calls
//! of each reply (those past it are not run); as a model-call layer it counts what each reply
//! used, by the agent that made it, in place of what was reserved for it.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::budget::{Budget, BudgetItem};
use crate::message::AssistantMessage;
use crate::model::{ChatResponse, ModelError};
use crate::reasons::not_run::NotRun;
use crate::run::context::messages_tokens;
use crate::run::outcome::StopReason;
use crate::run::seams::{CallPolicy, ModelCall, ModelLayer, Next, ReplyRulings, Ruling, RunStatus};
use crate::tool::BoxFuture;
use crate::tool::scope::AgentPath;

/// One run's spending from its budget, as the agent at `agent`.
#[derive(Clone)]
pub(crate) struct Spending {
    budget: Budget,
    agent: AgentPath,
    /// For a budget that limits tokens: the tokens reserved for the request in flight, and the
    /// longest reply a request allows.
    reserving: Option<Arc<Reserved>>,
}

/// The tokens a run has reserved in its budget for its request in flight: given back when the
/// reply is counted, or when the run's part ends without one (a call cut off).
struct Reserved {
    budget: Budget,
    tokens: AtomicU64,
    reply: u64,
}

impl Drop for Reserved {
    fn drop(&mut self) {
        self.budget.release_tokens(*self.tokens.get_mut());
    }
}

/// The tokens a reply is expected to use when its request sets no limit: the cap providers
/// commonly apply (Anthropic's adapter sends it).
const USUAL_REPLY_TOKENS: u64 = 1_024;

impl Spending {
    /// The spending of the agent at `agent` from `budget`, its requests allowing replies of at
    /// most `max_reply` tokens (when they say; else [`USUAL_REPLY_TOKENS`] are expected).
    pub(crate) fn new(budget: Budget, agent: AgentPath, max_reply: Option<u32>) -> Self {
        let reserving = budget.limits_tokens().then(|| {
            Arc::new(Reserved {
                budget: budget.clone(),
                tokens: AtomicU64::new(0),
                reply: max_reply.map_or(USUAL_REPLY_TOKENS, u64::from),
            })
        });
        Spending {
            budget,
            agent,
            reserving,
        }
    }

    /// Takes a request, and reserves what it is expected to use: the transcript's tokens
    /// (estimated) and the longest reply it allows.
    fn take(&self, status: &RunStatus<'_>) -> Result<(), BudgetItem> {
        let Some(reserved) = &self.reserving else {
            return self.budget.take_request();
        };
        let expected = messages_tokens(status.messages) + reserved.reply;
        self.budget.reserve_tokens(expected)?;
        if let Err(item) = self.budget.take_request() {
            self.budget.release_tokens(expected);
            return Err(item);
        }
        reserved.tokens.fetch_add(expected, Ordering::Relaxed);
        Ok(())
    }

    /// Gives back what was reserved for the request just answered (or failed).
    fn settle(&self) {
        if let Some(reserved) = &self.reserving {
            self.budget
                .release_tokens(reserved.tokens.swap(0, Ordering::Relaxed));
        }
    }
}

impl<S> CallPolicy<S> for Spending {
    /// Takes the step's request (last of the policies, so that a request is taken only when it
    /// is made), reserving the tokens it is expected to use, or ends the run with what ran out;
    /// or, for a budget that pauses, has the run wait for a person to raise it.
    fn before_step(&self, status: &RunStatus<'_>) -> Option<StopReason> {
        let item = self.take(status).err()?;
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
    /// Counts what the reply used against the budget, for this run's agent, in place of what
    /// was reserved for it.
    fn call<'a>(
        &'a self,
        call: ModelCall<'a, S>,
        next: Next<'a, S>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async move {
            let response = next.call(call).await;
            self.settle();
            let response = response?;
            let model = response.model.as_deref();
            self.budget
                .spend(self.agent.as_str(), model, response.usage);
            Ok(response)
        })
    }
}
