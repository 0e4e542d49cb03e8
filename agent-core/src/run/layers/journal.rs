//! A durable engine's [`Journal`] as a model-call layer: each model call is one journaled step,
//! whose recorded reply a replay gets back instead of calling the model again. (Its tool calls go
//! through the journal in the dispatcher.)

use crate::model::{ChatResponse, ModelError};
use crate::run::journal::Journal;
use crate::run::seams::{ModelCall, ModelLayer, Next};
use crate::tool::BoxFuture;

/// Records each model call in a journal.
pub(crate) struct Journaled<'j>(pub(crate) &'j dyn Journal);

impl<S: Sync> ModelLayer<S> for Journaled<'_> {
    fn call<'a>(
        &'a self,
        call: ModelCall<'a, S>,
        next: Next<'a, S>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        self.0.model_call(call.step, next.call(call))
    }
}
