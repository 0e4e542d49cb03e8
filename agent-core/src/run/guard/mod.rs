//! Guardrails: checks on a run's input, each model request, each tool call's arguments, each
//! tool's result and the final answer, that stop harm before it happens. A [`Guard`] is one
//! check, plain code or a model asked as a judge ([`Judge`]); it answers a [`Verdict`] (allow,
//! rewrite, refuse, ask for another answer, or trip, which ends the run with
//! [`RunError::Tripped`](crate::RunError::Tripped)). An agent's guards
//! ([`Agent::guard`](crate::Agent::guard)) are values at the run's seams, not a branch of its
//! loop:
//!
//! - the input and each request: a model-call layer (`layer`), before the call or beside it
//!   ([`Agent::guard_beside`](crate::Agent::guard_beside): the model is called at once, nothing
//!   it says is streamed and no tool runs until the guard has answered, and a trip cancels the
//!   call in flight);
//! - each call's arguments and each result: a call policy (`policy`), on every call that runs,
//!   one a person approved on a resumed run too;
//! - the answer: the answer check's review (`answer`), with the streamed text held back as the
//!   agent's [`HoldBack`] says (`gate`);
//!
//! and they reach every run the agent starts: an agent called as a tool and one handed the
//! conversation check with the guards of the run that started them unless they have their own,
//! and a trip anywhere in the tree ends the whole tree (`tripwire`). A durable run journals each
//! verdict, so a replay never asks a judge twice. The lethal mix of tools (untrusted content,
//! private data, a way out) is refused before a run starts (`mix`), and at compile time by
//! `agent!`.

mod agent;
mod answer;
mod checks;
mod gate;
mod guard_fn;
mod judge;
mod layer;
mod mix;
mod places;
mod policy;
mod tool_guards;
mod tripwire;

pub(crate) use answer::GuardedAnswer;
pub(crate) use checks::{GuardRun, GuardScope, Guards};
pub use guard_fn::{GuardFn, guard_fn};
pub use judge::{Judge, JudgeVerdict};
pub use mix::MixCheck;
pub use mix::{LethalMix, Touches};
pub use places::{At, Place};
pub use tool_guards::{Stopped, ToolGuards};
pub use tripwire::Tripped;
pub(crate) use tripwire::Tripwire;

use serde::{Deserialize, Serialize};

use crate::message::{Message, ToolCall, ToolResultMessage};
use crate::model::ChatRequest;
use crate::texts::Texts;
use crate::tool::scope::AgentPath;
use crate::tool::{BoxFuture, ToolDef};
use crate::usage::Usage;

/// One check of a run. Added with [`Agent::guard`](crate::Agent::guard) at the places it
/// checks ([`At`]); each time it is asked, it is shown what is checked ([`Checked`]) and
/// answers a [`Verdict`], at once or after an await (a model asked as a judge).
///
/// ```
/// use agent_core::guard::{Checked, Checking, Guard, Verdict, What};
///
/// /// No call sends mail to an address outside the company.
/// struct InHouseMail;
///
/// impl Guard for InHouseMail {
///     fn name(&self) -> &str {
///         "in-house mail"
///     }
///
///     fn check<'a>(&'a self, checked: &Checked<'_>) -> Checking<'a> {
///         match checked.what {
///             What::Call { call, .. } if call.name == "send_mail"
///                 && !call.arguments.contains("@example.com") =>
///             {
///                 Verdict::Refuse("mail goes to example.com addresses only".into()).into()
///             }
///             _ => Verdict::Allow.into(),
///         }
///     }
/// }
/// ```
pub trait Guard: Send + Sync {
    /// The guard's name: in a trip, in its span, and in what the model reads when the guard
    /// refuses a call.
    fn name(&self) -> &str;

    /// Checks one thing: a verdict at once, or a future of it (which owns what it needs of
    /// `checked`, and gives the tokens it used with its verdict).
    fn check<'a>(&'a self, checked: &Checked<'_>) -> Checking<'a>;
}

