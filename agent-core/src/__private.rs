//! Support for the code `#[tool]` and `agent!` generate. Not a public API: it may change at any time.

pub use schemars;
pub use serde;
pub use serde_json;

pub use crate::run::EventSender;
pub use crate::run::guard::{MixCheck, Touches};
pub use crate::schema::{output_schema, parameters_schema};
pub use crate::tool::arguments::{
    FieldSpec, Slot, Slots, arguments_schema, check_field, parse_arguments, parse_flat_arguments,
};
pub use crate::tool::blocking::{Blocking, run_blocking};

use std::fmt::Display;
use std::marker::PhantomData;
use std::sync::OnceLock;

use serde::Serialize;
use serde_json::Value;

use crate::content::Part;
use crate::message::ToolCall;
use crate::reasons::tool_error::ToolError;
use crate::run::Agent;
use crate::tool::call_info::CallInfo;
use crate::tool::dispatcher::ToolSet;
use crate::tool::scope::RunScope;
use crate::tool::state::{FromRef, State};
use crate::tool::{BoxFuture, Tool, ToolDef, ToolOutput};

/// What a `#[tool]`'s glue holds: how its arguments are read into its parameters (nested,
/// `(P0, (P1, ()))`), along its table of them.
pub type Glue<T, const N: usize> = (
    fn(&str, &[FieldSpec]) -> Result<T, ToolError>,
    [FieldSpec; N],
);

/// A lazily built tool definition, one per `#[tool]`.
pub type DefinitionCell = OnceLock<ToolDef>;

/// Where `agent!` and `tools!` add the tools they list: an [`Agent`] or a [`ToolSet`].
pub trait AddCheckedTool<S>: Sized {
    /// Adds a `#[tool]` whose name `#[tool]` validated and the macro proved distinct from the
    /// others, so adding it cannot fail.
    fn add_checked_tool(self, tool: impl Tool<S>) -> Self;
}

impl<S: Send + Sync + 'static> AddCheckedTool<S> for ToolSet<S> {
    fn add_checked_tool(mut self, tool: impl Tool<S>) -> Self {
        let added = self.add(tool);
        debug_assert!(added.is_ok(), "{added:?}");
        self
    }
}

impl<S: Send + Sync + 'static> AddCheckedTool<S> for Agent<S> {
    fn add_checked_tool(mut self, tool: impl Tool<S>) -> Self {
        self.tools = self.tools.add_checked_tool(tool);
        self
    }
}

/// Compares two strings in a `const` context, for `agent!`'s duplicate-name check.
pub const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut index = 0;
    while index < a.len() {
        if a[index] != b[index] {
            return false;
        }
        index += 1;
    }
    true
}

// What a tool's return value becomes, chosen by type with autoref-based specialization: generated
// code calls `(&&Kind(&value)).method()`, and an impl for `&Kind<X>` wins over one for `Kind<T>`.

/// Borrows a value so its type can pick an impl.
pub struct Kind<'a, T>(pub &'a T);

/// The return value is a `Result`.
pub struct ResultTag;
/// The return value is not a `Result`.
pub struct PlainTag;
/// Picks [`ResultTag`].
pub trait ResultKind {
    /// Classifies the return value.
    fn __result_kind(&self) -> ResultTag {
        ResultTag
    }
}
impl<T, E> ResultKind for &Kind<'_, Result<T, E>> {}
/// Picks [`PlainTag`].
pub trait PlainKind {
    /// Classifies the return value.
    fn __result_kind(&self) -> PlainTag {
        PlainTag
    }
}
impl<T> PlainKind for Kind<'_, T> {}

impl ResultTag {
    /// A `Result` stays itself.
    pub fn split<T, E>(self, value: Result<T, E>) -> Result<T, E> {
        value
    }
}
impl PlainTag {
    /// A plain value always succeeds.
    pub fn split<T>(self, value: T) -> Result<T, std::convert::Infallible> {
        Ok(value)
    }
}

