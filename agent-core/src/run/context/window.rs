//! The context policies the crate ships: the last turns, or as much as fits in a number of tokens.

use std::future::ready;

use super::{ContextPolicy, Shape, Turns, UnitKind};
use crate::model::ModelError;
use crate::tool::BoxFuture;

/// Keeps the last `n` turns of the conversation (a turn: a user message and every reply and
/// result after it), and the system messages. A turn whose calls still wait is never left out.
///
/// The cut moves in blocks, so that requests keep their prefix (what a provider's prompt cache
/// reuses): when the conversation passes `n` turns, the oldest are left out until about half of
/// `n` are kept, and that cut stays, turn after turn, until the turns kept pass `n` again. A
/// request keeps between `n / 2 + 1` and `n` turns; the cut depends on the number of turns alone,
/// so every run and process makes the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeepLastTurns(pub usize);

impl ContextPolicy for KeepLastTurns {
    fn shape<'a>(&'a self, turns: &'a Turns<'a>) -> BoxFuture<'a, Result<Shape, ModelError>> {
        let starts: Vec<usize> = turns.turn_starts().collect();
        let most = self.0.max(1);
        // Turns left out in whole blocks of half the most kept: the cut moves once a block.
        let block = most.div_ceil(2);
        let shape = match starts.len().checked_sub(most) {
            Some(over) if over > 0 => Shape::from_unit(starts[over.div_ceil(block) * block]),
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
///
/// The cut moves in steps, so that requests keep their prefix (what a provider's prompt cache
/// reuses): when a request would pass the window, the history is cut (or its results shortened)
/// until it takes about half of it, and the next requests keep that shape while it fits (the
/// shape of the last request is kept with the session, so the next runs keep it too).
///
/// A request is never sent over the window: when not even the last reply fits with the question
/// it works on (one tool result larger than the window, say), the results of what is kept are
/// sent as a note, from the oldest, until it fits, whatever the setting (the model can read them
/// back a page at a time); and when even that does not fit (a system prompt or a question larger
/// than the window), the run fails with [`ModelError::DoesNotFit`] before anything is sent.
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

    /// The shape that fits, or why none does: the last request's while it fits, else a new one
    /// with room to grow.
    fn fit(&self, turns: &Turns<'_>) -> Result<Shape, ModelError> {
        let window = turns.within(self.max_tokens);
        if let Some(last) = turns.last_shape()
            && (self.shorten_results || last.shortened.is_empty())
            && tokens_of(turns, &last) <= window
        {
            return Ok(last);
        }
        if turns.tokens() <= window {
            return Ok(Shape::everything());
        }
        // A new cut takes the request to about half the window, so the requests after it have
        // room to grow before the next.
        let target = window / 2;
        // Shortening results first, from the last cut on: the earliest turn (or the last cut)
        // from which the oldest results as a note bring the request to the target.
        if self.shorten_results {
            let last_first = turns.last_shape().map_or(0, |last| last.keep_from);
            let firsts = [last_first].into_iter().chain(turns.turn_starts());
            if let Some(shape) = (firsts.filter(|&first| first >= last_first))
                .find_map(|first| shortened(turns, turns.earliest_cut(first), target).ok())
            {
                return Ok(shape);
            }
        }
        // The earliest turn that fits in the target, or else in the window, from its start;
        // else, inside the last turn, the earliest unit that fits; else the last unit with its
        // results as a note.
        let fits = |first: usize, room: u64| turns.tokens_from(first) <= room;
        let first_turn = |room: u64| turns.turn_starts().find(|&first| fits(first, room));
        if let Some(first) = first_turn(target).or_else(|| first_turn(window)) {
            return Ok(Shape::from_unit(turns.earliest_cut(first)));
        }
        let last_turn = turns.turn_starts().last().unwrap_or(0);
        let units = turns.units().len();
        match (last_turn..units).find(|&first| fits(first, window)) {
            Some(first) => Ok(Shape::from_unit(turns.earliest_cut(first))),
            None => shortened(turns, turns.earliest_cut(units.saturating_sub(1)), window),
        }
    }
}

/// The tokens of the request `shape` makes of `turns`: its results sent as a note counted as
/// their notes, with the tool that reads them back.
fn tokens_of(turns: &Turns<'_>, shape: &Shape) -> u64 {
    if shape.shortened.is_empty() {
        return turns.tokens_from(shape.keep_from);
    }
    let saved: u64 = (shape.shortened.iter())
        .map(|&index| turns.saved_by_note(index))
        .sum();
    (turns.tokens_from(shape.keep_from) + turns.recall_tokens()).saturating_sub(saved)
}

/// The units of `turns` from `first` on, the oldest steps' results among them sent as a note
/// until the whole fits in `window`; or, when that is not enough, the error that says by how much
/// it does not.
fn shortened(turns: &Turns<'_>, first: usize, window: u64) -> Result<Shape, ModelError> {
    // The notes come with the tool that reads them back.
    let needed = turns.tokens_from(first) + turns.recall_tokens();
    let mut over = needed.saturating_sub(window);
    let mut shortened = Vec::new();
    for (index, unit) in turns.units().iter().enumerate().skip(first) {
        if over == 0 {
            break;
        }
        if unit.kind != UnitKind::Step {
            continue;
        }
        let saved = turns.saved_by_note(index);
        if saved == 0 {
            continue;
        }
        shortened.push(index);
        over = over.saturating_sub(saved);
    }
    match over {
        0 => Ok(Shape::from_unit(first).shortening(shortened)),
        over => Err(ModelError::DoesNotFit {
            needed: window + over,
            window,
        }),
    }
}

impl ContextPolicy for TokenWindow {
    fn shape<'a>(&'a self, turns: &'a Turns<'a>) -> BoxFuture<'a, Result<Shape, ModelError>> {
        Box::pin(ready(self.fit(turns)))
    }

    /// A quarter of the window: its tokens, in characters at about four a token.
    fn recall_page(&self) -> usize {
        usize::try_from(self.max_tokens)
            .unwrap_or(usize::MAX)
            .max(1)
    }
}
