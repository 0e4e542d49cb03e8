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

/// An estimate of tokens, scaled by what the provider counted.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TokenEstimate {
    /// Real tokens per estimated token, in thousandths.
    scale: u64,
}

impl TokenEstimate {
    /// The tokens of one message.
    pub(crate) fn message(&self, message: &Message) -> u64 {
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
        let characters: usize = tools
            .iter()
            .map(|tool| tool.name.len() + tool.description.len() + json_size(&tool.parameters))
            .sum();
        self.scaled(characters as u64 / CHARACTERS_PER_TOKEN)
    }

    fn scaled(&self, tokens: u64) -> u64 {
        tokens * self.scale / ONE
    }
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
/// the last request against how many were estimated. Shared by the runs of an agent (the same
/// model, much the same language), so a new run starts from what the last one measured.
#[derive(Debug)]
pub(crate) struct Calibration {
    scale: AtomicU64,
}

impl Default for Calibration {
    fn default() -> Self {
        Calibration {
            scale: AtomicU64::new(ONE),
        }
    }
}

impl Calibration {
    /// The estimate as measured so far.
    pub(crate) fn estimate(&self) -> TokenEstimate {
        TokenEstimate {
            scale: self.scale.load(Ordering::Relaxed),
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
        self.scale.store(scale, Ordering::Relaxed);
    }
}

impl Calibration {
    /// Learns that a request was refused as longer than the model's window: the estimate fell
    /// short, so it is raised by half (the next reply's count sets it right again).
    pub(crate) fn overflowed(&self) {
        let scale = self.scale.load(Ordering::Relaxed);
        self.scale
            .store((scale + scale / 2).min(ONE * 10), Ordering::Relaxed);
    }
}

impl TokenEstimate {
    /// The same estimate unscaled, to measure against.
    pub(crate) fn unscaled() -> Self {
        TokenEstimate { scale: ONE }
    }
}
