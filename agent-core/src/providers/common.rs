//! What every adapter shares besides its wire format: the model name, the API key, extra headers,
//! the HTTP client and the sampling settings, their builder methods, and the send-and-parse step.

use std::fmt;
use std::sync::OnceLock;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use super::http::{ApiKey, Endpoint, HttpClient, HttpConfig, unusable_key};
use super::schemas::KeptSchemas;
use super::sse::StreamRequest;
use crate::model::{ChatRequest, ChatResponse, ModelError};

/// A request body as the bytes sent.
pub(crate) fn encode(body: &impl serde::Serialize) -> Result<Vec<u8>, ModelError> {
    serde_json::to_vec(body).map_err(ModelError::other)
}

pub(crate) struct Common {
    pub(crate) model: String,
    pub(crate) http: HttpClient,
    /// Set through [`set_api_key`](Common::set_api_key) and [`insert_header`](Common::insert_header),
    /// which forget the headers made from them.
    api_key: Option<ApiKey>,
    headers: HeaderMap,
    /// Every request's headers (`headers`, the key's, the content type), made on the first
    /// request rather than on each: `None` when the key cannot be a header.
    sent_headers: OnceLock<Option<HeaderMap>>,
    pub(crate) max_tokens: Option<u32>,
    pub(crate) temperature: Option<f32>,
    /// The tools' parameter schemas in this adapter's dialects, as the requests so far offered them.
    pub(crate) schemas: KeptSchemas,
}

/// Where an adapter puts the API key: the header, and what comes before the key in it.
pub(crate) struct KeyHeader {
    pub(crate) name: HeaderName,
    pub(crate) prefix: &'static str,
}

impl Common {
    pub(crate) fn new(model: impl Into<String>) -> Self {
        Common {
            model: model.into(),
            http: HttpClient::new(HttpConfig::default()),
            api_key: None,
            headers: HeaderMap::new(),
            sent_headers: OnceLock::new(),
            max_tokens: None,
            temperature: None,
            schemas: KeptSchemas::default(),
        }
    }

    /// The longest reply a request may have: its own setting, else the adapter's.
    pub(crate) fn max_tokens(&self, request: &ChatRequest<'_>) -> Option<u32> {
        request.settings.max_tokens.or(self.max_tokens)
    }

    /// A request's temperature: its own setting, else the adapter's.
    pub(crate) fn temperature(&self, request: &ChatRequest<'_>) -> Option<f32> {
        request.settings.temperature.or(self.temperature)
    }

    /// Sends a request body and parses the reply with the adapter's parser.
    pub(crate) async fn send(
        &self,
        url: &Endpoint,
        key_header: KeyHeader,
        body: Result<Vec<u8>, ModelError>,
        parse: impl FnOnce(&[u8]) -> Result<ChatResponse, ModelError>,
    ) -> Result<ChatResponse, ModelError> {
        let body = body?;
        let headers = self.headers(key_header)?;
        let reply = self.http.post_json(url, headers, body.into()).await?;
        let mut response = parse(&reply)?;
        self.name(&mut response);
        Ok(response)
    }

    /// Names the model of a reply that does not name it after the model asked for.
    pub(crate) fn name(&self, response: &mut ChatResponse) {
        if response.model.is_none() {
            response.model = Some(self.model.clone());
        }
    }

