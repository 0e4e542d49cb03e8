//! Tokens estimated without a tokenizer, and kept honest by the provider's own counts: a text is
//! about a quarter of its characters in tokens, an image, a document or audio a flat amount; the
//! whole is scaled by how the last request's real input tokens compared with its estimate.

use std::sync::atomic::{AtomicU64, Ordering};

use super::json_size;
use crate::content::Part;
use crate::message::Message;
use crate::tool::ToolDef;

/// Characters per token in the estimate before any measurement.
const CHARACTERS_PER_TOKEN: u64 = 4;
/// Tokens of a message's framing (its role and separators).
const MESSAGE_TOKENS: u64 = 4;
/// Tokens of an image, a document or audio, whose size in tokens depends on what it shows.
const MEDIA_TOKENS: u64 = 1_000;
/// The scale is kept in thousandths.
const ONE: u64 = 1_000;

/// Counts tokens as a model's tokenizer does: a local tokenizer (tiktoken's, a Hugging Face
/// tokenizer) in place of the estimate from characters, set with
/// [`Agent::count_tokens_with`](crate::Agent::count_tokens_with). Its counts are still scaled by
/// what the provider counted for the last request, so framing it does not see (roles, tool
/// syntax) is learned.
///
/// ```
/// use agent_core::context::TokenCounter;
/// use agent_core::{Message, ToolDef};
///
/// /// A token for every three bytes, as a tokenizer of this model's might count.
/// struct ThreeBytes;
///
/// impl TokenCounter for ThreeBytes {
///     fn message(&self, message: &Message) -> u64 {
///         message.content().len() as u64 / 3 + 4
///     }
///
///     fn tools(&self, tools: &[ToolDef]) -> u64 {
///         let text = serde_json::to_string(tools).unwrap_or_default();
///         text.len() as u64 / 3
///     }
/// }
/// ```
pub trait TokenCounter: Send + Sync + 'static {
    /// The tokens of `message` as sent (its text, calls, results and parts).
    fn message(&self, message: &Message) -> u64;

    /// The tokens of the tool definitions as sent.
    fn tools(&self, tools: &[ToolDef]) -> u64;
}

/// An estimate of tokens, scaled by what the provider counted: from characters, or by a
/// [`TokenCounter`].
#[derive(Clone, Copy)]
pub(crate) struct TokenEstimate<'c> {
    /// Real tokens per estimated token, in thousandths.
    scale: u64,
    counter: Option<&'c dyn TokenCounter>,
}

impl std::fmt::Debug for TokenEstimate<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenEstimate")
            .field("scale", &self.scale)
            .field("counter", &self.counter.is_some())
            .finish()
    }
}

impl<'c> TokenEstimate<'c> {
    /// The same estimate, counted by `counter` when there is one.
    pub(crate) fn counting_with(self, counter: Option<&'c dyn TokenCounter>) -> Self {
        TokenEstimate { counter, ..self }
    }

    /// The tokens of one message.
    pub(crate) fn message(&self, message: &Message) -> u64 {
        if let Some(counter) = self.counter {
            return self.scaled(counter.message(message));
        }
        let (characters, media) = match message {
            Message::System { content } => (content.len(), 0),
            Message::User { content, parts } => {
                let (characters, media) = parts_size(parts);
                (content.len() + characters, media)
            }
            Message::Assistant(reply) => {
                let calls: usize = reply
                    .tool_calls
                    .iter()
                    .map(|call| call.name.len() + call.arguments.len() + call.id.len())
                    .sum();
                let reasoning: usize = reply
                    .reasoning
                    .iter()
                    .map(|reasoning| reasoning.text.len())
                    .sum();
                (reply.content.len() + calls + reasoning, 0)
            }
            Message::Tool(result) => {
                let (characters, media) = parts_size(&result.parts);
                (
                    result.content.len() + result.tool_call_id.len() + characters,
                    media,
                )
            }
        };
        self.scaled(characters as u64 / CHARACTERS_PER_TOKEN + MESSAGE_TOKENS + media)
    }

    /// The tokens of the tool definitions.
    pub(crate) fn tools(&self, tools: &[ToolDef]) -> u64 {
        if let Some(counter) = self.counter {
            return self.scaled(counter.tools(tools));
        }
        let characters: usize = tools
            .iter()
            .map(|tool| tool.name.len() + tool.description.len() + json_size(&tool.parameters))
            .sum();
        self.scaled(characters as u64 / CHARACTERS_PER_TOKEN)
    }

