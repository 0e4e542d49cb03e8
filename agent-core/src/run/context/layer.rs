//! The model-call layer that applies a context policy: the agent's [`ContextLayer`] (its policy,
//! and what it learned of how the provider counts tokens), and [`InRun`], the layer in one run,
//! with the summaries the run knows and the history it sent last.

use std::hash::{DefaultHasher, Hasher};
use std::sync::{Arc, Mutex};

use super::estimate::{Calibration, TokenEstimate};
use super::{ContextPolicy, RunSummaries, Shape, Turns, message_hash};
use crate::message::Message;
use crate::model::{ChatRequest, ChatResponse, ModelError};
use crate::run::journal::Journal;
use crate::run::seams::{ModelCall, ModelLayer, Next};
use crate::tool::BoxFuture;

/// An agent's context policy, and how the provider counts tokens, learned from each reply.
pub(crate) struct ContextLayer {
    policy: Arc<dyn ContextPolicy>,
    calibration: Calibration,
}

impl ContextLayer {
    /// The layer for `policy`.
    pub(crate) fn new(policy: impl ContextPolicy) -> Self {
        ContextLayer {
            policy: Arc::new(policy),
            calibration: Calibration::default(),
        }
    }

    /// The layer in a run that knows `summaries`, journaled in `journal` when durable.
    pub(crate) fn in_run<'r>(
        &'r self,
        summaries: &'r RunSummaries,
        journal: Option<&'r dyn Journal>,
    ) -> InRun<'r> {
        InRun {
            layer: self,
            summaries,
            journal,
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
    journal: Option<&'r dyn Journal>,
    /// The history the last request sent, to extend rather than build again when the next one
    /// has the same shape (a run's history only grows).
    built: Mutex<Option<Built>>,
}

/// A history sent, and what it was made from.
struct Built {
    shape: Shape,
    /// It was made from the first `from` messages of the run's history...
    from: usize,
    /// ...the last of which hashes to this.
    last: u64,
    history: Vec<Message>,
}

impl Built {
    /// The history `shape` makes of `turns`, extending this one when it was made under the same
    /// shape from the start of the same history: only the messages added since are copied.
    fn extend(self, shape: &Shape, turns: &Turns<'_>) -> Option<Vec<Message>> {
        let messages = turns.messages();
        let same_start = self.from > 0
            && messages.len() >= self.from
            && hash_of(&messages[self.from - 1]) == self.last;
        // A result sent as a note among the new messages needs the whole build.
        let notes_before =
            (shape.shortened.iter()).all(|&unit| turns.units()[unit].messages.end <= self.from);
        if *shape != self.shape || !same_start || !notes_before {
            return None;
        }
        let mut history = self.history;
        history.extend_from_slice(&messages[self.from..]);
        Some(history)
    }
}

fn hash_of(message: &Message) -> u64 {
    let mut hasher = DefaultHasher::new();
    message_hash(message, &mut hasher);
    hasher.finish()
}

/// The tokens of `request` at scale one, to measure the provider's count against.
fn unscaled_tokens(request: &ChatRequest<'_>) -> u64 {
    let estimate = TokenEstimate::unscaled();
    estimate.tools(request.tools)
        + request
            .messages
            .iter()
            .map(|message| estimate.message(message))
            .sum::<u64>()
}

impl InRun<'_> {
    /// The history `shape` makes of `turns`: the last request's extended, or built anew.
    fn history(&self, shape: &Shape, turns: &Turns<'_>) -> Vec<Message> {
        let built = self
            .built
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .take();
        built
            .and_then(|built| built.extend(shape, turns))
            .unwrap_or_else(|| turns.apply(shape, turns.texts()))
    }

    /// Keeps `history`, made under `shape` from `messages`, for the next request to extend.
    fn keep(&self, shape: Shape, messages: &[Message], history: Vec<Message>) {
        let built = messages.last().map(|last| Built {
            shape,
            from: messages.len(),
            last: hash_of(last),
            history,
        });
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
                let turns = Turns::estimated(&request, &calibration.estimate()).in_run(
                    &known,
                    self.journal,
                    step,
                );
                let mut shape = self.layer.policy.shape(&turns).await?;
                // Tried again only when the policy cuts tighter.
                if let Some((_, error)) = refused.take_if(|(before, _)| *before == shape) {
                    return Err(error);
                }
                // A summary stands for what the shape leaves out.
                let cut = turns.cut_of(&shape);
                if let Some(summary) = &mut shape.summary {
                    summary.covers = 0..cut;
                    if cut > 0 {
                        self.summaries.add(summary.clone());
                    }
                }
                let history = (!shape.keeps_everything()).then(|| self.history(&shape, &turns));
                let sent = match &history {
                    Some(history) => ChatRequest {
                        messages: history,
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
                let tokens = reply.is_ok().then(|| unscaled_tokens(&sent));
                if let Some(history) = history {
                    self.keep(shape.clone(), request.messages, history);
                }
                match reply {
                    Ok(reply) => {
                        calibration.measured(tokens.unwrap_or(0), reply.usage.input_tokens);
                        return Ok(reply);
                    }
                    // The estimate fell short of the provider's count: estimate higher, once.
                    Err(error @ ModelError::ContextOverflow { .. }) if refused.is_none() => {
                        calibration.overflowed();
                        refused = Some((shape, error));
                    }
                    Err(error) => return Err(error),
                }
            }
        })
    }
}
