//! The conversation: what the agent sends to the model and what it gets back.
//!
//! Every type here is `Serialize + Deserialize`, so a transcript can be saved and a run resumed later.

use serde::{Deserialize, Serialize};

use crate::content::Part;
use crate::reasoning::Reasoning;

/// One entry of the conversation history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Message {
    /// Instructions for the model; the agent puts its system prompt first.
    System {
        /// The instructions.
        content: String,
    },
    /// What the user said, and what they showed.
    User {
        /// The user's words.
        content: String,
        /// What follows the words: images, documents, audio, more text. Empty for plain text.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        parts: Vec<Part>,
    },
    /// A reply of the model: text, tool calls, or both.
    Assistant(AssistantMessage),
    /// The result of one tool call, answering the call with the same id.
    Tool(ToolResultMessage),
}

impl Message {
    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Message::System {
            content: content.into(),
        }
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Message::User {
            content: content.into(),
            parts: Vec::new(),
        }
    }

    /// A user message of parts only (an image with no words, say).
    pub fn user_parts(parts: impl IntoIterator<Item = Part>) -> Self {
        Message::User {
            content: String::new(),
            parts: parts.into_iter().collect(),
        }
    }

    /// Adds a part after the message's text and parts: to a user message or a tool result. Other
    /// messages cannot hold parts and are returned as they are.
    pub fn with_part(mut self, part: Part) -> Self {
        match &mut self {
            Message::User { parts, .. } | Message::Tool(ToolResultMessage { parts, .. }) => {
                parts.push(part)
            }
            Message::System { .. } | Message::Assistant(_) => {}
        }
        self
    }

    /// The text of this message (for a tool message, its result): without its parts.
    pub fn content(&self) -> &str {
        match self {
            Message::System { content } | Message::User { content, .. } => content,
            Message::Assistant(reply) => &reply.content,
            Message::Tool(result) => &result.content,
        }
    }

    /// The parts after the text: empty for system and assistant messages.
    pub fn parts(&self) -> &[Part] {
        match self {
            Message::User { parts, .. } | Message::Tool(ToolResultMessage { parts, .. }) => parts,
            Message::System { .. } | Message::Assistant(_) => &[],
        }
    }
}

impl From<AssistantMessage> for Message {
    fn from(reply: AssistantMessage) -> Self {
        Message::Assistant(reply)
    }
}

impl From<ToolResultMessage> for Message {
    fn from(result: ToolResultMessage) -> Self {
        Message::Tool(result)
    }
}

/// A reply of the model. Built with [`text`](Self::text), [`tool_calls`](Self::tool_calls) and the
/// `with_` methods: it grows fields as providers do.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AssistantMessage {
    /// The text the model wrote; empty when it only called tools.
    #[serde(default)]
    pub content: String,
    /// The tools the model asked to run, in the order it asked for them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// The model's reasoning before it answered, in the order it came; sent back to the provider
    /// that wrote it (see [`Reasoning`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasoning: Vec<Reasoning>,
}

impl AssistantMessage {
    /// A reply that is only text: the model's final answer.
    pub fn text(content: impl Into<String>) -> Self {
        AssistantMessage {
            content: content.into(),
            ..AssistantMessage::default()
        }
    }

    /// A reply that only calls tools.
    pub fn tool_calls(calls: impl IntoIterator<Item = ToolCall>) -> Self {
        AssistantMessage {
            tool_calls: calls.into_iter().collect(),
            ..AssistantMessage::default()
        }
    }

    /// Adds a tool call to this reply.
    pub fn with_tool_call(mut self, call: ToolCall) -> Self {
        self.tool_calls.push(call);
        self
    }

    /// Sets the reply's text.
    pub fn with_text(mut self, content: impl Into<String>) -> Self {
        self.content = content.into();
        self
    }

    /// Adds reasoning to this reply.
    pub fn with_reasoning(mut self, reasoning: Reasoning) -> Self {
        self.reasoning.push(reasoning);
        self
    }
}

/// A request of the model to run one tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The id the model gave this call; the result carries it back.
    pub id: String,
    /// The name of the tool to run.
    pub name: String,
    /// The arguments as the model wrote them: a JSON text, not yet parsed (it may not even be JSON).
    pub arguments: String,
    /// An opaque token the provider attached to the call and wants back with the history (Gemini's
    /// `thoughtSignature`); `None` for most providers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

impl ToolCall {
    /// A tool call with raw JSON arguments.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
            signature: None,
        }
    }
}

/// The result of one tool call, as the model sees it. Built with [`new`](Self::new),
/// [`error`](Self::error) and [`with_part`](Self::with_part).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolResultMessage {
    /// The id of the call this answers.
    pub tool_call_id: String,
    /// The result text, or the error text when `is_error` is set.
    pub content: String,
    /// What follows the text: images, documents, more text. Empty for a text result.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<Part>,
    /// Whether the call failed; the model is told so it can adjust.
    #[serde(default)]
    pub is_error: bool,
}

impl ToolResultMessage {
    /// A text result answering the call `tool_call_id`.
    pub fn new(tool_call_id: impl Into<String>, content: impl Into<String>) -> Self {
        ToolResultMessage {
            tool_call_id: tool_call_id.into(),
            content: content.into(),
            parts: Vec::new(),
            is_error: false,
        }
    }

    /// Adds a part after the result's text and parts.
    pub fn with_part(mut self, part: Part) -> Self {
        self.parts.push(part);
        self
    }

    /// An error result answering the call `tool_call_id`.
    pub fn error(tool_call_id: impl Into<String>, content: impl Into<String>) -> Self {
        ToolResultMessage {
            is_error: true,
            ..ToolResultMessage::new(tool_call_id, content)
        }
    }
}
