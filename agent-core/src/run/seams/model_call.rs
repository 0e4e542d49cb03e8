//! The model-call seam: each request of a run passes through an ordered list of [`ModelLayer`]s,
//! outermost first, to the model; each layer may look at or change the request, call the next
//! layer (or answer without it), and look at or change the reply, as a tower layer wraps a
//! service.

use super::Layer;
use crate::model::{ChatRequest, ChatResponse, Model, ModelError};
use crate::tool::BoxFuture;

/// One model call as it passes through the layers.
#[non_exhaustive]
pub struct ModelCall<'a, S> {
    /// The run's context.
    pub context: &'a S,
    /// The step this call is for, from 1.
    pub step: usize,
    /// What is sent.
    pub request: ChatRequest<'a>,
}

impl<'a, S> ModelCall<'a, S> {
    /// The same call with another request (a layer that rewrites the history, say).
    pub fn with_request<'b>(self, request: ChatRequest<'b>) -> ModelCall<'b, S>
    where
        'a: 'b,
    {
        ModelCall {
            context: self.context,
            step: self.step,
            request,
        }
    }
}

/// The rest of the way to the model: the layers inside this one, then the model.
pub struct Next<'a, S> {
    layers: &'a [Layer<'a, S>],
    model: &'a dyn Model,
}

impl<S> Clone for Next<'_, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S> Copy for Next<'_, S> {}

impl<'a, S: Sync> Next<'a, S> {
    /// The way through `layers` (outermost first) to `model`.
    pub(crate) fn new(layers: &'a [Layer<'a, S>], model: &'a dyn Model) -> Self {
        Next { layers, model }
    }

    /// Passes `call` on: to the next layer, or to the model.
    pub fn call<'b>(self, call: ModelCall<'b, S>) -> BoxFuture<'b, Result<ChatResponse, ModelError>>
    where
        'a: 'b,
    {
        match self.layers.split_first() {
            Some((layer, inner)) => layer.call(
                call,
                Next {
                    layers: inner,
                    model: self.model,
                },
            ),
            None => self.model.chat(call.request),
        }
    }
}

/// One value at the model-call seam, around the call to the [`Model`]: an observer, a journal,
/// a cache, a rewrite of the history. Added with
/// [`Agent::model_layer`](crate::Agent::model_layer).
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
///
/// use agent_core::seams::{ModelCall, ModelLayer, Next};
/// use agent_core::{BoxFuture, ChatResponse, ModelError};
///
/// /// Counts the model calls of every run.
/// #[derive(Default)]
/// struct Count(AtomicUsize);
///
/// impl<S: Sync> ModelLayer<S> for Count {
///     fn call<'a>(
///         &'a self,
///         call: ModelCall<'a, S>,
///         next: Next<'a, S>,
///     ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
///         self.0.fetch_add(1, Ordering::Relaxed);
///         next.call(call)
///     }
/// }
/// ```
pub trait ModelLayer<S = ()>: Send + Sync {
    /// Makes the call through `next`, or answers it.
    fn call<'a>(
        &'a self,
        call: ModelCall<'a, S>,
        next: Next<'a, S>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>>;
}

/// A shared layer is a layer.
impl<S, L: ModelLayer<S> + ?Sized> ModelLayer<S> for std::sync::Arc<L> {
    fn call<'a>(
        &'a self,
        call: ModelCall<'a, S>,
        next: Next<'a, S>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        (**self).call(call, next)
    }
}
