//! A live view of a run: its events as they happen, then its end.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures_channel::mpsc::UnboundedReceiver;
use futures_util::Stream;

use super::outcome::{RunError, RunOutput};
use crate::message::{ToolCall, ToolResultMessage, Usage};
use crate::tool::BoxFuture;

/// What happens in a run, as it happens.
#[derive(Debug)]
#[non_exhaustive]
pub enum RunEvent {
    /// A step began: the model is about to be asked.
    StepStarted {
        /// The step, from 1.
        step: usize,
    },
    /// More of the model's text.
    TextDelta(String),
    /// The model asked for a tool call (sent when its reply is complete).
    ToolCallRequested(ToolCall),
    /// A tool call's result, in call order.
    ToolResult(ToolResultMessage),
    /// A step ended.
    StepFinished {
        /// The step.
        step: usize,
        /// Tokens the step's model call used.
        usage: Usage,
    },
    /// The run ended, with exactly what [`Agent::run`](crate::Agent::run) returns. Always last.
    Finished(Result<RunOutput, RunError>),
}

/// The stream [`Agent::run_stream`](crate::Agent::run_stream) returns: the run's events, then its end.
pub struct RunStream<'a> {
    run: Option<BoxFuture<'a, Result<RunOutput, RunError>>>,
    events: UnboundedReceiver<RunEvent>,
    outcome: Option<Result<RunOutput, RunError>>,
}

impl<'a> RunStream<'a> {
    pub(crate) fn new(
        run: BoxFuture<'a, Result<RunOutput, RunError>>,
        events: UnboundedReceiver<RunEvent>,
    ) -> Self {
        RunStream {
            run: Some(run),
            events,
            outcome: None,
        }
    }
}

impl Stream for RunStream<'_> {
    type Item = RunEvent;

    fn poll_next(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Option<RunEvent>> {
        let this = &mut *self;
        loop {
            // Events first: everything the run sent comes out before its end.
            match Pin::new(&mut this.events).poll_next(context) {
                Poll::Ready(Some(event)) => return Poll::Ready(Some(event)),
                Poll::Ready(None) => {
                    return Poll::Ready(this.outcome.take().map(RunEvent::Finished));
                }
                Poll::Pending => {}
            }
            let Some(run) = this.run.as_mut() else {
                return Poll::Pending;
            };
            match run.as_mut().poll(context) {
                Poll::Ready(outcome) => {
                    // The run dropped its sender; drain what is left, then finish.
                    this.outcome = Some(outcome);
                    this.run = None;
                }
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}
