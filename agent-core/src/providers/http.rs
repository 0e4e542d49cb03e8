//! What every HTTP adapter shares: the client, timeouts, retries with backoff and jitter, the
//! sorting of failures into [`ModelError`]s, and API keys that never show.

use std::fmt;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use bytes::Bytes;
use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderValue};
use serde::de::DeserializeOwned;

use crate::model::ModelError;

/// An API key. Its `Debug` shows `<redacted>`, it has no `Display`, and the header made from it is
/// marked sensitive, so it appears in no log, error or debug print.
#[derive(Clone)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> Self {
        ApiKey(key.into())
    }

    /// A header value carrying `prefix` and the key, marked sensitive.
    pub(crate) fn header(&self, prefix: &str) -> Result<HeaderValue, ModelError> {
        let mut value =
            HeaderValue::from_str(&format!("{prefix}{}", self.0)).map_err(|_| unusable_key())?;
        value.set_sensitive(true);
        Ok(value)
    }
}

/// The error for an API key that cannot go in a header.
pub(crate) fn unusable_key() -> ModelError {
    ModelError::Authentication {
        status: 0,
        message: "the API key holds characters an HTTP header cannot carry".to_owned(),
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

impl<T: Into<String>> From<T> for ApiKey {
    fn from(key: T) -> Self {
        ApiKey::new(key)
    }
}

/// Timeouts and retries of an HTTP adapter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpConfig {
    connect_timeout: Duration,
    request_timeout: Duration,
    max_retries: u32,
    initial_backoff: Duration,
    max_backoff: Duration,
    max_retry_time: Duration,
}

impl Default for HttpConfig {
    /// Connect within 10 s, answer within 120 s; up to 3 retries, backing off from 0.5 s to at most
    /// 20 s, and no retry that would end more than 60 s after the first attempt began.
    fn default() -> Self {
        HttpConfig {
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(120),
            max_retries: 3,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(20),
            max_retry_time: Duration::from_secs(60),
        }
    }
}

impl HttpConfig {
    /// How long establishing a connection may take.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How long one attempt may take, from sending to the last byte of the reply.
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// How many times a retryable failure is tried again (0: never).
    pub fn max_retries(mut self, retries: u32) -> Self {
        self.max_retries = retries;
        self
    }

    /// The first backoff; each retry doubles it, up to `max`, with random jitter.
    pub fn backoff(mut self, initial: Duration, max: Duration) -> Self {
        self.initial_backoff = initial;
        self.max_backoff = max;
        self
    }

    /// The most time retrying may add: a retry whose wait would end later is not made.
    pub fn max_retry_time(mut self, time: Duration) -> Self {
        self.max_retry_time = time;
        self
    }

    /// How long one attempt may take.
    pub(crate) fn request_timeout_value(&self) -> Duration {
        self.request_timeout
    }

    /// The wait before retry number `attempt` (from 0): exponential, capped, with "equal jitter"
    /// (half fixed, half random) so that many clients do not retry in step.
    fn backoff_for(&self, attempt: u32) -> Duration {
        let exponential = self
            .initial_backoff
            .saturating_mul(2u32.saturating_pow(attempt));
        let capped = exponential.min(self.max_backoff);
        capped.mul_f64(0.5 + fastrand::f64() / 2.0)
    }
}

/// An HTTP client with the retry policy of one adapter.
pub(crate) struct HttpClient {
    config: HttpConfig,
    // Built on first use: building can fail (a TLS backend that does not start), and that failure
    // belongs to a request, not to constructing an adapter.
    client: OnceLock<Result<reqwest::Client, String>>,
}

impl HttpClient {
    pub(crate) fn new(config: HttpConfig) -> Self {
        HttpClient {
            config,
            client: OnceLock::new(),
        }
    }

    pub(crate) fn config(&self) -> &HttpConfig {
        &self.config
    }

    fn client(&self) -> Result<&reqwest::Client, ModelError> {
        let built = self.client.get_or_init(|| {
            reqwest::Client::builder()
                .connect_timeout(self.config.connect_timeout)
                .timeout(self.config.request_timeout)
                .build()
                .map_err(|error| error_chain(&error))
        });
        built.as_ref().map_err(|message| ModelError::Transport {
            message: format!("the HTTP client could not be built: {message}"),
        })
    }

    /// POSTs a JSON body and returns the reply body of a success, retrying what may succeed later.
    /// The body is shared between attempts, not copied (a long conversation's is megabytes), and
    /// the reply is handed over as it arrived.
    pub(crate) async fn post_json(
        &self,
        url: &Endpoint,
        headers: &HeaderMap,
        body: Bytes,
    ) -> Result<Bytes, ModelError> {
        let mut budget = RetryBudget::new();
        self.with_retries(&mut budget, || async {
            let response = self.open(url, headers, body.clone()).await?;
            response
                .bytes()
                .await
                .map_err(|error| (self.transport_error(error), None))
        })
        .await
    }

    /// POSTs a JSON body and hands back a successful response before its body is read (a stream);
    /// failures before that point are retried like any other request, out of `budget` (which a
    /// stream that fails before its first event shares when it sends the request again).
    pub(crate) async fn post_for_stream(
        &self,
        url: &Endpoint,
        headers: &HeaderMap,
        body: &Bytes,
        budget: &mut RetryBudget,
    ) -> Result<reqwest::Response, ModelError> {
        self.with_retries(budget, || self.open(url, headers, body.clone()))
            .await
    }

    /// Makes attempts until one succeeds, the failure is not retryable, or the retry budget is spent.
    async fn with_retries<T, Attempt>(
        &self,
        budget: &mut RetryBudget,
        mut attempt: impl FnMut() -> Attempt,
    ) -> Result<T, ModelError>
    where
        Attempt: std::future::Future<Output = Result<T, (ModelError, Option<Duration>)>>,
    {
        loop {
            let (error, server_delay) = match attempt().await {
                Ok(value) => return Ok(value),
                Err(failure) => failure,
            };
            match self.retry_wait(budget, &error, server_delay) {
                Some(wait) => tokio::time::sleep(wait).await,
                None => return Err(error),
            }
        }
    }

    /// The wait before trying again after `error`, counted against `budget`; `None` when it is not
    /// to be tried again: not retryable, no retries left, or the wait would end past the retry time.
    /// `server_delay` is what the provider asked for (a header, a Gemini `RetryInfo`); a rate limit
    /// that carries its own delay needs none.
    pub(crate) fn retry_wait(
        &self,
        budget: &mut RetryBudget,
        error: &ModelError,
        server_delay: Option<Duration>,
    ) -> Option<Duration> {
        if !error.is_retryable() || budget.retries >= self.config.max_retries {
            return None;
        }
        let asked = server_delay.or(match error {
            ModelError::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        });
        let delay = asked.unwrap_or_else(|| self.config.backoff_for(budget.retries));
        if budget.started.elapsed() + delay > self.config.max_retry_time {
            return None;
        }
        budget.retries += 1;
        Some(delay)
    }

    /// Sends one request; a failed status becomes its typed error, with the server's delay.
    async fn open(
        &self,
        url: &Endpoint,
        headers: &HeaderMap,
        body: Bytes,
    ) -> Result<reqwest::Response, (ModelError, Option<Duration>)> {
        let client = self.client().map_err(|error| (error, None))?;
        let request = request(client, url, headers, body)
            .map_err(|error| (self.transport_error(error), None))?;
        // Sent in a statement of its own, so that the request it consumes is not kept in this
        // future while it is awaited.
        let sent = client.execute(request);
        let response = sent
            .await
            .map_err(|error| (self.transport_error(error), None))?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let header_delay = retry_after(response.headers());
        // Boxed: reading a body is a large future, and only a failed status reads it here.
        let reply = Box::pin(response.bytes())
            .await
            .map_err(|error| (self.transport_error(error), None))?;
        let retry_after = header_delay.or_else(|| retry_delay_in_body(&reply));
        Err((status_error(status, &reply, retry_after), retry_after))
    }

    pub(crate) fn transport_error(&self, error: reqwest::Error) -> ModelError {
        if error.is_timeout() {
            return ModelError::Timeout {
                after: self.config.request_timeout,
            };
        }
        ModelError::Transport {
            message: error_chain(&error.without_url()),
        }
    }
}

/// A POST of `body` to `url` with `headers`, put on whole (the builder's `headers` would insert
/// them one by one).
fn request(
    client: &reqwest::Client,
    url: &Endpoint,
    headers: &HeaderMap,
    body: Bytes,
) -> Result<reqwest::Request, reqwest::Error> {
    let builder = match &url.parsed {
        Some(parsed) => client.post(parsed.clone()),
        // Not a URL: `reqwest` says why, as for any request it cannot make.
        None => client.post(&url.text),
    };
    let mut request = builder.body(body).build()?;
    *request.headers_mut() = headers.clone();
    Ok(request)
}

/// The retries one model call has made and when it began: every attempt of the call (a stream's
/// second opening too) draws on the same budget.
#[derive(Debug)]
pub(crate) struct RetryBudget {
    started: Instant,
    retries: u32,
}

impl RetryBudget {
    /// A budget for a call beginning now.
    pub(crate) fn new() -> Self {
        RetryBudget {
            started: Instant::now(),
            retries: 0,
        }
    }
}

/// An error and its sources, as one line.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// `retry-after-ms` (OpenAI) or `retry-after` in seconds. The HTTP-date form is not read: the
/// backoff applies instead.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
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
fn retry_delay_in_body(body: &[u8]) -> Option<Duration> {
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
fn status_error(status: StatusCode, body: &[u8], retry_after: Option<Duration>) -> ModelError {
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
        _ => ModelError::InvalidRequest { status, message },
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
pub(crate) fn excerpt(body: &[u8]) -> String {
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

/// Joins a base URL and a path with exactly one slash.
/// Where an adapter sends its requests: the URL as written and, when it is one, parsed once
/// (`reqwest` parses a URL given as text on every request).
#[derive(Clone)]
pub(crate) struct Endpoint {
    text: String,
    parsed: Option<reqwest::Url>,
}

impl Endpoint {
    pub(crate) fn new(text: String) -> Self {
        let parsed = reqwest::Url::parse(&text).ok();
        Endpoint { text, parsed }
    }

    /// `base` and `path` joined by one slash.
    #[cfg_attr(not(any(feature = "openai", feature = "anthropic")), allow(dead_code))]
    pub(crate) fn join(base: &str, path: &str) -> Self {
        Endpoint::new(join_url(base, path))
    }
}

impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.text, f)
    }
}

pub(crate) fn join_url(base: &str, path: &str) -> String {
    format!(
        "{}/{}",
        base.trim_end_matches('/'),
        path.trim_start_matches('/')
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_keys_do_not_show_in_debug() {
        let key = ApiKey::new("sk-secret-value");
        assert_eq!(format!("{key:?}"), "ApiKey(<redacted>)");
        let header = key.header("Bearer ").unwrap();
        assert!(!format!("{header:?}").contains("secret"));
    }

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
    fn backoff_doubles_up_to_the_cap_with_jitter() {
        let config =
            HttpConfig::default().backoff(Duration::from_millis(100), Duration::from_millis(500));
        for _ in 0..50 {
            let first = config.backoff_for(0);
            assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(100));
            let third = config.backoff_for(2);
            assert!(third >= Duration::from_millis(200) && third <= Duration::from_millis(400));
            let late = config.backoff_for(30);
            assert!(late >= Duration::from_millis(250) && late <= Duration::from_millis(500));
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
}