/// The success value has a fixed meaning (text, nothing, a ready output).
pub struct ExactTag;
/// The success value is serialized as JSON.
pub struct JsonTag;
/// Picks [`ExactTag`].
pub trait ExactKind {
    /// Classifies the success value.
    fn __output_kind(&self) -> ExactTag {
        ExactTag
    }
}
impl ExactKind for &Kind<'_, String> {}
impl ExactKind for &Kind<'_, &str> {}
impl ExactKind for &Kind<'_, ()> {}
impl ExactKind for &Kind<'_, ToolOutput> {}
impl ExactKind for &Kind<'_, Part> {}
impl ExactKind for &Kind<'_, Vec<Part>> {}
/// Picks [`JsonTag`].
pub trait JsonKind {
    /// Classifies the success value.
    fn __output_kind(&self) -> JsonTag {
        JsonTag
    }
}
impl<T> JsonKind for Kind<'_, T> {}

/// A success value with a fixed meaning.
pub trait ExactOutput {
    /// What the value means.
    fn into_output(self) -> ToolOutput;
}
impl ExactOutput for String {
    fn into_output(self) -> ToolOutput {
        ToolOutput::Text(self)
    }
}
impl ExactOutput for &str {
    fn into_output(self) -> ToolOutput {
        ToolOutput::Text(self.to_owned())
    }
}
impl ExactOutput for () {
    fn into_output(self) -> ToolOutput {
        ToolOutput::Done
    }
}
impl ExactOutput for ToolOutput {
    fn into_output(self) -> ToolOutput {
        self
    }
}
impl ExactOutput for Part {
    fn into_output(self) -> ToolOutput {
        ToolOutput::Parts(vec![self])
    }
}
impl ExactOutput for Vec<Part> {
    fn into_output(self) -> ToolOutput {
        ToolOutput::Parts(self)
    }
}

impl ExactTag {
    /// Text goes verbatim, `()` as done, a [`ToolOutput`] as it is.
    pub fn convert<T: ExactOutput>(self, value: T) -> Result<ToolOutput, ToolError> {
        Ok(value.into_output())
    }
}
impl JsonTag {
    /// Anything else is serialized.
    pub fn convert<T: Serialize>(self, value: T) -> Result<ToolOutput, ToolError> {
        ToolOutput::json(&value)
    }
}

/// The error is already a [`ToolError`].
pub struct ToolErrorTag;
/// The error displays.
pub struct DisplayTag;
/// Picks [`ToolErrorTag`].
pub trait ToolErrorKind {
    /// Classifies the error.
    fn __error_kind(&self) -> ToolErrorTag {
        ToolErrorTag
    }
}
impl ToolErrorKind for &Kind<'_, ToolError> {}
/// Picks [`DisplayTag`].
pub trait DisplayKind {
    /// Classifies the error.
    fn __error_kind(&self) -> DisplayTag {
        DisplayTag
    }
}
impl<E> DisplayKind for Kind<'_, E> {}

impl ToolErrorTag {
    /// A tool error stays itself.
    pub fn convert(self, error: ToolError) -> ToolError {
        error
    }
}
impl DisplayTag {
    /// Any other error becomes a failure with its message.
    pub fn convert<E: ToolErrorMessage>(self, error: E) -> ToolError {
        ToolError::failed(error.to_string())
    }
}

/// An error type a tool may return: one that displays, as its text is what the model reads.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's error: it does not implement `Display`",
    label = "the model is told a failed call's error as text",
    note = "return `Result<_, agent_core::ToolError>` and build the error with `ToolError::failed(message)`, or implement `Display` for `{Self}`"
)]
pub trait ToolErrorMessage: Display {}
impl<E: Display> ToolErrorMessage for E {}

// The output schema is chosen by type alone (no value exists when the definition is built), with the
// same autoref trick on a zero-sized `Probe<T>`: first the success type of the return type, then
// whether it has a schema.

/// Names a type so it can pick an impl.
pub struct Probe<T: ?Sized>(PhantomData<fn() -> T>);

impl<T: ?Sized> Probe<T> {
    /// A probe for `T`.
    pub const fn new() -> Self {
        Probe(PhantomData)
    }
}

impl<T: ?Sized> Default for Probe<T> {
    fn default() -> Self {
        Probe::new()
    }
}

/// The success type of a `Result`.
pub trait ResultSuccess<T> {
    /// Probes the success type.
    fn __success(&self) -> Probe<T> {
        Probe::new()
    }
}
impl<T, E> ResultSuccess<T> for &Probe<Result<T, E>> {}
/// Any other return type is its own success type.
pub trait PlainSuccess<T> {
    /// Probes the success type.
    fn __success(&self) -> Probe<T> {
        Probe::new()
    }
}
impl<T> PlainSuccess<T> for Probe<T> {}

