//! An agent as a tool of another: [`AgentTool`].

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Family, word_parameters};
use crate::budget::{Budget, BudgetLimits};
use crate::message::ToolCall;
use crate::model::ModelError;
use crate::output::OutputType;
use crate::reasons::tool_error::{AgentFailure, ToolError};
use crate::run::agent::Agent;
use crate::run::answer::Answer;
use crate::run::events::EventSender;
use crate::run::guard::Touches;
use crate::run::kind::Starting;
use crate::run::outcome::{ChildFailure, ChildRun, RunError, RunOutput, StopReason};
use crate::run::request::{NoContext, RunRequest, Text};
use crate::schema::output_schema;
use crate::tool::arguments::SchemaFit;
use crate::tool::call_info::RunId;
use crate::tool::closure::{arguments_of, parse};
use crate::tool::scope::RunScope;
use crate::tool::{BoxFuture, Tool, ToolDef, ToolOutput};

/// What an agent called as a tool is asked, when its tool takes plain text (the default). The
/// model reads its field's description in the called agent's texts
/// ([`Texts::agent_input`](crate::Texts::agent_input)), not this one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AgentInput {
    /// The request, in full: the agent sees nothing of this conversation but this text.
    pub input: String,
}

/// How a call's arguments become the child's first message: parsed (every failure an error
/// result for the model), then written out.
type Prompt = fn(&SchemaFit, &str) -> Result<String, ToolError>;

/// How the child runs and what of its run the model reads: its answer's text, or its typed value
/// as JSON.
type Run = for<'a> fn(RunRequest<'a, ()>, Option<EventSender>) -> BoxFuture<'a, Answered>;

/// What the calling model reads of a child's run, and the run; or the run's error.
type Answered = Result<(Result<ToolOutput, ToolError>, RunOutput), RunError>;

/// An agent as a tool of another: its own model, tools, system prompt, limits and context
/// policy, run as a run of its own each time the calling model calls it. Made by
/// [`Agent::as_tool`]; given to the calling agent like any tool built at run time
/// ([`Agent::try_tool`]).
///
/// - **Both ways typed.** By default the tool takes one text ([`AgentInput`]) and the calling
///   model reads the child's answer. [`input`](AgentTool::input) takes a struct instead (its
///   schema is the tool's; the child is asked with its JSON), and
///   [`output`](AgentTool::output) runs the child for a typed answer, which the calling model
///   reads as JSON, with its schema as the tool's output schema.
/// - **The answer, not the transcript.** The calling model reads the child's answer alone; the
///   child's run, whole, is kept in the calling run's output ([`RunOutput::children`]), usage
///   by agent in [`RunOutput::usage_by_agent`].
/// - **One tree.** The child is at [`AgentPath`](crate::AgentPath) `caller/child` (its
///   [name](Agent::named), or the tool's); it spends from the calling run's
///   [`Budget`], or from a [slice](AgentTool::budget) of it; a streamed calling run streams the
///   child's events too ([`RunEvent::SubAgent`](crate::RunEvent::SubAgent)); cancelling the
///   calling run (or its budget) stops the child. Its run id is the calling run's and the
///   call's (`run/call`), the same on every replay.
/// - **What it touches, for the lethal mix.** The tool is marked with what its agent's tools
///   read and whether one of them sends data out without an approval
///   ([`Touches::of_all`](crate::guard::Touches::of_all)), so a calling agent that reads
///   untrusted content and private data has the lethal mix through it
///   ([`Agent::lethal_mix`]).
/// - **Approvals anywhere in the tree.** A call of the child that waits for a person's approval
///   (or for the caller) pauses the child, and so the calling run: the
///   [`PausedRun`](crate::PausedRun) lists the child's waiting call among its own
///   ([`PausedRun::waiting_in`](crate::PausedRun::waiting_in) says whose), and resuming it with
///   the decision goes on with the child, then the caller. Calls of the same reply that had
///   finished keep their results. Under a caller that cannot pause (a typed run), such a call is
///   answered as not run ([`NotRun::CannotWait`](crate::NotRun::CannotWait)).
///
/// ```
/// use agent_core::testing::ScriptedModel;
/// use agent_core::{Agent, AssistantMessage, ToolCall};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let researcher = Agent::new(ScriptedModel::new([AssistantMessage::text("Rain after 3pm.")]))
///     .named("researcher")
///     .system("You research weather questions.");
/// let triage = Agent::new(ScriptedModel::new([
///     AssistantMessage::tool_calls([ToolCall::new(
///         "1",
///         "research",
///         r#"{"input":"Will it rain in Beijing today?"}"#,
///     )]),
///     AssistantMessage::text("Take an umbrella: rain after 3pm."),
/// ]))
/// .named("triage")
/// .try_tool(researcher.as_tool("research", "Research a weather question."))?;
///
/// let out = triage.run("Umbrella today?").await.unwrap();
/// assert_eq!(out.messages[3].content(), "Rain after 3pm.");
/// assert_eq!(out.children[0].path.as_str(), "triage/researcher");
/// # Ok::<(), agent_core::ToolSetError>(())
/// # }).unwrap();
/// ```
pub struct AgentTool {
    agent: Arc<Agent>,
    definition: ToolDef,
    fit: SchemaFit,
    prompt: Prompt,
    run: Run,
    /// The child's own share of the calling run's budget, if it has one.
    slice: Option<BudgetLimits>,
}

