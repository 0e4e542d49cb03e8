//! Running a plain (non-async) tool function off the caller's task, so that it gets the same
//! concurrency, timeouts and cancellation as an async one.
//!
//! Inside a tokio runtime the function runs on tokio's blocking pool; anywhere else on a thread of
//! its own. Either way the caller gets a future, and dropping that future (a timeout, a cancelled
//! run) stops waiting for the function without stopping it: a sync function cannot be interrupted
//! mid-flight, so it runs to its end on its thread and its result is thrown away.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::thread;

use futures_channel::oneshot;

use crate::reasons::tool_error::{ThreadProblem, ToolError, panicked};

/// Starts `work` on a blocking thread and resolves to its result; a panic inside it becomes
/// [`ToolError::Panicked`] with the panic's message.
///
/// Where it runs is decided here, when called: on the blocking pool of the tokio runtime this is
/// called in, else on a new thread.
pub fn run_blocking<F, R>(work: F) -> Blocking<R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    // The panic is caught on the thread itself, so neither tokio nor the channel sees it.
    let work = move || catch_unwind(AssertUnwindSafe(work));
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        return Blocking(Inner::Tokio(runtime.spawn_blocking(work)));
    }
    let (sender, receiver) = oneshot::channel();
    let spawned = thread::Builder::new()
        .name("agent-core-tool".to_owned())
        .spawn(move || {
            // The receiver is gone when the call was cancelled; the result has nowhere to go.
            let _ = sender.send(work());
        });
    match spawned {
        Ok(_) => Blocking(Inner::Thread(receiver)),
        Err(error) => Blocking(Inner::Failed(Some(ToolError::Thread {
            problem: ThreadProblem::NotStarted {
                message: error.to_string(),
            },
        }))),
    }
}

/// The future [`run_blocking`] returns.
#[must_use = "the function's result is only seen by awaiting this"]
pub struct Blocking<R>(Inner<R>);

enum Inner<R> {
    Tokio(tokio::task::JoinHandle<thread::Result<R>>),
    Thread(oneshot::Receiver<thread::Result<R>>),
    Failed(Option<ToolError>),
}

impl<R> Future for Blocking<R> {
    type Output = Result<R, ToolError>;

    fn poll(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Self::Output> {
        let finished = match &mut self.0 {
            Inner::Tokio(handle) => match Pin::new(handle).poll(context) {
                Poll::Ready(Ok(finished)) => finished,
                // Panics are caught inside, so the only way here is a runtime shutting down
                // before the function started.
                Poll::Ready(Err(_)) => {
                    return Poll::Ready(Err(ToolError::Thread {
                        problem: ThreadProblem::RuntimeShutDown,
                    }));
                }
                Poll::Pending => return Poll::Pending,
            },
            Inner::Thread(receiver) => match Pin::new(receiver).poll(context) {
                Poll::Ready(Ok(finished)) => finished,
                // The thread always sends, panic or not; a dropped sender means it was killed.
                Poll::Ready(Err(_)) => {
                    return Poll::Ready(Err(ToolError::Thread {
                        problem: ThreadProblem::EndedWithoutResult,
                    }));
                }
                Poll::Pending => return Poll::Pending,
            },
            Inner::Failed(error) => {
                return Poll::Ready(Err(error.take().unwrap_or(ToolError::Thread {
                    problem: ThreadProblem::ResultTaken,
                })));
            }
        };
        Poll::Ready(finished.map_err(panicked))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Barrier};
    use std::time::Duration;

    /// Polls a future to its end on this thread, with no runtime at all.
    fn block_on<F: Future>(future: F) -> F::Output {
        let waker = std::task::Waker::noop();
        let mut context = Context::from_waker(waker);
        let mut future = std::pin::pin!(future);
        loop {
            if let Poll::Ready(output) = future.as_mut().poll(&mut context) {
                return output;
            }
            thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn outside_a_runtime_it_runs_on_a_thread_of_its_own() {
        let caller = thread::current().id();
        let ran_on = block_on(run_blocking(move || thread::current().id())).unwrap();
        assert_ne!(ran_on, caller);
    }

    #[test]
    fn outside_a_runtime_two_calls_run_at_once() {
        // Each call waits for the other: they finish only if both run at the same time.
        let barrier = Arc::new(Barrier::new(2));
        let first = run_blocking({
            let barrier = Arc::clone(&barrier);
            move || barrier.wait().is_leader()
        });
        let second = run_blocking(move || barrier.wait().is_leader());
        let (first, second) = (block_on(first).unwrap(), block_on(second).unwrap());
        assert!(first ^ second);
    }

    #[test]
    fn a_panic_becomes_an_error_with_its_message() {
        let outcome = block_on(run_blocking(|| -> u32 { panic!("out of cheese") }));
        assert_eq!(
            outcome,
            Err(ToolError::Panicked {
                message: Some("out of cheese".to_owned())
            })
        );
    }

    #[test]
    fn inside_tokio_it_runs_on_the_blocking_pool() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .thread_name("test-blocking-pool")
            .build()
            .unwrap();
        // Called inside the runtime: where to run is decided when `run_blocking` is called.
        let name = runtime
            .block_on(async { run_blocking(|| thread::current().name().map(str::to_owned)).await })
            .unwrap();
        assert_eq!(name.as_deref(), Some("test-blocking-pool"));
        let outcome =
            runtime.block_on(async { run_blocking(|| -> u32 { panic!("{}", 42) }).await });
        assert_eq!(
            outcome,
            Err(ToolError::Panicked {
                message: Some("42".to_owned())
            })
        );
    }
}
