//! Choosing a model from the environment: `AGENT_MODEL=provider:model` plus the usual key variables.

use std::fmt;

use super::http::{ApiKey, HttpConfig};
use crate::model::{BoxStream, ChatRequest, ChatResponse, Model, ModelError, StreamEvent};
use crate::tool::BoxFuture;

/// Reads `AGENT_MODEL` (`openai:gpt-4o-mini`, `anthropic:claude-sonnet-4-5`,
/// `gemini:gemini-2.5-flash`, `openai-responses:gpt-5`, `ollama:qwen2.5`, ...) and the provider's
/// key variable.
///
/// Without `AGENT_MODEL`, the first key found picks a provider and its default model:
/// `OPENAI_API_KEY`, then `ANTHROPIC_API_KEY`, then `GEMINI_API_KEY` (or `GOOGLE_API_KEY`). With
/// neither, `Ok(None)`: the caller can fall back to an offline model.
///
/// A service that speaks Chat Completions (`deepseek`, `openrouter`, `ollama`, ...) is named after
/// its provider here, whatever its base URL, so its replies' reasoning goes back to it only (see
/// [`OpenAi::service`](super::OpenAi::service)); `openai` is named by its base URL.
///
/// | provider | key | base URL variable (default) |
/// |---|---|---|
/// | `openai` | `OPENAI_API_KEY` (not needed when `OPENAI_BASE_URL` points at a local server) | `OPENAI_BASE_URL` |
/// | `openai-responses` (OpenAI's Responses API, [`OpenAiResponses`](super::OpenAiResponses)) | `OPENAI_API_KEY` (not needed when `OPENAI_BASE_URL` points at a local server) | `OPENAI_BASE_URL` |
/// | `anthropic` | `ANTHROPIC_API_KEY` | `ANTHROPIC_BASE_URL` |
/// | `gemini` | `GEMINI_API_KEY` or `GOOGLE_API_KEY` | `GEMINI_BASE_URL` |
/// | `deepseek`, `groq`, `openrouter`, `qwen` | `DEEPSEEK_API_KEY`, `GROQ_API_KEY`, `OPENROUTER_API_KEY`, `DASHSCOPE_API_KEY` | `{PROVIDER}_BASE_URL` |
/// | `ollama`, `vllm`, `llamacpp`, `lmstudio` | none | `OLLAMA_BASE_URL` (`http://localhost:11434/v1`), ... |
pub fn from_env() -> Result<Option<EnvModel>, EnvError> {
    from_variables(|name| {
        std::env::var(name)
            .ok()
            .filter(|value| !value.trim().is_empty())
    })
}

/// [`from_env`] over any source of variables (a config file, a test's map).
pub fn from_variables(var: impl Fn(&str) -> Option<String>) -> Result<Option<EnvModel>, EnvError> {
    let choice = match var("AGENT_MODEL") {
        Some(choice) => choice,
        None => match DEFAULT_BY_KEY.iter().find(|(key, _)| var(key).is_some()) {
            Some((_, choice)) => (*choice).to_owned(),
            None => return Ok(None),
        },
    };
    let (provider, model) = choice
        .split_once(':')
        .map(|(provider, model)| {
            (
                provider.trim().to_ascii_lowercase(),
                model.trim().to_owned(),
            )
        })
        .filter(|(provider, model)| !provider.is_empty() && !model.is_empty())
        .ok_or_else(|| EnvError::Malformed {
            value: choice.clone(),
        })?;
    let preset = PRESETS
        .iter()
        .find(|preset| preset.name == provider)
        .ok_or_else(|| EnvError::UnknownProvider {
            name: provider.clone(),
            known: PRESETS.iter().map(|preset| preset.name).collect(),
        })?;
    let key = preset
        .key_variables
        .iter()
        .find_map(|variable| var(variable));
    let base_url = var(preset.base_url_variable);
    if key.is_none() && preset.needs_key(base_url.is_some()) {
        return Err(EnvError::MissingKey {
            provider: preset.name,
            variable: preset.key_variables.join(" or "),
        });
    }
    let base_url = base_url.unwrap_or_else(|| preset.default_base_url.to_owned());
    let key = key.map(ApiKey::new);
    let config = HttpConfig::default();
    let built =
        build(preset, &model, &base_url, key.clone(), config).ok_or(EnvError::NotCompiled {
            provider: preset.name,
        })?;
    Ok(Some(EnvModel {
        provider: preset.name,
        name: model,
        preset,
        base_url,
        key,
        model: built,
    }))
}

