//! Using an MCP server's tools: connect (spawned or by URL), list the tools, and call them as
//! [`Tool`]s of an agent.

use std::process::Stdio;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
    JsonObject, ProtocolVersion, Tool as ListedTool,
};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{IntoTransport, StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceError, ServiceExt};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};

use super::McpError;
use super::content;
use agent_core::Part;
use agent_core::RunScope;
use agent_core::ToolCall;
use agent_core::neutral_parameters;
use agent_core::{BoxFuture, Tool, ToolAnnotations, ToolDef, ToolOutput};
use agent_core::{English, RemoteServer, Texts};
use agent_core::{RemoteProblem, ToolError};
use agent_core::{drop_optional_nulls, valid_tool_name};

/// A connection to an MCP server, shared by the client and every tool it lists.
///
/// The connection stays open while the client or any of its tools is alive; when the last one is
/// dropped, it is closed (and a spawned server is stopped).
#[derive(Clone)]
pub struct McpClient {
    connection: Arc<Connection>,
    /// The words its tools name what the model cannot be shown with.
    texts: Arc<dyn Texts>,
}

struct Connection {
    service: RunningService<RoleClient, ClientConfig>,
    /// The server, as messages name it: by the name it gave, or how it was reached.
    name: RemoteServer,
    process_id: Option<u32>,
}

impl McpClient {
    /// Starts the server as a child process and talks to it over its stdin and stdout; its stderr
    /// is the caller's.
    pub async fn spawn(command: tokio::process::Command) -> Result<Self, McpError> {
        McpClient::spawn_with_stderr(command, Stdio::inherit()).await
    }

    /// [`spawn`](McpClient::spawn) with the server's stderr sent elsewhere: `Stdio::null()` for a
    /// chatty server under a terminal UI, a file for its logs.
    pub async fn spawn_with_stderr(
        command: tokio::process::Command,
        stderr: impl Into<Stdio>,
    ) -> Result<Self, McpError> {
        let program = command
            .as_std()
            .get_program()
            .to_string_lossy()
            .into_owned();
        let (transport, _) = TokioChildProcess::builder(command)
            .stderr(stderr)
            .spawn()
            .map_err(|source| McpError::Spawn {
                command: program.clone(),
                source,
            })?;
        let process_id = transport.id();
        McpClient::start(transport, RemoteServer::Program(program), process_id).await
    }

    /// Connects to a server over streamable HTTP, e.g. `http://127.0.0.1:8000/mcp`.
    pub async fn connect(url: impl Into<String>) -> Result<Self, McpError> {
        let url = url.into();
        let transport = StreamableHttpClientTransport::from_uri(url.clone());
        McpClient::start(transport, RemoteServer::Url(url), None).await
    }

    /// Connects over streamable HTTP with the SDK's settings: an `Authorization` bearer token,
    /// custom headers, retries, size limits.
    pub async fn connect_with(
        config: StreamableHttpClientTransportConfig,
    ) -> Result<Self, McpError> {
        let label = RemoteServer::Url(config.uri.to_string());
        let transport = StreamableHttpClientTransport::from_config(config);
        McpClient::start(transport, label, None).await
    }

