//! Tools from closures, made at run time: for tools whose names and descriptions come from
//! configuration rather than from code.

use std::future::Future;
use std::marker::PhantomData;
use std::time::Duration;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use crate::message::ToolCall;
use crate::reasons::tool_error::ToolError;
use crate::schema::{output_schema, parameters_schema};
use crate::tool::arguments::ToolParameter;
use crate::tool::arguments::{SchemaFit, Unfit};
use crate::tool::call_info::CallInfo;
use crate::tool::return_value::IntoToolResult;
use crate::tool::scope::RunScope;
use crate::tool::state::{FromRef, State};
use crate::tool::{BoxFuture, Tool, ToolAnnotations, ToolDef, ToolOutput};

/// A tool made at run time from a name, a description and an async closure that takes the tool's
/// arguments as one typed value.
///
/// The closure takes the tool's arguments last, as one value of a type `Args: Deserialize +
/// JsonSchema` (a struct, as the arguments are a JSON object), and before them, as `#[tool]`
/// functions may, a part of the run's context (see [`State`]) and which call this is (see
/// [`CallInfo`]), in this order:
///
/// - `|args: Args| async move { .. }`
/// - `|State(x): State<X>, args: Args| async move { .. }`
/// - `|call: CallInfo, args: Args| async move { .. }`
/// - `|State(x): State<X>, call: CallInfo, args: Args| async move { .. }`
///
/// Its future resolves to any [`IntoToolResult`]: text, `()`, JSON, or a `Result` of those.
///
/// The schema comes from `Args` as a `#[tool]`'s does from its parameters, doc comments and all;
/// the model's arguments are parsed as strictly (unknown fields are errors at any depth), and
/// arguments that do not fit reach the model with their field paths (every missing, unknown or
/// mistyped field the schema can tell, else serde's first error). The tool is a [`Tool<S>`](Tool) for every
/// context `S` (with a `State<X>`, every `S` that `X` can be taken from), so it goes to
/// [`Agent::try_tool`](crate::Agent::try_tool) or [`ToolSet::add`](crate::ToolSet::add), which
/// reject a name that is invalid or taken.
///
/// ```
/// use agent_core::testing::ScriptedModel;
/// use agent_core::{Agent, AssistantMessage, State, ToolCall, ToolError, tool_fn};
/// use schemars::JsonSchema;
/// use serde::Deserialize;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Lookup {
///     /// The customer's id
///     id: u32,
/// }
///
/// #[derive(Clone)]
/// struct Db { names: Vec<String> }
///
/// // From a config file, say.
/// let (name, description) = ("lookup_customer", "Look up a customer's name by id.");
///
/// let lookup = tool_fn(name, description, |State(db): State<Db>, args: Lookup| async move {
///     db.names
///         .get(args.id as usize)
///         .cloned()
///         .ok_or_else(|| ToolError::failed(format!("no customer {}", args.id)))
/// })
/// .read_only(true);
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let model = ScriptedModel::new([
///     AssistantMessage::tool_calls([ToolCall::new("1", "lookup_customer", r#"{"id": 1}"#)]),
///     AssistantMessage::text("That is Bo."),
/// ]);
/// let db = Db { names: vec!["Ann".into(), "Bo".into()] };
/// let agent = Agent::new(model).try_tool(lookup)?.bind_context(db);
/// let out = agent.run("Who is customer 1?").await.unwrap();
/// assert_eq!(out.text, "That is Bo.");
/// # Ok::<(), agent_core::ToolSetError>(())
/// # }).unwrap();
/// ```
///
/// The closure must be `Send + Sync + 'static`: move what it uses into it, and clone it into each
/// future (`move |args: Args| { let client = client.clone(); async move { .. } }`), or take it from
/// the run's context. A closure's argument type must be written out: `|args: Lookup|`.
///
/// A [`CallInfo`] gives the run's id (the one given with
/// [`RunRequest::run_id`](crate::RunRequest::run_id), or the run's fresh one), the model's id for
/// the call and the tool's name: for a key of the call's own, say an idempotency key. A call made
/// outside a run ([`ToolSet::dispatch`](crate::ToolSet::dispatch)) gets a fresh run id.
///
/// ```
/// use agent_core::testing::ScriptedModel;
/// use agent_core::{Agent, AssistantMessage, CallInfo, ToolCall, tool_fn};
/// use schemars::JsonSchema;
/// use serde::Deserialize;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Charge {
///     cents: u32,
/// }
///
/// let charge = tool_fn("charge", "Charge the card.", |call: CallInfo, args: Charge| async move {
///     // A real tool sends this as the payment API's idempotency key.
///     format!("charged {} cents, key {}", args.cents, call.idempotency_key())
/// });
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let model = ScriptedModel::new([
///     AssistantMessage::tool_calls([ToolCall::new("call_7", "charge", r#"{"cents": 500}"#)]),
///     AssistantMessage::text("Done."),
/// ]);
/// let agent: Agent = Agent::new(model).try_tool(charge)?;
/// let out = agent.run("Charge me 5 dollars").run_id("order-1234").await.unwrap();
/// assert_eq!(out.messages[3].content(), "charged 500 cents, key order-1234/call_7");
/// # Ok::<(), agent_core::ToolSetError>(())
/// # }).unwrap();
/// ```
pub fn tool_fn<F, M>(
    name: impl Into<String>,
    description: impl Into<String>,
    function: F,
) -> ToolFn<F, M>
where
    F: ToolClosure<M> + Send + Sync + 'static,
    F::Arguments: ToolParameter,
    F::Future: Future<Output: IntoToolResult> + Send + 'static,
{
    let (parameters, fit) = arguments_of::<F::Arguments>();
    ToolFn {
        definition: ToolDef::new(name, description, parameters),
        fit,
        function,
        marker: PhantomData,
    }
}

/// A tool made by [`tool_fn`] from a closure. `M` records the closure's shape: `(Args,)`,
/// `(E1, Args)` or `(E1, E2, Args)`, each `E` a [`FromCall`] value (`State<X>`, `CallInfo`).
pub struct ToolFn<F, M> {
    definition: ToolDef,
    fit: SchemaFit,
    function: F,
    marker: PhantomData<fn() -> M>,
}

impl<F, M> ToolFn<F, M> {
    /// What the model sees of this tool: its name, description and parameter schema.
    pub fn definition(&self) -> &ToolDef {
        &self.definition
    }

    /// Sets every annotation at once.
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.definition.annotations = annotations;
        self
    }

    /// Marks the tool read-only (or not): it does not change its environment.
    pub fn read_only(self, value: bool) -> Self {
        self.annotate(|annotations| annotations.read_only(value))
    }

    /// Marks the tool destructive (or not).
    pub fn destructive(self, value: bool) -> Self {
        self.annotate(|annotations| annotations.destructive(value))
    }

    /// Marks the tool idempotent (or not).
    pub fn idempotent(self, value: bool) -> Self {
        self.annotate(|annotations| annotations.idempotent(value))
    }

    /// Marks the tool open-world (or not).
    pub fn open_world(self, value: bool) -> Self {
        self.annotate(|annotations| annotations.open_world(value))
    }

    /// Requires (or not) that each call be approved first (see
    /// [`Agent::approve_with`](crate::Agent::approve_with)).
    pub fn requires_approval(self, value: bool) -> Self {
        self.annotate(|annotations| annotations.requires_approval(value))
    }

    /// Sets how long one call may run before it is cancelled (the agent's default otherwise).
    pub fn timeout(self, timeout: Duration) -> Self {
        self.annotate(|annotations| annotations.timeout(timeout))
    }

    /// Gives the tool the output schema of `T`, the type its JSON results have (see
    /// [`output_schema`](crate::output_schema): only an object's schema is kept).
    pub fn output_schema<T: JsonSchema>(mut self) -> Self {
        self.definition.output_schema = output_schema::<T>();
        self
    }

    fn annotate(mut self, change: impl FnOnce(ToolAnnotations) -> ToolAnnotations) -> Self {
        let annotations = std::mem::take(&mut self.definition.annotations);
        self.definition.annotations = change(annotations);
        self
    }
}

impl<F, M> std::fmt::Debug for ToolFn<F, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolFn")
            .field("definition", &self.definition)
            .finish_non_exhaustive()
    }
}

mod sealed {
    pub trait Sealed<M> {}

    /// What may come before a closure tool's arguments, whatever the context: `State<X>` and
    /// `CallInfo`.
    pub trait BeforeArguments {}
}

impl<X> sealed::BeforeArguments for State<X> {}
impl sealed::BeforeArguments for CallInfo {}

/// A closure parameter before the arguments that comes from the run, not the model: a part of
/// the run's context ([`State`]) or which call this is ([`CallInfo`]), as with `#[tool]`
/// functions. Implemented by those two only.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not come from the run",
    label = "only `State<X>` and `CallInfo` may come before the tool's arguments",
    note = "the tool's arguments are one value, the closure's last parameter: `|args: Args| ..`"
)]
pub trait FromCall<S>: sealed::BeforeArguments + Sized {
    /// The value for `call` of the run `run`, in `context`.
    #[doc(hidden)]
    fn from_call(context: &S, call: &ToolCall, run: &RunScope) -> Self;
}

