//! What a run answers with, and how each kind starts: its text ([`Text`], a [`RunOutput`]) or a
//! typed value ([`Typed`], a [`TypedOutput`]), each with the answer check it runs under.

use super::events::EventSender;
use super::outcome::{RunError, RunOutput, TypedOutput};
use super::request::{ContextGiven, RunRequest, Text, Typed};
use super::seams::TextAnswer;
use super::start::start;
use super::typed_answer::TypedAnswer;
use crate::output::{OutputType, TypedCheck};
use crate::tool::BoxFuture;

/// What a run answers with: its text ([`Text`], a [`RunOutput`]) or a value ([`Typed`], a
/// [`TypedOutput`]). Implemented by those two only.
pub trait Answer<'a, S>: Sized + Send + 'a {
    /// What the run gives at its end.
    type Output: Send + 'a;

    /// Starts `request`'s run, sending its events to `events` when streamed.
    #[doc(hidden)]
    fn start<C: ContextGiven<'a, S>, K>(
        request: RunRequest<'a, S, C, Self, K>,
        events: Option<EventSender>,
    ) -> BoxFuture<'a, Result<Self::Output, RunError>>;
}

impl<'a, S: Send + Sync + 'static> Answer<'a, S> for Text {
    type Output = RunOutput;

    fn start<C: ContextGiven<'a, S>, K>(
        request: RunRequest<'a, S, C, Self, K>,
        events: Option<EventSender>,
    ) -> BoxFuture<'a, Result<RunOutput, RunError>> {
        let mut plan = request.plan;
        let context = C::context(plan.context);
        match plan.check.take() {
            Some(check) => Box::pin(start(plan, context, check, events)),
            None => Box::pin(start(plan, context, TextAnswer, events)),
        }
    }
}

impl<'a, S: Send + Sync + 'static, T: OutputType> Answer<'a, S> for Typed<'a, S, T> {
    type Output = TypedOutput<T>;

    fn start<C: ContextGiven<'a, S>, K>(
        request: RunRequest<'a, S, C, Self, K>,
        events: Option<EventSender>,
    ) -> BoxFuture<'a, Result<TypedOutput<T>, RunError>> {
        let RunRequest { plan, output, .. } = request;
        let context = C::context(plan.context);
        let agent = plan.agent;
        let defaults = agent.output;
        let check = TypedCheck::new(
            output.mode.unwrap_or(defaults.mode),
            output.retries.unwrap_or(defaults.retries),
            agent.output_shapes.of::<T>(),
            output.validators,
        );
        Box::pin(async move {
            let run = start(plan, context, TypedAnswer::new(&check, agent), events).await?;
            match check.into_value() {
                Some(value) => Ok(TypedOutput { value, run }),
                // The loop reports a run without its output as `NoOutput`; this is only for
                // safety.
                None => Err(RunError::NoOutput {
                    stop_reason: run.stop_reason,
                    attempts: Vec::new(),
                    messages: run.messages,
                    usage: run.usage,
                }),
            }
        })
    }
}