    /// Talks to a server over any byte stream (a pipe, a socket).
    pub async fn connect_io<R, W>(read: R, write: W) -> Result<Self, McpError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        McpClient::start((read, write), RemoteServer::Stream, None).await
    }

    async fn start<T, E, A>(
        transport: T,
        label: RemoteServer,
        process_id: Option<u32>,
    ) -> Result<Self, McpError>
    where
        T: IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let identity = Implementation::new("agent-core", env!("CARGO_PKG_VERSION"));
        // The newest version with an `initialize` handshake, which every server speaks today.
        let config = ClientConfig::new(ClientCapabilities::default(), identity)
            .with_protocol_version(ProtocolVersion::V_2025_11_25);
        let service = config
            .serve(transport)
            .await
            .map_err(|error| McpError::Connect {
                server: label.to_string(),
                source: Box::new(error),
            })?;
        let name = service
            .peer_info()
            .and_then(|info| {
                info.server_info
                    .as_ref()
                    .map(|server| RemoteServer::Named(server.name.clone()))
            })
            .unwrap_or(label);
        Ok(McpClient {
            connection: Arc::new(Connection {
                service,
                name,
                process_id,
            }),
            texts: Arc::new(English),
        })
    }

    /// Sets the texts in which the tools it lists from now on name the content of a result the
    /// model cannot be shown as it is (a resource, a link, content of an unknown kind; see
    /// [`ContentNote`](agent_core::ContentNote)): give it the agent's. [`English`] by default.
    pub fn texts(mut self, texts: impl Texts) -> Self {
        self.texts = Arc::new(texts);
        self
    }

    /// The server, as messages name it: by the name it gave, or how it was reached (its
    /// `Display` is the English words: `` `name` ``, `at https://…`).
    pub fn server_name(&self) -> &RemoteServer {
        &self.connection.name
    }

    /// The process id of a spawned server.
    pub fn process_id(&self) -> Option<u32> {
        self.connection.process_id
    }

    /// Whether the server can still be reached: `false` once its side of the connection has
    /// closed (its process ended, its stream or session went away). A call then fails as
    /// [`RemoteProblem::Unreachable`].
    pub fn is_connected(&self) -> bool {
        !self.connection.service.is_transport_closed()
    }

    /// The server's tools, ready for [`Agent::try_tools`](agent_core::Agent::try_tools).
    ///
    /// Names are made valid for every provider (`^[A-Za-z0-9_-]{1,64}$`: other characters become
    /// `_`, longer names are cut); calls use the server's own name. Schemas are brought into the
    /// neutral form ([`neutral_parameters`](agent_core::neutral_parameters)), so each provider adapter
    /// transforms them as it does a `#[tool]`'s.
    pub async fn tools(&self) -> Result<Vec<McpTool>, McpError> {
        let listed = self
            .connection
            .service
            .list_all_tools()
            .await
            .map_err(|error| McpError::Request {
                server: self.connection.name.to_string(),
                method: "tools/list",
                source: Box::new(error),
            })?;
        Ok(listed
            .into_iter()
            .map(|tool| McpTool::new(tool, self.clone()))
            .collect())
    }

    async fn call(
        &self,
        name: &str,
        arguments: JsonObject,
    ) -> Result<CallToolResult, ServiceError> {
        let request = CallToolRequestParams::new(name.to_owned()).with_arguments(arguments);
        self.connection.service.peer().call_tool(request).await
    }
}

impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClient")
            .field("server", &self.connection.name)
            .field("process_id", &self.connection.process_id)
            .finish_non_exhaustive()
    }
}

/// One tool of an MCP server, callable like any [`Tool`]: each call is a `tools/call` request.
///
/// A result the server marks as an error, a protocol error, and a server that stopped all become
/// error results for the model; the run goes on.
#[derive(Debug, Clone)]
pub struct McpTool {
    definition: ToolDef,
    /// The name the server knows the tool by.
    remote_name: String,
    client: McpClient,
}

impl McpTool {
    fn new(listed: ListedTool, client: McpClient) -> Self {
        let remote_name = listed.name.into_owned();
        let description = listed
            .description
            .map(|text| text.into_owned())
            .or_else(|| listed.title.clone())
            .or_else(|| {
                listed
                    .annotations
                    .as_ref()
                    .and_then(|hints| hints.title.clone())
            })
            .unwrap_or_default();
        let parameters = neutral_parameters(Value::Object((*listed.input_schema).clone()));
        let mut annotations = ToolAnnotations::default();
        if let Some(hints) = &listed.annotations {
            annotations.read_only = hints.read_only_hint;
            annotations.destructive = hints.destructive_hint;
            annotations.idempotent = hints.idempotent_hint;
            annotations.open_world = hints.open_world_hint;
        }
        let definition = ToolDef::new(valid_tool_name(&remote_name), description, parameters)
            .with_annotations(annotations)
            .with_output_schema(
                listed
                    .output_schema
                    .map(|schema| Value::Object((*schema).clone())),
            );
        McpTool {
            definition,
            remote_name,
            client,
        }
    }

    /// What the model sees of this tool: its name, description and parameter schema. (The same as
    /// [`Tool::definition`], without naming the agent's context type.)
    pub fn definition(&self) -> &ToolDef {
        &self.definition
    }

    /// The name the server knows the tool by (the model may see another, see [`McpClient::tools`]).
    pub fn remote_name(&self) -> &str {
        &self.remote_name
    }

    /// Shows the tool to the model under another name (made provider-safe as well).
    pub fn renamed(mut self, name: &str) -> Self {
        self.definition.name = valid_tool_name(name);
        self
    }

