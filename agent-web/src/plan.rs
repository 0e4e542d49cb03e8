//! Planning a request's answer under its chat's hold: what the run starts from (a new question,
//! the same one again, a paused run going on), the answer's id, and, for a regenerate or an edit,
//! the conversation cut back, never past what tools did.

use axum::http::StatusCode;
use axum::response::Response;

use super::chunks::paused_activity;
use super::errors::store_failed;
use super::live::Begun;
use super::request::{Turn, UserInput};
use super::rewind::{Before, Target, answer_id, edited, effects, rewind};
use super::{Shared, refuse};
use agent_core::Message;
use agent_core::session::{Conversation, ConversationHold};
use agent_core::{Agent, Decision};

/// How a request is answered: what the run starts from, the answer's message id, the calls the
/// person denied in it, and the hold on the chat's conversation, taken to plan and kept by the run
/// (so no other request's run gets in between: a regenerate and a new message at once are
/// answered one after the other, each on the conversation as the other left it).
pub(super) struct Plan {
    /// The chat's id, as the client knows it.
    pub(super) chat_id: String,
    pub(super) start: Start,
    pub(super) message_id: String,
    pub(super) denied: Vec<String>,
    /// Every call the person decided in it (approved, denied or answered).
    pub(super) decided: Vec<String>,
    /// What the agents the answer's calls started had done before they paused, by call.
    pub(super) shown: Vec<(String, Vec<serde_json::Value>)>,
    pub(super) hold: ConversationHold,
    /// The question's text, when this answer is the chat's first exchange (the chat is titled
    /// from it once answered).
    pub(super) first_question: Option<String>,
    /// How many of the chat's stored messages, and of its summaries, come before the answer.
    pub(super) kept: (usize, usize),
}

impl Plan {
    /// Where the answer begins in its chat, for a read-back while it runs.
    pub(super) fn begun(&self) -> Begun {
        let question = match &self.start {
            Start::Ask(input) => Some(Message::User {
                content: input.text.clone(),
                parts: input.parts.clone(),
            }),
            Start::Again | Start::Resume(_) => None,
        };
        Begun {
            kept: self.kept.0,
            summaries: self.kept.1,
            question,
            message_id: self.message_id.clone(),
        }
    }
}

/// What the run of an answer starts from.
pub(super) enum Start {
    /// A question, new to the conversation.
    Ask(UserInput),
    /// The conversation as it is: its last message is the question, answered again.
    Again,
    /// The paused run, given the person's decisions.
    Resume(Vec<(String, Decision)>),
}

