//! Hand-offs: an agent gives the conversation to another ([`Handoff`]). The model calls a tool
//! (`transfer_to_<name>`); the step's calls done, the run goes on with the other agent, on the
//! same transcript (nothing copied), each of its requests showing it what the hand-off says of
//! the conversation before it ([`HandoffHistory`]). A later turn goes to the agent that holds the
//! conversation: the one its last hand-off went to.

use std::fmt;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use super::word_parameters;
use crate::message::AssistantMessage;
use crate::message::{Message, ToolCall};
use crate::model::{ChatRequest, ChatResponse, ModelError};
use crate::reasons::not_run::NotRun;
use crate::reasons::tool_error::ToolError;
use crate::run::agent::Agent;
use crate::run::outcome::StopReason;
use crate::run::seams::{CallPolicy, ModelCall, ModelLayer, Next, ReplyRulings, Ruling, RunStatus};
use crate::texts::Texts;
use crate::tool::arguments::SchemaFit;
use crate::tool::closure::{arguments_of, parse};
use crate::tool::scope::{AgentPath, RunScope};
use crate::tool::{BoxFuture, Tool, ToolDef, ToolOutput};

/// What the agent a conversation is handed to sees of the conversation before the hand-off.
/// After it, it sees everything; the transcript itself is never cut or copied.
#[derive(Clone, Default)]
#[non_exhaustive]
pub enum HandoffHistory {
    /// All of it (under its own system prompt).
    #[default]
    All,
    /// The last message the user sent before the hand-off.
    LastUserMessage,
    /// A summary the handing model writes as it hands off (the hand-off tool then asks for one),
    /// then the last message the user sent.
    Summary,
    /// What a function of the messages before the hand-off (the system prompt left out) makes
    /// of them.
    With(HistoryFn),
}

/// A function that makes what the agent handed to sees of the messages before the hand-off.
pub type HistoryFn = Arc<dyn Fn(&[Message]) -> Vec<Message> + Send + Sync>;

impl fmt::Debug for HandoffHistory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HandoffHistory::All => "All",
            HandoffHistory::LastUserMessage => "LastUserMessage",
            HandoffHistory::Summary => "Summary",
            HandoffHistory::With(_) => "With(..)",
        })
    }
}

/// A hand-off to another agent, given to [`Agent::try_handoff`]: the model of the agent that has it
/// can call `transfer_to_<name>` (the target's [name](Agent::named)) to give it the
/// conversation.
///
/// ```
/// use agent_core::testing::ScriptedModel;
/// use agent_core::{Agent, AssistantMessage, Handoff, HandoffHistory, ToolCall};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let billing = Agent::new(ScriptedModel::new([AssistantMessage::text("Your refund is on its way.")]))
///     .named("billing")
///     .system("You handle billing.");
/// let triage = Agent::new(ScriptedModel::new([AssistantMessage::tool_calls([
///     ToolCall::new("1", "transfer_to_billing", "{}"),
/// ])]))
/// .named("triage")
/// .try_handoff(Handoff::to(billing, "Refunds and invoices.").history(HandoffHistory::LastUserMessage))?;
///
/// let out = triage.run("Where is my refund?").await?;
/// assert_eq!(out.text, "Your refund is on its way.");
/// assert_eq!(out.agent.as_str(), "billing");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
pub struct Handoff<S = ()> {
    pub(crate) target: Agent<S>,
    pub(crate) tool: HandoffTool,
    pub(crate) history: HandoffHistory,
}

impl<S: Send + Sync + 'static> Handoff<S> {
    /// A hand-off to `target`, described to the model by `description` (when to hand off). The
    /// target should be [named](Agent::named): its name makes the tool's and the path the run's
    /// output and its usage go by. (An agent handed to from two places is two values: build it
    /// twice; its model, tools and texts can be shared.)
    pub fn to(target: Agent<S>, description: impl Into<String>) -> Self {
        let name = format!("transfer_to_{}", target.path.as_str());
        Handoff {
            tool: HandoffTool::new(name, description.into(), None),
            target,
            history: HandoffHistory::All,
        }
    }

    /// What the target sees of the conversation before the hand-off (all of it by default). The
    /// summary of [`HandoffHistory::Summary`] is described to the handing model in the target's
    /// texts ([`Texts::handoff_summary`]).
    pub fn history(mut self, history: HandoffHistory) -> Self {
        let summary = matches!(history, HandoffHistory::Summary);
        let summary = summary.then(|| self.target.tools.texts().handoff_summary());
        self.tool = HandoffTool::new(
            self.tool.definition.name.clone(),
            self.tool.definition.description.clone(),
            summary,
        );
        self.history = history;
        self
    }

    /// The name of the tool the model hands off by.
    pub fn tool_name(&self) -> &str {
        &self.tool.definition.name
    }

    /// The same hand-off, its agent's context bound (see [`Agent::bind_context`]).
    pub(crate) fn bind(self, context: Arc<S>) -> Handoff<()> {
        Handoff {
            target: self.target.bind_shared_context(context),
            tool: self.tool,
            history: self.history,
        }
    }
}

