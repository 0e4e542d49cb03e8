//! A history seen as the units a context policy may keep or leave out, and the one function that
//! builds a request's history from what a policy decided ([`Turns::apply`]). A reply and the
//! results of its calls are one unit, and a reply whose calls still wait is never left out, so no
//! policy can make a history with a call and no result, or a result with no call.

use std::ops::Range;

use super::estimate::TokenEstimate;
use super::{RECALL_TOOL, Summary, recall_definition};
use crate::message::{Message, ToolResultMessage};
use crate::model::{ChatRequest, ChatResponse, Model, ModelError};
use crate::run::journal::Journal;
use crate::texts::Texts;
use crate::tool::BoxFuture;

/// What a unit of a history is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnitKind {
    /// A system message: always kept.
    System,
    /// A user message: where a turn of the conversation starts.
    User,
    /// A reply of the model with the results of all its calls (or a reply without calls).
    Step,
    /// A reply some of whose calls have no result yet (they wait for a person or the caller):
    /// never left out, nor anything after it.
    Waiting,
}

/// One unit of a history: messages that are kept or left out together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    /// What it is.
    pub kind: UnitKind,
    /// Its messages, as indices into the history.
    pub messages: Range<usize>,
    /// Its tokens, estimated.
    pub tokens: u64,
}

/// A request's history as units, with the tokens of each estimated: what a
/// [`ContextPolicy`](super::ContextPolicy) reads.
pub struct Turns<'a> {
    messages: &'a [Message],
    texts: &'a dyn Texts,
    units: Vec<Unit>,
    /// The tokens of what every request carries besides the history: the tool definitions.
    fixed_tokens: u64,
    estimate: TokenEstimate<'a>,
    /// For each unit index (and one past the last), the tokens of the units from it on, and the
    /// tokens of the system messages before it: a cut's tokens in constant time.
    from: Vec<u64>,
    systems_before: Vec<u64>,
    /// The first waiting unit (the number of units when none is): no cut passes it.
    first_waiting: usize,
    /// The summaries known for the conversation, in the history's positions.
    summaries: &'a [Summary],
    /// In a durable run, where a policy's own model calls are recorded, and the step.
    journal: Option<&'a dyn Journal>,
    step: usize,
    /// The most input tokens the model takes, when a refusal said it.
    model_window: Option<u64>,
    /// Where the conversation's last request kept its history from, and the end of the messages
    /// whose results it sent as a note, in the history's positions.
    last: Option<(usize, usize)>,
}

/// What a [`ContextPolicy`](super::ContextPolicy) decided a request carries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Shape {
    /// The first unit kept: those before it are left out, but for system messages (always kept)
    /// and, where the first unit kept is a reply, the user message of its turn (the question the
    /// reply works on). It never passes a [waiting](UnitKind::Waiting) unit. `0` keeps every unit.
    pub keep_from: usize,
    /// What stands for the units left out (a summary of them), sent in their place as one user
    /// message in the run's words ([`Texts::context_summary`]). In a run, its
    /// [`covers`](Summary::covers) are set to the messages the shape leaves out, and a summary
    /// not known before is kept with the conversation (the run's output, its session).
    pub summary: Option<Summary>,
    /// Steps whose tool results are sent as a short note ([`Texts::result_left_out`]) instead of
    /// their content, by unit index.
    pub shortened: Vec<usize>,
}

impl Shape {
    /// The history as it is.
    pub fn everything() -> Self {
        Shape::default()
    }

    /// The units from `first` on.
    pub fn from_unit(first: usize) -> Self {
        Shape {
            keep_from: first,
            ..Shape::default()
        }
    }

    /// The same, with `summary` standing for the units left out: one of
    /// [`Turns::summaries`], or a new one (a text is one).
    pub fn with_summary(mut self, summary: impl Into<Summary>) -> Self {
        self.summary = Some(summary.into());
        self
    }

    /// The same, with the results of the steps `units` sent as a short note.
    pub fn shortening(mut self, units: impl IntoIterator<Item = usize>) -> Self {
        self.shortened.extend(units);
        self
    }

