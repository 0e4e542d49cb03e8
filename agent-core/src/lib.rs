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
//! panic, a timeout) reaches the model as an error result it can act on; the run goes on.
//!
//! Where to look:
//! - [`tool`], [`Tool`], [`ToolSet`]: tools, their definitions and the dispatcher; [`State`] for
//!   values from the agent rather than the model, [`CallInfo`] for which call (and run) this is.
//!   `#[tool]` on an `impl` block makes a [`ToolBox`] of its methods; [`tool_fn`] makes a tool of
//!   a closure at run time. [`ToolSet::outcome`] is the one way a call is run, whatever was
//!   decided about it ([`CallDecision`]), and [`ToolSet::result_message`] the one place its
//!   result is made; [`ToolError`] is every
//!   way a call fails (an argument's problem an [`IssueKind`], serde's errors sorted into them),
//!   and [`Texts`] words each one for the model, in one table per language.
//! - [`Agent`]: the builder (limits, timeouts, texts, [`Hooks`], approval, [`ModelSettings`]) and
//!   the two ways into a run: [`Agent::run`] and [`Agent::resume`] (a [paused](PausedRun) run going
//!   on), each a [`RunRequest`] that takes everything a run can have (context, history or
//!   session, images, settings, a cancel signal, a typed output, a journal), then is awaited or
//!   streamed ([`RunEvent`]).
//! - [`Model`]: the one trait every model implements; `providers` has OpenAI-compatible, Anthropic
//!   and Gemini adapters over HTTP (cargo features, on by default) and `providers::from_env()`;
//!   [`testing::ScriptedModel`] replays a script for tests and offline runs. [`Fallback`] chains
//!   models (of any vendors, each with its own settings): when one is down past its retries, the
//!   next answers. [`Usage`] means the same for every vendor (cached and reasoning tokens said
//!   apart) and [`Price`] gives it a cost; [`PromptCache`] asks a provider to cache what the
//!   requests of a conversation share.
//! - [`context`]: what of a long conversation each request carries ([`Agent::context_policy`]):
//!   whole units of the history kept or left out, a [`Summary`](context::Summary) in their place
//!   (kept with the conversation), results sent as notes the model can read back.
//! - Agents that call agents: [`Agent::as_tool`] makes an agent a tool of another ([`AgentTool`],
//!   typed both ways; its run kept in the caller's output as a [`ChildRun`]), and
//!   [`Agent::try_handoff`] lets it hand the conversation to another ([`Handoff`]). A [`Budget`]
//!   ([`RunRequest::budget`]) is shared by a run and every run it starts; each run is at its
//!   [`AgentPath`] in the tree, which tags its usage and its events ([`RunEvent::SubAgent`]).
//!   A tool is handed its call's [`RunScope`]: the run's id, path and budget.
//!
//! Integrations built on this crate's public API alone are crates of their own: `agent-mcp`
//! serves tools to MCP clients and uses MCP servers' tools, `agent-web` serves an agent to chat
//! front ends (the AI SDK's UI message stream), `agent-restate` runs it durably on Restate,
//! `agent-sql` keeps conversations in SQLite or PostgreSQL.
//!
//! A run is one request into one small loop (a step asks the model, has the answer checked, rules
//! on each call, carries the calls out and records what happened), and everything a run can have
//! is a value at one of the loop's seams, each a public trait in [`seams`]:
//! - **the model call** ([`seams::ModelLayer`]): hooks' observers, the `chat` span, a durable
//!   engine's [`Journal`] ([`RunRequest::journal`]), the view of a conversation handed to an
//!   agent, the run's spending from its [`Budget`], one's own ([`Agent::model_layer`]); the
//!   model read as a stream for [`RunRequest::stream`];
//! - **the call policy** ([`seams::CallPolicy`]): the limits, [`Hooks::before_tool_call`],
//!   hand-offs, [`ExternalTool`]s, the [`Approver`], the [`Budget`], one's own
//!   ([`Agent::policy`]): one ruling per call, and every result seen;
//! - **the dispatcher**: [`ToolSet::outcome`], where a call and what was decided about it become
//!   its outcome, and [`ToolSet::result_message`], the one place any result is made;
//! - **the answer check** ([`seams::AnswerCheck`]): a reply without calls, a typed output
//!   ([`RunRequest::output`]), or one's own ([`RunRequest::answer_check`]);
//! - **the transcript** ([`seams::Transcript`]): a session's store ([`session::SessionStore`],
//!   [`RunRequest::session`]), kept step by step.
//!
//! The cancel signal ([`RunRequest::until`]) and the time limit cut whatever is in flight; pauses
//! ([`PausedRun`]) and events ([`RunEvent`]) are the run's own.
//!
//! Layers, from the ground up, each importing only those before it: the vocabulary (messages,
//! content, errors, [`Texts`]), tools (the argument engine, the dispatcher), the model and its
//! providers, typed output, the run (`run/`: the agent, the request, the seams and the crate's
//! values for them, the loop, hooks, pauses, events), the session stores, and the integrations.

