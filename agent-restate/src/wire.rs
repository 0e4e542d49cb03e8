//! What the durable agent's handlers take and give, as JSON through Restate's ingress.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use agent_core::Part;
use agent_core::context::Summary;
use agent_core::{
    Agent, ChildRun, Decision, Input, PendingCall, RunOutput, RunRequest, StopReason,
};
use agent_core::{Message, Usage};

/// The body of a `run` request: a new conversation's input, or a whole conversation to go on with,
/// and in either form a `context` for the agent's
/// [context function](super::DurableAgent::context) to read
/// ([`Invocation::context`](super::Invocation::context)).
///
/// ```json
/// {"input": "What is the weather in Paris?"}
/// {"input": "What is on my calendar?", "context": {"user": "ada"}}
/// {"messages": [...], "context": {"user": "ada"}}
/// ```
///
/// A body of another shape is refused (400) with an error that says which shapes are expected.
///
/// ```
/// use agent_restate::DurableRequest;
/// use serde_json::json;
///
/// let request = DurableRequest::input("What is on my calendar?").context(json!({"user": "ada"}));
/// assert_eq!(
///     serde_json::to_value(&request).unwrap(),
///     json!({"input": "What is on my calendar?", "context": {"user": "ada"}})
/// );
/// ```
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
        /// What the context function reads, if anything.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        context: Option<Value>,
    },
    /// A conversation so far (with its system prompt), ending with the message to answer.
    Messages {
        /// The conversation.
        messages: Vec<Message>,
        /// The summaries a context policy made of it in earlier runs
        /// ([`DurableOutput::summaries`]), sent again rather than made anew.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        summaries: Vec<Summary>,
        /// What the context function reads, if anything.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        context: Option<Value>,
    },
}

/// The forms a `run` request takes, for the errors that name them.
const EXPECTED: &str = r#"a run request is {"input": "..."} (with "parts" if any) or {"messages": [...]}, and a "context" if the agent reads one"#;

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
            #[serde(default)]
            context: Option<Value>,
        }
        #[derive(Deserialize)]
        struct MessagesForm {
            messages: Vec<Message>,
            #[serde(default)]
            summaries: Vec<Summary>,
            #[serde(default)]
            context: Option<Value>,
        }

        let value = Value::deserialize(deserializer)?;
        let Some(object) = value.as_object() else {
            return Err(D::Error::custom(format_args!("{EXPECTED}, not {value}")));
        };
        if object.contains_key("input") {
            let InputForm {
                input,
                parts,
                context,
            } = serde_json::from_value(value)
                .map_err(|error| D::Error::custom(format_args!("{EXPECTED}: {error}")))?;
            Ok(DurableRequest::Input {
                input,
                parts,
                context,
            })
        } else if object.contains_key("messages") {
            let MessagesForm {
                messages,
                summaries,
                context,
            } = serde_json::from_value(value)
                .map_err(|error| D::Error::custom(format_args!("{EXPECTED}: {error}")))?;
            Ok(DurableRequest::Messages {
                messages,
                summaries,
                context,
            })
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
            context: None,
        }
    }

    /// A conversation to go on with, ending with the message to answer.
    pub fn messages(messages: Vec<Message>) -> Self {
        DurableRequest::Messages {
            messages,
            summaries: Vec::new(),
            context: None,
        }
    }

    /// The same conversation with the summaries made of it in earlier runs
    /// ([`DurableOutput::summaries`]); an input request has none, and is left as it is.
    pub fn summaries(mut self, known: Vec<Summary>) -> Self {
        if let DurableRequest::Messages { summaries, .. } = &mut self {
            *summaries = known;
        }
        self
    }

    /// Sends `context` with the request, for the agent's
    /// [context function](super::DurableAgent::context) to read.
    pub fn context(mut self, context: Value) -> Self {
        match &mut self {
            DurableRequest::Input { context: slot, .. }
            | DurableRequest::Messages { context: slot, .. } => *slot = Some(context),
        }
        self
    }

    /// The request's `context`, if it has one.
    pub(super) fn context_value(&self) -> Option<&Value> {
        match self {
            DurableRequest::Input { context, .. } | DurableRequest::Messages { context, .. } => {
                context.as_ref()
            }
        }
    }

    /// The run this request asks for, of `agent`: on the input, or on the conversation as it is.
    pub(super) fn into_run<S: Send + Sync + 'static>(self, agent: &Agent<S>) -> RunRequest<'_, S> {
        match self {
            DurableRequest::Input { input, parts, .. } => agent.run(input).parts(parts),
            DurableRequest::Messages {
                messages,
                summaries,
                ..
            } => agent
                .run(Input::nothing())
                .history(messages)
                .summaries(summaries),
        }
    }
}

