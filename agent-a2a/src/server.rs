//! The server: its builder, its card (`GET /.well-known/agent-card.json`) and its JSON-RPC endpoint
//! (`POST /`), where a request is checked (its content type, the protocol version, the caller,
//! the envelope) before its method runs.

use std::sync::Arc;
use std::time::Duration;

use agent_core::session::{MemorySessions, SessionStore};
use agent_core::{Agent, OutputType};
use agent_web::{
    Anonymous, CallGrants, ChatOwner, DEFAULT_KEEP_ALIVE, Identified, Identity, Limiter, UserLimits,
};
use axum::extract::State;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Serialize;
use serde_json::{Value, json};

use crate::agent_handler::{AgentHandler, AnswerKind, DataAnswer, TextAnswer};
use crate::card::{self, card_of};
use crate::handler::TaskHandler;
use crate::jsonrpc::{Request, RpcError, json_response, response};
use crate::methods::{self, Call, Desk};
use crate::wire::AgentCard;

/// The most a request body may have by default: a message with a few files.
pub const DEFAULT_BODY_LIMIT: usize = 16 * 1024 * 1024;

/// Serves an agent, or any [`TaskHandler`], over A2A (see [the crate](crate)).
///
/// `S` is the runs' context; `I` how the server finds each request's: [`Anonymous`] (the default,
/// for an `Agent<()>`) or the function given to [`identify`](A2aServer::identify).
pub struct A2aServer<S = (), I = Anonymous> {
    worker: Worker<S>,
    card: AgentCard,
    public_url: Option<String>,
    identity: I,
    limits: Option<UserLimits>,
    body_limit: usize,
    keep_alive: Duration,
}

/// What does the tasks' work.
enum Worker<S> {
    /// An agent, its conversations in `store`, its waiting calls signed with `grants` (a key of
    /// its own when none is given).
    Agent {
        agent: Arc<Agent<S>>,
        store: Arc<dyn SessionStore>,
        grants: Option<CallGrants>,
        /// The handler made of them: the agent's answer in words, or as a typed value.
        make: MakeHandler<S>,
    },
    Handler(Arc<dyn TaskHandler<S>>),
}

/// How the handler of an agent is made, once the server is.
type MakeHandler<S> =
    fn(Arc<Agent<S>>, Arc<dyn SessionStore>, CallGrants) -> Arc<dyn TaskHandler<S>>;

/// An agent's handler, its answer of kind `A`.
fn agent_handler<S: Send + Sync + 'static, A: AnswerKind<S>>(
    agent: Arc<Agent<S>>,
    store: Arc<dyn SessionStore>,
    grants: CallGrants,
) -> Arc<dyn TaskHandler<S>> {
    Arc::new(AgentHandler::<S, A>::new(agent, store, grants))
}

/// What every request of one server shares.
struct Shared<S, I> {
    desk: Desk<S>,
    card: AgentCard,
    public_url: Option<String>,
    identity: I,
    limiter: Option<Arc<Limiter>>,
    body_limit: usize,
    /// When the server was built: the card's `Last-Modified`.
    built: HeaderValue,
}

impl<S: Send + Sync + 'static> A2aServer<S, Anonymous> {
    /// Serves `agent`, its conversations kept in memory. Its card says its name (`Agent::named`),
    /// its tools as its skills, and that it streams; change it with
    /// [`card`](A2aServer::card).
    pub fn new(agent: Arc<Agent<S>>) -> Self {
        Self::of_agent(agent, agent_handler::<S, TextAnswer>)
    }

    /// Serves `agent` for answers of type `T`: each task's run asks for one
    /// ([`RunRequest::output`](agent_core::RunRequest::output)), and the value is the task's data
    /// artifact `output`. Its card says it answers in `application/json`.
    pub fn typed<T: OutputType + Serialize>(agent: Arc<Agent<S>>) -> Self {
        let mut server = Self::of_agent(agent, agent_handler::<S, DataAnswer<T>>);
        server.card.default_output_modes = vec!["application/json".to_owned()];
        server
    }

    fn of_agent(agent: Arc<Agent<S>>, make: MakeHandler<S>) -> Self {
        let card = card_of(&agent);
        A2aServer {
            worker: Worker::Agent {
                agent,
                store: Arc::new(MemorySessions::new()),
                grants: None,
                make,
            },
            card,
            public_url: None,
            identity: Anonymous,
            limits: None,
            body_limit: DEFAULT_BODY_LIMIT,
            keep_alive: DEFAULT_KEEP_ALIVE,
        }
    }

    /// Serves `handler`, described by `card` (its interfaces are filled in by the server).
    pub fn with_handler(handler: impl TaskHandler<S>, card: AgentCard) -> Self {
        A2aServer {
            worker: Worker::Handler(Arc::new(handler)),
            card,
            public_url: None,
            identity: Anonymous,
            limits: None,
            body_limit: DEFAULT_BODY_LIMIT,
            keep_alive: DEFAULT_KEEP_ALIVE,
        }
    }

    /// Finds who is asking, as [`ChatServer::identify`](agent_web::ChatServer::identify) does:
    /// `identify` is handed each request's head and gives the run's context, or a response that
    /// refuses the request. Tasks and their conversations are kept under the context's
    /// [owner](ChatOwner): another caller's task is not found. Declare how callers sign in on the
    /// card with [`security_scheme`](A2aServer::security_scheme).
    pub fn identify<F, Fut, R>(self, identify: F) -> A2aServer<S, Identified<S>>
    where
        S: ChatOwner,
        F: Fn(Parts) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<S, R>> + Send + 'static,
        R: IntoResponse,
    {
        A2aServer {
            worker: self.worker,
            card: self.card,
            public_url: self.public_url,
            identity: Identified::new(identify),
            limits: self.limits,
            body_limit: self.body_limit,
            keep_alive: self.keep_alive,
        }
    }
}

