//! What a run gives back: its output and why it ended, or the error that ended it.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use crate::message::Message;
use crate::model::{ChatResponse, ModelError};
use crate::output::RejectedOutput;
use crate::prices::PriceTable;
use crate::run::context::Summary;
use crate::run::guard::{LethalMix, Tripped};
use crate::run::pause::{PausedRun, ResumeError};
use crate::tool::scope::AgentPath;
use crate::usage::{Usage, UsageByModel};

/// What a run produced. Serializes (a child's run is kept in a session).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[must_use]
pub struct RunOutput {
    /// The model's final answer; when the run stopped before one, the texts' note saying so.
    pub text: String,
    /// The whole conversation: system prompt, input, every reply and every tool result.
    pub messages: Vec<Message>,
    /// How many model calls the run made.
    pub steps: usize,
    /// Why the run ended.
    pub stop_reason: StopReason,
    /// Tokens used over the whole run: every model call's (a resumed run's from before its pause
    /// included), and those of the [`summaries`](Self::summaries) it made.
    pub usage: Usage,
    /// Tokens used by each model call, in order.
    pub step_usage: Vec<Usage>,
    /// The model that answered each model call, in order, beside
    /// [`step_usage`](Self::step_usage): its reply's [`ChatResponse::model`] (a
    /// [`Fallback`](crate::Fallback) chain's reply names the model of the chain that answered),
    /// `None` for a reply that named none. Empty when no reply of the run named its model (a
    /// [`ScriptedModel`](crate::testing::ScriptedModel)'s, say), so that a run of such a model
    /// keeps no list; [`step_model`](Self::step_model) reads either.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub step_models: Vec<Option<String>>,
    /// For a run that ended [paused](StopReason::Paused): the calls that wait, the results of the
    /// reply's other calls, and everything needed to go on
    /// ([`Agent::resume`](crate::Agent::resume)); `None` otherwise. A paused run's
    /// `messages` end with the reply whose calls wait, unanswered until it resumes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<PausedRun>,
    /// The summaries the run's context policy made ([`Summary`]: which of `messages` each stands
    /// for, in their positions), oldest first. A session stores them; a run given a history can
    /// be given them back ([`RunRequest::summaries`](crate::RunRequest::summaries)).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub summaries: Vec<Summary>,
    /// The agent that ran, in its tree of agents ([`Agent::named`](crate::Agent::named)): for a
    /// conversation handed from agent to agent ([`Handoff`](crate::Handoff)), the one that
    /// answered.
    pub agent: AgentPath,
    /// The agent that made each model call, beside [`step_usage`](Self::step_usage), when the
    /// conversation was handed from agent to agent; empty when one agent made them all (then it
    /// is [`agent`](Self::agent)).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub step_agents: Vec<AgentPath>,
    /// The runs this run's calls started (agents called as tools,
    /// [`Agent::as_tool`](crate::Agent::as_tool)), each whole, in the order of the calls.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<ChildRun>,
}

impl RunOutput {
    /// Whether this part of a run ended by handing the conversation on.
    pub(crate) fn handed_off(&self) -> bool {
        matches!(self.stop_reason, StopReason::HandedOff { .. })
    }

    /// The usage of this run and of every run below it, by agent (`triage`, `triage/researcher`)
    /// and by model: each model call counted once, under the agent that made it.
    ///
    /// ```
    /// use agent_core::testing::ScriptedModel;
    /// use agent_core::{Agent, AssistantMessage, ChatResponse, ToolCall, Usage};
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let said = |text: &str, tokens| ChatResponse::new(AssistantMessage::text(text)).with_usage(tokens);
    /// let child = Agent::new(ScriptedModel::new([said("Found it.", Usage::new(30, 5))]));
    /// let call = ToolCall::new("1", "find", r#"{"input":"the file"}"#);
    /// let parent = Agent::new(ScriptedModel::new([
    ///     ChatResponse::new(AssistantMessage::tool_calls([call])).with_usage(Usage::new(10, 2)),
    ///     said("Here it is.", Usage::new(20, 3)),
    /// ]))
    /// .named("desk")
    /// .try_tool(child.as_tool("find", "Find a file."))?;
    /// let out = parent.run("Where is it?").await.unwrap();
    /// let by_agent = out.usage_by_agent();
    /// assert_eq!(by_agent[&"desk".parse().unwrap()].total(), Usage::new(30, 5));
    /// assert_eq!(by_agent[&"desk/find".parse().unwrap()].total(), Usage::new(30, 5));
    /// assert_eq!(out.tree_usage(), Usage::new(60, 10));
    /// # Ok::<(), agent_core::ToolSetError>(())
    /// # }).unwrap();
    /// ```
    pub fn usage_by_agent(&self) -> BTreeMap<AgentPath, UsageByModel> {
        let mut by_agent = BTreeMap::new();
        usage_by_agent(&self.agent, self, &mut by_agent);
        by_agent
    }

