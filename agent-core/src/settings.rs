//! What a request asks of the model beyond the conversation: how it must use the tools, sampling,
//! and the shape of its answer. Set per agent, overridden per run, carried by every
//! [`ChatRequest`](crate::ChatRequest); each adapter maps them onto its provider's wire form.

use serde_json::Value;

/// Whether and which tool the model must call.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolChoice {
    /// The model decides (the providers' default).
    #[default]
    Auto,
    /// The model must call at least one tool.
    Required,
    /// The model must not call tools; it answers in text.
    None,
    /// The model must call this tool.
    Tool(String),
}

impl ToolChoice {
    /// A choice that makes the model call a tool: after a step in which it did, a run drops it
    /// (the adapter's default, which is the provider's `auto`), or the model could never answer.
    pub fn forces_a_call(&self) -> bool {
        matches!(self, ToolChoice::Required | ToolChoice::Tool(_))
    }
}

/// Per-request model settings. Each one left `None` is the adapter's own setting (or the
/// provider's default).
///
/// ```
/// use agent_core::{ModelSettings, ToolChoice};
///
/// let settings = ModelSettings::new()
///     .temperature(0.2)
///     .max_tokens(800)
///     .tool_choice(ToolChoice::Required);
/// assert_eq!(settings.temperature, Some(0.2));
/// ```
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct ModelSettings {
    /// Whether and which tool the model must call. A choice that forces a call holds for the
    /// first step; once the model has called a tool the run drops it, so the model can answer (as
    /// the OpenAI Agents SDK does). A typed run in [`OutputMode::Tool`](crate::OutputMode::Tool)
    /// asks for a tool call on every step instead: its answer is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// Sampling temperature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// The most tokens one reply may have (not the run's budget: see
    /// [`Agent::max_output_tokens`](crate::Agent::max_output_tokens)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// How much a reasoning model thinks before it answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking: Option<Thinking>,
    /// Whether and how the request asks the provider to cache its prefix (see [`PromptCache`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_cache: Option<PromptCache>,
}

/// How a request asks its provider to cache the prefix it shares with the requests before it.
/// Every request of a run (and of a session) serializes its tools and system text the same bytes
/// each time, so a cache holds; this says where the caches that must be asked for are placed:
///
/// - Anthropic: `cache_control` breakpoints, at most the API's four: the [`pins`](Self::pins)
///   first (in order), then the tool definitions, the system text, and the moving tail (the last
///   message), while room is left.
/// - OpenAI (Chat Completions and Responses): a `prompt_cache_key`, the [`key`](Self::key) or,
///   left `None`, one the run makes from its session's id (else its run id), so requests of one
///   conversation reach the same cache.
/// - Gemini caches a shared prefix by itself.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct PromptCache {
    /// The key that routes the requests of one conversation to one cache.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Breakpoints of your own: the history's messages to cache up to, by index; placed before the
    /// automatic ones.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pins: Vec<usize>,
}

impl PromptCache {
    /// The automatic breakpoints and key.
    pub fn auto() -> Self {
        PromptCache::default()
    }

    /// The same, with a breakpoint of your own after the message at `index` in the history.
    pub fn pin(mut self, index: usize) -> Self {
        self.pins.push(index);
        self
    }

    /// The same, with this key for the conversation's cache.
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// The key a run gives a conversation's cache: a hash of its id (which may name a user), so
    /// the id itself never reaches the provider.
    pub(crate) fn key_for(conversation: &str) -> String {
        use std::hash::{DefaultHasher, Hash, Hasher};
        let mut hasher = DefaultHasher::new();
        conversation.hash(&mut hasher);
        format!("agent-{:016x}", hasher.finish())
    }
}

/// No settings: every one is the adapter's.
pub(crate) static NO_SETTINGS: ModelSettings = ModelSettings::new();

impl ModelSettings {
    /// No settings: every one is the adapter's.
    pub const fn new() -> Self {
        ModelSettings {
            tool_choice: None,
            temperature: None,
            max_tokens: None,
            thinking: None,
            prompt_cache: None,
        }
    }

    /// Sets the tool choice.
    pub fn tool_choice(mut self, choice: ToolChoice) -> Self {
        self.tool_choice = Some(choice);
        self
    }

    /// Sets the sampling temperature.
    pub fn temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Sets the most tokens one reply may have.
    pub fn max_tokens(mut self, tokens: u32) -> Self {
        self.max_tokens = Some(tokens);
        self
    }

