//! An agent as a web service that speaks the Vercel AI SDK's UI message stream protocol, the one
//! `useChat` reads (cargo feature `web`).
//!
//! `POST /api/chat` takes the body `useChat` sends (the chat id and its messages) and answers with
//! the UI message stream: server-sent events with the header `x-vercel-ai-ui-message-stream: v1`,
//! one JSON chunk each (`start`, `start-step`, `text-*`, `reasoning-*`, `tool-input-*`,
//! `tool-output-*`, `tool-approval-request`, `finish-step`, `finish`, `error`), then `[DONE]`. The
//! conversation is kept by chat id in a [`SessionStore`] (in memory unless given one), so the
//! server, not the client, holds the transcript: only the user's new message is taken from the
//! request. A regenerate (`trigger: "regenerate-message"`, what the AI SDK's `regenerate()` sends)
//! takes back the answer its `messageId` names, or the chat's last, with every turn after it (and a
//! call in it still waiting for approval: that request is withdrawn), and answers its question
//! again, the question kept once; the new answer has an id of its own. What the answer's tools did
//! is never taken back unknowingly: the answer's steps whose calls had effects (a result of a tool
//! not marked read-only or idempotent) stay, and the model answers again after them, shown that
//! they ran; a regenerate or an edit that would take such steps back (in a later turn, or the
//! edited question's) is a `409` that names the tools, the chat unchanged. An answer's id says
//! where in the conversation its question came, which is how the server finds an earlier answer;
//! an id the chat has no answer for is a `404`. An edit (`sendMessage({ text, messageId })`: a submit whose
//! `messageId` is its last message's, sent with the messages up to it) takes back the question it
//! replaces, found after the answer the request shows before it (the first question when none),
//! with the turns after it, and asks the edited one there; a new message that names itself goes
//! after the rest, and a `messageId` that is not the request's last message, or an answer before it
//! the chat does not have, is a `404`. A body that does not fit is a `400` with a JSON error and
//! never reaches the model; a client that goes away and does not rejoin cancels its run, whose
//! transcript is still kept. `GET /api/chat/{id}` reads a chat back as the AI SDK's `UIMessage`s (what `useChat` takes
//! as its `messages` after a reload: each answer one message, its calls in the states they are in,
//! a pending approval still answerable; `404` for a chat the caller does not have).
//! An approval, or a client-side tool's result, is taken only with the grant the server gave the
//! call (a `data-call-grant` part of the answer, an HMAC of the chat, the pause and the call under
//! the server's key, which the client keeps in the message and sends back): a missing, altered,
//! replayed or another chat's grant, or an answer to a call that does not wait, is a `403` before
//! any stream, with nothing run ([`ChatServer::grant_keys`] shares the key between instances and
//! rotates it); a new message while calls wait is a `409`. No answer names the store's key.
//! `GET /api/chats` lists a signed-in caller's (or a visitor's) chats, newest first, with their
//! titles (a chat is titled when its first question is answered: [`ChatServer::title`]), and
//! `PATCH /api/chat/{id}` with `{"title": "..."}` renames one; a server that shares its chats by
//! id ([`ChatServer::shared_chats`]) lists nothing.
//! An answer outlives its connection for a while ([`ChatServer::rejoin_within`], 5 s): a client
//! that reloads rejoins it with `GET /api/chat/{id}/stream` (what the AI SDK's `resume: true`
//! asks; `204` when none is under way) and reads it whole from its first chunk; `DELETE
//! /api/chat/{id}/stream` stops it at once, what it did kept (a reply cut off halfway as far as it
//! went). The answer's log is kept by the
//! process running it, and, for several instances behind a load balancer, in a log they share
//! ([`ChatServer::answers_shared_in`]: [`SqliteAnswers`], [`PostgresAnswers`]), where any instance
//! serves a rejoin or a stop.
//! `DELETE /api/chat/{id}` forgets a chat (`204`; `404` for a chat the caller does not
//! have), its messages and any call waiting in it gone from the store. `GET /` serves a chat page
//! built into the crate: messages stream in, reasoning folds away,
//! each tool call shows its arguments and result, a call awaiting approval has Approve / Deny
//! buttons.
//!
//! Who is asking: [`ChatServer::identify`] turns each request's head (a sign-in header, a
//! cookie) into its run's context, or refuses it (`401`); the tools' [`State`](agent_core::State)
//! parameters and the hooks get that context, and chats are kept per [`ChatOwner`], so a chat id
//! names only a chat of the caller's own (going on with another user's is a `404`, as for one
//! that does not exist). Without it, an `Agent<()>` is served with each browser a visitor of its
//! own, known by a cookie the server signs, whose chats are its own in the same way
//! ([`ChatServer::shared_chats`] opts out: chats kept under the client's ids, for anyone who has
//! one). [`UserLimits`] caps each user's requests and tokens per
//! window and runs at once (`429` with `retry-after`), counted in the process
//! ([`MemoryLimits`]), or in the database every instance shares ([`PostgresLimits`], with the
//! `postgres` feature).
//! [`ChatServer::metadata`] sends each answer's metadata with its `finish` chunk (the model that
//! answered, the tokens used), which `useChat` keeps as `message.metadata`.
//!
//! ```no_run
//! use std::sync::Arc;
//! use agent_web::ChatServer;
//! # async fn serve(agent: agent_core::Agent) -> std::io::Result<()> {
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8000").await?;
//! ChatServer::new(Arc::new(agent)).serve(listener).await
//! # }
//! ```