    /// The usage of this run and of every run below it together ([`usage`](Self::usage) is this
    /// run's own).
    pub fn tree_usage(&self) -> Usage {
        let children = self.children.iter().map(|child| match &child.outcome {
            Ok(run) => run.tree_usage(),
            Err(failure) => failure.usage,
        });
        children.fold(self.usage, |sum, usage| sum + usage)
    }

    /// Whether the model gave a final answer (rather than the run stopping before one).
    pub fn is_finished(&self) -> bool {
        self.stop_reason == StopReason::Finished
    }

    /// The model that answered model call `index` (from 0, as in
    /// [`step_usage`](Self::step_usage)), when its reply named it
    /// ([`step_models`](Self::step_models)).
    ///
    /// ```
    /// use agent_core::testing::ScriptedModel;
    /// use agent_core::{Agent, AssistantMessage, ChatResponse};
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let reply = ChatResponse::new(AssistantMessage::text("Hi.")).with_model("gpt-4o-mini-2024-07-18");
    /// let agent = Agent::new(ScriptedModel::new([reply]));
    /// let out = agent.run("Hello").await?;
    /// assert_eq!(out.step_model(0), Some("gpt-4o-mini-2024-07-18"));
    /// assert_eq!(out.step_model(1), None);
    /// # Ok::<(), agent_core::RunError>(())
    /// # }).unwrap();
    /// ```
    pub fn step_model(&self, index: usize) -> Option<&str> {
        self.step_models.get(index)?.as_deref()
    }

    /// What the run's model calls (its summaries' too) cost at `prices`, each priced by the model
    /// that answered it; `None` when a call's model is unknown or unpriced (a scripted model names
    /// none).
    ///
    /// ```
    /// use agent_core::testing::ScriptedModel;
    /// use agent_core::{Agent, AssistantMessage, ChatResponse, Price, PriceTable, Usage};
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let reply = ChatResponse::new(AssistantMessage::text("Hi."))
    ///     .with_model("gpt-4o-mini-2024-07-18")
    ///     .with_usage(Usage::new(1_000_000, 0));
    /// let out = Agent::new(ScriptedModel::new([reply])).run("Hello").await?;
    /// let prices = PriceTable::new().with("gpt-4o-mini", Price::per_million(0.15, 0.6));
    /// assert_eq!(out.cost(&prices), Some(0.15));
    /// # Ok::<(), agent_core::RunError>(())
    /// # }).unwrap();
    /// ```
    pub fn cost(&self, prices: &PriceTable) -> Option<f64> {
        let models = (0..self.step_usage.len()).map(|index| self.step_model(index));
        let summaries =
            (self.summaries.iter()).map(|summary| (&summary.usage, summary.model.as_deref()));
        prices.cost(self.step_usage.iter().zip(models).chain(summaries))
    }
}

/// A run another run started through one of its tool calls (an agent called as a tool): kept in
/// the calling run's output ([`RunOutput::children`]), in call order.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct ChildRun {
    /// The child's agent in the tree.
    pub path: AgentPath,
    /// The id of the call that started it (its result is the child's answer).
    pub call_id: String,
    /// The child's run: its transcript, usage and children; or how it failed.
    pub outcome: Result<RunOutput, ChildFailure>,
}

/// A child run that failed: what it said, and what it had done by then.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct ChildFailure {
    /// The run's error, in words.
    pub error: String,
    /// The transcript up to the failure.
    pub messages: Vec<Message>,
    /// Tokens used until then.
    pub usage: Usage,
}

impl ChildRun {
    /// The child's transcript.
    pub fn messages(&self) -> &[Message] {
        match &self.outcome {
            Ok(output) => &output.messages,
            Err(failure) => &failure.messages,
        }
    }
}

/// The usage of `output`'s run and every run below it, by agent and by model: `own` is its own
/// agent's path.
fn usage_by_agent(
    own: &AgentPath,
    output: &RunOutput,
    into: &mut BTreeMap<AgentPath, UsageByModel>,
) {
    for (index, usage) in output.step_usage.iter().enumerate() {
        let agent = output.step_agents.get(index).unwrap_or(own);
        (into.entry(agent.clone()).or_default()).add(output.step_model(index), *usage);
    }
    let mine = into.entry(own.clone()).or_default();
    for summary in &output.summaries {
        mine.add(summary.model.as_deref(), summary.usage);
    }
    for child in &output.children {
        match &child.outcome {
            Ok(run) => usage_by_agent(&child.path, run, into),
            Err(failure) => (into.entry(child.path.clone()).or_default()).add(None, failure.usage),
        }
    }
}

