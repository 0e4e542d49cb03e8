//! A context policy that summarizes: once a conversation outgrows its window, the oldest turns
//! are left out and a model's summary of them stands in their place. The summary is made once per
//! cut and kept with the conversation, and the cut is set with room to grow, so the requests
//! after it reuse it (their prefix stays the same, which prompt caches reward) until the kept
//! part outgrows the window again; then the next summary takes in the last one.

use std::sync::Arc;

use super::{ContextPolicy, Shape, Summary, Turns};
use crate::message::Message;
use crate::model::{ChatRequest, Model, ModelError};
use crate::tool::BoxFuture;

/// Keeps a conversation within `max_tokens` tokens by summarizing its oldest turns with a model:
/// when a request would pass the window, the turns before the latest that fit in half of it are
/// left out, and the model's summary of them (with the last summary, when there was one) is sent
/// in their place ([`Texts::context_summary`](crate::Texts::context_summary)). The summarizer
/// gets the turns left out as JSON and the run's words for the task
/// ([`Texts::summary_request`](crate::Texts::summary_request)), through
/// [`Turns::ask`] (journaled in a durable run).
///
/// A summary is made once for each cut and kept with the conversation
/// ([`Summary`]: in the run's output, and stored by its session), so later requests, runs and
/// processes send it again until what it keeps outgrows the window.
pub struct Summarize {
    model: Arc<dyn Model>,
    max_tokens: u64,
    keep_tokens: u64,
}

impl Summarize {
    /// A window of `max_tokens` tokens, older turns summarized by `model` (the agent's own, or a
    /// smaller one).
    pub fn new(model: impl Model + 'static, max_tokens: u64) -> Self {
        Summarize {
            model: Arc::new(model),
            max_tokens,
            keep_tokens: max_tokens / 2,
        }
    }

    /// How much a cut keeps, at most, so that the requests after it have room to grow before the
    /// next summary: half the window by default.
    pub fn keeping(mut self, tokens: u64) -> Self {
        self.keep_tokens = tokens.min(self.max_tokens);
        self
    }

    async fn fit(&self, turns: &Turns<'_>) -> Result<Shape, ModelError> {
        let messages = turns.messages();
        let unit_at = |cut: usize| {
            turns
                .units()
                .iter()
                .position(|unit| unit.messages.start == cut)
        };
        let summary_tokens = |summary: &str| summary.len() as u64 / 4;
        // The summary known that stands for the most, where a unit starts.
        let last = (turns.summaries().iter())
            .filter_map(|summary| Some((summary, unit_at(summary.covers.end)?)))
            .max_by_key(|(summary, _)| summary.covers.end);
        // The last cut, while what it keeps still fits.
        if let Some((last, first)) = last
            && turns.tokens_from(first) + summary_tokens(&last.text) <= self.max_tokens
        {
            return Ok(Shape::from_unit(first).with_summary(last.clone()));
        }
        if last.is_none() && turns.tokens() <= self.max_tokens {
            return Ok(Shape::everything());
        }
        // A new cut: the earliest turn whose start keeps at most `keep_tokens`.
        let Some(first) = turns
            .turn_starts()
            .find(|&first| turns.tokens_from(first) <= self.keep_tokens)
            .or_else(|| turns.turn_starts().last())
            .map(|first| turns.earliest_cut(first))
            .filter(|&first| first > 0)
        else {
            return Ok(Shape::everything());
        };
        let cut = turns.units()[first].messages.start;
        let from = last.map_or(0, |(last, _)| last.covers.end);
        let left_out: Vec<&Message> = messages[from.min(cut)..cut]
            .iter()
            .filter(|message| !matches!(message, Message::System { .. }))
            .collect();
        let transcript = serde_json::to_string(&left_out).unwrap_or_default();
        let previous = last.map(|(last, _)| last.text.as_str());
        let texts = turns.texts();
        let request = [Message::user(texts.summary_request(previous, &transcript))];
        let reply = turns
            .ask(
                &*self.model,
                ChatRequest::new(&request, &[]).with_texts(texts),
            )
            .await?;
        let summary = Summary::new(0..cut, reply.message.content).made_by(reply.model, reply.usage);
        Ok(Shape::from_unit(first).with_summary(summary))
    }
}

impl std::fmt::Debug for Summarize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Summarize")
            .field("max_tokens", &self.max_tokens)
            .field("keep_tokens", &self.keep_tokens)
            .finish_non_exhaustive()
    }
}

impl ContextPolicy for Summarize {
    fn shape<'a>(&'a self, turns: &'a Turns<'a>) -> BoxFuture<'a, Result<Shape, ModelError>> {
        Box::pin(self.fit(turns))
    }
}