mod answer;
mod answer_log;
mod chats;
mod chunks;
mod cors;
mod cut_off;
mod errors;
mod forget;
mod grants;
mod identity;
mod limits;
mod live;
mod memory_limits;
mod plan;
#[cfg(feature = "postgres")]
mod postgres_answers;
#[cfg(feature = "postgres")]
mod postgres_limits;
mod read_back;
mod request;
mod rewind;
mod serve;
mod shared_answers;
#[cfg(feature = "sqlite")]
mod sqlite_answers;
mod sse;
mod titles;
mod visitors;

use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};

use agent_core::Model;
use agent_core::session::{MemorySessions, SessionStore};
use agent_core::{Agent, RunOutput};
pub use answer_log::{AnswerLog, Heard, Logged};
pub use cors::Cors;
use cors::cors;
pub use grants::CallGrants;
pub use identity::{Anonymous, Caller, ChatOwner, Identified, Identity};
pub use limits::{
    Admission, DEFAULT_RUN_LEASE, LimitStore, Limiter, MemoryLimits, Refused, UserLimits, admit,
};
use live::{LiveAnswers, event_stream};
use plan::plan;
#[cfg(feature = "postgres")]
pub use postgres_answers::PostgresAnswers;
#[cfg(feature = "postgres")]
pub use postgres_limits::PostgresLimits;
pub use serve::{MAX_REQUEST_HEAD, serve_router};
pub use shared_answers::{SHARE_EVERY, STALE_AFTER};
#[cfg(feature = "sqlite")]
pub use sqlite_answers::SqliteAnswers;
pub use sse::{DEFAULT_KEEP_ALIVE, sse_response};
pub use titles::MAX_TITLE;
use titles::Titler;

/// How long an answer goes on with no client reading it, by default, before it is cancelled: long
/// enough for a reload to rejoin it ([`ChatServer::rejoin_within`]).
pub const DEFAULT_REJOIN_WITHIN: Duration = Duration::from_secs(5);

/// The most a request body may have by default: a message with a few images.
pub const DEFAULT_BODY_LIMIT: usize = 16 * 1024 * 1024;

/// What an answer's metadata is made from its run (see [`ChatServer::metadata`]).
type Metadata = Arc<dyn Fn(&RunOutput) -> Option<serde_json::Value> + Send + Sync>;

