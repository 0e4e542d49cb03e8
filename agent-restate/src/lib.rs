//! Durable runs on [Restate](https://restate.dev): a run survives a crash of its process without
//! calling the model again for a step it already made, or running a tool call again that already
//! finished.
//!
//! [`DurableAgent`] serves an ordinary [`Agent`](agent_core::Agent) as a Restate *workflow*, bound to a
//! `restate_sdk` endpoint next to any other services, which [`serve`] serves. Each run is one
//! workflow instance, keyed by the run id the client picks; through Restate's ingress:
//!
//! | request | what it does |
//! |---|---|
//! | `POST /{name}/{run_id}/run` `{"input": "..."}` | runs the agent and answers with a [`DurableOutput`] (add `/send` to only start it) |
//! | `POST /{name}/{run_id}/output` | waits for that run's output: what `run` answers, however often it is asked; `404` when no run with that id starts within 10 s ([`DurableAgent::output_waits_for_start`]) |
//! | `GET /restate/workflow/{name}/{run_id}/attach` | the same, through Restate's own endpoint (`/output` there peeks) |
//! | `POST /{name}/{run_id}/pending` | the calls the run waits on ([`Pending`]) |
//! | `POST /{name}/{run_id}/decide` `{"call_id": "...", "decision": "approve"}` | settles a waiting call ([`DecisionRequest`]) |
//!
//! A `run` body ([`DurableRequest`]) is `{"input": "..."}` (with `"parts"`: images, documents) or
//! `{"messages": [...]}` (a conversation to go on with), either with a `"context"` for the
//! agent's context function to read. A body of another shape is refused (400) with an error that
//! names the shapes expected; a decision on a call that does not wait is refused (400), and a
//! second decision on a call (409), also once the run has gone on.
//!
//! **Each run's context.** An `Agent<S>` whose tools take [`State`](agent_core::State) of an `S` needs
//! a context for each run, as an ordinary run does: [`DurableAgent::context`] makes it from the
//! [`Invocation`] (the run id, the request's headers, which Restate's ingress passes on, or the
//! body's `"context"`), or refuses the run with a [`Rejection`] and its status (`401`, `403`,
//! `400`), which the client of `run` and `output` gets; a refused run never reaches the model. A
//! `DurableAgent` of an agent that needs a context is not bound to an endpoint until it has that
//! function: the compiler says so. Restate journals the invocation's body and headers, so the
//! context made from them is the same on every replay.
//!
//! ```no_run
//! use std::sync::Arc;
//!
//! use agent_restate::restate_sdk::prelude::Endpoint;
//! use agent_restate::{DurableAgent, Rejection};
//! use agent_core::{Agent, State, tool};
//! use serde::Deserialize;
//!
//! #[derive(Clone, Deserialize)]
//! struct User {
//!     name: String,
//! }
//!
//! /// Who is asking.
//! #[tool]
//! fn whoami(State(user): State<User>) -> String {
//!     user.name
//! }
//!
//! # fn endpoint(agent: Agent<User>) {
//! let agent = Arc::new(agent);
//! let endpoint = Endpoint::builder()
//!     // `curl .../Mine/run-1/run -H 'x-user: ada' -d '{"input": "Who am I?"}'`
//!     .bind(DurableAgent::new("Mine", Arc::clone(&agent)).context(|invocation| {
//!         let name = invocation
//!             .header("x-user")
//!             .ok_or_else(|| Rejection::unauthorized("who is asking? send x-user"))?;
//!         Ok(User { name: name.to_owned() })
//!     }))
//!     // `curl .../Theirs/run-1/run -d '{"input": "Who am I?", "context": {"name": "ada"}}'`
//!     .bind(DurableAgent::new("Theirs", agent).context(|invocation| invocation.context::<User>()))
//!     .build();
//! # }
//! ```
//!
//! **Typed runs.** [`DurableAgent::output`] asks each run for a value of a type, as
//! [`RunRequest::output`](agent_core::RunRequest::output) does: the workflow's output has it as JSON
//! in [`DurableOutput::value`] (read back with [`DurableOutput::value_as`]), and Restate's
//! discovery learns its schema. An answer that does not fit goes back to the model, each retry a
//! journaled model call like any other; a run whose answers are refused past its retries, or that
//! ends before one (a limit), ends the workflow with a terminal error (`500`) whose message says
//! why ("the model gave no acceptable output in 3 tries; the last one: ..."). **A typed run does
//! not pause**: a call that would wait for an approval or for the caller is answered as not run,
//! and the model goes on without it; an agent whose runs need approvals serves them in text.
//!
//! The Restate SDK is re-exported as [`restate_sdk`], so the endpoint, its options and this
//! module's types come from the same version: import it from here
//! (`use agent_restate::restate_sdk::prelude::Endpoint;`), with no dependency of your own.
//!
//! **One run per id.** A workflow's `run` handler runs once per key, and the key is the run's
//! idempotency key: a client that retries its `run` request (a timeout, a lost connection) with the
//! same run id never starts a second run. Restate answers such a retry `409` ("the workflow method
//! was already invoked"), not with the output: a client that may retry starts the run with
//! `/run/send` (or treats a `409` as "started") and reads the output from `output` (or `attach`),
//! which answers as often as it is asked, while the run goes on and after it ended. Restate refuses
//! the `idempotency-key` header on a workflow's handlers (400): the run id is the key. A run id is
//! the client's to make (an order number, a conversation turn, a UUID); it names the run in every
//! later request (`pending`, `decide`, `output`). A plain (keyless) service handler is not offered:
//! a run that waits for an approval needs the durable promises and the state that only a
//! workflow's key holds, and its `decide` requests need a key to name it by.
//!
//! **Journaled steps.** Each model call and each tool call is a `run` step of the invocation: the
//! Restate server records its result before the loop goes on. When the process dies, Restate
//! invokes the workflow again (on a restart, or on another instance of the service) and the loop
//! runs again from the start, getting each recorded reply and result back instead of making the
//! call, until it reaches the first step that was not recorded and carries on from there. A model
//! call that fails with a retryable error (rate limit, overload, 5xx, timeout) after the adapter's
//! own retries is tried again by Restate, with the workflow's retry policy; any other model error
//! is recorded and ends the run. A [`Fallback`](agent_core::Fallback) chain is one model call: the step
//! records the reply of whichever model answered, with its name
//! ([`ChatResponse::model`](agent_core::ChatResponse::model)), so a replay names the model that
//! answered the first time ([`DurableOutput::step_models`]); a chain whose every model failed is
//! tried again when one of their errors is retryable.
//!
//! **Guards.** A guard's verdict that takes time (a model asked as a judge,
//! [`Judge`](agent_core::guard::Judge)) is a `run` step too, named after the guard, the place and
//! the step: a replay gets the recorded verdict back and never asks the judge again, and a
//! recorded trip ends the replayed run as it ended the first one. A verdict given at once is plain
//! code, run again on every replay: decide it from what the guard is shown only. A verdict the
//! journal could not record lets nothing through: the run trips.
//!
//! **Approvals.** A call that waits (an approver that answers [`Approval::Defer`](agent_core::Approval),
//! as [`Agent::defer_approvals`](agent_core::Agent::defer_approvals) does, or an
//! [`ExternalTool`](agent_core::ExternalTool)) waits on a durable promise: the invocation suspends, no
//! process holds it, and the `decide` request, whenever it comes and whichever instance serves it,
//! resumes the run.
//!
//! # Determinism: what a durable run asks of the code around it
//!
//! A replay must make the same calls in the same order as the first run, or Restate reports a
//! journal mismatch. So:
//! - **Tools do their side effects inside their call.** A call is one step; anything a tool does
//!   is covered by it. What hooks, approvers, output validators and the context function do runs
//!   again on every replay, outside any step: keep them free of side effects and decide from their
//!   inputs only (no clock, no randomness, no reads of data that changes; the context function's
//!   input is the journaled invocation). An approver that needs a person defers. Hooks see
//!   replayed steps again (`on_model_response`, `on_tool_result`).
//! - **The calls of a step run one after another**, in the order the model made them, so that the
//!   journal's order is the same on every replay.
//! - **No wall-clock time limit** ([`Agent::time_limit`](agent_core::Agent::time_limit)) applies: a replay would
//!   reach it at another point. Restate's own inactivity and abort timeouts bound a run's
//!   attempts ([`DurableAgent::options`]).
//! - **Nothing is streamed**: a replayed step has no deltas to send.
//! - **A new version of the agent is a new deployment.** Restate keeps each run on the deployment
//!   it started on, so a run in flight is never replayed against tools or prompts that changed:
//!   serve the new version at a new URL, register it, and retire the old one once its runs end.
//!
//! # Exactly once, and what a crash in the middle of a tool call does
//!
//! A finished tool call is never run again. A call that is cut off *while it runs* has no
//! recorded result, and what happens then depends on the tool:
//! - A tool marked safe to repeat, [`read_only`](agent_core::ToolAnnotations::read_only) or
//!   [`idempotent`](agent_core::ToolAnnotations::idempotent) (`#[tool(read_only)]`,
//!   `#[tool(idempotent)]`), simply runs again.
//! - Any other tool runs **at most once**: before it runs, the run records that it started; a
//!   replay that finds that record but no result does not run it again, and answers the model that
//!   the outcome is unknown and must be checked. With no crash mid-call, that is exactly once.
//!
//! To make a side effect in another system happen exactly once even then, give that system an
//! idempotency key that is the same on every replay, and mark the tool `idempotent`: a
//! [`CallInfo`](agent_core::CallInfo) parameter gives the run id (the workflow key) and the call's id
//! (stable, since the model's reply that made the call is itself recorded), and
//! [`CallInfo::idempotency_key`](agent_core::CallInfo::idempotency_key) joins them. A replay of a
//! call cut off mid-way runs it again under the same key, and the other system does the work once:
//!
//! ```
//! use agent_core::{CallInfo, ToolError, tool};
//!
//! # struct Payments;
//! # impl Payments {
//! #     async fn charge(&self, _key: &str, _cents: u32) -> Result<String, String> { Ok("ch_1".into()) }
//! # }
//! # static PAYMENTS: Payments = Payments;
//! /// Charge the customer's card.
//! #[tool(idempotent)]
//! async fn charge(call: CallInfo, cents: u32) -> Result<String, ToolError> {
//!     // The payment API does one charge per idempotency key, however often it is asked.
//!     let charge = PAYMENTS
//!         .charge(&call.idempotency_key(), cents)
//!         .await
//!         .map_err(ToolError::failed)?;
//!     Ok(format!("charged {cents} cents: {charge}"))
//! }
//! ```

mod answer;
mod discovery;
mod invocation;
mod journal;
mod serve;
mod service;
mod wire;

pub use answer::{DurableAnswer, TextAnswer, TypedAnswer};
pub use invocation::{ContextSource, Contextless, FromInvocation, Invocation, Rejection};
pub use restate_sdk;
pub use serve::serve;
pub use service::DurableAgent;
pub use wire::{DecisionRequest, DurableOutput, DurableRequest, Pending};
