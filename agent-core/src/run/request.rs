//! The one way into a run: what [`Agent::run`] and [`Agent::resume`] return, set up with
//! everything a run can have (its context, its conversation, images, settings, a cancel signal,
//! a typed output, a journal), then awaited or streamed.

use std::fmt;
use std::future::{Future, IntoFuture};
use std::marker::PhantomData;

use super::agent::Agent;
use super::answer::Answer;
use super::context::Summary;
use super::events::RunStream;
use super::guard::GuardScope;
use super::journal::Journal;
use super::kind::{NewRun, Ready, Resuming, ResumingSession, RunKind, Starting};
use super::outcome::RunError;
use super::pause::{Decision, PausedRun};
use super::seams::AnswerCheck;
use super::store::{ConversationHold, SessionStore};
use crate::budget::Budget;
use crate::content::Part;
use crate::message::Message;
use crate::output::{OutputMode, OutputType, Validator};
use crate::settings::{ModelSettings, Thinking, ToolChoice};
use crate::tool::BoxFuture;
use crate::tool::call_info::RunId;
use crate::tool::scope::AgentPath;

/// What a new run adds to its conversation before its first step: the user's message, or nothing
/// (to go on with a history as it is, say after a step limit). Made from any text.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Input {
    pub(super) text: Option<String>,
}

impl Input {
    /// Nothing: the run goes on with its history as it is (given with
    /// [`history`](RunRequest::history) or [`session`](RunRequest::session)).
    pub fn nothing() -> Self {
        Input { text: None }
    }
}

impl From<String> for Input {
    fn from(text: String) -> Self {
        Input { text: Some(text) }
    }
}

impl From<&str> for Input {
    fn from(text: &str) -> Self {
        Input::from(text.to_owned())
    }
}

impl From<&String> for Input {
    fn from(text: &String) -> Self {
        Input::from(text.clone())
    }
}

impl From<std::borrow::Cow<'_, str>> for Input {
    fn from(text: std::borrow::Cow<'_, str>) -> Self {
        Input::from(text.into_owned())
    }
}

/// Which paused run a resumed run goes on with.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ResumeFrom {
    /// This one (from a [`RunOutput::paused`], or loaded with [`PausedRun::from_json`]).
    Run(PausedRun),
    /// The one kept in the run's session.
    Session,
}

/// A run not given its context yet: [`RunRequest::context`] gives it one. A run of an agent whose
/// tools need no context (an `Agent<()>`) starts without.
#[derive(Debug, Clone, Copy)]
pub struct NoContext;

/// A run given its context with [`RunRequest::context`].
#[derive(Debug, Clone, Copy)]
pub struct WithContext;

/// What a run needs to start: the context its tools, hooks and approver are handed. A run of an
/// `Agent<S>` (tools that take [`State`](crate::State) of an `S`) has one when given
/// [`context`](RunRequest::context); an `Agent<()>` needs none.
#[diagnostic::on_unimplemented(
    message = "this run has no context: the agent's tools, hooks or approver need a `{S}`",
    label = "the run starts here without one",
    note = "give the run its context with `.context(&value)`, or bind one for every run with `Agent::bind_context`"
)]
pub trait ContextGiven<'a, S> {
    /// The context the run is handed.
    #[doc(hidden)]
    fn context(given: Option<&'a S>) -> &'a S;
}

impl<'a> ContextGiven<'a, ()> for NoContext {
    fn context(_: Option<&'a ()>) -> &'a () {
        &()
    }
}

impl<'a, S> ContextGiven<'a, S> for WithContext {
    fn context(given: Option<&'a S>) -> &'a S {
        // `RunRequest::context` is the only way to a `WithContext` request, and it sets one.
        given.expect("a run with `WithContext` has its context")
    }
}

/// A run whose answer is its text: a [`RunOutput`](crate::RunOutput). The default.
#[derive(Debug, Clone, Copy, Default)]
pub struct Text;

/// A run whose answer is a value of type `T`: what [`RunRequest::output`] asks for.
pub struct Typed<'a, S, T> {
    pub(super) mode: Option<OutputMode>,
    pub(super) retries: Option<usize>,
    pub(super) validators: Vec<Validator<'a, S, T>>,
}

impl<S, T> fmt::Debug for Typed<'_, S, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Typed")
            .field("output", &std::any::type_name::<T>())
            .field("mode", &self.mode)
            .field("retries", &self.retries)
            .field("validators", &self.validators.len())
            .finish()
    }
}

