//! Following a task as it goes: its events from a point on, until it ends, waits for the client
//! (when asked to stop there), answers with a message, or its handler stops (with an error, or
//! without saying how the task ended). What a stream sends, what a subscriber reads, and what a
//! blocking `SendMessage` waits for.

use std::collections::VecDeque;
use std::sync::Arc;

use tokio::sync::{oneshot, watch};

use crate::jsonrpc::RpcError;
use crate::tasks::Entry;
use crate::wire::StreamEvent;

/// What a follower reads next.
// Each one is sent on as soon as it is read: a box would only add an allocation.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Next {
    Event(StreamEvent),
    /// The handler refused the message: the error, the last thing read.
    Failed(RpcError),
}

/// A task followed from some event on.
pub(crate) struct Follow {
    entry: Arc<Entry>,
    seen: usize,
    changed: watch::Receiver<usize>,
    /// Whether a wait for the client ends the following (a message's own answer does; a
    /// subscriber reads on until the task ends).
    stop_on_interrupt: bool,
    /// How the handler ended, when this follower started the work (`None` once it has).
    handled: Option<oneshot::Receiver<Result<(), RpcError>>>,
    /// Whether the handler this follower started has returned: nothing more will come.
    handler_over: bool,
    /// Whether anything was read.
    read_any: bool,
    queued: VecDeque<StreamEvent>,
    done: bool,
}

impl Follow {
    /// Follows `entry` from its event `seen` on; `handled` tells how the work this follower
    /// started ended.
    pub(crate) fn new(
        entry: Arc<Entry>,
        seen: usize,
        stop_on_interrupt: bool,
        handled: Option<oneshot::Receiver<Result<(), RpcError>>>,
    ) -> Self {
        let changed = entry.watch();
        Follow {
            entry,
            seen,
            changed,
            stop_on_interrupt,
            handled,
            handler_over: false,
            read_any: false,
            queued: VecDeque::new(),
            done: false,
        }
    }

    /// The next thing to read; `None` once the following is over.
    pub(crate) async fn next(&mut self) -> Option<Next> {
        loop {
            if let Some(event) = self.queued.pop_front() {
                self.read_any = true;
                return Some(Next::Event(event));
            }
            if self.done {
                return None;
            }
            // Marked seen before the events are read, so that a change after it wakes the wait.
            self.changed.borrow_and_update();
            for event in self.entry.events_after(self.seen) {
                self.seen += 1;
                let ends = self.ends(&event);
                self.queued.push_back(event);
                if ends {
                    self.done = true;
                    break;
                }
            }
            if !self.queued.is_empty() {
                continue;
            }
            if self.handler_over {
                self.done = true;
                continue;
            }
            let Some(handled) = &mut self.handled else {
                if self.changed.changed().await.is_err() {
                    self.done = true;
                }
                continue;
            };
            tokio::select! {
                changed = self.changed.changed() => self.done |= changed.is_err(),
                outcome = handled => {
                    self.handled = None;
                    self.handler_over = true;
                    if let Ok(Err(error)) = outcome
                        && !self.read_any
                    {
                        self.done = true;
                        return Some(Next::Failed(error));
                    }
                }
            }
        }
    }

    /// Whether `event` ends the following.
    fn ends(&self, event: &StreamEvent) -> bool {
        match event {
            StreamEvent::Message(_) => true,
            StreamEvent::StatusUpdate(update) => {
                update.status.state.is_terminal()
                    || (self.stop_on_interrupt && update.status.state.is_interrupted())
            }
            _ => false,
        }
    }
}
