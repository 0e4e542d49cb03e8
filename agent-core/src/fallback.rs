//! A chain of models that answer in turn: when one fails with an error its own retries could not
//! fix, the next one answers. Part of the model layer: the chain is an ordinary [`Model`].

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures_util::{Stream, StreamExt};

use crate::model::{
    BoxStream, ChatRequest, ChatResponse, Model, ModelError, ModelFailure, StreamEvent,
};
use crate::settings::ModelSettings;
use crate::tool::BoxFuture;

/// Which errors let the next model answer.
type Rule = dyn Fn(&ModelError) -> bool + Send + Sync;

/// Models tried in order: when one fails with an error that a retry of the same model cannot fix
/// (its vendor overloaded past the adapter's retries, the quota used up, a storm of 5xx, no
/// connection), the next one answers. Each model may be of another vendor and have settings of
/// its own. It is an ordinary [`Model`], so an agent takes it as it takes any:
///
/// ```
/// use agent_core::testing::{ScriptStep, ScriptedModel};
/// use agent_core::{Agent, AssistantMessage, ChatResponse, Fallback, ModelError, ModelSettings, agent};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// // The primary is overloaded (an HTTP adapter says so once its own retries are spent).
/// let primary = ScriptedModel::from_steps([ScriptStep::error(|| ModelError::Overloaded {
///     status: 529,
///     message: "Overloaded".into(),
/// })]);
/// let backup = ScriptedModel::new([
///     ChatResponse::new(AssistantMessage::text("Take an umbrella.")).with_model("backup-1"),
/// ]);
/// let chain = Fallback::new(primary)
///     .then_with(backup.clone(), ModelSettings::new().temperature(0.2).max_tokens(800));
/// let agent: Agent = agent!(chain);
///
/// let out = agent.run("Do I need an umbrella today?").await?;
/// assert_eq!(out.text, "Take an umbrella.");
/// // The run says which model answered each step.
/// assert_eq!(out.step_models, [Some("backup-1".to_owned())]);
/// // The backup got its own settings.
/// assert_eq!(backup.last_request().unwrap().settings.temperature, Some(0.2));
/// # Ok::<(), agent_core::RunError>(())
/// # }).unwrap();
/// ```
///
/// With the HTTP adapters (`providers`), each its vendor's and with its own retries:
///
/// ```
/// # #[cfg(all(feature = "openai", feature = "anthropic"))] {
/// use agent_core::providers::{Anthropic, HttpConfig, OpenAi};
/// use agent_core::{Fallback, ModelSettings, Thinking};
///
/// let openai = OpenAi::new("gpt-4o-mini")
///     .api_key("sk-...")
///     .http_config(HttpConfig::default().max_retries(2));
/// let chain = Fallback::new(openai)
///     .then_with(
///         Anthropic::new("claude-sonnet-4-5").api_key("sk-ant-..."),
///         ModelSettings::new().max_tokens(4096).thinking(Thinking::Budget(2048)),
///     );
/// # }
/// ```
///
/// **When it falls back.** After a model's error, the chain asks the next model when its rule
/// says so: by default [`Fallback::should_fall_back`] (an outage, a rate limit or a quota, a reply
/// that broke off or could not be read, a request this vendor cannot take; not a bad request, a
/// refused key, or an error of a model of your own), or a rule of your own
/// ([`fall_back_when`](Self::fall_back_when)). The adapters retry first, as their
/// `providers::HttpConfig` says: the chain sees a model's error only once its retries are spent.
/// An error the rule does not let through reaches the caller as it is (the failures of the models
/// before it are traced, at `WARN`). When every model failed, the error is
/// [`ModelError::AllFailed`], carrying each model's error; a chain of one model is that model,
/// its errors unchanged.
///
/// **Streaming.** A streamed reply ([`Model::chat_stream`]) falls back only before anything of it
/// reached the caller: once a model's stream has passed on a text or reasoning delta or a piece
/// of a tool call, the chain is committed to that model, and an error later in its stream ends
/// the stream as it is (the caller has shown the text; another model's answer cannot follow it).
/// A [`Usage`](StreamEvent::Usage) event before the first piece is held back until then.
///
/// **Settings.** A model's own settings ([`then_with`](Self::then_with),
/// [`new_with`](Self::new_with)) are laid over each request's: a setting it makes wins, one it
/// leaves `None` is the request's (the run's and the agent's). The tool choice is the exception:
/// the run's wins, since a run sets it step by step (a forced call once, the final-answer tool at
/// the step limit); a model's own applies where the run makes none.
///
/// **Which model answered** is the reply's [`ChatResponse::model`] (the answering model's own,
/// else its [`model_id`](Model::model_id)); a run keeps it for each step
/// ([`RunOutput::step_models`](crate::RunOutput::step_models)), a durable run in its journal.
///
/// **A model that is down** is asked again on the next call, and fails again after its retries:
/// [`cooldown`](Self::cooldown) lets the chain skip it for a while instead.
pub struct Fallback {
    links: Vec<Link>,
    /// `None`: [`Fallback::should_fall_back`].
    rule: Option<Box<Rule>>,
    cooldown: Option<Duration>,
}