mod budget;
mod content;
mod fallback;
mod fresh;
mod limits;
mod message;
mod model;
mod output;
mod prices;
mod reasoning;
mod reasons;
mod run;
mod schema;
mod settings;
mod texts;
mod tool;
mod usage;

#[cfg(feature = "http")]
pub mod providers;
pub mod session;
pub mod testing;

#[doc(hidden)]
pub mod __private;

/// What of a long conversation each request carries: a [`ContextPolicy`](context::ContextPolicy)
/// set with [`Agent::context_policy`] sees the history as [`Turns`](context::Turns), units it
/// keeps or leaves out whole (a reply with its calls' results is one), and answers with a
/// [`Shape`](context::Shape); the crate ships [`KeepLastTurns`](context::KeepLastTurns),
/// [`TokenWindow`](context::TokenWindow) and [`Summarize`](context::Summarize), whose
/// [`Summary`](context::Summary)s a session keeps beside the messages they stand for.
pub mod context {
    pub use crate::run::context::*;
}

/// The seams of a run, as public traits, and the values the crate ships for them: what a feature
/// of a run plugs into, and what a value of one's own implements. A step passes them in this
/// order:
///
/// ```text
/// policies' before_step -> model-call layers -> the model -> the answer check
///   -> policies on the reply -> policies on each call -> the dispatcher (ToolSet::outcome)
///   -> policies' after_call on each result -> the transcript
/// ```
///
/// - [`ModelLayer`](seams::ModelLayer): around the call to the model (hooks' observers, the
///   `chat` span, a durable engine's journal; a cache or a rewrite of the history of one's own,
///   with [`Agent::model_layer`]), outermost first.
/// - [`CallPolicy`](seams::CallPolicy): an ordered list folded into one
///   [`Ruling`](seams::Ruling) per call ([`CutOffCalls`](seams::CutOffCalls), the limits, hooks,
///   one's own with [`Agent::policy`], [`ExternalTools`](seams::ExternalTools),
///   [`Approvals`](seams::Approvals), [`CannotPause`](seams::CannotPause)), which also sees every
///   result.
/// - [`AnswerCheck`](seams::AnswerCheck): one per run; [`TextAnswer`](seams::TextAnswer) for a
///   text run, a typed output's for [`RunRequest::output`], one's own with
///   [`RunRequest::answer_check`].
/// - [`Transcript`](seams::Transcript): keeps the transcript as it grows; a session's store
///   does, step by step.
///
/// `ARCHITECTURE.md` draws a step through them.
pub mod seams {
    pub use crate::run::layers::{Approvals, CannotPause, ChatSpan, CutOffCalls, ExternalTools};
    pub use crate::run::seams::*;
}

/// Guardrails: checks on a run's input, its model requests, its tool calls' arguments, its
/// tools' results and its answer, that run before or beside the model and stop harm before it
/// happens ([`Guard`](guard::Guard), added with [`Agent::guard`]); a model asked as a judge
/// ([`Judge`](guard::Judge)); and the lethal mix of tools ([`LethalMix`](guard::LethalMix)),
/// which `agent!` refuses to compile.
pub mod guard {
    pub use crate::run::guard::{
        At, Checked, Checking, Guard, GuardFn, HoldBack, Judge, JudgeVerdict, Judged, LethalMix,
        Place, Stopped, ToolGuards, Touches, Tripped, Verdict, What, guard_fn,
    };
}

