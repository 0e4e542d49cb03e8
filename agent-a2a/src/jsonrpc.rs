//! JSON-RPC 2.0 as A2A uses it: a request's envelope read, a result or an error written back
//! (always HTTP 200, `application/json`), and A2A's errors with their codes and the
//! `google.rpc.ErrorInfo` every one of them carries.

use serde::Deserialize;
use serde_json::{Value, json};

/// A request's envelope.
#[derive(Debug, Deserialize)]
pub(crate) struct Request {
    pub(crate) jsonrpc: Option<String>,
    #[serde(default)]
    pub(crate) id: Value,
    pub(crate) method: Option<String>,
    #[serde(default)]
    pub(crate) params: Value,
}

/// An error a request is answered with.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// The JSON-RPC code.
    pub code: i64,
    /// What went wrong, for a person.
    pub message: String,
}

impl RpcError {
    /// The body is not JSON.
    pub(crate) fn parse(message: impl Into<String>) -> Self {
        Self::new(-32700, message)
    }

    /// The envelope is not a JSON-RPC 2.0 request.
    pub(crate) fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(-32600, message)
    }

    /// No such method.
    pub(crate) fn method_not_found(method: &str) -> Self {
        Self::new(-32601, format!("there is no method `{method}`"))
    }

    /// The params do not fit the method.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(-32602, message)
    }

    /// The server failed.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(-32603, message)
    }

    /// No task of this id is the caller's.
    pub fn task_not_found(id: &str) -> Self {
        Self::new(-32001, format!("there is no task `{id}`"))
    }

    /// The task has ended: it cannot be cancelled.
    pub(crate) fn not_cancelable(id: &str) -> Self {
        Self::new(
            -32002,
            format!("task `{id}` has ended: it cannot be cancelled"),
        )
    }

    /// Push notifications are not offered.
    pub(crate) fn push_not_supported() -> Self {
        Self::new(-32003, "this agent does not push notifications")
    }

    /// The operation is not offered, or not on this task.
    pub fn unsupported(message: impl Into<String>) -> Self {
        Self::new(-32004, message)
    }

    /// The request's content type is not JSON.
    pub(crate) fn content_type(found: &str) -> Self {
        Self::new(
            -32005,
            format!("the request's content type is `{found}`: send `application/json`"),
        )
    }

    /// The protocol version asked for is not spoken: `asked` is the request's `A2A-Version`
    /// (empty when it sent none, which asks for 0.3).
    pub(crate) fn version(asked: &str) -> Self {
        let asked = if asked.is_empty() {
            "a request without an `A2A-Version` header (or with an empty one) is A2A 0.3, which"
                .to_owned()
        } else {
            format!("A2A version `{asked}`")
        };
        Self::new(
            -32009,
            format!("{asked} is not supported: this agent speaks 1.0, send `A2A-Version: 1.0`"),
        )
    }

    fn new(code: i64, message: impl Into<String>) -> Self {
        RpcError {
            code,
            message: message.into(),
        }
    }

    /// The `google.rpc.ErrorInfo` reason of an A2A error.
    fn reason(&self) -> Option<&'static str> {
        Some(match self.code {
            -32001 => "TASK_NOT_FOUND",
            -32002 => "TASK_NOT_CANCELABLE",
            -32003 => "PUSH_NOTIFICATION_NOT_SUPPORTED",
            -32004 => "UNSUPPORTED_OPERATION",
            -32005 => "CONTENT_TYPE_NOT_SUPPORTED",
            -32009 => "VERSION_NOT_SUPPORTED",
            -32602 => "INVALID_PARAMS",
            _ => return None,
        })
    }

    /// The error object: its code, its message and, for A2A's errors, its `ErrorInfo`.
    pub(crate) fn to_json(&self) -> Value {
        let mut error = json!({ "code": self.code, "message": self.message });
        if let Some(reason) = self.reason() {
            error["data"] = json!([{
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": reason,
                "domain": "a2a-protocol.org",
            }]);
        }
        error
    }
}

impl std::fmt::Display for RpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for RpcError {}

/// The response to the request `id`: its result, or its error.
pub(crate) fn response(id: &Value, outcome: Result<Value, RpcError>) -> Value {
    match outcome {
        Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
        Err(error) => json!({ "jsonrpc": "2.0", "id": id, "error": error.to_json() }),
    }
}

/// `200` with `value` as its JSON body: every answer but a stream's.
pub(crate) fn json_response(value: &Value) -> axum::response::Response {
    use axum::response::IntoResponse;
    let content_type = [(axum::http::header::CONTENT_TYPE, "application/json")];
    (content_type, value.to_string()).into_response()
}

/// A param by its camelCase name or its snake_case one (ProtoJSON readers take both).
pub(crate) fn param<'a>(params: &'a Value, camel: &str, snake: &str) -> Option<&'a Value> {
    params.get(camel).or_else(|| params.get(snake))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a2a_errors_carry_their_error_info() {
        let error = RpcError::task_not_found("t").to_json();
        assert_eq!(error["code"], -32001);
        assert_eq!(error["data"][0]["reason"], "TASK_NOT_FOUND");
        assert_eq!(error["data"][0]["domain"], "a2a-protocol.org");
        let plain = RpcError::method_not_found("Nope").to_json();
        assert_eq!(
            plain,
            json!({"code": -32601, "message": "there is no method `Nope`"})
        );
    }
}
