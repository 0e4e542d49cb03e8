//! The tool layer: what a tool is (the [`Tool`] trait, its definition for the model, what it
//! returns), and in this folder everything that makes and runs tools: the dispatcher
//! ([`ToolSet`](crate::ToolSet), `dispatcher`), the argument engine (`arguments`), tools made of
//! closures (`closure`) and what their return values become (`return_value`), toolboxes of methods
//! (`toolbox`), the blocking pool for plain functions (`blocking`), a call's scope (`call_info`),
//! tools the caller runs (`external`) and values from the agent (`state`).

pub(crate) mod arguments;
pub(crate) mod blocking;
pub(crate) mod call_info;
pub(crate) mod closure;
pub(crate) mod dispatcher;
pub(crate) mod external;
pub(crate) mod return_value;
pub(crate) mod scope;
pub(crate) mod state;
pub(crate) mod toolbox;
pub(crate) mod wording;

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::content::Part;
use crate::message::ToolCall;
use crate::reasons::tool_error::ToolError;
use crate::tool::scope::RunScope;

/// A boxed, `Send` future: what [`Tool::call`] and [`Model::chat`](crate::Model::chat) return, so both
/// traits stay object-safe.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A tool the model can call.
///
/// `#[tool]` implements this for you. Implement it by hand for tools built at run time (from a config
/// file, a plugin, a remote server) and hand them to [`Agent::try_tool`](crate::Agent::try_tool).
///
/// `S` is the type of the run's context, which the tool is handed (see [`State`](crate::State)); a
/// tool that needs none implements `Tool<S>` for every `S`.
///
/// For `#[tool] fn add(..)`, the tool is `add {}`: the unit struct `#[tool]` puts beside the function
/// (`add` alone, in an expression, is the function).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool",
    label = "expected a tool here",
    note = "for a `#[tool] fn name(..)`, the tool is `name {{}}`: the unit struct `#[tool]` made beside the function (`name` alone is the function itself)",
    note = "a function without `#[tool]` is no tool: put `#[tool]` on it"
)]
pub trait Tool<S = ()>: Send + Sync + 'static {
    /// The name, description and parameter schema the model sees.
    fn definition(&self) -> &ToolDef;

    /// Runs one call of the run `run`. `call.arguments` is the model's raw JSON text; parsing it
    /// is the tool's job, and every way it can fail is a [`ToolError`], which the dispatcher turns
    /// into an error result for the model. Panics are caught by the dispatcher. `run` is the run
    /// that made the call: its id (with the call's own id, which call this is, for a tool that
    /// takes a [`CallInfo`](crate::CallInfo)), its agent's path and the budget it shares (a call
    /// made outside a run, by [`ToolSet::dispatch`](crate::ToolSet::dispatch) or an MCP client,
    /// is a run of its own, with a fresh id).
    fn call<'a>(
        &'a self,
        context: &'a S,
        call: &'a ToolCall,
        run: &'a RunScope,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>>;

    /// Whether a call runs on a thread of its own that dropping its future cannot stop (what
    /// `#[tool]` does with a plain `fn`). Past its timeout such a call is abandoned, not cancelled,
    /// and the model is told that it may still finish its work.
    fn runs_on_a_blocking_thread(&self) -> bool {
        false
    }

    /// Whether a call starts runs of its own whose events and outputs belong to the calling run
    /// (an agent called as a tool, [`Agent::as_tool`](crate::Agent::as_tool)): the run then
    /// keeps a place for them in `run`.
    fn starts_runs(&self) -> bool {
        false
    }
}

/// A shared tool is a tool: the list [`ToolBox::into_tools`](crate::ToolBox::into_tools) hands
/// out goes to [`Agent::try_tools`](crate::Agent::try_tools) as it is. Added to a
/// [`ToolSet`](crate::ToolSet), it is kept as the `Arc` it is, not wrapped in another.
// Every method forwarded, or the shared tool would lose what it says about itself.
#[deny(clippy::missing_trait_methods)]
impl<S: Send + Sync + 'static> Tool<S> for std::sync::Arc<dyn Tool<S>> {
    fn definition(&self) -> &ToolDef {
        (**self).definition()
    }

    fn call<'a>(
        &'a self,
        context: &'a S,
        call: &'a ToolCall,
        run: &'a RunScope,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        (**self).call(context, call, run)
    }

    fn runs_on_a_blocking_thread(&self) -> bool {
        (**self).runs_on_a_blocking_thread()
    }

    fn starts_runs(&self) -> bool {
        (**self).starts_runs()
    }
}

/// How a tool is described to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolDef {
    /// The name the model calls it by: `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`.
    pub name: String,
    /// What the tool does and when to use it.
    pub description: String,
    /// A JSON schema (draft 2020-12) of the arguments object. Provider adapters adapt it to their dialect.
    pub parameters: serde_json::Value,
    /// How the tool behaves and how it must be run: hints (as MCP has them), approval, timeout.
    #[serde(default, skip_serializing_if = "ToolAnnotations::is_default")]
    pub annotations: ToolAnnotations,
    /// A JSON schema of the tool's result when it is a JSON object (see [`output_schema`](crate::output_schema)):
    /// MCP clients get it as `outputSchema` and the result as `structuredContent`. `#[tool]` fills it in
    /// when the success type implements `JsonSchema`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<serde_json::Value>,
}