/// Where a run's conversation comes from (and, for a session, goes to).
pub(super) enum Source<'a> {
    /// A new conversation: the system prompt, then the input.
    New,
    /// An earlier conversation the caller keeps.
    History(Vec<Message>),
    /// A conversation a store keeps: loaded before the run, appended to after it. `held`: the
    /// caller holds it already, and the run keeps that hold.
    Session {
        store: &'a dyn SessionStore,
        id: String,
        held: Option<ConversationHold>,
    },
}

/// How the run starts: from an input, or from a paused run with decisions on its waiting calls.
pub(super) enum Start {
    Input(Input),
    Resume {
        from: ResumeFrom,
        decisions: Vec<(String, Decision)>,
    },
}

/// One run of an agent, set up and not yet started: what [`Agent::run`] and [`Agent::resume`]
/// return. `.await` it for its output, [`stream`](RunRequest::stream) it for its events, and
/// before that give it what this run needs; every combination works (a streamed, cancellable
/// session run with an image and a typed output, say).
///
/// - [`context`](RunRequest::context): the value tools' [`State`](crate::State) parameters,
///   hooks and the approver are handed in this run (one agent, many users);
/// - [`history`](RunRequest::history) or [`session`](RunRequest::session): the conversation it
///   goes on with;
/// - [`parts`](RunRequest::parts): images and documents after the input's text;
/// - [`model_settings`](RunRequest::model_settings) and its shorthands: model settings over the
///   agent's;
/// - [`until`](RunRequest::until): a cancel signal;
/// - [`output`](RunRequest::output): the answer as a value of your type;
/// - [`journal`](RunRequest::journal): a durable engine's record of each call;
/// - [`run_id`](RunRequest::run_id): the run's id, for tools that ask for it
///   ([`CallInfo`](crate::CallInfo)).
///
/// ```
/// use agent_core::testing::ScriptedModel;
/// use agent_core::{Agent, AssistantMessage, State, ToolCall, agent, tool};
///
/// #[derive(Clone)]
/// struct UserId(u64);
///
/// /// Who is asking.
/// #[tool]
/// fn whoami(State(user): State<UserId>) -> String {
///     format!("user {}", user.0)
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let model = ScriptedModel::new([
///     AssistantMessage::tool_calls([ToolCall::new("1", "whoami", "{}")]),
///     AssistantMessage::text("You are user 7."),
/// ]);
/// // One agent, built once; each run brings its own user.
/// let agent: Agent<UserId> = agent!(model, whoami);
/// let out = agent.run("Who am I?").context(&UserId(7)).temperature(0.0).await.unwrap();
/// assert_eq!(out.messages[3].content(), "user 7");
/// # });
/// ```
///
/// A run of an agent whose tools need a context does not compile without one.
#[must_use = "a run does nothing until it is awaited or streamed"]
pub struct RunRequest<'a, S, C = NoContext, O = Text, K = Starting> {
    pub(super) plan: Plan<'a, S>,
    pub(super) output: O,
    given: PhantomData<fn() -> (C, K)>,
}

/// Everything a run is given but the kind of its answer.
pub(super) struct Plan<'a, S> {
    pub(super) agent: &'a Agent<S>,
    pub(super) context: Option<&'a S>,
    pub(super) start: Start,
    pub(super) source: Source<'a>,
    pub(super) parts: Vec<Part>,
    pub(super) settings: Option<ModelSettings>,
    pub(super) cancel: Option<BoxFuture<'a, ()>>,
    pub(super) journal: Option<&'a dyn Journal>,
    pub(super) run_id: Option<RunId>,
    /// The summaries known for the history given (a session run uses its session's).
    pub(super) summaries: Vec<Summary>,
    /// A text run's answer check, when not [`TextAnswer`](crate::seams::TextAnswer).
    pub(super) check: Option<Box<dyn AnswerCheck<S> + 'a>>,
    /// The budget the run shares with its tree of agents.
    pub(super) budget: Option<Budget>,
    /// For a run another run started (an agent called as a tool): its place in the tree.
    pub(super) path: Option<AgentPath>,
    /// Whether a call may wait (not in a run started by one that cannot pause).
    pub(super) pauses: bool,
    /// For a run another run started: the guards it checks with when its agent has none of its
    /// own, and the tripwire of the tree.
    pub(super) guards: Option<GuardScope>,
}

