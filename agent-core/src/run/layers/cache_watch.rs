//! A run's watch over its prompt cache: when the run asks for one
//! ([`ModelSettings::prompt_cache`](crate::ModelSettings)), each request should begin with the
//! previous request whole (its tools, its system text, its history), with only the new messages
//! after it. A request that does not (a system prompt with a timestamp in it, tools that change,
//! a context policy's new cut) busts the cache: it is counted in that step's usage
//! ([`Usage::cache_busts`](crate::Usage::cache_busts)) and, the first time in a run, reported
//! through `tracing`.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::model::{ChatRequest, ChatResponse, ModelError};
use crate::run::context::{json_hash, message_hash};
use crate::run::seams::{ModelCall, ModelLayer, Next};
use crate::tool::BoxFuture;

/// The watch of one run: what its last request began with.
#[derive(Default)]
pub(crate) struct CacheWatch {
    /// The hash of the last request's tools and system-wide settings, then one per message.
    last: Mutex<Vec<u64>>,
    reported: AtomicBool,
}

/// The hashes a request's prefix is compared by: its tool definitions first, then each message.
fn hashes(request: &ChatRequest<'_>) -> Vec<u64> {
    let mut tools = DefaultHasher::new();
    for tool in request.tools {
        (&tool.name, &tool.description).hash(&mut tools);
        json_hash(&tool.parameters, &mut tools);
    }
    let mut hashes = Vec::with_capacity(1 + request.messages.len());
    hashes.push(tools.finish());
    hashes.extend(request.messages.iter().map(|message| {
        let mut hasher = DefaultHasher::new();
        message_hash(message, &mut hasher);
        hasher.finish()
    }));
    hashes
}

impl CacheWatch {
    /// Whether `request` busts the cache the last request made, and keeps it as the last.
    fn busts(&self, request: &ChatRequest<'_>) -> bool {
        let now = hashes(request);
        let mut last = self
            .last
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        let busts = !last.is_empty() && !now.starts_with(&last);
        *last = now;
        busts
    }
}

impl<S: Sync> ModelLayer<S> for CacheWatch {
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
