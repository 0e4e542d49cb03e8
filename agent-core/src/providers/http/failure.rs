//! How a failure becomes its typed [`ModelError`]: a failed status with its body (the provider's
//! message, an exhausted quota told from a rate limit), the delay a provider asks for before a
//! retry (a header, a Google `RetryInfo`), an error inside a streamed reply, and a reply body that
//! does not parse or lacks what the adapter needs.

use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde::de::DeserializeOwned;

use crate::model::ModelError;

/// `retry-after-ms` (OpenAI) or `retry-after` in seconds. The HTTP-date form is not read: the
/// backoff applies instead.
pub(super) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let seconds = |name: &str, scale: f64| {
        headers
            .get(name)?
            .to_str()
            .ok()?
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|value| value.is_finite() && *value >= 0.0)
            .map(|value| Duration::from_secs_f64(value / scale))
    };
    seconds("retry-after-ms", 1000.0).or_else(|| seconds("retry-after", 1.0))
}

/// The delay Google APIs (Gemini) put in an error body rather than a header: a
/// `google.rpc.RetryInfo` entry of `error.details`, whose `retryDelay` is a protobuf duration
/// (`"17s"`, `"0.5s"`).
pub(super) fn retry_delay_in_body(body: &[u8]) -> Option<Duration> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    value
        .pointer("/error/details")?
        .as_array()?
        .iter()
        .filter(|detail| {
            detail
                .get("@type")
                .and_then(|kind| kind.as_str())
                .is_some_and(|kind| kind.ends_with("google.rpc.RetryInfo"))
        })
        .find_map(|detail| {
            let delay = detail.get("retryDelay")?.as_str()?.strip_suffix('s')?;
            delay
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|seconds| seconds.is_finite() && *seconds >= 0.0)
                .map(Duration::from_secs_f64)
        })
}

/// Sorts a failed status into its [`ModelError`], with the provider's message.
pub(super) fn status_error(
    status: StatusCode,
    body: &[u8],
    retry_after: Option<Duration>,
) -> ModelError {
    classify(status.as_u16(), provider_message(body), body, retry_after)
}

/// The [`ModelError`] for an error a provider reported inside a streamed reply: `status` is the
/// HTTP status the provider documents for that kind of error (`None` when the adapter does not
/// know the kind, which leaves it a [`ModelError::Stream`]), `data` the event's data (read for a
/// quota that is used up and for a Gemini `RetryInfo`). Sorted exactly as the same error arriving
/// as that status would be, so [`ModelError::is_retryable`] agrees.
#[cfg_attr(
    not(any(feature = "openai", feature = "anthropic", feature = "gemini")),
    allow(dead_code)
)]
pub(crate) fn stream_error(status: Option<u16>, message: String, data: &[u8]) -> ModelError {
    match status.filter(|status| (400..=599).contains(status)) {
        Some(status) => classify(status, message, data, retry_delay_in_body(data)),
        None => ModelError::Stream { message },
    }
}

/// Sorts a failure, by its status and its body, into its [`ModelError`].
fn classify(
    status: u16,
    message: String,
    body: &[u8],
    retry_after: Option<Duration>,
) -> ModelError {
    match status {
        401 | 403 => ModelError::Authentication { status, message },
        402 => ModelError::QuotaExhausted { message },
        429 if quota_exhausted(body) => ModelError::QuotaExhausted { message },
        429 => ModelError::RateLimited {
            retry_after,
            message,
        },
        503 | 529 => ModelError::Overloaded { status, message },
        500..=599 => ModelError::Server { status, message },
        _ if context_overflow(&message, body) => {
            let (tokens, limit) = overflow_counts(&message);
            ModelError::ContextOverflow {
                status,
                message,
                tokens,
                limit,
            }
        }
        _ => ModelError::InvalidRequest { status, message },
    }
}

/// Whether a refused request was refused for its length: OpenAI's (and compatible services')
/// `context_length_exceeded` code, or the words each vendor documents for it (OpenAI, vLLM and
/// DeepSeek: "maximum context length"; Anthropic: "prompt is too long", and "exceed context
/// limit" when the input and `max_tokens` together do not fit; Gemini: "exceeds the maximum
/// number of tokens"; Groq: "reduce the length of the messages"; others: "context window").
fn context_overflow(message: &str, body: &[u8]) -> bool {
    const WORDS: [&str; 7] = [
        "context_length_exceeded",
        "maximum context length",
        "prompt is too long",
        "exceed context limit",
        "exceeds the maximum number of tokens",
        "reduce the length of the messages",
        "context window",
    ];
    let code = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|value| {
            let code = value.pointer("/error/code")?.as_str()?.to_owned();
            Some(code)
        });
    let message = message.to_ascii_lowercase();
    code.as_deref() == Some("context_length_exceeded")
        || WORDS.iter().any(|words| message.contains(words))
}