impl<'a, S: Send + Sync + 'static> RunRequest<'a, S> {
    /// A run of `agent` on `input`, with nothing else set.
    pub(super) fn new(agent: &'a Agent<S>, input: Input) -> Self {
        Self::starting(agent, Start::Input(input))
    }
}

impl<'a, S: Send + Sync + 'static> RunRequest<'a, S, NoContext, Text, Resuming> {
    /// A run of `agent` going on with `paused`, given a decision per waiting call.
    pub(super) fn resuming(
        agent: &'a Agent<S>,
        paused: PausedRun,
        decisions: Vec<(String, Decision)>,
    ) -> Self {
        let from = ResumeFrom::Run(paused);
        Self::starting(agent, Start::Resume { from, decisions })
    }
}

impl<'a, S: Send + Sync + 'static> RunRequest<'a, S, NoContext, Text, ResumingSession> {
    /// A run of `agent` going on with the paused run of the session it will be given.
    pub(super) fn resuming_session(
        agent: &'a Agent<S>,
        decisions: Vec<(String, Decision)>,
    ) -> Self {
        let from = ResumeFrom::Session;
        Self::starting(agent, Start::Resume { from, decisions })
    }
}

impl<'a, S: Send + Sync + 'static, K> RunRequest<'a, S, NoContext, Text, K> {
    fn starting(agent: &'a Agent<S>, start: Start) -> Self {
        let plan = Plan {
            agent,
            context: None,
            start,
            source: Source::New,
            parts: Vec::new(),
            settings: None,
            cancel: None,
            journal: None,
            summaries: Vec::new(),
            run_id: None,
            check: None,
            budget: None,
            path: None,
            pauses: true,
            guards: None,
        };
        RunRequest {
            plan,
            output: Text,
            given: PhantomData,
        }
    }
}

impl<'a, S: Send + Sync + 'static, O, K> RunRequest<'a, S, NoContext, O, K> {
    /// Gives the run its context: the value the tools' [`State`](crate::State) parameters, the
    /// hooks and the approver are handed in this run. One agent serves many runs at once, each with
    /// its own context (the user a web request is for, say); a tool asking for a part the context
    /// does not have is a compile error where the agent is built.
    pub fn context(self, context: &'a S) -> RunRequest<'a, S, WithContext, O, K> {
        let mut plan = self.plan;
        plan.context = Some(context);
        RunRequest {
            plan,
            output: self.output,
            given: PhantomData,
        }
    }
}