impl<S> fmt::Debug for Handoff<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handoff")
            .field("to", &self.target.path)
            .field("tool", &self.tool.definition.name)
            .field("history", &self.history)
            .finish()
    }
}

/// What the handing model writes when the hand-off passes a summary on. (Its field has no doc
/// comment: the model reads its description in the target's texts, `Texts::handoff_summary`,
/// and none of this one.)
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Summary {
    summary: String,
}

/// The tool a model hands off by. Its result says the conversation was handed on.
#[derive(Clone)]
pub(crate) struct HandoffTool {
    pub(crate) definition: ToolDef,
    /// Set when the hand-off passes a summary on: the tool takes it.
    summary: Option<SchemaFit>,
}

impl HandoffTool {
    /// The tool `name`; with `summary` (the words describing it) when it takes a summary.
    fn new(name: String, description: String, summary: Option<&str>) -> Self {
        let (parameters, fit) = match summary {
            Some(words) => {
                let (mut parameters, fit) = arguments_of::<Summary>();
                word_parameters(&mut parameters, "summary", words);
                (parameters, Some(fit))
            }
            None => (
                serde_json::json!({"type": "object", "properties": {}, "additionalProperties": false}),
                None,
            ),
        };
        HandoffTool {
            definition: ToolDef::new(name, description, parameters),
            summary: fit,
        }
    }
}

impl<S: Send + Sync + 'static> Tool<S> for HandoffTool {
    fn definition(&self) -> &ToolDef {
        &self.definition
    }

    fn call<'a>(
        &'a self,
        _context: &'a S,
        call: &'a ToolCall,
        _run: &'a RunScope,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        // A summary that does not parse goes back to the model, which writes it again; the
        // hand-off happens with the call that has one.
        let checked = match &self.summary {
            Some(fit) => parse::<Summary>(fit, &call.arguments).map(|_| ()),
            None => Ok(()),
        };
        Box::pin(std::future::ready(checked.map(|()| ToolOutput::Done)))
    }
}

/// An agent's hand-offs as a call policy: the first call of a reply to a hand-off tool ends the
/// run after the step, handed off ([`StopReason::HandedOff`]); other hand-off calls of the same
/// reply are not run. The call's result is worded by the run's texts.
pub(crate) struct HandOffs<S>(pub(crate) Vec<Handoff<S>>);

impl<S: Send + Sync + 'static> CallPolicy<S> for HandOffs<S> {
    fn on_reply(
        &self,
        status: &RunStatus<'_>,
        reply: &AssistantMessage,
        _cut_off: bool,
        rulings: &mut ReplyRulings<'_>,
    ) {
        let mut handed = false;
        for (index, call) in reply.tool_calls.iter().enumerate() {
            let Some(handoff) =
                (self.0.iter()).find(|handoff| handoff.tool.definition.name == call.name)
            else {
                continue;
            };
            if handed {
                rulings.rule(index, Ruling::not_run(NotRun::RunEnded));
                continue;
            }
            if let Some(fit) = &handoff.tool.summary
                && parse::<Summary>(fit, &call.arguments).is_err()
            {
                // Left to the tool, whose error says what to fix.
                continue;
            }
            handed = true;
            let text = status.texts.handed_off(handoff.target.path.as_str());
            rulings.rule(index, Ruling::Answer(Ok(ToolOutput::Text(text))));
            rulings.stop_after(StopReason::HandedOff {
                to: handoff.target.path.clone(),
            });
        }
    }
}

/// Where a conversation was handed to an agent: the call that did it, and what the agent sees of
/// what came before.
pub(crate) struct HandedOver<'r> {
    /// The id of the hand-off call.
    pub(crate) call_id: String,
    pub(crate) history: &'r HandoffHistory,
    /// The system prompt of the agent that holds the conversation.
    pub(crate) system: &'r str,
}