/// A model chosen from the environment, and what was chosen.
pub struct EnvModel {
    provider: &'static str,
    name: String,
    preset: &'static Preset,
    base_url: String,
    key: Option<ApiKey>,
    model: Box<dyn Model>,
}

impl EnvModel {
    /// The provider, as spelled in `AGENT_MODEL` (`openai`, `ollama`, ...).
    pub fn provider(&self) -> &str {
        self.provider
    }

    /// The model name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The base URL requests go to (the provider's, or the one its `*_BASE_URL` variable gave).
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// Sets timeouts and retries, as the adapters' `http_config` does.
    pub fn http_config(mut self, config: HttpConfig) -> Self {
        // The adapter was built once already, so its feature is on and it builds again.
        if let Some(model) = build(
            self.preset,
            &self.name,
            &self.base_url,
            self.key.clone(),
            config,
        ) {
            self.model = model;
        }
        self
    }
}

// Forwards every method, streaming included: `missing_trait_methods` fails clippy if a new one is
// left to its default, and the conformance suite (tests/tests/conformance.rs) fails it at run time.
#[deny(clippy::missing_trait_methods)]
impl Model for EnvModel {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        self.model.chat(request)
    }

    fn chat_stream<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxStream<'a, Result<StreamEvent, ModelError>> {
        self.model.chat_stream(request)
    }

    fn model_id(&self) -> Option<&str> {
        self.model.model_id()
    }
}

impl fmt::Display for EnvModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.provider, self.name)
    }
}

impl fmt::Debug for EnvModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EnvModel")
            .field("provider", &self.provider)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// Why no model could be made from the environment.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EnvError {
    /// `AGENT_MODEL` is not `provider:model`.
    #[error("AGENT_MODEL={value:?} is not `provider:model`, e.g. `openai:gpt-4o-mini`")]
    Malformed {
        /// The value found.
        value: String,
    },
    /// The provider is not one this crate knows.
    #[error("unknown provider `{name}` in AGENT_MODEL; known: {}", known.join(", "))]
    UnknownProvider {
        /// The provider asked for.
        name: String,
        /// The providers there are.
        known: Vec<&'static str>,
    },
    /// The provider's API key is not set.
    #[error("AGENT_MODEL asks for {provider}, but {variable} is not set")]
    MissingKey {
        /// The provider.
        provider: &'static str,
        /// The variable to set.
        variable: String,
    },
    /// The provider's adapter is behind a cargo feature that is off.
    #[error("the {provider} adapter is not compiled in: enable its cargo feature")]
    NotCompiled {
        /// The provider.
        provider: &'static str,
    },
}

/// Which wire format a provider speaks.
#[derive(Clone, Copy)]
enum Wire {
    OpenAi,
    OpenAiResponses,
    Anthropic,
    Gemini,
}

struct Preset {
    name: &'static str,
    wire: Wire,
    key_variables: &'static [&'static str],
    base_url_variable: &'static str,
    default_base_url: &'static str,
    /// Local servers take no key.
    local: bool,
}

impl Preset {
    fn needs_key(&self, custom_base_url: bool) -> bool {
        // An OpenAI-compatible local server at a custom URL usually takes none either.
        let local_openai_compatible =
            custom_base_url && matches!(self.wire, Wire::OpenAi | Wire::OpenAiResponses);
        !(self.local || local_openai_compatible)
    }
}

const DEFAULT_BY_KEY: &[(&str, &str)] = &[
    ("OPENAI_API_KEY", "openai:gpt-4o-mini"),
    ("ANTHROPIC_API_KEY", "anthropic:claude-sonnet-4-5"),
    ("GEMINI_API_KEY", "gemini:gemini-2.5-flash"),
    ("GOOGLE_API_KEY", "gemini:gemini-2.5-flash"),
];