    /// A request body to `url`, ready to be sent for a streamed reply
    /// ([`stream_reply`](super::sse::stream_reply) sends it).
    pub(crate) fn stream_request<'a>(
        &'a self,
        url: &'a Endpoint,
        key_header: KeyHeader,
        body: Result<Vec<u8>, ModelError>,
    ) -> Result<StreamRequest<'a>, ModelError> {
        Ok(StreamRequest {
            model: &self.model,
            http: &self.http,
            url,
            headers: self.headers(key_header)?,
            body: body?.into(),
        })
    }

    /// Sets the API key.
    pub(crate) fn set_api_key(&mut self, key: ApiKey) {
        self.api_key = Some(key);
        self.sent_headers = OnceLock::new();
    }

    /// Adds a header to every request.
    pub(crate) fn insert_header(&mut self, name: HeaderName, value: HeaderValue) {
        self.headers.insert(name, value);
        self.sent_headers = OnceLock::new();
    }

    /// The headers of every request; `key_header` is where the adapter puts the key (the same
    /// for every request of an adapter).
    fn headers(&self, key_header: KeyHeader) -> Result<&HeaderMap, ModelError> {
        let made = self.sent_headers.get_or_init(|| {
            let mut headers = self.headers.clone();
            if let Some(key) = &self.api_key {
                headers.insert(key_header.name, key.header(key_header.prefix).ok()?);
            }
            headers.insert(
                reqwest::header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            Some(headers)
        });
        made.as_ref().ok_or_else(unusable_key)
    }
}

impl fmt::Debug for Common {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Common")
            .field("model", &self.model)
            .field("api_key", &self.api_key)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("max_tokens", &self.max_tokens)
            .field("temperature", &self.temperature)
            .field("http", self.http.config())
            .finish()
    }
}

/// An id for a call an OpenAI-compatible server sent without one (some local servers do): fresh
/// (`call_agent_` and 32 hexadecimal digits), never made again in this process or another, so the
/// call's result pairs with it and its [`CallInfo::idempotency_key`](crate::CallInfo) is its own
/// even when the run resumes elsewhere. It goes back to the server like any id: the wire format
/// wants an `id` on every call and a `tool_call_id` on every result, and a server that gave none
/// does not check them.
#[cfg(feature = "openai")]
pub(crate) fn made_up_call_id() -> String {
    crate::fresh::fresh_id("call_agent_")
}

/// A tool's parameters as both OpenAI APIs take them, kept by the adapter: the strict form when
/// `strict` tools are asked for and strict mode can say the schema (the `bool` says it is), else
/// the plain form.
#[cfg(feature = "openai")]
pub(crate) fn openai_parameters(
    schemas: &KeptSchemas,
    tool: &crate::tool::ToolDef,
    strict: bool,
) -> (super::schemas::SchemaJson, bool) {
    use super::schemas::Dialect;
    match strict
        .then(|| schemas.form(tool, Dialect::OpenAiStrict))
        .flatten()
    {
        Some(parameters) => (parameters, true),
        None => (
            super::mapping::parameters(schemas, tool, Dialect::OpenAi),
            false,
        ),
    }
}

/// A call's arguments as OpenAI-compatible servers send them: a JSON text as documented, or (some
/// compatible servers) the JSON object itself, taken as its text; `null` is no arguments.
#[cfg(feature = "openai")]
pub(crate) fn arguments_text<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<String, D::Error> {
    use serde::Deserialize;
    Ok(match serde_json::Value::deserialize(deserializer)? {
        serde_json::Value::String(text) => text,
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    })
}

/// The builder methods every adapter has, over its `common` field.
macro_rules! common_builder_methods {
    () => {
        /// Sets the API key. It never shows in `Debug`, errors or logs.
        pub fn api_key(mut self, key: impl Into<$crate::providers::ApiKey>) -> Self {
            self.common.set_api_key(key.into());
            self
        }

        /// Adds a header to every request.
        pub fn header(
            mut self,
            name: $crate::providers::HeaderName,
            value: $crate::providers::HeaderValue,
        ) -> Self {
            self.common.insert_header(name, value);
            self
        }

        /// Caps the tokens of each reply.
        pub fn max_tokens(mut self, tokens: u32) -> Self {
            self.common.max_tokens = Some(tokens);
            self
        }

        /// Sets the sampling temperature.
        pub fn temperature(mut self, temperature: f32) -> Self {
            self.common.temperature = Some(temperature);
            self
        }

        /// Sets timeouts and retries.
        pub fn http_config(mut self, config: $crate::providers::HttpConfig) -> Self {
            self.common.http = $crate::providers::http::HttpClient::new(config);
            self
        }

        /// The model name sent with each request.
        pub fn model(&self) -> &str {
            &self.common.model
        }
    };
}

pub(crate) use common_builder_methods;
