//! What the durable agent's handlers take and give, as JSON through Restate's ingress.

use serde::{Deserialize, Serialize};

use crate::content::Part;
use crate::message::{Message, Usage};
use crate::run::{Agent, Decision, Input, PendingCall, RunOutput, RunRequest, StopReason};

/// The body of a `run` request: a new conversation's input, or a whole conversation to go on with.
///
/// ```json
/// {"input": "What is the weather in Paris?"}
/// ```
///
/// A body of another shape is refused (400) with an error that says which shapes are expected.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum DurableRequest {
    /// A new conversation: the agent's system prompt, then this user message.
    Input {
        /// The user's message.
        input: String,
        /// Images, documents or audio sent with it.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        parts: Vec<Part>,
    },
    /// A conversation so far (with its system prompt), ending with the message to answer.
    Messages {
        /// The conversation.
        messages: Vec<Message>,
    },
}

/// The forms a `run` request takes, for the errors that name them.
const EXPECTED: &str =
    r#"a run request is {"input": "..."} (with "parts" if any) or {"messages": [...]}"#;

/// Read by the key it has, so a body of the wrong shape is told what was expected, and a body of
/// the right shape what is wrong in it (where serde's untagged enums only say that no variant
/// matched).
impl<'de> Deserialize<'de> for DurableRequest {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;

        #[derive(Deserialize)]
        struct InputForm {
            input: String,
            #[serde(default)]
            parts: Vec<Part>,
        }
        #[derive(Deserialize)]
        struct MessagesForm {
            messages: Vec<Message>,
        }

        let value = serde_json::Value::deserialize(deserializer)?;
        let Some(object) = value.as_object() else {
            return Err(D::Error::custom(format_args!("{EXPECTED}, not {value}")));
        };
        if object.contains_key("input") {
            let InputForm { input, parts } = serde_json::from_value(value)
                .map_err(|error| D::Error::custom(format_args!("{EXPECTED}: {error}")))?;
            Ok(DurableRequest::Input { input, parts })
        } else if object.contains_key("messages") {
            let MessagesForm { messages } = serde_json::from_value(value)
                .map_err(|error| D::Error::custom(format_args!("{EXPECTED}: {error}")))?;
            Ok(DurableRequest::Messages { messages })
        } else {
            let keys: Vec<&String> = object.keys().collect();
            Err(D::Error::custom(format_args!(
                "{EXPECTED}; this one has neither \"input\" nor \"messages\" (its keys: {keys:?})"
            )))
        }
    }
}

impl DurableRequest {
    /// A new conversation on `input`.
    pub fn input(input: impl Into<String>) -> Self {
        DurableRequest::Input {
            input: input.into(),
            parts: Vec::new(),
        }
    }

    /// The run this request asks for, of `agent`: on the input, or on the conversation as it is.
    pub(super) fn into_run<S: Send + Sync + 'static>(self, agent: &Agent<S>) -> RunRequest<'_, S> {
        match self {
            DurableRequest::Input { input, parts } => agent.run(input).parts(parts),
            DurableRequest::Messages { messages } => agent.run(Input::nothing()).history(messages),
        }
    }
}

/// What a finished durable run returns: its answer, why it ended, and the whole conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DurableOutput {
    /// The model's final answer, or the note saying why the run stopped before one.
    pub text: String,
    /// Why the run ended.
    pub stop_reason: StopReason,
    /// How many model calls the run made.
    pub steps: usize,
    /// Tokens used over the whole run.
    pub usage: Usage,
    /// The model that answered each model call, as the journal recorded its reply
    /// ([`RunOutput::step_models`]); left out when no reply named its model.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub step_models: Vec<Option<String>>,
    /// The whole conversation.
    pub messages: Vec<Message>,
}

impl From<RunOutput> for DurableOutput {
    fn from(output: RunOutput) -> Self {
        DurableOutput {
            text: output.text,
            stop_reason: output.stop_reason,
            steps: output.steps,
            usage: output.usage,
            step_models: output.step_models,
            messages: output.messages,
        }
    }
}

/// The body of a `decide` request: the decision on one waiting call.
///
/// ```json
/// {"call_id": "call_1", "decision": "approve"}
/// {"call_id": "call_1", "decision": "deny", "reason": "not today"}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DecisionRequest {
    /// The id of the waiting call.
    pub call_id: String,
    /// What to do with it.
    #[serde(flatten)]
    pub decision: Decision,
}

impl DecisionRequest {
    /// The decision on the call `call_id`.
    pub fn new(call_id: impl Into<String>, decision: Decision) -> Self {
        DecisionRequest {
            call_id: call_id.into(),
            decision,
        }
    }
}

/// The calls a durable run waits on (what the `pending` handler returns): empty when it waits on
/// nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Pending {
    /// The waiting calls, in the order the model made them.
    pub calls: Vec<PendingCall>,
}
