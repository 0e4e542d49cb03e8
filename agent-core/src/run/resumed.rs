//! A paused run going on, set up and not yet started: `.await` it, `stream()` it, or give it a
//! cancellation signal first.

use std::fmt;
use std::future::{Future, IntoFuture};

use super::driver::{Resumption, RunPlan, drive};
use super::events::{EventSender, RunStream};
use super::journal::Journal;
use super::outcome::{RunError, RunOutput};
use super::pause::{Decision, PausedRun};
use crate::agent::Agent;
use crate::tool::BoxFuture;

/// A [paused](super::StopReason::Paused) run with a decision for each waiting call: what
/// [`Agent::resume_paused_with`] and [`Agent::resume_paused`] return. Its settings are the paused
/// run's.
#[must_use = "a run does nothing until it is awaited or streamed"]
pub struct ResumedRun<'a, S> {
    agent: &'a Agent<S>,
    context: &'a S,
    paused: PausedRun,
    decisions: Vec<(String, Decision)>,
    cancel: Option<BoxFuture<'a, ()>>,
    journal: Option<&'a dyn Journal>,
}

impl<'a, S: Send + Sync + 'static> ResumedRun<'a, S> {
    pub(crate) fn new(
        agent: &'a Agent<S>,
        context: &'a S,
        paused: PausedRun,
        decisions: Vec<(String, Decision)>,
    ) -> Self {
        ResumedRun {
            agent,
            context,
            paused,
            decisions,
            cancel: None,
            journal: None,
        }
    }

    /// Records the run's model and tool calls in `journal` (a durable run).
    #[cfg(feature = "restate")]
    pub(crate) fn journaled(mut self, journal: &'a dyn Journal) -> Self {
        self.journal = Some(journal);
        self
    }

    /// Cancels the run when `cancel` completes, as [`RunBuilder::until`](super::RunBuilder::until).
    pub fn until(mut self, cancel: impl Future<Output = ()> + Send + 'a) -> Self {
        self.cancel = Some(Box::pin(cancel));
        self
    }

    /// Runs, streaming what happens: the results of the decided calls, then the steps that
    /// follow, and last the very result the run awaited would give.
    pub fn stream(self) -> RunStream<'a, RunOutput> {
        RunStream::new(|events| Box::pin(self.go(Some(events))))
    }

    /// Checks the decisions against the waiting calls (nothing runs when one does not fit), then
    /// runs to the end.
    async fn go(self, events: Option<EventSender>) -> Result<RunOutput, RunError> {
        let ResumedRun {
            agent,
            context,
            paused,
            decisions,
            cancel,
            journal,
        } = self;
        let matched = paused.match_decisions(decisions, |name| agent.tools.get(name).is_some());
        let decisions = match matched {
            Ok(matched) => matched
                .into_iter()
                .map(|(pending, decision)| (pending.clone(), decision))
                .collect(),
            Err(source) => {
                return Err(RunError::Resume {
                    source,
                    usage: paused.0.usage,
                    messages: paused.0.messages,
                });
            }
        };
        let plan = RunPlan {
            resume: Some(Box::new(Resumption { paused, decisions })),
            journal,
            ..RunPlan::new(context)
        };
        drive(agent, plan, Vec::new(), cancel, events).await
    }
}

impl<'a, S: Send + Sync + 'static> IntoFuture for ResumedRun<'a, S> {
    type Output = Result<RunOutput, RunError>;
    type IntoFuture = BoxFuture<'a, Result<RunOutput, RunError>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.go(None))
    }
}

impl<S> fmt::Debug for ResumedRun<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResumedRun")
            .field("pending", &self.paused.pending().len())
            .field("decisions", &self.decisions)
            .field("cancel", &self.cancel.is_some())
            .finish_non_exhaustive()
    }
}
