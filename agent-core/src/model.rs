//! The model abstraction: one trait every provider adapter and test double implements.

use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use crate::message::{AssistantMessage, Message};
use crate::settings::{ModelSettings, NO_SETTINGS, ResponseFormat, ToolChoice};
use crate::texts::{English, Texts};
use crate::usage::Usage;
use futures_util::Stream;

use crate::tool::{BoxFuture, ToolDef};

/// A chat model that can call tools.
///
/// Object-safe: an agent can hold a `Box<dyn Model>` chosen at run time. The history is lent, not
/// copied, on every step.
pub trait Model: Send + Sync {
    /// Sends the conversation and the tools on offer; returns the model's reply.
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>>;

    /// Like [`chat`](Model::chat), but yields the reply as it arrives, ending with
    /// [`StreamEvent::Finished`] carrying the same reply `chat` would give. The default makes the
    /// plain call and streams its result, so every model can be streamed: its reasoning and its
    /// text, one delta each, then the reply, which holds the calls and the usage (a model that
    /// does not stream has no pieces of them to tell before it).
    fn chat_stream<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxStream<'a, Result<StreamEvent, ModelError>> {
        Box::pin(ReplyAsEvents::new(self.chat(request)))
    }

    /// The model requests go to, as its provider names it (`gpt-4o-mini`), when it has one: the
    /// name a [`Fallback`](crate::Fallback) chain's errors give each model, and the answering
    /// model of a reply that does not say ([`ChatResponse::model`]). `None` by default; the HTTP
    /// adapters give the model they were made for.
    fn model_id(&self) -> Option<&str> {
        None
    }
}

/// What the agent sends the model on each step.
#[derive(Clone, Copy)]
#[non_exhaustive]
pub struct ChatRequest<'a> {
    /// The whole conversation so far, system prompt first.
    pub messages: &'a [Message],
    /// The tools the model may call.
    pub tools: &'a [ToolDef],
    /// Tool choice and sampling for this request; each one `None` is the adapter's own setting.
    pub settings: &'a ModelSettings,
    /// The schema the answer must follow, when the run asks for a typed answer the provider's
    /// native way.
    pub response_format: Option<&'a ResponseFormat>,
    /// The language of the words an adapter writes into the request itself, around what the
    /// history holds (the line before a tool result's images where the wire format takes them
    /// only in a user message, a part the provider cannot take): the run's, so that none of them
    /// is English in a run in another language.
    pub texts: &'a dyn Texts,
}

/// Every field but the texts, which are a trait object with no `Debug` of their own.
impl fmt::Debug for ChatRequest<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChatRequest")
            .field("messages", &self.messages)
            .field("tools", &self.tools)
            .field("settings", &self.settings)
            .field("response_format", &self.response_format)
            .finish_non_exhaustive()
    }
}

impl<'a> ChatRequest<'a> {
    /// A request for this history and these tools, with no settings of its own, in
    /// [`English`].
    pub fn new(messages: &'a [Message], tools: &'a [ToolDef]) -> Self {
        ChatRequest {
            messages,
            tools,
            settings: &NO_SETTINGS,
            response_format: None,
            texts: &English,
        }
    }

    /// The key of the conversation's prompt cache, when the settings ask for one (see
    /// [`PromptCache`](crate::PromptCache)).
    pub fn cache_key(&self) -> Option<&'a str> {
        let settings: &'a ModelSettings = self.settings;
        settings.prompt_cache.as_ref()?.key.as_deref()
    }

    /// Sets the texts the adapter's own words come from (a run sets its agent's).
    pub fn with_texts(mut self, texts: &'a dyn Texts) -> Self {
        self.texts = texts;
        self
    }

    /// Sets the settings of this request.
    pub fn with_settings(mut self, settings: &'a ModelSettings) -> Self {
        self.settings = settings;
        self
    }

    /// Asks for an answer that follows this schema.
    pub fn with_response_format(mut self, format: &'a ResponseFormat) -> Self {
        self.response_format = Some(format);
        self
    }

    /// The tool choice to send: the settings', and none when no tools are offered (providers
    /// refuse a choice among none).
    pub fn tool_choice(&self) -> Option<&'a ToolChoice> {
        self.settings
            .tool_choice
            .as_ref()
            .filter(|_| !self.tools.is_empty())
    }
}

