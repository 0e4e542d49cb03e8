//! An agent served over [AG-UI](https://docs.ag-ui.com), the event protocol agent front ends speak
//! (CopilotKit, and any client on `@ag-ui/client`): protocol 1.0.
//!
//! `POST /` takes a `RunAgentInput` (the thread, the run, the messages) and answers with
//! server-sent events, one JSON event each: `RUN_STARTED`; for each step `STEP_STARTED`, the
//! model's reasoning (`REASONING_START`, `REASONING_MESSAGE_*`, `REASONING_END`) and text
//! (`TEXT_MESSAGE_START`, `_CONTENT`, `_END`) as they stream, each tool call (`TOOL_CALL_START`,
//! `_ARGS`, `_END`, under the step's assistant message) and its result (`TOOL_CALL_RESULT`, with
//! the images and documents a tool returned as content parts), `STEP_FINISHED`; then
//! `RUN_FINISHED` (its `outcome` `success`, with the tokens used, or `interrupt`) or
//! `RUN_ERROR` (the error, and a `code`: `model_error`, `session_error`, ...). An agent called as
//! a tool streams in a lane of its own: `SUBAGENT_STARTED`, its events attributed to it
//! (`subagentRunId`), `SUBAGENT_FINISHED` before its call's result.
//!
//! The server keeps each thread's conversation (in memory unless given a
//! [`SessionStore`]): a run reads only the user's new message, the last of `messages` (its text
//! or its text, image, audio and document parts), with the input's `context` after it; the rest of
//! `messages`, the client's copy, is not taken, so a client cannot change what the assistant or a
//! tool said. A run of a thread waits for the one before it to end.
//!
//! Approvals and tools the client runs are the protocol's interrupts. A run that stops for them
//! ends with `RUN_FINISHED` whose `outcome` is `{"type": "interrupt", "interrupts": [...]}`: one per
//! waiting call, each with its `toolCallId`, a `reason` (`tool_approval`, or `tool_result` for an
//! [external](agent_core::ToolAnnotations::external) tool), a `message`, and `metadata` (the tool's
//! name and arguments). The next run answers them in `resume` (`interruptId`, `status`,
//! `payload`): an approval is `resolved` (with `{"approved": false, "reason": "..."}` a denial, with
//! `{"arguments": {...}}` a run with other arguments) or `cancelled` (denied); a client-side
//! tool's result is the `payload` of a `resolved` answer (`{"error": "..."}` for a failure). An
//! interrupt's id is a grant the server signed for that call of that thread's pause
//! ([`CallGrants`]): an answer under any other id is a `403` with nothing run.
//!
//! Who is asking works as on the web endpoint ([`agent_web::ChatServer::identify`]): each
//! request's head gives its run's context or a refusal, threads are kept per
//! [`ChatOwner`] (a thread id names a thread among the caller's own), and
//! [`UserLimits`] cap each user's requests, tokens and runs at once (`429` with `retry-after`).
//! A client that goes away (`abortRun()`) cancels its run; what it did is kept in the thread.
//! Before the stream, a request that does not fit is an HTTP error with a JSON body
//! (`{"error": "..."}`): `400` (not a `RunAgentInput`, no user message last, an answer that does
//! not fit its call, a `resume` that leaves some interrupts unanswered), `403`, `404` (a resume on
//! a thread the caller does not have), `409` (a new message while the thread waits on interrupts,
//! or a resume when nothing waits), `413`, `415` (a body that is not `application/json`), `429`.
//! While a run waits (a slow tool, a slow model), the stream sends a keep-alive comment
//! (`: keep-alive`) every 15 seconds ([`AguiServer::keep_alive`]). Pages of other origins call
//! the endpoint once allowed ([`AguiServer::allow_origin`], CORS as on the web endpoint).
//!
//! ```no_run
//! use std::sync::Arc;
//! use agent_agui::AguiServer;
//! # async fn serve(agent: agent_core::Agent) -> std::io::Result<()> {
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8000").await?;
//! AguiServer::new(Arc::new(agent)).serve(listener).await
//! # }
//! ```
//!
//! and from the browser or Node, with the official client:
//!
//! ```js
//! import { HttpAgent } from "@ag-ui/client";
//!
//! const agent = new HttpAgent({ url: "http://127.0.0.1:8000/" });
//! agent.addMessage({ id: crypto.randomUUID(), role: "user", content: "Umbrella in Paris?" });
//! await agent.runAgent();
//! // An approval: answer each interrupt the run ended with.
//! const resume = agent.pendingInterrupts.map((interrupt) => ({
//!   interruptId: interrupt.id, status: "resolved", payload: { approved: true },
//! }));
//! if (resume.length > 0) await agent.runAgent({ resume });
//! ```

