//! Typed LLM tool-calling agents.
//!
//! Put [`#[tool]`](tool) on ordinary functions, hand them and a [`Model`] to [`agent!`], and
//! [`run`](Agent::run) it:
//!
//! ```
//! use agent_core::testing::ScriptedModel;
//! use agent_core::{AssistantMessage, ToolCall, agent, tool};
//!
//! /// Look up today's weather for a city.
//! #[tool]
//! async fn get_weather(
//!     /// City name, e.g. "Beijing"
//!     city: String,
//! ) -> String {
//!     format!("{city}: light rain, 18°C")
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let model = ScriptedModel::new([
//!     AssistantMessage::tool_calls([ToolCall::new("1", "get_weather", r#"{"city":"Beijing"}"#)]),
//!     AssistantMessage::text("Take an umbrella."),
//! ]);
//! let agent = agent!(model, get_weather).max_steps(5);
//! let out = agent.run("Do I need an umbrella in Beijing today?").await?;
//! assert_eq!(out.text, "Take an umbrella.");
//! # Ok::<(), agent_core::RunError>(())
//! # }).unwrap();
//! ```
//!
//! Every failure of a tool call (an unknown tool, bad JSON, arguments that do not fit, an error, a
//! panic) reaches the model as an error result it can act on; the run goes on.

mod agent;
mod message;
mod model;
mod schema;
mod state;
mod texts;
mod tool;
mod toolset;

pub mod testing;

#[doc(hidden)]
pub mod __private;

pub use agent::{Agent, DEFAULT_MAX_STEPS, RunError, RunOutput, StopReason};
pub use message::{AssistantMessage, Message, ToolCall, ToolResultMessage, Usage};
pub use model::{ChatRequest, ChatResponse, FinishReason, Model, ModelError};
pub use schema::parameters_schema;
pub use state::{FromRef, State};
pub use texts::{Chinese, English, Texts};
pub use tool::{ArgumentIssue, BoxFuture, Tool, ToolDef, ToolError, ToolOutput};
pub use toolset::{DEFAULT_RESULT_LIMIT, ToolSet, ToolSetError, is_valid_tool_name};

pub use agent_macros::{agent, tool};
