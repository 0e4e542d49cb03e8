//! The guards on the input and on each request, as a model-call layer: those before the call
//! check the request first; those beside it check at the same time as the model answers (the
//! input too, at the run's first call), and until they have answered nothing the model says is
//! streamed and the reply is not handed on (so no tool runs). A trip fires the tripwire: the
//! call in flight is dropped, and the run ends with the trip.

use std::future::{pending, ready};
use std::pin::pin;

use futures_util::future::{Either, select, try_join};

use super::checks::{AnswerText, Asking, Folded, GuardRun, Progress, Subject, Waiting};
use super::gate::Settled;
use super::{Place, Tripped, What};
use crate::content::Part;
use crate::message::Message;
use crate::model::{ChatRequest, ChatResponse, ModelError};
use crate::run::events::LiveEvent;
use crate::run::seams::{ModelCall, ModelLayer, Next};
use crate::tool::BoxFuture;

/// The guards of one run's part at the model-call seam.
impl<S: Sync> ModelLayer<S> for GuardRun<'_> {
    fn call<'a>(
        &'a self,
        call: ModelCall<'a, S>,
        next: Next<'a, S>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let run = self;
        let step = call.step;
        run.begin_step(step);
        let input = run.take_new_input() && run.checks(Place::Input, Some(true));
        let beside = input || run.checks(Place::Request, Some(true));
        // The guards before the call that answer at once are asked here.
        let before = asking(Place::Request, step, false);
        let waiting = match run.checks(Place::Request, Some(false)) {
            false => None,
            true => match run.fold_now(before, &mut Request(&call.request), 0) {
                Progress::Done(Folded::Tripped) => return Box::pin(pending()),
                Progress::Done(_) => None,
                Progress::Waiting(waiting) => Some(waiting),
            },
        };
        if waiting.is_none() && !beside {
            // Nothing to wait for: the call goes on as it is.
            if let Some(gate) = &run.gate {
                gate.begin(false);
            }
            return next.call(call);
        }
        guarded(run, waiting, input, beside, call, next)
    }
}

/// A model call that waits for guards: the one before it still to answer (`waiting`, and those
/// after it), then, when `beside`, those beside it (on the input too when `input`), at the same
/// time as the model (one after the other in a durable run). A trip drops the call in flight;
/// the call never completes. (Out of line: a call whose guards answered at once runs through
/// the layer's short path alone.)
#[inline(never)]
fn guarded<'a, S: Sync>(
    run: &'a GuardRun<'_>,
    waiting: Option<Waiting<'a>>,
    input: bool,
    beside: bool,
    call: ModelCall<'a, S>,
    next: Next<'a, S>,
) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
    Box::pin(guarded_call(run, waiting, input, beside, call, next))
}

async fn guarded_call<S: Sync>(
    run: &GuardRun<'_>,
    waiting: Option<Waiting<'_>>,
    input: bool,
    beside: bool,
    call: ModelCall<'_, S>,
    next: Next<'_, S>,
) -> Result<ChatResponse, ModelError> {
    let (step, request) = (call.step, call.request);
    if let Some(waiting) = waiting {
        let before = asking(Place::Request, step, false);
        if let Folded::Tripped = run.finish(before, &mut Request(&request), waiting).await {
            return pending().await;
        }
    }
    if let Some(gate) = &run.gate {
        gate.begin(beside);
    }
    if !beside {
        return next.call(call).await;
    }
    // A durable run journals the guards' verdicts and the model call in one order on every
    // replay: the guards beside the model go first.
    if run.is_journaled() {
        let through = beside_through(run, input, step, &request).await;
        if let Some(gate) = &run.gate {
            gate.beside_answered(through);
        }
        return match through {
            true => next.call(call).await,
            false => pending().await,
        };
    }
    let model = pin!(next.call(call));
    let guards = pin!(beside_through(run, input, step, &request));
    let (through, reply) = match select(model, guards).await {
        Either::Left((reply, guards)) => (guards.await, Some(reply)),
        Either::Right((through, model)) => match through {
            true => (true, Some(model.await)),
            // The call in flight is dropped here.
            false => (false, None),
        },
    };
    if let Some(gate) = &run.gate {
        gate.beside_answered(through);
    }
    match (through, reply) {
        (true, Some(reply)) => reply,
        // A reply the guards stopped was made, and paid for, all the same.
        (false, Some(Ok(stopped))) => {
            run.spend(stopped.usage);
            pending().await
        }
        _ => pending().await,
    }
}

