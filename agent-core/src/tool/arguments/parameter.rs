//! What a tool parameter must be: a type the model's JSON is parsed into, with a JSON schema.

use serde::de::DeserializeOwned;

/// A type a tool's parameter, or a closure tool's arguments, may have: one the model's JSON
/// arguments are parsed into (`serde::Deserialize`) and that has a JSON schema
/// (`schemars::JsonSchema`); every such type is one. Generated code names a parameter's type once,
/// as the argument of a function bounded by this trait, so a type that does not fit is one error
/// at the parameter, with this message, rather than one per use inside derived code.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter",
    label = "the model's JSON arguments cannot be parsed into `{Self}`, or it has no JSON schema",
    note = "a tool parameter must implement `serde::Deserialize` and `schemars::JsonSchema`: add `#[derive(Deserialize, JsonSchema)]` to `{Self}`"
)]
pub trait ToolParameter: DeserializeOwned + schemars::JsonSchema {}

// Not recommended: the error then names `ToolParameter` once, with its fix, rather than once for
// each of the two traits missing.
#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned + schemars::JsonSchema> ToolParameter for T {}