    /// Sets how much the model thinks.
    pub fn thinking(mut self, thinking: Thinking) -> Self {
        self.thinking = Some(thinking);
        self
    }

    /// Asks the provider to cache the requests' shared prefix (see [`PromptCache`]).
    pub fn prompt_cache(mut self, cache: PromptCache) -> Self {
        self.prompt_cache = Some(cache);
        self
    }

    /// These settings, with each one left `None` taken from `fallback`.
    pub fn or(&self, fallback: &ModelSettings) -> ModelSettings {
        ModelSettings {
            tool_choice: self
                .tool_choice
                .clone()
                .or_else(|| fallback.tool_choice.clone()),
            temperature: self.temperature.or(fallback.temperature),
            max_tokens: self.max_tokens.or(fallback.max_tokens),
            thinking: self.thinking.or(fallback.thinking),
            prompt_cache: self
                .prompt_cache
                .clone()
                .or_else(|| fallback.prompt_cache.clone()),
        }
    }

    /// Whether no setting is made.
    pub fn is_empty(&self) -> bool {
        *self == ModelSettings::new()
    }
}

/// A JSON schema the model's answer must follow: a provider's native structured output
/// (OpenAI `response_format`, Gemini `responseSchema`, Anthropic `output_config.format`). Typed
/// runs in [`OutputMode::Native`](crate::OutputMode::Native) send one.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct ResponseFormat {
    /// A name for the schema (`^[A-Za-z0-9_-]{1,64}$`), which OpenAI requires.
    pub name: String,
    /// What the answer is, when the type says (its doc comment).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The neutral JSON schema (draft 2020-12) of the answer; an object at its root. Adapters
    /// bring it into their provider's dialect.
    pub schema: Value,
}

impl ResponseFormat {
    /// A format from its parts.
    pub fn new(name: impl Into<String>, schema: Value) -> Self {
        ResponseFormat {
            name: name.into(),
            description: None,
            schema,
        }
    }

    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }
}

/// How much a reasoning model thinks before it answers. Each adapter maps it onto its provider:
/// Anthropic `thinking.budget_tokens`, Gemini `thinkingConfig` (with thought summaries included),
/// OpenAI `reasoning_effort` / the Responses API's `reasoning.effort` (with a summary). An effort
/// becomes a token budget where a provider wants one, and a budget an effort, by
/// [`Thinking::budget_tokens`] and [`Thinking::effort`].
///
/// ```
/// use agent_core::{Effort, ModelSettings, Thinking};
///
/// let settings = ModelSettings::new().thinking(Thinking::Effort(Effort::High));
/// assert_eq!(settings.thinking.unwrap().budget_tokens(), Some(16_384));
/// assert_eq!(Thinking::Budget(3_000).effort(), Some(Effort::Medium));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Thinking {
    /// No thinking, where the model lets it be turned off (Gemini's budget 0, OpenAI's
    /// `minimal` effort); Anthropic's default.
    Off,
    /// Think this hard.
    Effort(Effort),
    /// Think with at most this many tokens (Anthropic requires at least 1,024).
    Budget(u32),
}

/// How hard a reasoning model thinks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Effort {
    /// Quick: a budget of 1,024 tokens.
    Low,
    /// A budget of 4,096 tokens.
    Medium,
    /// A budget of 16,384 tokens.
    High,
}

impl Thinking {
    /// The token budget: the budget itself, or the effort's budget; `None` when off.
    pub fn budget_tokens(self) -> Option<u32> {
        match self {
            Thinking::Off => None,
            Thinking::Budget(tokens) => Some(tokens),
            Thinking::Effort(Effort::Low) => Some(1_024),
            Thinking::Effort(Effort::Medium) => Some(4_096),
            Thinking::Effort(Effort::High) => Some(16_384),
        }
    }

    /// The effort: the effort itself, or the nearest to the budget (up to 2,048 tokens low, up to
    /// 8,192 medium, above high); `None` when off.
    pub fn effort(self) -> Option<Effort> {
        match self {
            Thinking::Off => None,
            Thinking::Effort(effort) => Some(effort),
            Thinking::Budget(0..=2_048) => Some(Effort::Low),
            Thinking::Budget(2_049..=8_192) => Some(Effort::Medium),
            Thinking::Budget(_) => Some(Effort::High),
        }
    }
}

impl Effort {
    /// The name the OpenAI APIs use: `low`, `medium`, `high`.
    pub fn as_str(self) -> &'static str {
        match self {
            Effort::Low => "low",
            Effort::Medium => "medium",
            Effort::High => "high",
        }
    }
}
