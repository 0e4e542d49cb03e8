//! Streaming: a model's reply as it arrives, and a live view of a whole run.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures_channel::mpsc::UnboundedReceiver;
use futures_util::Stream;

use crate::message::{ToolCall, ToolResultMessage, Usage};
use crate::model::{ChatResponse, ModelError};
use crate::run::{RunError, RunOutput};
use crate::tool::BoxFuture;

/// A boxed, `Send` stream: what [`Model::chat_stream`](crate::Model::chat_stream) returns.
pub type BoxStream<'a, T> = Pin<Box<dyn Stream<Item = T> + Send + 'a>>;

/// One piece of a model's reply as it arrives.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StreamEvent {
    /// More of the reply's text.
    TextDelta(String),
    /// The model began a tool call; `index` is its place in the reply.
    ToolCallStart {
        /// The call's place in the reply, from 0.
        index: usize,
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// More of a tool call's argument text.
    ToolCallArguments {
        /// The call's place in the reply.
        index: usize,
        /// The next piece of the JSON text.
        fragment: String,
    },
    /// Tokens used, as the provider reports them.
    Usage(Usage),
    /// The whole reply, exactly as the non-streaming call would give it. Always the last event.
    Finished(ChatResponse),
}

/// The events a finished reply would have streamed: how a model without native streaming streams.
pub(crate) fn events_of(response: ChatResponse) -> Vec<Result<StreamEvent, ModelError>> {
    let mut events = Vec::with_capacity(3 + 2 * response.message.tool_calls.len());
    if !response.message.content.is_empty() {
        events.push(Ok(StreamEvent::TextDelta(response.message.content.clone())));
    }
    for (index, call) in response.message.tool_calls.iter().enumerate() {
        events.push(Ok(StreamEvent::ToolCallStart {
            index,
            id: call.id.clone(),
            name: call.name.clone(),
        }));
        if !call.arguments.is_empty() {
            events.push(Ok(StreamEvent::ToolCallArguments {
                index,
                fragment: call.arguments.clone(),
            }));
        }
    }
    events.push(Ok(StreamEvent::Usage(response.usage)));
    events.push(Ok(StreamEvent::Finished(response)));
    events
}

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