/// A shared guard is a guard (one value at several agents, or kept to read).
impl<G: Guard + ?Sized> Guard for std::sync::Arc<G> {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn check<'a>(&'a self, checked: &Checked<'_>) -> Checking<'a> {
        (**self).check(checked)
    }
}

/// A guard's verdict: at once, or when the future completes (with the tokens the guard used to
/// reach it, which count in the run's usage).
pub enum Checking<'a> {
    /// Known at once.
    Now(Verdict),
    /// Known when the future completes.
    Later(BoxFuture<'a, Judged>),
}

impl From<Verdict> for Checking<'_> {
    fn from(verdict: Verdict) -> Self {
        Checking::Now(verdict)
    }
}

impl Checking<'_> {
    /// The verdict, and the tokens used to reach it.
    pub async fn get(self) -> Judged {
        match self {
            Checking::Now(verdict) => Judged::new(verdict, Usage::default()),
            Checking::Later(future) => future.await,
        }
    }
}

/// What a guard says of what it checked. Where a verdict has no meaning at a place, the one
/// closest to it is taken:
///
/// | verdict | input | request | call | result | answer |
/// |---|---|---|---|---|---|
/// | `Allow` | goes on | goes on | runs | the model reads it | the answer |
/// | `Rewrite(text)` | the input's text | trips | the arguments (JSON) | the result's text | the answer (a typed answer's JSON, read again) |
/// | `Refuse(why)` | trips | trips | not run: the model reads why | withheld: the model reads why | as `Retry` |
/// | `Retry(feedback)` | trips | trips | as `Refuse` | as `Refuse` | the model is asked for another answer |
/// | `Trip` | the run ends with [`RunError::Tripped`](crate::RunError::Tripped), at every place |||||
///
/// A guard [beside](crate::Agent::guard_beside) the model allows or trips: anything else it
/// says trips (the model was already asked). Partial text (an answer still streaming, checked
/// as the agent's [`HoldBack`] says) is allowed or tripped; the whole answer gets every verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Verdict {
    /// Let it through.
    Allow,
    /// Let it through as this instead (a redaction, say); the guards after see the rewrite.
    Rewrite(String),
    /// Answer the model instead of running the call (or instead of its result): it reads why,
    /// after the run's words for a guard's refusal.
    Refuse(String),
    /// Ask the model for another answer, telling it this.
    Retry(String),
    /// End the run: [`RunError::Tripped`](crate::RunError::Tripped) with the guard's name, this
    /// message and `info` (anything the guard wants its caller to have).
    Trip {
        /// What happened, for people (never shown to the model).
        message: String,
        /// Anything more, for the caller (`null` when none).
        #[serde(default)]
        info: serde_json::Value,
    },
}

impl Verdict {
    /// A trip with `message` and no more information.
    pub fn trip(message: impl Into<String>) -> Self {
        Verdict::Trip {
            message: message.into(),
            info: serde_json::Value::Null,
        }
    }

    /// Whether it lets the thing through unchanged.
    pub fn allows(&self) -> bool {
        matches!(self, Verdict::Allow)
    }

    /// The verdict's kind, for spans and logs.
    pub fn kind(&self) -> &'static str {
        match self {
            Verdict::Allow => "allow",
            Verdict::Rewrite(_) => "rewrite",
            Verdict::Refuse(_) => "refuse",
            Verdict::Retry(_) => "retry",
            Verdict::Trip { .. } => "trip",
        }
    }
}

/// A verdict and the tokens the guard used to reach it: what a durable run's journal records
/// ([`Journal::guard_check`](crate::Journal::guard_check)), so that a replay gets both back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Judged {
    /// The verdict.
    pub verdict: Verdict,
    /// The tokens the guard used (a judge's model calls).
    #[serde(default)]
    pub usage: Usage,
}

impl Judged {
    /// `verdict`, reached with `usage`.
    pub fn new(verdict: Verdict, usage: Usage) -> Self {
        Judged { verdict, usage }
    }
}

/// What a guard is shown.
#[non_exhaustive]
pub struct Checked<'a> {
    /// What is checked.
    pub what: What<'a>,
    /// The agent whose run it is, in its tree of agents.
    pub agent: &'a AgentPath,
    /// The step of the run, from 1 (0 for the input, before the first step).
    pub step: usize,
    /// The run's words: a guard that refuses in the run's language can tell which it is.
    pub texts: &'a dyn Texts,
}

