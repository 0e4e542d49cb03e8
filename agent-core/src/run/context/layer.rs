//! The model-call layer that applies a context policy: the agent's [`ContextLayer`] (its policy,
//! and what it learned of how the provider counts tokens), and [`InRun`], the layer in one run,
//! with the summaries the run knows and the history it sent last.

use std::hash::{DefaultHasher, Hasher};
use std::sync::{Arc, Mutex};

use super::estimate::{Calibration, TokenCounter, TokenEstimate};
use super::{
    ContextPolicy, LastSent, Recall, RunSummaries, Shape, Turns, message_hash, recall_definition,
};
use crate::message::Message;
use crate::model::{ChatRequest, ChatResponse, ModelError};
use crate::run::events::{EventSender, LiveEvent};
use crate::run::journal::Journal;
use crate::run::seams::{ModelCall, ModelLayer, Next};
use crate::tool::{BoxFuture, ToolDef};

/// An agent's context policy, how the provider counts tokens (learned from each reply), and the
/// call policy that answers a model reading back what the policy left out.
pub(crate) struct ContextLayer {
    policy: Arc<dyn ContextPolicy>,
    calibration: Calibration,
    pub(crate) recall: Recall,
}

impl ContextLayer {
    /// The layer for `policy`.
    pub(crate) fn new(policy: impl ContextPolicy) -> Self {
        let recall = Recall {
            page: policy.recall_page(),
        };
        ContextLayer {
            policy: Arc::new(policy),
            calibration: Calibration::default(),
            recall,
        }
    }

    /// The layer in a run that knows `summaries` and what its last request `sent`, journaled in `journal` when durable, its
    /// tokens counted by `counter` when the agent has one, telling `events` of each summary made
    /// when streamed.
    pub(crate) fn in_run<'r>(
        &'r self,
        summaries: &'r RunSummaries,
        sent: &'r LastSent,
        journal: Option<&'r dyn Journal>,
        counter: Option<&'r dyn TokenCounter>,
        events: Option<EventSender>,
    ) -> InRun<'r> {
        InRun {
            layer: self,
            summaries,
            sent,
            journal,
            counter,
            events,
            built: Mutex::new(None),
        }
    }
}

impl std::fmt::Debug for ContextLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContextLayer").finish_non_exhaustive()
    }
}

/// The context layer in one run: before every request it asks the policy for a [`Shape`] of the
/// history (with the summaries the run knows) and sends the history it makes; a summary the
/// policy made is added to the run's. A request refused as longer than the model's window
/// ([`ModelError::ContextOverflow`]: the estimate fell short) is shaped again with a higher
/// estimate and sent once more, when that cuts it tighter.
pub(crate) struct InRun<'r> {
    layer: &'r ContextLayer,
    summaries: &'r RunSummaries,
    /// What the last request sent: where it cut, for the policy to keep while it fits.
    sent: &'r LastSent,
    journal: Option<&'r dyn Journal>,
    counter: Option<&'r dyn TokenCounter>,
    events: Option<EventSender>,
    /// The history the last request sent, to make the next one from rather than build it again
    /// (a run's history only grows, and a cut only moves on).
    built: Mutex<Option<Built>>,
}

/// A history sent, and what it was made from.
struct Built {
    /// It was made from the first `from` messages of the run's history...
    from: usize,
    /// ...the last of which hashes to this...
    last: u64,
    /// ...keeping them from `cut` on, verbatim (no result sent as a note), after the first
    /// `front` messages of `history`.
    cut: usize,
    front: usize,
    history: Vec<Message>,
}

impl Built {
    /// `history`, made under `shape` from `turns`, kept for the next request when it keeps its
    /// messages verbatim.
    fn new(shape: &Shape, turns: &Turns<'_>, history: Vec<Message>) -> Option<Built> {
        let messages = turns.messages();
        let cut = turns.cut_of(shape);
        let front = history.len() - (messages.len() - cut);
        (messages.last())
            .filter(|_| shape.shortened.is_empty())
            .map(|last| Built {
                from: messages.len(),
                last: hash_of(last),
                cut,
                front,
                history,
            })
    }

    /// The history `shape` makes of `turns`, made from this one when it was made from the start
    /// of the same history and keeps its messages verbatim: its front is made anew (a few
    /// messages), the messages it keeps still are moved over, and only the messages added since
    /// are copied.
    fn extend(mut self, shape: &Shape, turns: &Turns<'_>) -> Option<Vec<Message>> {
        let messages = turns.messages();
        let same_start = self.from > 0
            && messages.len() >= self.from
            && hash_of(&messages[self.from - 1]) == self.last;
        let cut = turns.cut_of(shape);
        if !same_start || !shape.shortened.is_empty() || cut < self.cut {
            return None;
        }
        let mut history = Vec::with_capacity(messages.len() - cut + self.front + 1);
        turns.front(shape, turns.texts(), &mut history);
        let still_kept = (self.front + (cut - self.cut)).min(self.history.len());
        history.extend(self.history.drain(still_kept..));
        history.extend_from_slice(&messages[self.from.max(cut)..]);
        Some(history)
    }
}

