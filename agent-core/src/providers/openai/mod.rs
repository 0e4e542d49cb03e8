//! OpenAI Chat Completions (`POST {base}/chat/completions`), and every service that speaks it:
//! OpenAI, Azure OpenAI, DeepSeek, Qwen (DashScope), Groq, OpenRouter, Ollama, vLLM, llama.cpp,
//! LM Studio.
//!
//! Wire format: <https://platform.openai.com/docs/api-reference/chat/create>.
//!
//! The folder: this file holds [`OpenAi`], its builder and its [`Model`] impl, and the services it
//! knows by their hosts; `request.rs` the request body, `response.rs` the reply, `stream.rs` the
//! streamed reply, `reasoning.rs` the reasoning of the services that speak this wire format, read
//! from their replies and sent back.

use std::fmt;
use std::sync::Arc;

use reqwest::header::HeaderName;

use super::common::{Common, KeyHeader, common_builder_methods, encode};
use super::http::{Endpoint, join_url};
use crate::model::{BoxStream, StreamEvent};
use crate::model::{ChatRequest, ChatResponse, Model, ModelError};
use crate::tool::BoxFuture;

mod reasoning;
mod request;
pub(super) mod response;
pub(super) mod stream;

pub(crate) use reasoning::OPENAI_SERVICE;
use request::WireRequest;
pub(crate) use request::{is_reasoning_model, least_effort};
use response::parse_response;

/// OpenAI's own endpoint.
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";

/// The services whose hosts name them, as their reasoning is tagged: a host, or the domain of the
/// hosts, and the service's name.
const KNOWN_SERVICES: &[(&str, &str)] = &[
    ("api.openai.com", OPENAI_SERVICE),
    ("openai.azure.com", "azure"),
    ("api.deepseek.com", "deepseek"),
    ("openrouter.ai", "openrouter"),
    ("api.groq.com", "groq"),
    ("dashscope.aliyuncs.com", "qwen"),
    ("dashscope-intl.aliyuncs.com", "qwen"),
];

/// The name of the service at `base`: a known host's name, else the host (and port) it is reached
/// at, else the URL itself.
fn service_at(base: &str) -> String {
    let Some(url) = reqwest::Url::parse(base).ok() else {
        return base.to_owned();
    };
    let Some(host) = url.host_str() else {
        return base.to_owned();
    };
    let known = KNOWN_SERVICES.iter().find(|(known, _)| {
        host.strip_suffix(known)
            .is_some_and(|above| above.is_empty() || above.ends_with('.'))
    });
    match (known, url.port()) {
        (Some((_, name)), _) => (*name).to_owned(),
        (None, Some(port)) => format!("{host}:{port}"),
        (None, None) => host.to_owned(),
    }
}

/// A model behind the OpenAI Chat Completions API.
///
/// ```
/// use agent_core::providers::OpenAi;
///
/// let openai = OpenAi::new("gpt-4o-mini").api_key("sk-...");
/// let local = OpenAi::new("qwen2.5").base_url("http://127.0.0.1:11434/v1");
/// let deepseek = OpenAi::new("deepseek-reasoner").base_url("https://api.deepseek.com/v1");
/// assert_eq!(deepseek.service_name(), "deepseek");
/// ```
pub struct OpenAi {
    common: Common,
    url: Endpoint,
    /// The service that answers, as its replies' reasoning is tagged (see [`OpenAi::service`]).
    service: Arc<str>,
    /// Whether the user named the service, so that a later base URL does not rename it.
    named: bool,
    /// `Authorization: Bearer` for OpenAI and most others; `api-key` for Azure.
    azure: bool,
    strict_tools: bool,
}

impl OpenAi {
    /// A model on OpenAI's endpoint; give it a key with [`api_key`](Self::api_key).
    pub fn new(model: impl Into<String>) -> Self {
        OpenAi {
            common: Common::new(model),
            url: Endpoint::join(OPENAI_BASE_URL, "chat/completions"),
            service: Arc::from(OPENAI_SERVICE),
            named: false,
            azure: false,
            strict_tools: false,
        }
    }