/// What a tool says about itself beyond its schema. Set them with `#[tool(read_only, destructive,
/// idempotent, open_world, requires_approval, reads_untrusted, reads_private, sends_out,
/// timeout = "30s")]`.
///
/// The hints are the MCP tool annotations: advice for clients and people, not guarantees.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolAnnotations {
    /// The tool does not change its environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    /// The tool may destroy or overwrite things (meaningful when not read-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive: Option<bool>,
    /// Calling it again with the same arguments has no further effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent: Option<bool>,
    /// The tool reaches an open world (the web, other people) rather than a closed one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world: Option<bool>,
    /// Each call must be approved first (see [`Agent::approve_with`](crate::Agent::approve_with));
    /// without an approver, calls are denied.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub requires_approval: bool,
    /// The caller runs it, not the agent (in a browser, on a device): a run that reaches a call
    /// ends paused, waiting for the result (see [`ExternalTool`](crate::ExternalTool)).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub external: bool,
    /// The tool reads content no one vouches for (a web page, an email, a file from outside):
    /// what it returns may carry instructions planted for the model. One of the three kinds of
    /// the lethal mix ([`LethalMix`](crate::guard::LethalMix)).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reads_untrusted: bool,
    /// The tool reads private data (a mailbox, files, records of people).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reads_private: bool,
    /// The tool can send data out (a message, a request to a URL, a post).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sends_out: bool,
    /// How long one call may run before it is cancelled (or, for a sync tool's thread, abandoned);
    /// the agent's default when `None`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "duration_millis"
    )]
    pub timeout: Option<Duration>,
}

impl ToolAnnotations {
    fn is_default(&self) -> bool {
        *self == ToolAnnotations::default()
    }

    /// Marks the tool read-only (or not).
    pub fn read_only(mut self, value: bool) -> Self {
        self.read_only = Some(value);
        self
    }

    /// Marks the tool destructive (or not).
    pub fn destructive(mut self, value: bool) -> Self {
        self.destructive = Some(value);
        self
    }

    /// Marks the tool idempotent (or not).
    pub fn idempotent(mut self, value: bool) -> Self {
        self.idempotent = Some(value);
        self
    }

    /// Marks the tool open-world (or not).
    pub fn open_world(mut self, value: bool) -> Self {
        self.open_world = Some(value);
        self
    }

    /// Requires approval of each call.
    pub fn requires_approval(mut self, value: bool) -> Self {
        self.requires_approval = value;
        self
    }

    /// Marks the tool as reading untrusted content (or not).
    pub fn reads_untrusted(mut self, value: bool) -> Self {
        self.reads_untrusted = value;
        self
    }

    /// Marks the tool as reading private data (or not).
    pub fn reads_private(mut self, value: bool) -> Self {
        self.reads_private = value;
        self
    }

    /// Marks the tool as able to send data out (or not).
    pub fn sends_out(mut self, value: bool) -> Self {
        self.sends_out = value;
        self
    }

    /// Marks the tool as run by the caller (or not).
    pub fn external(mut self, value: bool) -> Self {
        self.external = value;
        self
    }

    /// Sets the tool's own timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }
}

/// Durations in transcripts and definitions are whole milliseconds.
mod duration_millis {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(
        value: &Option<Duration>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match value {
            Some(duration) => {
                serializer.serialize_u64(u64::try_from(duration.as_millis()).unwrap_or(u64::MAX))
            }
            None => serializer.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Duration>, D::Error> {
        Ok(Option::<u64>::deserialize(deserializer)?.map(Duration::from_millis))
    }
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
            annotations: ToolAnnotations::default(),
            output_schema: None,
        }
    }

    /// Sets the schema of the tool's JSON results.
    pub fn with_output_schema(mut self, schema: Option<serde_json::Value>) -> Self {
        self.output_schema = schema;
        self
    }

    /// Sets the annotations.
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = annotations;
        self
    }
}

/// What a tool produced, before it is turned into the text the model sees.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolOutput {
    /// Text that goes to the model verbatim.
    Text(String),
    /// A serialized JSON value.
    Json(String),
    /// The tool succeeded with nothing to say; the model is told it succeeded.
    Done,
    /// Text, images, documents in order: a screenshot, a rendered chart, a fetched PDF. A leading
    /// text part becomes the result's text, the rest its [`parts`](crate::ToolResultMessage::parts).
    Parts(Vec<Part>),
}

impl ToolOutput {
    /// An image, from its bytes, as the whole result.
    pub fn image(media_type: impl Into<String>, bytes: impl AsRef<[u8]>) -> Self {
        ToolOutput::Parts(vec![Part::image(media_type, bytes)])
    }

    /// Serializes a value as the JSON result of a tool.
    pub fn json<T: Serialize + ?Sized>(value: &T) -> Result<Self, ToolError> {
        serde_json::to_string(value)
            .map(ToolOutput::Json)
            .map_err(|err| ToolError::Unserializable {
                message: err.to_string(),
            })
    }
}
