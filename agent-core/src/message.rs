//! The conversation: what the agent sends to the model and what it gets back.
//!
//! Every type here is `Serialize + Deserialize`, so a transcript can be saved and a run resumed later.

use serde::{Deserialize, Serialize};

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
    /// What the user said.
    User {
        /// The user's words.
        content: String,
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
        }
    }

    /// The text of this message (for a tool message, its result).
    pub fn content(&self) -> &str {
        match self {
            Message::System { content } | Message::User { content } => content,
            Message::Assistant(reply) => &reply.content,
            Message::Tool(result) => &result.content,
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

/// A reply of the model.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AssistantMessage {
    /// The text the model wrote; empty when it only called tools.
    #[serde(default)]
    pub content: String,
    /// The tools the model asked to run, in the order it asked for them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
}

impl AssistantMessage {
    /// A reply that is only text: the model's final answer.
    pub fn text(content: impl Into<String>) -> Self {
        AssistantMessage {
            content: content.into(),
            tool_calls: Vec::new(),
        }
    }

    /// A reply that only calls tools.
    pub fn tool_calls(calls: impl IntoIterator<Item = ToolCall>) -> Self {
        AssistantMessage {
            content: String::new(),
            tool_calls: calls.into_iter().collect(),
        }
    }

    /// Adds a tool call to this reply.
    pub fn with_tool_call(mut self, call: ToolCall) -> Self {
        self.tool_calls.push(call);
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

/// The result of one tool call, as the model sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolResultMessage {
    /// The id of the call this answers.
    pub tool_call_id: String,
    /// The result text, or the error text when `is_error` is set.
    pub content: String,
    /// Whether the call failed; the model is told so it can adjust.
    #[serde(default)]
    pub is_error: bool,
}

/// Tokens used by model calls, as the provider reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens sent to the model (the prompt, the history and the tool definitions).
    pub input_tokens: u64,
    /// Tokens the model generated.
    pub output_tokens: u64,
}

impl Usage {
    /// Input and output tokens together.
    pub fn total_tokens(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }
}

impl std::ops::Add for Usage {
    type Output = Usage;

    fn add(self, other: Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens + other.input_tokens,
            output_tokens: self.output_tokens + other.output_tokens,
        }
    }
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        *self = *self + other;
    }
}