/// What a finished durable run returns: its answer, why it ended, and the whole conversation; for
/// a typed run ([`DurableAgent::output`](super::DurableAgent::output)), its value as JSON.
///
/// ```json
/// {"value": {"title": "Printer on fire", "urgent": true}, "text": "...", "stop_reason": {"stop": "finished"}, ...}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DurableOutput {
    /// A typed run's value, as JSON (read it as its type with
    /// [`value_as`](DurableOutput::value_as)); left out for a run that answers in text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    /// The model's final answer (a typed run's: the JSON the value was read from), or the note
    /// saying why the run stopped before one.
    pub text: String,
    /// Why the run ended.
    pub stop_reason: StopReason,
    /// How many model calls the run made.
    pub steps: usize,
    /// Tokens used over the whole run, by its own agent ([`tree_usage`](Self::tree_usage) counts
    /// the agents it called as tools too).
    pub usage: Usage,
    /// The model that answered each model call, as the journal recorded its reply
    /// ([`RunOutput::step_models`]); left out when no reply named its model.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub step_models: Vec<Option<String>>,
    /// The whole conversation.
    pub messages: Vec<Message>,
    /// The summaries the agent's context policy made of it ([`RunOutput::summaries`]); left out
    /// when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub summaries: Vec<Summary>,
    /// The runs its calls started (agents called as tools), each whole with its usage and its
    /// own children ([`RunOutput::children`]); left out when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<ChildRun>,
}

impl DurableOutput {
    /// A typed run's value, read as a `T` (what the agent's
    /// [`output`](super::DurableAgent::output) was given, or any type its JSON fits). An error
    /// when the value does not fit `T`, or when the run answered in text and has no value.
    ///
    /// ```
    /// use agent_restate::DurableOutput;
    /// use serde::Deserialize;
    ///
    /// #[derive(Debug, Deserialize, PartialEq)]
    /// struct Ticket {
    ///     title: String,
    ///     urgent: bool,
    /// }
    ///
    /// // What `POST /{name}/{run_id}/output` answered, say.
    /// let body = r#"{"value": {"title": "Printer on fire", "urgent": true},
    ///     "text": "{\"title\": \"Printer on fire\", \"urgent\": true}",
    ///     "stop_reason": {"stop": "finished"}, "steps": 1,
    ///     "usage": {"input_tokens": 10, "output_tokens": 5}, "messages": []}"#;
    /// let output: DurableOutput = serde_json::from_str(body).unwrap();
    /// let ticket: Ticket = output.value_as().unwrap();
    /// assert_eq!(ticket, Ticket { title: "Printer on fire".into(), urgent: true });
    /// ```
    pub fn value_as<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        match &self.value {
            Some(value) => T::deserialize(value),
            None => Err(serde::de::Error::custom(
                "this run answered in text and has no value: only a typed durable agent's runs have one",
            )),
        }
    }

    /// The tokens of the whole tree of runs: this run's and every run below it, as
    /// [`RunOutput::tree_usage`] counts them.
    pub fn tree_usage(&self) -> Usage {
        let children = self.children.iter().map(|child| match &child.outcome {
            Ok(run) => run.tree_usage(),
            Err(failure) => failure.usage,
        });
        children.fold(self.usage, |sum, usage| sum + usage)
    }

    /// The output of a run that answered with `value` (a typed run's), or in text (`None`).
    pub(super) fn new(output: RunOutput, value: Option<Value>) -> Self {
        DurableOutput {
            value,
            text: output.text,
            stop_reason: output.stop_reason,
            steps: output.steps,
            usage: output.usage,
            step_models: output.step_models,
            messages: output.messages,
            summaries: output.summaries,
            children: output.children,
        }
    }
}

