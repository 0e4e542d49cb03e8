//! Tokens a model call used, with one meaning for every vendor, and what they cost.
//!
//! Vendors count differently: OpenAI's and Gemini's prompt tokens include the cached ones,
//! Anthropic's `input_tokens` leave out what was read from or written to its cache; Gemini counts
//! thinking apart from the answer, OpenAI inside it. Each adapter turns its vendor's figures into
//! these: input includes cached, output includes reasoning, and the parts are said apart.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Tokens used by model calls: the same meaning for every vendor. Summed per run
/// ([`RunOutput::usage`](crate::RunOutput::usage)) with `+`.
///
/// ```
/// use agent_core::Usage;
///
/// // An Anthropic reply: 200 new input tokens, 1,000 read from the cache, 50 written to it.
/// let usage = Usage::new(1_250, 80).with_cache(1_000, 50);
/// assert_eq!(usage.uncached_input_tokens(), 200);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Usage {
    /// Tokens sent to the model (the prompt, the history and the tool definitions), those read
    /// from or written to a prompt cache included.
    pub input_tokens: u64,
    /// Tokens the model generated, its reasoning included.
    pub output_tokens: u64,
    /// Of the input, tokens read from the provider's prompt cache (billed at a discount).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_read_tokens: u64,
    /// Of the input, tokens written to the provider's prompt cache (Anthropic's cache creation,
    /// billed at a premium).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write_tokens: u64,
    /// Of the output, tokens of reasoning (thinking), where the provider says.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reasoning_tokens: u64,
    /// Requests that did not begin with the request before them whole, in a run that asked for a
    /// prompt cache: each one the provider's cache could not serve (see
    /// [`PromptCache`](crate::PromptCache)).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_busts: u64,
}

fn is_zero(tokens: &u64) -> bool {
    *tokens == 0
}

impl Usage {
    /// `input` tokens sent and `output` tokens generated.
    pub fn new(input: u64, output: u64) -> Self {
        Usage {
            input_tokens: input,
            output_tokens: output,
            ..Usage::default()
        }
    }

    /// The same, `read` of its input tokens read from the prompt cache and `written` written to
    /// it.
    pub fn with_cache(mut self, read: u64, written: u64) -> Self {
        self.cache_read_tokens = read;
        self.cache_write_tokens = written;
        self
    }

    /// The same, `reasoning` of its output tokens reasoning.
    pub fn with_reasoning(mut self, reasoning: u64) -> Self {
        self.reasoning_tokens = reasoning;
        self
    }

    /// Input and output tokens together.
    pub fn total_tokens(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }

    /// The input tokens neither read from nor written to a cache.
    pub fn uncached_input_tokens(&self) -> u64 {
        self.input_tokens
            .saturating_sub(self.cache_read_tokens + self.cache_write_tokens)
    }

    /// What these tokens cost at `price`.
    pub fn cost(&self, price: &Price) -> f64 {
        let per_token = |per_million: f64, tokens: u64| per_million * tokens as f64 / 1e6;
        per_token(price.input, self.uncached_input_tokens())
            + per_token(price.cache_read, self.cache_read_tokens)
            + per_token(price.cache_write, self.cache_write_tokens)
            + per_token(price.output, self.output_tokens)
    }
}

impl std::ops::Add for Usage {
    type Output = Usage;

    fn add(self, other: Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens + other.input_tokens,
            output_tokens: self.output_tokens + other.output_tokens,
            cache_read_tokens: self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens: self.cache_write_tokens + other.cache_write_tokens,
            reasoning_tokens: self.reasoning_tokens + other.reasoning_tokens,
            cache_busts: self.cache_busts + other.cache_busts,
        }
    }
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        *self = *self + other;
    }
}

/// Usage by the model that used it: what a conversation's runs, which may have asked several models
/// (a fallback chain, a smaller model for summaries), used, in a form a
/// [`PriceTable`](crate::PriceTable) prices ([`PriceTable::cost_by_model`](crate::PriceTable::cost_by_model)).
/// Usage whose model is unknown is kept under no name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct UsageByModel(BTreeMap<String, Usage>);

impl UsageByModel {
    /// None yet.
    pub fn new() -> Self {
        UsageByModel::default()
    }

    /// Adds `usage` of `model` (`None`: not known).
    pub fn add(&mut self, model: Option<&str>, usage: Usage) {
        *self
            .0
            .entry(model.unwrap_or_default().to_owned())
            .or_default() += usage;
    }

    /// Adds everything `other` holds.
    pub fn merge(&mut self, other: &UsageByModel) {
        for (model, usage) in other.iter() {
            self.add(model, *usage);
        }
    }

    /// Every model's usage together.
    pub fn total(&self) -> Usage {
        self.0
            .values()
            .fold(Usage::default(), |sum, usage| sum + *usage)
    }

    /// Whether nothing was used.
    pub fn is_empty(&self) -> bool {
        self.0.values().all(|usage| *usage == Usage::default())
    }

    /// Each model and its usage, by name (the unnamed first, as `None`).
    pub fn iter(&self) -> impl Iterator<Item = (Option<&str>, &Usage)> {
        (self.0.iter()).map(|(model, usage)| ((!model.is_empty()).then_some(model.as_str()), usage))
    }
}

/// What a model's tokens cost, per million, in the currency of your choice (the vendor's price
/// list, which changes: this crate keeps none).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Price {
    /// Input tokens not read from or written to a cache.
    pub input: f64,
    /// Input tokens read from the prompt cache.
    pub cache_read: f64,
    /// Input tokens written to the prompt cache.
    pub cache_write: f64,
    /// Output tokens, reasoning included.
    pub output: f64,
}

impl Price {
    /// A price of `input` and `output` per million tokens; cached input at the input price until
    /// [`with_cache`](Price::with_cache) says otherwise.
    pub fn per_million(input: f64, output: f64) -> Self {
        Price {
            input,
            cache_read: input,
            cache_write: input,
            output,
        }
    }

    /// The same, with cache reads and writes at their own prices per million.
    pub fn with_cache(mut self, read: f64, write: f64) -> Self {
        self.cache_read = read;
        self.cache_write = write;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_prices_each_kind_of_token() {
        let price = Price::per_million(3.0, 15.0).with_cache(0.3, 3.75);
        let usage = Usage::new(1_250_000, 100_000).with_cache(1_000_000, 50_000);
        let cost = usage.cost(&price);
        let expected = 0.2 * 3.0 + 1.0 * 0.3 + 0.05 * 3.75 + 0.1 * 15.0;
        assert!((cost - expected).abs() < 1e-9, "{cost}");
        let sum = usage + Usage::new(10, 5).with_reasoning(2);
        assert_eq!(sum.input_tokens, 1_250_010);
        assert_eq!(sum.reasoning_tokens, 2);
        assert_eq!(sum.cache_read_tokens, 1_000_000);
    }

    #[test]
    fn an_old_record_without_the_parts_reads() {
        let usage: Usage = serde_json::from_str(r#"{"input_tokens":7,"output_tokens":3}"#).unwrap();
        assert_eq!(usage, Usage::new(7, 3));
        assert_eq!(
            serde_json::to_string(&usage).unwrap(),
            r#"{"input_tokens":7,"output_tokens":3}"#
        );
    }
}