/// Records the model that answered the run's model call number `steps` (from 1; the calls before
/// it recorded): nothing while no reply of the run named its model, then one entry per call.
#[inline]
pub(crate) fn record_step_model(
    models: &mut Vec<Option<String>>,
    steps: usize,
    response: &ChatResponse,
) {
    if response.model.is_none() && models.is_empty() {
        return;
    }
    models.resize(steps.saturating_sub(1), None);
    models.push(response.model.clone());
}

/// Why a run ended. Serialized as `{"stop": "step_limit", "limit": 10}` and so on.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "stop", rename_all = "snake_case")]
#[non_exhaustive]
pub enum StopReason {
    /// The model answered without asking for tools.
    Finished,
    /// The run made its last allowed model call and the model still wanted tools.
    StepLimit {
        /// The step limit.
        limit: usize,
    },
    /// At the step limit, one more model call without tools gave the final answer.
    StepLimitAnswered {
        /// The step limit.
        limit: usize,
    },
    /// The model asked for more tool calls than the run allows.
    ToolCallLimit {
        /// The limit.
        limit: usize,
    },
    /// The run used up its input or output tokens.
    TokenLimit {
        /// Which tokens.
        kind: TokenKind,
        /// The limit.
        limit: u64,
        /// How many were used.
        used: u64,
    },
    /// The run's time limit passed.
    TimeLimit {
        /// The limit.
        limit: Duration,
    },
    /// A hook stopped the run.
    Stopped {
        /// The hook's reason.
        reason: String,
    },
    /// The run was cancelled from outside.
    Cancelled,
    /// The [`Budget`](crate::Budget) the run shares with its tree of agents ran out of `item`
    /// before the next model call (or its tool calls past it were not run).
    BudgetSpent {
        /// What ran out.
        item: crate::budget::BudgetItem,
    },
    /// The run's agent handed the conversation to the agent `to` ([`Handoff`](crate::Handoff)),
    /// which goes on with it in the same run: only the handing agent's hooks see this end.
    HandedOff {
        /// The agent the conversation went to.
        to: AgentPath,
    },
    /// The run waits: a call needs a person's approval that was deferred, or is run by the
    /// caller. [`RunOutput::paused`] holds the waiting calls and what is needed to resume.
    Paused,
}

/// Input or output tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenKind {
    /// Tokens sent to the model.
    Input,
    /// Tokens the model generated.
    Output,
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
    /// A typed run's output was not taken (it did not parse, did not fit or a validator rejected
    /// it) as many times as the run allows: every rejected output, the raw text and the problem.
    #[error("the model gave no acceptable output in {} tries; the last one: {}", attempts.len(), last_problem(attempts))]
    Output {
        /// Each output that was not taken, in order.
        attempts: Vec<RejectedOutput>,
        /// The conversation, up to the last rejected output.
        messages: Vec<Message>,
        /// Tokens used.
        usage: Usage,
    },
    /// A typed run ended before the model gave its output: a limit, a hook or a cancellation.
    #[error("the run ended before the model gave its output ({stop_reason:?})")]
    NoOutput {
        /// Why the run ended.
        stop_reason: StopReason,
        /// Outputs the model gave that were not taken.
        attempts: Vec<RejectedOutput>,
        /// The conversation so far.
        messages: Vec<Message>,
        /// Tokens used.
        usage: Usage,
    },
    /// The run's [session](crate::RunRequest::session) refused it (a paused run waits, or none
    /// does) or could not be loaded or saved: before the run, nothing ran; after it, its
    /// transcript is here and nothing was saved.
    #[error("the session: {source}")]
    Session {
        /// What the store said.
        #[source]
        source: super::store::SessionError,
        /// The run's conversation (or the stored one, when the run did not start).
        messages: Vec<Message>,
        /// Tokens the run used.
        usage: Usage,
    },
    /// The run's future was dropped before the run ended (a timeout around it, an aborted task):
    /// what its [hooks](crate::Hooks::on_run_end) are told, since no one awaits the run any more.
    /// Calls in flight were dropped with it (a sync tool's thread runs on); a session run's
    /// finished steps are in its store, and the next run answers a call whose result was not
    /// recorded as interrupted.
    #[error("the run was dropped before it ended")]
    Dropped {
        /// The conversation when it was dropped.
        messages: Vec<Message>,
        /// Tokens used.
        usage: Usage,
    },
    /// A [guard](crate::guard::Guard) tripped: the run (and every run of its tree of agents)
    /// ended there. Calls in flight were interrupted and those not started were not run, as when
    /// a run is cancelled; a session keeps what was done.
    #[error("{trip}")]
    Tripped {
        /// Which guard, where, and what it said.
        trip: Box<Tripped>,
        /// The conversation when it tripped.
        messages: Vec<Message>,
        /// Tokens used: the guards' own included, and a reply a guard beside the model stopped
        /// after it came.
        usage: Usage,
    },
    /// The agent's tools make the lethal mix ([`Agent::lethal_mix`](crate::Agent::lethal_mix)):
    /// the run did not start.
    #[error("{mix}")]
    LethalMix {
        /// The tools of each kind.
        mix: Box<LethalMix>,
        /// The conversation it was to start from.
        messages: Vec<Message>,
        /// Nothing: no model was called.
        usage: Usage,
    },
    /// A paused run could not be resumed as asked; nothing ran.
    #[error("the paused run cannot be resumed: {source}")]
    Resume {
        /// What is wrong with the decisions or the saved run.
        #[source]
        source: ResumeError,
        /// The paused run's conversation.
        messages: Vec<Message>,
        /// Tokens the paused run had used.
        usage: Usage,
    },
}

