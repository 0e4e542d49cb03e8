//! Serving a [`ToolSet`] over MCP: `tools/list` from the definitions, `tools/call` through the
//! dispatcher.

use std::future::Future;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CustomRequest, CustomResult,
    ElicitRequestParams, ElicitationAction, ElicitationSchema, ErrorCode, ErrorData,
    Implementation, JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig, Tool as ListedTool, ToolAnnotations as ListedAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tracing::Instrument;

use super::{McpError, content};
use agent_core::guard::{At, Guard, Stopped, ToolGuards};
use agent_core::{CallDecision, ToolSet};
use agent_core::{ErrorStyle, ToolCall};
use agent_core::{NotRun, ToolError};
use agent_core::{RunId, RunScope};
use agent_core::{ToolDef, ToolOutput};

/// Tools served to MCP clients.
///
/// Build it from the tools you would give an agent (`McpServer::new(tools!(a, b))`, or
/// `agent.tools().clone()`), then serve it with [`serve_stdio`](McpServer::serve_stdio),
/// [`serve_http`](McpServer::serve_http), or mount [`http_service`](McpServer::http_service) in
/// your own axum router.
///
/// - `tools/list`: each tool's name, description, `inputSchema`, `outputSchema` (when its result is
///   a JSON object) and the hints of `#[tool(read_only, destructive, idempotent, open_world)]`.
/// - `tools/call`: the set's dispatcher runs the call ([`ToolSet::outcome`]), with its timeout,
///   panic catching and result limit. Every failure of the call (bad arguments, an error, a panic, a
///   timeout) is a result with `isError: true` and the words the set's texts have for it, without
///   their lead-in (the client's agent adds its own): an agent that uses these tools over MCP shows
///   its model what it would have shown for the same call made natively. An unknown tool is the
///   JSON-RPC error `-32602`. A call the client cancels is dropped.
///
/// A tool marked `requires_approval` asks the person first, through MCP elicitation: the client
/// shows the question, and only "accept" runs the call; "decline" or "cancel" is an error result
/// that names the decision. A client that cannot elicit gets an error result saying approval was
/// not possible, unless [`allow_without_approval`](McpServer::allow_without_approval) says to run
/// such calls anyway.
#[derive(Clone)]
pub struct McpServer {
    shared: Arc<Shared>,
}

#[derive(Clone)]
struct Shared {
    tools: ToolSet,
    /// What `tools/list` answers, built once.
    listed: Vec<ListedTool>,
    name: String,
    version: String,
    instructions: Option<String>,
    /// Whether `requires_approval` tools run for clients that cannot ask the person.
    allow_without_approval: bool,
    /// The guards each call and its result pass.
    guards: ToolGuards,
}

impl McpServer {
    /// Serves these tools, as `agent-core` at this crate's version until
    /// [`name`](McpServer::name) and [`version`](McpServer::version) say otherwise.
    pub fn new(mut tools: ToolSet) -> Self {
        let listed = tools.definitions().iter().map(listing).collect();
        // Error results without the lead-in ("Error: "): a client's agent adds its own.
        tools.set_error_style(ErrorStyle::Bare);
        McpServer {
            shared: Arc::new(Shared {
                tools,
                listed,
                name: "agent-core".to_owned(),
                version: env!("CARGO_PKG_VERSION").to_owned(),
                instructions: None,
                allow_without_approval: false,
                guards: ToolGuards::new(),
            }),
        }
    }

