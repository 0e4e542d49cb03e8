//! The A2A 1.0 data model as it travels in JSON (the ProtoJSON form of `a2a.proto`): camelCase
//! keys, enums as their proto names (`TASK_STATE_COMPLETED`, `ROLE_AGENT`), a part's kind told by
//! which of `text`, `raw`, `url` or `data` it has, and a stream event's by which key holds it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A message between a client and an agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// Its id, the sender's.
    pub message_id: String,
    /// The conversation it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "context_id")]
    pub context_id: Option<String>,
    /// The task it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "task_id")]
    pub task_id: Option<String>,
    /// Who sent it.
    pub role: Role,
    /// What it says.
    #[serde(default)]
    pub parts: Vec<MessagePart>,
    /// Anything else the sender attaches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

impl Message {
    /// A message of the agent's with `parts`.
    pub fn agent(parts: Vec<MessagePart>) -> Self {
        Message {
            message_id: fresh(),
            context_id: None,
            task_id: None,
            role: Role::Agent,
            parts,
            metadata: None,
        }
    }

    /// A message of the user's with `parts`.
    pub fn user(parts: Vec<MessagePart>) -> Self {
        Message {
            role: Role::User,
            ..Message::agent(parts)
        }
    }

    /// Its text parts, joined by blank lines.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = (self.parts.iter())
            .filter_map(|part| part.text.as_deref())
            .collect();
        texts.join("\n\n")
    }
}

/// Who sent a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Role {
    /// The client, for its user.
    #[serde(rename = "ROLE_USER")]
    User,
    /// The agent.
    #[serde(rename = "ROLE_AGENT")]
    Agent,
}

/// One part of a message or an artifact: text, bytes (`raw`, base64), a URL, or JSON data, with
/// its file name and media type where it is a file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessagePart {
    /// Text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Bytes, base64-encoded (standard alphabet, padded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
    /// Where the bytes are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// JSON data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    /// The file's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    /// The media type (`text/plain`, `image/png`).
    #[serde(default, skip_serializing_if = "Option::is_none", alias = "media_type")]
    pub media_type: Option<String>,
    /// Anything else.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

impl MessagePart {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        MessagePart {
            text: Some(text.into()),
            ..MessagePart::default()
        }
    }

    /// A JSON data part.
    pub fn data(data: Value) -> Self {
        MessagePart {
            data: Some(data),
            ..MessagePart::default()
        }
    }

    /// A file part from its bytes (base64), its media type and its name.
    pub fn raw(base64: impl Into<String>, media_type: impl Into<String>) -> Self {
        MessagePart {
            raw: Some(base64.into()),
            media_type: Some(media_type.into()),
            ..MessagePart::default()
        }
    }

    /// A file part at a URL.
    pub fn url(url: impl Into<String>, media_type: impl Into<String>) -> Self {
        MessagePart {
            url: Some(url.into()),
            media_type: Some(media_type.into()),
            ..MessagePart::default()
        }
    }

    /// The part with a file name.
    pub fn named(mut self, filename: impl Into<String>) -> Self {
        self.filename = Some(filename.into());
        self
    }
}

/// A unit of work an agent does for a client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// Its id, the server's.
    pub id: String,
    /// The conversation it belongs to.
    pub context_id: String,
    /// Where it stands.
    pub status: TaskStatus,
    /// What it made.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<Artifact>,
    /// The messages exchanged on it, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<Message>,
    /// Anything else.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

/// Where a task stands: its state, the agent's message about it, and since when.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatus {
    /// The state.
    pub state: TaskState,
    /// The agent's message: its answer, or what it needs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    /// When it got there (RFC 3339, UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
}

/// A task's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TaskState {
    /// Received, not started.
    #[serde(rename = "TASK_STATE_SUBMITTED")]
    Submitted,
    /// Being worked on.
    #[serde(rename = "TASK_STATE_WORKING")]
    Working,
    /// Waiting for the client's answer (an approval, a result).
    #[serde(rename = "TASK_STATE_INPUT_REQUIRED")]
    InputRequired,
    /// Waiting for the client to sign in.
    #[serde(rename = "TASK_STATE_AUTH_REQUIRED")]
    AuthRequired,
    /// Done.
    #[serde(rename = "TASK_STATE_COMPLETED")]
    Completed,
    /// Ended by a failure.
    #[serde(rename = "TASK_STATE_FAILED")]
    Failed,
    /// Stopped by the client.
    #[serde(rename = "TASK_STATE_CANCELED")]
    Canceled,
    /// Refused by the agent.
    #[serde(rename = "TASK_STATE_REJECTED")]
    Rejected,
}

impl TaskState {
    /// Whether nothing more happens to a task in this state.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskState::Completed | TaskState::Failed | TaskState::Canceled | TaskState::Rejected
        )
    }

    /// Whether a task in this state waits for the client.
    pub fn is_interrupted(self) -> bool {
        matches!(self, TaskState::InputRequired | TaskState::AuthRequired)
    }
}