impl<'a> Checked<'a> {
    pub(crate) fn new(
        what: What<'a>,
        agent: &'a AgentPath,
        step: usize,
        texts: &'a dyn Texts,
    ) -> Self {
        Checked {
            what,
            agent,
            step,
            texts,
        }
    }
}

impl std::fmt::Debug for Checked<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checked")
            .field("place", &self.what.place())
            .field("agent", &self.agent)
            .field("step", &self.step)
            .finish_non_exhaustive()
    }
}

/// The thing a guard checks, by place.
#[derive(Clone, Copy)]
#[non_exhaustive]
pub enum What<'a> {
    /// The run's input: the new messages it starts with (a person's message), before the first
    /// model call.
    Input(&'a [Message]),
    /// A request about to go to the model (the whole of it: history, tools, settings).
    Request(&'a ChatRequest<'a>),
    /// A call about to run, with its arguments as they will run.
    Call {
        /// The call.
        call: &'a ToolCall,
        /// The definition of its tool, if the agent has one of that name.
        tool: Option<&'a ToolDef>,
    },
    /// A call's result, before the model reads it.
    Result {
        /// The call.
        call: &'a ToolCall,
        /// The definition of its tool, if the agent has one of that name.
        tool: Option<&'a ToolDef>,
        /// What the model is to read.
        result: &'a ToolResultMessage,
    },
    /// The run's answer: its text, or a typed answer's JSON.
    Answer {
        /// The text (so far, when `partial`).
        text: &'a str,
        /// The text is still streaming: only an allow or a trip counts.
        partial: bool,
    },
}

impl What<'_> {
    /// The place of the run this is checked at.
    pub fn place(&self) -> Place {
        match self {
            What::Input(_) => Place::Input,
            What::Request(_) => Place::Request,
            What::Call { .. } => Place::Call,
            What::Result { .. } => Place::Result,
            What::Answer { .. } => Place::Answer,
        }
    }

    /// The text a person or a tool wrote, for guards that read text: the input's text parts
    /// joined, the call's arguments, the result's text, the answer; for a request, the text of
    /// its newest message.
    pub fn text(&self) -> String {
        match self {
            What::Input(messages) => messages.iter().map(text_of).collect::<Vec<_>>().join("\n"),
            What::Request(request) => request.messages.last().map(text_of).unwrap_or_default(),
            What::Call { call, .. } => call.arguments.clone(),
            What::Result { result, .. } => result.content.clone(),
            What::Answer { text, .. } => (*text).to_owned(),
        }
    }
}

/// The text of a message: its words, and a person's text parts after them.
fn text_of(message: &Message) -> String {
    match message {
        Message::System { content } => content.clone(),
        Message::User { content, parts } => {
            let texts = parts.iter().filter_map(|part| match part {
                crate::content::Part::Text { text } => Some(text.as_str()),
                _ => None,
            });
            std::iter::once(content.as_str())
                .chain(texts)
                .filter(|text| !text.is_empty())
                .collect::<Vec<_>>()
                .join("\n")
        }
        Message::Assistant(reply) => reply.content.clone(),
        Message::Tool(result) => result.content.clone(),
    }
}

/// How much of an answer's streamed text waits before the caller sees it, so that the guards on
/// the answer ([`At::ANSWER`]) can stop it first. Set with
/// [`Agent::hold_back`](crate::Agent::hold_back); without answer guards, nothing is held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum HoldBack {
    /// Text streams as it comes; the guards check the whole answer at its end (what they stop
    /// was already read).
    #[default]
    None,
    /// Each time this many more characters have come, the guards check the text so far (as
    /// partial text), and what is this many characters behind its end goes: a person reads only
    /// checked text, and never the start of a word or number the window can hold before the
    /// guards have seen all of it; text is up to twice the window late.
    Window(usize),
    /// Nothing streams until the guards have checked the whole answer.
    All,
}
