//! The durable agent as a Restate workflow: how it is set up (its context, its output), its
//! handlers (`run`, `output`, `decide`, `pending`), and how Restate reaches them.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use restate_sdk::endpoint::{self, ContextInternal, ServiceOptions};
use restate_sdk::errors::{HandlerError, HandlerResult, TerminalError};
use restate_sdk::serde::Json;
use restate_sdk::service::macro_support::{ServiceBoxFuture, service_definition};
use restate_sdk::service::{IntoServiceDefinition, Service, ServiceDefinition};
use serde::{Deserialize, Serialize};

use super::answer::{DurableAnswer, TextAnswer, TypedAnswer, failed};
use super::discovery::workflow;
use super::invocation::{ContextSource, Contextless, FromInvocation, Invocation, Rejection};
use super::journal::RestateJournal;
use super::wire::{DecisionRequest, DurableOutput, DurableRequest, Pending};
use agent_core::OutputType;
use agent_core::RunId;
use agent_core::{Agent, Budget, BudgetLimits, Decision, PendingCall};

/// The workflow state key under which a paused run keeps its [`Waiting`].
const PENDING: &str = "pending";

/// The durable promise the `output` handler waits on: the run's output, or its failure.
const OUTPUT: &str = "output";

/// The durable promise a run resolves as its `run` handler begins: `output` waits on it, for a
/// while, before it waits for the output.
const STARTED: &str = "started";

/// How long `output` waits for a run that has not started, by default.
const START_WAIT: Duration = Duration::from_secs(10);

/// What a paused run keeps in its workflow state: which of its pauses this is, the calls that
/// wait, and the ids of the calls decided in the pauses before. A model may use a call id again in
/// a later reply, so each pause's decisions arrive on promises of their own: an approval given
/// once never answers a later call.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Waiting {
    pause: usize,
    calls: Vec<PendingCall>,
    #[serde(default)]
    decided: Vec<String>,
}

/// An [`Agent`] served as a Restate workflow, so that its runs are durable: each model call and
/// each tool call is a journaled step, and a run whose process dies goes on where it was when
/// Restate replays it (on a restart, or on another instance), without calling the model or a
/// tool again for the steps already done. See the [module](super) for the handlers and the rules a
/// durable run follows.
///
/// Set up like a run: [`context`](DurableAgent::context) makes each run's context from its
/// invocation (needed, as for a run, by an agent whose tools take one), and
/// [`output`](DurableAgent::output) asks for a typed answer. `S` is the agent's context, `C` how
/// it is made ([`Contextless`] or [`FromInvocation`]), `O` what runs answer with ([`TextAnswer`]
/// or [`TypedAnswer`]).
///
/// ```no_run
/// use std::sync::Arc;
///
/// use agent_restate::{DurableAgent, serve};
/// use agent_core::testing::ScriptedModel;
/// use agent_core::{AssistantMessage, agent};
/// use agent_restate::restate_sdk::prelude::Endpoint;
///
/// # async fn run() -> std::io::Result<()> {
/// let model = ScriptedModel::new([AssistantMessage::text("Hello!")]);
/// let agent = Arc::new(agent!(model).defer_approvals());
/// let endpoint = Endpoint::builder()
///     .bind(DurableAgent::new("Assistant", agent))
///     .build();
/// serve(endpoint, tokio::net::TcpListener::bind("127.0.0.1:9080").await?).await;
/// # Ok(())
/// # }
/// ```
///
/// A durable agent of an agent whose runs need a context is not bound to an endpoint until it is
/// told how to make that context:
///
/// ```compile_fail,E0277
/// use std::sync::Arc;
/// use agent_restate::DurableAgent;
/// use agent_restate::restate_sdk::prelude::Endpoint;
///
/// struct User(String);
///
/// let agent: agent_core::Agent<User> = agent_core::Agent::new(
///     agent_core::testing::ScriptedModel::new(Vec::<agent_core::AssistantMessage>::new()),
/// );
/// // error: this `DurableAgent` serves an `Agent<User>` and cannot make its runs' context
/// let endpoint = Endpoint::builder().bind(DurableAgent::new("Assistant", Arc::new(agent)));
/// ```
pub struct DurableAgent<S = (), C = Contextless, O = TextAnswer> {
    name: String,
    agent: Arc<Agent<S>>,
    context: C,
    answer: O,
    options: Option<ServiceOptions>,
    start_wait: Duration,
    budget: Option<BudgetLimits>,
}