    /// An Azure OpenAI deployment: `{endpoint}/openai/deployments/{deployment}/chat/completions`,
    /// with the key in the `api-key` header.
    pub fn azure(endpoint: &str, deployment: &str, api_version: &str) -> Self {
        let mut openai = OpenAi::new(deployment);
        let path = format!("openai/deployments/{deployment}/chat/completions");
        openai.url = Endpoint::new(format!(
            "{}?api-version={api_version}",
            join_url(endpoint, &path)
        ));
        openai.azure = true;
        openai.service = Arc::from(service_at(endpoint));
        openai
    }

    common_builder_methods!();

    /// Sends requests to another OpenAI-compatible service: `base` is the part before
    /// `/chat/completions`, e.g. `http://127.0.0.1:11434/v1` for Ollama.
    pub fn base_url(mut self, base: &str) -> Self {
        self.url = Endpoint::join(base, "chat/completions");
        if !self.named {
            self.service = Arc::from(service_at(base));
        }
        self
    }

    /// Names the service that answers. The reasoning of its replies is tagged with this name
    /// ([`Reasoning::provider`](crate::Reasoning::provider)) and goes back only to a service of
    /// the same name: a transcript that moves to another service (another model for the run, a
    /// saved conversation continued elsewhere) does not hand one service's reasoning to another.
    ///
    /// A known base URL names its service without this: OpenAI's own is `"openai"`,
    /// `api.deepseek.com` `"deepseek"`, `openrouter.ai` `"openrouter"`, `api.groq.com` `"groq"`,
    /// DashScope `"qwen"`, Azure `"azure"`; any other is named by its host and port
    /// (`"localhost:11434"`). Name it here when that is not the service (a proxy in front of
    /// DeepSeek, say); [`from_env`](super::from_env) names it after the provider chosen.
    pub fn service(mut self, name: impl Into<String>) -> Self {
        self.service = Arc::from(name.into());
        self.named = true;
        self
    }

    /// The name of the service that answers (see [`service`](Self::service)).
    pub fn service_name(&self) -> &str {
        &self.service
    }

    /// Sends tools in strict mode (Structured Outputs), so the model's arguments always fit the
    /// schema. A tool whose schema strict mode cannot express (a map) is sent without it.
    pub fn strict_tools(mut self, strict: bool) -> Self {
        self.strict_tools = strict;
        self
    }

    /// The request body for this conversation, as it goes on the wire; `stream` asks for a
    /// streamed reply with usage in its last chunk.
    pub(crate) fn request_body<'a>(
        &'a self,
        request: ChatRequest<'a>,
        stream: bool,
    ) -> Result<WireRequest<'a>, ModelError> {
        request::request_body(
            &self.common,
            &self.service,
            self.strict_tools,
            request,
            stream,
        )
    }
}

impl Model for OpenAi {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let body = self
            .request_body(request, false)
            .and_then(|body| encode(&body));
        Box::pin(
            self.common
                .send(&self.url, self.key_header(), body, |reply| {
                    parse_response(reply, &self.service)
                }),
        )
    }

    fn chat_stream<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxStream<'a, Result<StreamEvent, ModelError>> {
        let body = self
            .request_body(request, true)
            .and_then(|body| encode(&body));
        let request = self
            .common
            .stream_request(&self.url, self.key_header(), body);
        let service = Arc::clone(&self.service);
        super::sse::stream_reply_with(request, move || {
            stream::OpenAiReassembler::new(Arc::clone(&service))
        })
    }

    fn model_id(&self) -> Option<&str> {
        Some(&self.common.model)
    }
}

impl OpenAi {
    fn key_header(&self) -> KeyHeader {
        if self.azure {
            KeyHeader {
                name: HeaderName::from_static("api-key"),
                prefix: "",
            }
        } else {
            KeyHeader {
                name: reqwest::header::AUTHORIZATION,
                prefix: "Bearer ",
            }
        }
    }
}

impl fmt::Debug for OpenAi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAi")
            .field("url", &self.url)
            .field("service", &self.service)
            .field("common", &self.common)
            .field("strict_tools", &self.strict_tools)
            .finish()
    }
}