impl<'a, S: Send + Sync + 'static, C, K> RunRequest<'a, S, C, Text, K> {
    /// Asks for the answer as a `T`: `.await` gives a [`TypedOutput<T>`](crate::TypedOutput).
    ///
    /// The model may call tools first; its answer is then read as a `T` (see [`OutputMode`] for
    /// how it is asked for). An answer that is not JSON, does not fit `T` (every field path is
    /// reported) or that a [validator](RunRequest::validate) rejects goes back to the model as a
    /// correction, up to the [retries](RunRequest::output_retries); past them the run fails with
    /// [`RunError::Output`], which keeps every rejected answer and the transcript. A run that stops
    /// before any answer (a limit, a hook, a cancellation) fails with [`RunError::NoOutput`]. A
    /// typed run does not pause: a call that would wait is answered as not run.
    ///
    /// ```
    /// use agent_core::testing::ScriptedModel;
    /// use agent_core::{Agent, AssistantMessage, ToolCall};
    /// use schemars::JsonSchema;
    /// use serde::Deserialize;
    ///
    /// /// A support ticket.
    /// #[derive(Debug, Deserialize, JsonSchema, PartialEq)]
    /// struct Ticket {
    ///     title: String,
    ///     urgent: bool,
    /// }
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let model = ScriptedModel::new([AssistantMessage::tool_calls([ToolCall::new(
    ///     "1",
    ///     "final_result",
    ///     r#"{"title": "Printer on fire", "urgent": true}"#,
    /// )])]);
    /// let agent = Agent::new(model);
    /// let ticket = agent
    ///     .run("The printer is on fire!")
    ///     .output::<Ticket>()
    ///     .validate(|_, ticket: &Ticket| {
    ///         if ticket.title.is_empty() { Err("give the ticket a title") } else { Ok(()) }
    ///     })
    ///     .await
    ///     .unwrap();
    /// assert_eq!(ticket.value, Ticket { title: "Printer on fire".into(), urgent: true });
    /// # });
    /// ```
    pub fn output<T: OutputType>(self) -> RunRequest<'a, S, C, Typed<'a, S, T>, K> {
        let mut plan = self.plan;
        // A typed run's answer check is its output's.
        plan.check = None;
        RunRequest {
            plan,
            output: Typed {
                mode: None,
                retries: None,
                validators: Vec::new(),
            },
            given: PhantomData,
        }
    }
}

impl<'a, S: Send + Sync + 'static, C, K> RunRequest<'a, S, C, Text, K> {
    /// Reads the run's replies with this answer check instead of [`TextAnswer`](crate::seams::TextAnswer) (which takes a
    /// reply without calls as the answer): a value at the answer-check seam, which decides what
    /// each request offers, which reply is the answer, and what goes back to the model when a
    /// reply will not do. The run's text is the answer it takes. [`output`](Self::output)
    /// replaces it with the typed output's own.
    pub fn answer_check(mut self, check: impl AnswerCheck<S> + 'a) -> Self {
        self.plan.check = Some(Box::new(check));
        self
    }
}

impl<'a, S: Send + Sync + 'static, C, T: OutputType, K> RunRequest<'a, S, C, Typed<'a, S, T>, K> {
    /// Sets how the output is asked for (the agent's [`output_mode`](Agent::output_mode)
    /// otherwise).
    pub fn output_mode(mut self, mode: OutputMode) -> Self {
        self.output.mode = Some(mode);
        self
    }

    /// Sets how many rejected answers go back to the model before the run fails (the agent's
    /// [`output_retries`](Agent::output_retries) otherwise).
    pub fn output_retries(mut self, retries: usize) -> Self {
        self.output.retries = Some(retries);
        self
    }

    /// Adds a check of the value beyond its type, handed the run's context: `Err(message)` sends
    /// `message` to the model, which tries again. Validators run in the order added.
    pub fn validate<E: fmt::Display>(
        mut self,
        validator: impl Fn(&S, &T) -> Result<(), E> + Send + Sync + 'a,
    ) -> Self {
        self.output.validators.push(Box::new(move |context, value| {
            validator(context, value).map_err(|error| error.to_string())
        }));
        self
    }
}

impl<'a, S: Send + Sync + 'static, C, O, K: RunKind> RunRequest<'a, S, C, O, K> {
    /// Goes on with an earlier conversation (say, the `messages` of a previous [`RunOutput`](crate::RunOutput)):
    /// the history comes before this run's input, with the system prompt in front if it has none.
    /// To go on with a conversation as it is (after a step limit, say), give no input:
    /// `agent.run(Input::nothing()).history(messages)`. Replaces a
    /// [`session`](RunRequest::session) set before. A new run's only: a resumed run goes on with
    /// the conversation its paused run holds.
    pub fn history(mut self, history: Vec<Message>) -> Self
    where
        K: NewRun,
    {
        self.plan.source = Source::History(history);
        self
    }

    /// The summaries a context policy made of the [`history`](Self::history) given (or of a paused
    /// run's conversation), from earlier runs' [`RunOutput::summaries`](crate::RunOutput::summaries): the policy sends one
    /// again rather than make it anew. A session run uses its session's instead.
    pub fn summaries(mut self, summaries: Vec<Summary>) -> Self {
        self.plan.summaries = summaries;
        self
    }

    /// Adds parts (images, documents) after the input's text. A new run's only: a resumed run
    /// adds no message.
    pub fn parts(mut self, parts: impl IntoIterator<Item = Part>) -> Self
    where
        K: NewRun,
    {
        self.plan.parts.extend(parts);
        self
    }

    /// Runs on conversation `id` of `store`: holds it (runs on one conversation are serialized,
    /// see [the module](crate::session)), loads it (a new one starts with the system prompt;
    /// a call of it that has no result, because the run that made it stopped first, is answered
    /// as interrupted), runs, and appends the run's new messages as they come: a step's reply
    /// before its calls run, the step's results when they are in (one append each), so a run that
    /// dies keeps every step it finished. A run that pauses keeps its paused run in the store for
    /// [`Agent::resume_session`]. A run that fails after it began appends its
    /// transcript as well (the question, and every call it made, answered), so its tools' effects
    /// are on record and not repeated by the next run; the error is returned. A new run on a
    /// conversation with a paused run waiting is refused ([`SessionError::Paused`](crate::session::SessionError::Paused)) and nothing
    /// runs. Replaces a [`history`](RunRequest::history) set before.
    pub fn session(
        self,
        store: &'a dyn SessionStore,
        id: impl Into<String>,
    ) -> RunRequest<'a, S, C, O, K::WithSession> {
        let source = Source::Session {
            store,
            id: id.into(),
            held: None,
        };
        self.with_source(source)
    }

    /// Runs on the conversation of `store` that `hold` holds (from [`SessionStore::hold`]), as
    /// [`session`](RunRequest::session) does, without waiting for it again: the run goes on from
    /// the conversation exactly as the caller left it under that hold, with no other run in
    /// between, and lets go of it when it ends. For a caller that reads or changes the
    /// conversation before the run (deciding what to run, cutting an answer back). Replaces a
    /// [`history`](RunRequest::history) or a session set before.
    ///
    /// ```
    /// use agent_core::session::{MemorySessions, SessionStore};
    /// use agent_core::testing::ScriptedModel;
    /// use agent_core::{Agent, AssistantMessage};
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let agent = Agent::new(ScriptedModel::new([AssistantMessage::text("Hi!")]));
    /// let store = MemorySessions::new();
    /// let hold = store.hold("chat-1").await;
    /// // Decide what to run on the conversation as it is now; no other run gets in meanwhile.
    /// let asked = store.load("chat-1").await?.messages.len();
    /// assert_eq!(asked, 0);
    /// let output = agent.run("Hello").session_held(&store, hold).await?;
    /// assert_eq!(store.load("chat-1").await?.messages, output.messages);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn session_held(
        self,
        store: &'a dyn SessionStore,
        hold: ConversationHold,
    ) -> RunRequest<'a, S, C, O, K::WithSession> {
        let source = Source::Session {
            store,
            id: hold.id().to_owned(),
            held: Some(hold),
        };
        self.with_source(source)
    }

    /// This request with its conversation from `source`, of the kind that gives it.
    fn with_source<L>(self, source: Source<'a>) -> RunRequest<'a, S, C, O, L> {
        let mut plan = self.plan;
        plan.source = source;
        RunRequest {
            plan,
            output: self.output,
            given: PhantomData,
        }
    }

    /// Sets this run's model settings: each one set here is this run's, each one left `None` is
    /// the one set before on this run, or else the agent's (a resumed run's: the paused run's).
    /// The same merge, and the same shorthands, as [`Agent::model_settings`].
    pub fn model_settings(mut self, settings: ModelSettings) -> Self {
        self.plan.settings = Some(match self.plan.settings.take() {
            Some(earlier) => settings.or(&earlier),
            None => settings,
        });
        self
    }

    /// Sets whether and which tool the model must call in this run.
    pub fn tool_choice(self, choice: ToolChoice) -> Self {
        self.model_settings(ModelSettings::new().tool_choice(choice))
    }

    /// Sets this run's sampling temperature.
    pub fn temperature(self, temperature: f32) -> Self {
        self.model_settings(ModelSettings::new().temperature(temperature))
    }

    /// Sets the most tokens one reply of this run may have.
    pub fn max_tokens(self, tokens: u32) -> Self {
        self.model_settings(ModelSettings::new().max_tokens(tokens))
    }

    /// Sets how much a reasoning model thinks in this run.
    pub fn thinking(self, thinking: Thinking) -> Self {
        self.model_settings(ModelSettings::new().thinking(thinking))
    }

    /// Cancels the run when `cancel` completes: the model call or tool calls in flight are
    /// dropped (calls that finished keep their results; one cut off after it started is answered
    /// as interrupted, one that had not started as not run) and the run ends with
    /// [`StopReason::Cancelled`](crate::StopReason::Cancelled) and the transcript so far.
    ///
    /// Dropping the run's future (a timeout around it, an aborted task) stops it too, but
    /// nothing awaits its end: what was in flight is dropped (a sync tool's thread runs on), the
    /// hooks' [`on_run_end`](crate::Hooks::on_run_end) is told [`RunError::Dropped`] with the
    /// transcript so far, and a [session](RunRequest::session) run's store keeps what the run had
    /// kept: every finished step, and the reply of the step in flight, whose calls the next run
    /// answers as interrupted.
    pub fn until(mut self, cancel: impl Future<Output = ()> + Send + 'a) -> Self {
        self.plan.cancel = Some(Box::pin(cancel));
        self
    }

    /// Records the run's model and tool calls in `journal`, for a durable-execution engine: a run
    /// replayed after a crash gets the recorded replies and results back instead of calling
    /// again (see [`Journal`]).
    pub fn journal(mut self, journal: &'a dyn Journal) -> Self {
        self.plan.journal = Some(journal);
        self
    }

    /// Gives the run its id (otherwise a fresh one, or, for a paused run going on, the id it had):
    /// what its tools' [`CallInfo`](crate::CallInfo) parameters read. A durable runner gives the
    /// id it keeps for the run (Restate's workflow key), so a replay sees the same one; a caller
    /// can give its own (an order number, a request id) to find the run's calls by it.
    pub fn run_id(mut self, id: impl Into<RunId>) -> Self {
        self.plan.run_id = Some(id.into());
        self
    }

    /// Spends from `budget`, which the run shares with every agent it calls as a tool (see
    /// [`Budget`]): before each model call a request is taken from it, and the run ends with
    /// [`StopReason::BudgetSpent`](crate::StopReason::BudgetSpent) when there is none (or no
    /// tokens, or no money) left; each reply's calls take tool calls from it, and those past it
    /// are not run. [`Budget::cancel`] stops the run as [`until`](RunRequest::until) does.
    pub fn budget(mut self, budget: Budget) -> Self {
        self.plan.budget = Some(budget);
        self
    }

    /// Makes the run one that another run started: at `path` in the tree of agents, spending
    /// from `budget`; `can_pause`: whether a call of it may wait (the run that started it can
    /// pause); `journal`: the one it keeps its calls in, for a durable run's child; `guards`:
    /// those of the run that started it, and the tree's tripwire.
    pub(crate) fn in_tree(
        mut self,
        path: AgentPath,
        budget: Option<Budget>,
        can_pause: bool,
        journal: Option<&'a dyn Journal>,
        guards: Option<GuardScope>,
    ) -> Self {
        self.plan.path = Some(path);
        self.plan.budget = budget;
        self.plan.pauses = can_pause;
        self.plan.journal = journal;
        self.plan.guards = guards;
        self
    }
}

