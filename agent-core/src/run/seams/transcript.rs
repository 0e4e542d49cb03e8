//! The transcript seam: where a run's conversation is kept as it grows. In memory the run's own
//! messages are all there is; a [`Transcript`] keeps them somewhere else as well, step by step,
//! so that a run that dies keeps every step it finished (a session run's store is one).

use crate::message::Message;
use crate::run::pause::PausedRun;
use crate::run::store::SessionError;
use crate::tool::BoxFuture;
use crate::usage::{Usage, UsageByModel};

/// Keeps a run's transcript as it grows: called with the whole transcript whenever a part of it
/// is complete (a reply whose calls are about to run; a step's results; a pause), in order, each
/// time with more. What it keeps, and how, is its own: the messages it has not kept yet, in one
/// write (a session appends them in one transaction).
pub trait Transcript: Send + Sync {
    /// The transcript so far; `paused`: the run pauses with this (its reply is the last message,
    /// its calls unanswered); `used`: the run's model calls so far (a resumed run's from before
    /// its pause included). A failure ends the run with
    /// [`RunError::Session`](crate::RunError::Session).
    fn keep<'a>(
        &'a mut self,
        messages: &'a [Message],
        paused: Option<&'a PausedRun>,
        used: Used<'a>,
    ) -> BoxFuture<'a, Result<(), SessionError>>;
}

/// What a run's model calls used so far, for a [`Transcript`]: each call's usage in order, and the
/// model that answered it (as [`RunOutput::step_models`](crate::RunOutput::step_models): empty
/// when no reply named one).
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct Used<'a> {
    /// Each model call's usage, in order.
    pub steps: &'a [Usage],
    /// The model that answered each, where known.
    pub models: &'a [Option<String>],
}

impl<'a> Used<'a> {
    /// The usage of `steps`, answered by `models`.
    pub fn new(steps: &'a [Usage], models: &'a [Option<String>]) -> Self {
        Used { steps, models }
    }

    /// The usage of the calls from the `from`th on, by model.
    pub fn by_model(&self, from: usize) -> UsageByModel {
        let mut usage = UsageByModel::new();
        for (index, step) in self.steps.iter().enumerate().skip(from) {
            let model = self.models.get(index).and_then(Option::as_deref);
            usage.add(model, *step);
        }
        usage
    }
}