impl<S: Send + Sync + 'static> DurableAgent<S> {
    /// Serves `agent` as the Restate workflow `name` (the first segment of its ingress URLs). Its
    /// runs answer in text; an `Agent<()>`'s runs need no context, any other's are given one with
    /// [`context`](DurableAgent::context) before the workflow is bound to an endpoint.
    ///
    /// # Panics
    ///
    /// When binding it to an endpoint, if `name` is not a valid Restate service name (letters,
    /// digits and `_`, not starting with a digit).
    pub fn new(name: impl Into<String>, agent: Arc<Agent<S>>) -> Self {
        DurableAgent {
            name: name.into(),
            agent,
            context: Contextless,
            answer: TextAnswer,
            options: None,
            start_wait: START_WAIT,
            budget: None,
        }
    }
}

impl<S: Send + Sync + 'static, O> DurableAgent<S, Contextless, O> {
    /// Makes each run's context from its [`Invocation`]: the run id, the request's headers (a
    /// sign-in token the client sent through Restate's ingress) or the run request's `context`
    /// (`{"input": "...", "context": {"user": "ada"}}`, read with
    /// [`Invocation::context`]). The context is what the tools' [`State`](agent_core::State)
    /// parameters, the hooks and the approver are handed in that run, as
    /// [`RunRequest::context`](agent_core::RunRequest::context) gives it to an ordinary run; an
    /// `Agent<()>` may be given one too, to refuse runs (a missing token, say).
    ///
    /// `make` is called when the invocation starts, before the run, and again on each replay of
    /// it (after a crash, and when a paused run goes on: Restate replays the invocation then).
    /// Restate journals the invocation's body and headers, so `make` sees the same invocation
    /// every time: like hooks, it must decide from it alone (no clock, no randomness, no reads of
    /// data that changes), so that every replay gets the same context. A [`Rejection`] ends the
    /// run before it starts, and its client gets the rejection's status (`401`, say) and message;
    /// the model is never called.
    ///
    /// ```no_run
    /// use std::sync::Arc;
    ///
    /// use agent_restate::restate_sdk::prelude::Endpoint;
    /// use agent_restate::{DurableAgent, Rejection};
    /// use agent_core::testing::ScriptedModel;
    /// use agent_core::{Agent, AssistantMessage, State, agent, tool};
    ///
    /// #[derive(Clone)]
    /// struct User(String);
    ///
    /// /// Who is asking.
    /// #[tool]
    /// fn whoami(State(user): State<User>) -> String {
    ///     user.0
    /// }
    ///
    /// let model = ScriptedModel::new([AssistantMessage::text("Hello!")]);
    /// let agent: Agent<User> = agent!(model, whoami);
    /// let durable = DurableAgent::new("Assistant", Arc::new(agent)).context(|invocation| {
    ///     // Restate's ingress checked the caller (a request identity key, or a proxy in front of
    ///     // it) and passes its `x-user` header on.
    ///     let user = invocation
    ///         .header("x-user")
    ///         .ok_or_else(|| Rejection::unauthorized("no x-user header"))?;
    ///     Ok(User(user.to_owned()))
    /// });
    /// let endpoint = Endpoint::builder().bind(durable).build();
    /// ```
    pub fn context(
        self,
        make: impl Fn(&Invocation<'_>) -> Result<S, Rejection> + Send + Sync + 'static,
    ) -> DurableAgent<S, FromInvocation<S>, O> {
        DurableAgent {
            name: self.name,
            agent: self.agent,
            context: FromInvocation::new(make),
            answer: self.answer,
            options: self.options,
            start_wait: self.start_wait,
            budget: self.budget,
        }
    }
}

