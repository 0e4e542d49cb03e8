//! The context policy: what of a long conversation each request carries. A value at the
//! model-call seam (the outermost layer when the agent has a policy): before every request it
//! shows the policy the history as [`Turns`] (units it can keep or leave out whole, their tokens
//! estimated and scaled by what the provider counted for the last request, with the
//! [`Summary`]s known for the conversation) and sends the history the policy's [`Shape`] makes.
//! The messages stored are not changed: this is a view per request; a summary the policy makes is
//! kept beside them (in the run's output and its session).
//!
//! - `turns`: the history as units, and the one function that builds a history from a shape;
//! - `estimate`: tokens without a tokenizer (or with one of yours: [`TokenCounter`]), kept honest
//!   by the provider's counts;
//! - `window`: the policies that leave turns out ([`KeepLastTurns`], [`TokenWindow`]);
//! - `summarize`: the policy that puts a model's summary in their place ([`Summarize`]);
//! - `summary`: a summary and the messages it stands for, as a run and a session keep them;
//! - `sent`: what the last request sent (where it cut, its prefix), kept across runs;
//! - `recall`: the tool a model reads a result left out with, answered from the transcript;
//! - `layer`: the model-call layer that asks the policy, in one run.

mod estimate;
mod layer;
mod recall;
mod sent;
mod summarize;
mod summary;
#[cfg(test)]
mod tests;
mod turns;
mod window;

pub use estimate::TokenCounter;
pub(crate) use estimate::messages_tokens;
#[cfg(feature = "bench-internals")]
#[doc(hidden)]
pub use layer::__bench;
pub(crate) use layer::{ContextLayer, InRun};
pub use recall::{RECALL_PAGE, RECALL_TOOL};
pub(crate) use recall::{Recall, recall_definition};
pub(crate) use sent::LastSent;
pub use summarize::Summarize;
pub use summary::Summary;
pub(crate) use summary::{Positions, RunSummaries};
pub use turns::{Shape, Turns, Unit, UnitKind};
pub use window::{KeepLastTurns, TokenWindow};

use std::hash::{Hash, Hasher};

use crate::message::Message;
use crate::model::ModelError;
use crate::tool::BoxFuture;

/// What of the history a request carries, decided before every model request from the history
/// seen as [`Turns`]. The policy answers with a [`Shape`] (where the history it keeps starts, a
/// summary of what it leaves out, results to send as a note), never with messages of its own, so
/// the history sent is always one a provider accepts: every call answered, every result with its
/// call, a call that waits never left out. Set with
/// [`Agent::context_policy`](crate::Agent::context_policy).
///
/// ```
/// use agent_core::context::{ContextPolicy, Shape, Turns};
/// use agent_core::{BoxFuture, ModelError};
///
/// /// Only the turn under way, once the history passes 50 units.
/// struct Forgetful;
///
/// impl ContextPolicy for Forgetful {
///     fn shape<'a>(&'a self, turns: &'a Turns<'a>) -> BoxFuture<'a, Result<Shape, ModelError>> {
///         let shape = match turns.turn_starts().last() {
///             Some(last) if turns.units().len() > 50 => Shape::from_unit(last),
///             _ => Shape::everything(),
///         };
///         Box::pin(std::future::ready(Ok(shape)))
///     }
/// }
/// ```
pub trait ContextPolicy: Send + Sync + 'static {
    /// What the request for `turns` carries.
    fn shape<'a>(&'a self, turns: &'a Turns<'a>) -> BoxFuture<'a, Result<Shape, ModelError>>;

    /// The most characters of a result it left out that a model reads back at once
    /// ([`RECALL_TOOL`]): a page that fits in its requests with room to spare, or the model would
    /// read a result back only for it to be left out again. [`RECALL_PAGE`] by default; the
    /// crate's policies give a quarter of their window.
    fn recall_page(&self) -> usize {
        RECALL_PAGE
    }
}

/// Feeds what `message` says to `hasher`.
pub(crate) fn message_hash(message: &Message, hasher: &mut impl Hasher) {
    match message {
        Message::System { content } => (0u8, content).hash(hasher),
        Message::User { content, parts } => (1u8, content, parts.len()).hash(hasher),
        Message::Assistant(reply) => {
            (2u8, &reply.content).hash(hasher);
            for call in &reply.tool_calls {
                (&call.id, &call.name, &call.arguments).hash(hasher);
            }
        }
        Message::Tool(result) => (3u8, &result.tool_call_id, &result.content).hash(hasher),
    }
}

/// Feeds a JSON value (a tool's schema) to `hasher` as it reads, without serializing it: every
/// key, string, number and literal, in order.
pub(crate) fn json_hash(value: &serde_json::Value, hasher: &mut impl Hasher) {
    use serde_json::Value;
    match value {
        Value::Null => 0u8.hash(hasher),
        Value::Bool(flag) => (1u8, flag).hash(hasher),
        Value::Number(number) => (2u8, number).hash(hasher),
        Value::String(text) => (3u8, text).hash(hasher),
        Value::Array(items) => {
            (4u8, items.len()).hash(hasher);
            items.iter().for_each(|item| json_hash(item, hasher));
        }
        Value::Object(fields) => {
            (5u8, fields.len()).hash(hasher);
            for (key, item) in fields {
                key.hash(hasher);
                json_hash(item, hasher);
            }
        }
    }
}

/// About the characters a JSON value (a tool's schema) takes serialized, without serializing it.
pub(crate) fn json_size(value: &serde_json::Value) -> usize {
    use serde_json::Value;
    match value {
        Value::Null | Value::Bool(_) => 5,
        Value::Number(_) => 4,
        Value::String(text) => text.len() + 2,
        Value::Array(items) => 2 + items.iter().map(|item| json_size(item) + 1).sum::<usize>(),
        Value::Object(fields) => {
            2 + fields
                .iter()
                .map(|(key, item)| key.len() + 4 + json_size(item))
                .sum::<usize>()
        }
    }
}
