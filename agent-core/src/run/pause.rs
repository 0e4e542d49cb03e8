//! Runs that wait for a person or for the caller: a run that reaches a call it may not make alone
//! ends paused, with a [`PausedRun`] that lists the waiting calls and serializes to JSON; a later
//! [`Agent::resume`](crate::Agent::resume), in this process or another, takes one
//! [`Decision`] per waiting call and goes on under the same limits.

use std::collections::HashMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::content::Part;
use crate::message::{Message, ToolCall, ToolResultMessage};
use crate::run::outcome::ChildRun;
use crate::settings::ModelSettings;
use crate::tool::call_info::RunId;
use crate::tool::scope::AgentPath;
use crate::usage::Usage;

/// The version of the saved form. A state saved by another version is refused, not guessed at.
pub const PAUSED_RUN_VERSION: u32 = 1;

/// A run that stopped to wait: its transcript, the calls that wait, the results of the calls of
/// the same reply that already ran, and what the run had used of its limits. Serializes to JSON
/// ([`to_json`](Self::to_json), [`from_json`](Self::from_json)) to be stored and resumed later.
///
/// Boxed inside, so that a [`RunOutput`](crate::RunOutput), which every run returns and most
/// without a pause, stays small to move.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PausedRun(pub(crate) Box<PausedState>);

/// What a paused run keeps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct PausedState {
    /// The saved form's version: [`PAUSED_RUN_VERSION`].
    version: u32,
    /// The conversation up to and including the reply whose calls wait (without its results).
    pub(crate) messages: Vec<Message>,
    /// The calls that wait, in the reply's order: the run's own, then those of the runs its
    /// calls started that wait ([`children`](Self::children)), in their order.
    pub(crate) pending: Vec<PendingCall>,
    /// The runs this run's calls started (agents called as tools) that wait, each with the call
    /// that started it: that call waits for them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) children: Vec<PausedChild>,
    /// The results of the reply's other calls, which ran before the pause.
    pub(crate) finished: Vec<ToolResultMessage>,
    /// The runs this run's calls started that had ended before it paused, whole: the run that
    /// goes on keeps them in its output, so that its tree's usage counts them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) ended_children: Vec<ChildRun>,
    /// Tokens used.
    pub(crate) usage: Usage,
    /// Tokens used by each model call.
    pub(crate) step_usage: Vec<Usage>,
    /// The model that answered each model call (see
    /// [`RunOutput::step_models`](crate::RunOutput::step_models)).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) step_models: Vec<Option<String>>,
    /// Tool calls counted against the limit.
    pub(crate) tool_calls: usize,
    /// Milliseconds the run had run, counted against its time limit.
    pub(crate) elapsed_ms: u64,
    /// The settings of the next model call (a forced tool choice is dropped once used).
    pub(crate) settings: ModelSettings,
    /// Whether the reply asked for more calls than the run's limit: it ends once resumed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) over_tool_call_limit: bool,
    /// The run's id, which the run that resumes it keeps (absent from runs saved before runs had
    /// ids: such a run goes on under a fresh one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) run_id: Option<RunId>,
}

/// A run a call of the paused run started (an agent called as a tool), paused: the call waits
/// for it, and its waiting calls are among the paused run's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct PausedChild {
    /// The call that started it.
    pub(crate) call: ToolCall,
    /// Its agent in the tree.
    pub(crate) path: AgentPath,
    /// Its paused run.
    pub(crate) run: PausedRun,
}

/// A paused child going on: the call that started it runs again, and the child goes on with
/// the decisions on its waiting calls.
pub(crate) struct ChildResume {
    pub(crate) call: ToolCall,
    pub(crate) run: PausedRun,
    pub(crate) decisions: Vec<(String, Decision)>,
}

/// A call that waits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingCall {
    /// The call, as the model made it: its id, tool and arguments.
    pub call: ToolCall,
    /// What it waits for.
    pub waits_for: Waiting,
}

/// What a call waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Waiting {
    /// A person's approval: the tool is marked `requires_approval` and the approver deferred
    /// ([`Approval::Defer`](crate::Approval::Defer)). Decide with [`Decision::Approve`],
    /// [`Decision::ApproveWith`] or [`Decision::Deny`].
    Approval,
    /// The caller's result: the tool is [external](crate::ToolAnnotations::external) (it runs in a
    /// browser, say). Decide with [`Decision::Result`] (or [`Decision::Deny`]).
    Result,
}

