//! Tools from methods: a value (a service holding a client, a connection pool) whose methods are
//! tools, added to an agent in one go.

use std::sync::Arc;

use crate::tool::Tool;
use crate::tool::dispatcher::{ToolSet, ToolSetError};

/// A value whose methods are tools: what `#[tool]` on an inherent `impl` block implements.
///
/// Each method of the block marked `#[tool]` becomes a tool that calls the method on the value,
/// which all of them share. The methods stay ordinary methods; the block's other methods are left
/// as they are. Add the tools with [`Agent::try_toolbox`](crate::Agent::try_toolbox) or [`ToolSet::add_toolbox`], or take
/// them as a list with [`into_tools`](ToolBox::into_tools).
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
///
/// use agent_core::testing::ScriptedModel;
/// use agent_core::{Agent, AssistantMessage, ToolCall, ToolError, tool};
///
/// /// A counter the model can read and bump.
/// struct Counter {
///     count: AtomicU64,
/// }
///
/// #[tool]
/// impl Counter {
///     /// Add to the counter and return its new value.
///     #[tool]
///     async fn bump(
///         &self,
///         /// How much to add
///         #[arg(default = 1)]
///         by: u64,
///     ) -> Result<u64, ToolError> {
///         let before = self.count.fetch_add(by, Ordering::SeqCst);
///         before.checked_add(by).ok_or_else(|| ToolError::failed("the counter overflowed"))
///     }
///
///     /// Read the counter.
///     #[tool(read_only, name = "read_counter")]
///     fn read(&self) -> u64 {
///         self.count.load(Ordering::SeqCst)
///     }
///
///     /// Not a tool: an ordinary method.
///     fn reset(&self) {
///         self.count.store(0, Ordering::SeqCst);
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let model = ScriptedModel::new([
///     AssistantMessage::tool_calls([
///         ToolCall::new("1", "bump", r#"{"by": 2}"#),
///         ToolCall::new("2", "read_counter", "{}"),
///     ]),
///     AssistantMessage::text("The counter is at 2."),
/// ]);
/// let counter = Counter { count: AtomicU64::new(0) };
/// let agent = Agent::new(model).sequential_tools().try_toolbox(counter)?;
/// let out = agent.run("Bump the counter by two.").await.unwrap();
/// assert_eq!(out.text, "The counter is at 2.");
/// # Ok::<(), agent_core::ToolSetError>(())
/// # }).unwrap();
/// ```
///
/// A `#[tool]` method takes `&self` (keep what changes behind a `Mutex` or an atomic: calls may run
/// at once), or `self: Arc<Self>` when it needs a handle of its own (to spawn a task with). An
/// associated function without a receiver may be a tool too: it just does not use the value. Its
/// `#[tool(...)]` takes the keys of a `#[tool] fn` (name, description, hints, `timeout`, `inline`),
/// and its parameters, docs, defaults, [`State`](crate::State) parameters, return types, sync or
/// async, all behave as for a `#[tool] fn`. The block's own `#[tool]` takes only
/// `crate = "path::to::agent_core"`.
///
/// `S` is the type of the run's context: the value is a `ToolBox<S>` for every `S` that all its
/// tools' `State` parameters can be taken from. The block cannot be generic or a trait impl, and the value must be
/// `Send + Sync + 'static`, as its tools share it across calls.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a toolbox",
    label = "expected a value whose methods are tools",
    note = "put `#[tool]` on an inherent `impl {Self} {{ .. }}` block, and on each of its methods that is a tool",
    note = "if it is one, a `State` parameter of its tools may need a part of the context that `{S}` lacks"
)]
pub trait ToolBox<S = ()>: Send + Sync + 'static {
    /// The tools, each holding a handle of the shared value.
    fn tools(self: Arc<Self>) -> Vec<Arc<dyn Tool<S>>>;

    /// The tools of this value, as a list that [`Agent::try_tools`](crate::Agent::try_tools) and
    /// [`ToolSet::add_all`] take.
    fn into_tools(self) -> Vec<Arc<dyn Tool<S>>>
    where
        Self: Sized,
    {
        Arc::new(self).tools()
    }
}

/// A value already shared: its tools share it with whoever else holds it.
impl<S, T: ToolBox<S>> ToolBox<S> for Arc<T> {
    fn tools(self: Arc<Self>) -> Vec<Arc<dyn Tool<S>>> {
        Arc::unwrap_or_clone(self).tools()
    }
}

impl<S: Send + Sync + 'static> ToolSet<S> {
    /// Adds the tools of a value (see [`ToolBox`]). Fails, adding none of them, if a name is taken
    /// (by a tool already in the set, or by another of the value's) or invalid.
    pub fn add_toolbox(&mut self, toolbox: impl ToolBox<S>) -> Result<(), ToolSetError> {
        self.add_all(toolbox.into_tools())
    }
}