    /// Whether the history is sent as it is.
    pub fn keeps_everything(&self) -> bool {
        self.keep_from == 0 && self.summary.is_none() && self.shortened.is_empty()
    }
}

/// Every field but the texts, which have no `Debug` of their own.
impl std::fmt::Debug for Turns<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Turns")
            .field("units", &self.units)
            .field("tokens", &self.tokens())
            .finish_non_exhaustive()
    }
}

impl<'a> Turns<'a> {
    /// The units of `request`'s history, their tokens estimated from their characters (a policy
    /// in a run sees them scaled by what the provider counted for the last request).
    pub fn new(request: &ChatRequest<'a>) -> Self {
        Turns::estimated(request, &TokenEstimate::unscaled())
    }

    /// The units of `request`'s history, their tokens estimated with `estimate`.
    pub(crate) fn estimated(request: &ChatRequest<'a>, estimate: &TokenEstimate<'a>) -> Self {
        let messages = request.messages;
        let mut units: Vec<Unit> = Vec::new();
        let mut index = 0;
        while index < messages.len() {
            let start = index;
            let kind = match &messages[index] {
                Message::System { .. } => UnitKind::System,
                Message::User { .. } => UnitKind::User,
                Message::Assistant(reply) => {
                    // The results that follow the reply are its own.
                    let mut end = index + 1;
                    while matches!(messages.get(end), Some(Message::Tool(_))) {
                        end += 1;
                    }
                    let answered = |id: &str| {
                        messages[index + 1..end].iter().any(|message| {
                            matches!(message, Message::Tool(result) if result.tool_call_id == id)
                        })
                    };
                    let every_call_answered =
                        reply.tool_calls.iter().all(|call| answered(&call.id));
                    index = end - 1;
                    if every_call_answered {
                        UnitKind::Step
                    } else {
                        UnitKind::Waiting
                    }
                }
                // A result with no reply before it belongs with what precedes it, so that no cut
                // can part it from whatever it answers.
                Message::Tool(_) => match units.last_mut() {
                    Some(last) => {
                        last.messages.end = index + 1;
                        last.tokens += estimate.message(&messages[index]);
                        index += 1;
                        continue;
                    }
                    None => UnitKind::Step,
                },
            };
            index += 1;
            let tokens = messages[start..index]
                .iter()
                .map(|message| estimate.message(message))
                .sum();
            units.push(Unit {
                kind,
                messages: start..index,
                tokens,
            });
        }
        let mut from = vec![0; units.len() + 1];
        for (index, unit) in units.iter().enumerate().rev() {
            from[index] = from[index + 1] + unit.tokens;
        }
        let mut systems_before = vec![0; units.len() + 1];
        for (index, unit) in units.iter().enumerate() {
            let system = if unit.kind == UnitKind::System {
                unit.tokens
            } else {
                0
            };
            systems_before[index + 1] = systems_before[index] + system;
        }
        let first_waiting = (units.iter())
            .position(|unit| unit.kind == UnitKind::Waiting)
            .unwrap_or(units.len());
        Turns {
            messages,
            texts: request.texts,
            first_waiting,
            units,
            fixed_tokens: estimate.tools(request.tools),
            estimate: *estimate,
            from,
            systems_before,
            summaries: &[],
            journal: None,
            step: 0,
            model_window: None,
            last: None,
        }
    }

    /// The same turns in a run at `step`, which knows `summaries` and is journaled in `journal`
    /// when durable.
    pub(crate) fn in_run(
        mut self,
        summaries: &'a [Summary],
        journal: Option<&'a dyn Journal>,
        step: usize,
    ) -> Self {
        self.summaries = summaries;
        self.journal = journal;
        self.step = step;
        self
    }

    /// The same turns of a model that takes at most `window` input tokens, as a refusal said.
    pub(crate) fn with_model_window(mut self, window: Option<u64>) -> Self {
        self.model_window = window;
        self
    }

    /// The same turns of a conversation whose last request kept its history from message
    /// `kept_from` on, with the results of the messages before `shortened_to` sent as a note.
    pub(crate) fn after(mut self, last: Option<(usize, usize)>) -> Self {
        self.last = last;
        self
    }