/// What to do with a waiting call. Serializes (`{"decision": "approve"}`,
/// `{"decision": "deny", "reason": "..."}`, ...), for decisions that come from a web page or
/// another process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Decision {
    /// Run it as the model asked.
    Approve,
    /// Run it with these arguments (a JSON text) instead: the person edited them.
    ApproveWith {
        /// The arguments to run it with.
        arguments: String,
    },
    /// Do not run it; the model is told, with the reason when there is one.
    Deny {
        /// Why, for the model.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// The result of an external call, as the caller ran it.
    Result {
        /// The result text (or the error text, with `is_error`).
        content: String,
        /// What follows the text: a screenshot the browser took, say.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        parts: Vec<Part>,
        /// Whether the call failed.
        #[serde(default)]
        is_error: bool,
    },
}

impl Decision {
    /// Deny, telling the model why.
    pub fn deny(reason: impl Into<String>) -> Self {
        Decision::Deny {
            reason: Some(reason.into()),
        }
    }

    /// An external call's result.
    pub fn result(content: impl Into<String>) -> Self {
        Decision::Result {
            content: content.into(),
            parts: Vec::new(),
            is_error: false,
        }
    }
}

/// Why a paused run cannot be resumed as asked. Nothing has run when this is returned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResumeError {
    /// The saved text is not a paused run (it does not parse, or a field does not fit).
    #[error("the saved run does not load: {message}")]
    Malformed {
        /// What is wrong, and where.
        message: String,
    },
    /// The saved run is of another version of its form.
    #[error("the saved run is version {found}; this version reads version {supported}")]
    Version {
        /// The version it was saved in.
        found: u32,
        /// The version this build reads.
        supported: u32,
    },
    /// A decision names a call that does not wait.
    #[error("there is no waiting call `{id}`; the waiting calls are {waiting:?}")]
    UnknownCall {
        /// The id given.
        id: String,
        /// The ids of the calls that wait.
        waiting: Vec<String>,
    },
    /// A waiting call has no decision.
    #[error("the call `{id}` to `{tool}` has no decision")]
    MissingDecision {
        /// The call's id.
        id: String,
        /// Its tool.
        tool: String,
    },
    /// A call has two decisions.
    #[error("the call `{id}` has more than one decision")]
    TwoDecisions {
        /// The call's id.
        id: String,
    },
    /// A waiting call's tool is not among the agent's tools (any more).
    #[error("the call `{id}` is to `{tool}`, which this agent does not have")]
    UnknownTool {
        /// The call's id.
        id: String,
        /// The tool's name.
        tool: String,
    },
    /// A decision that does not fit what the call waits for: a result for a call waiting for
    /// approval, or an approval for an external call.
    #[error("the call `{id}` waits for {waits_for:?}; {given} does not answer that")]
    WrongDecision {
        /// The call's id.
        id: String,
        /// What it waits for.
        waits_for: Waiting,
        /// The decision given, in words.
        given: &'static str,
    },
    /// An external call's result that is an error and has parts: an error result is its text
    /// alone, as a tool's error is.
    #[error(
        "the result of the call `{id}` is an error with parts; an error result is its text alone: \
         say in the text what the parts show, or send a result that is not an error"
    )]
    ErrorWithParts {
        /// The call's id.
        id: String,
    },
}

impl PausedRun {
    pub(crate) fn new(
        messages: Vec<Message>,
        mut pending: Vec<PendingCall>,
        children: Vec<PausedChild>,
        finished: Vec<ToolResultMessage>,
        progress: Progress,
    ) -> Self {
        for child in &children {
            pending.extend(child.run.pending().iter().cloned());
        }
        PausedRun(Box::new(PausedState {
            version: PAUSED_RUN_VERSION,
            messages,
            pending,
            children,
            finished,
            ended_children: Vec::new(),
            usage: progress.usage,
            step_usage: progress.step_usage,
            step_models: progress.step_models,
            tool_calls: progress.tool_calls,
            elapsed_ms: u64::try_from(progress.elapsed.as_millis()).unwrap_or(u64::MAX),
            settings: progress.settings,
            over_tool_call_limit: progress.over_tool_call_limit,
            run_id: Some(progress.run_id),
        }))
    }

    /// The id of the run that paused, which the run that resumes it keeps (see
    /// [`CallInfo`](crate::CallInfo)); `None` for a run saved before runs had ids.
    pub fn run_id(&self) -> Option<&RunId> {
        self.0.run_id.as_ref()
    }

