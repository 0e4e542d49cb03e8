//! The agent: a model, its tools and its settings, and the two ways into a run of it
//! ([`Agent::run`], [`Agent::resume`]). Every method of `Agent` is here.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::kind::{Resuming, ResumingSession};
use super::pause::Decision;
use super::pause::PausedRun;
use super::request::{Input, NoContext, RunRequest, Text};
use crate::limits::{AtStepLimit, Limits};
use crate::model::Model;
use crate::output::{OutputMode, OutputSettings, OutputShapes};
use crate::run::context::{ContextLayer, ContextPolicy, TokenCounter};
use crate::run::guard::Guards;
use crate::run::hooks::{Approver, BoundApprover, BoundHooks, Hooks};
use crate::run::layers::{Approvals, BoundLayer, BoundPolicy, Hooked};
use crate::run::seams::{CallPolicy, ModelLayer};
use crate::run::tree::{HandOffs, Handoff};
use crate::settings::{ModelSettings, Thinking, ToolChoice};
use crate::texts::Texts;
use crate::tool::Tool;
use crate::tool::dispatcher::{ToolSet, ToolSetError};
use crate::tool::scope::AgentPath;
use crate::tool::toolbox::ToolBox;

/// A model with tools, ready to run.
///
/// Build one with [`agent!`](crate::agent) (tools checked at compile time) or [`Agent::new`], adjust it
/// with the builder methods, then [`run`](Agent::run) it as often as you like, concurrently too.
///
/// `S` is the type of the context its tools, hooks and approver take: an agent whose tools take
/// [`State<Db>`](crate::State) is an `Agent<Db>`. Either each run hands it its own `Db`
/// ([`RunRequest::context`]: one agent serves many users, each run with its own), or
/// [`bind_context`](Agent::bind_context) binds one `Db` for all runs and makes a plain [`Agent`]
/// (`Agent<()>`) whose runs need no context.
pub struct Agent<S = ()> {
    pub(crate) model: Arc<dyn Model>,
    pub(crate) tools: ToolSet<S>,
    pub(crate) system_prompt: Option<String>,
    /// Its place in a tree of agents when it runs at the top (see [`Agent::named`]), and
    /// whether it was named.
    pub(crate) path: AgentPath,
    pub(crate) named: bool,
    pub(crate) limits: Limits,
    pub(crate) concurrent_tools: bool,
    pub(crate) hooks: Vec<Hooked<S>>,
    /// The approver, as the call policy it is.
    pub(crate) approvals: Approvals<S>,
    /// Call policies of the user's own (see [`Agent::policy`]).
    pub(crate) policies: Vec<Arc<dyn CallPolicy<S>>>,
    /// The agents it can hand the conversation to (see [`Agent::try_handoff`]).
    pub(crate) handoffs: HandOffs<S>,
    /// Model-call layers of the user's own (see [`Agent::model_layer`]).
    pub(crate) layers: Vec<Arc<dyn ModelLayer<S>>>,
    /// What of the history each request carries (see [`Agent::context_policy`]).
    pub(crate) context: Option<Arc<ContextLayer>>,
    /// What counts its tokens for the context policy (see [`Agent::count_tokens_with`]).
    pub(crate) token_counter: Option<Arc<dyn TokenCounter>>,
    pub(crate) settings: ModelSettings,
    pub(crate) output: OutputSettings,
    /// The shapes of the output types its typed runs asked for.
    pub(crate) output_shapes: OutputShapes,
    /// Its guards (see [`Agent::guard`]); `None`: it has none of its own.
    pub(crate) guards: Option<Arc<Guards>>,
    /// Why its tools may make the lethal mix (see [`Agent::allow_lethal_mix`]).
    pub(crate) mix_accepted: Option<Arc<str>>,
}

