//! The agent: a model, its tools and its settings, and the loop that runs them.

use std::fmt;
use std::sync::Arc;

use crate::message::{Message, Usage};
use crate::model::{ChatRequest, Model, ModelError};
use crate::texts::Texts;
use crate::tool::Tool;
use crate::toolset::{ToolSet, ToolSetError};

/// How many model calls a run may make unless configured otherwise.
pub const DEFAULT_MAX_STEPS: usize = 10;

/// A model with tools, ready to run.
///
/// Build one with [`agent!`](crate::agent) (tools checked at compile time) or [`Agent::new`], adjust it
/// with the builder methods, then [`run`](Agent::run) it as often as you like, concurrently too.
///
/// `S` is the state the tools still need: an agent whose tools take [`State<Db>`](crate::State) is an
/// `Agent<Db>` until [`state`](Agent::state) hands it a `Db`; only an `Agent<()>` (plain [`Agent`]) runs.
pub struct Agent<S = ()> {
    model: Arc<dyn Model>,
    tools: ToolSet<S>,
    system_prompt: Option<String>,
    max_steps: usize,
    concurrent_tools: bool,
}

impl<S: Send + Sync + 'static> Agent<S> {
    /// An agent with this model and no tools.
    pub fn new(model: impl Model + 'static) -> Self {
        Agent {
            model: Arc::new(model),
            tools: ToolSet::new(),
            system_prompt: None,
            max_steps: DEFAULT_MAX_STEPS,
            concurrent_tools: true,
        }
    }

    /// Sets the system prompt (the default comes from the [texts](Agent::texts)).
    pub fn system(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// Sets how many model calls a run may make (default 10).
    pub fn max_steps(mut self, steps: usize) -> Self {
        self.max_steps = steps;
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

    /// Adds a tool built at run time; fails if its name is taken or invalid.
    pub fn try_tool(mut self, tool: impl Tool<S>) -> Result<Self, ToolSetError> {
        self.tools.add(tool)?;
        Ok(self)
    }

    /// Adds a shared tool built at run time; fails if its name is taken or invalid.
    pub fn try_shared_tool(mut self, tool: Arc<dyn Tool<S>>) -> Result<Self, ToolSetError> {
        self.tools.add_shared(tool)?;
        Ok(self)
    }

    /// Adds a `#[tool]` listed in `agent!`, which checked its name at compile time.
    #[doc(hidden)]
    pub fn __checked_tool(mut self, tool: impl Tool<S>) -> Self {
        // `#[tool]` validated the name and `agent!` proved the names distinct, so this cannot fail.
        let added = self.tools.add(tool);
        debug_assert!(added.is_ok(), "{added:?}");
        self
    }

    /// Gives the tools their state. The agent then needs nothing more and can run.
    pub fn state(self, state: S) -> Agent<()> {
        Agent {
            model: self.model,
            tools: self.tools.with_state(state),
            system_prompt: self.system_prompt,
            max_steps: self.max_steps,
            concurrent_tools: self.concurrent_tools,
        }
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

impl Agent<()> {
    /// Runs the agent on a new conversation: system prompt, then `input`.
    pub async fn run(&self, input: impl Into<String>) -> Result<RunOutput, RunError> {
        let messages = vec![Message::system(self.system_prompt()), Message::user(input)];
        self.run_loop(messages).await
    }

    /// Goes on with an earlier conversation (say, the `messages` of a previous [`RunOutput`]): appends
    /// `input` and runs. A history that does not start with a system message gets the system prompt.
    pub async fn run_with_history(
        &self,
        mut history: Vec<Message>,
        input: impl Into<String>,
    ) -> Result<RunOutput, RunError> {
        if !matches!(history.first(), Some(Message::System { .. })) {
            history.insert(0, Message::system(self.system_prompt()));
        }
        history.push(Message::user(input));
        self.run_loop(history).await
    }

    /// Runs on a history as it is, adding nothing: for instance to go on after a step limit.
    pub async fn resume(&self, messages: Vec<Message>) -> Result<RunOutput, RunError> {
        self.run_loop(messages).await
    }

    async fn run_loop(&self, mut messages: Vec<Message>) -> Result<RunOutput, RunError> {
        let mut usage = Usage::default();
        for step in 1..=self.max_steps {
            let request = ChatRequest::new(&messages, self.tools.definitions());
            let response = match self.model.chat(request).await {
                Ok(response) => response,
                Err(source) => {
                    return Err(RunError::Model {
                        step,
                        source,
                        messages,
                        usage,
                    });
                }
            };
            usage += response.usage;
            let reply = response.message;
            if reply.tool_calls.is_empty() {
                let text = reply.content.clone();
                messages.push(Message::Assistant(reply));
                return Ok(RunOutput {
                    text,
                    messages,
                    steps: step,
                    stop_reason: StopReason::Finished,
                    usage,
                });
            }
            let results = self
                .tools
                .dispatch_all(&(), &reply.tool_calls, self.concurrent_tools)
                .await;
            // The reply first, then one result per call, in call order.
            messages.reserve(1 + results.len());
            messages.push(Message::Assistant(reply));
            messages.extend(results.into_iter().map(Message::Tool));
        }
        Ok(RunOutput {
            text: self.tools.texts().step_limit_reached(self.max_steps),
            messages,
            steps: self.max_steps,
            stop_reason: StopReason::StepLimit {
                limit: self.max_steps,
            },
            usage,
        })
    }
}

impl<S> fmt::Debug for Agent<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Agent")
            .field("tools", &self.tools)
            .field("system_prompt", &self.system_prompt)
            .field("max_steps", &self.max_steps)
            .field("concurrent_tools", &self.concurrent_tools)
            .finish_non_exhaustive()
    }
}

/// What a run produced.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct RunOutput {
    /// The model's final answer; when the run stopped at a limit, the texts' note saying so.
    pub text: String,
    /// The whole conversation: system prompt, input, every reply and every tool result.
    pub messages: Vec<Message>,
    /// How many model calls the run made.
    pub steps: usize,
    /// Why the run ended.
    pub stop_reason: StopReason,
    /// Tokens used over the whole run.
    pub usage: Usage,
}

impl RunOutput {
    /// Whether the model gave a final answer (rather than the run hitting a limit).
    pub fn is_finished(&self) -> bool {
        self.stop_reason == StopReason::Finished
    }
}

/// Why a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopReason {
    /// The model answered without asking for tools.
    Finished,
    /// The run made its last allowed model call and the model still wanted tools.
    StepLimit {
        /// The step limit.
        limit: usize,
    },
}

/// Why a run failed. The conversation up to the failure comes with it, so nothing is lost.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// A model call failed.
    #[error("the model failed at step {step}: {source}")]
    Model {
        /// The step whose model call failed, counting from 1.
        step: usize,
        /// The model's error.
        #[source]
        source: ModelError,
        /// The conversation before the failed call.
        messages: Vec<Message>,
        /// Tokens used before the failure.
        usage: Usage,
    },
}

impl RunError {
    /// The conversation before the failure.
    pub fn messages(&self) -> &[Message] {
        match self {
            RunError::Model { messages, .. } => messages,
        }
    }
}

impl fmt::Debug for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Model {
                step,
                source,
                messages,
                usage,
            } => f
                .debug_struct("Model")
                .field("step", step)
                .field("source", source)
                .field("messages", &format_args!("[{} messages]", messages.len()))
                .field("usage", usage)
                .finish(),
        }
    }
}