/// Serves an agent to chat front ends (see [the module](self)).
///
/// `S` is the agent's context; `I` how the server finds each request's: [`Anonymous`] (the
/// default, for an `Agent<()>`) or the function given to [`identify`](ChatServer::identify).
pub struct ChatServer<S = (), I = Anonymous> {
    agent: Arc<Agent<S>>,
    identity: I,
    store: Arc<dyn SessionStore>,
    body_limit: usize,
    cors: Cors,
    limits: Option<UserLimits>,
    metadata: Option<Metadata>,
    grants: Option<CallGrants>,
    titler: Titler,
    rejoin_within: Duration,
    answer_log: Option<Arc<dyn AnswerLog>>,
    /// Whether each browser is a visitor of its own (see [`shared_chats`](Self::shared_chats)).
    visitors: bool,
}

/// What every request of one server shares.
struct Shared<S, I> {
    agent: Arc<Agent<S>>,
    identity: I,
    store: Arc<dyn SessionStore>,
    body_limit: usize,
    limiter: Option<Arc<Limiter>>,
    metadata: Option<Metadata>,
    grants: CallGrants,
    titler: Titler,
    live: LiveAnswers,
    rejoin_within: Duration,
    answer_log: Option<Arc<dyn AnswerLog>>,
}

impl<S: Send + Sync + 'static> ChatServer<S, Anonymous> {
    /// Serves `agent`, keeping conversations in memory. An agent whose runs need a context (an
    /// `Agent<User>`) is served once the server is told who is asking
    /// ([`identify`](ChatServer::identify)); without, it does not compile.
    pub fn new(agent: Arc<Agent<S>>) -> Self {
        ChatServer {
            agent,
            identity: Anonymous,
            store: Arc::new(MemorySessions::new()),
            body_limit: DEFAULT_BODY_LIMIT,
            cors: Cors::default(),
            limits: None,
            metadata: None,
            grants: None,
            titler: Titler::first_words(),
            rejoin_within: DEFAULT_REJOIN_WITHIN,
            answer_log: None,
            visitors: true,
        }
    }

    /// Finds who is asking: `identify` is handed each request's head (its headers, cookies in
    /// the `cookie` header, URI and extensions; an axum extractor runs on it with
    /// `FromRequestParts::from_request_parts(&mut parts, &state)`) and gives the run's context,
    /// or a response that refuses the request (`401` when no one signed in, `403`, with the body
    /// it chooses), before the body is read.
    ///
    /// The context is what the tools' [`State`](agent_core::State) parameters, the hooks and the
    /// approver are handed in that request's run, and its [owner](ChatOwner) is who the chat
    /// belongs to: chats are kept under the owner and the client's chat id together, so a chat
    /// id names a chat among the caller's own. A request that goes on with a chat (its messages
    /// show an answer, or it answers a call, regenerates or edits after an answer) on a chat id
    /// the caller has no chat under is a `404`, whether another user has a chat of that id or
    /// not, and nothing of anyone's chat is read or written; a first message under that id
    /// starts a chat of the caller's own.
    ///
    /// ```no_run
    /// use std::sync::Arc;
    /// use agent_web::{ChatOwner, ChatServer};
    /// use agent_core::{Agent, State, tool};
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
    /// /// Who the user is.
    /// #[tool]
    /// fn whoami(State(user): State<User>) -> String {
    ///     user.0
    /// }
    ///
    /// /// The user a session token is for (your sign-in's lookup).
    /// async fn signed_in(token: &str) -> Option<User> {
    ///     (token == "secret-ann").then(|| User("ann".into()))
    /// }
    ///
    /// # async fn serve(model: agent_core::testing::ScriptedModel) -> std::io::Result<()> {
    /// let agent: Agent<User> = agent_core::agent!(model, whoami);
    /// let server = ChatServer::new(Arc::new(agent)).identify(|parts| async move {
    ///     let token = parts
    ///         .headers
    ///         .get("authorization")
    ///         .and_then(|value| value.to_str().ok())
    ///         .and_then(|value| value.strip_prefix("Bearer "))
    ///         .ok_or((StatusCode::UNAUTHORIZED, "sign in first"))?;
    ///     signed_in(token).await.ok_or((StatusCode::UNAUTHORIZED, "sign in again"))
    /// });
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:8000").await?;
    /// server.serve(listener).await
    /// # }
    /// ```
    pub fn identify<F, Fut, R>(self, identify: F) -> ChatServer<S, Identified<S>>
    where
        S: ChatOwner,
        F: Fn(Parts) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<S, R>> + Send + 'static,
        R: IntoResponse,
    {
        ChatServer {
            agent: self.agent,
            identity: Identified::new(identify),
            store: self.store,
            body_limit: self.body_limit,
            cors: self.cors,
            limits: self.limits,
            metadata: self.metadata,
            grants: self.grants,
            titler: self.titler,
            rejoin_within: self.rejoin_within,
            answer_log: self.answer_log,
            // Chats are each signed-in user's own.
            visitors: false,
        }
    }
}

