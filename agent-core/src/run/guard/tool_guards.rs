//! Guards on tool calls that arrive outside a run: the calls of a client of tools served to other
//! agents (an MCP server's), checked before they run and their results before they go back, as
//! a run's would be.

use std::sync::Arc;

use super::checks::{Asking, Folded, GuardRun, Guards, Registered};
use super::policy::{Call, Result as Checked};
use super::{At, Guard, Place, Tripped, Tripwire};
use crate::message::{ToolCall, ToolResultMessage};
use crate::texts::Texts;
use crate::tool::ToolDef;
use crate::tool::scope::AgentPath;
use crate::tool::wording::Wording;

/// Guards on calls' arguments ([`At::CALLS`]) and results ([`At::RESULTS`]) for tools called
/// outside a run: what a server of tools (`agent_mcp::McpServer::guard`) checks each call with.
///
/// ```
/// use agent_core::guard::{At, ToolGuards, Verdict, What, guard_fn};
/// use agent_core::{English, ToolCall};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let guards = ToolGuards::new().guard(
///     At::CALLS,
///     guard_fn("not home", |checked| match &checked.what {
///         What::Call { call, .. } if call.arguments.contains("/home") => {
///             Verdict::Refuse("the home folder stays".into())
///         }
///         _ => Verdict::Allow,
///     }),
/// );
/// let call = ToolCall::new("1", "wipe", r#"{"folder":"/home"}"#);
/// let stopped = guards.check_call(&call, None, &English).await.unwrap_err();
/// assert_eq!(stopped.to_string(), "the guard `not home` did not let this call run: the home folder stays");
/// # });
/// ```
#[derive(Clone, Default)]
pub struct ToolGuards(Arc<Guards>);

/// Why a call or its result does not go on: a guard refused it, or tripped.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Stopped {
    /// The guard refused: the call is not run, or its result is withheld.
    #[error("the guard `{guard}` did not let this call run: {reason}")]
    Refused {
        /// The guard's name.
        guard: String,
        /// Its words.
        reason: String,
    },
    /// The guard tripped.
    #[error("{0}")]
    Tripped(Box<Tripped>),
}

impl ToolGuards {
    /// No guards.
    pub fn new() -> Self {
        ToolGuards::default()
    }

    /// Adds a guard at calls, results or both (other places are a run's, and are not checked
    /// here).
    pub fn guard(mut self, at: At, guard: impl Guard + 'static) -> Self {
        Arc::make_mut(&mut self.0).add(Registered {
            guard: Arc::new(guard),
            at,
            beside: false,
        });
        self
    }

    /// Whether there is no guard.
    pub fn is_empty(&self) -> bool {
        self.0.list().is_empty()
    }

    /// Checks `call` (of the tool `tool`, if known) before it runs: the arguments it runs with
    /// when a guard rewrote them (`Ok(None)`: as they are), or why it does not run.
    pub async fn check_call(
        &self,
        call: &ToolCall,
        tool: Option<&ToolDef>,
        texts: &dyn Texts,
    ) -> Result<Option<String>, Stopped> {
        let tripwire = Tripwire::new();
        let run = self.run(texts, &tripwire);
        let mut checked = Call {
            call: std::borrow::Cow::Borrowed(call),
            tool,
        };
        let folded = run.fold(asking(Place::Call, &call.id), &mut checked).await;
        stopped(&run, folded)?;
        Ok(match checked.call {
            std::borrow::Cow::Owned(rewritten) => Some(rewritten.arguments),
            std::borrow::Cow::Borrowed(_) => None,
        })
    }

    /// Checks `call`'s result before it goes back (rewritten in place by a guard that rewrites),
    /// or says why it does not.
    pub async fn check_result(
        &self,
        call: &ToolCall,
        tool: Option<&ToolDef>,
        result: &mut ToolResultMessage,
        texts: &dyn Texts,
    ) -> Result<(), Stopped> {
        let tripwire = Tripwire::new();
        let run = self.run(texts, &tripwire);
        let mut checked = Checked { call, tool, result };
        let folded = run
            .fold(asking(Place::Result, &call.id), &mut checked)
            .await;
        stopped(&run, folded)
    }

    /// A run of these guards of its own: its trips go nowhere but to this check's `tripwire`.
    fn run<'t>(&self, texts: &'t dyn Texts, tripwire: &'t Tripwire) -> GuardRun<'t> {
        GuardRun::new(
            Arc::clone(&self.0),
            tripwire,
            AgentPath::default(),
            Wording {
                texts,
                ..Wording::default()
            },
            None,
            None,
            false,
        )
    }
}

impl std::fmt::Debug for ToolGuards {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolGuards")
            .field("guards", &self.0.list().len())
            .finish()
    }
}

fn asking(place: Place, key: &str) -> Asking<'_> {
    Asking {
        place,
        step: 0,
        key,
        beside: None,
        partial: false,
    }
}

/// How the guards came out, as the check's answer.
fn stopped(run: &GuardRun<'_>, folded: Folded) -> Result<(), Stopped> {
    match folded {
        Folded::Through => Ok(()),
        Folded::Refused { guard, reason } => Err(Stopped::Refused { guard, reason }),
        Folded::Tripped => match run.tripped() {
            Some(trip) => Err(Stopped::Tripped(Box::new(trip.clone()))),
            None => Err(Stopped::Refused {
                guard: String::new(),
                reason: "a guard tripped".into(),
            }),
        },
    }
}
