//! Values from the run's context: tools take them (a database handle, an HTTP client, the user's
//! id) from the context the run is given instead of from the model, in the style of axum's `State`
//! extractor.

/// A tool parameter filled from the run's context rather than from the model's arguments.
///
/// It does not appear in the tool's schema. The value is the context, or a part of it
/// ([`FromRef`]): each run's ([`RunRequest::context`](crate::RunRequest::context)), or one bound
/// for all runs ([`Agent::bind_context`](crate::Agent::bind_context)); a tool that takes a part
/// the agent's context lacks does not compile.
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

/// Gets a part of the context out of the whole, as axum's `FromRef` does.
///
/// Every `Clone` type is its own part; implement this to hand tools a field of a larger context
/// type.
#[diagnostic::on_unimplemented(
    message = "a tool takes `State<{Self}>`, but the agent's context is `{T}`",
    label = "this tool takes `State<{Self}>`",
    note = "give each run its context with `.run(input).context(&value)`, or the agent one for all runs with `.bind_context(value)`",
    note = "if `{Self}` is a part of a larger context, implement `FromRef<{T}> for {Self}`"
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

/// `Clone`, under a name whose error says why a context taken whole needs it.
#[diagnostic::on_unimplemented(
    message = "the agent's context `{Self}` is not `Clone`",
    label = "each tool call takes its own copy of the context",
    note = "derive or implement `Clone` for `{Self}`; to share one value instead of copying it, put it in an `Arc`"
)]
#[doc(hidden)]
pub trait StateClone: Clone {}

// Not recommended, so the error names `StateClone` (and says why) rather than plain `Clone`.
#[diagnostic::do_not_recommend]
impl<T: Clone> StateClone for T {}

/// A second `FromRef` impl that no one uses, so the compiler cannot guess an agent's context from
/// the single blanket impl. Without it, `agent!(model, tool_needing_db)` would quietly become an
/// `Agent<Db>` and a forgotten `.bind_context(db)` would read "no method `run`" instead of the error
/// that says which context is missing.
#[doc(hidden)]
pub struct NotAContext<T>(std::marker::PhantomData<T>);

impl<T: Clone> FromRef<NotAContext<T>> for T {
    fn from_ref(_: &NotAContext<T>) -> Self {
        unreachable!("NotAContext is never constructed")
    }
}