impl Agent {
    /// This agent as a tool called `name`, described to the calling model by `description`
    /// (when to call it, what to give it): see [`AgentTool`].
    pub fn as_tool(self, name: impl Into<String>, description: impl Into<String>) -> AgentTool {
        AgentTool::new(Arc::new(self), name, description)
    }
}

impl AgentTool {
    /// `agent` as a tool called `name` (an agent shared with other tools or callers).
    pub fn new(
        agent: Arc<Agent>,
        name: impl Into<String>,
        description: impl Into<String>,
    ) -> AgentTool {
        let (mut parameters, fit) = arguments_of::<AgentInput>();
        // The field's description in the agent's language, in place of its doc comment's.
        word_parameters(&mut parameters, "input", agent.tools.texts().agent_input());
        let mut definition = ToolDef::new(name, description, parameters);
        // What the agent's tools touch, its own agents' included: a caller that reads untrusted
        // pages and private mail has a way out through this tool if the agent's tools send out.
        Touches::of_all(agent.tools.definitions()).mark(&mut definition.annotations);
        AgentTool {
            agent,
            definition,
            fit,
            prompt: |fit, arguments| Ok(parse::<AgentInput>(fit, arguments)?.input),
            run: text_answer::<Starting>,
            slice: None,
        }
    }

    /// Takes a `T` instead of a text: the tool's schema is `T`'s, and the child is asked with the
    /// arguments as JSON (after they are checked against it, as any tool's are).
    pub fn input<T: serde::de::DeserializeOwned + Serialize + JsonSchema>(mut self) -> Self {
        let (parameters, fit) = arguments_of::<T>();
        self.definition.parameters = parameters;
        self.fit = fit;
        self.prompt = |fit, arguments| {
            let input = parse::<T>(fit, arguments)?;
            serde_json::to_string(&input).map_err(|error| ToolError::Unserializable {
                message: error.to_string(),
            })
        };
        self
    }

    /// Runs the child for a `T` ([`RunRequest::output`]): the calling model reads it as JSON, and
    /// the tool's output schema is `T`'s.
    pub fn output<T: OutputType + Serialize>(mut self) -> Self {
        self.definition.output_schema = output_schema::<T>();
        self.run = typed_answer::<T>;
        self
    }

    /// Gives each run of the child a budget of its own within the calling run's (a
    /// [slice](Budget::slice)): it stops at these limits or the caller's, whichever comes first.
    /// A calling run without a budget gives the child one of these limits alone.
    pub fn budget(mut self, limits: BudgetLimits) -> Self {
        self.slice = Some(limits);
        self
    }

    /// What the calling model sees of this tool.
    pub fn definition(&self) -> &ToolDef {
        &self.definition
    }

    /// The budget of one child run called from `scope`.
    fn budget_in(&self, scope: &RunScope) -> Option<Budget> {
        let Some(limits) = &self.slice else {
            return scope.budget().cloned();
        };
        let budget = match scope.budget() {
            Some(budget) => budget.slice(),
            None => Budget::new(),
        };
        budget.set_limits(limits.clone());
        Some(budget)
    }
}