/// The request's input tokens and the most the model takes, as a refusal for length says them:
/// "A + B > C" (Anthropic's input and `max_tokens` over the window: A of C less B), or else the
/// largest number the request's and the next largest the window's (OpenAI's "maximum context
/// length is 128000 tokens. However, your messages resulted in 130412 tokens", Anthropic's
/// "208310 tokens > 200000 maximum", Gemini's "(1196265) exceeds ... (1048575)"). Numbers under
/// 100 (a status, a count of images) are not read as tokens.
fn overflow_counts(message: &str) -> (Option<u64>, Option<u64>) {
    let numbers: Vec<(u64, usize)> = {
        let mut found = Vec::new();
        let mut digits = String::new();
        for (at, character) in message.char_indices().chain([(message.len(), ' ')]) {
            match character {
                '0'..='9' => digits.push(character),
                ',' | '_' if !digits.is_empty() => {}
                _ if !digits.is_empty() => {
                    if let Ok(number) = digits.parse::<u64>() {
                        found.push((number, at));
                    }
                    digits.clear();
                }
                _ => {}
            }
        }
        found
    };
    // "A + B > C": the input and what was kept for the reply, over the window.
    if let [(input, after_input), (reply, after_reply), (window, _), ..] = numbers[..]
        && message[after_input..].trim_start().starts_with('+')
        && message[after_reply..].trim_start().starts_with('>')
    {
        return (Some(input), window.checked_sub(reply));
    }
    let mut tokens: Vec<u64> = numbers
        .iter()
        .map(|(number, _)| *number)
        .filter(|number| *number >= 100)
        .collect();
    tokens.sort_unstable_by(|a, b| b.cmp(a));
    tokens.dedup();
    match tokens[..] {
        [sent, limit, ..] => (Some(sent), Some(limit)),
        _ => (None, None),
    }
}

/// Whether an error body says the quota or the credit is used up rather than that requests come
/// too fast (both are 429s): OpenAI's `insufficient_quota` (`code` or `type`), or a Google
/// `QuotaFailure` (Gemini) one of whose violations is a daily quota
/// (`quotaId` `...PerDay...`) or a quota of 0, which no wait will meet. A Google per-minute quota
/// is a plain rate limit, whatever its message says ("You exceeded your current quota" is in both).
fn quota_exhausted(body: &[u8]) -> bool {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(body) else {
        return false;
    };
    let says = |pointer: &str, words: &[&str]| {
        value
            .pointer(pointer)
            .and_then(serde_json::Value::as_str)
            .is_some_and(|text| words.contains(&text))
    };
    if says("/error/code", &["insufficient_quota"]) || says("/error/type", &["insufficient_quota"])
    {
        return true;
    }
    let Some(details) = value.pointer("/error/details").and_then(|d| d.as_array()) else {
        return false;
    };
    details
        .iter()
        .filter(|detail| {
            detail
                .get("@type")
                .and_then(serde_json::Value::as_str)
                .is_some_and(|kind| kind.ends_with("google.rpc.QuotaFailure"))
        })
        .filter_map(|detail| detail.get("violations")?.as_array())
        .flatten()
        .any(|violation| {
            let daily = violation
                .get("quotaId")
                .and_then(serde_json::Value::as_str)
                .is_some_and(|id| id.to_ascii_lowercase().contains("perday"));
            let none_allowed = match violation.get("quotaValue") {
                Some(serde_json::Value::String(limit)) => limit.trim() == "0",
                Some(serde_json::Value::Number(limit)) => limit.as_u64() == Some(0),
                _ => false,
            };
            daily || none_allowed
        })
}

/// The message in an error body: OpenAI, Anthropic and Gemini all put it at `error.message`; some
/// compatible servers put it at `message` or make `error` a string. Otherwise an excerpt of the body.
fn provider_message(body: &[u8]) -> String {
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(body) {
        let found = value
            .pointer("/error/message")
            .or_else(|| value.get("message"))
            .or_else(|| value.get("error"))
            .and_then(|message| message.as_str());
        if let Some(message) = found {
            return message.to_owned();
        }
    }
    let text = excerpt(body);
    if text.is_empty() {
        "(empty body)".to_owned()
    } else {
        text
    }
}

