//! What Restate's discovery request learns of a durable agent: a workflow and its four handlers.

use restate_sdk::discovery;
use restate_sdk::serde::Json;
use serde_json::Value;

/// What Restate's discovery learns: a workflow named `name` with its four handlers, whose `run` and
/// `output` answer with `output_schema` when it is known (a typed agent's).
pub(super) fn workflow(name: &str, output_schema: Option<Value>) -> discovery::Service {
    let json = || Some(discovery::OutputPayload::from_metadata::<Json<()>>());
    let answer = || {
        let mut payload = discovery::OutputPayload::from_metadata::<Json<()>>();
        if output_schema.is_some() {
            payload.json_schema.clone_from(&output_schema);
        }
        Some(payload)
    };
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
                answer(),
                "Runs the agent once for this workflow id: {\"input\": \"...\"}, with a \"context\" if the agent reads one.",
            ),
            handler(
                "output",
                discovery::HandlerType::Shared,
                discovery::InputPayload::empty(),
                answer(),
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
