//! Each vendor's adapter pointed at a loopback server that speaks its wire format (the fallback
//! tests' chains), and the model names the fixtures' replies give.

use agent_core::providers::{Anthropic, Gemini, HttpConfig, OpenAi};

use crate::http::quick_retries;

/// The model names the fixtures' replies give: OpenAI's.
pub const OPENAI_ANSWERED: &str = "gpt-4o-mini-2024-07-18";
/// Anthropic's.
pub const CLAUDE_ANSWERED: &str = "claude-sonnet-4-5-20250929";

/// OpenAI's adapter (`gpt-4o-mini`) against the loopback server at `base`.
pub fn openai_at(base: &str, config: HttpConfig) -> OpenAi {
    OpenAi::new("gpt-4o-mini")
        .api_key("sk-primary-secret")
        .base_url(&format!("{base}/v1"))
        .http_config(config)
}

/// Anthropic's adapter (`claude-sonnet-4-5`) against the loopback server at `base`, with quick
/// retries.
pub fn claude_at(base: &str) -> Anthropic {
    Anthropic::new("claude-sonnet-4-5")
        .api_key("sk-ant-secondary-secret")
        .base_url(base)
        .http_config(quick_retries())
}

/// Gemini's adapter (`gemini-2.5-flash`) against the loopback server at `base`.
pub fn gemini_at(base: &str, config: HttpConfig) -> Gemini {
    Gemini::new("gemini-2.5-flash")
        .api_key("gemini-secret")
        .base_url(&format!("{base}/v1beta"))
        .http_config(config)
}