/// Something a task made: an answer, a file, data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    /// Its id within the task.
    pub artifact_id: String,
    /// Its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its content.
    pub parts: Vec<MessagePart>,
    /// Anything else.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

impl Artifact {
    /// An artifact of `parts`, with a fresh id.
    pub fn new(parts: Vec<MessagePart>) -> Self {
        Artifact {
            artifact_id: fresh(),
            name: None,
            description: None,
            parts,
            metadata: None,
        }
    }

    /// The artifact with a name.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// A task's state changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusUpdate {
    /// The task.
    pub task_id: String,
    /// Its conversation.
    pub context_id: String,
    /// Where it stands now.
    pub status: TaskStatus,
}

/// A task made or added to an artifact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactUpdate {
    /// The task.
    pub task_id: String,
    /// Its conversation.
    pub context_id: String,
    /// The artifact, or the parts added to it.
    pub artifact: Artifact,
    /// Whether the parts add to an artifact sent before (same id).
    #[serde(default, skip_serializing_if = "is_false")]
    pub append: bool,
    /// Whether this is the artifact's last piece.
    #[serde(default, skip_serializing_if = "is_false")]
    pub last_chunk: bool,
}

fn is_false(value: &bool) -> bool {
    !value
}

/// One event of a stream: the task as it is, a message, or a change to the task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StreamEvent {
    /// The task as it is.
    Task(Task),
    /// A message in answer (no task).
    Message(Message),
    /// The task's state changed.
    StatusUpdate(StatusUpdate),
    /// The task made or added to an artifact.
    ArtifactUpdate(ArtifactUpdate),
}

/// What an agent card says of one thing the agent can do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Skill {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Words to find it by.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Requests it answers well.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
}

/// How and where an agent is reached.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentInterface {
    /// The endpoint.
    pub url: String,
    /// The protocol binding: `JSONRPC`.
    pub protocol_binding: String,
    /// The protocol version: `1.0`.
    pub protocol_version: String,
}

/// What an agent has beyond the basics.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Capabilities {
    /// It streams (`SendStreamingMessage`, `SubscribeToTask`).
    #[serde(default)]
    pub streaming: bool,
    /// It pushes task updates to webhooks.
    #[serde(default)]
    pub push_notifications: bool,
}

/// An agent's card: who it is, what it can do, how to reach it (served at
/// `/.well-known/agent-card.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCard {
    /// Its name.
    pub name: String,
    /// What it is for.
    pub description: String,
    /// Where and how it is reached.
    pub supported_interfaces: Vec<AgentInterface>,
    /// Its version.
    pub version: String,
    /// What it has beyond the basics.
    pub capabilities: Capabilities,
    /// How callers prove who they are, by name (OpenAPI security schemes, as A2A words them).
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub security_schemes: serde_json::Map<String, Value>,
    /// Which schemes a call needs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub security_requirements: Vec<Value>,
    /// The media types it reads.
    pub default_input_modes: Vec<String>,
    /// The media types it answers in.
    pub default_output_modes: Vec<String>,
    /// What it can do.
    pub skills: Vec<Skill>,
}

/// A fresh id: 128 random bits.
pub(crate) fn fresh() -> String {
    agent_core::RunId::new().to_string()
}

/// Now, as A2A writes times: RFC 3339 in UTC, ending in `Z`.
pub(crate) fn now() -> String {
    let now = time::OffsetDateTime::now_utc();
    now.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parts_events_and_states_are_written_as_protojson() {
        let event = StreamEvent::StatusUpdate(StatusUpdate {
            task_id: "t".into(),
            context_id: "c".into(),
            status: TaskStatus {
                state: TaskState::InputRequired,
                message: None,
                timestamp: None,
            },
        });
        assert_eq!(
            serde_json::to_value(&event).unwrap(),
            json!({"statusUpdate": {"taskId": "t", "contextId": "c",
                "status": {"state": "TASK_STATE_INPUT_REQUIRED"}}})
        );
        let part = MessagePart::raw("dGNr", "text/plain").named("output.txt");
        assert_eq!(
            serde_json::to_value(&part).unwrap(),
            json!({"raw": "dGNr", "filename": "output.txt", "mediaType": "text/plain"})
        );
        let message: Message = serde_json::from_value(json!({"messageId": "m",
            "role": "ROLE_USER", "parts": [{"text": "hi"}], "task_id": "t"}))
        .unwrap();
        assert_eq!(message.task_id.as_deref(), Some("t"));
        assert_eq!(message.text(), "hi");
    }

    #[test]
    fn times_are_utc_with_a_z() {
        let now = now();
        assert!(now.ends_with('Z'), "{now}");
        assert_eq!(&now[4..5], "-");
    }
}