pub use budget::{Budget, BudgetItem, BudgetLimits, BudgetState, Spent};
pub use content::{Media, MediaUrl, Part, Source};
pub use fallback::Fallback;
pub use limits::{AtStepLimit, DEFAULT_MAX_STEPS, DEFAULT_TOOL_TIMEOUT};
pub use message::{AssistantMessage, Message, ToolCall, ToolResultMessage};
pub use model::{
    BoxStream, ChatRequest, ChatResponse, FinishReason, Model, ModelError, ModelFailure,
    StreamEvent,
};
pub use output::{DEFAULT_OUTPUT_RETRIES, OutputMode, OutputType, Validator};
pub use prices::{PriceFileError, PriceTable};
pub use reasoning::Reasoning;
pub use reasons::argument_issue::{
    ArgumentIssue, Expected, Found, IssueKind, JsonType, SyntaxError, SyntaxProblem,
};
pub use reasons::not_run::NotRun;
pub use reasons::output_problem::{OutputProblem, RejectedOutput};
pub use reasons::tool_error::{
    AgentFailure, Interruption, RemoteAgentProblem, RemoteProblem, RemoteServer, TaskEnd,
    ThreadProblem, ToolError,
};
pub use run::{
    AddToolError, Agent, AgentInput, AgentTool, Answer, ChildFailure, ChildRun, ContextGiven,
    Decision, Handoff, HandoffHistory, HistoryFn, Input, Journal, NewRun, NoContext,
    PAUSED_RUN_VERSION, PausedRun, PendingCall, Ready, ResumeError, Resuming, ResumingSession,
    RunError, RunEvent, RunKind, RunOutput, RunRequest, RunStream, Starting, StopReason, Text,
    TokenKind, Typed, TypedOutput, Waiting, WithContext,
};
pub use run::{Approval, Approver, Hooks, ToolDecision};
pub use schema::{neutral_parameters, output_schema, parameters_schema, root_schema};
pub use settings::{Effort, ModelSettings, PromptCache, ResponseFormat, Thinking, ToolChoice};
pub use texts::{Chinese, ContentNote, English, JudgeSubject, ReturnedBy, Texts};
pub use tool::arguments::{ToolParameter, drop_optional_nulls};
pub use tool::blocking::{Blocking, run_blocking};
pub use tool::call_info::{CallInfo, RunId};
pub use tool::closure::{FromCall, ToolClosure, ToolFn, tool_fn};
pub use tool::dispatcher::{
    CallDecision, DEFAULT_RESULT_LIMIT, ErrorStyle, ToolSet, ToolSetError, is_valid_tool_name,
    valid_tool_name,
};
pub use tool::external::ExternalTool;
pub use tool::return_value::{IntoToolResult, Json};
pub use tool::scope::{AgentPath, RunScope};
pub use tool::state::{FromRef, State};
pub use tool::toolbox::ToolBox;
pub use tool::{BoxFuture, Tool, ToolAnnotations, ToolDef, ToolOutput};
pub use usage::{Price, Usage, UsageByModel};

/// Builds an [`Agent`] from a model and `#[tool]` functions.
///
/// ```
/// # use agent_core::{Agent, agent, tool, testing::ScriptedModel, AssistantMessage};
/// /// Tell the time.
/// #[tool]
/// fn now() -> &'static str { "12:00" }
///
/// mod maps {
///     /// Find a place by name.
///     #[agent_core::tool]
///     pub fn find_place(name: String) -> String { name }
/// }
///
/// let model = ScriptedModel::new([AssistantMessage::text("hi")]);
/// let agent: Agent = agent!(model, now, maps::find_place).system("Be brief.").max_steps(5);
/// ```
///
/// The agent's context type is inferred from a later `.bind_context(...)` or `.run(...)`; where
/// neither is in sight (as here), name the type: a plain [`Agent`] needs no context.
///
/// Further settings are builder methods on [`Agent`]; tools that take [`State`] need a context:
/// each run's ([`RunRequest::context`]), or one bound for all runs ([`Agent::bind_context`]). Listing a tool twice, or two tools that share a name,
/// does not compile. A function listed without `#[tool]` on it reads "expected struct, variant or
/// union type, found function": the tool is the struct `#[tool]` makes, so put `#[tool]` on it.
///
/// A crate that re-exports agent-core names its path first, as with `#[tool(crate = "...")]`:
/// `agent!(crate = my_framework::agent_core; model, now)`; `tools!` takes the same form.
pub use agent_macros::agent;

/// Builds a [`ToolSet`] from `#[tool]` functions, with the compile-time checks of [`agent!`]: for
/// serving the tools over MCP, or running calls without an agent.
///
/// ```
/// # use agent_core::{ToolCall, ToolSet, tool, tools};
/// /// Tell the time.
/// #[tool]
/// fn now() -> &'static str { "12:00" }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let tools: ToolSet = tools!(now);
/// let result = tools.dispatch(&(), &ToolCall::new("1", "now", "{}")).await;
/// assert_eq!(result.content, "12:00");
/// # });
/// ```
///
/// As with `agent!`, the context type is inferred from the code around it: a `ToolSet<Db>` for
/// tools that take `State<Db>`, handed a `Db` with each call or bound once with
/// [`ToolSet::bind_context`].
pub use agent_macros::tools;