/// Reads the chat's conversation (kept under `key`) and decides how to answer `turn`: where its
/// answer begins (for the answer's id), which of the decisions sent back the paused run waits on,
/// and, for a regenerate or an edit, cuts the conversation back. The conversation is held from
/// here to the end of the run that answers (the plan keeps the hold), so it is not read in the
/// middle of a run, and no other run changes it between the plan and its run. `must_exist`: the
/// request goes on with a chat, and an empty one is not the caller's (`404`). `Err`: the response
/// that refuses the request.
pub(super) async fn plan<S: Send + Sync + 'static, I>(
    shared: &Shared<S, I>,
    chat_id: &str,
    key: &str,
    must_exist: bool,
    turn: Turn,
) -> Result<Plan, Response> {
    let store = &*shared.store;
    let new_id = |base: usize| answer_id(chat_id, base);
    let hold = store.hold(key).await;
    let conversation = store
        .load(key)
        .await
        .map_err(|error| store_failed(error, chat_id))?;
    if must_exist && conversation.messages.is_empty() && conversation.paused.is_none() {
        return Err(refuse(
            StatusCode::NOT_FOUND,
            &format!("there is no chat `{chat_id}`"),
        ));
    }
    let len = conversation.messages.len();
    let plan = match turn {
        // A new question while calls wait for the person: the run would refuse it; refused here,
        // before any answer starts.
        Turn::Message(_) if conversation.paused.is_some() => {
            let message = format!(
                "chat `{chat_id}` waits for answers to its calls: approve, deny or answer them \
                 first"
            );
            return Err(refuse(StatusCode::CONFLICT, &message));
        }
        Turn::Message(input) => Plan {
            chat_id: chat_id.to_owned(),
            first_question: first_question(&conversation.messages, &input),
            start: Start::Ask(input),
            message_id: new_id(len),
            kept: kept(&conversation, len),
            denied: Vec::new(),
            decided: Vec::new(),
            shown: Vec::new(),
            hold,
        },
        // The answer goes on in the message that asked (a new id would make the client show the
        // call twice).
        Turn::Approvals {
            message_id,
            decisions,
            grants,
        } => {
            let decisions = for_waiting_calls(&conversation, decisions);
            // Each answer is to a call the run waits on, with the grant the server gave it: an
            // answer replayed after its call was answered, or to a call that does not wait, or
            // without its grant, is refused before anything runs.
            if let Some(call_id) = ungranted(shared, key, &conversation, &decisions, &grants) {
                let message = format!(
                    "chat `{chat_id}` was not asked by this server to answer call `{call_id}` \
                     this way: read the chat again and answer what it asks"
                );
                return Err(refuse(StatusCode::FORBIDDEN, &message));
            }
            if decisions.is_empty() {
                let message = format!(
                    "chat `{chat_id}` has no call waiting for these answers: read the chat again \
                     and answer what it asks"
                );
                return Err(refuse(StatusCode::FORBIDDEN, &message));
            }
            let denied = decisions
                .iter()
                .filter(|(_, decision)| matches!(decision, Decision::Deny { .. }))
                .map(|(call_id, _)| call_id.clone())
                .collect();
            let decided = decisions
                .iter()
                .map(|(call_id, _)| call_id.clone())
                .collect();
            let shown = (conversation.paused.iter())
                .flat_map(paused_activity)
                .collect();
            Plan {
                chat_id: chat_id.to_owned(),
                start: Start::Resume(decisions),
                message_id: message_id.unwrap_or_else(|| new_id(len)),
                kept: kept(&conversation, len),
                denied,
                decided,
                shown,
                hold,
                first_question: None,
            }
        }
        Turn::Regenerate {
            message_id,
            question,
            question_id,
        } => {
            let unknown = || {
                let message = format!(
                    "chat `{chat_id}` has no answer `{}` to regenerate",
                    message_id.as_deref().unwrap_or_default()
                );
                refuse(StatusCode::NOT_FOUND, &message)
            };
            let target = Target::named(chat_id, message_id.as_deref(), question_id.as_deref())
                .ok_or_else(unknown)?;
            let asked = Message::User {
                content: question.text.clone(),
                parts: question.parts.clone(),
            };
            let mut rewound = rewind(&conversation.messages, target, &asked).ok_or_else(unknown)?;
            // What the answer's tools did stays: the steps whose calls had effects are kept (the
            // model answers again after them, knowing they ran); only what came after them goes.
            let done = effects(&conversation.messages, rewound.keep, |tool| {
                harmless(&shared.agent, tool)
            });
            if done.in_later_turns || (rewound.ask && done.first_turn_end.is_some()) {
                return Err(would_repeat(chat_id, "regenerate that answer", &done.tools));
            }
            if let Some(end) = done.first_turn_end {
                rewound.keep = end + 1;
            }
            // The answer taken back goes, with every turn after it and a run paused in it.
            if rewound.keep < len {
                store
                    .truncate(key, len, rewound.keep)
                    .await
                    .map_err(|error| store_failed(error, chat_id))?;
            }
            Plan {
                chat_id: chat_id.to_owned(),
                start: if rewound.ask {
                    Start::Ask(question)
                } else {
                    Start::Again
                },
                message_id: new_id(rewound.base),
                kept: kept(&conversation, rewound.keep),
                denied: Vec::new(),
                decided: Vec::new(),
                shown: Vec::new(),
                hold,
                first_question: None,
            }
        }
        Turn::Edit {
            message_id,
            question,
            question_id,
            after,
            unanswered,
        } => {
            let user = |input: &UserInput| Message::User {
                content: input.text.clone(),
                parts: input.parts.clone(),
            };
            // What the AI SDK sends: the id of the message it ends with. Any other is a message
            // the request does not place.
            if question_id.as_deref() != Some(message_id.as_str()) {
                let message = format!(
                    "chat `{chat_id}` cannot edit message `{message_id}`: an edit's request ends \
                     with the message it edits"
                );
                return Err(refuse(StatusCode::NOT_FOUND, &message));
            }
            let answered = after.as_ref().map(|answer| {
                (
                    answer.id.as_deref().unwrap_or_default(),
                    answer.question.as_ref().map(user),
                )
            });
            let before = answered.as_ref().map(|(answer_id, question)| Before {
                answer_id,
                question: question.as_ref(),
            });
            let unanswered: Vec<Message> = unanswered.iter().map(user).collect();
            let Some(at) = edited(chat_id, &conversation.messages, before, &unanswered) else {
                let message = format!(
                    "chat `{chat_id}` has no answer `{}` before message `{message_id}` to edit",
                    answered.map(|(answer_id, _)| answer_id).unwrap_or_default()
                );
                return Err(refuse(StatusCode::NOT_FOUND, &message));
            };
            // An edit takes back the question and its answer: never one whose tools had effects.
            let done = effects(&conversation.messages, at, |tool| {
                harmless(&shared.agent, tool)
            });
            if !done.tools.is_empty() {
                return Err(would_repeat(chat_id, "edit that message", &done.tools));
            }
            // The question replaced goes, with every turn after it and a run paused in them.
            if at < len {
                store
                    .truncate(key, len, at)
                    .await
                    .map_err(|error| store_failed(error, chat_id))?;
            }
            Plan {
                chat_id: chat_id.to_owned(),
                first_question: first_question(&conversation.messages[..at], &question),
                start: Start::Ask(question),
                message_id: new_id(at),
                kept: kept(&conversation, at),
                denied: Vec::new(),
                decided: Vec::new(),
                shown: Vec::new(),
                hold,
            }
        }
    };
    Ok(plan)
}