/// The model's reply and what the provider said about it. Serializable, so a durable run can
/// record it.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct ChatResponse {
    /// The reply that goes into the history.
    pub message: AssistantMessage,
    /// Tokens this call used (zero when the provider does not say).
    pub usage: Usage,
    /// Why the model stopped, when the provider says.
    pub finish_reason: Option<FinishReason>,
    /// The model that answered, as its provider names it (`gpt-4o-mini-2024-07-18`): the model the
    /// reply itself names where the provider sends one (OpenAI's and Anthropic's `model`, Gemini's
    /// `modelVersion`), else the model the adapter asked for; `None` from a model that does not
    /// say (a [`ScriptedModel`](crate::testing::ScriptedModel)'s reply, unless its script names
    /// one). A [`Fallback`](crate::Fallback) chain's reply names the model of the chain that
    /// answered. A run keeps it for each step ([`RunOutput::step_models`](crate::RunOutput::step_models)),
    /// and a durable run's journal with the reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

impl ChatResponse {
    /// A response carrying this reply and nothing else.
    pub fn new(message: AssistantMessage) -> Self {
        ChatResponse {
            message,
            ..ChatResponse::default()
        }
    }

    /// Sets the token usage.
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = usage;
        self
    }

    /// Sets the finish reason.
    pub fn with_finish_reason(mut self, reason: FinishReason) -> Self {
        self.finish_reason = Some(reason);
        self
    }

    /// Names the model that answered ([`model`](Self::model)).
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }
}

impl From<AssistantMessage> for ChatResponse {
    fn from(message: AssistantMessage) -> Self {
        ChatResponse::new(message)
    }
}

/// Why the model stopped generating.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FinishReason {
    /// It finished its turn.
    Stop,
    /// It stopped to have tools run.
    ToolCalls,
    /// It hit the output token limit.
    Length,
    /// The provider filtered the content.
    ContentFilter,
    /// Anything else, as the provider spelled it.
    Other(String),
}