/// Turns a function into a tool the model can call.
///
/// ```
/// use agent_core::{State, ToolError, tool};
/// use schemars::JsonSchema;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Deserialize, JsonSchema)]
/// #[serde(rename_all = "lowercase")]
/// enum Unit {
///     /// Degrees Celsius
///     Celsius,
///     /// Degrees Fahrenheit
///     Fahrenheit,
/// }
///
/// #[derive(Serialize)]
/// struct Forecast { city: String, days: u32 }
///
/// #[derive(Clone)]
/// struct Http { base_url: String }
///
/// /// Forecast the weather for a city. Use it for questions about the coming days.
/// #[tool(name = "forecast")]
/// async fn get_forecast(
///     State(http): State<Http>,
///     /// City name, e.g. "Beijing"
///     city: String,
///     /// Temperature unit; Celsius when left out
///     unit: Option<Unit>,
///     /// How many days ahead
///     #[arg(default = 3)]
///     days: u32,
/// ) -> Result<Forecast, ToolError> {
///     if city.is_empty() {
///         return Err(ToolError::failed("the city is empty"));
///     }
///     let _ = (http.base_url, unit);
///     Ok(Forecast { city, days })
/// }
/// ```
///
/// - **Description**: the doc comment (paragraphs kept, wrapped lines joined, intra-doc links
///   unwrapped, the `# Arguments` section taken out), or `#[tool(description = "...")]`. A tool with
///   no description does not compile: the model cannot use a tool it does not understand.
/// - **Name**: the function's, or `#[tool(name = "...")]`; it must match `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`.
/// - **Parameters**: any `Deserialize + JsonSchema` type. `///` on a parameter (or an entry
///   `` * `name` - text `` in a rustdoc `# Arguments` list) describes it. `Option<T>` and parameters
///   with `#[arg(default = expr)]` / `#[arg(default)]` are not required; the default shows in the schema.
///   Unknown fields are rejected at any depth, with their path, so a misspelt argument reaches the
///   model as an error; a type that wants extra fields keeps them in a `#[serde(flatten)]` map.
///   (serde reads some shapes through a buffer no one can watch: inside internally tagged,
///   adjacently tagged and untagged enums and flattened structs, unknown fields are dropped as
///   serde drops them; `#[serde(deny_unknown_fields)]` on such a type rejects them.)
/// - **State**: a parameter of type [`State<T>`](State) comes from the run's context
///   ([`RunRequest::context`], or [`Agent::bind_context`] for all runs), not the model, and is not
///   in the schema; `T` must be the context or a part of it ([`FromRef`]).
/// - **Which call**: a parameter of type [`CallInfo`] comes from the run too: the run's id
///   ([`RunId`]), the model's call id and the tool's name, for an idempotency key that holds
///   across retries and durable replays ([`CallInfo::idempotency_key`]).
/// - **Returns**: `String` and `&'static str` go verbatim, `()` as a short success text, a
///   [`ToolOutput`] as it is, a [`Part`] or `Vec<Part>` (an image, a document) as parts, anything
///   else `Serialize` as JSON; `Result<T, E>` with `E` a
///   [`ToolError`] or anything that displays.
/// - **Sync functions** run on a blocking thread (tokio's blocking pool inside a tokio runtime, a
///   thread of their own elsewhere), so they get the concurrency, timeouts and cancellation of async
///   ones. A timed-out or cancelled call stops being waited for, but a sync function cannot be
///   interrupted mid-flight: it runs to its end on its thread, and past its timeout the model is
///   told it was abandoned and may still complete its work (a tokio runtime also waits for its
///   blocking pool when it shuts down, so a function that never returns holds up the exit: give it
///   its own deadline, or shut the runtime down with `shutdown_timeout`). The hop costs microseconds (see
///   `BENCHMARKS.md`); `#[tool(inline)]` runs a trivially cheap sync function on the calling task
///   instead, with no thread hop (and no timeout while it runs).
/// - **Other keys**: `read_only`, `destructive`, `idempotent`, `open_world` (hints, see
///   [`ToolAnnotations`]), `requires_approval`, what it touches (`reads_untrusted`,
///   `reads_private`, `sends_out`: see [`LethalMix`](guard::LethalMix)), `timeout = "30s"`, and
///   `crate = "path::to::agent_core"` (or the bare path)
///   for a crate that re-exports agent-core (the generated code then names that path instead of
///   `::agent_core`).
///
/// The function keeps its signature and stays callable. Beside it, in the type namespace, appears a
/// unit struct of the same name implementing [`Tool`], with the tool's name as `NAME` and an inherent
/// `definition()`. In an expression, `name` is the function and `name {}` the tool:
/// `agent.try_tool(get_forecast {})`.
///
/// A `#[tool]` with mistakes reports all of them in one compile, and still emits the function, the
/// struct and a `Tool` impl (for a method taking `self`, only the method), so nothing that uses
/// them adds errors of its own.
pub use agent_macros::tool;