/// The first `messages` of `conversation` (as loaded, before any cut back to them), and how many
/// of its summaries stand for messages among them (those a cut keeps).
fn kept(conversation: &Conversation, messages: usize) -> (usize, usize) {
    let summaries = (conversation.summaries.iter())
        .filter(|summary| summary.covers.end <= messages)
        .count();
    (messages, summaries)
}

/// The text of `question`, when the messages `before` it hold no question: it starts the chat.
fn first_question(before: &[Message], question: &UserInput) -> Option<String> {
    let asked = before
        .iter()
        .any(|message| matches!(message, Message::User { .. }));
    (!asked).then(|| question.text.clone())
}

/// Whether calling `tool` again unknowingly does no harm: it is marked read-only or idempotent.
fn harmless<S: Send + Sync + 'static>(agent: &Agent<S>, tool: &str) -> bool {
    agent
        .tools()
        .definitions()
        .iter()
        .find(|definition| definition.name == tool)
        .is_some_and(|definition| {
            let hints = &definition.annotations;
            hints.read_only == Some(true) || hints.idempotent == Some(true)
        })
}

/// `409` for a regenerate or an edit that would take back what `tools` did, so the model could do
/// it again without knowing it was done: the person decides what to do instead.
fn would_repeat(chat_id: &str, what: &str, tools: &[String]) -> Response {
    let message = format!(
        "chat `{chat_id}` cannot {what}: it would take back what tools already did ({}), and \
         they could run again; send a new message instead",
        tools.join(", ")
    );
    refuse(StatusCode::CONFLICT, &message)
}

/// The first call among `decisions` that the chat's paused run does not wait on (none waits when
/// no run is paused), or whose grant in `grants` is missing or not the one the server gave it (for
/// this chat, this pause, this call); `None` when every one waits and is granted.
fn ungranted<'d, S, I>(
    shared: &Shared<S, I>,
    key: &str,
    conversation: &Conversation,
    decisions: &'d [(String, Decision)],
    grants: &[(String, String)],
) -> Option<&'d str> {
    decisions.iter().find_map(|(call_id, _)| {
        let paused = conversation.paused.as_ref();
        let pending = paused.and_then(|paused| {
            (paused.pending().iter()).find(|pending| pending.call.id == *call_id)
        });
        let granted = paused.zip(pending).is_some_and(|(paused, pending)| {
            grants.iter().any(|(granted_id, grant)| {
                granted_id == call_id && shared.grants.verify(key, paused, &pending.call, grant)
            })
        });
        (!granted).then_some(call_id.as_str())
    })
}

/// `decisions` without the results of calls the chat's paused run does not wait on: the message
/// a client sends back holds every call's part, the server's own calls' results among the
/// results of its client-side tools. Approvals are kept as they are, to be checked by the run.
fn for_waiting_calls(
    conversation: &Conversation,
    decisions: Vec<(String, Decision)>,
) -> Vec<(String, Decision)> {
    let waiting: Vec<&str> = conversation
        .paused
        .iter()
        .flat_map(|paused| paused.pending())
        .map(|pending| pending.call.id.as_str())
        .collect();
    decisions
        .into_iter()
        .filter(|(call_id, decision)| {
            !matches!(decision, Decision::Result { .. }) || waiting.contains(&call_id.as_str())
        })
        .collect()
}
