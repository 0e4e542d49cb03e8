//! What a tool built at run time (see [`tool_fn`](crate::tool_fn)) may return, and what each
//! return value becomes: the same meanings a `#[tool] fn`'s return types have.

use std::any::Any;
use std::fmt::Display;

use serde::Serialize;

use crate::content::Part;
use crate::reasons::tool_error::ToolError;
use crate::tool::ToolOutput;

/// A value a [`tool_fn`](crate::tool_fn) closure's future may resolve to.
///
/// - `String` and `&'static str` go to the model verbatim; `()` as a short success text; a
///   [`ToolOutput`] as it is; a [`Part`] or a `Vec<Part>` (an image, a document) as parts.
/// - A `serde_json::Value`, or any `Serialize` value wrapped in [`Json`], is serialized as JSON.
/// - `Result<T, E>` with `T` one of those: an `Err` fails the call. A [`ToolError`] stays itself;
///   any other error (anything that implements `Display`) becomes [`ToolError::Failed`] with its
///   message.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's result",
    label = "the model is told a tool's result as text or JSON",
    note = "return `String`, `&'static str`, `()`, a `ToolOutput`, a `Part` or `Vec<Part>`, a `serde_json::Value`, or `Json(value)` for any `Serialize` value",
    note = "or a `Result` of one of those, whose error implements `Display` (a `ToolError` is kept as it is)"
)]
pub trait IntoToolResult {
    /// What the call produced, or how it failed.
    fn into_tool_result(self) -> Result<ToolOutput, ToolError>;
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::Text(self))
    }
}

impl IntoToolResult for &'static str {
    fn into_tool_result(self) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::Text(self.to_owned()))
    }
}

impl IntoToolResult for () {
    fn into_tool_result(self) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::Done)
    }
}

impl IntoToolResult for ToolOutput {
    fn into_tool_result(self) -> Result<ToolOutput, ToolError> {
        Ok(self)
    }
}

impl IntoToolResult for Part {
    fn into_tool_result(self) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::Parts(vec![self]))
    }
}

impl IntoToolResult for Vec<Part> {
    fn into_tool_result(self) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::Parts(self))
    }
}

impl IntoToolResult for serde_json::Value {
    fn into_tool_result(self) -> Result<ToolOutput, ToolError> {
        ToolOutput::json(&self)
    }
}

/// A value a tool returns as JSON: `Json(weather)` for any `Serialize` value.
///
/// ```
/// use agent_core::{IntoToolResult, Json, ToolOutput};
///
/// #[derive(serde::Serialize)]
/// struct Weather { city: String, temp: i32 }
///
/// let result = Json(Weather { city: "Oslo".into(), temp: 4 }).into_tool_result();
/// assert_eq!(result, Ok(ToolOutput::Json(r#"{"city":"Oslo","temp":4}"#.into())));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Json<T>(pub T);

impl<T: Serialize> IntoToolResult for Json<T> {
    fn into_tool_result(self) -> Result<ToolOutput, ToolError> {
        ToolOutput::json(&self.0)
    }
}

impl<T: IntoToolResult, E: Display + 'static> IntoToolResult for Result<T, E> {
    fn into_tool_result(self) -> Result<ToolOutput, ToolError> {
        match self {
            Ok(value) => value.into_tool_result(),
            Err(error) => Err(into_tool_error(error)),
        }
    }
}

/// A [`ToolError`] stays itself (a timeout a tool reports keeps its kind); any other error is a
/// failure with its message.
fn into_tool_error<E: Display + 'static>(error: E) -> ToolError {
    let mut slot = Some(error);
    let any: &mut dyn Any = &mut slot;
    if let Some(tool_error) = any
        .downcast_mut::<Option<ToolError>>()
        .and_then(Option::take)
    {
        return tool_error;
    }
    slot.map_or_else(
        || ToolError::failed(""),
        |error| ToolError::failed(error.to_string()),
    )
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn each_return_value_means_what_a_tool_fns_does() {
        assert_eq!(
            "hi".to_owned().into_tool_result(),
            Ok(ToolOutput::Text("hi".into()))
        );
        assert_eq!("hi".into_tool_result(), Ok(ToolOutput::Text("hi".into())));
        assert_eq!(().into_tool_result(), Ok(ToolOutput::Done));
        assert_eq!(
            serde_json::json!({"a": [1, 2]}).into_tool_result(),
            Ok(ToolOutput::Json(r#"{"a":[1,2]}"#.into()))
        );
        assert_eq!(
            Json(vec![1, 2]).into_tool_result(),
            Ok(ToolOutput::Json("[1,2]".into()))
        );
        assert_eq!(
            Ok::<_, String>(Json(3)).into_tool_result(),
            Ok(ToolOutput::Json("3".into()))
        );
    }

    #[test]
    fn a_tool_error_keeps_its_kind_and_any_other_error_is_a_failure() {
        let timed_out = ToolError::TimedOut {
            after: Duration::from_secs(1),
        };
        assert_eq!(
            Err::<(), _>(timed_out.clone()).into_tool_result(),
            Err(timed_out)
        );
        assert_eq!(
            Err::<String, _>("no such city").into_tool_result(),
            Err(ToolError::failed("no such city"))
        );
        let parse_error = "x".parse::<u32>().unwrap_err();
        assert_eq!(
            Err::<String, _>(parse_error).into_tool_result(),
            Err(ToolError::failed("invalid digit found in string"))
        );
    }
}
