//! What every HTTP adapter shares: the client, timeouts, retries with backoff and jitter, the
//! endpoints, and API keys that never show. The sorting of failures into [`ModelError`]s (and the
//! delays a provider asks for) is `failure.rs`.

use std::fmt;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use bytes::Bytes;
use reqwest::header::{HeaderMap, HeaderValue};

use crate::model::ModelError;

mod failure;
#[cfg_attr(
    not(any(feature = "openai", feature = "gemini")),
    allow(unused_imports)
)]
pub(crate) use failure::unexpected_reply;
pub(crate) use failure::{parse_reply, stream_error};
use failure::{retry_after, retry_delay_in_body, status_error};

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

/// Joins a base URL and a path with exactly one slash.
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
}
