//! A run's watch over its prompt cache: when the run asks for one
//! ([`ModelSettings::prompt_cache`](crate::ModelSettings)), each request should begin with the
//! previous request whole (its tools, its system text, its history), with only the new messages
//! after it. A request that does not (a system prompt with a timestamp in it, tools that change,
//! a context policy's new cut) busts the cache, within a run or between the runs of a session: it
//! is counted in that step's usage ([`Usage::cache_busts`](crate::Usage::cache_busts)) and, the
//! first time in a run, reported through `tracing`.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::model::{ChatRequest, ChatResponse, ModelError};
use crate::run::context::{LastSent, json_hash, message_hash};
use crate::run::seams::{ModelCall, ModelLayer, Next};
use crate::tool::BoxFuture;

/// The watch of one run: it compares each request with the last one its conversation sent (the
/// run's, or the one stored with its session when the run began, so busts between the runs of a
/// session count too), by the hash of that request's length of prefix.
pub(crate) struct CacheWatch<'r> {
    sent: &'r LastSent,
    reported: AtomicBool,
}

/// The hash of `request`'s first `prefix` messages (with its tools), and of the whole: one pass.
fn hashes(request: &ChatRequest<'_>, prefix: usize) -> (Option<u64>, u64) {
    let mut hasher = DefaultHasher::new();
    for tool in request.tools {
        (&tool.name, &tool.description).hash(&mut hasher);
        json_hash(&tool.parameters, &mut hasher);
    }
    let mut of_prefix = None;
    for (index, message) in request.messages.iter().enumerate() {
        if index == prefix {
            of_prefix = Some(hasher.clone().finish());
        }
        let mut one = DefaultHasher::new();
        message_hash(message, &mut one);
        hasher.write_u64(one.finish());
    }
    let whole = hasher.finish();
    if prefix == request.messages.len() {
        of_prefix = Some(whole);
    }
    (of_prefix, whole)
}

impl<'r> CacheWatch<'r> {
    /// The watch of a run whose last request is `sent`.
    pub(crate) fn new(sent: &'r LastSent) -> Self {
        CacheWatch {
            sent,
            reported: AtomicBool::new(false),
        }
    }

    /// Whether `request` busts the cache the last request made, and keeps it as the last.
    fn busts(&self, request: &ChatRequest<'_>) -> bool {
        let last = self.sent.last().filter(|last| last.sent > 0);
        let (of_prefix, whole) = hashes(request, last.map_or(0, |last| last.sent));
        let busts = last.is_some_and(|last| of_prefix != Some(last.hash));
        self.sent.update(|last| {
            last.sent = request.messages.len();
            last.hash = whole;
        });
        busts
    }
}

impl<S: Sync> ModelLayer<S> for CacheWatch<'_> {
    fn call<'a>(
        &'a self,
        call: ModelCall<'a, S>,
        next: Next<'a, S>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        if call.request.settings.prompt_cache.is_none() {
            return next.call(call);
        }
        let busts = self.busts(&call.request);
        if busts && !self.reported.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                step = call.step,
                "this request does not begin with the last one whole, so the provider's prompt \
                 cache cannot serve it (a changing system prompt or tools, or a new cut of the \
                 history); later ones in this run are counted in the usage's cache_busts"
            );
        }
        let reply = next.call(call);
        Box::pin(async move {
            let mut reply = reply.await?;
            reply.usage.cache_busts += u64::from(busts);
            Ok(reply)
        })
    }
}
