//! The run's journal on Restate: each model call (a context policy's too), each tool call and
//! each guard's verdict that takes time (a judge's) is one `run` step of the invocation, recorded
//! by the Restate server before the run goes on, and handed back instead of being made (or asked)
//! again when the invocation is replayed.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use restate_sdk::context::RunFuture;
use restate_sdk::endpoint::ContextInternal;
use restate_sdk::errors::HandlerError;
use restate_sdk::serde::Json;

use agent_core::ToolError;
use agent_core::guard::{Judged, Verdict};
use agent_core::{AgentPath, Journal};
use agent_core::{BoxFuture, ToolDef};
use agent_core::{ChatResponse, ModelError};
use agent_core::{ToolCall, ToolResultMessage};

/// The model and tool calls (and the verdicts of guards that take time) of one durable run,
/// journaled in its Restate invocation (a handle on it: the runs an agent called as a tool starts
/// journal theirs in the same invocation, in order).
#[derive(Clone)]
pub(super) struct RestateJournal {
    pub(super) context: ContextInternal,
    /// The agent whose run this is, for a run an agent called as a tool started: its steps are
    /// named by it (the top run's are not).
    pub(super) agent: Option<Arc<str>>,
}

impl RestateJournal {
    /// The name of a step of this journal's run: `what`, after the agent that made it when the
    /// run is one a call started.
    fn named(&self, what: String) -> String {
        match &self.agent {
            Some(agent) => format!("{agent}: {what}"),
            None => what,
        }
    }

    /// Makes `call` as one `run` step named `name` (or gives back its recorded reply).
    fn model_step<'a>(
        &'a self,
        name: String,
        call: BoxFuture<'a, Result<ChatResponse, ModelError>>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async move {
            let recorded = self
                .context
                .run(move || async move {
                    match call.await {
                        Ok(response) => Ok(Json(Ok(response))),
                        // Restate tries the step again later, with its retry policy: an outage
                        // longer than the adapter's own retries does not end the run.
                        Err(error) if error.is_retryable() => Err(HandlerError::from(error)),
                        // Recorded as it is, so a replay fails the same way.
                        Err(error) => Ok(Json(Err(error.to_string()))),
                    }
                })
                .name(name.clone())
                .await;
            match recorded {
                Ok(Json(Ok(response))) => Ok(response),
                Ok(Json(Err(message))) => Err(ModelError::other(message)),
                Err(terminal) => Err(ModelError::other(format!(
                    "the {name} failed for good: {}",
                    terminal.message()
                ))),
            }
        })
    }
}

impl Journal for RestateJournal {
    fn model_call<'a>(
        &'a self,
        step: usize,
        call: BoxFuture<'a, Result<ChatResponse, ModelError>>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        self.model_step(self.named(format!("model call, step {step}")), call)
    }

    fn context_call<'a>(
        &'a self,
        step: usize,
        call: BoxFuture<'a, Result<ChatResponse, ModelError>>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let name = self.named(format!("context policy's model call, step {step}"));
        self.model_step(name, call)
    }

    fn guard_check<'a>(
        &'a self,
        key: String,
        check: BoxFuture<'a, Judged>,
    ) -> BoxFuture<'a, Judged> {
        Box::pin(async move {
            let recorded = self
                .context
                .run(move || async move { Ok(Json(check.await)) })
                .name(self.named(key))
                .await;
            match recorded {
                Ok(Json(judged)) => judged,
                // Without a recorded verdict nothing goes through: a replay could not tell what
                // the guard said.
                Err(terminal) => {
                    let verdict = Verdict::trip(format!(
                        "the durable run's journal could not record the guard's verdict: {}",
                        terminal.message()
                    ));
                    Judged::new(verdict, Default::default())
                }
            }
        })
    }

    fn for_runs_it_starts(&self) -> Option<Arc<dyn Journal>> {
        Some(Arc::new(self.clone()))
    }

    fn for_agent(&self, agent: &AgentPath) -> Option<Arc<dyn Journal>> {
        let agent = Some(Arc::from(agent.as_str()));
        Some(Arc::new(RestateJournal {
            context: self.context.clone(),
            agent,
        }))
    }

    fn tool_call<'a>(
        &'a self,
        call: &'a ToolCall,
        definition: Option<&'a ToolDef>,
        run: BoxFuture<'a, ToolResultMessage>,
    ) -> BoxFuture<'a, Result<ToolResultMessage, ToolError>> {
        let repeatable = definition.is_some_and(|definition| {
            let annotations = &definition.annotations;
            annotations.read_only == Some(true) || annotations.idempotent == Some(true)
        });
        Box::pin(async move {
            // A call that is not safe to repeat first records that it started. A replay that finds
            // that record but no result knows the call was cut off mid-way by a crash: it does not
            // run it again, and the model is told the outcome is unknown (recorded as no result).
            let mut started_before = false;
            if !repeatable {
                let starts_now = AtomicBool::new(false);
                let marked = self
                    .context
                    .run(|| async {
                        starts_now.store(true, Ordering::Relaxed);
                        Ok(())
                    })
                    .name(self.named(format!("tool call {} started", call.id)))
                    .await;
                if let Err(terminal) = marked {
                    return Err(ToolError::Journal {
                        message: terminal.message().to_owned(),
                    });
                }
                started_before = !starts_now.load(Ordering::Relaxed);
            }
            let recorded = self
                .context
                .run(move || async move {
                    if started_before {
                        return Ok(Json(None));
                    }
                    Ok(Json(Some(run.await)))
                })
                .name(self.named(format!("tool call {} ({})", call.id, call.name)))
                .await;
            match recorded {
                Ok(Json(Some(result))) => Ok(result),
                Ok(Json(None)) => Err(ToolError::OutcomeUnknown {
                    tool: call.name.clone(),
                }),
                Err(terminal) => Err(ToolError::Journal {
                    message: terminal.message().to_owned(),
                }),
            }
        })
    }
}