mod events;
mod input;
mod interrupts;
mod run;

use std::sync::Arc;
use std::time::Duration;

use agent_core::Agent;
use agent_core::session::{MemorySessions, SessionStore};
pub use agent_web::DEFAULT_KEEP_ALIVE;
use agent_web::{
    Anonymous, CallGrants, ChatOwner, Cors, Identified, Identity, Limiter, UserLimits,
};
use axum::http::request::Parts;
use axum::response::IntoResponse;
use axum::routing::post;

/// The most a request body may have by default: a message with a few images.
pub const DEFAULT_BODY_LIMIT: usize = 16 * 1024 * 1024;

/// Serves an agent over AG-UI (see [the crate](crate)).
///
/// `S` is the agent's context; `I` how the server finds each request's: [`Anonymous`] (the
/// default, for an `Agent<()>`) or the function given to [`identify`](AguiServer::identify).
pub struct AguiServer<S = (), I = Anonymous> {
    agent: Arc<Agent<S>>,
    identity: I,
    store: Arc<dyn SessionStore>,
    body_limit: usize,
    limits: Option<UserLimits>,
    grants: Option<CallGrants>,
    cors: Cors,
    keep_alive: Duration,
}

/// What every request of one server shares.
struct Shared<S, I> {
    agent: Arc<Agent<S>>,
    identity: I,
    store: Arc<dyn SessionStore>,
    body_limit: usize,
    limiter: Option<Arc<Limiter>>,
    grants: CallGrants,
    keep_alive: Duration,
}

impl<S: Send + Sync + 'static> AguiServer<S, Anonymous> {
    /// Serves `agent`, keeping threads in memory. An agent whose runs need a context (an
    /// `Agent<User>`) is served once the server is told who is asking
    /// ([`identify`](AguiServer::identify)).
    pub fn new(agent: Arc<Agent<S>>) -> Self {
        AguiServer {
            agent,
            identity: Anonymous,
            store: Arc::new(MemorySessions::new()),
            body_limit: DEFAULT_BODY_LIMIT,
            limits: None,
            grants: None,
            cors: Cors::new(),
            keep_alive: DEFAULT_KEEP_ALIVE,
        }
    }

    /// Finds who is asking, as [`ChatServer::identify`](agent_web::ChatServer::identify) does:
    /// `identify` is handed each request's head and gives the run's context, or a response that
    /// refuses the request, before the body is read. Threads are kept under the context's
    /// [owner](ChatOwner).
    ///
    /// ```no_run
    /// use std::sync::Arc;
    /// use agent_agui::AguiServer;
    /// use agent_web::ChatOwner;
    /// use axum::http::StatusCode;
    ///
    /// #[derive(Clone)]
    /// struct User(String);
    ///
    /// impl ChatOwner for User {
    ///     fn owner(&self) -> &str {
    ///         &self.0
    ///     }
    /// }
    ///
    /// # fn agent() -> agent_core::Agent<User> { unimplemented!() }
    /// let server = AguiServer::new(Arc::new(agent())).identify(|parts| async move {
    ///     match parts.headers.get("authorization").and_then(|value| value.to_str().ok()) {
    ///         Some("Bearer secret-ann") => Ok(User("ann".into())),
    ///         _ => Err((StatusCode::UNAUTHORIZED, "sign in first")),
    ///     }
    /// });
    /// ```
    pub fn identify<F, Fut, R>(self, identify: F) -> AguiServer<S, Identified<S>>
    where
        S: ChatOwner,
        F: Fn(Parts) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<S, R>> + Send + 'static,
        R: IntoResponse,
    {
        AguiServer {
            agent: self.agent,
            identity: Identified::new(identify),
            store: self.store,
            body_limit: self.body_limit,
            limits: self.limits,
            grants: self.grants,
            cors: self.cors,
            keep_alive: self.keep_alive,
        }
    }
}

