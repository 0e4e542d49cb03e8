//! The durable agent as a Restate workflow: its handlers (`run`, `output`, `decide`, `pending`), how Restate
//! reaches them, and what Restate is told about them.

use std::fmt;
use std::sync::Arc;

use restate_sdk::discovery;
use restate_sdk::endpoint::{self, ContextInternal, ServiceOptions};
use restate_sdk::errors::{HandlerError, HandlerResult, TerminalError};
use restate_sdk::serde::Json;
use restate_sdk::service::macro_support::{ServiceBoxFuture, service_definition};
use restate_sdk::service::{IntoServiceDefinition, Service, ServiceDefinition};

use super::journal::RestateJournal;
use crate::call_info::RunId;
use serde::{Deserialize, Serialize};

use super::wire::{DecisionRequest, DurableOutput, DurableRequest, Pending};
use crate::run::Agent;
use crate::run::{Decision, PendingCall, RunError};

/// The workflow state key under which a paused run keeps its [`Waiting`].
const PENDING: &str = "pending";

/// The durable promise the `output` handler waits on: the run's output, or its failure.
const OUTPUT: &str = "output";

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

/// Makes the context of each run from the run's id.
type MakeContext<S> = Arc<dyn Fn(&str) -> S + Send + Sync>;

/// An [`Agent`] served as a Restate workflow, so that its runs are durable: each model call and
/// each tool call is a journaled step, and a run whose process dies goes on where it was when
/// Restate replays it (on a restart, or on another instance), without calling the model or a
/// tool again for the steps already done. See the [module](super) for the handlers and the rules a
/// durable run follows.
///
/// ```no_run
/// use std::sync::Arc;
///
/// use agent_core::restate::{DurableAgent, serve};
/// use agent_core::testing::ScriptedModel;
/// use agent_core::{AssistantMessage, agent};
/// use agent_core::restate::restate_sdk::prelude::Endpoint;
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
pub struct DurableAgent<S = ()> {
    name: String,
    agent: Arc<Agent<S>>,
    make_context: MakeContext<S>,
    options: Option<ServiceOptions>,
}

impl DurableAgent<()> {
    /// Serves `agent` as the Restate workflow `name` (the first segment of its ingress URLs).
    ///
    /// # Panics
    ///
    /// When binding it to an endpoint, if `name` is not a valid Restate service name (letters,
    /// digits and `_`, not starting with a digit).
    pub fn new(name: impl Into<String>, agent: Arc<Agent<()>>) -> Self {
        DurableAgent::with_context(name, agent, |_| ())
    }
}

impl<S: Send + Sync + 'static> DurableAgent<S> {
    /// Serves an agent whose tools take a context, made for each run from the run's id (the
    /// workflow key). The id is the same on every replay of the run; tools that only need it for
    /// an idempotency key take a [`CallInfo`](crate::CallInfo) instead, whose run id it is.
    pub fn with_context(
        name: impl Into<String>,
        agent: Arc<Agent<S>>,
        make_context: impl Fn(&str) -> S + Send + Sync + 'static,
    ) -> Self {
        DurableAgent {
            name: name.into(),
            agent,
            make_context: Arc::new(make_context),
            options: None,
        }
    }

    /// Restate's options for the workflow: timeouts, retention, and the retry policy Restate
    /// applies to the run when a step fails or its process dies.
    pub fn options(mut self, options: ServiceOptions) -> Self {
        self.options = Some(options);
        self
    }
}

impl<S> fmt::Debug for DurableAgent<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DurableAgent")
            .field("name", &self.name)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl<S: Send + Sync + 'static> IntoServiceDefinition for DurableAgent<S> {
    fn into_service_definition(self) -> ServiceDefinition {
        let discovery = workflow(&self.name);
        let dispatcher = Handlers {
            agent: self.agent,
            make_context: self.make_context,
        };
        let definition = service_definition(dispatcher, discovery);
        match self.options {
            Some(options) => definition.options(options),
            None => definition,
        }
    }
}

/// What Restate reaches: the four handlers of one durable agent.
struct Handlers<S> {
    agent: Arc<Agent<S>>,
    make_context: MakeContext<S>,
}