impl<S, X: FromRef<S>> FromCall<S> for State<X> {
    fn from_call(context: &S, _call: &ToolCall, _run: &RunScope) -> Self {
        State(X::from_ref(context))
    }
}

impl<S> FromCall<S> for CallInfo {
    fn from_call(_context: &S, call: &ToolCall, run: &RunScope) -> Self {
        CallInfo::new(run.id().clone(), call)
    }
}

/// The shape of a closure [`tool_fn`] can make a tool of: the tool's arguments last, and before
/// them up to two [`FromCall`] values (`|args: Args| ..`, `|State(x): State<X>, args: Args| ..`,
/// `|call: CallInfo, args: Args| ..`, `|State(x): State<X>, call: CallInfo, args: Args| ..`). `M`
/// is that shape, which the compiler infers from the closure; the rest (the arguments' type, the
/// future, its result) is checked by `tool_fn`, each with its own message. Implemented for
/// closures and functions of those shapes only.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be made a tool",
    label = "expected an async closure taking the tool's arguments",
    note = "write `|args: Args| async move {{ .. }}`, with `Args: Deserialize + JsonSchema`, or `|State(x): State<X>, args: Args| async move {{ .. }}` to take a part of the run's context",
    note = "to learn which call this is, take a `CallInfo` just before the arguments: `|call: CallInfo, args: Args|` or `|State(x): State<X>, call: CallInfo, args: Args|`"
)]
pub trait ToolClosure<M>: sealed::Sealed<M> {
    /// The type the model's arguments parse into.
    type Arguments;
    /// What the closure returns: the future of the call.
    type Future;
}

