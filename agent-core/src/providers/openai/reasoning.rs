//! The reasoning of the services behind the Chat Completions wire format, read from their replies
//! and sent back in later requests.
//!
//! Two shapes come: plain text (`reasoning_content` from DeepSeek, Qwen, vLLM and others;
//! `reasoning` from OpenRouter), and OpenRouter's `reasoning_details`, the pieces of the signed,
//! summarized or encrypted reasoning of the models behind it (Claude's thinking with its
//! signature, a redacted block's data, an OpenAI model's summary and encrypted reasoning), which
//! must come back unmodified for a tool loop to go on
//! (<https://openrouter.ai/docs/use-cases/reasoning-tokens#preserving-reasoning-blocks>). Every
//! piece is tagged with the service that answered, and goes back in the shape it came in to that
//! service only: another service cannot check a signature it did not make, and DeepSeek's
//! thinking is not OpenRouter's to read.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::message::AssistantMessage;
use crate::reasoning::Reasoning;

/// OpenAI's own service, as the reasoning of its replies names it.
pub(crate) const OPENAI_SERVICE: &str = "openai";

/// The `type` of a `reasoning_details` entry of readable thinking, perhaps signed.
const TEXT: &str = "reasoning.text";
/// The `type` of an entry that summarizes the thinking.
const SUMMARY: &str = "reasoning.summary";
/// The `type` of an entry of encrypted (redacted) thinking.
const ENCRYPTED: &str = "reasoning.encrypted";

/// One entry of `reasoning_details` as it comes: whole on a message, a piece of one on a stream's
/// delta (`text`, `summary`, `data` and `signature` then come in pieces to be joined).
#[derive(Deserialize)]
pub(super) struct WireDetail {
    #[serde(rename = "type")]
    kind: Option<String>,
    text: Option<String>,
    summary: Option<String>,
    data: Option<String>,
    signature: Option<String>,
    id: Option<String>,
    format: Option<String>,
    index: Option<u32>,
}

/// `reasoning_details`, leniently: `null` is none, and an entry not of the documented shape is
/// left out rather than failing the whole reply.
pub(super) fn lenient_details<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<WireDetail>, D::Error> {
    let entries = Option::<Vec<Value>>::deserialize(deserializer)?.unwrap_or_default();
    Ok(entries
        .into_iter()
        .filter_map(|entry| WireDetail::deserialize(entry).ok())
        .collect())
}

impl WireDetail {
    /// Its readable text: the thinking or its summary.
    pub(super) fn readable(&self) -> Option<&str> {
        match self.kind.as_deref() {
            Some(TEXT) => self.text.as_deref(),
            Some(SUMMARY) => self.summary.as_deref(),
            _ => None,
        }
        .filter(|text| !text.is_empty())
    }

    /// The piece of reasoning it is, written by `service`; `None` for a kind not documented, which
    /// could not go back as it came.
    fn into_piece(self, service: &str) -> Option<Reasoning> {
        let kind = self.kind?;
        let (text, encrypted) = match kind.as_str() {
            TEXT => (self.text, None),
            SUMMARY => (self.summary, None),
            ENCRYPTED => (None, self.data),
            _ => return None,
        };
        let mut piece = Reasoning::new(service, text.unwrap_or_default());
        piece.signature = non_empty(self.signature);
        piece.encrypted = non_empty(encrypted);
        piece.id = non_empty(self.id);
        piece.format = non_empty(self.format);
        piece.index = self.index;
        piece.kind = Some(kind);
        Some(piece)
    }
}

fn non_empty(text: Option<String>) -> Option<String> {
    text.filter(|text| !text.is_empty())
}

/// A whole reply's reasoning, written by `service`: its `reasoning_details` when it has any (the
/// plain text is then the same thinking again), else its plain text.
pub(super) fn reasoning_of(
    plain: Option<String>,
    details: Vec<WireDetail>,
    service: &str,
) -> Vec<Reasoning> {
    let pieces: Vec<Reasoning> = details
        .into_iter()
        .filter_map(|detail| detail.into_piece(service))
        .collect();
    if !pieces.is_empty() {
        return pieces;
    }
    non_empty(plain)
        .map(|text| Reasoning::new(service, text))
        .into_iter()
        .collect()
}

/// Adds a streamed piece of a `reasoning_details` entry to the pieces so far: to the entry of the
/// same kind and `index` when there is one (to the last entry, for pieces without an index),
/// joining its text, summary, data and signature; else as a new entry.
pub(super) fn join_detail(pieces: &mut Vec<Reasoning>, detail: WireDetail, service: &str) {
    let Some(piece) = detail.into_piece(service) else {
        return;
    };
    let same =
        |earlier: &&mut Reasoning| earlier.kind == piece.kind && earlier.index == piece.index;
    let earlier = match piece.index {
        Some(_) => pieces.iter_mut().rfind(same),
        None => pieces.last_mut().filter(same),
    };
    let Some(earlier) = earlier else {
        pieces.push(piece);
        return;
    };
    earlier.text.push_str(&piece.text);
    append(&mut earlier.signature, piece.signature);
    append(&mut earlier.encrypted, piece.encrypted);
    if earlier.id.is_none() {
        earlier.id = piece.id;
    }
    if earlier.format.is_none() {
        earlier.format = piece.format;
    }
}

fn append(joined: &mut Option<String>, more: Option<String>) {
    match (joined.as_mut(), more) {
        (Some(joined), Some(more)) => joined.push_str(&more),
        (None, more) => *joined = more,
        (Some(_), None) => {}
    }
}

/// The readable plain-text reasoning `service` wrote of a reply, joined: its `reasoning_content`
/// to send back.
pub(super) fn plain_text(reply: &AssistantMessage, service: &str) -> Option<String> {
    let mut pieces = reply
        .reasoning
        .iter()
        .filter(|piece| piece.is_from(service) && piece.kind.is_none() && !piece.text.is_empty())
        .map(|piece| piece.text.as_str())
        .peekable();
    pieces.peek()?;
    Some(pieces.collect())
}

/// The `reasoning_details` `service` wrote of a reply, as they came, to send back.
pub(super) fn details_back<'a>(reply: &'a AssistantMessage, service: &str) -> Vec<DetailBack<'a>> {
    reply
        .reasoning
        .iter()
        .filter(|piece| piece.is_from(service))
        .filter_map(|piece| {
            let kind = piece.kind.as_deref()?;
            let mut back = DetailBack {
                kind,
                text: None,
                summary: None,
                data: None,
                signature: piece.signature.as_deref(),
                id: piece.id.as_deref(),
                format: piece.format.as_deref(),
                index: piece.index,
            };
            match kind {
                TEXT => back.text = Some(&piece.text),
                SUMMARY => back.summary = Some(&piece.text),
                ENCRYPTED => back.data = Some(piece.encrypted.as_deref().unwrap_or_default()),
                _ => return None,
            }
            Some(back)
        })
        .collect()
}

/// A `reasoning_details` entry going back.
#[derive(Serialize)]
pub(super) struct DetailBack<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    summary: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    signature: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    format: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    index: Option<u32>,
}