const fn preset(
    name: &'static str,
    wire: Wire,
    key_variables: &'static [&'static str],
    base_url_variable: &'static str,
    default_base_url: &'static str,
    local: bool,
) -> Preset {
    Preset {
        name,
        wire,
        key_variables,
        base_url_variable,
        default_base_url,
        local,
    }
}

const PRESETS: &[Preset] = &[
    preset(
        "openai",
        Wire::OpenAi,
        &["OPENAI_API_KEY"],
        "OPENAI_BASE_URL",
        "https://api.openai.com/v1",
        false,
    ),
    preset(
        "anthropic",
        Wire::Anthropic,
        &["ANTHROPIC_API_KEY"],
        "ANTHROPIC_BASE_URL",
        "https://api.anthropic.com",
        false,
    ),
    preset(
        "gemini",
        Wire::Gemini,
        &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
        "GEMINI_BASE_URL",
        "https://generativelanguage.googleapis.com/v1beta",
        false,
    ),
    // The same service and key as `openai`, through the Responses API.
    preset(
        "openai-responses",
        Wire::OpenAiResponses,
        &["OPENAI_API_KEY"],
        "OPENAI_BASE_URL",
        "https://api.openai.com/v1",
        false,
    ),
    preset(
        "deepseek",
        Wire::OpenAi,
        &["DEEPSEEK_API_KEY"],
        "DEEPSEEK_BASE_URL",
        "https://api.deepseek.com/v1",
        false,
    ),
    preset(
        "groq",
        Wire::OpenAi,
        &["GROQ_API_KEY"],
        "GROQ_BASE_URL",
        "https://api.groq.com/openai/v1",
        false,
    ),
    preset(
        "openrouter",
        Wire::OpenAi,
        &["OPENROUTER_API_KEY"],
        "OPENROUTER_BASE_URL",
        "https://openrouter.ai/api/v1",
        false,
    ),
    preset(
        "qwen",
        Wire::OpenAi,
        &["DASHSCOPE_API_KEY"],
        "DASHSCOPE_BASE_URL",
        "https://dashscope.aliyuncs.com/compatible-mode/v1",
        false,
    ),
    preset(
        "ollama",
        Wire::OpenAi,
        &[],
        "OLLAMA_BASE_URL",
        "http://localhost:11434/v1",
        true,
    ),
    preset(
        "vllm",
        Wire::OpenAi,
        &[],
        "VLLM_BASE_URL",
        "http://localhost:8000/v1",
        true,
    ),
    preset(
        "llamacpp",
        Wire::OpenAi,
        &[],
        "LLAMACPP_BASE_URL",
        "http://localhost:8080/v1",
        true,
    ),
    preset(
        "lmstudio",
        Wire::OpenAi,
        &[],
        "LMSTUDIO_BASE_URL",
        "http://localhost:1234/v1",
        true,
    ),
];

