//! The transcript seam: where a run's conversation is kept as it grows. In memory the run's own
//! messages are all there is; a [`Transcript`] keeps them somewhere else as well, step by step,
//! so that a run that dies keeps every step it finished (a session run's store is one).

use crate::message::Message;
use crate::run::pause::PausedRun;
use crate::run::store::SessionError;
use crate::tool::BoxFuture;
use crate::usage::Usage;

/// Keeps a run's transcript as it grows: called with the whole transcript whenever a part of it
/// is complete (a reply whose calls are about to run; a step's results; a pause), in order, each
/// time with more. What it keeps, and how, is its own: the messages it has not kept yet, in one
/// write (a session appends them in one transaction).
pub trait Transcript: Send + Sync {
    /// The transcript so far; `paused`: the run pauses with this (its reply is the last message,
    /// its calls unanswered); `usage`: what the run has used so far (a resumed run's from before
    /// its pause included). A failure ends the run with
    /// [`RunError::Session`](crate::RunError::Session).
    fn keep<'a>(
        &'a mut self,
        messages: &'a [Message],
        paused: Option<&'a PausedRun>,
        usage: Usage,
    ) -> BoxFuture<'a, Result<(), SessionError>>;
}
