//! A client of remote A2A agents, and a remote agent as a tool of ours: [`A2aClient`] reads an
//! agent's card and sends it messages over its JSON-RPC interface; [`A2aClient::into_tool`] makes
//! it a tool the model calls with a request in words, whose result is the remote agent's answer.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use agent_core::{
    ArgumentIssue, BoxFuture, English, Found, IssueKind, JsonType, Part, RemoteAgentProblem,
    RunScope, TaskEnd, Texts, Tool, ToolCall, ToolDef, ToolError, ToolOutput,
};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Value, json};

use crate::parts::part_in;
use crate::wire::{AgentCard, Message, MessagePart, Task, TaskState};

/// Why a remote agent could not be reached or did not answer as A2A says.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum A2aClientError {
    /// The request did not go or the reply did not come.
    #[error("the A2A agent at {url} could not be reached: {message}")]
    Transport {
        /// Where.
        url: String,
        /// What went wrong.
        message: String,
    },
    /// The reply is not what A2A says it is.
    #[error("the A2A agent at {url} answered what A2A does not say: {message}")]
    Protocol {
        /// Where.
        url: String,
        /// What was wrong with it.
        message: String,
    },
    /// The agent's card names no JSON-RPC interface.
    #[error("the A2A agent at {url} offers no JSON-RPC interface")]
    NoJsonRpc {
        /// Where.
        url: String,
    },
    /// The agent answered with a JSON-RPC error.
    #[error("the A2A agent refused the request: {message} ({code})")]
    Refused {
        /// The JSON-RPC code.
        code: i64,
        /// What it said.
        message: String,
    },
}

/// What a message sent gets back: the task it started or went on with, or a message alone.
#[derive(Debug, Clone, PartialEq)]
pub enum SendResult {
    /// The task, as it stood when it ended or waited for input.
    Task(Task),
    /// The agent's answer, no task.
    Message(Message),
}

/// A client of one remote A2A agent (its JSON-RPC interface).
#[derive(Debug, Clone)]
pub struct A2aClient {
    http: reqwest::Client,
    card: AgentCard,
    endpoint: String,
    headers: HeaderMap,
    next_id: Arc<AtomicU64>,
}

impl A2aClient {
    /// Reads the card of the agent at `base_url` (`/.well-known/agent-card.json` there) and
    /// makes a client of its JSON-RPC interface.
    pub async fn connect(base_url: &str) -> Result<Self, A2aClientError> {
        Self::connect_with(base_url, HeaderMap::new()).await
    }

    /// [`connect`](Self::connect), sending `headers` with every request (a sign-in:
    /// `authorization: Bearer ...`).
    pub async fn connect_with(base_url: &str, headers: HeaderMap) -> Result<Self, A2aClientError> {
        let http = reqwest::Client::builder()
            .connect_timeout(std::time::Duration::from_secs(10))
            .build()
            .map_err(|error| transport(base_url, error))?;
        let url = format!(
            "{}/.well-known/agent-card.json",
            base_url.trim_end_matches('/')
        );
        let response = (http.get(&url).headers(headers.clone()).send().await)
            .and_then(reqwest::Response::error_for_status)
            .map_err(|error| transport(&url, error))?;
        let card: AgentCard = response
            .json()
            .await
            .map_err(|error| A2aClientError::Protocol {
                url: url.clone(),
                message: format!("its card does not fit: {error}"),
            })?;
        let endpoint = (card.supported_interfaces.iter())
            .find(|interface| interface.protocol_binding.eq_ignore_ascii_case("JSONRPC"))
            .map(|interface| interface.url.clone())
            .ok_or(A2aClientError::NoJsonRpc { url })?;
        Ok(A2aClient {
            http,
            card,
            endpoint,
            headers,
            next_id: Arc::new(AtomicU64::new(1)),
        })
    }

    /// The agent's card.
    pub fn card(&self) -> &AgentCard {
        &self.card
    }

    /// Sends `message` and waits for its task to end or wait for input (`SendMessage`).
    pub async fn send(&self, message: Message) -> Result<SendResult, A2aClientError> {
        let result = self
            .call("SendMessage", json!({ "message": message }))
            .await?;
        let protocol = |message: String| A2aClientError::Protocol {
            url: self.endpoint.clone(),
            message,
        };
        if let Some(task) = result.get("task") {
            let task = serde_json::from_value(task.clone())
                .map_err(|error| protocol(format!("its task does not fit: {error}")))?;
            return Ok(SendResult::Task(task));
        }
        if let Some(message) = result.get("message") {
            let message = serde_json::from_value(message.clone())
                .map_err(|error| protocol(format!("its message does not fit: {error}")))?;
            return Ok(SendResult::Message(message));
        }
        Err(protocol(
            "a SendMessage result is neither a task nor a message".into(),
        ))
    }