impl<S: Send + Sync + 'static> Agent<S> {
    /// An agent with this model and no tools.
    pub fn new(model: impl Model + 'static) -> Self {
        Agent {
            model: Arc::new(model),
            tools: ToolSet::new(),
            system_prompt: None,
            path: AgentPath::default(),
            named: false,
            limits: Limits::default(),
            concurrent_tools: true,
            hooks: Vec::new(),
            approvals: Approvals::default(),
            policies: Vec::new(),
            handoffs: HandOffs(Vec::new()),
            layers: Vec::new(),
            context: None,
            token_counter: None,
            settings: ModelSettings::new(),
            output: OutputSettings::default(),
            output_shapes: OutputShapes::default(),
            guards: None,
            mix_accepted: None,
        }
    }

    /// Sets the system prompt (the default comes from the [texts](Agent::texts)).
    pub fn system(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// Names the agent: its place in a tree of agents ([`AgentPath`](crate::AgentPath)), which
    /// tags its events and its usage when another agent calls it
    /// ([`as_tool`](Agent::as_tool)). Without a name, an agent called as a tool goes by the
    /// tool's name, and a top agent by `agent`.
    pub fn named(mut self, name: &str) -> Self {
        self.path = AgentPath::new(name);
        self.named = true;
        self
    }

    /// The agent's name, if it was [given one](Agent::named).
    pub fn name(&self) -> Option<&str> {
        self.named.then(|| self.path.as_str())
    }

    /// Sets how many model calls a run may make (default 10).
    pub fn max_steps(mut self, steps: usize) -> Self {
        self.limits.max_steps = steps;
        self
    }

    /// Chooses what happens at the step limit: stop (the default) or ask for a final answer.
    pub fn at_step_limit(mut self, behaviour: AtStepLimit) -> Self {
        self.limits.at_step_limit = behaviour;
        self
    }

    /// Caps the tool calls of a run: calls beyond the cap get an error result and the run stops.
    pub fn max_tool_calls(mut self, calls: usize) -> Self {
        self.limits.max_tool_calls = Some(calls);
        self
    }

    /// Stops the run before a model call once this many input tokens were used (as the provider
    /// reports usage).
    pub fn max_input_tokens(mut self, tokens: u64) -> Self {
        self.limits.max_input_tokens = Some(tokens);
        self
    }

    /// Stops the run before a model call once this many output tokens were used.
    pub fn max_output_tokens(mut self, tokens: u64) -> Self {
        self.limits.max_output_tokens = Some(tokens);
        self
    }

    /// Gives each run a wall-clock budget: when it runs out, the model call or the tool calls in
    /// flight are cancelled (a sync tool's thread, which cannot be stopped, is no longer waited
    /// for) and the run stops.
    pub fn time_limit(mut self, limit: Duration) -> Self {
        self.limits.time_limit = Some(limit);
        self
    }

    /// Sets how long one tool call may run when its tool sets no timeout (default 120 s); a call
    /// past it is cancelled (a sync tool's, abandoned) and the model gets an error result.
    pub fn tool_timeout(mut self, timeout: Duration) -> Self {
        self.tools.set_tool_timeout(timeout);
        self
    }

    /// Sets the longest tool result, in characters, the model is shown (default 8000); longer ones
    /// are cut with a visible marker.
    pub fn result_limit(mut self, characters: usize) -> Self {
        self.tools.set_result_limit(characters);
        self
    }

    /// Sets the texts the agent writes: system prompt, error results, markers. [`English`](crate::English)
    /// by default; [`Chinese`](crate::Chinese) reproduces the reference loop.
    pub fn texts(mut self, texts: impl Texts) -> Self {
        self.tools.set_texts(Arc::new(texts));
        self
    }

    /// Runs the tool calls of one reply one after another instead of concurrently (the default).
    /// Their results are in call order either way.
    pub fn sequential_tools(mut self) -> Self {
        self.concurrent_tools = false;
        self
    }

    /// Adds hooks; several are called in the order they were added.
    pub fn hook(mut self, hooks: impl Hooks<S>) -> Self {
        self.hooks.push(Hooked(Arc::new(hooks)));
        self
    }

    /// Sets who approves calls to tools marked `requires_approval`. Without an approver such calls
    /// are denied.
    pub fn approve_with(mut self, approver: impl Approver<S>) -> Self {
        self.approvals = Approvals {
            approver: Some(Arc::new(approver)),
            deferring: false,
        };
        self
    }

    /// Adds a call policy of your own: a value at the call-policy seam (see
    /// [`CallPolicy`](crate::seams::CallPolicy)) that may stop the run before a model call, rule
    /// on a reply's calls, rule on each call when it starts, and see (and change) each result.
    ///
    /// A run's policies, in order: [`CutOffCalls`](crate::seams::CutOffCalls) (a call cut off at
    /// the output token limit), the limits, each of the [hooks](Agent::hook), these in the order
    /// added, [`ExternalTools`](crate::seams::ExternalTools) and
    /// [`Approvals`](crate::seams::Approvals) (when a tool needs them), and in a run that cannot
    /// pause, [`CannotPause`](crate::seams::CannotPause). On each call they are folded in that
    /// order: each sees the call as the ones before left it, and the first that answers it
    /// without running it has the last word.
    pub fn policy(mut self, policy: impl CallPolicy<S> + 'static) -> Self {
        self.policies.push(Arc::new(policy));
        self
    }

    /// Adds a model-call layer of your own: a value around each call to the model (see
    /// [`ModelLayer`](crate::seams::ModelLayer)). A run's layers, outermost first: these in the
    /// order added, then each of the [hooks](Agent::hook), the call's trace span
    /// ([`ChatSpan`](crate::seams::ChatSpan)), a durable run's journal, and the model.
    pub fn model_layer(mut self, layer: impl ModelLayer<S> + 'static) -> Self {
        self.layers.push(Arc::new(layer));
        self
    }

    /// Sets what of the history each request carries: a [`ContextPolicy`] sees the history as
    /// [`Turns`](crate::context::Turns) before every model request and keeps or leaves out whole
    /// units (a reply with its calls' results is one; a call that waits is never left out), so a
    /// long conversation stays under the model's context window. The stored conversation (a
    /// session's, a run's output) keeps every message: this shapes each request only. Its layer
    /// is the outermost of the model-call layers, so every other layer sees the request as sent.
    ///
    /// ```
    /// use agent_core::context::TokenWindow;
    /// # use agent_core::{Agent, testing::ScriptedModel};
    /// # let model = ScriptedModel::new(Vec::<agent_core::AssistantMessage>::new());
    /// let agent: Agent = Agent::new(model).context_policy(TokenWindow::new(100_000));
    /// ```
    pub fn context_policy(mut self, policy: impl ContextPolicy) -> Self {
        self.context = Some(Arc::new(ContextLayer::new(policy)));
        self
    }

    /// Counts the tokens its context policy reads with `counter` (a local tokenizer of the
    /// model's) instead of estimating them from characters; either way the count is scaled by
    /// what the provider counted for the last request.
    pub fn count_tokens_with(mut self, counter: impl TokenCounter) -> Self {
        self.token_counter = Some(Arc::new(counter));
        self
    }

    /// Approves nothing in the process: a run that reaches a call needing approval ends paused
    /// with the call waiting (see [`Approval::Defer`](crate::Approval::Defer)), for a person to
    /// decide on later through [`resume`](Agent::resume). The same as an approver
    /// that always defers.
    pub fn defer_approvals(mut self) -> Self {
        self.approvals = Approvals::deferring();
        self
    }

    /// Sets the model settings of every run: tool choice, temperature, the longest reply,
    /// thinking. Each one set here replaces the agent's; each one left `None` keeps what was set
    /// before (by an earlier call or a shorthand such as [`temperature`](Agent::temperature)). A
    /// run sets its own over these the same way, with the same names
    /// ([`RunRequest::model_settings`], [`RunRequest::temperature`], ...).
    pub fn model_settings(mut self, settings: ModelSettings) -> Self {
        self.settings = settings.or(&self.settings);
        self
    }

    /// Sets whether and which tool the model must call (default: the model decides).
    pub fn tool_choice(self, choice: ToolChoice) -> Self {
        self.model_settings(ModelSettings::new().tool_choice(choice))
    }

    /// Sets the sampling temperature of every model call.
    pub fn temperature(self, temperature: f32) -> Self {
        self.model_settings(ModelSettings::new().temperature(temperature))
    }

    /// Sets the most tokens one reply may have (the run's total is
    /// [`max_output_tokens`](Agent::max_output_tokens)).
    pub fn max_tokens(self, tokens: u32) -> Self {
        self.model_settings(ModelSettings::new().max_tokens(tokens))
    }

    /// Sets how much a reasoning model thinks.
    pub fn thinking(self, thinking: Thinking) -> Self {
        self.model_settings(ModelSettings::new().thinking(thinking))
    }

    /// Sets how typed runs ask for their output (default [`OutputMode::Tool`]).
    pub fn output_mode(mut self, mode: OutputMode) -> Self {
        self.output.mode = mode;
        self
    }

    /// Sets how many times a typed run sends an invalid or rejected output back to the model for
    /// another try before it fails (default [`DEFAULT_OUTPUT_RETRIES`](crate::DEFAULT_OUTPUT_RETRIES)).
    pub fn output_retries(mut self, retries: usize) -> Self {
        self.output.retries = retries;
        self
    }

    /// Adds a tool built at run time (or a shared one, an `Arc<dyn Tool<S>>`). Fails if its name
    /// is taken or invalid, handing the agent back unchanged in the [`AddToolError`].
    pub fn try_tool(mut self, tool: impl Tool<S>) -> Result<Self, AddToolError<S>> {
        match self.tools.add(tool) {
            Ok(()) => Ok(self),
            Err(error) => Err(AddToolError::new(error, self)),
        }
    }

    /// Lets the model hand the conversation to another agent (see [`Handoff`]): adds the tool
    /// it hands off by (`transfer_to_<name>`). Fails if that name is taken, handing the agent
    /// back unchanged in the [`AddToolError`].
    pub fn try_handoff(mut self, handoff: Handoff<S>) -> Result<Self, AddToolError<S>> {
        match self.tools.add(handoff.tool.clone()) {
            Ok(()) => {
                self.handoffs.0.push(handoff);
                Ok(self)
            }
            Err(error) => Err(AddToolError::new(error, self)),
        }
    }

    /// Adds tools built at run time (say, an MCP server's, or a [`ToolBox`]'s
    /// [`into_tools`](ToolBox::into_tools)), all or none. Fails, adding none of them, if a name
    /// is taken (by a tool the agent has, or by another of these) or invalid, handing the agent
    /// back unchanged in the [`AddToolError`].
    pub fn try_tools<T: Tool<S>>(
        mut self,
        tools: impl IntoIterator<Item = T>,
    ) -> Result<Self, AddToolError<S>> {
        match self.tools.add_all(tools) {
            Ok(()) => Ok(self),
            Err(error) => Err(AddToolError::new(error, self)),
        }
    }

    /// Binds one context for all runs: the tools, hooks and approver are handed `context` in
    /// every run, and the agent becomes a plain [`Agent`] (`Agent<()>`) whose runs need none. To
    /// give each run its own context instead, keep the agent as it is and give each run its
    /// [`context`](RunRequest::context).
    pub fn bind_context(self, context: S) -> Agent<()> {
        self.bind_shared_context(Arc::new(context))
    }

    /// [`bind_context`](Agent::bind_context) with the context already shared (by the agents this
    /// one hands off to).
    pub(crate) fn bind_shared_context(self, context: Arc<S>) -> Agent<()> {
        let hooks = self
            .hooks
            .into_iter()
            .map(|Hooked(hooks)| {
                Hooked(Arc::new(BoundHooks {
                    hooks,
                    context: Arc::clone(&context),
                }) as Arc<dyn Hooks>)
            })
            .collect();
        let deferring = self.approvals.deferring;
        let approver = self.approvals.approver.map(|approver| {
            Arc::new(BoundApprover {
                approver,
                context: Arc::clone(&context),
            }) as Arc<dyn Approver>
        });
        let policies = (self.policies.into_iter())
            .map(|policy| {
                let context = Arc::clone(&context);
                Arc::new(BoundPolicy { policy, context }) as Arc<dyn CallPolicy>
            })
            .collect();
        let layers = (self.layers.into_iter())
            .map(|layer| {
                let context = Arc::clone(&context);
                Arc::new(BoundLayer { layer, context }) as Arc<dyn ModelLayer>
            })
            .collect();
        Agent {
            model: self.model,
            tools: self.tools.bind_shared_context(Arc::clone(&context)),
            system_prompt: self.system_prompt,
            path: self.path,
            named: self.named,
            limits: self.limits,
            concurrent_tools: self.concurrent_tools,
            hooks,
            approvals: Approvals {
                approver,
                deferring,
            },
            policies,
            handoffs: HandOffs(
                (self.handoffs.0.into_iter())
                    .map(|handoff| handoff.bind(Arc::clone(&context)))
                    .collect(),
            ),
            layers,
            context: self.context,
            token_counter: self.token_counter,
            settings: self.settings,
            output: self.output,
            output_shapes: self.output_shapes,
            guards: self.guards,
            mix_accepted: self.mix_accepted,
        }
    }

    /// Adds the tools of a value whose methods are tools (see [`ToolBox`]), all or none. Fails,
    /// adding none of them, if a name is taken or invalid, handing the agent back unchanged in the
    /// [`AddToolError`]. Pass an `Arc` of the value to share it with other agents or with code of
    /// your own.
    pub fn try_toolbox(mut self, toolbox: impl ToolBox<S>) -> Result<Self, AddToolError<S>> {
        match self.tools.add_toolbox(toolbox) {
            Ok(()) => Ok(self),
            Err(error) => Err(AddToolError::new(error, self)),
        }
    }

    /// A run on `input`: a new conversation (the system prompt, then `input`) unless the request
    /// says otherwise. `.await` it, or set it up first: its [`context`](RunRequest::context),
    /// [`history`](RunRequest::history) or [`session`](RunRequest::session), images
    /// ([`parts`](RunRequest::parts)), settings, a cancel signal ([`until`](RunRequest::until)), a
    /// typed answer ([`output`](RunRequest::output)), or [`stream`](RunRequest::stream) it.
    pub fn run(&self, input: impl Into<Input>) -> RunRequest<'_, S> {
        RunRequest::new(self, input.into())
    }

    /// Goes on with a [paused](crate::StopReason::Paused) run, given one [`Decision`] per
    /// waiting call (by call id): approved calls run (with edited arguments where given), denied
    /// ones are answered with the reason, external ones with the caller's result; then the loop
    /// goes on under the same limits, the steps, tokens, tool calls and time already used
    /// counting, with the paused run's settings. `paused` may come from another process
    /// ([`PausedRun::from_json`](crate::PausedRun::from_json)); the paused run kept in a session
    /// is resumed with [`resume_session`](Agent::resume_session). The paused run holds the
    /// conversation, so the request takes no [`parts`](RunRequest::parts) or
    /// [`history`](RunRequest::history) (they do not compile: to go on with a transcript, run
    /// `agent.run(Input::nothing()).history(messages)`). Decisions that do not fit (an unknown call id, a call
    /// without a decision or with two, a tool this agent lacks, a result for a call waiting for
    /// approval) are [`RunError::Resume`](crate::RunError::Resume), and nothing runs. The request
    /// takes the same settings as [`run`](Agent::run)'s.
    ///
    /// ```
    /// use agent_core::{Agent, AssistantMessage, Decision, PausedRun, StopReason, ToolCall, tool};
    /// use agent_core::testing::ScriptedModel;
    ///
    /// /// Deletes a file.
    /// #[tool(requires_approval)]
    /// fn delete(path: String) -> String {
    ///     format!("deleted {path}")
    /// }
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let model = ScriptedModel::new([
    ///     AssistantMessage::tool_calls([ToolCall::new("c1", "delete", r#"{"path":"old.log"}"#)]),
    ///     AssistantMessage::text("Done."),
    /// ]);
    /// let agent = Agent::new(model).try_tool(delete {}).unwrap().defer_approvals();
    /// let first = agent.run("Clean up").await.unwrap();
    /// assert_eq!(first.stop_reason, StopReason::Paused);
    ///
    /// // Saved, and loaded again (here or in another process, by a fresh agent).
    /// let saved = first.paused.unwrap().to_json();
    /// let paused = PausedRun::from_json(&saved).unwrap();
    /// assert_eq!(paused.pending()[0].call.name, "delete");
    /// let done = agent.resume(paused, [("c1", Decision::Approve)]).await.unwrap();
    /// assert_eq!(done.text, "Done.");
    /// # });
    /// ```
    pub fn resume(
        &self,
        paused: PausedRun,
        decisions: impl IntoIterator<Item = (impl Into<String>, Decision)>,
    ) -> RunRequest<'_, S, NoContext, Text, Resuming> {
        RunRequest::resuming(self, paused, collect(decisions))
    }

    /// Goes on with the paused run kept in a session, as [`resume`](Agent::resume) does with one
    /// given: the run is given the session with [`session`](RunRequest::session) (it does not
    /// start without one: that is a compile error), loads the paused run from it, and keeps what
    /// it does there. A session with no paused run waiting refuses it
    /// ([`SessionError::NotPaused`](crate::session::SessionError::NotPaused)), and nothing runs.
    ///
    /// ```
    /// use agent_core::session::MemorySessions;
    /// use agent_core::testing::ScriptedModel;
    /// use agent_core::{Agent, AssistantMessage, Decision, StopReason, ToolCall, tool};
    ///
    /// /// Deletes a file.
    /// #[tool(requires_approval)]
    /// fn delete(path: String) -> String {
    ///     format!("deleted {path}")
    /// }
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let model = ScriptedModel::new([
    ///     AssistantMessage::tool_calls([ToolCall::new("c1", "delete", r#"{"path":"old.log"}"#)]),
    ///     AssistantMessage::text("Done."),
    /// ]);
    /// let agent = Agent::new(model).try_tool(delete {}).unwrap().defer_approvals();
    /// let store = MemorySessions::new();
    /// let first = agent.run("Clean up").session(&store, "chat-1").await.unwrap();
    /// assert_eq!(first.stop_reason, StopReason::Paused);
    /// // Later, in a request that carries the person's answer:
    /// let done = agent
    ///     .resume_session([("c1", Decision::Approve)])
    ///     .session(&store, "chat-1")
    ///     .await
    ///     .unwrap();
    /// assert_eq!(done.text, "Done.");
    /// # });
    /// ```
    pub fn resume_session(
        &self,
        decisions: impl IntoIterator<Item = (impl Into<String>, Decision)>,
    ) -> RunRequest<'_, S, NoContext, Text, ResumingSession> {
        RunRequest::resuming_session(self, collect(decisions))
    }

    /// The agent's tools.
    pub fn tools(&self) -> &ToolSet<S> {
        &self.tools
    }

    /// The system prompt a run starts with.
    pub fn system_prompt(&self) -> &str {
        self.system_prompt
            .as_deref()
            .unwrap_or_else(|| self.tools.texts().system_prompt())
    }
}

impl<S> fmt::Debug for Agent<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Agent")
            .field("tools", &self.tools)
            .field("system_prompt", &self.system_prompt)
            .field("limits", &self.limits)
            .field("concurrent_tools", &self.concurrent_tools)
            .field("hooks", &self.hooks.len())
            .field("approver", &self.approvals.approver.is_some())
            .field("policies", &self.policies.len())
            .field("layers", &self.layers.len())
            .field(
                "guards",
                &self.guards.as_ref().map_or(0, |guards| guards.list().len()),
            )
            .field("settings", &self.settings)
            .field("output", &self.output)
            .finish_non_exhaustive()
    }
}

