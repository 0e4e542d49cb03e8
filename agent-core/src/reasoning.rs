//! A reasoning model's thinking, kept in the transcript so it can go back to the provider.
//!
//! Providers check what comes back: Anthropic refuses a tool-use turn with extended thinking
//! unless its `thinking` blocks return with their signatures, Gemini wants its thought signatures
//! back, OpenAI's Responses API its reasoning items, DeepSeek the `reasoning_content` of its
//! tool-call turns, and OpenRouter its `reasoning_details` (the signed thinking of the models behind
//! it). A signature only means something to the API that made it, so each piece says which API (for
//! the many services behind the Chat Completions wire format, which service) wrote it and each
//! adapter sends back only its own: a conversation moved to another provider loses the old
//! provider's thinking (the providers cannot read it) but nothing else.

use serde::{Deserialize, Serialize};

/// One piece of a reply's reasoning, as its provider gave it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Reasoning {
    /// The API that wrote it: `"anthropic"`, `"gemini"`, `"openai_responses"`, or for the Chat
    /// Completions wire format the service that answered: `"openai"`, `"deepseek"`,
    /// `"openrouter"`, ... (the `OpenAi` adapter's `service`). An adapter sends back only its own.
    pub provider: String,
    /// The thinking, or its summary, as readable text; empty when the provider hides it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// The token the provider checks when the thinking comes back: Anthropic's `signature`,
    /// Gemini's `thoughtSignature`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// The thinking as the provider encrypted it: Anthropic's `redacted_thinking` data, the
    /// Responses API's `encrypted_content`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encrypted: Option<String>,
    /// The provider's id for it (a Responses API reasoning item); pieces with the same id are one
    /// item, each piece one of its summary parts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The provider's name for the kind of piece it is, where it has several and wants to be told
    /// which comes back: OpenRouter's `reasoning.text`, `reasoning.summary` or
    /// `reasoning.encrypted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// How the provider says the piece is encoded, where it does: OpenRouter's `format`
    /// (`anthropic-claude-v1`, `openai-responses-v1`, `google-gemini-v1`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// Its place among the reply's pieces, where the provider numbers them (OpenRouter's `index`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
}

impl Reasoning {
    /// Readable reasoning from `provider`, with nothing to check.
    pub fn new(provider: impl Into<String>, text: impl Into<String>) -> Self {
        Reasoning {
            provider: provider.into(),
            text: text.into(),
            signature: None,
            encrypted: None,
            id: None,
            kind: None,
            format: None,
            index: None,
        }
    }

    /// Sets the signature.
    pub fn with_signature(mut self, signature: impl Into<String>) -> Self {
        self.signature = Some(signature.into());
        self
    }

    /// Sets the encrypted form.
    pub fn with_encrypted(mut self, encrypted: impl Into<String>) -> Self {
        self.encrypted = Some(encrypted.into());
        self
    }

    /// Sets the provider's id.
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// Sets the provider's name for its kind.
    pub fn with_kind(mut self, kind: impl Into<String>) -> Self {
        self.kind = Some(kind.into());
        self
    }

    /// Sets how the provider says it is encoded.
    pub fn with_format(mut self, format: impl Into<String>) -> Self {
        self.format = Some(format.into());
        self
    }

    /// Sets its place among the reply's pieces.
    pub fn with_index(mut self, index: u32) -> Self {
        self.index = Some(index);
        self
    }

    /// Whether `provider` wrote it (and so may take it back).
    pub fn is_from(&self, provider: &str) -> bool {
        self.provider == provider
    }
}
