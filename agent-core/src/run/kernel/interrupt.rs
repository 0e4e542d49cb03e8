//! Interruption: what a run's awaits are raced against, its cancel signal and its time limit.
//! Every run has one; a run with neither never races.

use std::future::Future;
use std::pin::pin;
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use futures_util::future::{Either, Shared, select};

use crate::run::outcome::StopReason;
use crate::texts::NotRun;
use crate::tool::BoxFuture;
use crate::tool_error::{Interruption as CutBy, ToolError};

/// Why something in flight was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Interrupt {
    Cancelled,
    TimeLimit(Duration),
}

impl Interrupt {
    /// Why a call that had not started was not run.
    pub(super) fn not_run(self) -> NotRun<'static> {
        match self {
            Interrupt::Cancelled => NotRun::Cancelled,
            Interrupt::TimeLimit(_) => NotRun::TimeLimit,
        }
    }

    /// The error of a call it cut off after it started.
    pub(super) fn cut_off(self) -> ToolError {
        let by = match self {
            Interrupt::Cancelled => CutBy::Cancelled,
            Interrupt::TimeLimit(_) => CutBy::TimeLimit,
        };
        ToolError::Interrupted { by }
    }

    /// The run's stop reason.
    pub(super) fn stop_reason(self) -> StopReason {
        match self {
            Interrupt::Cancelled => StopReason::Cancelled,
            Interrupt::TimeLimit(limit) => StopReason::TimeLimit { limit },
        }
    }
}

/// A run's cancel signal (shared by every await it cuts) and its deadline.
pub(super) struct Interruption<'r> {
    cancel: Option<Shared<BoxFuture<'r, ()>>>,
    deadline: Option<(Instant, Duration)>,
}

impl<'r> Interruption<'r> {
    /// The run's interruption: `cancel`, and `time_limit` counted from now less the time the run
    /// had already run (a resumed run's).
    pub(super) fn new(
        cancel: Option<BoxFuture<'r, ()>>,
        time_limit: Option<Duration>,
        elapsed_before: Duration,
    ) -> Self {
        let deadline =
            time_limit.map(|limit| (Instant::now() + limit.saturating_sub(elapsed_before), limit));
        Interruption {
            cancel: cancel.map(FutureExt::shared),
            deadline,
        }
    }

    /// The time limit, if it has passed.
    pub(super) fn passed(&self) -> Option<Interrupt> {
        let (deadline, limit) = self.deadline?;
        (Instant::now() >= deadline).then_some(Interrupt::TimeLimit(limit))
    }

    /// Awaits `work`, unless the cancel signal or the deadline comes first: then `work` is
    /// dropped unfinished, and the interruption is returned.
    pub(super) async fn race<F: Future>(&self, work: F) -> Result<F::Output, Interrupt> {
        if self.cancel.is_none() && self.deadline.is_none() {
            return Ok(work.await);
        }
        let cancelled = async {
            match &self.cancel {
                Some(cancel) => cancel.clone().await,
                None => std::future::pending().await,
            }
        };
        let time_up = async {
            match self.deadline {
                Some((deadline, limit)) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    futures_timer::Delay::new(left).await;
                    Interrupt::TimeLimit(limit)
                }
                None => std::future::pending().await,
            }
        };
        let (work, cancelled, time_up) = (pin!(work), pin!(cancelled), pin!(time_up));
        match select(work, select(cancelled, time_up)).await {
            Either::Left((done, _)) => Ok(done),
            Either::Right((Either::Left(((), _)), _)) => Err(Interrupt::Cancelled),
            Either::Right((Either::Right((interrupt, _)), _)) => Err(interrupt),
        }
    }
}