impl<S: Send + Sync + 'static, I> A2aServer<S, I> {
    /// Changes the card (its description, version, skills...).
    pub fn card(mut self, edit: impl FnOnce(&mut AgentCard)) -> Self {
        edit(&mut self.card);
        self
    }

    /// Declares on the card how callers sign in: `scheme` is an A2A security scheme, such as
    /// `{"httpAuthSecurityScheme": {"scheme": "Bearer"}}`, under `name`, required of every call.
    /// What the client then sends is for [`identify`](A2aServer::identify) to check.
    pub fn security_scheme(mut self, name: &str, scheme: Value) -> Self {
        self.card.security_schemes.insert(name.to_owned(), scheme);
        self.card
            .security_requirements
            .push(json!({ "schemes": { name: { "list": [] } } }));
        self
    }

    /// The URL clients reach the endpoint at (`https://agents.example.com/a2a`), as the card says
    /// it. By default, the scheme-less `http://` and the `Host` the card was asked from: set it
    /// behind a proxy, or when the routes are nested under a path.
    pub fn public_url(mut self, url: impl Into<String>) -> Self {
        self.public_url = Some(url.into());
        self
    }

    /// Keeps the agent's conversations in `store` (an SQLite file, say) instead of memory. For a
    /// server of a [`TaskHandler`] of one's own, the handler keeps what it keeps.
    pub fn sessions(mut self, sessions: Arc<dyn SessionStore>) -> Self {
        if let Worker::Agent { store, .. } = &mut self.worker {
            *store = sessions;
        }
        self
    }

    /// The keys the agent's waiting calls are signed with (HMAC-SHA256): the first signs, each
    /// verifies. Give every instance the same keys; without, a server draws its own at start.
    ///
    /// # Panics
    ///
    /// When `keys` is empty or holds an empty key.
    pub fn grant_keys<K: AsRef<[u8]>>(mut self, keys: impl IntoIterator<Item = K>) -> Self {
        if let Worker::Agent { grants, .. } = &mut self.worker {
            *grants = Some(CallGrants::with_keys(keys));
        }
        self
    }

    /// Limits what each user may ask (see [`UserLimits`]): a message over them is refused
    /// (`429`, with `retry-after`), and nothing runs.
    pub fn limits(mut self, limits: UserLimits) -> Self {
        self.limits = Some(limits);
        self
    }

    /// Refuses bodies over `bytes`.
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.body_limit = bytes;
        self
    }

    /// Sends a keep-alive (the comment `: keep-alive`) on a stream (`SendStreamingMessage`,
    /// `SubscribeToTask`) that has sent nothing for `every`, so that proxies and clients do not
    /// take a task that works a long while for a dead connection. 15 seconds by default
    /// ([`DEFAULT_KEEP_ALIVE`]); `Duration::ZERO` sends none.
    pub fn keep_alive(mut self, every: Duration) -> Self {
        self.keep_alive = every;
        self
    }

    /// Serves the card and the endpoint on `listener` until the process ends, each connection
    /// holding as little memory as hyper allows ([`agent_web::serve_router`]: a request's head
    /// must fit in [`agent_web::MAX_REQUEST_HEAD`]).
    pub async fn serve(self, listener: tokio::net::TcpListener) -> std::io::Result<()>
    where
        I: Identity<S>,
    {
        agent_web::serve_router(listener, self.router()).await
    }

    /// The routes (`GET /.well-known/agent-card.json`, `POST /`), to serve or to nest in an
    /// application's router (then say where with [`public_url`](A2aServer::public_url)).
    pub fn router(self) -> axum::Router
    where
        I: Identity<S>,
    {
        let handler: Arc<dyn TaskHandler<S>> = match self.worker {
            Worker::Agent {
                agent,
                store,
                grants,
                make,
            } => make(agent, store, grants.unwrap_or_else(CallGrants::drawn)),
            Worker::Handler(handler) => handler,
        };
        let shared = Arc::new(Shared {
            desk: Desk {
                tasks: Arc::default(),
                handler,
                keep_alive: self.keep_alive,
            },
            card: self.card,
            public_url: self.public_url,
            identity: self.identity,
            limiter: self.limits.map(Limiter::new),
            body_limit: self.body_limit,
            built: card::http_date(time::OffsetDateTime::now_utc()),
        });
        axum::Router::new()
            .route("/.well-known/agent-card.json", get(card::<S, I>))
            .route("/", post(rpc::<S, I>))
            .with_state(shared)
    }
}

