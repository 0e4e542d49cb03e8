//! State injection: tools take values from the agent (a database handle, an HTTP client, the user's id)
//! instead of from the model, in the style of axum's `State` extractor.

/// A tool parameter filled from the agent's state rather than from the model's arguments.
///
/// It does not appear in the tool's schema. The value comes from the run's context
/// ([`RunRequest::context`](crate::RunRequest::context)) or from state bound once for all runs
/// ([`Agent::state`](crate::Agent::state)); a tool whose state the agent lacks does not compile.
///
/// ```
/// use agent_core::{State, tool};
///
/// #[derive(Clone)]
/// struct Db { prefix: String }
///
/// /// Look up a customer by id.
/// #[tool]
/// fn lookup_customer(State(db): State<Db>, id: u32) -> String {
///     format!("{}{id}", db.prefix)
/// }
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct State<T>(pub T);

/// Gets a part of the agent's state out of the whole, as axum's `FromRef` does.
///
/// Every `Clone` type is its own part; implement this to hand tools a field of a larger state type.
#[diagnostic::on_unimplemented(
    message = "a tool needs state of type `{Self}`, but the agent's state is `{T}`",
    label = "this tool takes `State<{Self}>`",
    note = "give the agent its state with `.state(value)`, or each run its context with `.run(input).context(&value)`",
    note = "if `{Self}` is a part of a larger state, implement `FromRef<{T}> for {Self}`"
)]
pub trait FromRef<T> {
    /// Takes this part out of the whole.
    fn from_ref(input: &T) -> Self;
}

impl<T: StateClone> FromRef<T> for T {
    fn from_ref(input: &T) -> Self {
        input.clone()
    }
}

/// `Clone`, under a name whose error says why the agent's state needs it.
#[diagnostic::on_unimplemented(
    message = "the agent's state `{Self}` is not `Clone`",
    label = "each tool call takes its own copy of the state",
    note = "derive or implement `Clone` for `{Self}`; to share one value instead of copying it, put it in an `Arc`"
)]
#[doc(hidden)]
pub trait StateClone: Clone {}

// Not recommended, so the error names `StateClone` (and says why) rather than plain `Clone`.
#[diagnostic::do_not_recommend]
impl<T: Clone> StateClone for T {}

/// A second `FromRef` impl that no one uses, so the compiler cannot guess an agent's state from the
/// single blanket impl. Without it, `agent!(model, tool_needing_db)` would quietly become an
/// `Agent<Db>` and a forgotten `.state(db)` would read "no method `run`" instead of the error that says
/// which state is missing.
#[doc(hidden)]
pub struct NotAState<T>(std::marker::PhantomData<T>);

impl<T: Clone> FromRef<NotAState<T>> for T {
    fn from_ref(_: &NotAState<T>) -> Self {
        unreachable!("NotAState is never constructed")
    }
}