fn hash_of(message: &Message) -> u64 {
    let mut hasher = DefaultHasher::new();
    message_hash(message, &mut hasher);
    hasher.finish()
}

/// The tokens of `request` at scale one (counted by `counter` when there is one), to measure the
/// provider's count against.
fn unscaled_tokens(request: &ChatRequest<'_>, counter: Option<&dyn TokenCounter>) -> u64 {
    let estimate = TokenEstimate::unscaled().counting_with(counter);
    estimate.tools(request.tools)
        + request
            .messages
            .iter()
            .map(|message| estimate.message(message))
            .sum::<u64>()
}

impl InRun<'_> {
    /// The history to send under `shape` (`None`: the history as it is): the last request's
    /// extended, or built anew. A summary in the shape stands for what it leaves out, and is
    /// added to the run's.
    fn history(&self, shape: &mut Shape, turns: &Turns<'_>) -> Option<Vec<Message>> {
        let cut = turns.cut_of(shape);
        if let Some(summary) = &mut shape.summary {
            summary.covers = 0..cut;
            if cut > 0
                && self.summaries.add(summary.clone())
                && let Some(events) = &self.events
            {
                events.send(LiveEvent::Summarized(summary.clone()));
            }
        }
        if shape.keeps_everything() {
            return None;
        }
        let built = self
            .built
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .take();
        let history = built
            .and_then(|built| built.extend(shape, turns))
            .unwrap_or_else(|| turns.apply(shape, turns.texts()));
        Some(history)
    }

    /// Keeps `history`, made under `shape` from `turns`, for the next request to extend (when it
    /// keeps its messages verbatim).
    fn keep(&self, shape: &Shape, turns: &Turns<'_>, history: Vec<Message>) {
        let built = Built::new(shape, turns, history);
        *self
            .built
            .lock()
            .unwrap_or_else(|poison| poison.into_inner()) = built;
    }
}

impl<S: Sync> ModelLayer<S> for InRun<'_> {
    fn call<'a>(
        &'a self,
        call: ModelCall<'a, S>,
        next: Next<'a, S>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async move {
            let (context, step, request) = (call.context, call.step, call.request);
            let calibration = &self.layer.calibration;
            // The shape the provider refused as too long, and its refusal: at most once.
            let mut refused: Option<(Shape, ModelError)> = None;
            loop {
                let known = self.summaries.known();
                let estimate = calibration.estimate().counting_with(self.counter);
                let last = self.sent.last();
                let turns = Turns::estimated(&request, &estimate)
                    .in_run(&known, self.journal, step)
                    .with_model_window(calibration.model_window())
                    .after(last.map(|last| (last.kept_from, last.shortened_to)));
                let mut shape = self.layer.policy.shape(&turns).await?;
                let (kept_from, shortened_to) = turns.cut_and_shortened(&shape);
                self.sent.update(|last| {
                    last.kept_from = kept_from;
                    last.shortened_to = shortened_to;
                });
                // Tried again only when the policy cuts tighter.
                if let Some((_, error)) = refused.take_if(|(before, _)| *before == shape) {
                    return Err(error);
                }
                let history = self.history(&mut shape, &turns);
                // Results left out can be read back: the request offers the tool for it.
                let offered: Vec<ToolDef>;
                let tools = if shape.shortened.is_empty() {
                    request.tools
                } else {
                    let recall = recall_definition(request.texts);
                    offered = request.tools.iter().cloned().chain([recall]).collect();
                    &offered
                };
                let sent = match &history {
                    Some(history) => ChatRequest {
                        messages: history,
                        tools,
                        ..request
                    },
                    None => request,
                };
                let call = ModelCall {
                    context,
                    step,
                    request: sent,
                };
                let reply = next.call(call).await;
                let estimated = unscaled_tokens(&sent, self.counter);
                if let Some(history) = history {
                    self.keep(&shape, &turns, history);
                }
                match reply {
                    Ok(reply) => {
                        calibration.measured(estimated, reply.usage.input_tokens);
                        return Ok(reply);
                    }
                    // The estimate fell short of the provider's count: learn what the refusal
                    // says (the count, the model's window) and shape again, once.
                    Err(error @ ModelError::ContextOverflow { tokens, limit, .. })
                        if refused.is_none() =>
                    {
                        if let Some(window) = calibration.overflowed(estimated, tokens, limit) {
                            tracing::warn!(
                                model_window = window,
                                "a request was refused as longer than the model's context window, \
                                 which is {window} tokens: the context policy keeps requests \
                                 within it from now on (a window set larger than the model's \
                                 costs a refused request)"
                            );
                        }
                        refused = Some((shape, error));
                    }
                    Err(error) => return Err(error),
                }
            }
        })
    }
}