impl From<RunOutput> for DurableOutput {
    fn from(output: RunOutput) -> Self {
        DurableOutput::new(output, None)
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parse(body: Value) -> Result<DurableRequest, String> {
        serde_json::from_value(body).map_err(|error| error.to_string())
    }

    #[test]
    fn either_form_carries_a_context() {
        let request = parse(json!({ "input": "hi", "context": { "user": "ada" } })).unwrap();
        assert_eq!(request.context_value(), Some(&json!({ "user": "ada" })));
        assert_eq!(
            request,
            DurableRequest::input("hi").context(json!({ "user": "ada" }))
        );

        let request = parse(json!({
            "messages": [{ "role": "user", "content": "hi" }],
            "context": ["ada", 7]
        }))
        .unwrap();
        assert_eq!(request.context_value(), Some(&json!(["ada", 7])));
        let DurableRequest::Messages { messages, .. } = &request else {
            panic!("the messages form: {request:?}");
        };
        assert_eq!(messages.len(), 1);

        // A request sent back as it was read.
        let sent = serde_json::to_value(&request).unwrap();
        assert_eq!(parse(sent).unwrap(), request);
    }

    #[test]
    fn a_context_left_out_or_null_is_none() {
        let request = parse(json!({ "input": "hi" })).unwrap();
        assert_eq!(request.context_value(), None);
        assert_eq!(
            serde_json::to_value(&request).unwrap(),
            json!({ "input": "hi" })
        );
        let request = parse(json!({ "input": "hi", "context": null })).unwrap();
        assert_eq!(request.context_value(), None);
        assert_eq!(
            parse(json!({ "messages": [] })).unwrap(),
            DurableRequest::messages(Vec::new())
        );
    }

    #[test]
    fn a_body_of_another_shape_is_told_the_shapes_expected() {
        let error = parse(json!({ "context": { "user": "ada" } })).unwrap_err();
        assert_eq!(
            error,
            r#"a run request is {"input": "..."} (with "parts" if any) or {"messages": [...]}, and a "context" if the agent reads one; this one has neither "input" nor "messages" (its keys: ["context"])"#
        );
        let error = parse(json!({ "input": 7, "context": {} })).unwrap_err();
        assert!(
            error.starts_with(r#"a run request is {"input": "..."}"#)
                && error.contains("invalid type: integer `7`, expected a string"),
            "{error}"
        );
        let error = parse(json!("hi")).unwrap_err();
        assert!(error.ends_with(r#", not "hi""#), "{error}");
    }

    #[test]
    fn a_typed_runs_value_is_read_as_its_type() {
        #[derive(Debug, Deserialize, PartialEq)]
        struct Ticket {
            title: String,
        }

        let text = DurableOutput::new(
            RunOutput {
                text: "Hi.".into(),
                messages: Vec::new(),
                steps: 1,
                stop_reason: StopReason::Finished,
                usage: Usage::default(),
                step_usage: Vec::new(),
                step_models: Vec::new(),
                paused: None,
                summaries: Vec::new(),
                agent: Default::default(),
                step_agents: Vec::new(),
                children: Vec::new(),
            },
            None,
        );
        let error = text.value_as::<Ticket>().unwrap_err();
        assert!(error.to_string().contains("answered in text"), "{error}");
        assert!(
            !serde_json::to_value(&text)
                .unwrap()
                .as_object()
                .unwrap()
                .contains_key("value")
        );

        let typed = DurableOutput {
            value: Some(json!({ "title": "Printer on fire" })),
            ..text
        };
        assert_eq!(
            typed.value_as::<Ticket>().unwrap(),
            Ticket {
                title: "Printer on fire".into()
            }
        );
        let error = typed.value_as::<Vec<u8>>().unwrap_err();
        assert!(error.to_string().contains("expected a sequence"), "{error}");
        let sent = serde_json::to_value(&typed).unwrap();
        assert_eq!(sent["value"], json!({ "title": "Printer on fire" }));
        assert_eq!(
            serde_json::from_value::<DurableOutput>(sent).unwrap(),
            typed
        );
    }

    /// A tree's output keeps the runs its calls started, so the whole tree's usage is in it (it
    /// carried the top agent's alone), and sent and read back it is the same.
    #[tokio::test]
    async fn a_trees_output_keeps_its_children_and_their_usage() {
        use agent_core::testing::ScriptedModel;
        use agent_core::{AssistantMessage, ChatResponse, ToolCall};

        let said =
            |text: &str, usage| ChatResponse::new(AssistantMessage::text(text)).with_usage(usage);
        let child = Agent::new(ScriptedModel::new([said("Found it.", Usage::new(30, 5))]));
        let call = ToolCall::new("1", "find", r#"{"input":"the file"}"#);
        let parent = Agent::new(ScriptedModel::new([
            ChatResponse::new(AssistantMessage::tool_calls([call])).with_usage(Usage::new(10, 2)),
            said("Here it is.", Usage::new(20, 3)),
        ]))
        .named("desk")
        .try_tool(child.as_tool("find", "Find a file."))
        .unwrap();
        let output = DurableOutput::from(parent.run("Where is it?").await.unwrap());
        assert_eq!(output.usage, Usage::new(30, 5));
        assert_eq!(output.tree_usage(), Usage::new(60, 10));
        assert_eq!(output.children[0].path.as_str(), "desk/find");
        let sent = serde_json::to_value(&output).unwrap();
        assert_eq!(
            serde_json::from_value::<DurableOutput>(sent).unwrap(),
            output
        );
    }
}
