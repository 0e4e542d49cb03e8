//! A context policy that summarizes: once a conversation outgrows its window, the oldest turns
//! are left out and a model's summary of them stands in their place. The summary is made once per
//! cut and kept with the conversation, and the cut is set with room to grow, so the requests
//! after it reuse it (their prefix stays the same, which prompt caches reward) until the kept
//! part outgrows the window again; then the next summary takes in the last one.

use std::sync::Arc;

use super::{ContextPolicy, Shape, Summary, Turns};
use crate::message::Message;
use crate::model::{ChatRequest, Model, ModelError};
use crate::texts::Texts;
use crate::tool::BoxFuture;
use crate::tool::wording::truncate;
use crate::usage::Usage;

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
///
/// The summarizer's requests fit in its window too (the policy's, unless
/// [`summarizer_window`](Summarize::summarizer_window) says): turns left out that do not fit in
/// one request are summarized in several, each taking in the summary the one before made, and a
/// message larger than half that window on its own (one tool result of hundreds of kilobytes) is
/// cut, with the run's marker ([`Texts::truncated`](crate::Texts::truncated)).
pub struct Summarize {
    model: Arc<dyn Model>,
    max_tokens: u64,
    keep_tokens: u64,
    summarizer_window: Option<u64>,
}

impl Summarize {
    /// A window of `max_tokens` tokens, older turns summarized by `model` (the agent's own, or a
    /// smaller one).
    pub fn new(model: impl Model + 'static, max_tokens: u64) -> Self {
        Summarize {
            model: Arc::new(model),
            max_tokens,
            keep_tokens: max_tokens / 2,
            summarizer_window: None,
        }
    }

    /// The summarizer's own context window, in tokens, when it is not the one this policy keeps
    /// (a summarizer with a larger window takes more turns in one request).
    pub fn summarizer_window(mut self, tokens: u64) -> Self {
        self.summarizer_window = Some(tokens);
        self
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
        // Within the model's own window, when a refusal taught it a smaller one.
        let max_tokens = turns.within(self.max_tokens);
        let keep_tokens = self.keep_tokens * max_tokens / self.max_tokens.max(1);
        // The summary known that stands for the most, where a unit starts.
        let last = (turns.summaries().iter())
            .filter_map(|summary| Some((summary, unit_at(summary.covers.end)?)))
            .max_by_key(|(summary, _)| summary.covers.end);
        // The last cut, while what it keeps still fits.
        if let Some((last, first)) = last
            && turns.tokens_from(first) + summary_tokens(&last.text) <= max_tokens
        {
            return Ok(Shape::from_unit(first).with_summary(last.clone()));
        }
        if last.is_none() && turns.tokens() <= max_tokens {
            return Ok(Shape::everything());
        }
        // A new cut: the earliest turn whose start keeps at most `keep_tokens`.
        let Some(first) = turns
            .turn_starts()
            .find(|&first| turns.tokens_from(first) <= keep_tokens)
            .or_else(|| turns.turn_starts().last())
            .map(|first| turns.earliest_cut(first))
            .filter(|&first| first > 0)
        else {
            return Ok(Shape::everything());
        };
        let cut = turns.units()[first].messages.start;
        let from = last.map_or(0, |(last, _)| last.covers.end);
        let window = turns.characters(self.summarizer_window.unwrap_or(self.max_tokens));
        let left_out: Vec<String> = (messages[from.min(cut)..cut].iter())
            .filter(|message| !matches!(message, Message::System { .. }))
            .map(|message| fitted(message, window / 2, turns.texts()))
            .collect();
        let previous = last.map(|(last, _)| last.text.clone());
        let mut summary = self.summarize(turns, left_out, previous, window).await?;
        summary.covers = 0..cut;
        Ok(Shape::from_unit(first).with_summary(summary))
    }

    /// The summary of `left_out` (the messages as JSON, each [`fitted`] to half the window; after
    /// `previous`, the summary of what came before), in as many requests as it takes for each to
    /// fit in `window` characters: the instruction and the summary so far, an eighth of the window
    /// for the reply, and as many of the messages as the rest holds. Each request takes in the
    /// summary the one before made.
    async fn summarize(
        &self,
        turns: &Turns<'_>,
        left_out: Vec<String>,
        mut previous: Option<String>,
        window: usize,
    ) -> Result<Summary, ModelError> {
        let texts = turns.texts();
        // The room for the messages beside the instruction and the summary so far: the same
        // until a request makes a new summary.
        let room_beside = |previous: Option<&str>| {
            let instruction = texts.summary_request(previous, "").len();
            (window - window / 8).saturating_sub(instruction)
        };
        let mut room = room_beside(previous.as_deref());
        let mut made: Option<(Option<String>, Usage)> = None;
        let mut chunk: Vec<String> = Vec::new();
        let mut size = 0;
        let mut left_out = left_out.into_iter().peekable();
        while let Some(message) = left_out.next() {
            size += message.len() + 1;
            chunk.push(message);
            let full = (left_out.peek()).is_none_or(|next| size + next.len() + 1 > room);
            if !full {
                continue;
            }
            let transcript = format!("[{}]", chunk.join(","));
            let request = [Message::user(
                texts.summary_request(previous.as_deref(), &transcript),
            )];
            let reply = turns
                .ask(
                    &*self.model,
                    ChatRequest::new(&request, &[]).with_texts(texts),
                )
                .await?;
            let usage = made
                .as_ref()
                .map_or(reply.usage, |(_, used)| *used + reply.usage);
            made = Some((reply.model, usage));
            previous = Some(reply.message.content);
            room = room_beside(previous.as_deref());
            chunk.clear();
            size = 0;
        }
        let (model, usage) = made.unwrap_or_default();
        Ok(Summary::new(0..0, previous.unwrap_or_default()).made_by(model, usage))
    }
}

/// `message` as JSON for the summarizer, its text cut when the whole is longer than `room`
/// characters (one tool result of hundreds of kilobytes), with the texts' marker.
fn fitted(message: &Message, room: usize, texts: &dyn Texts) -> String {
    let json = |message: &Message| serde_json::to_string(message).unwrap_or_default();
    let whole = json(message);
    if whole.len() <= room {
        return whole;
    }
    let mut cut = message.clone();
    let text = match &mut cut {
        Message::System { content } | Message::User { content, .. } => content,
        Message::Assistant(reply) => &mut reply.content,
        Message::Tool(result) => {
            result.parts.clear();
            &mut result.content
        }
    };
    *text = truncate(std::mem::take(text), room / 2, texts);
    if let Message::Assistant(reply) = &mut cut {
        for call in &mut reply.tool_calls {
            call.arguments = truncate(std::mem::take(&mut call.arguments), room / 4, texts);
        }
    }
    json(&cut)
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

    /// A quarter of the window: its tokens, in characters at about four a token.
    fn recall_page(&self) -> usize {
        usize::try_from(self.max_tokens)
            .unwrap_or(usize::MAX)
            .max(1)
    }
}