/// Why a model call failed. A model error ends the run with that error.
///
/// Provider adapters sort every failure into one of these, so callers can match on what happened
/// rather than on message text. No variant ever carries an API key.
///
/// An error the provider reports inside a streamed reply (an SSE `error` event, an OpenAI
/// `{"error": ...}` chunk, a Gemini error chunk) is sorted like the same error as an HTTP status:
/// an in-stream `overloaded_error` is [`Overloaded`](Self::Overloaded), retryable, exactly as a
/// 529 is. Its `status` is then the one the provider documents for that kind of error (the
/// stream itself came with a 200). Only an error of a kind the adapter does not know stays
/// [`Stream`](Self::Stream).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The provider rejected the credentials (401, 403).
    #[error("authentication failed ({status}): {message}")]
    Authentication {
        /// The HTTP status.
        status: u16,
        /// The provider's message.
        message: String,
    },
    /// Too many requests (429); retried automatically until the retry budget is spent. A 429 whose
    /// body says the quota itself is used up is [`QuotaExhausted`](Self::QuotaExhausted) instead.
    #[error("rate limited{}: {message}", retry_after.map(|after| format!(" (retry after {:.1} s)", after.as_secs_f64())).unwrap_or_default())]
    RateLimited {
        /// How long the provider asked to wait, when it said.
        retry_after: Option<Duration>,
        /// The provider's message.
        message: String,
    },
    /// The request is longer than the model's context window: OpenAI's (and compatible
    /// services') `context_length_exceeded` or "maximum context length", Anthropic's "prompt is
    /// too long", Gemini's "exceeds the maximum number of tokens". Not retried as it is; a run
    /// with a [context policy](crate::Agent::context_policy) shapes the request tighter and tries
    /// once more, and a [`Fallback`](crate::Fallback) chain passes to its next model.
    #[error("the request is longer than the model's context window ({status}): {message}")]
    ContextOverflow {
        /// The HTTP status.
        status: u16,
        /// The provider's message.
        message: String,
        /// The request's input tokens as the provider counted them, when its message says.
        tokens: Option<u64>,
        /// The most input tokens the model takes (its window, less what the request kept for
        /// the reply where the provider counts that in), when its message says.
        limit: Option<u64>,
    },
    /// The request cannot fit the context window its [context
    /// policy](crate::Agent::context_policy) keeps it in, even with everything left out that may
    /// be (a system prompt, the tool definitions or a question larger than the window): nothing
    /// was sent. Not retried; the same request fails the same way again.
    #[error(
        "the request needs at least {needed} tokens with everything left out that may be, and \
         its context window is {window}: shorten the system prompt, the tool definitions or the \
         question, or make the window larger"
    )]
    DoesNotFit {
        /// The tokens the smallest request would have (estimated).
        needed: u64,
        /// The window's tokens.
        window: u64,
    },
    /// The request was refused as invalid (400, 404, 413, 422): not retried.
    #[error("invalid request ({status}): {message}")]
    InvalidRequest {
        /// The HTTP status.
        status: u16,
        /// The provider's message.
        message: String,
    },
    /// The account's quota or credit is used up: a 402, OpenAI's `insufficient_quota`, Anthropic's
    /// `billing_error`, a Gemini `RESOURCE_EXHAUSTED` whose quota is a daily one (or one of 0).
    /// Waiting seconds does not help (the plan or billing must change, or the quota reset), so it
    /// is never retried, unlike [`RateLimited`](Self::RateLimited) which shares its 429.
    #[error("the quota or credit is exhausted: {message}")]
    QuotaExhausted {
        /// The provider's message.
        message: String,
    },
    /// The provider is overloaded (Anthropic's 529, 503); retried automatically.
    #[error("the provider is overloaded ({status}): {message}")]
    Overloaded {
        /// The HTTP status.
        status: u16,
        /// The provider's message.
        message: String,
    },
    /// The provider failed (5xx); retried automatically.
    #[error("server error ({status}): {message}")]
    Server {
        /// The HTTP status.
        status: u16,
        /// The provider's message.
        message: String,
    },
    /// No answer within the configured time.
    #[error("the request timed out after {:.1} s", after.as_secs_f64())]
    Timeout {
        /// The timeout that was exceeded.
        after: Duration,
    },
    /// The connection failed or broke off.
    #[error("transport error: {message}")]
    Transport {
        /// What went wrong.
        message: String,
    },
    /// The provider answered with something that is not the documented reply.
    #[error("could not decode the reply: {message}; the body began with: {excerpt:?}")]
    Decode {
        /// What did not fit.
        message: String,
        /// The first characters of the body.
        excerpt: String,
    },
    /// The stream broke off, or it carried an error of a kind the adapter cannot sort into
    /// another variant. Not retried.
    #[error("the reply stream failed: {message}")]
    Stream {
        /// What the provider said, or what went wrong.
        message: String,
    },
    /// The request asks for something this provider cannot do (an output schema its structured
    /// outputs cannot express, say); nothing was sent.
    #[error("the provider cannot take this request: {message}")]
    Unsupported {
        /// What it cannot take, and what to do instead.
        message: String,
    },
    /// Every model of a [`Fallback`](crate::Fallback) chain was tried and each failed with an
    /// error that let the next one answer: each model's error, in the order they were tried.
    /// [Retryable](Self::is_retryable) when any of them is, so a durable run tries the chain again
    /// later, as it would a single model.
    #[error("every model of the fallback chain failed: {}", FailureList(failures))]
    AllFailed {
        /// Each model's failure, in the order the models were tried.
        failures: Vec<ModelFailure>,
    },
    /// Any other failure: a model of your own, a test double
    /// ([`ScriptExhausted`](crate::testing::ScriptExhausted)). [`downcast_ref`](Self::downcast_ref)
    /// gets the typed error back.
    #[error("{0}")]
    Other(Box<dyn std::error::Error + Send + Sync>),
}