impl<S: Send + Sync + 'static, I> ChatServer<S, I> {
    /// Limits what each user may ask: requests and tokens per window, runs at once (see
    /// [`UserLimits`]); a request over them is a `429` with `retry-after`, and the chat is left
    /// as it was.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use agent_web::{ChatServer, UserLimits};
    /// # let agent: agent_core::Agent = agent_core::Agent::new(
    /// #     agent_core::testing::ScriptedModel::new(Vec::<agent_core::AssistantMessage>::new()));
    /// let server = ChatServer::new(Arc::new(agent))
    ///     .limits(UserLimits::new().requests(20, Duration::from_secs(60)).concurrent_runs(1));
    /// ```
    pub fn limits(mut self, limits: UserLimits) -> Self {
        self.limits = Some(limits);
        self
    }

    /// The keys the grants of approvals and client-side tool results are signed with (HMAC-SHA256;
    /// see [the module](self)): the first signs, each verifies, so a key is rotated by putting the
    /// new one first and dropping the old one once the grants it signed are no longer needed.
    /// Give every instance of a server the same keys (from a secret store), so a call asked for
    /// by one is answered through another, and across restarts; without, a server draws a key of
    /// its own at start. Keys must not be empty.
    ///
    /// # Panics
    ///
    /// When `keys` is empty or holds an empty key: a server without a usable key cannot tell a
    /// grant it issued from one it did not.
    pub fn grant_keys<K: AsRef<[u8]>>(mut self, keys: impl IntoIterator<Item = K>) -> Self {
        self.grants = Some(CallGrants::with_keys(keys));
        self
    }

    /// How a chat is titled once its first question is answered: `title(question, run)` (the
    /// question's text and the run that answered it) gives the title, or `None` for none; a
    /// signed-in user's chats are listed with their titles (`GET /api/chats`) and renamed with
    /// `PATCH /api/chat/{id}`. By default, the question's first words. A title longer than
    /// [`MAX_TITLE`] characters is cut.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use agent_web::ChatServer;
    /// # let agent: agent_core::Agent = agent_core::Agent::new(
    /// #     agent_core::testing::ScriptedModel::new(Vec::<agent_core::AssistantMessage>::new()));
    /// let server = ChatServer::new(Arc::new(agent))
    ///     .title(|question, run| Some(format!("{question} ({} steps)", run.steps)));
    /// ```
    pub fn title(
        mut self,
        title: impl Fn(&str, &RunOutput) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        self.titler = Titler::Function(Arc::new(title));
        self
    }

    /// Titles each chat by asking `model` (a small, fast one is enough) for a title of its first
    /// exchange, in the words of the agent's [texts](agent_core::Agent::texts) and the question's
    /// language, once the answer has gone out (a list asked for at once may not have it yet). A
    /// model that fails leaves the question's first words.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use agent_web::ChatServer;
    /// # let agent: agent_core::Agent = agent_core::Agent::new(
    /// #     agent_core::testing::ScriptedModel::new(Vec::<agent_core::AssistantMessage>::new()));
    /// # let small_model = agent_core::testing::ScriptedModel::new(Vec::<agent_core::AssistantMessage>::new());
    /// let server = ChatServer::new(Arc::new(agent)).title_by_model(small_model);
    /// ```
    pub fn title_by_model(mut self, model: impl Model + 'static) -> Self {
        self.titler = Titler::Model(Arc::new(model));
        self
    }

    /// How long an answer goes on when no client reads it (the page reloaded, the connection
    /// dropped) before its run is cancelled: a client that comes back within it rejoins the
    /// answer (`GET /api/chat/{id}/stream`, what the AI SDK's `resume` asks) from its first chunk.
    /// 5 s by default; `Duration::ZERO` cancels as soon as the last client goes. A client's stop
    /// (`DELETE /api/chat/{id}/stream`) cancels at once.
    pub fn rejoin_within(mut self, window: Duration) -> Self {
        self.rejoin_within = window;
        self
    }

    /// Keeps each answer under way in `log` too, so that every instance of the server on it can
    /// serve a rejoin (`GET /api/chat/{id}/stream`) or a stop (`DELETE`) of an answer another
    /// instance runs: behind a load balancer, a page that reloads onto another instance rejoins
    /// its answer there. The instance running an answer writes what it streamed every
    /// [`SHARE_EVERY`]; one following it there reads at the same pace, and a stop reaches the
    /// answer at its next write. By default the answers are kept by the process running them
    /// only.
    ///
    /// ```no_run
    /// # #[cfg(feature = "sqlite")]
    /// # fn run(agent: agent_core::Agent) -> Result<(), agent_core::session::SessionError> {
    /// use std::sync::Arc;
    /// use agent_sql::SqliteSessions;
    /// use agent_web::{ChatServer, SqliteAnswers};
    ///
    /// let server = ChatServer::new(Arc::new(agent))
    ///     .sessions(Arc::new(SqliteSessions::open("chats.sqlite")?))
    ///     .answers_shared_in(SqliteAnswers::open("chats.sqlite")?);
    /// # Ok(())
    /// # }
    /// ```
    pub fn answers_shared_in(mut self, log: impl AnswerLog) -> Self {
        self.answer_log = Some(Arc::new(log));
        self
    }

    /// Lets pages from `origin` (`https://app.example.com`) call the endpoint from the browser
    /// (CORS), sending `content-type` and `authorization`. Without one, only the server's own
    /// pages can: browsers refuse other origins.
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Self {
        self.cors.origins.push(origin.into());
        self
    }

    /// Lets the pages of the origins allowed send the request header `name` too: a sign-in
    /// header of the application's own, which [`identify`](ChatServer::identify) reads.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use agent_web::ChatServer;
    /// use axum::http::HeaderName;
    /// # let agent: agent_core::Agent = agent_core::Agent::new(
    /// #     agent_core::testing::ScriptedModel::new(Vec::<agent_core::AssistantMessage>::new()));
    /// let server = ChatServer::new(Arc::new(agent))
    ///     .allow_origin("https://app.example.com")
    ///     .allow_header(HeaderName::from_static("x-api-key"));
    /// ```
    pub fn allow_header(mut self, name: axum::http::HeaderName) -> Self {
        self.cors.headers.push(name);
        self
    }

    /// Lets the pages of the origins allowed send their cookies for this server
    /// (`access-control-allow-credentials`), for a sign-in kept in a cookie; the page's requests
    /// must ask for it too (`credentials: "include"`).
    pub fn allow_credentials(mut self) -> Self {
        self.cors.credentials = true;
        self
    }

    /// Keeps the chats of a server that does not identify its callers under the ids the clients
    /// give them, for anyone who knows an id to read and go on with: a chat id is then a bearer
    /// token (whoever learns it reads the chat, takes its grants and approves its calls), and
    /// `GET /api/chats` lists nothing. For a demo shared on purpose, or a front end that keeps no
    /// cookies and is trusted with every chat.
    ///
    /// By default each browser is a visitor of its own instead: the server gives it a signed
    /// cookie (`agent_web_visitor`, an id and its HMAC-SHA256 under the server's
    /// [keys](Self::grant_keys)), keeps its chats under that id, and answers another browser's
    /// requests on them with `404`, as for a chat that does not exist. A server that
    /// [identifies](ChatServer::identify) its callers keeps each user's chats apart either way.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use agent_web::ChatServer;
    /// # let agent: agent_core::Agent = agent_core::Agent::new(
    /// #     agent_core::testing::ScriptedModel::new(Vec::<agent_core::AssistantMessage>::new()));
    /// let shared_with_anyone_who_has_the_link = ChatServer::new(Arc::new(agent)).shared_chats();
    /// ```
    pub fn shared_chats(mut self) -> Self {
        self.visitors = false;
        self
    }

    /// Keeps conversations in `store` (an SQLite file, say) instead of memory.
    pub fn sessions(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.store = store;
        self
    }

    /// Sends each answer's metadata, made from its run, with the answer's end (the AI SDK's
    /// `messageMetadata` on the `finish` chunk; `useChat` merges it into `message.metadata`): the
    /// model that answered (which a [`Fallback`](agent_core::Fallback) chain may change from step to
    /// step), the tokens used, anything the page shows beside the answer. `None` sends none. A run
    /// that fails ends with an error instead, and sends none.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use agent_web::ChatServer;
    /// use serde_json::json;
    /// # let agent: agent_core::Agent = agent_core::Agent::new(
    /// #     agent_core::testing::ScriptedModel::new(Vec::<agent_core::AssistantMessage>::new()));
    /// let server = ChatServer::new(Arc::new(agent)).metadata(|run| {
    ///     let model = run.step_models.iter().rev().flatten().next();
    ///     Some(json!({ "model": model, "totalTokens": run.usage.total_tokens() }))
    /// });
    /// ```
    pub fn metadata(
        mut self,
        metadata: impl Fn(&RunOutput) -> Option<serde_json::Value> + Send + Sync + 'static,
    ) -> Self {
        self.metadata = Some(Arc::new(metadata));
        self
    }

    /// Refuses bodies over `bytes` with `413`.
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.body_limit = bytes;
        self
    }

    /// Serves the routes on `listener` until the process ends, each connection holding as little
    /// memory as hyper allows ([`serve_router`]: a request's head must fit in
    /// [`MAX_REQUEST_HEAD`]).
    ///
    /// The routes are made ready once and shared by every connection; serving a
    /// [`router`](Self::router) merged into an application's, do the same
    /// (`into_make_service`, or [`serve_router`]), or axum builds the routes again for each
    /// connection and keeps that copy while it is open.
    pub async fn serve(self, listener: tokio::net::TcpListener) -> std::io::Result<()>
    where
        I: Identity<S>,
    {
        serve_router(listener, self.router()).await
    }

    /// The routes (`GET /` the chat page, `POST /api/chat`, `GET`, `PATCH` and `DELETE
    /// /api/chat/{id}`, `GET` and `DELETE /api/chat/{id}/stream`, `GET /api/chats`), to serve or
    /// to merge into an application's router.
    pub fn router(self) -> axum::Router
    where
        I: Identity<S>,
    {
        let grants = self.grants.unwrap_or_else(CallGrants::drawn);
        let visitors = self.visitors.then(|| grants.clone());
        let shared = Arc::new(Shared {
            agent: self.agent,
            identity: self.identity,
            store: self.store,
            body_limit: self.body_limit,
            limiter: self.limits.map(Limiter::new),
            metadata: self.metadata,
            grants,
            titler: self.titler,
            live: LiveAnswers::default(),
            rejoin_within: self.rejoin_within,
            answer_log: self.answer_log,
        });
        let cors_rules = Arc::new(self.cors);
        let router = axum::Router::new()
            .route("/", get(page))
            .route("/api/chat", post(chat::<S, I>))
            .route("/api/chats", get(chats::list::<S, I>))
            .route(
                "/api/chat/{id}/stream",
                get(live::rejoin::<S, I>).delete(live::stop::<S, I>),
            )
            .route(
                "/api/chat/{id}",
                delete(forget::forget::<S, I>)
                    .get(read_back::read_back::<S, I>)
                    .patch(chats::rename::<S, I>),
            )
            .with_state(shared);
        // Each browser a visitor of its own, known by its cookie, inside CORS (a preflight needs
        // no visitor).
        let router = match visitors {
            Some(keys) => router.layer(axum::middleware::from_fn_with_state(
                keys,
                visitors::visitors,
            )),
            None => router,
        };
        router.layer(axum::middleware::from_fn_with_state(cors_rules, cors))
    }
}