/// A tool the agent did not take ([`Agent::try_tool`], [`Agent::try_tools`],
/// [`Agent::try_toolbox`]): why, and the agent, unchanged, to go on with. As
/// [`std::io::IntoInnerError`] hands back its writer, this hands back the agent, so one bad name
/// in a loop over a configuration does not lose the tools added before it.
///
/// ```
/// use agent_core::testing::ScriptedModel;
/// use agent_core::{Agent, AssistantMessage, ToolSetError, tool_fn};
/// use schemars::JsonSchema;
/// use serde::Deserialize;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Query {
///     /// What to look for
///     text: String,
/// }
///
/// let mut agent: Agent = Agent::new(ScriptedModel::new([AssistantMessage::text("Hello.")]));
/// // Names from a configuration file, one of them mistyped.
/// for name in ["search", "not a name", "fetch"] {
///     let tool = tool_fn(name, "Look something up.", |query: Query| async move { query.text });
///     agent = match agent.try_tool(tool) {
///         Ok(agent) => agent,
///         Err(rejected) => {
///             assert!(matches!(rejected.error(), ToolSetError::InvalidName { .. }));
///             rejected.into_agent()
///         }
///     };
/// }
/// assert_eq!(agent.tools().len(), 2);
/// ```
///
/// `?` turns it into the [`ToolSetError`] alone, dropping the agent.
pub struct AddToolError<S = ()> {
    error: ToolSetError,
    /// Boxed, so the error stays small to hand up through `?` (an agent is over 400 bytes): only
    /// a failure, which is rare, pays for the box.
    agent: Box<Agent<S>>,
}

