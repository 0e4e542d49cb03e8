//! A live view of a run: its events as they happen, then its end.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use futures_util::Stream;

use super::context::Summary;
use super::outcome::{RunError, RunOutput};
use crate::message::{ToolCall, ToolResultMessage};
use crate::tool::BoxFuture;
use crate::tool::scope::AgentPath;
use crate::usage::Usage;

/// What happens in a run, as it happens. `O` is what the run gives at its end: a [`RunOutput`],
/// or a [`TypedOutput`](crate::TypedOutput) for a typed run.
#[derive(Debug)]
#[non_exhaustive]
pub enum RunEvent<O = RunOutput> {
    /// A step began: the model is about to be asked.
    StepStarted {
        /// The step, from 1.
        step: usize,
    },
    /// More of the model's text.
    TextDelta(String),
    /// More of the model's reasoning, as the provider streams it (a thinking model's thoughts or
    /// their summary); not part of the answer.
    ReasoningDelta(String),
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
        /// The model that answered, when its reply named it
        /// ([`ChatResponse::model`](crate::ChatResponse::model)): with a
        /// [`Fallback`](crate::Fallback) chain, the one of the chain that answered this step.
        model: Option<String>,
    },
    /// The run's context policy made a summary, which this request and the later ones send in
    /// place of the messages it stands for (in the run's positions; kept in
    /// [`RunOutput::summaries`] and in the session).
    Summarized(Summary),
    /// An event of a run this run started: an agent called as a tool
    /// ([`Agent::as_tool`](crate::Agent::as_tool)), at `path` in the tree of agents (a child's
    /// child's events come with its own path, not wrapped twice). In the order they happened,
    /// between the call's [`ToolCallRequested`](RunEvent::ToolCallRequested) and its
    /// [`ToolResult`](RunEvent::ToolResult); never [`Finished`](RunEvent::Finished).
    SubAgent {
        /// The agent whose run it is.
        path: AgentPath,
        /// The id of the call of this run under which it happened: the call that started the
        /// child (or, for a child's child, the one that started its ancestor here).
        call_id: String,
        /// What happened there.
        event: Box<RunEvent>,
    },
    /// The run ended, with exactly what the same run not streamed returns. Always last.
    Finished(Result<O, RunError>),
}

impl<O> RunEvent<O> {
    /// The same event, the output at its end (if it is the end) made into another by `f`: how a
    /// consumer of several kinds of runs (a typed one's [`TypedOutput`](crate::TypedOutput), a
    /// text one's [`RunOutput`]) reads their events as one kind.
    pub fn map_output<P>(self, f: impl FnOnce(O) -> P) -> RunEvent<P> {
        match self {
            RunEvent::StepStarted { step } => RunEvent::StepStarted { step },
            RunEvent::TextDelta(text) => RunEvent::TextDelta(text),
            RunEvent::ReasoningDelta(text) => RunEvent::ReasoningDelta(text),
            RunEvent::ToolCallRequested(call) => RunEvent::ToolCallRequested(call),
            RunEvent::ToolResult(result) => RunEvent::ToolResult(result),
            RunEvent::StepFinished { step, usage, model } => {
                RunEvent::StepFinished { step, usage, model }
            }
            RunEvent::Summarized(summary) => RunEvent::Summarized(summary),
            RunEvent::SubAgent {
                path,
                call_id,
                event,
            } => RunEvent::SubAgent {
                path,
                call_id,
                event,
            },
            RunEvent::Finished(outcome) => RunEvent::Finished(outcome.map(f)),
        }
    }
}

/// What a run sends its stream while it runs: each event but the end, which the stream makes from
/// the run's outcome. Kept apart from [`RunEvent`] so the queue cannot hold an end, and so its
/// items are not the size of `Finished`'s outcome.
pub(crate) enum LiveEvent {
    StepStarted {
        step: usize,
    },
    TextDelta(String),
    ReasoningDelta(String),
    ToolCallRequested(ToolCall),
    ToolResult(ToolResultMessage),
    StepFinished {
        step: usize,
        usage: Usage,
        model: Option<String>,
    },
    Summarized(Summary),
    SubAgent {
        path: AgentPath,
        call_id: String,
        event: Box<LiveEvent>,
    },
}

impl<O> From<LiveEvent> for RunEvent<O> {
    fn from(event: LiveEvent) -> Self {
        match event {
            LiveEvent::StepStarted { step } => RunEvent::StepStarted { step },
            LiveEvent::TextDelta(text) => RunEvent::TextDelta(text),
            LiveEvent::ReasoningDelta(text) => RunEvent::ReasoningDelta(text),
            LiveEvent::ToolCallRequested(call) => RunEvent::ToolCallRequested(call),
            LiveEvent::ToolResult(result) => RunEvent::ToolResult(result),
            LiveEvent::StepFinished { step, usage, model } => {
                RunEvent::StepFinished { step, usage, model }
            }
            LiveEvent::Summarized(summary) => RunEvent::Summarized(summary),
            LiveEvent::SubAgent {
                path,
                call_id,
                event,
            } => RunEvent::SubAgent {
                path,
                call_id,
                event: Box::new(RunEvent::from(*event)),
            },
        }
    }
}