impl<S: Send + Sync + 'static> Service for Handlers<S> {
    type Future = ServiceBoxFuture;

    fn handle(&self, restate: ContextInternal) -> Self::Future {
        let agent = Arc::clone(&self.agent);
        let make_context = Arc::clone(&self.make_context);
        Box::pin(async move {
            match restate.handler_name() {
                "run" => {
                    let (Json(body), metadata) = restate.input::<Json<serde_json::Value>>().await;
                    let outcome = match serde_json::from_value::<DurableRequest>(body) {
                        Ok(request) => {
                            let context = make_context(&metadata.key);
                            let run_id = RunId::from(metadata.key.as_str());
                            run(&restate, &agent, &context, request, run_id).await
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
                    let ((), _) = restate.input::<()>().await;
                    let outcome = restate
                        .promise::<Json<DurableOutput>>(OUTPUT)
                        .await
                        .map_err(HandlerError::from);
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

/// The workflow's `run` handler: one run, from its input to its end, waiting on a durable promise
/// for each call that waits for a person or the caller.
async fn run<S: Send + Sync + 'static>(
    restate: &ContextInternal,
    agent: &Agent<S>,
    context: &S,
    request: DurableRequest,
    run_id: RunId,
) -> Result<Json<DurableOutput>, TerminalError> {
    let journal = RestateJournal { context: restate };
    let mut outcome = request
        .into_run(agent)
        .context(context)
        .journal(&journal)
        .run_id(run_id.clone())
        .await;
    let mut pause = 0;
    let mut decided = Vec::new();
    loop {
        pause += 1;
        let output = outcome.map_err(failed)?;
        let Some(paused) = output.paused else {
            return Ok(Json(DurableOutput::from(output)));
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
        outcome = agent
            .resume(paused, decisions)
            .context(context)
            .journal(&journal)
            .run_id(run_id.clone())
            .await;
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

/// A run that failed ends its workflow with a terminal error (Restate does not retry it): the
/// same failure would come back. The error's text says which step failed and why.
fn failed(error: RunError) -> TerminalError {
    TerminalError::new_with_code(500, error.to_string())
}

/// What Restate's discovery learns: a workflow named `name` with its four handlers.
fn workflow(name: &str) -> discovery::Service {
    let json = || Some(discovery::OutputPayload::from_metadata::<Json<()>>());
    let handler = |name: &str, ty, input, output, documentation: &str| discovery::Handler {
        name: discovery::HandlerName::try_from(name.to_owned()).expect("a valid handler name"),
        input: Some(input),
        output,
        ty: Some(ty),
        documentation: Some(documentation.to_owned()),
        metadata: Default::default(),
        abort_timeout: None,
        inactivity_timeout: None,
        journal_retention: None,
        idempotency_retention: None,
        workflow_completion_retention: None,
        enable_lazy_state: None,
        ingress_private: None,
        retry_policy_initial_interval: None,
        retry_policy_max_interval: None,
        retry_policy_max_attempts: None,
        retry_policy_exponentiation_factor: None,
        retry_policy_on_max_attempts: None,
    };
    let json_input = || discovery::InputPayload::from_metadata::<Json<()>>();
    discovery::Service {
        ty: discovery::ServiceType::Workflow,
        name: discovery::ServiceName::try_from(name.to_owned())
            .unwrap_or_else(|error| panic!("`{name}` is not a Restate service name: {error}")),
        handlers: vec![
            handler(
                "run",
                discovery::HandlerType::Workflow,
                json_input(),
                json(),
                "Runs the agent once for this workflow id: {\"input\": \"...\"}.",
            ),
            handler(
                "output",
                discovery::HandlerType::Shared,
                discovery::InputPayload::empty(),
                json(),
                "Waits for the run's output (what `run` answers), however often it is asked.",
            ),
            handler(
                "decide",
                discovery::HandlerType::Shared,
                json_input(),
                Some(discovery::OutputPayload::empty()),
                "Decides a waiting call: {\"call_id\": \"...\", \"decision\": \"approve\"}.",
            ),
            handler(
                "pending",
                discovery::HandlerType::Shared,
                discovery::InputPayload::empty(),
                json(),
                "The calls the run waits on.",
            ),
        ],
        documentation: Some("An agent-core agent whose runs are durable.".to_owned()),
        metadata: Default::default(),
        abort_timeout: None,
        inactivity_timeout: None,
        journal_retention: None,
        idempotency_retention: None,
        enable_lazy_state: None,
        ingress_private: None,
        retry_policy_initial_interval: None,
        retry_policy_max_interval: None,
        retry_policy_max_attempts: None,
        retry_policy_exponentiation_factor: None,
        retry_policy_on_max_attempts: None,
    }
}