/// A success type with a schema, which is the output schema when it describes an object.
pub trait WithOutputSchema {
    /// The output schema.
    fn __output_schema(&self) -> Option<Value>;
}
impl<T: schemars::JsonSchema> WithOutputSchema for &Probe<T> {
    fn __output_schema(&self) -> Option<Value> {
        output_schema::<T>()
    }
}
/// A success type without a schema has no output schema.
pub trait WithoutOutputSchema {
    /// No output schema.
    fn __output_schema(&self) -> Option<Value> {
        None
    }
}
impl<T> WithoutOutputSchema for Probe<T> {}

pub use crate::tool::arguments::ToolParameter;

// A parameter's default shows in the schema when its type serializes, as schemars' derive shows
// it; chosen by type with the same autoref trick: `(&&DefaultJson(value)).__default_json()`.

/// Holds a parameter's default value so its type can pick an impl.
pub struct DefaultJson<T>(pub T);

/// The default serializes: the schema shows it.
pub trait SerializableDefault {
    /// The default as JSON.
    fn __default_json(&self) -> Option<Value>;
}
impl<T: Serialize> SerializableDefault for &DefaultJson<T> {
    fn __default_json(&self) -> Option<Value> {
        serde_json::to_value(&self.0).ok()
    }
}
/// The default does not serialize: the schema shows none.
pub trait NoDefaultJson {
    /// No default in the schema.
    fn __default_json(&self) -> Option<Value> {
        None
    }
}
impl<T> NoDefaultJson for DefaultJson<T> {}

/// Every type is the same as itself: how a parameter's default, an expression of the user's type,
/// fills the generic parameter of the parsing glue without naming the type in any other bound.
pub trait Same<T> {
    /// The value, as the type it already is.
    fn same(value: T) -> Self;
}
impl<T> Same<T> for T {
    fn same(value: T) -> Self {
        value
    }
}

/// What a parameter whose type is written `State<..>` must be: agent-core's [`State`]. Another type
/// named `State` (axum's, one's own) is an error at it rather than being quietly taken from the agent.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not `agent_core::State`",
    label = "#[tool] takes a parameter whose type is named `State` from the run's context",
    note = "for a value from the agent, import `agent_core::State`",
    note = "for a value from the model, give the type another name: `use path::to::State as MyState;`"
)]
pub trait AgentState<T> {
    /// Wraps the part of the run's context the tool takes.
    fn from_inner(inner: T) -> Self;
}
impl<T> AgentState<T> for State<T> {
    fn from_inner(inner: T) -> Self {
        State(inner)
    }
}

/// What a parameter whose type is written `CallInfo` must be: agent-core's [`CallInfo`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not `agent_core::CallInfo`",
    label = "#[tool] fills a parameter whose type is named `CallInfo` from the run",
    note = "for the run's id and the model's call id, import `agent_core::CallInfo`",
    note = "for a value from the model, give the type another name: `use path::to::CallInfo as MyCallInfo;`"
)]
pub trait AgentCallInfo {
    /// Which call this is: `call` of the run `run`.
    fn from_call(call: &ToolCall, run: &RunScope) -> Self;
}
impl AgentCallInfo for CallInfo {
    fn from_call(call: &ToolCall, run: &RunScope) -> Self {
        CallInfo::new(run.id().clone(), call)
    }
}

/// The context `S` holds a part of type `T`: `T: FromRef<S>` with `S` first, which is how a
/// tool's impl states it. With the context as the self type, the compiler waits until it knows the
/// agent's context before judging the bound, so a context that is not `Clone` is reported as such,
/// not as "the agent's context is `_`".
pub trait ProvidesState<T> {
    /// Takes the part out of the context.
    fn provide(&self) -> T;
}
impl<S, T: FromRef<S>> ProvidesState<T> for S {
    fn provide(&self) -> T {
        T::from_ref(self)
    }
}

/// The definition of a `#[tool]` that did not compile: it only has to type-check.
pub fn broken_tool_definition(name: &str) -> ToolDef {
    ToolDef::new(name, "", Value::Object(serde_json::Map::new()))
}

/// The call of a `#[tool]` that did not compile: it never runs, as the crate does not build.
pub fn broken_tool_call<'a>() -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
    Box::pin(std::future::ready(Err(ToolError::failed(
        "this tool did not compile",
    ))))
}
