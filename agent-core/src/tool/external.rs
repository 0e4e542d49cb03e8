//! Tools the caller runs: the model sees them like any other, the agent never runs them.

use schemars::JsonSchema;
use serde_json::Value;

use crate::message::ToolCall;
use crate::reasons::tool_error::ToolError;
use crate::schema::parameters_schema;
use crate::tool::scope::RunScope;
use crate::tool::{BoxFuture, Tool, ToolAnnotations, ToolDef, ToolOutput};

/// A tool run by the caller, not by the agent: one that needs the user's browser, a device, or a
/// person's hands. A run that reaches a call to it ends paused ([`StopReason::Paused`]) with the
/// call waiting for its [result](crate::Decision::Result); the other calls of the same reply run
/// first.
///
/// ```
/// use agent_core::{Agent, AssistantMessage, ExternalTool, testing::ScriptedModel};
///
/// /// Where the user is.
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Locate {
///     /// How precise: "city" or "street".
///     precision: String,
/// }
///
/// let locate = ExternalTool::new::<Locate>("locate_user", "Asks the user's browser where they are.");
/// let model = ScriptedModel::new([AssistantMessage::text("You are in Oslo.")]);
/// let agent: Agent = Agent::new(model).try_tool(locate).unwrap();
/// assert!(agent.tools().definitions()[0].annotations.external);
/// ```
///
/// [`StopReason::Paused`]: crate::StopReason::Paused
#[derive(Debug, Clone)]
pub struct ExternalTool {
    definition: ToolDef,
}

impl ExternalTool {
    /// A tool whose arguments are an `Args` (its schema is the tool's parameters, as for a
    /// `#[tool]`).
    pub fn new<Args: JsonSchema>(name: impl Into<String>, description: impl Into<String>) -> Self {
        ExternalTool::with_parameters(name, description, parameters_schema::<Args>())
    }

    /// A tool whose parameters are this JSON schema (an object schema).
    pub fn with_parameters(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: Value,
    ) -> Self {
        let definition = ToolDef::new(name, description, parameters)
            .with_annotations(ToolAnnotations::default().external(true));
        ExternalTool { definition }
    }

    /// The definition the model is shown.
    pub fn definition(&self) -> &ToolDef {
        &self.definition
    }
}

impl<S: Send + Sync + 'static> Tool<S> for ExternalTool {
    fn definition(&self) -> &ToolDef {
        &self.definition
    }

    /// Never run by a run, which pauses instead; called directly (a tool set's `dispatch`, the
    /// MCP server), it says who runs it.
    fn call<'a>(
        &'a self,
        _context: &'a S,
        _call: &'a ToolCall,
        _run: &'a RunScope,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        let error = ToolError::RunByCaller {
            tool: self.definition.name.clone(),
        };
        Box::pin(std::future::ready(Err(error)))
    }
}