    /// Puts `prefix` before the name the model sees: for tools of several servers in one agent.
    pub fn with_prefix(self, prefix: &str) -> Self {
        let name = format!("{prefix}{}", self.definition.name);
        self.renamed(&name)
    }

    /// Makes each call wait for approval (see [`Agent::approve_with`](agent_core::Agent::approve_with)):
    /// for a remote tool that writes, deletes or spends, whatever its hints say.
    pub fn requiring_approval(mut self) -> Self {
        self.definition.annotations.requires_approval = true;
        self
    }

    /// Says the tool reads content no one vouches for (a web page, a message from outside): one
    /// of the three kinds of the lethal mix ([`LethalMix`](agent_core::guard::LethalMix)), which
    /// an agent refuses to run without an approval or a guard.
    pub fn reading_untrusted(mut self) -> Self {
        self.definition.annotations.reads_untrusted = true;
        self
    }

    /// Says the tool reads private data (a mailbox, files, records of people).
    pub fn reading_private(mut self) -> Self {
        self.definition.annotations.reads_private = true;
        self
    }

    /// Says the tool can send data out (a message, a post, a request to any URL).
    pub fn sending_out(mut self) -> Self {
        self.definition.annotations.sends_out = true;
        self
    }

    /// Gives calls their own timeout instead of the agent's default.
    pub fn with_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.definition.annotations.timeout = Some(timeout);
        self
    }

    /// Turns a failed request into what the model is told.
    fn request_error(&self, error: ServiceError) -> ToolError {
        let problem = match error {
            ServiceError::McpError(error) => RemoteProblem::Refused {
                message: error.message.into_owned(),
                code: error.code.0,
            },
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                RemoteProblem::Unreachable
            }
            other => RemoteProblem::Failed {
                message: other.to_string(),
            },
        };
        ToolError::Remote {
            server: self.client.connection.name.clone(),
            problem,
        }
    }
}

impl<S: Send + Sync + 'static> Tool<S> for McpTool {
    fn definition(&self) -> &ToolDef {
        McpTool::definition(self)
    }

    fn call<'a>(
        &'a self,
        _context: &'a S,
        call: &'a ToolCall,
        _run: &'a RunScope,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let mut arguments = arguments_object(&call.arguments)?;
            // A strict dialect sends `null` for a field left out; a server may refuse it.
            drop_optional_nulls(&mut arguments, &self.definition.parameters);
            let result = self
                .client
                .call(&self.remote_name, arguments)
                .await
                .map_err(|error| self.request_error(error))?;
            output(result, &*self.client.texts)
        })
    }
}

/// The model's arguments as the JSON object `tools/call` carries; the server checks the rest.
fn arguments_object(arguments: &str) -> Result<JsonObject, ToolError> {
    if arguments.trim().is_empty() {
        return Ok(JsonObject::new());
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(other) => Err(ToolError::arguments_not_an_object(&other)),
        Err(error) => Err(ToolError::invalid_json(&error)),
    }
}

/// A `tools/call` result as the tool's outcome: its content as text, or as parts when it holds
/// images, audio or documents (the model sees them where its provider can), or the structured
/// result when there is no content.
fn output(result: CallToolResult, texts: &dyn Texts) -> Result<ToolOutput, ToolError> {
    if result.is_error == Some(true) {
        return Err(ToolError::failed(content::as_text(&result.content, texts)));
    }
    if let Some(structured) = result.structured_content
        && result.content.is_empty()
    {
        return Ok(ToolOutput::Json(structured.to_string()));
    }
    let mut parts = content::as_parts(&result.content, texts);
    Ok(match parts.as_mut_slice() {
        [] => ToolOutput::Text(String::new()),
        [Part::Text { text }] => ToolOutput::Text(std::mem::take(text)),
        _ => ToolOutput::Parts(parts),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_must_be_an_object() {
        assert_eq!(arguments_object("").unwrap(), JsonObject::new());
        assert!(matches!(
            arguments_object("[1]"),
            Err(ToolError::InvalidArguments { .. })
        ));
        assert!(matches!(
            arguments_object("{"),
            Err(ToolError::InvalidJson { .. })
        ));
        assert_eq!(
            arguments_object(r#"{"a":1}"#).unwrap().get("a"),
            Some(&Value::from(1))
        );
    }
}