/// The first 200 characters of a body, for error messages.
fn excerpt(body: &[u8]) -> String {
    String::from_utf8_lossy(body)
        .chars()
        .take(200)
        .collect::<String>()
        .trim()
        .to_owned()
}

/// Parses a reply body, or says what did not fit and shows how the body began.
pub(crate) fn parse_reply<T: DeserializeOwned>(body: &[u8]) -> Result<T, ModelError> {
    // Plain serde first: tracking the path costs four times the parse, and only a failure needs it.
    if let Ok(reply) = T::deserialize(&mut serde_json::Deserializer::from_slice(body)) {
        return Ok(reply);
    }
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
        let path = error.path().to_string();
        let message = if path == "." {
            error.inner().to_string()
        } else {
            format!("{path}: {}", error.inner())
        };
        ModelError::Decode {
            message,
            excerpt: excerpt(body),
        }
    })
}

/// A reply that parsed but lacks what the adapter needs.
#[cfg_attr(not(any(feature = "openai", feature = "gemini")), allow(dead_code))]
pub(crate) fn unexpected_reply(message: &str, body: &[u8]) -> ModelError {
    ModelError::Decode {
        message: message.to_owned(),
        excerpt: excerpt(body),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn retry_after_reads_milliseconds_then_seconds() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert("retry-after-ms", HeaderValue::from_static("150"));
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(150)));
        let mut dated = HeaderMap::new();
        dated.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2026 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&dated), None);
    }

    #[test]
    fn retry_delay_is_read_from_a_google_error_body() {
        let body = br#"{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"17s"}]}}"#;
        assert_eq!(retry_delay_in_body(body), Some(Duration::from_secs(17)));
        let fraction = br#"{"error":{"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"0.250s"}]}}"#;
        assert_eq!(
            retry_delay_in_body(fraction),
            Some(Duration::from_millis(250))
        );
        assert_eq!(retry_delay_in_body(br#"{"error":{"message":"x"}}"#), None);
        assert_eq!(retry_delay_in_body(b"<html>"), None);
    }

    #[test]
    fn a_429_is_an_exhausted_quota_only_when_its_body_says_so() {
        let status = StatusCode::TOO_MANY_REQUESTS;
        let openai = br#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#;
        assert!(matches!(
            status_error(status, openai, Some(Duration::from_secs(1))),
            ModelError::QuotaExhausted { message } if message == "You exceeded your current quota"
        ));
        let google = |quota_id: &str, limit: &str| {
            format!(
                r#"{{"error":{{"code":429,"message":"You exceeded your current quota","status":"RESOURCE_EXHAUSTED","details":[{{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"{quota_id}","quotaValue":"{limit}"}}]}},{{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"17s"}}]}}}}"#
            )
        };
        let daily = google("GenerateRequestsPerDayPerProjectPerModel-FreeTier", "250");
        assert!(matches!(
            status_error(status, daily.as_bytes(), Some(Duration::from_secs(17))),
            ModelError::QuotaExhausted { .. }
        ));
        let none_allowed = google("GenerateRequestsPerMinutePerProjectPerModel-FreeTier", "0");
        assert!(matches!(
            status_error(status, none_allowed.as_bytes(), None),
            ModelError::QuotaExhausted { .. }
        ));
        // Google's per-minute quota says "exceeded your current quota" too: a rate limit.
        let per_minute = google("GenerateRequestsPerMinutePerProjectPerModel-FreeTier", "10");
        assert!(matches!(
            status_error(status, per_minute.as_bytes(), Some(Duration::from_secs(17))),
            ModelError::RateLimited { retry_after: Some(after), .. } if after == Duration::from_secs(17)
        ));
        let rate = br#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#;
        assert!(matches!(
            status_error(status, rate, None),
            ModelError::RateLimited { .. }
        ));
        assert!(matches!(
            status_error(status, b"<html>", None),
            ModelError::RateLimited { .. }
        ));
        assert!(matches!(
            status_error(StatusCode::PAYMENT_REQUIRED, br#"{"error":{"type":"billing_error","message":"Your credit balance is too low"}}"#, None),
            ModelError::QuotaExhausted { message } if message == "Your credit balance is too low"
        ));
    }

    #[test]
    fn errors_in_streams_sort_like_their_statuses() {
        let data = br#"{"error":{"code":429,"message":"slow down","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"2s"}]}}"#;
        assert!(matches!(
            stream_error(Some(429), "slow down".into(), data),
            ModelError::RateLimited { retry_after: Some(after), message } if after == Duration::from_secs(2) && message == "slow down"
        ));
        assert!(matches!(
            stream_error(Some(529), "Overloaded".into(), b"{}"),
            ModelError::Overloaded { status: 529, .. }
        ));
        for status in [None, Some(200), Some(600)] {
            assert!(matches!(
                stream_error(status, "what".into(), b"{}"),
                ModelError::Stream { message } if message == "what"
            ));
        }
    }

    #[test]
    fn statuses_sort_into_typed_errors() {
        let body = br#"{"error":{"message":"bad key","type":"invalid_request_error"}}"#;
        assert!(matches!(
            status_error(StatusCode::UNAUTHORIZED, body, None),
            ModelError::Authentication { status: 401, message } if message == "bad key"
        ));
        assert!(matches!(
            status_error(StatusCode::from_u16(529).unwrap(), b"", None),
            ModelError::Overloaded { status: 529, message } if message == "(empty body)"
        ));
        assert!(matches!(
            status_error(StatusCode::BAD_GATEWAY, b"<html>oops</html>", None),
            ModelError::Server { status: 502, message } if message == "<html>oops</html>"
        ));
        assert!(matches!(
            status_error(StatusCode::NOT_FOUND, br#"{"message":"no such model"}"#, None),
            ModelError::InvalidRequest { status: 404, message } if message == "no such model"
        ));
    }

    /// The counts in each vendor's words for a request too long, and none where there are none.
    #[test]
    fn a_refusal_for_length_says_the_requests_tokens_and_the_models_window() {
        let cases: [(&str, Option<u64>, Option<u64>); 7] = [
            (
                "This model's maximum context length is 128000 tokens. However, your messages \
                 resulted in 130412 tokens. Please reduce the length of the messages.",
                Some(130_412),
                Some(128_000),
            ),
            (
                "prompt is too long: 208310 tokens > 200000 maximum",
                Some(208_310),
                Some(200_000),
            ),
            (
                "input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000, \
                 decrease input length or `max_tokens` and try again",
                Some(188_240),
                Some(178_667),
            ),
            (
                "The input token count (1196265) exceeds the maximum number of tokens allowed \
                 (1048575).",
                Some(1_196_265),
                Some(1_048_575),
            ),
            (
                "This model's maximum context length is 8192 tokens. However, you requested \
                 9000 tokens (8000 in the messages, 1000 in the completion).",
                Some(9_000),
                Some(8_192),
            ),
            (
                "Please reduce the length of the messages or completion.",
                None,
                None,
            ),
            ("Input too long (code 400).", None, None),
        ];
        for (message, tokens, limit) in cases {
            assert_eq!(overflow_counts(message), (tokens, limit), "{message}");
        }
    }

    /// Each vendor's documented refusal of a request longer than the model's window.
    #[test]
    fn a_request_too_long_is_a_context_overflow_for_every_vendor() {
        let bodies: [&[u8]; 7] = [
            // OpenAI Chat Completions and Responses.
            br#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
            // Anthropic.
            br#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}"#,
            // Anthropic, when the input and `max_tokens` together are over the window.
            br#"{"type":"error","error":{"type":"invalid_request_error","message":"input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000, decrease input length or `max_tokens` and try again"}}"#,
            // Groq.
            br#"{"error":{"message":"Please reduce the length of the messages or completion.","type":"invalid_request_error","param":"messages"}}"#,
            // Gemini.
            br#"{"error":{"code":400,"message":"The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).","status":"INVALID_ARGUMENT"}}"#,
            // vLLM and other OpenAI-compatible servers.
            br#"{"object":"error","message":"This model's maximum context length is 8192 tokens. However, you requested 9000 tokens in the messages, Please reduce the length of the messages.","type":"BadRequestError","param":null,"code":400}"#,
            // A service that says only the code.
            br#"{"error":{"message":"Input too long.","code":"context_length_exceeded"}}"#,
        ];
        for body in bodies {
            let error = status_error(StatusCode::BAD_REQUEST, body, None);
            assert!(
                matches!(error, ModelError::ContextOverflow { status: 400, .. }),
                "{error:?}"
            );
            assert!(error.is_refusal() && !error.is_retryable());
        }
        let invalid =
            br#"{"error":{"message":"Invalid value for 'temperature'","code":"invalid_value"}}"#;
        assert!(matches!(
            status_error(StatusCode::BAD_REQUEST, invalid, None),
            ModelError::InvalidRequest { .. }
        ));
    }
}