    /// The shape of the conversation's last request (this run's, or the one its session kept),
    /// when it still applies to this history: a policy that keeps it while it fits keeps the
    /// prefix a provider's prompt cache reuses (the crate's policies do). Its results sent as a
    /// note are those of the steps from its first unit up to where they ended.
    pub fn last_shape(&self) -> Option<Shape> {
        let (kept_from, shortened_to) = self.last?;
        let unit_at =
            |position: usize| (self.units.iter()).position(|unit| unit.messages.start == position);
        let first = if kept_from == 0 {
            0
        } else {
            unit_at(kept_from)?
        };
        let end = match shortened_to {
            end if end <= kept_from => first,
            end => (self.units.iter()).position(|unit| unit.messages.end == end)? + 1,
        };
        let shortened = (first..end).filter(|&index| {
            self.units[index].kind == UnitKind::Step && self.saved_by_note(index) > 0
        });
        Some(Shape::from_unit(first).shortening(shortened))
    }

    /// Where the history `shape` keeps starts, and the end of the messages whose results it sends
    /// as a note (the start when none): what the next request is told of this one.
    pub(crate) fn cut_and_shortened(&self, shape: &Shape) -> (usize, usize) {
        let cut = self.cut_of(shape);
        let shortened = (shape.shortened.iter())
            .filter_map(|&index| self.units.get(index))
            .map(|unit| unit.messages.end)
            .max()
            .unwrap_or(cut);
        (cut, shortened.max(cut))
    }

    /// The most input tokens the model takes, when the agent learned it from a refusal for length
    /// (the providers' messages say it): a policy keeps its requests within it, whatever window
    /// it was set to (the crate's do).
    pub fn model_window(&self) -> Option<u64> {
        self.model_window
    }

    /// About how many characters of text make `tokens` tokens, by the run's estimate.
    pub(crate) fn characters(&self, tokens: u64) -> usize {
        usize::try_from(self.estimate.characters(tokens)).unwrap_or(usize::MAX)
    }

    /// `window`, or the model's, when that is smaller.
    pub(crate) fn within(&self, window: u64) -> u64 {
        self.model_window.map_or(window, |model| model.min(window))
    }

    /// The summaries known for the conversation (its session's, and those made since), in the
    /// history's positions, oldest first: a policy sends one again rather than make it anew.
    pub fn summaries(&self) -> &[Summary] {
        self.summaries
    }