/// `GET /.well-known/agent-card.json`.
async fn card<S, I>(State(shared): State<Arc<Shared<S, I>>>, headers: HeaderMap) -> Response {
    let public_url = shared.public_url.as_deref();
    card::serve_card(&shared.card, public_url, &shared.built, &headers)
}

/// `POST /`: one JSON-RPC request.
async fn rpc<S: Send + Sync + 'static, I: Identity<S>>(
    State(shared): State<Arc<Shared<S, I>>>,
    request: axum::extract::Request,
) -> Response {
    let (parts, body) = request.into_parts();
    // The content type first: a body of another type is not read as JSON.
    let content_type = (parts.headers.get(header::CONTENT_TYPE))
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    let media_type = content_type.split(';').next().unwrap_or_default().trim();
    if !media_type.eq_ignore_ascii_case("application/json") {
        let error = RpcError::content_type(content_type);
        return json_response(&response(&Value::Null, Err(error)));
    }
    let version = (parts.headers.get("a2a-version"))
        .and_then(|value| value.to_str().ok())
        .map(str::trim)
        .unwrap_or_default()
        .to_owned();
    let caller = match shared.identity.caller(parts).await {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    let Ok(bytes) = axum::body::to_bytes(body, shared.body_limit).await else {
        let error =
            RpcError::invalid_request(format!("the body is over {} bytes", shared.body_limit));
        let mut refused = json_response(&response(&Value::Null, Err(error)));
        *refused.status_mut() = StatusCode::PAYLOAD_TOO_LARGE;
        return refused;
    };
    let request: Request = match serde_json::from_slice(&bytes) {
        Ok(request) => request,
        Err(error) => {
            let error = if serde_json::from_slice::<Value>(&bytes).is_ok() {
                RpcError::invalid_request(format!("not a JSON-RPC request: {error}"))
            } else {
                RpcError::parse(format!("the body is not JSON: {error}"))
            };
            return json_response(&response(&Value::Null, Err(error)));
        }
    };
    let Some(method) = request
        .method
        .filter(|_| request.jsonrpc.as_deref() == Some("2.0"))
    else {
        let error = RpcError::invalid_request("not a JSON-RPC 2.0 request with a method");
        return json_response(&response(&request.id, Err(error)));
    };
    // No version, or an empty one, is 0.3 (the spec's default): only 1.0 is spoken here, with
    // any patch number.
    if !(version == "1" || version == "1.0" || version.starts_with("1.0.")) {
        return json_response(&response(&request.id, Err(RpcError::version(&version))));
    }
    let call = Call {
        id: request.id,
        params: request.params,
        caller,
    };
    match method.as_str() {
        "SendMessage" | "SendStreamingMessage" => {
            let admission = match agent_web::admit(shared.limiter.as_ref(), &call.caller).await {
                Ok(admission) => admission,
                Err(refused) => return refused,
            };
            let streamed = method == "SendStreamingMessage";
            methods::send(&shared.desk, call, streamed, admission).await
        }
        "SubscribeToTask" => methods::subscribe(&shared.desk, call),
        "GetTask" => answer(&call, methods::get(&shared.desk, &call)),
        "ListTasks" => answer(&call, methods::list(&shared.desk, &call)),
        "CancelTask" => {
            let outcome = methods::cancel(&shared.desk, &call).await;
            answer(&call, outcome)
        }
        "CreateTaskPushNotificationConfig"
        | "GetTaskPushNotificationConfig"
        | "ListTaskPushNotificationConfigs"
        | "DeleteTaskPushNotificationConfig" => answer(&call, Err(RpcError::push_not_supported())),
        "GetExtendedAgentCard" => answer(
            &call,
            Err(RpcError::unsupported("this agent has no extended card")),
        ),
        other => answer(&call, Err(RpcError::method_not_found(other))),
    }
}

fn answer<S>(call: &Call<S>, outcome: Result<Value, RpcError>) -> Response {
    json_response(&response(&call.id, outcome))
}