/// A streamed run's way to its stream: a queue the two share. The run pushes each event as it
/// happens; the stream takes everything queued at once after each poll of the run, so a step's
/// events cost one lock each on the run's side and one a poll on the stream's.
#[derive(Clone)]
#[doc(hidden)]
pub struct EventSender {
    /// Made only by [`RunStream::new`], for the run it polls.
    queue: Arc<Mutex<VecDeque<LiveEvent>>>,
    /// For a run another run started: its agent, and the call of the top run under which it
    /// runs; its events go to the top run's stream tagged with them.
    tag: Option<(AgentPath, String)>,
}

impl EventSender {
    /// Sends `event` to the stream of this run.
    pub(crate) fn send(&self, event: LiveEvent) {
        let event = match &self.tag {
            None => event,
            Some((path, call_id)) => LiveEvent::SubAgent {
                path: path.clone(),
                call_id: call_id.clone(),
                event: Box::new(event),
            },
        };
        self.queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push_back(event);
    }

    /// The sender of a run this run's call `call_id` starts, of the agent at `path`: its events
    /// go to the same stream, tagged with the path and the top run's call they happen under.
    pub(crate) fn for_agent(&self, path: AgentPath, call_id: &str) -> EventSender {
        let under = match &self.tag {
            Some((_, under)) => under.clone(),
            None => call_id.to_owned(),
        };
        EventSender {
            queue: Arc::clone(&self.queue),
            tag: Some((path, under)),
        }
    }
}

impl std::fmt::Debug for EventSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EventSender")
    }
}

/// Lets a streamed run's events out between steps: pending once (waking the task at once), so
/// the stream hands out a step's events before the next step begins. Without it a run whose model
/// and tools never wait (a cache, a test double) would keep every event until its end, and the
/// queue would hold them all.
#[derive(Default)]
pub(crate) struct HandOver {
    handed: bool,
}

impl std::future::Future for HandOver {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<()> {
        if self.handed {
            return Poll::Ready(());
        }
        self.handed = true;
        context.waker().wake_by_ref();
        Poll::Pending
    }
}

/// The stream of a run's events, then its end ([`RunEvent::Finished`]): what
/// [`RunRequest::stream`](crate::RunRequest::stream) returns.
pub struct RunStream<'a, O = RunOutput> {
    run: Option<BoxFuture<'a, Result<O, RunError>>>,
    /// Where the run sends its events.
    sent: Arc<Mutex<VecDeque<LiveEvent>>>,
    /// Events taken from `sent`, not yet handed out.
    ready: VecDeque<LiveEvent>,
    outcome: Option<Result<O, RunError>>,
}

impl<'a, O> RunStream<'a, O> {
    /// The stream of the run `run` makes, given the sender of its events.
    pub(crate) fn new(run: impl FnOnce(EventSender) -> BoxFuture<'a, Result<O, RunError>>) -> Self {
        let sent = Arc::new(Mutex::new(VecDeque::new()));
        let events = EventSender {
            queue: Arc::clone(&sent),
            tag: None,
        };
        RunStream {
            run: Some(run(events)),
            sent,
            ready: VecDeque::new(),
            outcome: None,
        }
    }
}

// Nothing in it is pinned in place: the run is boxed.
impl<O> Unpin for RunStream<'_, O> {}

impl<O> Stream for RunStream<'_, O> {
    type Item = RunEvent<O>;

    fn poll_next(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Option<RunEvent<O>>> {
        let this = &mut *self;
        loop {
            // Events first: everything the run sent comes out before its end.
            if let Some(event) = this.ready.pop_front() {
                return Poll::Ready(Some(event.into()));
            }
            let Some(run) = this.run.as_mut() else {
                // The run is over and every event is out: its end, once.
                return Poll::Ready(this.outcome.take().map(RunEvent::Finished));
            };
            let polled = run.as_mut().poll(context);
            // What it sent during the poll, all at once: `ready` is empty here, so the two
            // swap places.
            std::mem::swap(
                &mut this.ready,
                &mut this.sent.lock().unwrap_or_else(PoisonError::into_inner),
            );
            match polled {
                // Drain what it sent last, then finish.
                Poll::Ready(outcome) => {
                    this.outcome = Some(outcome);
                    this.run = None;
                }
                // Events it sent before waiting come out now; the run wakes the task itself.
                Poll::Pending if this.ready.is_empty() => return Poll::Pending,
                Poll::Pending => {}
            }
        }
    }
}
