//! The failures a model must report as typed errors: their kinds, and the suite's failure of each
//! kind with the check of the error that comes back.

use std::time::Duration;

use crate::model::ModelError;

/// A kind of failure a model must report as its typed [`ModelError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The credentials are refused (HTTP 401): [`ModelError::Authentication`].
    Authentication,
    /// Too many requests (HTTP 429), with a delay to wait: [`ModelError::RateLimited`].
    RateLimited,
    /// The quota or credit is used up (HTTP 402, or a 429 whose body says so: OpenAI's
    /// `insufficient_quota`, a Gemini daily quota): [`ModelError::QuotaExhausted`], not retried.
    QuotaExhausted,
    /// The request is refused as invalid (HTTP 400): [`ModelError::InvalidRequest`].
    InvalidRequest,
    /// The request is refused as longer than the model's context window (HTTP 400, in the
    /// vendor's words or code): [`ModelError::ContextOverflow`].
    ContextOverflow,
    /// The provider is overloaded (HTTP 529 or 503): [`ModelError::Overloaded`].
    Overloaded,
    /// The provider failed (HTTP 500): [`ModelError::Server`].
    Server,
    /// A successful status with a body (or, streaming, an event) that is not the documented
    /// shape: [`ModelError::Decode`].
    Undecodable,
    /// A stream that stops before the reply is finished: [`ModelError::Stream`].
    StreamCutOff,
    /// A stream that carries an error event for a failure on the provider's side (Anthropic's
    /// `api_error`, OpenAI's `server_error`, Gemini's `INTERNAL`): the [`ModelError::Server`] an
    /// HTTP 500 gives, with its message.
    StreamErrorEvent,
    /// A stream that carries an error event saying the provider is overloaded (Anthropic's
    /// `overloaded_error`): the [`ModelError::Overloaded`] an HTTP 529 or 503 gives, retryable.
    StreamOverloaded,
}

impl ErrorKind {
    /// Every kind.
    pub const ALL: [ErrorKind; 11] = [
        ErrorKind::Authentication,
        ErrorKind::RateLimited,
        ErrorKind::QuotaExhausted,
        ErrorKind::InvalidRequest,
        ErrorKind::ContextOverflow,
        ErrorKind::Overloaded,
        ErrorKind::Server,
        ErrorKind::Undecodable,
        ErrorKind::StreamCutOff,
        ErrorKind::StreamErrorEvent,
        ErrorKind::StreamOverloaded,
    ];

    /// Whether only a streamed call can meet it.
    pub fn is_stream_only(self) -> bool {
        matches!(
            self,
            ErrorKind::StreamCutOff | ErrorKind::StreamErrorEvent | ErrorKind::StreamOverloaded
        )
    }

    /// The suite's name for the case that checks it.
    pub fn case(self) -> &'static str {
        match self {
            ErrorKind::Authentication => "error_authentication",
            ErrorKind::RateLimited => "error_rate_limited",
            ErrorKind::QuotaExhausted => "error_quota_exhausted",
            ErrorKind::InvalidRequest => "error_invalid_request",
            ErrorKind::ContextOverflow => "error_context_overflow",
            ErrorKind::Overloaded => "error_overloaded",
            ErrorKind::Server => "error_server",
            ErrorKind::Undecodable => "error_undecodable",
            ErrorKind::StreamCutOff => "error_stream_cut_off",
            ErrorKind::StreamErrorEvent => "error_stream_event",
            ErrorKind::StreamOverloaded => "error_stream_overloaded",
        }
    }
}

/// A failure to produce: its kind, the provider's message, and (for a rate limit) how long the
/// provider asks the caller to wait.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Failure {
    /// What kind of failure.
    pub kind: ErrorKind,
    /// The provider's message: the harness puts it where its vendor puts error messages, and the
    /// suite wants it back in the error (empty for the kinds that carry none).
    pub message: String,
    /// How long to wait, for [`ErrorKind::RateLimited`] (whole seconds, so every vendor's header or
    /// body can say it).
    pub retry_after: Option<Duration>,
}

