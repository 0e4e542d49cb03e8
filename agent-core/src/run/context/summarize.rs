//! A context policy that summarizes: once a conversation outgrows its window, the oldest turns
//! are left out and a model's summary of them stands in their place. The summary is made once per
//! cut and remembered, and the cut is set with room to grow, so the requests after it reuse it
//! (their prefix stays the same, which prompt caches reward) until the kept part outgrows the
//! window again; then the next summary takes in the last one.

use std::hash::{DefaultHasher, Hasher};
use std::sync::{Arc, Mutex};

use super::{ContextPolicy, Shape, Turns, fingerprint, message_hash};
use crate::message::Message;
use crate::model::{ChatRequest, Model, ModelError};
use crate::texts::Texts;
use crate::tool::BoxFuture;

/// How many conversations' summaries a policy remembers (the agent's runs share it).
const REMEMBERED: usize = 64;

/// Keeps a conversation within `max_tokens` tokens by summarizing its oldest turns with a model:
/// when a request would pass the window, the turns before the latest that fit in half of it are
/// left out, and the model's summary of them (with the last summary, when there was one) is sent
/// in their place ([`Texts::context_summary`]). The summarizer gets the turns left out as JSON
/// and the run's words for the task ([`Texts::summary_request`]).
///
/// The summary is made once for each cut and remembered by the policy (for the last 64
/// conversations), not stored with the conversation: a new process makes it again.
pub struct Summarize {
    model: Arc<dyn Model>,
    max_tokens: u64,
    keep_tokens: u64,
    remembered: Mutex<Vec<Remembered>>,
}

/// A summary made, and the history it stands for: the messages before `cut`, as `prefix` hashes
/// them.
#[derive(Clone)]
struct Remembered {
    cut: usize,
    prefix: u64,
    summary: String,
}

impl Summarize {
    /// A window of `max_tokens` tokens, older turns summarized by `model` (the agent's own, or a
    /// smaller one).
    pub fn new(model: impl Model + 'static, max_tokens: u64) -> Self {
        Summarize {
            model: Arc::new(model),
            max_tokens,
            keep_tokens: max_tokens / 2,
            remembered: Mutex::new(Vec::new()),
        }
    }

    /// How much a cut keeps, at most, so that the requests after it have room to grow before the
    /// next summary: half the window by default.
    pub fn keeping(mut self, tokens: u64) -> Self {
        self.keep_tokens = tokens.min(self.max_tokens);
        self
    }

    /// The summary remembered for the longest prefix of `messages` it stands for.
    fn recall(&self, messages: &[Message]) -> Option<Remembered> {
        let remembered = self
            .remembered
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        // One walk over the history, its fingerprint taken at each remembered cut: the longest
        // remembered prefix it has.
        let mut best: Option<&Remembered> = None;
        let mut hasher = DefaultHasher::new();
        for (index, message) in messages.iter().enumerate() {
            message_hash(message, &mut hasher);
            let cut = index + 1;
            let mut at_cut = remembered
                .iter()
                .filter(|known| known.cut == cut)
                .peekable();
            if at_cut.peek().is_none() {
                continue;
            }
            let prefix = hasher.clone().finish();
            if let Some(known) = at_cut.find(|known| known.prefix == prefix) {
                best = Some(known);
            }
        }
        best.cloned()
    }

    fn remember(&self, known: Remembered) {
        let mut remembered = self
            .remembered
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        if remembered.len() >= REMEMBERED {
            remembered.remove(0);
        }
        remembered.push(known);
    }

    async fn fit(&self, turns: &Turns<'_>, texts: &dyn Texts) -> Result<Shape, ModelError> {
        let messages = turns.messages();
        let unit_at = |cut: usize| {
            turns
                .units()
                .iter()
                .position(|unit| unit.messages.start == cut)
        };
        let summary_tokens = |summary: &str| summary.len() as u64 / 4;
        let last = self.recall(messages);
        // The last cut, while what it keeps still fits.
        if let Some(last) = &last
            && let Some(first) = unit_at(last.cut)
            && turns.tokens_from(first) + summary_tokens(&last.summary) <= self.max_tokens
        {
            return Ok(Shape::from_unit(first).with_summary(last.summary.clone()));
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
        let from = last.as_ref().map_or(0, |last| last.cut);
        let left_out: Vec<&Message> = messages[from.min(cut)..cut]
            .iter()
            .filter(|message| !matches!(message, Message::System { .. }))
            .collect();
        let transcript = serde_json::to_string(&left_out).unwrap_or_default();
        let previous = last.as_ref().map(|last| last.summary.as_str());
        let request = [Message::user(texts.summary_request(previous, &transcript))];
        let reply = self
            .model
            .chat(ChatRequest::new(&request, &[]).with_texts(texts))
            .await?;
        let summary = reply.message.content;
        self.remember(Remembered {
            cut,
            prefix: fingerprint(&messages[..cut]),
            summary: summary.clone(),
        });
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
        Box::pin(self.fit(turns, turns.texts()))
    }
}