impl<S: Send + Sync + 'static, I> AguiServer<S, I> {
    /// Limits what each user may ask (see [`UserLimits`]): a request over them is a `429` with
    /// `retry-after`, and the thread is left as it was.
    pub fn limits(mut self, limits: UserLimits) -> Self {
        self.limits = Some(limits);
        self
    }

    /// The keys interrupt ids are signed with (HMAC-SHA256): the first signs, each verifies. Give
    /// every instance the same keys, so an interrupt one issued is answered through another;
    /// without, a server draws a key of its own at start.
    ///
    /// # Panics
    ///
    /// When `keys` is empty or holds an empty key.
    pub fn grant_keys<K: AsRef<[u8]>>(mut self, keys: impl IntoIterator<Item = K>) -> Self {
        self.grants = Some(CallGrants::with_keys(keys));
        self
    }

    /// Keeps threads in `store` (an SQLite file, say) instead of memory.
    pub fn sessions(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.store = store;
        self
    }

    /// Lets pages from `origin` (`https://app.example.com`) call the endpoint from the browser
    /// (CORS, as [`ChatServer::allow_origin`](agent_web::ChatServer::allow_origin) does), sending
    /// `content-type` and `authorization`: their preflights are answered. Without one, browsers
    /// refuse other origins' pages.
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Self {
        self.cors = self.cors.allow_origin(origin);
        self
    }

    /// Lets the pages of the origins allowed send the request header `name` too: a sign-in
    /// header of the application's own, which [`identify`](AguiServer::identify) reads.
    pub fn allow_header(mut self, name: axum::http::HeaderName) -> Self {
        self.cors = self.cors.allow_header(name);
        self
    }

    /// Lets the pages of the origins allowed send their cookies for this server, for a sign-in
    /// kept in a cookie; the page's requests must ask for it too (`credentials: "include"`).
    pub fn allow_credentials(mut self) -> Self {
        self.cors = self.cors.allow_credentials();
        self
    }

    /// Sends a keep-alive (the comment `: keep-alive`) on a run's stream that has sent nothing
    /// for `every` (a slow tool, a slow model), so that proxies and clients do not take the run
    /// for a dead connection. 15 seconds by default ([`DEFAULT_KEEP_ALIVE`]); `Duration::ZERO`
    /// sends none.
    pub fn keep_alive(mut self, every: Duration) -> Self {
        self.keep_alive = every;
        self
    }

    /// Refuses bodies over `bytes` with `413`.
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.body_limit = bytes;
        self
    }

    /// Serves the endpoint on `listener` until the process ends, each connection holding as
    /// little memory as hyper allows ([`agent_web::serve_router`]: a request's head must fit in
    /// [`agent_web::MAX_REQUEST_HEAD`]).
    pub async fn serve(self, listener: tokio::net::TcpListener) -> std::io::Result<()>
    where
        I: Identity<S>,
    {
        agent_web::serve_router(listener, self.router()).await
    }

    /// The endpoint (`POST /`), to serve or to nest in an application's router
    /// (`Router::new().nest("/agent", server.router())`).
    pub fn router(self) -> axum::Router
    where
        I: Identity<S>,
    {
        let shared = Arc::new(Shared {
            agent: self.agent,
            identity: self.identity,
            store: self.store,
            body_limit: self.body_limit,
            limiter: self.limits.map(Limiter::new),
            grants: self.grants.unwrap_or_else(CallGrants::drawn),
            keep_alive: self.keep_alive,
        });
        let routes = (axum::Router::new())
            .route("/", post(run::run::<S, I>))
            .with_state(shared);
        self.cors.apply(routes)
    }
}