impl ModelError {
    /// Whether trying the same request again may succeed: rate limits, overload, server errors,
    /// timeouts and broken connections, and a [`Fallback`](crate::Fallback) chain's failure when
    /// any of its models' failures is one of them. An exhausted quota is not: it does not come
    /// back within seconds.
    ///
    /// ```
    /// use agent_core::ModelError;
    ///
    /// let overloaded = ModelError::Overloaded { status: 529, message: "Overloaded".into() };
    /// assert!(overloaded.is_retryable());
    /// let quota = ModelError::QuotaExhausted { message: "You exceeded your current quota".into() };
    /// assert!(!quota.is_retryable());
    /// ```
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            ModelError::RateLimited { .. }
                | ModelError::Overloaded { .. }
                | ModelError::Server { .. }
                | ModelError::Timeout { .. }
                | ModelError::Transport { .. }
        ) || matches!(self, ModelError::AllFailed { failures } if failures.iter().any(|failure| failure.error.is_retryable()))
    }

    /// Whether the request was refused as it is: a part or setting the provider cannot take
    /// ([`Unsupported`](ModelError::Unsupported), nothing was sent) or a request it finds invalid
    /// or too long ([`InvalidRequest`](ModelError::InvalidRequest),
    /// [`ContextOverflow`](ModelError::ContextOverflow)), or a [`Fallback`](crate::Fallback)
    /// chain's failure when every model refused it so. The same request fails the same way again:
    /// a session keeps no turn whose request was refused before anything happened, so the next
    /// one is not refused for it too.
    ///
    /// ```
    /// use agent_core::ModelError;
    ///
    /// let refused = ModelError::Unsupported { message: "PDF input".into() };
    /// assert!(refused.is_refusal());
    /// let overloaded = ModelError::Overloaded { status: 529, message: "Overloaded".into() };
    /// assert!(!overloaded.is_refusal());
    /// ```
    pub fn is_refusal(&self) -> bool {
        match self {
            ModelError::Unsupported { .. }
            | ModelError::InvalidRequest { .. }
            | ModelError::ContextOverflow { .. }
            | ModelError::DoesNotFit { .. } => true,
            ModelError::AllFailed { failures } => {
                !failures.is_empty() && failures.iter().all(|failure| failure.error.is_refusal())
            }
            _ => false,
        }
    }

    /// Wraps any error.
    pub fn other(error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        ModelError::Other(error.into())
    }

    /// The error inside [`ModelError::Other`], when it is an `E`.
    ///
    /// ```
    /// use agent_core::ModelError;
    /// use agent_core::testing::ScriptExhausted;
    ///
    /// let error = ModelError::other(ScriptExhausted { request: 2, scripted: 1 });
    /// assert_eq!(
    ///     error.downcast_ref::<ScriptExhausted>(),
    ///     Some(&ScriptExhausted { request: 2, scripted: 1 })
    /// );
    /// ```
    pub fn downcast_ref<E: std::error::Error + 'static>(&self) -> Option<&E> {
        match self {
            ModelError::Other(error) => error.downcast_ref::<E>(),
            _ => None,
        }
    }
}

/// One model's failure in a [`Fallback`](crate::Fallback) chain whose every model failed
/// ([`ModelError::AllFailed`]).
#[derive(Debug)]
#[non_exhaustive]
pub struct ModelFailure {
    /// The model's place in the chain, from 0.
    pub index: usize,
    /// The model's name ([`Model::model_id`]), when it has one.
    pub model: Option<String>,
    /// What it failed with.
    pub error: ModelError,
}

impl ModelFailure {
    /// The failure of the chain's model `index`, named `model`.
    pub fn new(index: usize, model: Option<String>, error: ModelError) -> Self {
        ModelFailure {
            index,
            model,
            error,
        }
    }
}

impl fmt::Display for ModelFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "model {}", self.index + 1)?;
        if let Some(model) = &self.model {
            write!(f, " ({model})")?;
        }
        write!(f, ": {}", self.error)
    }
}

/// The failures of [`ModelError::AllFailed`], one after another.
struct FailureList<'a>(&'a [ModelFailure]);

impl fmt::Display for FailureList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (position, failure) in self.0.iter().enumerate() {
            if position > 0 {
                f.write_str("; ")?;
            }
            fmt::Display::fmt(failure, f)?;
        }
        Ok(())
    }
}

// Forwards every method: `missing_trait_methods` fails clippy if a new one is left to its default,
// and the conformance suite fails the wrapper at run time.
#[deny(clippy::missing_trait_methods)]
impl<M: Model + ?Sized> Model for Box<M> {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        (**self).chat(request)
    }

    fn chat_stream<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxStream<'a, Result<StreamEvent, ModelError>> {
        (**self).chat_stream(request)
    }

    fn model_id(&self) -> Option<&str> {
        (**self).model_id()
    }
}

// Forwards every method: `missing_trait_methods` fails clippy if a new one is left to its default,
// and the conformance suite fails the wrapper at run time.
#[deny(clippy::missing_trait_methods)]
impl<M: Model + ?Sized> Model for Arc<M> {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        (**self).chat(request)
    }

    fn chat_stream<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxStream<'a, Result<StreamEvent, ModelError>> {
        (**self).chat_stream(request)
    }

    fn model_id(&self) -> Option<&str> {
        (**self).model_id()
    }
}

// Forwards every method: `missing_trait_methods` fails clippy if a new one is left to its default,
// and the conformance suite fails the wrapper at run time.
#[deny(clippy::missing_trait_methods)]
impl<M: Model + ?Sized> Model for &M {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        (**self).chat(request)
    }

    fn chat_stream<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxStream<'a, Result<StreamEvent, ModelError>> {
        (**self).chat_stream(request)
    }

    fn model_id(&self) -> Option<&str> {
        (**self).model_id()
    }
}

