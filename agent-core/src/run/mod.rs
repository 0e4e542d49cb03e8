//! Running an agent. The agent itself (`agent`), the one way into a run (`request`, and `start`,
//! where a request becomes a run), the seams a run's features plug into (`seams`, public) and the
//! values the crate ships for them (`layers`), the kernel that runs the loop over them
//! (`kernel`), what a run gives back (`outcome`), its live events (`events`), pausing (`pause`),
//! the hooks and approver (`hooks`), a typed run's answer check (`typed_answer`), the repair of a
//! history (`repair`), and the session store (`store`, with `locks`) and journal (`journal`).

pub(crate) mod agent;
pub(crate) mod answer;
pub(crate) mod context;
mod events;
pub(crate) mod guard;
pub(crate) mod hooks;
pub(crate) mod journal;
mod kernel;
pub(crate) mod kind;
pub(crate) mod layers;
mod locks;
pub(crate) mod outcome;
mod part;
pub(crate) mod pause;
mod repair;
mod request;
pub(crate) mod seams;
mod session_transcript;
mod start;
pub(crate) mod store;
pub(crate) mod tree;
mod typed_answer;

pub use agent::{AddToolError, Agent};
pub use answer::Answer;
pub use events::{EventSender, RunEvent, RunStream};
pub use hooks::{Approval, Approver, Hooks, ToolDecision};
pub use journal::Journal;
pub use kind::{NewRun, Ready, Resuming, ResumingSession, RunKind, Starting};
pub use outcome::{ChildFailure, ChildRun};
pub use outcome::{RunError, RunOutput, StopReason, TokenKind, TypedOutput};
pub use pause::{Decision, PAUSED_RUN_VERSION, PausedRun, PendingCall, ResumeError, Waiting};
pub use request::{ContextGiven, Input, NoContext, RunRequest, Text, Typed, WithContext};
pub use tree::{AgentInput, AgentTool, Handoff, HandoffHistory, HistoryFn};