    fn scaled(&self, tokens: u64) -> u64 {
        tokens * self.scale / ONE
    }

    /// About how many characters of text make `tokens` tokens.
    pub(crate) fn characters(&self, tokens: u64) -> u64 {
        tokens.saturating_mul(CHARACTERS_PER_TOKEN * ONE) / self.scale.max(1)
    }
}

/// The tokens of `messages`, estimated from their characters: what a request that carries them
/// is expected to use of its input.
pub(crate) fn messages_tokens(messages: &[Message]) -> u64 {
    let estimate = TokenEstimate::unscaled();
    messages
        .iter()
        .map(|message| estimate.message(message))
        .sum()
}

/// The characters of a list of parts' texts, and the tokens of its media.
fn parts_size(parts: &[Part]) -> (usize, u64) {
    parts
        .iter()
        .fold((0, 0), |(characters, media), part| match part {
            Part::Text { text } => (characters + text.len(), media),
            _ => (characters, media + MEDIA_TOKENS),
        })
}

/// The scale of the estimate, learned from each reply: how many tokens the provider counted for
/// the last request against how many were estimated; and what refusals for length taught: the
/// least the scale can be, and the model's own window. Shared by the runs of an agent (its model,
/// much the same language), so a new run starts from what the last one learned.
#[derive(Debug)]
pub(crate) struct Calibration {
    scale: AtomicU64,
    /// The scale a refusal proved: a provider's count in its replies may be lower (some count
    /// less than they refuse at), and the estimate is never taken below it again.
    floor: AtomicU64,
    /// The most input tokens the model takes, as a refusal said it (0: not known).
    window: AtomicU64,
}

impl Default for Calibration {
    fn default() -> Self {
        Calibration {
            scale: AtomicU64::new(ONE),
            floor: AtomicU64::new(0),
            window: AtomicU64::new(0),
        }
    }
}

impl Calibration {
    /// The estimate as measured so far.
    pub(crate) fn estimate(&self) -> TokenEstimate<'static> {
        TokenEstimate {
            scale: self.scale.load(Ordering::Relaxed),
            counter: None,
        }
    }

    /// Learns from a request estimated at `estimated` tokens (at scale one) that the provider
    /// counted as `counted` (nothing is learned from a provider that does not count).
    pub(crate) fn measured(&self, estimated: u64, counted: u64) {
        if estimated == 0 || counted == 0 {
            return;
        }
        // Between a tenth and ten times the estimate: a count outside that is not about this text.
        let scale = (counted * ONE / estimated).clamp(ONE / 10, ONE * 10);
        let floor = self.floor.load(Ordering::Relaxed);
        self.scale.store(scale.max(floor), Ordering::Relaxed);
    }

    /// Learns from a request estimated at `estimated` tokens (at scale one) that the provider
    /// refused as longer than the model's window, having counted `tokens` of it and taking at
    /// most `limit`, as far as its message said. The estimate fell short: it becomes what the
    /// count proves (or half as much again, without a count), and never goes below that again;
    /// the model's window is kept. `Some(limit)` when the window learned is new.
    pub(crate) fn overflowed(
        &self,
        estimated: u64,
        tokens: Option<u64>,
        limit: Option<u64>,
    ) -> Option<u64> {
        let scale = self.scale.load(Ordering::Relaxed);
        let proved = match tokens {
            Some(tokens) if estimated > 0 && tokens > 0 => {
                (tokens * ONE / estimated).clamp(ONE / 10, ONE * 10)
            }
            _ => (scale + scale / 2).min(ONE * 10),
        };
        self.floor.fetch_max(proved, Ordering::Relaxed);
        self.scale.fetch_max(proved, Ordering::Relaxed);
        let limit = limit.filter(|limit| *limit > 0)?;
        let before = self.window.load(Ordering::Relaxed);
        (before == 0 || limit < before).then(|| {
            self.window.store(limit, Ordering::Relaxed);
            limit
        })
    }

    /// The most input tokens the model takes, when a refusal said it.
    pub(crate) fn model_window(&self) -> Option<u64> {
        Some(self.window.load(Ordering::Relaxed)).filter(|window| *window > 0)
    }
}

impl TokenEstimate<'static> {
    /// The same estimate unscaled, to measure against.
    pub(crate) fn unscaled() -> Self {
        TokenEstimate {
            scale: ONE,
            counter: None,
        }
    }
}