impl<S: Send + Sync + 'static, C> DurableAgent<S, C, TextAnswer> {
    /// Asks each run for its answer as a `T`, as [`RunRequest::output`](agent_core::RunRequest::output)
    /// does: the workflow's output ([`DurableOutput`]) has the value as JSON in its `value`
    /// ([`DurableOutput::value_as`] reads it back), and Restate's discovery learns its schema.
    /// The agent's [`output_mode`](Agent::output_mode) and
    /// [`output_retries`](Agent::output_retries) apply.
    ///
    /// A typed run does not pause: a call that would wait for an approval or for the caller is
    /// answered as not run, and the model goes on without it. A run whose answers are refused past
    /// its retries, or that ends before it gives one (a limit, a hook), ends the workflow with a
    /// terminal error that says why, as `run` and `output` answer (`500`).
    ///
    /// ```no_run
    /// use std::sync::Arc;
    ///
    /// use agent_restate::DurableAgent;
    /// use agent_restate::restate_sdk::prelude::Endpoint;
    /// use agent_core::testing::ScriptedModel;
    /// use agent_core::{Agent, AssistantMessage};
    /// use schemars::JsonSchema;
    /// use serde::{Deserialize, Serialize};
    ///
    /// /// A support ticket.
    /// #[derive(Serialize, Deserialize, JsonSchema)]
    /// struct Ticket {
    ///     title: String,
    ///     urgent: bool,
    /// }
    ///
    /// let agent = Agent::new(ScriptedModel::new(Vec::<AssistantMessage>::new()));
    /// let durable = DurableAgent::new("Triage", Arc::new(agent))
    ///     .output::<Ticket>()
    ///     .validate(|_, ticket: &Ticket| {
    ///         if ticket.title.is_empty() { Err("give the ticket a title") } else { Ok(()) }
    ///     });
    /// let endpoint = Endpoint::builder().bind(durable).build();
    /// ```
    pub fn output<T: OutputType + Serialize>(self) -> DurableAgent<S, C, TypedAnswer<S, T>> {
        DurableAgent {
            name: self.name,
            agent: self.agent,
            context: self.context,
            answer: TypedAnswer::new(),
            options: self.options,
            start_wait: self.start_wait,
            budget: self.budget,
        }
    }
}

impl<S: Send + Sync + 'static, C, T: OutputType + Serialize> DurableAgent<S, C, TypedAnswer<S, T>> {
    /// Adds a check of each run's value beyond its type, handed the run's context: `Err(message)`
    /// sends `message` to the model, which tries again, as
    /// [`RunRequest::validate`](agent_core::RunRequest::validate) does. Like hooks, it decides from
    /// its inputs alone: a replay runs it again.
    pub fn validate<E: fmt::Display>(
        mut self,
        validator: impl Fn(&S, &T) -> Result<(), E> + Send + Sync + 'static,
    ) -> Self {
        self.answer.validate(move |context, value| {
            validator(context, value).map_err(|error| error.to_string())
        });
        self
    }
}

impl<S, C, O> DurableAgent<S, C, O> {
    /// Restate's options for the workflow: timeouts, retention, and the retry policy Restate
    /// applies to the run when a step fails or its process dies.
    pub fn options(mut self, options: ServiceOptions) -> Self {
        self.options = Some(options);
        self
    }

    /// Gives each run a [`Budget`](agent_core::Budget) of `limits`, which the agents it calls as
    /// tools share. The ledger is the run's journal read again: a replay (after a crash, or when a
    /// paused run goes on) counts each replayed model call and tool call as the first time did,
    /// so a run stops at exactly the request, token or call it would have stopped at.
    pub fn budget(mut self, limits: BudgetLimits) -> Self {
        self.budget = Some(limits);
        self
    }

    /// How long `output` waits for a run that has not started (10 s by default): a client that
    /// sends `run/send` and asks for the output at once gets it, and one that names a run never
    /// started is answered `404` ("no run ...") after that long, rather than waiting for good
    /// and leaving its call waiting in Restate.
    pub fn output_waits_for_start(mut self, wait: Duration) -> Self {
        self.start_wait = wait;
        self
    }
}

impl<S, C, O: fmt::Debug> fmt::Debug for DurableAgent<S, C, O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DurableAgent")
            .field("name", &self.name)
            .field("context", &std::any::type_name::<C>())
            .field("answer", &self.answer)
            .field("options", &self.options)
            .field("start_wait", &self.start_wait)
            .finish_non_exhaustive()
    }
}

