//! Running an agent. The agent itself (`agent`), the one way into a run (`request`: what
//! [`Agent::run`] and [`Agent::resume`] return), the kernel behind it (`kernel`: the loop and its
//! seams), what a run gives back (`outcome`), its live events (`events`), pausing (`pause`), the
//! hooks and approver that decide each call (`hooks`), and the seams other layers plug into: the
//! session store (`store`, with `locks`) and the journal (`journal`).

pub(crate) mod agent;
mod events;
pub(crate) mod hooks;
pub(crate) mod journal;
mod kernel;
mod locks;
pub(crate) mod outcome;
pub(crate) mod pause;
mod request;
pub(crate) mod store;

pub use agent::{AddToolError, Agent};
pub use events::{EventSender, RunEvent, RunStream};
pub use hooks::{Approval, Approver, Hooks, ToolDecision};
pub use journal::Journal;
pub use outcome::{RunError, RunOutput, StopReason, TokenKind, TypedOutput};
pub use pause::{Decision, PAUSED_RUN_VERSION, PausedRun, PendingCall, ResumeError, Waiting};
pub use request::{
    Answer, ContextGiven, Input, NoContext, ResumeFrom, RunRequest, Text, Typed, WithContext,
};
