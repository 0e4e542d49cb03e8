//! Interruption: what a run's awaits are raced against, its cancel signal and its time limit.

use std::future::{Future, pending};
use std::pin::{Pin, pin};
use std::time::{Duration, Instant};

use futures_util::future::{Either, select};

use super::Run;
use crate::run::agent::Agent;
use crate::run::journal::Journal;
use crate::run::outcome::StopReason;
use crate::texts::NotRun;
use crate::tool::BoxFuture;

/// Why something in flight was dropped.
#[derive(Clone, Copy)]
pub(super) enum Interrupt {
    Cancelled,
    TimeLimit,
}

impl Interrupt {
    /// Why a call it dropped, or one that had not started, was not run.
    pub(super) fn not_run(self) -> NotRun<'static> {
        match self {
            Interrupt::Cancelled => NotRun::Cancelled,
            Interrupt::TimeLimit => NotRun::TimeLimit,
        }
    }
}

/// A run's wall-clock limit. A journaled run has none: replayed from its journal, it would fire
/// at another point than in the first run.
pub(super) fn time_limit<S>(agent: &Agent<S>, journal: Option<&dyn Journal>) -> Option<Duration> {
    agent.limits.time_limit.filter(|_| journal.is_none())
}

impl<S: Send + Sync + 'static> Run<'_, S> {
    /// Races `work` against the run's cancel signal and its deadline: its output, or the
    /// interruption that came first (`work` is then left unfinished, for the caller to drop).
    /// Only a run that can be interrupted races its awaits; the race is boxed, so that every
    /// run's future does not carry room for it, and `work` stays where its caller pinned it.
    pub(super) fn race<'f, F, C>(
        &self,
        work: Pin<&'f mut F>,
        cancel: &'f mut Pin<&mut C>,
    ) -> BoxFuture<'f, Result<F::Output, Interrupt>>
    where
        F: Future<Output: Send> + Send + ?Sized,
        C: Future<Output = ()> + Send,
    {
        let deadline = self.deadline;
        Box::pin(async move {
            let time_up = pin!(async move {
                match deadline {
                    Some(deadline) => {
                        let left = deadline.saturating_duration_since(Instant::now());
                        futures_timer::Delay::new(left).await;
                    }
                    None => pending().await,
                }
            });
            match select(work, select(cancel.as_mut(), time_up)).await {
                Either::Left((done, _)) => Ok(done),
                Either::Right((Either::Left(_), _)) => Err(Interrupt::Cancelled),
                Either::Right((Either::Right(_), _)) => Err(Interrupt::TimeLimit),
            }
        })
    }

    /// The stop reason of an interruption.
    pub(super) fn interrupted(&self, interrupt: Interrupt) -> StopReason {
        match interrupt {
            Interrupt::Cancelled => StopReason::Cancelled,
            Interrupt::TimeLimit => StopReason::TimeLimit {
                limit: self.agent.limits.time_limit.unwrap_or_default(),
            },
        }
    }
}