/// The chat page: HTML, CSS and JavaScript in one file, built into the crate (no bundler, no CDN).
const PAGE: &str = include_str!("page.html");

async fn page() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        PAGE,
    )
        .into_response()
}

/// The store key of chat `chat_id` of the caller a request is from; or the response that refuses
/// the request (the identity's, or a `400` for a chat id that cannot be one).
async fn chat_of<S, I: Identity<S>>(
    shared: &Shared<S, I>,
    parts: Parts,
    chat_id: &str,
) -> Result<String, Response> {
    let caller = caller_of(shared, parts).await?;
    request::check_chat_id(chat_id).map_err(|problem| refuse(StatusCode::BAD_REQUEST, &problem))?;
    Ok(caller.key(chat_id).into_owned())
}

/// The caller a request is from, as the server's identity finds them; on a server that does not
/// identify callers, the visitor its cookie names (see [`ChatServer::shared_chats`]), whose chats
/// are theirs. Or the response that refuses the request.
async fn caller_of<S, I: Identity<S>>(
    shared: &Shared<S, I>,
    parts: Parts,
) -> Result<Caller<S>, Response> {
    let visitor = parts.extensions.get::<visitors::Visitor>().cloned();
    let mut caller = shared.identity.caller(parts).await?;
    if caller.owner.is_none()
        && let Some(visitor) = visitor
    {
        caller.owner = Some(visitor.owner());
        caller.visitor = true;
    }
    Ok(caller)
}