    /// Sets the server name clients see.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        Arc::make_mut(&mut self.shared).name = name.into();
        self
    }

    /// Sets the server version clients see.
    pub fn version(mut self, version: impl Into<String>) -> Self {
        Arc::make_mut(&mut self.shared).version = version.into();
        self
    }

    /// Sets instructions for the client's model: how the tools fit together.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        Arc::make_mut(&mut self.shared).instructions = Some(instructions.into());
        self
    }

    /// Runs `requires_approval` tools for clients without elicitation, unasked (off by default:
    /// such calls get an error result). For a client you trust to ask the person itself.
    pub fn allow_without_approval(mut self, allow: bool) -> Self {
        Arc::make_mut(&mut self.shared).allow_without_approval = allow;
        self
    }

    /// Checks each call with `guard` before it runs ([`At::CALLS`]: a refusal is an error result
    /// with the guard's words, a rewrite runs the call with the rewritten arguments), and each
    /// result before it goes back ([`At::RESULTS`]: a rewrite is what the client gets, a refusal
    /// withholds it); a trip is the JSON-RPC error `-32603` naming the guard. Guards are checked in
    /// the order they were added, after the person's approval.
    pub fn guard(mut self, at: At, guard: impl Guard + 'static) -> Self {
        let shared = Arc::make_mut(&mut self.shared);
        shared.guards = std::mem::take(&mut shared.guards).guard(at, guard);
        self
    }

    /// The tools served (their error results without the lead-in, as MCP clients get them).
    pub fn tools(&self) -> &ToolSet {
        &self.shared.tools
    }

    /// Serves one client on stdin and stdout until it disconnects. Nothing else may write to
    /// stdout meanwhile: log to stderr.
    pub async fn serve_stdio(self) -> Result<(), McpError> {
        self.serve_io(tokio::io::stdin(), tokio::io::stdout()).await
    }

    /// Serves one client over any byte stream (a pipe, a socket) until it disconnects.
    pub async fn serve_io<R, W>(self, read: R, write: W) -> Result<(), McpError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let running = self
            .serve((read, write))
            .await
            .map_err(|error| McpError::Serve {
                source: Box::new(error),
            })?;
        running.waiting().await.map_err(|error| McpError::Serve {
            source: Box::new(error),
        })?;
        Ok(())
    }

    /// Serves MCP's streamable HTTP transport at `/mcp` on `listener` until `shutdown` completes.
    ///
    /// Requests whose `Host` is not `localhost`, `127.0.0.1` or `::1` are refused (DNS rebinding
    /// protection); to serve other hosts, mount [`http_service_with`](McpServer::http_service_with)
    /// with the hosts allowed.
    pub async fn serve_http(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), McpError> {
        let stop = tokio_util::sync::CancellationToken::new();
        let config = StreamableHttpServerConfig::default().with_cancellation_token(stop.clone());
        let router = axum::Router::new().nest_service("/mcp", self.http_service_with(config));
        axum::serve(listener, router)
            .with_graceful_shutdown(async move {
                shutdown.await;
                // Ends the open sessions and their event streams, or shutdown would wait for them.
                stop.cancel();
            })
            .await
            .map_err(|error| McpError::Serve {
                source: Box::new(error),
            })
    }

    /// The streamable HTTP transport as a service, to mount in an axum router
    /// (`Router::new().nest_service("/mcp", server.http_service())`); sessions are kept in memory.
    pub fn http_service(self) -> axum::Router {
        self.http_service_with(StreamableHttpServerConfig::default())
    }

    /// [`http_service`](McpServer::http_service) with the SDK's settings: allowed hosts and
    /// origins, keep-alive, stateless mode, shutdown.
    ///
    /// Over the SDK's transport, two answers are put right: a body that is not JSON is `400` with
    /// a JSON-RPC parse error (`-32700`), not `415`; ending a session (`DELETE`) is `200`, not
    /// `202`, which clients log as a failed termination.
    pub fn http_service_with(self, config: StreamableHttpServerConfig) -> axum::Router {
        let transport: StreamableHttpService<McpServer, LocalSessionManager> =
            StreamableHttpService::new(
                // Called per session: a clone shares everything behind one `Arc`.
                move || Ok(self.clone()),
                Arc::new(LocalSessionManager::default()),
                config,
            );
        axum::Router::new()
            .fallback_service(transport)
            .layer(axum::middleware::from_fn(http_fixes))
    }

    async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let tools = &self.shared.tools;
        let Some(tool) = tools.get(&request.name) else {
            // A protocol error, as the spec asks, rather than a result for the model.
            let available: Vec<&str> = tools
                .definitions()
                .iter()
                .map(|definition| definition.name.as_str())
                .collect();
            return Err(ErrorData::invalid_params(
                format!("Unknown tool: {}", request.name),
                Some(json!({ "name": request.name, "available": available })),
            ));
        };
        let has_output_schema = tool.definition().output_schema.is_some();
        let arguments = match request.arguments {
            // `Value`'s `Display` is its JSON text, and cannot fail.
            Some(arguments) => Value::Object(arguments).to_string(),
            None => String::new(),
        };
        let call = ToolCall::new(context.id.to_string(), request.name.as_ref(), arguments);
        let approval = if tool.definition().annotations.requires_approval {
            // A client may cancel the call while the person thinks: stop asking then.
            tokio::select! {
                asked = self.ask_approval(&call, &context) => asked,
                () = context.ct.cancelled() => {
                    return Err(ErrorData::internal_error("the call was cancelled", None));
                }
            }
        } else {
            Asked::Approved
        };
        let texts = tools.texts();
        let guarded = match &approval {
            Asked::Approved if !self.shared.guards.is_empty() => {
                let definition = Some(tool.definition());
                let checked = self
                    .shared
                    .guards
                    .check_call(&call, definition, texts)
                    .await;
                Some(checked.map_err(guard_stop))
            }
            _ => None,
        };
        let decision = match (&approval, &guarded) {
            (Asked::Refused(refusal), _) => CallDecision::NotRun(refusal.not_run(&call.name)),
            (_, Some(Err(Stop::Refused(why)))) => CallDecision::NotRun(why.clone()),
            (_, Some(Err(Stop::Tripped(error)))) => return Err(error.clone()),
            (_, Some(Ok(Some(arguments)))) => CallDecision::RunWith { arguments },
            _ => CallDecision::Run,
        };
        // The SDK does not drop a handler whose request was cancelled; dropping it here cancels the
        // tool, as the agent loop does.
        // The call's outcome, then its result, keeping a JSON result whole in between.
        // A call from an MCP client is a run of its own.
        let run = RunScope::new(RunId::new());
        let outcome = tokio::select! {
            outcome = tools.outcome(&(), &call, decision, &run) => outcome,
            () = context.ct.cancelled() => {
                return Err(ErrorData::internal_error("the call was cancelled", None));
            }
        };
        // The whole value, even where the text is cut to the result limit: a tool with an output
        // schema must send results that fit it.
        let structured = match &outcome {
            Ok(ToolOutput::Json(text)) if has_output_schema => serde_json::from_str::<Value>(text)
                .ok()
                .filter(Value::is_object),
            _ => None,
        };
        let mut result = tools.result_message(&call, outcome);
        if !self.shared.guards.is_empty() {
            let definition = Some(tool.definition());
            let guards = &self.shared.guards;
            match guards
                .check_result(&call, definition, &mut result, texts)
                .await
            {
                Ok(()) => {}
                Err(Stopped::Refused { guard, reason }) => {
                    let withheld = ToolError::Withheld { guard, reason };
                    result = tools.result_message(&call, Err(withheld));
                }
                Err(Stopped::Tripped(trip)) => {
                    return Err(ErrorData::internal_error(trip.to_string(), None));
                }
            }
        }
        if result.is_error {
            return Ok(CallToolResult::error(content::blocks_of(result)));
        }
        let mut reply = CallToolResult::success(content::blocks_of(result));
        reply.structured_content = structured;
        Ok(reply)
    }
}

