//! Interruption: what a run's awaits are raced against, its cancel signal, its time limit, and
//! the tripwire of its tree (a guard's trip). Every run has one; a run with none of them never
//! races.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use futures_util::future::Shared;

use crate::budget::earliest;
use crate::reasons::not_run::NotRun;
use crate::reasons::tool_error::{Interruption as CutBy, ToolError};
use crate::run::guard::Tripwire;
use crate::run::outcome::StopReason;
use crate::tool::BoxFuture;

/// Why something in flight was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Interrupt {
    Cancelled,
    TimeLimit(Duration),
    /// A guard tripped: the run ends as a cancelled one does, and then fails with the trip.
    Tripped,
}

impl Interrupt {
    /// Why a call that had not started was not run.
    pub(super) fn not_run(self) -> NotRun {
        match self {
            Interrupt::Cancelled => NotRun::Cancelled,
            Interrupt::Tripped => NotRun::Tripped,
            Interrupt::TimeLimit(_) => NotRun::TimeLimit,
        }
    }

    /// The error of a call it cut off after it started.
    pub(super) fn cut_off(self) -> ToolError {
        let by = match self {
            Interrupt::Cancelled => CutBy::Cancelled,
            Interrupt::Tripped => CutBy::Tripped,
            Interrupt::TimeLimit(_) => CutBy::TimeLimit,
        };
        ToolError::Interrupted { by }
    }

    /// The run's stop reason.
    pub(super) fn stop_reason(self) -> StopReason {
        match self {
            Interrupt::Cancelled | Interrupt::Tripped => StopReason::Cancelled,
            Interrupt::TimeLimit(limit) => StopReason::TimeLimit { limit },
        }
    }
}

/// A run's cancel signal (shared by every await it cuts), its deadline, and its tree's tripwire.
pub(super) struct Interruption<'r> {
    cancel: Option<Shared<BoxFuture<'r, ()>>>,
    deadline: Option<(Instant, Duration)>,
    tripwire: Option<&'r Tripwire>,
}

impl<'r> Interruption<'r> {
    /// The run's interruption: `cancel`, and `time_limit` counted from now less the time the run
    /// had already run (a resumed run's), or `shared`, a deadline it shares with other runs (its
    /// budget's), whichever comes first.
    pub(super) fn new(
        cancel: Option<BoxFuture<'r, ()>>,
        time_limit: Option<Duration>,
        elapsed_before: Duration,
        shared: Option<(Instant, Duration)>,
        tripwire: Option<&'r Tripwire>,
    ) -> Self {
        let own =
            time_limit.map(|limit| (Instant::now() + limit.saturating_sub(elapsed_before), limit));
        let deadline = earliest(own, shared);
        Interruption {
            cancel: cancel.map(FutureExt::shared),
            deadline,
            tripwire,
        }
    }

    /// Whether a guard of the run's tree tripped.
    fn tripped(&self) -> bool {
        (self.tripwire.as_ref()).is_some_and(|tripwire| tripwire.tripped().is_some())
    }

    /// The interruption, if it has come: the cancel signal (which a race whose work finished in
    /// the same poll never looked at), or the time limit.
    pub(super) fn passed(&self) -> Option<Interrupt> {
        if self.tripped() {
            return Some(Interrupt::Tripped);
        }
        if let Some(signal) = &self.cancel
            && signal.clone().now_or_never().is_some()
        {
            return Some(Interrupt::Cancelled);
        }
        let (deadline, limit) = self.deadline?;
        (Instant::now() >= deadline).then_some(Interrupt::TimeLimit(limit))
    }

    /// `work` (a future its caller keeps pinned, or boxed), unless the cancel signal or the
    /// deadline comes first: then `work` is left unfinished, for its caller to drop, and the
    /// interruption is the race's output.
    pub(super) fn race<F: Future + Unpin>(&self, work: F) -> Race<'_, 'r, F> {
        Race {
            work,
            interruption: self,
            cancel: None,
            timer: None,
        }
    }
}

/// A future raced against a run's interruption: what [`Interruption::race`] makes. The cancel
/// signal is cloned and the timer armed only when `work` is not done at its first poll.
pub(super) struct Race<'i, 'r, F> {
    work: F,
    interruption: &'i Interruption<'r>,
    cancel: Option<Shared<BoxFuture<'r, ()>>>,
    timer: Option<futures_timer::Delay>,
}

impl<F: Future + Unpin> Future for Race<'_, '_, F> {
    type Output = Result<F::Output, Interrupt>;

    fn poll(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        if let Poll::Ready(done) = Pin::new(&mut this.work).poll(context) {
            return Poll::Ready(Ok(done));
        }
        // A guard trips while the work is polled, and what it sits in then never completes.
        if this.interruption.tripped() {
            return Poll::Ready(Err(Interrupt::Tripped));
        }
        if let Some(signal) = &this.interruption.cancel {
            let cancel = this.cancel.get_or_insert_with(|| signal.clone());
            if Pin::new(cancel).poll(context).is_ready() {
                return Poll::Ready(Err(Interrupt::Cancelled));
            }
        }
        if let Some((deadline, limit)) = this.interruption.deadline {
            // The clock before the timer: runs that share a deadline (a child under its caller's
            // budget) all end at it, whichever of their timers fires first.
            let now = Instant::now();
            if now >= deadline {
                return Poll::Ready(Err(Interrupt::TimeLimit(limit)));
            }
            let timer =
                (this.timer).get_or_insert_with(|| futures_timer::Delay::new(deadline - now));
            if Pin::new(timer).poll(context).is_ready() {
                return Poll::Ready(Err(Interrupt::TimeLimit(limit)));
            }
        }
        Poll::Pending
    }
}