/// Whether the guards beside the model let the input (when `input`) and the request through:
/// every one of them at once (one after another in a durable run), until one trips.
async fn beside_through(
    run: &GuardRun<'_>,
    input: bool,
    step: usize,
    request: &ChatRequest<'_>,
) -> bool {
    let on_input = async {
        if !input {
            return Ok(());
        }
        let input = Input(new_input(request.messages));
        through(
            run.check_at_once(asking(Place::Input, 0, true), &input)
                .await,
        )
    };
    let on_request = async {
        let asking = asking(Place::Request, step, true);
        through(run.check_at_once(asking, &Request(request)).await)
    };
    match run.is_journaled() {
        true => on_input.await.is_ok() && on_request.await.is_ok(),
        false => try_join(on_input, on_request).await.is_ok(),
    }
}

/// Whether the guards let it through, as a result to stop at the first that did not.
fn through(folded: Folded) -> Result<(), ()> {
    match folded {
        Folded::Tripped => Err(()),
        _ => Ok(()),
    }
}

/// A request, as the guards see it (a rewrite of it trips before it is taken).
struct Request<'a>(&'a ChatRequest<'a>);

impl Subject for Request<'_> {
    fn what(&self) -> What<'_> {
        What::Request(self.0)
    }

    fn rewrite(&mut self, _text: String) {}
}

/// The input, as the guards beside the model see it (a rewrite of it trips before it is taken).
struct Input<'a>(&'a [Message]);

impl Subject for Input<'_> {
    fn what(&self) -> What<'_> {
        What::Input(self.0)
    }

    fn rewrite(&mut self, _text: String) {}
}

fn asking(place: Place, step: usize, beside: bool) -> Asking<'static> {
    Asking {
        place,
        step,
        key: "",
        beside: Some(beside),
        partial: false,
    }
}

impl GuardRun<'_> {
    /// The guards before the model check the run's new input, at the end of `messages`, before
    /// the run starts. A rewrite is the input's text: its last message's words, the text of the
    /// messages before it going (a message of nothing but text goes whole), their other parts
    /// staying. `None` when they let it through at once; else the trip, if one tripped, when the
    /// future completes (the guards that answer at once are asked here).
    pub(crate) fn check_input<'a>(
        &'a self,
        messages: &'a mut Vec<Message>,
    ) -> Option<BoxFuture<'a, Option<Tripped>>> {
        let start = messages.len() - new_input(messages).len();
        let mut input = Rewritable { messages, start };
        let asking = asking(Place::Input, 0, false);
        match self.fold_now(asking, &mut input, 0) {
            Progress::Done(Folded::Tripped) => Some(Box::pin(ready(self.tripped().cloned()))),
            Progress::Done(_) => None,
            Progress::Waiting(waiting) => Some(Box::pin(async move {
                match self.finish(asking, &mut input, waiting).await {
                    Folded::Tripped => self.tripped().cloned(),
                    _ => None,
                }
            })),
        }
    }
}

/// The input, as the guards before the model see it: the messages from `start` on.
struct Rewritable<'a> {
    messages: &'a mut Vec<Message>,
    start: usize,
}

impl Subject for Rewritable<'_> {
    fn what(&self) -> What<'_> {
        What::Input(&self.messages[self.start..])
    }

    fn rewrite(&mut self, text: String) {
        let last = self.messages.len().saturating_sub(1);
        for message in &mut self.messages[self.start..] {
            if let Message::User { content, parts } = message {
                content.clear();
                parts.retain(|part| !matches!(part, Part::Text { .. }));
            }
        }
        if let Some(Message::User { content, .. }) = self.messages.get_mut(last) {
            *content = text;
        }
        // A message the rewrite left empty is no message.
        let (start, mut position) = (self.start, 0);
        self.messages.retain(|message| {
            let empty = matches!(message, Message::User { content, parts }
                if content.is_empty() && parts.is_empty());
            let keep = position < start || position == last || !empty;
            position += 1;
            keep
        });
    }
}

impl GuardRun<'_> {
    /// Passes one event of the model's stream on, through the gate when the run has one: text
    /// that reaches the hold-back window is checked by the guards on the answer (as partial
    /// text) before it goes. `false`: a guard tripped (the stream is to stop).
    pub(crate) async fn stream(&self, event: LiveEvent) -> bool {
        let Some(gate) = &self.gate else {
            return true;
        };
        let Some(text) = gate.take(event) else {
            return true;
        };
        let characters = text.chars().count();
        let key = format!("its first {characters} characters");
        let asking = Asking {
            place: Place::Answer,
            step: self.step(),
            key: &key,
            beside: None,
            partial: true,
        };
        let mut checked = AnswerText::new(text, true);
        match self.fold(asking, &mut checked).await {
            Folded::Tripped => {
                gate.settle(Settled::Stopped);
                false
            }
            _ => {
                gate.allow(characters);
                true
            }
        }
    }
}

/// A run's new input: the messages of the person's turn at the end of the conversation.
pub(crate) fn new_input(messages: &[Message]) -> &[Message] {
    let start = (messages.iter())
        .rposition(|message| !matches!(message, Message::User { .. }))
        .map_or(0, |last| last + 1);
    &messages[start..]
}
