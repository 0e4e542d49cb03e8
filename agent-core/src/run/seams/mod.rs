//! The seams' traits, re-exported as [`crate::seams`] (whose docs draw a step through them), and
//! the values the crate ships for them in `run::layers`.

mod answer;
mod held;
mod model_call;
mod policy;
mod transcript;

pub use answer::{AnswerCheck, Judgement, Offer, Reviewed, TextAnswer};
pub(crate) use held::{Held, Layer, Policy};
pub use model_call::{ModelCall, ModelLayer, Next};
pub(crate) use policy::RulingPlaces;
pub use policy::{CallPolicy, PolicyCall, ReplyRulings, Ruled, Ruling, RunStatus};
pub use transcript::{Transcript, Used};