/// A boxed, `Send` stream: what [`Model::chat_stream`](crate::Model::chat_stream) returns.
pub type BoxStream<'a, T> = Pin<Box<dyn Stream<Item = T> + Send + 'a>>;

/// One piece of a model's reply as it arrives.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StreamEvent {
    /// More of the reply's text.
    TextDelta(String),
    /// More of the model's reasoning (its thinking or a summary of it), before or between the
    /// text and the calls; the whole of it is in the finished reply's
    /// [`reasoning`](crate::AssistantMessage::reasoning).
    ReasoningDelta(String),
    /// The model began a tool call; `index` is its place in the reply. A stream may leave the
    /// call events and [`Usage`](Self::Usage) out, as the default
    /// [`chat_stream`](Model::chat_stream) does: the finished reply holds them all.
    ToolCallStart {
        /// The call's place in the reply, from 0.
        index: usize,
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// More of a tool call's argument text.
    ToolCallArguments {
        /// The call's place in the reply.
        index: usize,
        /// The next piece of the JSON text.
        fragment: String,
    },
    /// Tokens used, as the provider reports them.
    Usage(Usage),
    /// The whole reply, exactly as the non-streaming call would give it. Always the last event.
    Finished(ChatResponse),
}

/// How a model without native streaming streams: its reply, once it is whole, told as its
/// reasoning and text deltas, then the reply itself. Each delta is made when it is asked for, from
/// the reply kept until the end; the calls and the usage travel only in the reply.
struct ReplyAsEvents<'a> {
    reply: Option<BoxFuture<'a, Result<ChatResponse, ModelError>>>,
    response: Option<ChatResponse>,
    next: NextEvent,
}

/// The next event [`ReplyAsEvents`] tells from its reply.
#[derive(Clone, Copy)]
enum NextEvent {
    Reasoning(usize),
    Text,
    Finished,
}

impl<'a> ReplyAsEvents<'a> {
    fn new(reply: BoxFuture<'a, Result<ChatResponse, ModelError>>) -> Self {
        ReplyAsEvents {
            reply: Some(reply),
            response: None,
            next: NextEvent::Reasoning(0),
        }
    }

    /// The next delta of the whole reply `response`, advancing `next` past it; `None` for a step
    /// with nothing to tell (an empty text, say).
    fn tell(response: &ChatResponse, next: &mut NextEvent) -> Option<StreamEvent> {
        let message = &response.message;
        match *next {
            NextEvent::Reasoning(index) => match message.reasoning.get(index) {
                Some(reasoning) => {
                    *next = NextEvent::Reasoning(index + 1);
                    (!reasoning.text.is_empty())
                        .then(|| StreamEvent::ReasoningDelta(reasoning.text.clone()))
                }
                None => {
                    *next = NextEvent::Text;
                    None
                }
            },
            NextEvent::Text => {
                *next = NextEvent::Finished;
                (!message.content.is_empty())
                    .then(|| StreamEvent::TextDelta(message.content.clone()))
            }
            // Taken whole by `poll_next`.
            NextEvent::Finished => None,
        }
    }
}

// Nothing in it is pinned in place: the reply's future is boxed.
impl Unpin for ReplyAsEvents<'_> {}

impl Stream for ReplyAsEvents<'_> {
    type Item = Result<StreamEvent, ModelError>;

    fn poll_next(
        mut self: Pin<&mut Self>,
        context: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        use std::task::Poll;
        let this = &mut *self;
        let response = match (&mut this.reply, this.response.take()) {
            (Some(reply), _) => {
                let Poll::Ready(result) = reply.as_mut().poll(context) else {
                    return Poll::Pending;
                };
                this.reply = None;
                match result {
                    Ok(response) => response,
                    Err(error) => return Poll::Ready(Some(Err(error))),
                }
            }
            (None, Some(response)) => response,
            (None, None) => return Poll::Ready(None),
        };
        // Kept only while a delta comes before the reply: a reply that only calls tools is handed
        // on as soon as it is there (each move of it is a copy).
        while !matches!(this.next, NextEvent::Finished) {
            if let Some(event) = Self::tell(&response, &mut this.next) {
                this.response = Some(response);
                return Poll::Ready(Some(Ok(event)));
            }
        }
        Poll::Ready(Some(Ok(StreamEvent::Finished(response))))
    }
}