impl<S: Send + Sync + 'static> Tool<S> for AgentTool {
    fn definition(&self) -> &ToolDef {
        &self.definition
    }

    fn call<'a>(
        &'a self,
        _context: &'a S,
        call: &'a ToolCall,
        run: &'a RunScope,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let prompt = (self.prompt)(&self.fit, &call.arguments)?;
            let name = self.agent.name().unwrap_or(&self.definition.name);
            let path = run.path().child(name);
            let family = Family::of(run);
            let events = (family.and_then(|family| family.events.as_ref()))
                .map(|events| events.for_agent(path.clone(), &call.id));
            let budget = self.budget_in(run);
            let can_pause = family.is_some_and(|family| family.can_pause);
            // Under a journal that lends itself, the child's calls are journaled in it, named by
            // the child's agent when the journal names its steps.
            let journal = (family.and_then(|family| family.journal.as_ref())).map(|journal| {
                journal
                    .for_agent(&path)
                    .unwrap_or_else(|| Arc::clone(journal))
            });
            let journal = journal.as_deref();
            let guards = family.and_then(Family::guards);
            let mut outcome = match family.and_then(|family| family.take_resume(&call.id)) {
                // A child that paused goes on, with the decisions on its waiting calls.
                Some(child) => {
                    let request = (self.agent.resume(child.run, child.decisions)).in_tree(
                        path.clone(),
                        budget,
                        can_pause,
                        journal,
                        guards,
                    );
                    text_answer(request, events).await
                }
                None => {
                    let request = (self.agent.run(prompt))
                        .run_id(RunId::from(format!("{}/{}", run.id(), call.id)))
                        .in_tree(path.clone(), budget, can_pause, journal, guards);
                    (self.run)(request, events).await
                }
            };
            // A child that paused: the call waits for it (the calling run pauses too, and keeps
            // the child's paused run: it is kept as a child when it ends).
            if let (Ok((_, output)), Some(family)) = (&mut outcome, family)
                && let Some(paused) = output.paused.take()
            {
                family.keep_paused(call, path, paused);
                return Ok(ToolOutput::Done);
            }
            let (result, outcome) = match outcome {
                Ok((answer, output)) => (answer, Ok(output)),
                Err(error) => {
                    let failure = ChildFailure {
                        error: error.to_string(),
                        usage: error.usage(),
                        messages: error.messages().to_vec(),
                    };
                    let failed = ToolError::AgentFailed {
                        agent: name.to_owned(),
                        why: failure_of(&error),
                    };
                    (Err(failed), Err(failure))
                }
            };
            if let Some(family) = family {
                let call_id = call.id.clone();
                family.keep(ChildRun {
                    path,
                    call_id,
                    outcome,
                });
            }
            result
        })
    }

    fn starts_runs(&self) -> bool {
        true
    }
}

impl std::fmt::Debug for AgentTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentTool")
            .field("definition", &self.definition)
            .field("agent", &self.agent.name())
            .field("budget", &self.slice)
            .finish_non_exhaustive()
    }
}

/// How a child's run failed, as the calling model is told (in the calling run's texts).
fn failure_of(error: &RunError) -> AgentFailure {
    match error {
        RunError::Model { step, source, .. } => AgentFailure::Model {
            step: *step,
            message: provider_message(source),
        },
        RunError::Output { attempts, .. } => AgentFailure::Output {
            tries: attempts.len(),
        },
        RunError::NoOutput { .. } => AgentFailure::NoOutput,
        RunError::Tripped { trip, .. } => AgentFailure::Tripped {
            guard: trip.guard.clone(),
        },
        RunError::LethalMix { .. } => AgentFailure::LethalMix,
        RunError::Session { .. } => AgentFailure::Session,
        RunError::Resume { .. } => AgentFailure::Resume,
        RunError::Dropped { .. } => AgentFailure::Dropped,
    }
}

/// What a provider said of a failed model call, in its own words (the crate's words around it
/// are English, and the calling model reads the run's language).
fn provider_message(error: &ModelError) -> String {
    match error {
        ModelError::Authentication { message, .. }
        | ModelError::RateLimited { message, .. }
        | ModelError::ContextOverflow { message, .. }
        | ModelError::InvalidRequest { message, .. }
        | ModelError::QuotaExhausted { message }
        | ModelError::Overloaded { message, .. }
        | ModelError::Server { message, .. } => message.clone(),
        _ => String::new(),
    }
}

/// The child's answer as text.
fn text_answer<'a, K>(
    request: RunRequest<'a, (), NoContext, Text, K>,
    events: Option<EventSender>,
) -> BoxFuture<'a, Answered> {
    let run = <Text as Answer<'a, ()>>::start(request, events);
    Box::pin(async move {
        let output = run.await?;
        // A child that stopped before its answer (its budget spent, its step limit) failed at
        // what it was asked; its words say why.
        let text = output.text.clone();
        let answer = match output.stop_reason {
            StopReason::Finished | StopReason::StepLimitAnswered { .. } => {
                Ok(ToolOutput::Text(text))
            }
            _ => Err(ToolError::failed(text)),
        };
        Ok((answer, output))
    })
}

/// The child's answer as a `T`, written as JSON.
fn typed_answer<'a, T: OutputType + Serialize>(
    request: RunRequest<'a, ()>,
    events: Option<EventSender>,
) -> BoxFuture<'a, Answered> {
    let request = request.output::<T>();
    let run = <_ as Answer<'a, ()>>::start(request, events);
    Box::pin(async move {
        let typed = run.await?;
        Ok((ToolOutput::json(&typed.value), typed.run))
    })
}