    /// The calls that wait, in the order the model made them: the run's own, then those of the
    /// agents it called as tools that wait (a child's call that needs approval pauses the whole
    /// run, and is decided here as any other; [`waiting_in`](Self::waiting_in) says which agent
    /// made it).
    pub fn pending(&self) -> &[PendingCall] {
        &self.0.pending
    }

    /// The agent whose run made the waiting call `id`: `None` for this run's own calls (or an
    /// unknown id), the child's path for a call of an agent this run called as a tool.
    pub fn waiting_in(&self, id: &str) -> Option<&AgentPath> {
        self.0.children.iter().find_map(|child| {
            let own = child.run.waiting_in(id);
            let waits = child
                .run
                .pending()
                .iter()
                .any(|pending| pending.call.id == id);
            own.or(waits.then_some(&child.path))
        })
    }

    /// The runs this run's calls started that wait (agents called as tools), each with the call
    /// that started it and its agent; their waiting calls are among [`pending`](Self::pending).
    pub fn children(&self) -> impl Iterator<Item = (&ToolCall, &AgentPath, &PausedRun)> {
        (self.0.children.iter()).map(|child| (&child.call, &child.path, &child.run))
    }

    /// Whether `id` is a waiting call of a run this one started.
    fn is_a_childs(&self, id: &str) -> bool {
        (self.0.children.iter()).any(|child| {
            child
                .run
                .pending()
                .iter()
                .any(|pending| pending.call.id == id)
        })
    }

    /// The conversation up to the reply whose calls wait (the same as the paused run's
    /// [`RunOutput::messages`](crate::RunOutput::messages)).
    pub fn messages(&self) -> &[Message] {
        &self.0.messages
    }

    /// The results of the reply's calls that ran before the pause; they join the transcript, in
    /// call order with the waiting calls' results, when the run resumes.
    pub fn finished(&self) -> &[ToolResultMessage] {
        &self.0.finished
    }

    /// How long the run had run when it paused.
    pub fn elapsed(&self) -> Duration {
        Duration::from_millis(self.0.elapsed_ms)
    }

