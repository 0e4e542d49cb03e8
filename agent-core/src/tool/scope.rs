//! The run a tool call belongs to, as the tool is handed it: the run's id, which agent of a tree
//! of agents runs it (its [`AgentPath`]), the [`Budget`] the tree shares, and what a call that
//! starts runs of its own (an agent as a tool) needs to tie them to this one.

use std::any::Any;
use std::fmt;
use std::sync::{Arc, LazyLock};

use crate::budget::Budget;
use crate::tool::call_info::RunId;

/// Which agent of a tree of agents a run is: the names from the top agent down, joined with `/`
/// (`triage/researcher`). A run of an agent that no other agent started is one name long: the
/// agent's [name](crate::Agent::name), `agent` when it has none.
///
/// ```
/// use agent_core::AgentPath;
///
/// let top = AgentPath::new("triage");
/// let child = top.child("researcher");
/// assert_eq!(child.as_str(), "triage/researcher");
/// assert_eq!(child.name(), "researcher");
/// assert_eq!(child.depth(), 2);
/// assert!(top.contains(&child));
/// ```
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AgentPath(Arc<str>);

impl AgentPath {
    /// The path of a top agent called `name` (a `/` in it is written `_`: it would start a level).
    pub fn new(name: &str) -> Self {
        AgentPath(Arc::from(name.replace('/', "_")))
    }

    /// The path of the agent `name` started by this one.
    pub fn child(&self, name: &str) -> Self {
        AgentPath(Arc::from(format!("{}/{}", self.0, name.replace('/', "_"))))
    }

    /// The path of the agent `name` beside this one (under the same agent).
    pub fn beside(&self, name: &str) -> Self {
        match self.0.rsplit_once('/') {
            Some((above, _)) => AgentPath::new(above).child(name),
            None => AgentPath::new(name),
        }
    }

    /// The whole path.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The last name: the agent itself.
    pub fn name(&self) -> &str {
        self.0.rsplit('/').next().unwrap_or_default()
    }

    /// How many agents deep: 1 for a top agent.
    pub fn depth(&self) -> usize {
        self.0.split('/').count()
    }

    /// Whether `other` is this agent or one below it.
    pub fn contains(&self, other: &AgentPath) -> bool {
        other
            .0
            .strip_prefix(&*self.0)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    }
}

/// `agent`, the path of an agent not named (made once, shared by every run that has it).
impl Default for AgentPath {
    fn default() -> Self {
        static AGENT: LazyLock<AgentPath> = LazyLock::new(|| AgentPath::new("agent"));
        AGENT.clone()
    }
}

/// A path written out (`triage/researcher`), read back as it is.
impl std::str::FromStr for AgentPath {
    type Err = std::convert::Infallible;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Ok(AgentPath(Arc::from(text)))
    }
}

impl fmt::Display for AgentPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&self.0)
    }
}

impl fmt::Debug for AgentPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AgentPath({})", self.0)
    }
}

impl serde::Serialize for AgentPath {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> serde::Deserialize<'de> for AgentPath {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Ok(AgentPath(Arc::from(text)))
    }
}

/// The run a tool call belongs to, handed to [`Tool::call`](crate::Tool::call): its id, its
/// agent's path in a tree of agents, and the budget the tree shares. A call made outside a run
/// ([`ToolSet::dispatch`](crate::ToolSet::dispatch), an MCP client's) is a run of its own:
/// [`RunScope::new`] with a fresh id.
#[derive(Clone)]
pub struct RunScope {
    id: RunId,
    path: AgentPath,
    budget: Option<Budget>,
    /// What the run keeps for the runs its calls start (an agent as a tool): where their events
    /// and outputs go. Made by the run layer, opaque here.
    pub(crate) family: Option<Arc<dyn Any + Send + Sync>>,
}

impl RunScope {
    /// The scope of a run with the id `id`, of an agent no other started, without a budget.
    pub fn new(id: RunId) -> Self {
        RunScope {
            id,
            path: AgentPath::default(),
            budget: None,
            family: None,
        }
    }

    /// The same scope for the agent at `path`.
    pub fn with_path(mut self, path: AgentPath) -> Self {
        self.path = path;
        self
    }

    /// The same scope, sharing `budget`.
    pub fn with_budget(mut self, budget: Option<Budget>) -> Self {
        self.budget = budget;
        self
    }

    /// The run's id.
    pub fn id(&self) -> &RunId {
        &self.id
    }

    /// The run's agent in its tree of agents.
    pub fn path(&self) -> &AgentPath {
        &self.path
    }

    /// The budget the run shares with the runs that started it and those it starts, if it has
    /// one.
    pub fn budget(&self) -> Option<&Budget> {
        self.budget.as_ref()
    }
}

impl fmt::Debug for RunScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunScope")
            .field("id", &self.id)
            .field("path", &self.path)
            .field("budget", &self.budget.is_some())
            .finish_non_exhaustive()
    }
}