/// One model of the chain.
struct Link {
    model: Box<dyn Model>,
    settings: Option<ModelSettings>,
    /// Until when the chain asks it only after the others (see [`Fallback::cooldown`]).
    resting_until: Mutex<Option<Instant>>,
}

impl Link {
    fn new(model: Box<dyn Model>, settings: Option<ModelSettings>) -> Self {
        Link {
            model,
            settings,
            resting_until: Mutex::new(None),
        }
    }

    /// A request's settings with this model's laid over them.
    fn settings_over<'s>(&'s self, request: &'s ModelSettings) -> Cow<'s, ModelSettings> {
        match &self.settings {
            None => Cow::Borrowed(request),
            Some(own) => {
                let mut settings = own.or(request);
                // The run sets the tool choice step by step: its choice wins.
                settings.tool_choice = request
                    .tool_choice
                    .clone()
                    .or_else(|| own.tool_choice.clone());
                Cow::Owned(settings)
            }
        }
    }

    fn resting_until(&self) -> MutexGuard<'_, Option<Instant>> {
        // Nothing is left half-done while the lock is held: a poisoned one is as good.
        self.resting_until
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Names the model of `response` after this model when the response does not.
    fn name(&self, response: &mut ChatResponse) {
        if response.model.is_none() {
            response.model = self.model.model_id().map(str::to_owned);
        }
    }
}

impl Fallback {
    /// A chain whose first model is `model`; add the next ones with [`then`](Self::then).
    pub fn new(model: impl Model + 'static) -> Self {
        Fallback {
            links: vec![Link::new(Box::new(model), None)],
            rule: None,
            cooldown: None,
        }
    }

    /// A chain whose first model is `model`, with its own `settings` laid over each request's.
    pub fn new_with(model: impl Model + 'static, settings: ModelSettings) -> Self {
        Fallback {
            links: vec![Link::new(Box::new(model), Some(settings))],
            rule: None,
            cooldown: None,
        }
    }

    /// Adds `model` after the others: it answers when they have all failed.
    pub fn then(mut self, model: impl Model + 'static) -> Self {
        self.links.push(Link::new(Box::new(model), None));
        self
    }

    /// Adds `model` after the others, with its own `settings` laid over each request's (see
    /// [`Fallback`] for how they combine).
    pub fn then_with(mut self, model: impl Model + 'static, settings: ModelSettings) -> Self {
        self.links.push(Link::new(Box::new(model), Some(settings)));
        self
    }

    /// Falls back after the errors `rule` says `true` of, instead of those
    /// [`should_fall_back`](Self::should_fall_back) names. To fall back also when the first
    /// vendor refuses its key (a key revoked or expired there is exactly when another vendor
    /// should answer):
    ///
    /// ```
    /// use agent_core::testing::ScriptedModel;
    /// use agent_core::{AssistantMessage, Fallback, ModelError};
    ///
    /// let chain = Fallback::new(ScriptedModel::new([AssistantMessage::text("a")]))
    ///     .then(ScriptedModel::new([AssistantMessage::text("b")]))
    ///     .fall_back_when(|error| {
    ///         Fallback::should_fall_back(error) || matches!(error, ModelError::Authentication { .. })
    ///     });
    /// ```
    pub fn fall_back_when(
        mut self,
        rule: impl Fn(&ModelError) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.rule = Some(Box::new(rule));
        self
    }