impl<S, C, O> IntoServiceDefinition for DurableAgent<S, C, O>
where
    S: Send + Sync + 'static,
    C: ContextSource<S>,
    O: DurableAnswer<S>,
{
    fn into_service_definition(self) -> ServiceDefinition {
        let discovery = workflow(&self.name, self.answer.output_schema());
        let dispatcher = Handlers(Arc::new(Shared {
            agent: self.agent,
            context: self.context,
            answer: self.answer,
            start_wait: self.start_wait,
            budget: self.budget,
        }));
        let definition = service_definition(dispatcher, discovery);
        match self.options {
            Some(options) => definition.options(options),
            None => definition,
        }
    }
}

/// What every invocation of one durable agent shares.
struct Shared<S, C, O> {
    agent: Arc<Agent<S>>,
    context: C,
    answer: O,
    start_wait: Duration,
    budget: Option<BudgetLimits>,
}

/// What Restate reaches: the four handlers of one durable agent.
struct Handlers<S, C, O>(Arc<Shared<S, C, O>>);

impl<S, C, O> Service for Handlers<S, C, O>
where
    S: Send + Sync + 'static,
    C: ContextSource<S>,
    O: DurableAnswer<S>,
{
    type Future = ServiceBoxFuture;

    fn handle(&self, restate: ContextInternal) -> Self::Future {
        let shared = Arc::clone(&self.0);
        Box::pin(async move {
            match restate.handler_name() {
                "run" => {
                    let (Json(body), metadata) = restate.input::<Json<serde_json::Value>>().await;
                    restate.resolve_promise(STARTED, Json(true));
                    let outcome = match serde_json::from_value::<DurableRequest>(body) {
                        Ok(request) => {
                            let invocation = Invocation::new(
                                &metadata.key,
                                &metadata.headers,
                                request.context_value(),
                            );
                            match shared.context.make(&invocation) {
                                Ok(context) => {
                                    let run_id = RunId::from(metadata.key.as_str());
                                    run(&restate, &shared, &context, request, run_id).await
                                }
                                Err(rejection) => Err(TerminalError::new_with_code(
                                    rejection.status(),
                                    rejection.message(),
                                )),
                            }
                        }
                        Err(error) => Err(TerminalError::new_with_code(400, error.to_string())),
                    };
                    // The `output` handler's answer: the same as this one's.
                    match &outcome {
                        Ok(Json(output)) => restate.resolve_promise(OUTPUT, Json(output)),
                        Err(error) => restate.reject_promise(
                            OUTPUT,
                            TerminalError::new_with_code(error.code(), error.message()),
                        ),
                    }
                    restate.handle_handler_result(outcome.map_err(HandlerError::from));
                }
                "output" => {
                    let ((), metadata) = restate.input::<()>().await;
                    let outcome = output(&restate, &metadata.key, shared.start_wait).await;
                    restate.handle_handler_result(outcome);
                }
                "decide" => {
                    let (Json(request), _) = restate.input::<Json<DecisionRequest>>().await;
                    let outcome = decide(&restate, request).await;
                    restate.handle_handler_result(outcome);
                }
                "pending" => {
                    let ((), _) = restate.input::<()>().await;
                    let outcome = pending(&restate).await;
                    restate.handle_handler_result(outcome);
                }
                _ => {
                    return Err(endpoint::Error::unknown_handler(
                        restate.service_name(),
                        restate.handler_name(),
                    ));
                }
            }
            restate.end();
            Ok(())
        })
    }
}

/// The shared `output` handler: the run's output, once it has one. A run that has not started
/// is waited for `start_wait`; one that has not started by then is a `404`.
async fn output(
    restate: &ContextInternal,
    run_id: &str,
    start_wait: Duration,
) -> HandlerResult<Json<DurableOutput>> {
    let started = restate_sdk::select! {
        started = restate.promise::<Json<bool>>(STARTED) => started.map(|_| true),
        slept = restate.sleep(start_wait) => slept.map(|()| false),
    }?;
    if !started {
        let message = format!(
            "no run `{run_id}`: none was started in the {} s this request waited; start it with \
             `run` or `run/send`",
            start_wait.as_secs_f64()
        );
        return Err(TerminalError::new_with_code(404, message).into());
    }
    Ok(restate.promise::<Json<DurableOutput>>(OUTPUT).await?)
}