/// The adapter for a preset's wire format, or `None` when its feature is off.
#[allow(unused_variables)]
fn build(
    preset: &Preset,
    model: &str,
    base_url: &str,
    key: Option<ApiKey>,
    config: HttpConfig,
) -> Option<Box<dyn Model>> {
    // An adapter made and pointed at the base URL: with the settings and the key.
    macro_rules! configured {
        ($adapter:expr) => {{
            let adapter = $adapter.http_config(config);
            Some(Box::new(match key {
                Some(key) => adapter.api_key(key),
                None => adapter,
            }))
        }};
    }
    macro_rules! adapter {
        ($adapter:ty) => {
            configured!(<$adapter>::new(model).base_url(base_url))
        };
    }
    match preset.wire {
        // A service's preset names it, at whatever URL it is reached (a proxy); `openai`'s URL
        // may be any compatible server's (a local one), so that URL names its service.
        #[cfg(feature = "openai")]
        Wire::OpenAi if preset.name != "openai" => {
            configured!(
                super::OpenAi::new(model)
                    .base_url(base_url)
                    .service(preset.name)
            )
        }
        #[cfg(feature = "openai")]
        Wire::OpenAi => adapter!(super::OpenAi),
        #[cfg(feature = "openai")]
        Wire::OpenAiResponses => adapter!(super::OpenAiResponses),
        #[cfg(feature = "anthropic")]
        Wire::Anthropic => adapter!(super::Anthropic),
        #[cfg(feature = "gemini")]
        Wire::Gemini => adapter!(super::Gemini),
        #[allow(unreachable_patterns)]
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn choose(pairs: &[(&str, &str)]) -> Result<Option<EnvModel>, EnvError> {
        let vars: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        from_variables(|name| vars.get(name).cloned())
    }

    #[test]
    fn nothing_set_means_no_model() {
        assert!(choose(&[]).unwrap().is_none());
    }

    #[test]
    fn agent_model_picks_provider_and_model() {
        let model = choose(&[
            ("AGENT_MODEL", "anthropic:claude-haiku-4-5"),
            ("ANTHROPIC_API_KEY", "k"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(model.to_string(), "anthropic:claude-haiku-4-5");
        let model = choose(&[("AGENT_MODEL", "ollama:qwen2.5")])
            .unwrap()
            .unwrap();
        assert_eq!((model.provider(), model.name()), ("ollama", "qwen2.5"));
        let model = choose(&[
            ("AGENT_MODEL", "Gemini:gemini-2.5-flash"),
            ("GOOGLE_API_KEY", "k"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(model.provider(), "gemini");
        let model = choose(&[
            ("AGENT_MODEL", "openai-responses:gpt-5"),
            ("OPENAI_API_KEY", "k"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(model.to_string(), "openai-responses:gpt-5");
        assert_eq!(model.base_url(), "https://api.openai.com/v1");
        let error = choose(&[("AGENT_MODEL", "openai-responses:gpt-5")]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "AGENT_MODEL asks for openai-responses, but OPENAI_API_KEY is not set"
        );
        // A local server speaking the Responses API needs no key either.
        assert!(
            choose(&[
                ("AGENT_MODEL", "openai-responses:gpt-oss-20b"),
                ("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")
            ])
            .unwrap()
            .is_some()
        );
    }

    #[test]
    fn a_key_alone_picks_its_provider() {
        let model = choose(&[("GEMINI_API_KEY", "k")]).unwrap().unwrap();
        assert_eq!(model.to_string(), "gemini:gemini-2.5-flash");
        let model = choose(&[("OPENAI_API_KEY", "k"), ("GEMINI_API_KEY", "k")])
            .unwrap()
            .unwrap();
        assert_eq!(model.to_string(), "openai:gpt-4o-mini");
    }

    #[test]
    fn a_missing_key_is_a_clear_error() {
        let error = choose(&[("AGENT_MODEL", "openai:gpt-4o")]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "AGENT_MODEL asks for openai, but OPENAI_API_KEY is not set"
        );
        let error = choose(&[("AGENT_MODEL", "gemini:gemini-2.5-pro")]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "AGENT_MODEL asks for gemini, but GEMINI_API_KEY or GOOGLE_API_KEY is not set"
        );
        // A local OpenAI-compatible server needs none.
        assert!(
            choose(&[
                ("AGENT_MODEL", "openai:local"),
                ("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")
            ])
            .unwrap()
            .is_some()
        );
    }

    #[test]
    fn unknown_and_malformed_choices_are_clear_errors() {
        let error = choose(&[("AGENT_MODEL", "mistral:large")]).unwrap_err();
        assert!(
            error.to_string().starts_with(
                "unknown provider `mistral` in AGENT_MODEL; known: openai, anthropic, gemini"
            ),
            "{error}"
        );
        assert_eq!(
            choose(&[("AGENT_MODEL", "gpt-4o")]).unwrap_err(),
            EnvError::Malformed {
                value: "gpt-4o".into()
            }
        );
    }

    #[test]
    fn the_key_never_shows() {
        let model = choose(&[
            ("AGENT_MODEL", "openai:gpt-4o"),
            ("OPENAI_API_KEY", "very-secret-value"),
        ])
        .unwrap()
        .unwrap();
        assert!(!format!("{model:?} {model}").contains("very-secret"));
    }
}