    /// Rests a model whose error let the next one answer for `period`: calls in that time ask the
    /// models that are not resting first (in their order), and the resting ones only after them.
    /// A model that answers rests no more; one that could not take a request
    /// ([`ModelError::Unsupported`]: nothing was sent) does not rest for it. Off by default (every call starts with the first
    /// model); with it, a run whose first model is down waits out that model's retries once, not
    /// at every step. The rest is shared by every run of the chain (an agent's runs share their
    /// model).
    pub fn cooldown(mut self, period: Duration) -> Self {
        self.cooldown = Some(period);
        self
    }

    /// The default rule: whether, after `error`, the chain asks its next model.
    ///
    /// | error | falls back | because |
    /// |---|---|---|
    /// | [`RateLimited`](ModelError::RateLimited), [`Overloaded`](ModelError::Overloaded), [`Server`](ModelError::Server), [`Timeout`](ModelError::Timeout), [`Transport`](ModelError::Transport) | yes | the model's own retries are spent: its vendor is down or busy for longer, another vendor is not |
    /// | [`QuotaExhausted`](ModelError::QuotaExhausted) | yes | the account's quota at this vendor is used up, not at another |
    /// | [`Stream`](ModelError::Stream) | yes | the stream broke off (before anything of it reached the caller, or it would not be asked) |
    /// | [`Decode`](ModelError::Decode) | yes | the vendor (or a proxy before it) answered with something that is not a reply |
    /// | [`Unsupported`](ModelError::Unsupported) | yes | this vendor cannot take the request (nothing was sent); another may |
    /// | [`AllFailed`](ModelError::AllFailed) | yes | a chain within the chain failed over to its end |
    /// | [`ContextOverflow`](ModelError::ContextOverflow) | yes | the request is longer than this model's context window; another model's may hold it |
    /// | [`DoesNotFit`](ModelError::DoesNotFit) | no | the agent's context policy, not the model, leaves no room for the request (it is found before any model is asked) |
    /// | [`InvalidRequest`](ModelError::InvalidRequest) | no | the request itself is refused (malformed, a model that does not exist): the next model would most likely refuse it too, and quietly answering with another model would hide the mistake |
    /// | [`Authentication`](ModelError::Authentication) | no | a key to fix, not an outage; [`fall_back_when`](Self::fall_back_when) shows how to fall back on it too |
    /// | [`Other`](ModelError::Other) | no | an error of a model of your own: what it means is its to say |
    ///
    /// ```
    /// use agent_core::{Fallback, ModelError};
    ///
    /// assert!(Fallback::should_fall_back(&ModelError::QuotaExhausted { message: "no credit".into() }));
    /// assert!(!Fallback::should_fall_back(&ModelError::InvalidRequest {
    ///     status: 400,
    ///     message: "bad tool schema".into(),
    /// }));
    /// ```
    pub fn should_fall_back(error: &ModelError) -> bool {
        match error {
            ModelError::RateLimited { .. }
            | ModelError::QuotaExhausted { .. }
            | ModelError::Overloaded { .. }
            | ModelError::Server { .. }
            | ModelError::Timeout { .. }
            | ModelError::Transport { .. }
            | ModelError::Stream { .. }
            | ModelError::Decode { .. }
            | ModelError::Unsupported { .. }
            | ModelError::ContextOverflow { .. }
            | ModelError::AllFailed { .. } => true,
            ModelError::InvalidRequest { .. }
            | ModelError::DoesNotFit { .. }
            | ModelError::Authentication { .. }
            | ModelError::Other(_) => false,
        }
    }

    /// The order of this call: the models that are not resting, then those that are.
    fn order(&self) -> Vec<usize> {
        let all = 0..self.links.len();
        if self.cooldown.is_none() {
            return all.collect();
        }
        let now = Instant::now();
        let resting: Vec<bool> = self
            .links
            .iter()
            .map(|link| link.resting_until().is_some_and(|until| until > now))
            .collect();
        let (mut order, rest): (Vec<usize>, Vec<usize>) = all.partition(|&index| !resting[index]);
        order.extend(rest);
        order
    }