/// The workflow's `run` handler: one run, from its input to its end, waiting on a durable promise
/// for each call that waits for a person or the caller (only a text run waits: a typed run
/// answers such a call as not run).
async fn run<S, C, O>(
    restate: &ContextInternal,
    shared: &Shared<S, C, O>,
    context: &S,
    request: DurableRequest,
    run_id: RunId,
) -> Result<Json<DurableOutput>, TerminalError>
where
    S: Send + Sync + 'static,
    O: DurableAnswer<S>,
{
    let agent = &*shared.agent;
    let journal = RestateJournal {
        context: restate.clone(),
        agent: None,
    };
    // A budget made afresh by each execution of the handler: what a replay reads again, it
    // counts again.
    let budget = (shared.budget.clone()).map(|limits| {
        let budget = Budget::new();
        budget.set_limits(limits);
        budget
    });
    let mut first = request
        .into_run(agent)
        .context(context)
        .journal(&journal)
        .run_id(run_id.clone());
    if let Some(budget) = &budget {
        first = first.budget(budget.clone());
    }
    let (mut output, value) = shared.answer.answer(first).await?;
    let mut pause = 0;
    let mut decided = Vec::new();
    loop {
        pause += 1;
        let Some(paused) = output.paused.take() else {
            return Ok(Json(DurableOutput::new(output, value)));
        };
        let calls = paused.pending().to_vec();
        let waiting = Waiting {
            pause,
            calls,
            decided: decided.clone(),
        };
        restate.set(PENDING, Json(waiting));
        let mut decisions = Vec::with_capacity(paused.pending().len());
        for pending in paused.pending() {
            let id = &pending.call.id;
            let name = promise_name(pause, id);
            let Json(decision) = restate.promise::<Json<Decision>>(&name).await?;
            decisions.push((id.clone(), decision));
            decided.push(id.clone());
        }
        // Nothing waits now; a late decision on a call of this pause is told it was decided.
        let waiting = Waiting {
            pause,
            calls: Vec::new(),
            decided: decided.clone(),
        };
        restate.set(PENDING, Json(waiting));
        let mut going_on = agent
            .resume(paused, decisions)
            .context(context)
            .journal(&journal)
            .run_id(run_id.clone());
        if let Some(budget) = &budget {
            going_on = going_on.budget(budget.clone());
        }
        output = going_on.await.map_err(failed)?;
    }
}

/// The shared `decide` handler: settles one waiting call. A call that does not wait, or a decision
/// of the wrong kind for it, is refused (400), and a second decision on a call (409).
async fn decide(restate: &ContextInternal, request: DecisionRequest) -> HandlerResult<()> {
    let Waiting {
        pause,
        calls,
        decided,
    } = restate
        .get::<Json<Waiting>>(PENDING)
        .await?
        .map(|Json(waiting)| waiting)
        .unwrap_or_default();
    let Some(pending) = calls
        .iter()
        .find(|pending| pending.call.id == request.call_id)
    else {
        if decided.contains(&request.call_id) {
            let message = format!("the call `{}` is already decided", request.call_id);
            return Err(TerminalError::new_with_code(409, message).into());
        }
        let waiting: Vec<&str> = calls
            .iter()
            .map(|pending| pending.call.id.as_str())
            .collect();
        let message = format!(
            "no call `{}` waits for a decision in this run (waiting: {waiting:?})",
            request.call_id
        );
        return Err(TerminalError::new_with_code(400, message).into());
    };
    pending
        .check(&request.decision)
        .map_err(|error| TerminalError::new_with_code(400, error.to_string()))?;
    let name = promise_name(pause, &request.call_id);
    if restate
        .peek_promise::<Json<Decision>>(&name)
        .await?
        .is_some()
    {
        let message = format!("the call `{}` is already decided", request.call_id);
        return Err(TerminalError::new_with_code(409, message).into());
    }
    restate.resolve_promise(&name, Json(request.decision));
    Ok(())
}

/// The shared `pending` handler: the calls the run waits on now.
async fn pending(restate: &ContextInternal) -> HandlerResult<Json<Pending>> {
    let waiting = restate.get::<Json<Waiting>>(PENDING).await?;
    let calls = waiting
        .map(|Json(waiting)| waiting.calls)
        .unwrap_or_default();
    Ok(Json(Pending { calls }))
}

/// The durable promise the decision on a call waiting in the run's `pause`-th pause arrives on.
fn promise_name(pause: usize, call_id: &str) -> String {
    format!("decision/{pause}/{call_id}")
}