/// The context layer's work for one request of a run, without the model call: for the
/// benchmarks, not for applications.
#[cfg(feature = "bench-internals")]
#[doc(hidden)]
pub mod __bench {
    use std::future::Future;
    use std::pin::pin;
    use std::sync::Mutex;
    use std::task::{Context, Poll, Waker};

    use super::{Built, ContextLayer, LastSent, RunSummaries, Turns};
    use crate::context::ContextPolicy;
    use crate::message::Message;
    use crate::model::ChatRequest;

    /// A run's context layer between its requests.
    pub struct Run {
        layer: ContextLayer,
        summaries: RunSummaries,
        sent: LastSent,
        built: Option<Built>,
    }

    impl Run {
        /// A run of an agent with `policy`.
        pub fn new(policy: impl ContextPolicy) -> Self {
            Run {
                layer: ContextLayer::new(policy),
                summaries: RunSummaries::default(),
                sent: LastSent::default(),
                built: None,
            }
        }

        /// What the layer does for `request` before the model call (the policy polled once: it
        /// must answer at once), and after it: the length of the history sent.
        pub fn request(&mut self, request: &ChatRequest<'_>) -> usize {
            let run = super::InRun {
                layer: &self.layer,
                summaries: &self.summaries,
                sent: &self.sent,
                journal: None,
                counter: None,
                events: None,
                built: Mutex::new(self.built.take()),
            };
            let known = self.summaries.known();
            let last = self.sent.last();
            let turns = Turns::estimated(request, &self.layer.calibration.estimate())
                .in_run(&known, None, 1)
                .after(last.map(|last| (last.kept_from, last.shortened_to)));
            let mut shape = match pin!(self.layer.policy.shape(&turns))
                .as_mut()
                .poll(&mut Context::from_waker(Waker::noop()))
            {
                Poll::Ready(shape) => shape.expect("a shape"),
                Poll::Pending => panic!("the policy waited"),
            };
            let (kept_from, shortened_to) = turns.cut_and_shortened(&shape);
            self.sent.update(|last| {
                last.kept_from = kept_from;
                last.shortened_to = shortened_to;
            });
            let history = run.history(&mut shape, &turns);
            let sent: &[Message] = history.as_deref().unwrap_or(request.messages);
            let length = sent.len();
            let tokens = super::unscaled_tokens(&ChatRequest::new(sent, request.tools), None);
            self.layer.calibration.measured(tokens, tokens);
            if let Some(history) = history {
                run.keep(&shape, &turns, history);
            }
            self.built = run.built.into_inner().unwrap_or_default();
            length
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{AssistantMessage, ToolCall, ToolResultMessage};
    use crate::texts::English;

    /// Rounds of question, call, result, answer, with a system message among them.
    fn conversation(rounds: usize) -> Vec<Message> {
        let mut messages = vec![Message::system("Be brief.")];
        for round in 0..rounds {
            messages.push(Message::user(format!("question {round}")));
            let call = ToolCall::new(format!("c{round}"), "look", "{}");
            messages.push(Message::Assistant(AssistantMessage::tool_calls([call])));
            messages.push(Message::Tool(ToolResultMessage::new(
                format!("c{round}"),
                "r",
            )));
            messages.push(Message::Assistant(AssistantMessage::text("answer")));
            if round == 3 {
                messages.push(Message::system("A reminder."));
            }
        }
        messages
    }

    #[test]
    fn a_history_made_from_the_last_one_is_the_one_made_anew() {
        let messages = conversation(12);
        let shapes = |turns: &Turns<'_>| {
            let units = turns.units().len();
            (0..units).flat_map(|first| {
                [
                    Shape::from_unit(first),
                    Shape::from_unit(first).with_summary("what was said"),
                ]
            })
        };
        for before in [9, 20, 30] {
            let earlier = ChatRequest::new(&messages[..before], &[]);
            let earlier = Turns::new(&earlier);
            for after in [before, before + 1, before + 4, before + 13, messages.len()] {
                let later = ChatRequest::new(&messages[..after], &[]);
                let later = Turns::new(&later);
                for first in shapes(&earlier) {
                    for second in shapes(&later) {
                        let history = earlier.apply(&first, &English);
                        let built = Built::new(&first, &earlier, history).unwrap();
                        let made = built.extend(&second, &later);
                        if let Some(made) = made {
                            assert_eq!(
                                made,
                                later.apply(&second, &English),
                                "{before} then {after} messages, {first:?} then {second:?}"
                            );
                        } else {
                            assert!(later.cut_of(&second) < earlier.cut_of(&first));
                        }
                    }
                }
            }
        }
    }
}
