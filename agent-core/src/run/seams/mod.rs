//! The seams of a run, as public traits: what a feature of a run plugs into, and what a user can
//! write a value for outside the crate. A step passes them in this order:
//!
//! ```text
//! policies' before_step -> model-call layers -> answer check -> policies on the reply
//!   -> policies on each call -> the dispatcher (ToolSet::outcome, the journal)
//!   -> policies' after_call on each result -> the transcript
//! ```
//!
//! - [`ModelLayer`]: around the call to the model (hooks' observers, a trace span, a durable
//!   engine's journal; a cache or a context policy of one's own), outermost first.
//! - [`CallPolicy`]: an ordered list, folded into one [`Ruling`] per call (limits, a call cut
//!   off, hooks, external tools, the approver, "a run that cannot pause").
//! - [`AnswerCheck`]: one per run; [`TextAnswer`] for a text run, a typed output's for a typed
//!   run.
//! - [`Transcript`]: keeps the transcript as it grows; a session's store does, step by step.
//!
//! The values the crate ships for each are in the module `run::layers` and listed in
//! `ARCHITECTURE.md`; [`Agent::policy`](crate::Agent::policy) and
//! [`Agent::model_layer`](crate::Agent::model_layer) add one's own.

mod answer;
mod model_call;
mod policy;
mod transcript;

pub use answer::{AnswerCheck, Judgement, Offer, TextAnswer};
pub use model_call::{ModelCall, ModelLayer, Next};
pub(crate) use policy::RulingPlaces;
pub use policy::{CallPolicy, PolicyCall, ReplyRulings, Ruled, Ruling, RunStatus};
pub use transcript::Transcript;