/// Why a guard stopped a call: an answer for the client, or an error.
enum Stop {
    Refused(NotRun),
    Tripped(ErrorData),
}

/// What `stopped` makes of a call.
fn guard_stop(stopped: Stopped) -> Stop {
    match stopped {
        Stopped::Refused { guard, reason } => Stop::Refused(NotRun::Guarded { guard, reason }),
        Stopped::Tripped(trip) => Stop::Tripped(ErrorData::internal_error(trip.to_string(), None)),
    }
}

/// The most a request body may have: a tool call's arguments, images included.
const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

/// Puts right what the SDK's HTTP transport answers otherwise (see
/// [`McpServer::http_service_with`]).
async fn http_fixes(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::http::{Method, StatusCode};
    use axum::response::IntoResponse;

    let method = request.method().clone();
    let request = if method == Method::POST {
        let (parts, body) = request.into_parts();
        let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY_BYTES).await else {
            return (
                StatusCode::PAYLOAD_TOO_LARGE,
                "the request body is too large",
            )
                .into_response();
        };
        if let Err(error) = serde_json::from_slice::<serde::de::IgnoredAny>(&bytes) {
            let error = json!({
                "jsonrpc": "2.0",
                "id": null,
                "error": { "code": -32700, "message": format!("Parse error: {error}") }
            });
            let json = [(axum::http::header::CONTENT_TYPE, "application/json")];
            return (StatusCode::BAD_REQUEST, json, error.to_string()).into_response();
        }
        axum::extract::Request::from_parts(parts, axum::body::Body::from(bytes))
    } else {
        request
    };
    let mut response = next.run(request).await;
    if method == Method::DELETE && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::OK;
    }
    response
}

/// The client-to-server requests MCP defines: one of them arriving as a request the SDK could not
/// read has parameters that do not fit.
const KNOWN_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "completion/complete",
    "logging/setLevel",
];

/// What the person said about a call, through the client.
enum Asked {
    Approved,
    /// Not run, and why: the model reads it.
    Refused(Refusal),
}

/// Why a call that needs approval was not approved.
enum Refusal {
    /// The person declined.
    Declined,
    /// The person cancelled the question.
    Cancelled,
    /// The client answered something other than "accept".
    NotAccepted,
    /// The client cannot ask the person.
    Impossible,
    /// Asking failed, with the SDK's message.
    NotAsked(String),
}

impl Refusal {
    /// Why a call of `tool` is not run, for the set's texts to word.
    fn not_run(&self, tool: &str) -> NotRun {
        match self {
            Refusal::Declined => NotRun::ApprovalDeclined,
            Refusal::Cancelled => NotRun::ApprovalCancelled,
            Refusal::NotAccepted => NotRun::ApprovalNotAccepted,
            Refusal::Impossible => NotRun::ApprovalImpossible(tool.to_owned()),
            Refusal::NotAsked(message) => NotRun::ApprovalNotAsked(message.clone()),
        }
    }
}

