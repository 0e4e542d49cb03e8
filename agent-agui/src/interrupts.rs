//! Interrupts: what a paused run waits on, as AG-UI asks a client for it, and the client's
//! answers taken back as decisions.
//!
//! Each call the run waits on is one interrupt, whose id is the call's grant (an HMAC under the
//! server's key of the thread, the pause and the call; see [`CallGrants`]). An answer is taken only
//! under an id the server issued for that thread's pause: an id made up, altered, from another
//! thread or user, or from an earlier pause of the same thread, is refused with nothing run.
//!
//! A resume answers every interrupt at once: one that leaves some unanswered is refused, the thread
//! still waiting.
//!
//! How an answer becomes a decision:
//! - a call awaiting approval: `resolved` approves it; with a payload `{"approved": false,
//!   "reason": "..."}` it is denied, and with `{"arguments": {...}}` it runs with those arguments
//!   instead; `cancelled` denies it (`payload.reason` says why, if given);
//! - a call the client runs (an external tool): `resolved` carries its result as the payload (a
//!   string is the text, any other JSON value its JSON text; `{"error": "..."}` says it failed);
//!   `cancelled` tells the model it was not run.

use agent_core::{Decision, PausedRun, PendingCall, Waiting};
use agent_web::CallGrants;
use serde_json::{Value, json};

use crate::events::Interrupt;
use crate::input::{ResumeEntry, ResumeStatus};

/// The interrupts of a paused run of the thread kept under `thread_key`: one per waiting call.
pub(crate) fn interrupts(
    grants: &CallGrants,
    thread_key: &str,
    paused: &PausedRun,
) -> Vec<Interrupt> {
    (paused.pending().iter())
        .map(|pending| interrupt(grants.grant(thread_key, paused, &pending.call), pending))
        .collect()
}

fn interrupt(id: String, pending: &PendingCall) -> Interrupt {
    let call = &pending.call;
    let arguments: Value =
        serde_json::from_str(&call.arguments).unwrap_or(Value::String(call.arguments.clone()));
    let metadata = json!({ "toolName": call.name, "arguments": arguments });
    match pending.waits_for {
        Waiting::Result => Interrupt {
            id,
            reason: "tool_result",
            message: format!("`{}` runs on the client: send its result", call.name),
            tool_call_id: call.id.clone(),
            response_schema: None,
            metadata,
        },
        // An approval, and anything a later agent-core waits on, is a person's yes or no.
        _ => Interrupt {
            id,
            reason: "tool_approval",
            message: format!("approve the call to `{}`?", call.name),
            tool_call_id: call.id.clone(),
            response_schema: Some(approval_schema()),
            metadata,
        },
    }
}

/// What an approval's payload may say.
fn approval_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "approved": {"type": "boolean", "description": "false denies the call"},
            "reason": {"type": "string", "description": "why, for the model"},
            "arguments": {"type": "object", "description": "run it with these arguments instead"}
        }
    })
}

/// Why answers to interrupts were not taken.
#[derive(Debug, PartialEq)]
pub(crate) enum Refusal {
    /// No waiting call has this id as its grant (`403`).
    NotIssued(String),
    /// The answer does not fit the call (`400`).
    Unfit(String),
}

/// The decisions `entries` make on the calls `paused` (of the thread kept under `thread_key`)
/// waits on, each entry's id checked to be the grant of its call.
pub(crate) fn decisions(
    grants: &CallGrants,
    thread_key: &str,
    paused: &PausedRun,
    entries: &[ResumeEntry],
) -> Result<Vec<(String, Decision)>, Refusal> {
    let mut decided: Vec<(String, Decision)> = Vec::new();
    for entry in entries {
        let pending = paused
            .pending()
            .iter()
            .find(|pending| grants.verify(thread_key, paused, &pending.call, &entry.interrupt_id))
            .ok_or_else(|| {
                Refusal::NotIssued(format!(
                    "interrupt `{}` was not issued by this server for this thread's last run: \
                     answer the interrupts its RUN_FINISHED event listed",
                    entry.interrupt_id
                ))
            })?;
        if decided.iter().any(|(id, _)| *id == pending.call.id) {
            return Err(Refusal::Unfit(format!(
                "interrupt `{}` is answered twice",
                entry.interrupt_id
            )));
        }
        decided.push((pending.call.id.clone(), decision(pending, entry)?));
    }
    // The run goes on with every waiting call decided: answers to some of them would leave the
    // others without one, so they are refused, the thread still waiting.
    let unanswered: Vec<String> = (paused.pending().iter())
        .filter(|pending| !decided.iter().any(|(id, _)| *id == pending.call.id))
        .map(|pending| format!("`{}`", pending.call.id))
        .collect();
    if !unanswered.is_empty() {
        return Err(Refusal::Unfit(format!(
            "the interrupt of call {} is not answered: answer every interrupt the run ended \
             with in one `resume`",
            unanswered.join(", ")
        )));
    }
    Ok(decided)
}

/// The decision one answer makes on its call.
fn decision(pending: &PendingCall, entry: &ResumeEntry) -> Result<Decision, Refusal> {
    let payload = entry.payload.as_ref();
    let field = |name: &str| payload.and_then(|payload| payload.get(name));
    let reason = field("reason").and_then(Value::as_str).map(str::to_owned);
    if entry.status == ResumeStatus::Cancelled {
        return Ok(Decision::Deny { reason });
    }
    match pending.waits_for {
        Waiting::Result => match payload {
            None => Err(Refusal::Unfit(format!(
                "the result of `{}` is missing: send it as the payload",
                pending.call.name
            ))),
            Some(Value::String(text)) => Ok(result(text.clone(), false)),
            Some(Value::Object(object)) if object.len() == 1 && object.contains_key("error") => {
                let error = &object["error"];
                let text = error
                    .as_str()
                    .map_or_else(|| error.to_string(), str::to_owned);
                Ok(result(text, true))
            }
            Some(other) => Ok(result(other.to_string(), false)),
        },
        _ => {
            if field("approved").and_then(Value::as_bool) == Some(false) {
                return Ok(Decision::Deny { reason });
            }
            match field("arguments") {
                None | Some(Value::Null) => Ok(Decision::Approve),
                Some(arguments @ Value::Object(_)) => Ok(Decision::ApproveWith {
                    arguments: arguments.to_string(),
                }),
                Some(_) => Err(Refusal::Unfit(format!(
                    "the arguments for `{}` must be a JSON object",
                    pending.call.name
                ))),
            }
        }
    }
}

fn result(content: String, is_error: bool) -> Decision {
    Decision::Result {
        content,
        parts: Vec::new(),
        is_error,
    }
}
