//! What a tool is: its definition for the model, how it is called, what it returns and how it fails.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};

use crate::message::ToolCall;

/// A boxed, `Send` future: what [`Tool::call`] and [`Model::chat`](crate::Model::chat) return, so both
/// traits stay object-safe.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A tool the model can call.
///
/// `#[tool]` implements this for you. Implement it by hand for tools built at run time (from a config
/// file, a plugin, a remote server) and hand them to [`Agent::try_tool`](crate::Agent::try_tool).
///
/// `S` is the agent's state (see [`State`](crate::State)); a tool that needs none implements `Tool<S>`
/// for every `S`.
pub trait Tool<S = ()>: Send + Sync + 'static {
    /// The name, description and parameter schema the model sees.
    fn definition(&self) -> &ToolDef;

    /// Runs one call. `call.arguments` is the model's raw JSON text; parsing it is the tool's job, and
    /// every way it can fail is a [`ToolError`], which the dispatcher turns into an error result for the
    /// model. Panics are caught by the dispatcher.
    fn call<'a>(
        &'a self,
        state: &'a S,
        call: &'a ToolCall,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>>;
}

/// How a tool is described to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDef {
    /// The name the model calls it by: `^[A-Za-z0-9_-]{1,64}$`.
    pub name: String,
    /// What the tool does and when to use it.
    pub description: String,
    /// A JSON schema (draft 2020-12) of the arguments object. Provider adapters adapt it to their dialect.
    pub parameters: serde_json::Value,
}

impl ToolDef {
    /// A definition from its parts.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: serde_json::Value,
    ) -> Self {
        ToolDef {
            name: name.into(),
            description: description.into(),
            parameters,
        }
    }
}

/// What a tool produced, before it is turned into the text the model sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolOutput {
    /// Text that goes to the model verbatim.
    Text(String),
    /// A serialized JSON value.
    Json(String),
    /// The tool succeeded with nothing to say; the model is told it succeeded.
    Done,
}

impl ToolOutput {
    /// Serializes a value as the JSON result of a tool.
    pub fn json<T: Serialize + ?Sized>(value: &T) -> Result<Self, ToolError> {
        serde_json::to_string(value)
            .map(ToolOutput::Json)
            .map_err(|err| {
                ToolError::failed(format!("the tool's result could not be serialized: {err}"))
            })
    }
}

/// Why a tool call failed. Every variant reaches the model as an error result, never as a crashed run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The model asked for a tool the agent does not have.
    #[error("unknown tool `{name}`")]
    UnknownTool {
        /// The name the model used.
        name: String,
        /// The tools that do exist.
        available: Vec<String>,
    },
    /// The arguments are not JSON.
    #[error("the arguments are not valid JSON: {message}")]
    InvalidJson {
        /// The parser's message.
        message: String,
    },
    /// The arguments are JSON but do not fit the tool's parameters.
    #[error("invalid arguments: {}", ArgumentIssue::join(issues, "; "))]
    InvalidArguments {
        /// Every problem found, each with the path of the field it concerns.
        issues: Vec<ArgumentIssue>,
    },
    /// The tool ran and returned an error.
    #[error("{message}")]
    Failed {
        /// The tool's error message.
        message: String,
    },
    /// The tool panicked; the run goes on.
    #[error("the tool panicked: {message}")]
    Panicked {
        /// The panic message.
        message: String,
    },
}

impl ToolError {
    /// The error a tool returns when it ran but could not do its job.
    pub fn failed(message: impl Into<String>) -> Self {
        ToolError::Failed {
            message: message.into(),
        }
    }
}

/// One problem with a tool's arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentIssue {
    /// Where the problem is, as field names and indices joined by dots (`unit`, `stops.2.city`);
    /// empty when it concerns the arguments as a whole.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl ArgumentIssue {
    /// An issue at a path.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        ArgumentIssue {
            path: path.into(),
            message: message.into(),
        }
    }

    /// Renders issues as `path: message` joined by `separator`; `whole` labels an issue with no path.
    pub(crate) fn render(
        issues: &[ArgumentIssue],
        whole: &str,
        path_separator: &str,
        separator: &str,
    ) -> String {
        let mut out = String::new();
        for (index, issue) in issues.iter().enumerate() {
            if index > 0 {
                out.push_str(separator);
            }
            out.push_str(if issue.path.is_empty() {
                whole
            } else {
                &issue.path
            });
            out.push_str(path_separator);
            out.push_str(&issue.message);
        }
        out
    }

    fn join(issues: &[ArgumentIssue], separator: &str) -> String {
        Self::render(issues, "arguments", ": ", separator)
    }
}

impl fmt::Display for ArgumentIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}