impl<'a, S: Send + Sync + 'static, C: ContextGiven<'a, S>, O: Answer<'a, S>, K: Ready>
    RunRequest<'a, S, C, O, K>
{
    /// Runs, streaming what happens: step starts, the model's text as it arrives, each tool call
    /// and result, step ends, and last the very result the run awaited would give (a
    /// [`RunOutput`](crate::RunOutput), or a [`TypedOutput`](crate::TypedOutput) for a typed run). Both go through one loop, so they
    /// cannot behave differently.
    pub fn stream(self) -> RunStream<'a, O::Output> {
        RunStream::new(|events| O::start(self, Some(events)))
    }
}

impl<'a, S: Send + Sync + 'static, C: ContextGiven<'a, S>, O: Answer<'a, S>, K: Ready> IntoFuture
    for RunRequest<'a, S, C, O, K>
{
    type Output = Result<O::Output, RunError>;
    type IntoFuture = BoxFuture<'a, Result<O::Output, RunError>>;

    fn into_future(self) -> Self::IntoFuture {
        O::start(self, None)
    }
}

impl<S, C, O: fmt::Debug, K> fmt::Debug for RunRequest<'_, S, C, O, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plan = &self.plan;
        let (start, decisions) = match &plan.start {
            Start::Input(input) => ("input", input.text.is_some() as usize),
            Start::Resume { decisions, .. } => ("resume", decisions.len()),
        };
        let source = match &plan.source {
            Source::New => "new".to_owned(),
            Source::History(history) => format!("history of {}", history.len()),
            Source::Session { id, .. } => format!("session {id:?}"),
        };
        f.debug_struct("RunRequest")
            .field("start", &start)
            .field("messages_or_decisions", &decisions)
            .field("conversation", &source)
            .field("parts", &plan.parts.len())
            .field("settings", &plan.settings)
            .field("cancel", &plan.cancel.is_some())
            .field("journal", &plan.journal.is_some())
            .field("context", &plan.context.is_some())
            .field("output", &self.output)
            .finish()
    }
}