impl<S> AddToolError<S> {
    fn new(error: ToolSetError, agent: Agent<S>) -> Self {
        AddToolError {
            error,
            agent: Box::new(agent),
        }
    }

    /// Why the tool was not taken.
    pub fn error(&self) -> &ToolSetError {
        &self.error
    }

    /// The agent, as it was before the failed call.
    pub fn into_agent(self) -> Agent<S> {
        *self.agent
    }

    /// Why the tool was not taken, and the agent as it was before the failed call.
    pub fn into_parts(self) -> (ToolSetError, Agent<S>) {
        (self.error, *self.agent)
    }
}

/// Shows the error; the agent, which may be large, only as its presence.
impl<S> fmt::Debug for AddToolError<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AddToolError")
            .field("error", &self.error)
            .finish_non_exhaustive()
    }
}

impl<S> fmt::Display for AddToolError<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The reason is the source, so a report that walks the chain says it once.
        f.write_str("the agent did not take a tool")
    }
}

impl<S> std::error::Error for AddToolError<S> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

impl<S> From<AddToolError<S>> for ToolSetError {
    fn from(rejected: AddToolError<S>) -> Self {
        rejected.error
    }
}

/// Decisions by call id, as the loop takes them.
fn collect(
    decisions: impl IntoIterator<Item = (impl Into<String>, Decision)>,
) -> Vec<(String, Decision)> {
    decisions
        .into_iter()
        .map(|(id, decision)| (id.into(), decision))
        .collect()
}