    /// The task `id` (`GetTask`).
    pub async fn task(&self, id: &str) -> Result<Task, A2aClientError> {
        let result = self.call("GetTask", json!({ "id": id })).await?;
        serde_json::from_value(result).map_err(|error| A2aClientError::Protocol {
            url: self.endpoint.clone(),
            message: format!("its task does not fit: {error}"),
        })
    }

    /// Cancels the task `id` (`CancelTask`).
    pub async fn cancel(&self, id: &str) -> Result<Task, A2aClientError> {
        let result = self.call("CancelTask", json!({ "id": id })).await?;
        serde_json::from_value(result).map_err(|error| A2aClientError::Protocol {
            url: self.endpoint.clone(),
            message: format!("its task does not fit: {error}"),
        })
    }

    /// The agent as a tool named `name`: the model calls it with `{"input": "..."}`, a request in
    /// words, and reads the agent's answer (its answer's text and the artifacts it made); a task
    /// that fails or waits for input is an error the model reads
    /// ([`ToolError::RemoteAgent`], worded by the calling run's texts). Its parameter is
    /// described in English ([`Texts::agent_input`]): give the calling agent's texts with
    /// [`A2aTool::texts`].
    pub fn into_tool(self, name: &str, description: &str) -> A2aTool {
        let parameters = json!({
            "type": "object",
            "properties": {"input": {"type": "string", "description": English.agent_input()}},
            "required": ["input"],
            "additionalProperties": false
        });
        let mut tool = A2aTool {
            definition: ToolDef::new(name, description, parameters),
            client: self,
        };
        // What the model asks leaves the process for another agent.
        tool.definition.annotations.sends_out = true;
        tool.definition.annotations.open_world = Some(true);
        tool
    }

    /// One JSON-RPC call: its result, or why there is none.
    async fn call(&self, method: &str, params: Value) -> Result<Value, A2aClientError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let body = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        let response = (self.http.post(&self.endpoint))
            .headers(self.headers.clone())
            .header(
                HeaderName::from_static("a2a-version"),
                HeaderValue::from_static("1.0"),
            )
            .json(&body)
            .send()
            .await
            .map_err(|error| transport(&self.endpoint, error))?;
        let reply: Value = response
            .json()
            .await
            .map_err(|error| A2aClientError::Protocol {
                url: self.endpoint.clone(),
                message: format!("its reply is not JSON: {error}"),
            })?;
        if let Some(error) = reply.get("error") {
            return Err(A2aClientError::Refused {
                code: error
                    .get("code")
                    .and_then(Value::as_i64)
                    .unwrap_or_default(),
                message: (error.get("message").and_then(Value::as_str))
                    .unwrap_or_default()
                    .to_owned(),
            });
        }
        reply
            .get("result")
            .cloned()
            .ok_or_else(|| A2aClientError::Protocol {
                url: self.endpoint.clone(),
                message: "its reply has neither a result nor an error".into(),
            })
    }
}

fn transport(url: &str, error: reqwest::Error) -> A2aClientError {
    A2aClientError::Transport {
        url: url.to_owned(),
        message: error.without_url().to_string(),
    }
}

/// A remote A2A agent as a tool (see [`A2aClient::into_tool`]).
#[derive(Debug)]
pub struct A2aTool {
    definition: ToolDef,
    client: A2aClient,
}

impl A2aTool {
    /// What the calling model sees of this tool. It is marked as sending data out (what the
    /// model asks goes to another agent, beyond this process), so an agent that also reads
    /// untrusted content and private data has the lethal mix through it
    /// ([`LethalMix`](agent_core::guard::LethalMix)) unless each call waits for a person
    /// ([`requiring_approval`](A2aTool::requiring_approval)).
    pub fn definition(&self) -> &ToolDef {
        &self.definition
    }

    /// Makes each call wait for approval (see
    /// [`Agent::approve_with`](agent_core::Agent::approve_with)): for a remote agent that acts,
    /// spends or sends on the caller's behalf.
    pub fn requiring_approval(mut self) -> Self {
        self.definition.annotations.requires_approval = true;
        self
    }

    /// Says what the remote agent answers is content no one vouches for (it reads the web, or
    /// messages from outside): one of the three kinds of the lethal mix.
    pub fn reading_untrusted(mut self) -> Self {
        self.definition.annotations.reads_untrusted = true;
        self
    }