/// The shape `($($from,)* A)` of closure: the `ToolClosure` marker and the `Tool` impl.
macro_rules! closure_tool {
    ($($from:ident),*) => {
        impl<F, $($from,)* A, Fut> sealed::Sealed<($($from,)* A,)> for F
        where
            F: Fn($($from,)* A) -> Fut,
            $($from: sealed::BeforeArguments,)*
        {
        }

        impl<F, $($from,)* A, Fut> ToolClosure<($($from,)* A,)> for F
        where
            F: Fn($($from,)* A) -> Fut,
            $($from: sealed::BeforeArguments,)*
        {
            type Arguments = A;
            type Future = Fut;
        }

        impl<S, F, $($from,)* A, Fut> Tool<S> for ToolFn<F, ($($from,)* A,)>
        where
            S: Send + Sync + 'static,
            F: Fn($($from,)* A) -> Fut + Send + Sync + 'static,
            Fut: Future<Output: IntoToolResult> + Send + 'static,
            A: DeserializeOwned + JsonSchema + 'static,
            $($from: FromCall<S> + 'static,)*
        {
            fn definition(&self) -> &ToolDef {
                &self.definition
            }

            #[allow(unused_variables)]
            fn call<'a>(
                &'a self,
                context: &'a S,
                call: &'a ToolCall,
                run: &'a RunScope,
            ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
                match parse::<A>(&self.fit, &call.arguments) {
                    Ok(arguments) => {
                        let running =
                            (self.function)($($from::from_call(context, call, run),)* arguments);
                        Box::pin(async move { running.await.into_tool_result() })
                    }
                    Err(error) => Box::pin(std::future::ready(Err(error))),
                }
            }
        }
    };
}

closure_tool!();
closure_tool!(E1);
closure_tool!(E1, E2);

/// The parameter schema of a tool whose arguments are one `A`, and how arguments are fitted to
/// it: unknown fields are rejected, so the schema says so, as a `#[tool]`'s does.
pub(crate) fn arguments_of<A: JsonSchema>() -> (serde_json::Value, SchemaFit) {
    let mut parameters = parameters_schema::<A>();
    let an_object = output_schema::<A>().is_some();
    let fit = SchemaFit::of(parameters.clone(), an_object);
    if fit.closed()
        && let serde_json::Value::Object(root) = &mut parameters
    {
        root.entry("additionalProperties")
            .or_insert(serde_json::Value::Bool(false));
    }
    (parameters, fit)
}

/// Parses a call's arguments (`""` is `{}`), every failure a [`ToolError`] for the model.
pub(crate) fn parse<A: DeserializeOwned>(fit: &SchemaFit, raw: &str) -> Result<A, ToolError> {
    let raw = if raw.trim().is_empty() { "{}" } else { raw };
    fit.parse(raw).map_err(|unfit| match unfit {
        Unfit::Json(error) => ToolError::InvalidJson { error },
        Unfit::NotAnObject(value) => ToolError::arguments_not_an_object(&value),
        Unfit::Issues(issues) => ToolError::InvalidArguments { issues },
    })
}
