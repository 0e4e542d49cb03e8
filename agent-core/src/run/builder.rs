//! A run with everything it may carry: its own context, history, settings, cancellation and, for
//! a typed run, the output type with its checks. `.await` it, or `stream()` it.

use std::fmt;
use std::future::{Future, IntoFuture};

use super::driver::{RunPlan, drive};

use super::events::{EventSender, RunStream};
use super::outcome::{RunError, RunOutput};
use crate::agent::Agent;
use crate::content::Part;
use crate::message::Message;
use crate::output::{OutputMode, OutputType, TypedCheck, TypedOutput, Validator};
use crate::settings::{ModelSettings, Thinking, ToolChoice};
use crate::tool::BoxFuture;

/// One run of an agent, set up and not yet started: what [`Agent::run_with`] returns. `.await` it
/// for the [`RunOutput`], [`stream`](RunBuilder::stream) it for its events, or ask for a typed
/// answer with [`output`](RunBuilder::output).
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
/// let out = agent.run_with(&UserId(7), "Who am I?").temperature(0.0).await.unwrap();
/// assert_eq!(out.messages[3].content(), "user 7");
/// # });
/// ```
#[must_use = "a run does nothing until it is awaited or streamed"]
pub struct RunBuilder<'a, S> {
    agent: &'a Agent<S>,
    context: &'a S,
    messages: Vec<Message>,
    settings: Option<ModelSettings>,
    cancel: Option<BoxFuture<'a, ()>>,
}

impl<'a, S: Send + Sync + 'static> RunBuilder<'a, S> {
    pub(crate) fn new(agent: &'a Agent<S>, context: &'a S, messages: Vec<Message>) -> Self {
        RunBuilder {
            agent,
            context,
            messages,
            settings: None,
            cancel: None,
        }
    }

    /// Goes on with an earlier conversation (say, the `messages` of a previous [`RunOutput`]):
    /// the history comes before this run's input, with the system prompt in front if it has none.
    pub fn history(mut self, history: Vec<Message>) -> Self {
        let input = self.messages.pop();
        self.messages = history;
        if !matches!(self.messages.first(), Some(Message::System { .. })) {
            self.messages
                .insert(0, Message::system(self.agent.system_prompt()));
        }
        self.messages.extend(input);
        self
    }

    /// Sets this run's model settings; each one left `None` is the one set before on this run,
    /// or else the agent's.
    pub fn settings(mut self, settings: ModelSettings) -> Self {
        let earlier = self.settings.take().unwrap_or_default();
        self.settings = Some(settings.or(&earlier));
        self
    }

    /// Adds parts (images, documents) after the input's text.
    pub fn with_parts(mut self, parts: impl IntoIterator<Item = Part>) -> Self {
        if let Some(Message::User { parts: input, .. }) = self.messages.last_mut() {
            input.extend(parts);
        }
        self
    }

    /// Sets whether and which tool the model must call in this run.
    pub fn tool_choice(mut self, choice: ToolChoice) -> Self {
        self.settings_mut().tool_choice = Some(choice);
        self
    }

    /// Sets this run's sampling temperature.
    pub fn temperature(mut self, temperature: f32) -> Self {
        self.settings_mut().temperature = Some(temperature);
        self
    }

    /// Sets the most tokens one reply of this run may have.
    pub fn max_tokens(mut self, tokens: u32) -> Self {
        self.settings_mut().max_tokens = Some(tokens);
        self
    }

    /// Sets how much a reasoning model thinks in this run.
    pub fn thinking(mut self, thinking: Thinking) -> Self {
        self.settings_mut().thinking = Some(thinking);
        self
    }

    fn settings_mut(&mut self) -> &mut ModelSettings {
        self.settings.get_or_insert_with(ModelSettings::new)
    }

    /// Cancels the run when `cancel` completes: the model call or tool calls in flight are
    /// dropped and the run ends with [`StopReason::Cancelled`](crate::StopReason::Cancelled).
    pub fn until(mut self, cancel: impl Future<Output = ()> + Send + 'a) -> Self {
        self.cancel = Some(Box::pin(cancel));
        self
    }

    /// Asks for the answer as a `T`: see [`TypedRun`].
    pub fn output<T: OutputType>(self) -> TypedRun<'a, S, T> {
        TypedRun {
            run: self,
            mode: None,
            retries: None,
            validators: Vec::new(),
        }
    }

    /// Runs, streaming what happens: step starts, the model's text as it arrives, each tool call
    /// and result, step ends, and last the very result the run awaited would give.
    pub fn stream(self) -> RunStream<'a, RunOutput> {
        RunStream::new(|events| Box::pin(self.go(Some(events))))
    }

    /// The run to the end, sending the events to `events` when streamed. Not an `async fn`: the
    /// run's own future is boxed as it is, with no layer around it to keep the builder twice.
    fn go(
        self,
        events: Option<EventSender>,
    ) -> impl Future<Output = Result<RunOutput, RunError>> + Send + 'a {
        let plan = RunPlan {
            context: self.context,
            settings: self.settings,
            output: None,
            resume: None,
            journal: None,
        };
        drive(self.agent, plan, self.messages, self.cancel, events)
    }
}