impl Failure {
    /// The suite's failure of this kind.
    pub fn of(kind: ErrorKind) -> Self {
        let message = match kind {
            ErrorKind::Authentication => "Incorrect API key provided (conformance)",
            ErrorKind::RateLimited => "Rate limit reached for requests (conformance)",
            ErrorKind::QuotaExhausted => {
                "You exceeded your current quota, please check your plan and billing details (conformance)"
            }
            ErrorKind::InvalidRequest => "Invalid value for 'messages' (conformance)",
            ErrorKind::ContextOverflow => {
                "The request is longer than the model's context window (conformance)"
            }
            ErrorKind::Overloaded => "Overloaded (conformance)",
            ErrorKind::Server => {
                "The server had an error while processing the request (conformance)"
            }
            ErrorKind::StreamErrorEvent => "An internal error interrupted the stream (conformance)",
            ErrorKind::StreamOverloaded => "Overloaded, in the middle of the stream (conformance)",
            ErrorKind::Undecodable | ErrorKind::StreamCutOff => "",
        };
        Failure {
            kind,
            message: message.to_owned(),
            retry_after: (kind == ErrorKind::RateLimited).then_some(Duration::from_secs(2)),
        }
    }

    /// The [`ModelError`] a model without a wire format (a test double) fails with for it: the
    /// variant the suite expects, with the message and delay.
    pub fn to_model_error(&self) -> ModelError {
        let message = self.message.clone();
        match self.kind {
            ErrorKind::Authentication => ModelError::Authentication {
                status: 401,
                message,
            },
            ErrorKind::RateLimited => ModelError::RateLimited {
                retry_after: self.retry_after,
                message,
            },
            ErrorKind::QuotaExhausted => ModelError::QuotaExhausted { message },
            ErrorKind::InvalidRequest => ModelError::InvalidRequest {
                status: 400,
                message,
            },
            ErrorKind::ContextOverflow => ModelError::ContextOverflow {
                status: 400,
                message,
                tokens: None,
                limit: None,
            },
            ErrorKind::Overloaded => ModelError::Overloaded {
                status: 529,
                message,
            },
            ErrorKind::Server => ModelError::Server {
                status: 500,
                message,
            },
            ErrorKind::Undecodable => ModelError::Decode {
                message: "expected value at line 1 column 1".to_owned(),
                excerpt: "<html>".to_owned(),
            },
            ErrorKind::StreamCutOff => ModelError::Stream {
                message: "the stream was cut off before the reply was finished".to_owned(),
            },
            ErrorKind::StreamErrorEvent => ModelError::Server {
                status: 500,
                message,
            },
            ErrorKind::StreamOverloaded => ModelError::Overloaded {
                status: 529,
                message,
            },
        }
    }

    /// Whether `error` is how a model reports this failure.
    pub(super) fn check(&self, error: &ModelError) -> Result<(), String> {
        let carries = |message: &str| {
            if message.contains(&self.message) {
                Ok(())
            } else {
                Err(format!(
                    "the error's message {message:?} does not carry the provider's {:?}",
                    self.message
                ))
            }
        };
        match (self.kind, error) {
            (ErrorKind::Authentication, ModelError::Authentication { message, .. })
            | (ErrorKind::InvalidRequest, ModelError::InvalidRequest { message, .. })
            | (ErrorKind::ContextOverflow, ModelError::ContextOverflow { message, .. })
            | (ErrorKind::QuotaExhausted, ModelError::QuotaExhausted { message })
            | (ErrorKind::Overloaded, ModelError::Overloaded { message, .. })
            | (ErrorKind::StreamOverloaded, ModelError::Overloaded { message, .. })
            | (ErrorKind::Server, ModelError::Server { message, .. })
            | (ErrorKind::StreamErrorEvent, ModelError::Server { message, .. }) => carries(message),
            (
                ErrorKind::RateLimited,
                ModelError::RateLimited {
                    retry_after,
                    message,
                },
            ) => {
                if *retry_after != self.retry_after {
                    return Err(format!(
                        "retry_after is {retry_after:?}, the provider said {:?}",
                        self.retry_after
                    ));
                }
                carries(message)
            }
            (ErrorKind::Undecodable, ModelError::Decode { .. })
            | (ErrorKind::StreamCutOff, ModelError::Stream { .. }) => Ok(()),
            (kind, other) => Err(format!("expected the error for {kind:?}, got {other:?}")),
        }
    }
}
