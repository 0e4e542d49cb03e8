//! A price table: what each model's tokens cost, read from a file of your own or from the price
//! data LiteLLM maintains (`model_prices_and_context_window.json`), so a run (and each of its
//! model calls) gets a cost from the models that answered.

use std::collections::HashMap;

use serde::Deserialize;

use crate::usage::{Price, Usage, UsageByModel};

/// Prices by model name. A model is priced by its exact name, else by the longest name in the
/// table its own begins with (`gpt-4o-mini` prices `gpt-4o-mini-2024-07-18`).
///
/// ```
/// use agent_core::{Price, PriceTable, Usage};
///
/// let table = PriceTable::new().with("claude-sonnet-4-5", Price::per_million(3.0, 15.0));
/// let price = table.price_of("claude-sonnet-4-5-20250929").unwrap();
/// assert_eq!(Usage::new(1_000_000, 0).cost(price), 3.0);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PriceTable {
    prices: HashMap<String, Price>,
}

/// Why a price file could not be read.
#[derive(Debug, thiserror::Error)]
#[error("the price file is not in the expected form: {0}")]
pub struct PriceFileError(#[from] serde_json::Error);

/// One model's entry in LiteLLM's price data: costs per token, in US dollars.
#[derive(Deserialize)]
struct LiteLlmEntry {
    input_cost_per_token: Option<f64>,
    output_cost_per_token: Option<f64>,
    cache_read_input_token_cost: Option<f64>,
    cache_creation_input_token_cost: Option<f64>,
}

impl PriceTable {
    /// An empty table.
    pub fn new() -> Self {
        PriceTable::default()
    }

    /// The same, with `model` at `price`.
    pub fn with(mut self, model: impl Into<String>, price: Price) -> Self {
        self.prices.insert(model.into(), price);
        self
    }

    /// A table from a JSON object of model names to prices per million tokens, in this crate's
    /// form: `{"gpt-4o-mini": {"input": 0.15, "cache_read": 0.075, "cache_write": 0.15,
    /// "output": 0.6}}`.
    pub fn from_json(json: &str) -> Result<Self, PriceFileError> {
        Ok(PriceTable {
            prices: serde_json::from_str(json)?,
        })
    }

    /// A table from LiteLLM's maintained price data (`model_prices_and_context_window.json`, in
    /// dollars per token); entries without token prices (images, audio by the second) are left
    /// out, and a missing cache price is the input price.
    pub fn from_litellm_json(json: &str) -> Result<Self, PriceFileError> {
        let entries: HashMap<String, serde_json::Value> = serde_json::from_str(json)?;
        let prices = entries
            .into_iter()
            .filter_map(|(model, entry)| {
                let entry: LiteLlmEntry = serde_json::from_value(entry).ok()?;
                let (input, output) = (entry.input_cost_per_token?, entry.output_cost_per_token?);
                let per_million = |per_token: f64| per_token * 1e6;
                let price = Price::per_million(per_million(input), per_million(output)).with_cache(
                    per_million(entry.cache_read_input_token_cost.unwrap_or(input)),
                    per_million(entry.cache_creation_input_token_cost.unwrap_or(input)),
                );
                Some((model, price))
            })
            .collect();
        Ok(PriceTable { prices })
    }

    /// The price of `model`: its own, else that of the longest name its own begins with.
    pub fn price_of(&self, model: &str) -> Option<&Price> {
        self.prices.get(model).or_else(|| {
            self.prices
                .iter()
                .filter(|(name, _)| model.starts_with(name.as_str()))
                .max_by_key(|(name, _)| name.len())
                .map(|(_, price)| price)
        })
    }

    /// What model calls cost, each its usage and the model that answered it; `None` when a call's
    /// model is unknown or has no price here, rather than a total that leaves it out.
    pub fn cost<'a>(
        &self,
        calls: impl IntoIterator<Item = (&'a Usage, Option<&'a str>)>,
    ) -> Option<f64> {
        calls.into_iter().try_fold(0.0, |total, (usage, model)| {
            Some(total + usage.cost(self.price_of(model?)?))
        })
    }

    /// What `usage` costs, each model's at its price (a conversation's:
    /// [`Conversation::cost`](crate::session::Conversation::cost)); `None` when a model is
    /// unknown or has no price here.
    pub fn cost_by_model(&self, usage: &UsageByModel) -> Option<f64> {
        self.cost(usage.iter().map(|(model, usage)| (usage, model)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two entries as LiteLLM's file has them, and one it prices by the second.
    const LITELLM: &str = r#"{
        "claude-sonnet-4-5": {
            "max_input_tokens": 200000,
            "input_cost_per_token": 3e-06,
            "output_cost_per_token": 1.5e-05,
            "cache_read_input_token_cost": 3e-07,
            "cache_creation_input_token_cost": 3.75e-06,
            "litellm_provider": "anthropic",
            "mode": "chat"
        },
        "gpt-4o-mini": {
            "input_cost_per_token": 1.5e-07,
            "output_cost_per_token": 6e-07,
            "cache_read_input_token_cost": 7.5e-08,
            "litellm_provider": "openai",
            "mode": "chat"
        },
        "whisper-1": {"input_cost_per_second": 0.0001, "mode": "audio_transcription"}
    }"#;

    #[test]
    fn litellms_prices_are_read_per_million() {
        let table = PriceTable::from_litellm_json(LITELLM).unwrap();
        let sonnet = table.price_of("claude-sonnet-4-5-20250929").unwrap();
        assert!((sonnet.input - 3.0).abs() < 1e-9 && (sonnet.cache_write - 3.75).abs() < 1e-9);
        let mini = table.price_of("gpt-4o-mini").unwrap();
        assert!((mini.cache_read - 0.075).abs() < 1e-9 && (mini.cache_write - 0.15).abs() < 1e-9);
        assert!(table.price_of("whisper-1").is_none());
        assert!(table.price_of("gpt-4o").is_none());
    }

    #[test]
    fn a_run_is_priced_by_the_models_that_answered() {
        let table = PriceTable::from_json(
            r#"{"gpt-4o-mini": {"input": 0.15, "cache_read": 0.075, "cache_write": 0.15, "output": 0.6},
                "gpt-4o": {"input": 2.5, "cache_read": 1.25, "cache_write": 2.5, "output": 10.0}}"#,
        )
        .unwrap();
        let usage = [Usage::new(1_000_000, 0), Usage::new(0, 1_000_000)];
        let models = [Some("gpt-4o-mini-2024-07-18"), Some("gpt-4o-2024-08-06")];
        let cost = table.cost(usage.iter().zip(models)).unwrap();
        assert!((cost - (0.15 + 10.0)).abs() < 1e-9, "{cost}");
        // A call whose model is unknown leaves the cost unknown, not short.
        assert_eq!(
            table.cost(usage.iter().zip([Some("gpt-4o-mini"), None])),
            None
        );
        assert!(PriceTable::from_json("[1]").is_err());
    }
}