impl<'a, S: Send + Sync + 'static> IntoFuture for RunBuilder<'a, S> {
    type Output = Result<RunOutput, RunError>;
    type IntoFuture = BoxFuture<'a, Result<RunOutput, RunError>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.go(None))
    }
}

impl<S> fmt::Debug for RunBuilder<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunBuilder")
            .field("messages", &self.messages.len())
            .field("settings", &self.settings)
            .field("cancel", &self.cancel.is_some())
            .finish_non_exhaustive()
    }
}

/// A run whose answer is a `T`: what [`RunBuilder::output`] and [`Agent::run_typed`] return.
/// `.await` it for a [`TypedOutput<T>`], or [`stream`](TypedRun::stream) it.
///
/// The model may call tools first; its answer is then read as a `T` (see [`OutputMode`] for how it
/// is asked for). An answer that is not JSON, does not fit `T` (every field path is reported) or
/// that a [validator](TypedRun::validate) rejects goes back to the model as a correction, up to
/// the [retries](TypedRun::retries); past them the run fails with
/// [`RunError::Output`](crate::RunError::Output), which keeps every rejected answer and the
/// transcript. A run that stops before any answer (a limit, a hook, a cancellation) fails with
/// [`RunError::NoOutput`](crate::RunError::NoOutput).
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
///     .run_typed::<Ticket>("The printer is on fire!")
///     .validate(|_, ticket: &Ticket| {
///         if ticket.title.is_empty() { Err("give the ticket a title") } else { Ok(()) }
///     })
///     .await
///     .unwrap();
/// assert_eq!(ticket.value, Ticket { title: "Printer on fire".into(), urgent: true });
/// # });
/// ```
#[must_use = "a run does nothing until it is awaited or streamed"]
pub struct TypedRun<'a, S, T> {
    run: RunBuilder<'a, S>,
    mode: Option<OutputMode>,
    retries: Option<usize>,
    validators: Vec<Validator<'a, S, T>>,
}

impl<'a, S: Send + Sync + 'static, T: OutputType> TypedRun<'a, S, T> {
    /// Sets how the output is asked for (the agent's [`output_mode`](Agent::output_mode) otherwise).
    pub fn mode(mut self, mode: OutputMode) -> Self {
        self.mode = Some(mode);
        self
    }

    /// Sets how many rejected answers go back to the model before the run fails (the agent's
    /// [`output_retries`](Agent::output_retries) otherwise).
    pub fn retries(mut self, retries: usize) -> Self {
        self.retries = Some(retries);
        self
    }

    /// Adds a check of the value beyond its type, handed the run's context: `Err(message)` sends
    /// `message` to the model, which tries again. Validators run in the order added.
    pub fn validate<E: fmt::Display>(
        mut self,
        validator: impl Fn(&S, &T) -> Result<(), E> + Send + Sync + 'a,
    ) -> Self {
        self.validators.push(Box::new(move |context, value| {
            validator(context, value).map_err(|error| error.to_string())
        }));
        self
    }

    /// Streams the run's events, as [`RunBuilder::stream`]; it ends with the typed result.
    pub fn stream(self) -> RunStream<'a, TypedOutput<T>> {
        RunStream::new(|events| Box::pin(self.go(Some(events))))
    }

    /// The run to the end, sending the events to `events` when streamed. Not an `async fn`,
    /// which would keep the builder beside its parts: only the run's parts and the boxed check go
    /// into the future, which then fits where small allocations are made quickly (under 1 KB).
    fn go(
        self,
        events: Option<EventSender>,
    ) -> impl Future<Output = Result<TypedOutput<T>, RunError>> + Send + 'a {
        let TypedRun {
            run,
            mode,
            retries,
            validators,
        } = self;
        let defaults = run.agent.output;
        let check = Box::new(TypedCheck::new(
            mode.unwrap_or(defaults.mode),
            retries.unwrap_or(defaults.retries),
            validators,
        ));
        async move {
            let plan = RunPlan {
                context: run.context,
                settings: run.settings,
                output: Some(&*check),
                resume: None,
                journal: None,
            };
            let output = drive(run.agent, plan, run.messages, run.cancel, events).await?;
            match check.into_value() {
                Some(value) => Ok(TypedOutput { value, run: output }),
                // The loop reports a run without its output as `NoOutput`; this is only for safety.
                None => Err(RunError::NoOutput {
                    stop_reason: output.stop_reason,
                    attempts: Vec::new(),
                    messages: output.messages,
                    usage: output.usage,
                }),
            }
        }
    }
}

impl<'a, S: Send + Sync + 'static, T: OutputType> IntoFuture for TypedRun<'a, S, T> {
    type Output = Result<TypedOutput<T>, RunError>;
    type IntoFuture = BoxFuture<'a, Result<TypedOutput<T>, RunError>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.go(None))
    }
}

impl<S, T> fmt::Debug for TypedRun<'_, S, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TypedRun")
            .field("run", &self.run)
            .field("output", &std::any::type_name::<T>())
            .field("mode", &self.mode)
            .field("retries", &self.retries)
            .field("validators", &self.validators.len())
            .finish()
    }
}