    /// The saved form, as JSON.
    pub fn to_json(&self) -> String {
        // Every field is plain data with string keys: serializing cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// A paused run from its saved form: refused when the text is not one (with where it is
    /// wrong) or of another version.
    pub fn from_json(text: &str) -> Result<Self, ResumeError> {
        #[derive(Deserialize)]
        struct Version {
            version: u32,
        }
        let found = serde_json::from_str::<Version>(text)
            .map_err(|error| ResumeError::Malformed {
                message: error.to_string(),
            })?
            .version;
        if found != PAUSED_RUN_VERSION {
            return Err(ResumeError::Version {
                found,
                supported: PAUSED_RUN_VERSION,
            });
        }
        let deserializer = &mut serde_json::Deserializer::from_str(text);
        let paused: PausedRun =
            serde_path_to_error::deserialize(deserializer).map_err(|error| {
                ResumeError::Malformed {
                    message: format!("{}: {}", error.path(), error.inner()),
                }
            })?;
        paused.check_calls()?;
        Ok(paused)
    }

    /// Whether the calls of the last reply are exactly the waiting and the finished ones, each
    /// once: what resuming answers. An edited state that breaks this would leave a call
    /// unanswered or answer one twice.
    fn check_calls(&self) -> Result<(), ResumeError> {
        // A run that waits before its next model call (its budget spent) has nothing unanswered.
        let nothing_waits = self.0.pending.is_empty() && self.0.children.is_empty();
        if nothing_waits && self.0.finished.is_empty() {
            return match self.0.messages.last() {
                Some(Message::Assistant(reply)) if !reply.tool_calls.is_empty() => {
                    Err(ResumeError::Malformed {
                        message: "the saved run waits for nothing, but its last reply's calls \
                                  are unanswered"
                            .to_owned(),
                    })
                }
                _ => Ok(()),
            };
        }
        let Some(Message::Assistant(reply)) = self.0.messages.last() else {
            return Err(ResumeError::Malformed {
                message: "the saved run does not end with the reply whose calls wait".to_owned(),
            });
        };
        let mut made: Vec<&str> = reply
            .tool_calls
            .iter()
            .map(|call| call.id.as_str())
            .collect();
        let own = (self.0.pending.iter())
            .map(|pending| pending.call.id.as_str())
            .filter(|id| !self.is_a_childs(id));
        let children = self.0.children.iter().map(|child| child.call.id.as_str());
        let finished = (self.0.finished.iter()).map(|result| result.tool_call_id.as_str());
        let mut answered: Vec<&str> = own.chain(children).chain(finished).collect();
        made.sort_unstable();
        answered.sort_unstable();
        if made != answered || nothing_waits {
            return Err(ResumeError::Malformed {
                message: format!(
                    "the last reply's calls {made:?} are not the waiting and finished ones \
                     {answered:?}"
                ),
            });
        }
        Ok(())
    }

    /// Pairs each waiting call with its decision, in call order; refuses any decision that does
    /// not fit, before anything runs.
    pub(crate) fn match_decisions(
        &self,
        decisions: impl IntoIterator<Item = (String, Decision)>,
        has_tool: impl Fn(&str) -> bool,
    ) -> Result<Vec<(&PendingCall, Decision)>, ResumeError> {
        let mut given: HashMap<String, Decision> = HashMap::new();
        for (id, decision) in decisions {
            if !self.0.pending.iter().any(|pending| pending.call.id == id) {
                return Err(ResumeError::UnknownCall {
                    id,
                    waiting: self
                        .0
                        .pending
                        .iter()
                        .map(|pending| pending.call.id.clone())
                        .collect(),
                });
            }
            if given.contains_key(&id) {
                return Err(ResumeError::TwoDecisions { id });
            }
            given.insert(id, decision);
        }
        let mut matched = Vec::with_capacity(self.0.pending.len());
        for pending in &self.0.pending {
            let call = &pending.call;
            // A child's call is checked against the child's tools when it goes on.
            if !has_tool(&call.name) && !self.is_a_childs(&call.id) {
                return Err(ResumeError::UnknownTool {
                    id: call.id.clone(),
                    tool: call.name.clone(),
                });
            }
            let Some(decision) = given.remove(&call.id) else {
                return Err(ResumeError::MissingDecision {
                    id: call.id.clone(),
                    tool: call.name.clone(),
                });
            };
            pending.check(&decision)?;
            matched.push((pending, decision));
        }
        Ok(matched)
    }
}

impl PausedRun {
    /// Takes out the paused children, each with the decisions of `decisions` on its waiting
    /// calls (which leave `decisions`).
    pub(crate) fn take_children(
        &mut self,
        decisions: &mut Vec<(PendingCall, Decision)>,
    ) -> Vec<ChildResume> {
        let children = std::mem::take(&mut self.0.children);
        (children.into_iter())
            .map(|child| {
                let waits = |id: &str| {
                    child
                        .run
                        .pending()
                        .iter()
                        .any(|pending| pending.call.id == id)
                };
                let (its, others) = std::mem::take(decisions)
                    .into_iter()
                    .partition(|(pending, _)| waits(&pending.call.id));
                *decisions = others;
                let decisions = (its.into_iter())
                    .map(|(pending, decision)| (pending.call.id, decision))
                    .collect();
                ChildResume {
                    call: child.call,
                    run: child.run,
                    decisions,
                }
            })
            .collect()
    }
}

impl PendingCall {
    /// Whether `decision` answers what this call waits for: a result for an external call, an
    /// approval or denial for one that waits for approval (denial answers both); an error result
    /// has no parts. [`Agent::resume`](crate::Agent::resume) checks every decision this way; a
    /// service that takes decisions one at a time (a durable engine's) checks each as it comes.
    pub fn check(&self, decision: &Decision) -> Result<(), ResumeError> {
        if let Decision::Result {
            parts,
            is_error: true,
            ..
        } = decision
            && !parts.is_empty()
        {
            return Err(ResumeError::ErrorWithParts {
                id: self.call.id.clone(),
            });
        }
        let given = match (decision, self.waits_for) {
            (Decision::Result { .. }, Waiting::Approval) => "a result",
            (Decision::Approve | Decision::ApproveWith { .. }, Waiting::Result) => "an approval",
            _ => return Ok(()),
        };
        Err(ResumeError::WrongDecision {
            id: self.call.id.clone(),
            waits_for: self.waits_for,
            given,
        })
    }
}

/// What a run had used of its limits when it paused.
pub(crate) struct Progress {
    pub(crate) usage: Usage,
    pub(crate) step_usage: Vec<Usage>,
    pub(crate) step_models: Vec<Option<String>>,
    pub(crate) tool_calls: usize,
    pub(crate) elapsed: Duration,
    pub(crate) settings: ModelSettings,
    pub(crate) over_tool_call_limit: bool,
    pub(crate) run_id: RunId,
}