impl McpServer {
    /// Asks the person, through the client's elicitation, whether `call` may run.
    async fn ask_approval(&self, call: &ToolCall, context: &RequestContext<RoleServer>) -> Asked {
        let can_ask = context
            .peer
            .peer_info()
            .is_some_and(|client| client.capabilities.elicitation.is_some());
        if !can_ask {
            return if self.shared.allow_without_approval {
                Asked::Approved
            } else {
                Asked::Refused(Refusal::Impossible)
            };
        }
        let arguments = if call.arguments.is_empty() {
            "no arguments"
        } else {
            &call.arguments
        };
        let question = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: format!("Allow `{}` to run with {arguments}?", call.name),
            requested_schema: ElicitationSchema::new(Default::default()),
        };
        match context.peer.create_elicitation(question).await {
            Ok(answer) => match answer.action {
                ElicitationAction::Accept => Asked::Approved,
                ElicitationAction::Decline => Asked::Refused(Refusal::Declined),
                ElicitationAction::Cancel => Asked::Refused(Refusal::Cancelled),
                // An answer of a later protocol version: anything but "accept" is not a yes.
                _ => Asked::Refused(Refusal::NotAccepted),
            },
            Err(error) => Asked::Refused(Refusal::NotAsked(error.to_string())),
        }
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let shared = &self.shared;
        let config = ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(&shared.name, &shared.version));
        match &shared.instructions {
            Some(instructions) => config.with_instructions(instructions),
            None => config,
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.shared.listed.clone()))
    }

    fn get_tool(&self, name: &str) -> Option<ListedTool> {
        self.shared
            .listed
            .iter()
            .find(|tool| tool.name == name)
            .cloned()
    }

    /// A request the SDK could not read as any request it knows. For a method MCP defines, that is
    /// because its parameters do not fit (`tools/call` with no `name`, or `arguments` that are not
    /// an object): invalid params (`-32602`) saying what is wrong, as the spec asks, not the SDK's
    /// "method not found".
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let method = request.method.as_str();
        if method == "tools/call" {
            let params = request.params.unwrap_or(Value::Null);
            let problem = match (params.get("name"), params.get("arguments")) {
                (None, _) => "`name` is missing",
                (Some(name), _) if !name.is_string() => "`name` must be a string",
                (_, Some(arguments)) if !arguments.is_object() && !arguments.is_null() => {
                    "`arguments` must be an object"
                }
                _ => "the parameters do not fit",
            };
            return Err(ErrorData::invalid_params(
                format!("Invalid params for tools/call: {problem}"),
                Some(json!({ "params": params })),
            ));
        }
        if KNOWN_METHODS.contains(&method) {
            return Err(ErrorData::invalid_params(
                format!("Invalid params for {method}"),
                None,
            ));
        }
        Err(ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
            None,
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // The agent loop's span for a tool call, with the MCP method (OpenTelemetry's MCP names).
        let span = tracing::info_span!(
            "execute_tool",
            "gen_ai.operation.name" = "execute_tool",
            "gen_ai.tool.name" = %request.name,
            "gen_ai.tool.call.id" = %context.id,
            "mcp.method.name" = "tools/call",
            "error.type" = tracing::field::Empty,
        );
        let result = self.call(request, context).instrument(span.clone()).await;
        match &result {
            Ok(result) if result.is_error == Some(true) => {
                span.record("error.type", "tool_error");
            }
            Ok(_) => {}
            Err(error) => {
                span.record("error.type", error.code.0);
            }
        }
        result.map(Into::into)
    }
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.shared.name)
            .field("version", &self.shared.version)
            .field("tools", &self.shared.tools)
            .finish_non_exhaustive()
    }
}

/// A tool as `tools/list` shows it.
fn listing(definition: &ToolDef) -> ListedTool {
    let mut tool = ListedTool::new(
        definition.name.clone(),
        definition.description.clone(),
        Arc::new(as_object(&definition.parameters)),
    );
    if let Some(schema) = &definition.output_schema {
        tool = tool.with_raw_output_schema(Arc::new(as_object(schema)));
    }
    let hints = &definition.annotations;
    if [
        hints.read_only,
        hints.destructive,
        hints.idempotent,
        hints.open_world,
    ]
    .iter()
    .any(Option::is_some)
    {
        tool = tool.with_annotations(ListedAnnotations::from_raw(
            None,
            hints.read_only,
            hints.destructive,
            hints.idempotent,
            hints.open_world,
        ));
    }
    tool
}

fn as_object(schema: &Value) -> JsonObject {
    match schema {
        Value::Object(object) => object.clone(),
        _ => JsonObject::new(),
    }
}