    /// Model `index` answered: it rests no more.
    fn answered(&self, index: usize) {
        if self.cooldown.is_some() {
            *self.links[index].resting_until() = None;
        }
    }

    /// Model `index` failed with `error`: `Ok` when the next model is to be asked (the failure is
    /// kept in `failures`), else the error for the caller.
    fn failed(
        &self,
        index: usize,
        error: ModelError,
        failures: &mut Vec<ModelFailure>,
    ) -> Result<(), ModelError> {
        let falls_back = match &self.rule {
            Some(rule) => rule(&error),
            None => Fallback::should_fall_back(&error),
        };
        if self.links.len() == 1 || !falls_back {
            return Err(error);
        }
        let link = &self.links[index];
        // A request this model cannot take says nothing of the next one: it does not rest.
        if let Some(period) = self.cooldown
            && !matches!(error, ModelError::Unsupported { .. })
        {
            *link.resting_until() = Some(Instant::now() + period);
        }
        let model = link.model.model_id().map(str::to_owned);
        let name = model.as_deref().unwrap_or("(unnamed)");
        // The kind at `WARN`; the error's words only at `DEBUG`, as they may quote the reply.
        tracing::warn!(
            index,
            model = name,
            error.kind = kind(&error),
            "a model of the fallback chain failed; the next one is asked"
        );
        tracing::debug!(index, model = name, %error, "the error the fallback chain passed over");
        failures.push(ModelFailure::new(index, model, error));
        Ok(())
    }
}

/// The kind of an error, as a word for the traces.
fn kind(error: &ModelError) -> &'static str {
    match error {
        ModelError::Authentication { .. } => "authentication",
        ModelError::RateLimited { .. } => "rate_limited",
        ModelError::InvalidRequest { .. } => "invalid_request",
        ModelError::ContextOverflow { .. } => "context_overflow",
        ModelError::DoesNotFit { .. } => "does_not_fit",
        ModelError::QuotaExhausted { .. } => "quota_exhausted",
        ModelError::Overloaded { .. } => "overloaded",
        ModelError::Server { .. } => "server",
        ModelError::Timeout { .. } => "timeout",
        ModelError::Transport { .. } => "transport",
        ModelError::Decode { .. } => "decode",
        ModelError::Stream { .. } => "stream",
        ModelError::Unsupported { .. } => "unsupported",
        ModelError::AllFailed { .. } => "all_failed",
        ModelError::Other(_) => "other",
    }
}

impl Model for Fallback {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async move {
            let mut failures = Vec::new();
            for index in self.order() {
                let link = &self.links[index];
                let settings = link.settings_over(request.settings);
                match link.model.chat(request.with_settings(&settings)).await {
                    Ok(mut response) => {
                        self.answered(index);
                        link.name(&mut response);
                        return Ok(response);
                    }
                    Err(error) => self.failed(index, error, &mut failures)?,
                }
            }
            Err(ModelError::AllFailed { failures })
        })
    }

    fn chat_stream<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxStream<'a, Result<StreamEvent, ModelError>> {
        Box::pin(generate(move |out| async move {
            let mut failures = Vec::new();
            for index in self.order() {
                let link = &self.links[index];
                let settings = link.settings_over(request.settings);
                let mut stream = link.model.chat_stream(request.with_settings(&settings));
                // Usage told before the first piece, held back until the chain is committed.
                let mut held = Vec::new();
                let mut committed = false;
                let error = loop {
                    match stream.next().await {
                        Some(Ok(event @ StreamEvent::Usage(_))) if !committed => held.push(event),
                        Some(Ok(StreamEvent::Finished(mut response))) => {
                            self.answered(index);
                            link.name(&mut response);
                            for event in held.drain(..) {
                                out.emit(Ok(event)).await;
                            }
                            out.emit(Ok(StreamEvent::Finished(response))).await;
                            return;
                        }
                        Some(Ok(event)) => {
                            committed = true;
                            for event in held.drain(..) {
                                out.emit(Ok(event)).await;
                            }
                            out.emit(Ok(event)).await;
                        }
                        Some(Err(error)) => break error,
                        // A stream that ends without its reply after passing pieces on ends so
                        // for the caller too; one that passed nothing on failed.
                        None if committed => return,
                        None => {
                            break ModelError::Stream {
                                message: "the stream ended before the reply was finished"
                                    .to_owned(),
                            };
                        }
                    }
                };
                if committed {
                    out.emit(Err(error)).await;
                    return;
                }
                if let Err(error) = self.failed(index, error, &mut failures) {
                    out.emit(Err(error)).await;
                    return;
                }
            }
            out.emit(Err(ModelError::AllFailed { failures })).await;
        }))
    }

    fn model_id(&self) -> Option<&str> {
        self.links.first().and_then(|link| link.model.model_id())
    }
}

