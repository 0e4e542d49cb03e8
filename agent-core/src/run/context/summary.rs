//! A summary that stands for part of a conversation: what a summarizing context policy made, kept
//! with the conversation (a session stores it beside the messages, which stay whole) so that later
//! requests, runs and processes send it rather than make it again.

use std::ops::Range;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::usage::Usage;

/// A summary of part of a conversation, and which part: the messages it stands for stay where
/// they are (in a session's store, readable and shown whole); requests send the summary in their
/// place. Made by a context policy ([`Summarize`](super::Summarize)) through
/// [`Turns::ask`](super::Turns::ask), returned in [`RunOutput::summaries`](crate::RunOutput::summaries),
/// kept by a session ([`Conversation::summaries`](crate::session::Conversation::summaries)).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Summary {
    /// The messages it stands for, by position in the conversation (from 0). In a session these
    /// are the stored conversation's positions (a system prompt the agent adds is not one of
    /// them); in a run's [`Turns`](super::Turns), the request history's.
    pub covers: Range<usize>,
    /// The summary, as the model wrote it.
    pub text: String,
    /// The model that wrote it, when its reply named one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// What writing it used.
    #[serde(default)]
    pub usage: Usage,
}

impl Summary {
    /// `text` standing for the messages `covers`.
    pub fn new(covers: Range<usize>, text: impl Into<String>) -> Self {
        Summary {
            covers,
            text: text.into(),
            model: None,
            usage: Usage::default(),
        }
    }

    /// The same, written by `model` with `usage`.
    pub fn made_by(mut self, model: Option<String>, usage: Usage) -> Self {
        self.model = model;
        self.usage = usage;
        self
    }

    /// The same summary for the same messages (what made it aside).
    pub fn same_as(&self, other: &Summary) -> bool {
        self.covers == other.covers && self.text == other.text
    }

    /// The same summary, its positions mapped by `position`.
    fn mapped(&self, position: impl Fn(usize) -> usize) -> Summary {
        Summary {
            covers: position(self.covers.start)..position(self.covers.end),
            ..self.clone()
        }
    }
}

/// A summary whose messages are yet to be set (a policy's: the run sets them to those its shape
/// leaves out).
impl From<String> for Summary {
    fn from(text: String) -> Self {
        Summary::new(0..0, text)
    }
}

impl From<&str> for Summary {
    fn from(text: &str) -> Self {
        Summary::new(0..0, text)
    }
}

/// Where a conversation's messages, as given to a run (a session's stored ones, or a history),
/// are in the run's history: after the system prompt the run puts in front of one that has none,
/// and around the results a repair put among them for calls that had none (neither is stored).
#[derive(Debug, Clone, Default)]
pub(crate) struct Positions {
    /// 1 when the run put a system prompt in front.
    pub(crate) prompt: usize,
    /// The run's positions of the results the repair put among the messages, in order.
    pub(crate) repairs: Vec<usize>,
}

impl Positions {
    /// The run's position of the given message at `given`.
    pub(super) fn to_run(&self, given: usize) -> usize {
        let mut run = given + self.prompt;
        for &repair in &self.repairs {
            if repair <= run {
                run += 1;
            }
        }
        run
    }

    /// The given position of the run's message at `run`.
    pub(super) fn to_given(&self, run: usize) -> usize {
        let repairs = self.repairs.iter().filter(|&&repair| repair < run).count();
        run.saturating_sub(self.prompt + repairs)
    }
}

/// The summaries one run knows for its conversation: those it was given (its session's, or its
/// request's) and those its context policy made, in the run's positions. Shared by the run's
/// context layer, which reads and adds them, and its session's transcript, which stores the new
/// ones as the run goes.
#[derive(Debug, Default)]
pub(crate) struct RunSummaries {
    positions: Positions,
    known: Mutex<Vec<Summary>>,
    given: usize,
}

impl RunSummaries {
    /// The run's summaries, starting from `given` (in the given conversation's positions).
    pub(crate) fn new(given: Vec<Summary>, positions: Positions) -> Self {
        let known: Vec<Summary> = given
            .iter()
            .map(|summary| summary.mapped(|at| positions.to_run(at)))
            .collect();
        RunSummaries {
            positions,
            given: known.len(),
            known: Mutex::new(known),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Summary>> {
        self.known
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// Every summary known, in the run's positions.
    pub(crate) fn known(&self) -> Vec<Summary> {
        self.lock().clone()
    }

    /// Adds a summary the run made (in its positions), unless it is known; whether it was new.
    pub(crate) fn add(&self, summary: Summary) -> bool {
        let mut known = self.lock();
        let new = !known.iter().any(|other| other.same_as(&summary));
        if new {
            known.push(summary);
        }
        new
    }

    /// The summaries the run made, from the `from`th on, in the given conversation's positions
    /// (to store them beside it).
    pub(crate) fn made_since(&self, from: usize) -> Vec<Summary> {
        let known = self.lock();
        (known.iter().skip(self.given + from))
            .map(|summary| summary.mapped(|at| self.positions.to_given(at)))
            .collect()
    }

    /// The summaries the run made, in its positions.
    pub(crate) fn into_made(self) -> Vec<Summary> {
        let given = self.given;
        let mut known = self
            .known
            .into_inner()
            .unwrap_or_else(|poison| poison.into_inner());
        known.drain(..given);
        known
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_map_a_stored_conversation_into_a_runs_history_and_back() {
        // Stored: u0 a1 u2 a3 u4. The run put a system prompt in front and a repair's result
        // after a1 (a call with no result): S u0 a1 r u2 a3 u4.
        let positions = Positions {
            prompt: 1,
            repairs: vec![3],
        };
        let run: Vec<usize> = (0..=5).map(|given| positions.to_run(given)).collect();
        assert_eq!(run, [1, 2, 4, 5, 6, 7]);
        for (given, &at) in run.iter().enumerate() {
            assert_eq!(positions.to_given(at), given);
        }
        // A summary of the first two stored messages ends, in the run, where u2 is: after the
        // repaired result, which it stands for too.
        let summaries = RunSummaries::new(vec![Summary::new(0..2, "two")], positions);
        assert_eq!(summaries.known()[0].covers, 1..4);
        summaries.add(Summary::new(0..6, "four"));
        assert_eq!(summaries.made_since(0)[0].covers, 0..4);
        assert_eq!(summaries.into_made()[0].covers, 0..6);
    }
}