/// `200` with `value` as its JSON body.
fn json_response(value: &serde_json::Value) -> Response {
    let body = value.to_string();
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// A refusal the client can show: `status` with the JSON body `{"error": message}`. What every
/// endpoint answers a request it does not take (`400`, `404`, `413`, `429`, ...).
pub fn refuse(status: StatusCode, message: &str) -> Response {
    let body = serde_json::json!({ "error": message }).to_string();
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

async fn chat<S: Send + Sync + 'static, I: Identity<S>>(
    State(shared): State<Arc<Shared<S, I>>>,
    request: axum::extract::Request,
) -> Response {
    let (parts, body) = request.into_parts();
    let caller = match caller_of(&shared, parts).await {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    let Ok(bytes) = axum::body::to_bytes(body, shared.body_limit).await else {
        let message = format!("the body is over {} bytes", shared.body_limit);
        return refuse(StatusCode::PAYLOAD_TOO_LARGE, &message);
    };
    let parsed = match request::parse(&bytes) {
        Ok(parsed) => parsed,
        Err(problem) => return refuse(StatusCode::BAD_REQUEST, &problem),
    };
    let admission = match admit(shared.limiter.as_ref(), &caller).await {
        Ok(admission) => admission,
        Err(refused) => return refused,
    };
    let chat_id = parsed.id;
    let key = caller.key(&chat_id).into_owned();
    // Only a server that tells its callers apart has chats that are not the caller's.
    let must_exist = caller.owner.is_some() && parsed.continues;
    let plan = match plan(&*shared, &chat_id, &key, must_exist, parsed.turn).await {
        Ok(plan) => plan,
        Err(refused) => return refused,
    };
    // The answer is a log this request reads, as a client that rejoins it would.
    let live = shared.live.start(&key, plan.begun());
    let response = event_stream(&live);
    if let Some(log) = &shared.answer_log {
        let (log, answer) = (Arc::clone(log), plan.message_id.clone());
        tokio::spawn(shared_answers::share(Arc::clone(&live), log, key, answer));
    }
    tokio::spawn(answer::answer(
        shared,
        caller.context,
        plan,
        live,
        admission,
    ));
    response
}