/// The models by name and their own settings, the rule and the cooldown; never a key (no model's
/// own `Debug` is shown).
impl fmt::Debug for Fallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Links<'a>(&'a [Link]);
        impl fmt::Debug for Links<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_list()
                    .entries(
                        self.0.iter().map(|link| {
                            (link.model.model_id().unwrap_or("(unnamed)"), &link.settings)
                        }),
                    )
                    .finish()
            }
        }
        f.debug_struct("Fallback")
            .field("models", &Links(&self.links))
            .field(
                "rule",
                &if self.rule.is_some() {
                    "custom"
                } else {
                    "default"
                },
            )
            .field("cooldown", &self.cooldown)
            .finish()
    }
}

/// A stream whose items an async block hands out one at a time through an [`Emitter`]. The
/// fallback stream is one: its block owns what each model's stream borrows (the settings made
/// for it), which a stream kept between polls could not.
struct Generated<'a, T> {
    /// The block; `None` once it is done.
    body: Option<BoxFuture<'a, ()>>,
    slot: Arc<Mutex<Option<T>>>,
}

/// Where a [`Generated`] stream's block puts its items.
struct Emitter<T> {
    slot: Arc<Mutex<Option<T>>>,
}

fn generate<'a, T, F>(body: impl FnOnce(Emitter<T>) -> F) -> Generated<'a, T>
where
    T: Send + 'a,
    F: Future<Output = ()> + Send + 'a,
{
    let slot = Arc::new(Mutex::new(None));
    let emitter = Emitter {
        slot: Arc::clone(&slot),
    };
    Generated {
        body: Some(Box::pin(body(emitter))),
        slot,
    }
}

fn take<T>(slot: &Mutex<Option<T>>) -> MutexGuard<'_, Option<T>> {
    // An item is put or taken whole: a poisoned lock holds a whole one or none.
    slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl<T> Emitter<T> {
    /// Hands `item` to the stream; done once the stream's reader has taken it.
    fn emit(&self, item: T) -> Emit<'_, T> {
        Emit {
            slot: &self.slot,
            item: Some(item),
        }
    }
}

/// The future of [`Emitter::emit`]: it puts its item in the slot and waits once, which makes the
/// stream's poll return with the item; polled again (the reader wants the next item), it is done.
struct Emit<'e, T> {
    slot: &'e Mutex<Option<T>>,
    item: Option<T>,
}

// The item is moved in and out whole, never pinned.
impl<T> Unpin for Emit<'_, T> {}

impl<T> Future for Emit<'_, T> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, _context: &mut Context<'_>) -> Poll<()> {
        match self.item.take() {
            Some(item) => {
                *take(self.slot) = Some(item);
                // No waker is needed: the stream takes the item at once and polls the block again
                // when asked for the next.
                Poll::Pending
            }
            None => Poll::Ready(()),
        }
    }
}

impl<T> Stream for Generated<'_, T> {
    type Item = T;

    fn poll_next(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Option<T>> {
        let this = &mut *self;
        let Some(body) = this.body.as_mut() else {
            return Poll::Ready(None);
        };
        let done = body.as_mut().poll(context).is_ready();
        if done {
            this.body = None;
        }
        match take(&this.slot).take() {
            Some(item) => Poll::Ready(Some(item)),
            None if done => Poll::Ready(None),
            None => Poll::Pending,
        }
    }
}