fn last_problem(attempts: &[RejectedOutput]) -> String {
    attempts
        .last()
        .map_or_else(String::new, |attempt| attempt.problem.to_string())
}

impl RunError {
    /// The conversation before the failure.
    pub fn messages(&self) -> &[Message] {
        match self {
            RunError::Model { messages, .. }
            | RunError::Output { messages, .. }
            | RunError::NoOutput { messages, .. }
            | RunError::Resume { messages, .. }
            | RunError::Dropped { messages, .. }
            | RunError::Tripped { messages, .. }
            | RunError::LethalMix { messages, .. }
            | RunError::Session { messages, .. } => messages,
        }
    }

    /// Tokens used before the failure.
    pub fn usage(&self) -> Usage {
        match self {
            RunError::Model { usage, .. }
            | RunError::Output { usage, .. }
            | RunError::NoOutput { usage, .. }
            | RunError::Resume { usage, .. }
            | RunError::Dropped { usage, .. }
            | RunError::Tripped { usage, .. }
            | RunError::LethalMix { usage, .. }
            | RunError::Session { usage, .. } => *usage,
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
            RunError::Output {
                attempts,
                messages,
                usage,
            } => f
                .debug_struct("Output")
                .field("attempts", attempts)
                .field("messages", &format_args!("[{} messages]", messages.len()))
                .field("usage", usage)
                .finish(),
            RunError::NoOutput {
                stop_reason,
                attempts,
                messages,
                usage,
            } => f
                .debug_struct("NoOutput")
                .field("stop_reason", stop_reason)
                .field("attempts", attempts)
                .field("messages", &format_args!("[{} messages]", messages.len()))
                .field("usage", usage)
                .finish(),
            RunError::Session {
                source,
                messages,
                usage,
            } => f
                .debug_struct("Session")
                .field("source", source)
                .field("messages", &format_args!("[{} messages]", messages.len()))
                .field("usage", usage)
                .finish(),
            RunError::Dropped { messages, usage } => f
                .debug_struct("Dropped")
                .field("messages", &format_args!("[{} messages]", messages.len()))
                .field("usage", usage)
                .finish(),
            RunError::Tripped {
                trip,
                messages,
                usage,
            } => f
                .debug_struct("Tripped")
                .field("trip", trip)
                .field("messages", &format_args!("[{} messages]", messages.len()))
                .field("usage", usage)
                .finish(),
            RunError::LethalMix { mix, .. } => {
                f.debug_struct("LethalMix").field("mix", mix).finish()
            }
            RunError::Resume {
                source,
                messages,
                usage,
            } => f
                .debug_struct("Resume")
                .field("source", source)
                .field("messages", &format_args!("[{} messages]", messages.len()))
                .field("usage", usage)
                .finish(),
        }
    }
}

/// What a typed run produced: the value, and the run that produced it (its transcript, usage and
/// steps; its `text` is the JSON the value was read from, or in
/// [`OutputMode::Prompted`](crate::OutputMode::Prompted) the whole answer it was found in).
#[derive(Debug, Clone, PartialEq)]
#[must_use]
#[non_exhaustive]
pub struct TypedOutput<T> {
    /// The model's answer, of the type the run asked for.
    pub value: T,
    /// The run: transcript, usage, steps.
    pub run: RunOutput,
}

impl<T> TypedOutput<T> {
    /// The value alone.
    pub fn into_value(self) -> T {
        self.value
    }
}
