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
    /// Runs `work` unless the run is cancelled or its time runs out first; a run that can be
    /// neither awaits `work` as it is. `work` says `Ok` when it is done: its own output is the
    /// race's, so a run that cannot be interrupted awaits it with nothing around it. (Not an
    /// `async fn`: that would hold `work` twice, as its argument and pinned for the race.)
    pub(super) fn interruptible<'f, T: 'f, C: Future<Output = ()> + Send>(
        &self,
        work: impl Future<Output = Result<T, Interrupt>> + Send + 'f,
        cancel: &'f mut Pin<&mut C>,
    ) -> impl Future<Output = Result<T, Interrupt>> + Send + 'f {
        if !self.can_be_interrupted {
            return Either::Left(work);
        }
        let deadline = self.deadline;
        // Boxed to be raced (only a run that can be interrupted pays for it), and before the
        // race's future is made, which would otherwise hold it whole.
        let work = Box::pin(work);
        Either::Right(async move {
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
                Either::Left((done, _)) => done,
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