impl<S: Send + Sync + 'static> Agent<S> {
    /// Which agent holds a conversation begun with this one (its messages, a session's): the one
    /// its last hand-off went to, which a later turn goes to; this agent's own path when it was
    /// never handed on.
    pub fn holding(&self, messages: &[Message]) -> &AgentPath {
        &holder(self, messages).0.path
    }
}

/// The agent that holds a conversation begun with `entry`, and where it was handed over: the
/// target of its last hand-off call that was answered, following hand-offs from agent to agent.
pub(crate) fn holder<'r, S: Send + Sync + 'static>(
    entry: &'r Agent<S>,
    messages: &[Message],
) -> (&'r Agent<S>, Option<HandedOver<'r>>) {
    let mut holder = entry;
    let mut over = None;
    if entry.handoffs.0.is_empty() {
        return (holder, over);
    }
    for message in messages {
        let Message::Assistant(reply) = message else {
            continue;
        };
        for call in &reply.tool_calls {
            let Some(handoff) = (holder.handoffs.0.iter())
                .find(|handoff| handoff.tool.definition.name == call.name)
            else {
                continue;
            };
            let answered = messages.iter().any(|message| {
                matches!(message, Message::Tool(result)
                    if result.tool_call_id == call.id && !result.is_error)
            });
            if answered {
                holder = &handoff.target;
                over = Some(HandedOver {
                    call_id: call.id.clone(),
                    history: &handoff.history,
                    system: holder.system_prompt(),
                });
                break;
            }
        }
    }
    (holder, over)
}

/// What an agent that was handed a conversation is shown of it, as a model-call layer: its own
/// system prompt, what the hand-off says of the messages before it, then everything after.
pub(crate) struct HandoffView<'r> {
    pub(crate) over: HandedOver<'r>,
}

impl HandoffView<'_> {
    /// `messages` as the agent sees them (a summary passed on worded by `texts`).
    fn shape(&self, messages: &[Message], texts: &dyn Texts) -> Vec<Message> {
        let system = Message::system(self.over.system);
        let rest = match messages.first() {
            Some(Message::System { .. }) => &messages[1..],
            _ => messages,
        };
        let at = rest.iter().position(|message| match message {
            Message::Assistant(reply) => {
                (reply.tool_calls.iter()).any(|call| call.id == self.over.call_id)
            }
            _ => false,
        });
        // The hand-off left the request (a context policy's summary stands for it): the rest
        // as it is.
        let Some(at) = at else {
            return std::iter::once(system)
                .chain(rest.iter().cloned())
                .collect();
        };
        let before = &rest[..at];
        let last_user = || {
            (before.iter().rev())
                .find(|message| matches!(message, Message::User { .. }))
                .cloned()
        };
        let shown: Vec<Message> = match self.over.history {
            HandoffHistory::All => rest.to_vec(),
            HandoffHistory::LastUserMessage => {
                last_user().into_iter().chain(after(rest, at)).collect()
            }
            HandoffHistory::Summary => {
                let summary = summary_of(&rest[at], &self.over.call_id);
                let note = summary.map(|summary| Message::user(texts.context_summary(&summary)));
                note.into_iter()
                    .chain(last_user())
                    .chain(after(rest, at))
                    .collect()
            }
            HandoffHistory::With(make) => make(before).into_iter().chain(after(rest, at)).collect(),
        };
        std::iter::once(system).chain(shown).collect()
    }
}

/// The messages after the hand-off's reply at `at` and its results.
fn after(messages: &[Message], at: usize) -> impl Iterator<Item = Message> + '_ {
    let results = (messages[at + 1..].iter())
        .take_while(|message| matches!(message, Message::Tool(_)))
        .count();
    messages[at + 1 + results..].iter().cloned()
}

/// The summary a hand-off call passed on.
fn summary_of(reply: &Message, call_id: &str) -> Option<String> {
    let Message::Assistant(reply) = reply else {
        return None;
    };
    let call = reply.tool_calls.iter().find(|call| call.id == call_id)?;
    let summary: Summary = serde_json::from_str(&call.arguments).ok()?;
    Some(summary.summary)
}

impl<S: Sync> ModelLayer<S> for HandoffView<'_> {
    fn call<'a>(
        &'a self,
        call: ModelCall<'a, S>,
        next: Next<'a, S>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async move {
            let messages = self.shape(call.request.messages, call.request.texts);
            let request = ChatRequest {
                messages: &messages,
                ..call.request
            };
            next.call(call.with_request(request)).await
        })
    }
}