    /// Says the remote agent answers with private data (the user's mail, files, records).
    pub fn reading_private(mut self) -> Self {
        self.definition.annotations.reads_private = true;
        self
    }

    /// Describes the tool's parameter in `texts` ([`Texts::agent_input`]), the calling agent's,
    /// so the model reads no other language (English until then).
    ///
    /// ```
    /// # async fn example(client: agent_a2a::A2aClient) {
    /// use agent_core::Chinese;
    ///
    /// let tool = client.into_tool("book", "订机票。").texts(&Chinese);
    /// # }
    /// ```
    pub fn texts(mut self, texts: &dyn Texts) -> Self {
        let input = (self.definition.parameters.pointer_mut("/properties/input"))
            .and_then(Value::as_object_mut);
        if let Some(input) = input {
            input.insert("description".into(), texts.agent_input().into());
        }
        self
    }

    /// What the model is told when the agent did not answer.
    fn problem(&self, problem: RemoteAgentProblem) -> ToolError {
        ToolError::RemoteAgent {
            agent: self.client.card.name.clone(),
            problem,
        }
    }
}

impl<S: Send + Sync + 'static> Tool<S> for A2aTool {
    fn definition(&self) -> &ToolDef {
        &self.definition
    }

    fn call<'a>(
        &'a self,
        _context: &'a S,
        call: &'a ToolCall,
        _run: &'a RunScope,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let input = request_text(&call.arguments)?;
            let sent = self
                .client
                .send(Message::user(vec![MessagePart::text(input)]))
                .await;
            let sent = sent.map_err(|error| {
                self.problem(match error {
                    A2aClientError::Transport { .. } | A2aClientError::NoJsonRpc { .. } => {
                        RemoteAgentProblem::Unreachable
                    }
                    A2aClientError::Protocol { .. } => RemoteAgentProblem::Garbled,
                    A2aClientError::Refused { code, message } => {
                        RemoteAgentProblem::Refused { message, code }
                    }
                })
            })?;
            match sent {
                SendResult::Message(message) => Ok(output(&message.parts)),
                SendResult::Task(task) => {
                    task_output(task).map_err(|problem| self.problem(problem))
                }
            }
        })
    }
}

/// The request in a call's arguments: `{"input": "..."}`; arguments that are not are what any
/// tool's would be, reasons the run's texts word.
fn request_text(arguments: &str) -> Result<String, ToolError> {
    let arguments: Value =
        serde_json::from_str(arguments).map_err(|error| ToolError::invalid_json(&error))?;
    if !arguments.is_object() {
        return Err(ToolError::arguments_not_an_object(&arguments));
    }
    let kind = match arguments.get("input") {
        Some(Value::String(input)) => return Ok(input.clone()),
        None => IssueKind::Missing { field: None },
        Some(other) => IssueKind::WrongType {
            expected: vec![JsonType::String],
            found: Found::Kind(JsonType::of(other)),
        },
    };
    Err(ToolError::InvalidArguments {
        issues: vec![ArgumentIssue::new("input", kind)],
    })
}

/// What the model reads of a task: its answer and artifacts; a task that did not complete is a
/// problem saying how it stands.
fn task_output(task: Task) -> Result<ToolOutput, RemoteAgentProblem> {
    let said = task
        .status
        .message
        .as_ref()
        .map(Message::text)
        .unwrap_or_default();
    match task.status.state {
        TaskState::Completed => {
            let mut parts: Vec<MessagePart> =
                task.artifacts.into_iter().flat_map(|a| a.parts).collect();
            // The answer, when the artifacts do not already hold it.
            if !said.is_empty() && !parts.iter().any(|part| part.text.as_deref() == Some(&said)) {
                parts.insert(0, MessagePart::text(said));
            }
            Ok(output(&parts))
        }
        state => Err(RemoteAgentProblem::Task {
            state: match state {
                TaskState::InputRequired | TaskState::AuthRequired => TaskEnd::WaitsForInput,
                TaskState::Canceled => TaskEnd::Cancelled,
                TaskState::Rejected => TaskEnd::Rejected,
                _ => TaskEnd::Failed,
            },
            message: said,
        }),
    }
}

/// A2A parts as a tool's output: text, files (bytes or URLs), and data as JSON text.
fn output(parts: &[MessagePart]) -> ToolOutput {
    let parts: Vec<Part> = parts.iter().filter_map(part_in).collect();
    match parts.as_slice() {
        [] => ToolOutput::Done,
        [Part::Text { text }] => ToolOutput::Text(text.clone()),
        _ => ToolOutput::Parts(parts),
    }
}
