//! The context policies the crate ships: the last turns, or as much as fits in a number of tokens.

use std::future::ready;

use super::{ContextPolicy, Shape, Turns, UnitKind};
use crate::model::ModelError;
use crate::tool::BoxFuture;

/// Keeps the last `n` turns of the conversation (a turn: a user message and every reply and
/// result after it), and the system messages. A turn whose calls still wait is never left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeepLastTurns(pub usize);

impl ContextPolicy for KeepLastTurns {
    fn shape<'a>(&'a self, turns: &'a Turns<'a>) -> BoxFuture<'a, Result<Shape, ModelError>> {
        let starts: Vec<usize> = turns.turn_starts().collect();
        let shape = match starts.len().checked_sub(self.0.max(1)) {
            Some(first) if first > 0 => Shape::from_unit(starts[first]),
            _ => Shape::everything(),
        };
        Box::pin(ready(Ok(shape)))
    }
}

/// Keeps as much of the conversation as fits in a number of tokens (the model's context window,
/// less room for its reply): the whole while it fits, else the latest turns that fit, else the
/// latest replies of the turn under way that fit, with the question they work on. The oldest
/// tool results are sent as a short note first, when that is enough
/// ([`shortening_results`](TokenWindow::shortening_results)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenWindow {
    max_tokens: u64,
    shorten_results: bool,
}

impl TokenWindow {
    /// A window of `max_tokens` tokens for each request (system prompt, tool definitions and
    /// history).
    pub fn new(max_tokens: u64) -> Self {
        TokenWindow {
            max_tokens,
            shorten_results: false,
        }
    }

    /// Sends the results of the oldest steps as a short note before it leaves turns out: the
    /// model still sees every call it made, and what each returned is left out from the oldest on
    /// until the request fits. The note tells the model how to read a result again (the tool
    /// [`RECALL_TOOL`](super::RECALL_TOOL), offered with such a request and answered from the
    /// transcript).
    pub fn shortening_results(mut self) -> Self {
        self.shorten_results = true;
        self
    }

    /// The max tokens.
    pub fn max_tokens(&self) -> u64 {
        self.max_tokens
    }

    /// The shape that fits.
    fn fit(&self, turns: &Turns<'_>) -> Shape {
        if turns.tokens() <= self.max_tokens {
            return Shape::everything();
        }
        if self.shorten_results
            && let Some(shape) = self.shortened(turns)
        {
            return shape;
        }
        // The earliest turn that fits from its start; else, inside the last turn, the earliest
        // unit that fits; else as little as may be sent.
        let fits = |first: usize| turns.tokens_from(first) <= self.max_tokens;
        if let Some(first) = turns.turn_starts().find(|&first| fits(first)) {
            return Shape::from_unit(turns.earliest_cut(first));
        }
        let last_turn = turns.turn_starts().last().unwrap_or(0);
        let units = turns.units().len();
        let first = (last_turn..units)
            .find(|&first| fits(first))
            .unwrap_or(units.saturating_sub(1));
        Shape::from_unit(turns.earliest_cut(first))
    }

    /// The oldest steps' results sent as a note until the whole fits, if that is enough.
    fn shortened(&self, turns: &Turns<'_>) -> Option<Shape> {
        let mut over = turns.tokens() - self.max_tokens;
        let mut shortened = Vec::new();
        for (index, unit) in turns.units().iter().enumerate() {
            if over == 0 {
                break;
            }
            if unit.kind != UnitKind::Step {
                continue;
            }
            let results = turns.result_tokens(index);
            if results == 0 {
                continue;
            }
            shortened.push(index);
            over = over.saturating_sub(results);
        }
        (over == 0).then(|| Shape::everything().shortening(shortened))
    }
}

impl ContextPolicy for TokenWindow {
    fn shape<'a>(&'a self, turns: &'a Turns<'a>) -> BoxFuture<'a, Result<Shape, ModelError>> {
        Box::pin(ready(Ok(self.fit(turns))))
    }
}