    /// Asks `model` on the run's behalf (for a summary, say). In a durable run the answer is
    /// journaled, so a replay gets it back and does not ask again.
    pub fn ask<'b>(
        &'b self,
        model: &'b dyn Model,
        request: ChatRequest<'b>,
    ) -> BoxFuture<'b, Result<ChatResponse, ModelError>> {
        let call = model.chat(request);
        match self.journal {
            Some(journal) => journal.context_call(self.step, call),
            None => call,
        }
    }

    /// The history.
    pub fn messages(&self) -> &'a [Message] {
        self.messages
    }

    /// The run's texts: the language of anything a policy writes (a summary's request).
    pub fn texts(&self) -> &'a dyn Texts {
        self.texts
    }

    /// Its units, in order.
    pub fn units(&self) -> &[Unit] {
        &self.units
    }

    /// The tokens of the whole request as it stands: the history and the tool definitions.
    pub fn tokens(&self) -> u64 {
        self.fixed_tokens + self.from[0]
    }

    /// The tokens a request would have that keeps the units from `first` on (with what is always
    /// kept: system messages, the tool definitions, the question of a turn whose reply comes
    /// first), before any summary.
    pub fn tokens_from(&self, first: usize) -> u64 {
        let first = self.earliest_cut(first);
        let question = self
            .question_of(first)
            .map_or(0, |unit| self.units[unit].tokens);
        self.fixed_tokens + self.systems_before[first] + question + self.from[first]
    }

    /// The tokens of the tool results of the unit at `index` (what sending them as a note saves,
    /// nearly).
    pub fn result_tokens(&self, index: usize) -> u64 {
        self.messages[self.units[index].messages.clone()]
            .iter()
            .filter(|message| matches!(message, Message::Tool(_)))
            .map(|message| self.estimate.message(message))
            .sum()
    }

    /// What sending the results of the unit at `index` as a note saves: their tokens less the
    /// note's.
    pub(crate) fn saved_by_note(&self, index: usize) -> u64 {
        let messages = &self.messages[self.units[index].messages.clone()];
        (messages.iter())
            .filter_map(|message| match message {
                Message::Tool(result) => Some((message, result)),
                _ => None,
            })
            .map(|(message, result)| {
                let characters = result.content.chars().count();
                let note =
                    (self.texts).result_left_out(characters, &result.tool_call_id, RECALL_TOOL);
                let note = Message::Tool(ToolResultMessage::new(result.tool_call_id.clone(), note));
                (self.estimate.message(message)).saturating_sub(self.estimate.message(&note))
            })
            .sum()
    }

    /// The tokens of the tool a request with results sent as a note offers to read them back.
    pub(crate) fn recall_tokens(&self) -> u64 {
        self.estimate.tools(&[recall_definition(self.texts)])
    }

    /// The index of the first unit of each turn (a user message), in order.
    pub fn turn_starts(&self) -> impl Iterator<Item = usize> + '_ {
        self.units
            .iter()
            .enumerate()
            .filter(|(_, unit)| unit.kind == UnitKind::User)
            .map(|(index, _)| index)
    }

    /// `first`, or the first waiting unit when that comes before it: nothing from a waiting unit
    /// on is left out.
    pub fn earliest_cut(&self, first: usize) -> usize {
        first.min(self.first_waiting)
    }

    /// The user message of the turn a history kept from `first` starts inside of, when the first
    /// unit kept is not one: the question that unit works on.
    fn question_of(&self, first: usize) -> Option<usize> {
        let kept = self.units[first..]
            .iter()
            .find(|unit| unit.kind != UnitKind::System)?;
        if kept.kind == UnitKind::User {
            return None;
        }
        self.units[..first]
            .iter()
            .rposition(|unit| unit.kind == UnitKind::User)
    }

    /// Where the messages a history kept under `shape` start: those before it (system messages
    /// aside) are left out.
    pub fn cut_of(&self, shape: &Shape) -> usize {
        let first = self.earliest_cut(shape.keep_from);
        (self.units.get(first)).map_or(self.messages.len(), |unit| unit.messages.start)
    }

    /// The history a request carries under `shape`, in the run's words where it adds any.
    pub fn apply(&self, shape: &Shape, texts: &dyn Texts) -> Vec<Message> {
        let first = self.earliest_cut(shape.keep_from);
        let mut history = Vec::with_capacity(self.messages.len());
        self.front(shape, texts, &mut history);
        for (index, unit) in self.units.iter().enumerate().skip(first) {
            let messages = &self.messages[unit.messages.clone()];
            if !shape.shortened.contains(&index) || unit.kind != UnitKind::Step {
                history.extend_from_slice(messages);
                continue;
            }
            for message in messages {
                history.push(match message {
                    Message::Tool(result) => {
                        let mut note = result.clone();
                        let characters = result.content.chars().count();
                        note.content =
                            texts.result_left_out(characters, &result.tool_call_id, RECALL_TOOL);
                        note.parts.clear();
                        Message::Tool(note)
                    }
                    other => other.clone(),
                });
            }
        }
        history
    }

    /// Puts what a history kept under `shape` begins with before the units it keeps into
    /// `history`: the system messages of the units left out, then the summary in their place or
    /// the question of the turn the first unit kept works on.
    pub(crate) fn front(&self, shape: &Shape, texts: &dyn Texts, history: &mut Vec<Message>) {
        let first = self.earliest_cut(shape.keep_from);
        let left_out = &self.units[..first];
        for unit in left_out.iter().filter(|unit| unit.kind == UnitKind::System) {
            history.extend_from_slice(&self.messages[unit.messages.clone()]);
        }
        if let Some(summary) = &shape.summary
            && first > 0
        {
            history.push(Message::user(texts.context_summary(&summary.text)));
        } else if let Some(question) = self.question_of(first) {
            history.extend_from_slice(&self.messages[self.units[question].messages.clone()]);
        }
    }
}
