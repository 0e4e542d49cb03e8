//! Saved conversations: a transcript written before messages had parts and reasoning still loads,
//! and one with images, documents, tool-result parts and reasoning goes to JSON and back unchanged.

use agent_core::{AssistantMessage, Media, Message, Part, Reasoning, ToolCall, ToolResultMessage};
use serde_json::json;

#[test]
fn a_transcript_saved_before_parts_existed_still_loads() {
    let saved = json!([
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "Weather in Beijing?"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_1", "name": "get_weather", "arguments": "{\"city\":\"Beijing\"}"}
        ]},
        {"role": "tool", "tool_call_id": "call_1", "content": "Light rain", "is_error": false},
        {"role": "assistant", "content": "Take an umbrella."}
    ]);
    let messages: Vec<Message> = serde_json::from_value(saved.clone()).unwrap();
    assert_eq!(
        messages,
        vec![
            Message::system("Answer briefly."),
            Message::user("Weather in Beijing?"),
            Message::Assistant(AssistantMessage::tool_calls([ToolCall::new(
                "call_1",
                "get_weather",
                r#"{"city":"Beijing"}"#
            )])),
            Message::Tool(ToolResultMessage::new("call_1", "Light rain")),
            Message::Assistant(AssistantMessage::text("Take an umbrella.")),
        ]
    );
    // Plain text writes the same JSON as before: nothing new appears.
    assert_eq!(serde_json::to_value(&messages).unwrap(), saved);
}

#[test]
fn a_transcript_with_parts_and_reasoning_goes_to_json_and_back() {
    let messages = vec![
        Message::user("What is wrong in this screenshot?")
            .with_part(Part::image("image/png", [0x89, b'P', b'N', b'G']))
            .with_part(Part::text("And in the log:"))
            .with_part(Part::Document(
                Media::url("text/plain", "https://example.com/app.log").with_name("app.log"),
            )),
        Message::Assistant(
            AssistantMessage::tool_calls([ToolCall::new("toolu_1", "screenshot", "{}")])
                .with_reasoning(
                    Reasoning::new("anthropic", "I should look again.").with_signature("EqQBCg"),
                )
                .with_reasoning(Reasoning::new("anthropic", "").with_encrypted("redacted-data")),
        ),
        Message::Tool(
            ToolResultMessage::new("toolu_1", "Now:")
                .with_part(Part::image("image/jpeg", b"\xff\xd8\xff")),
        ),
        Message::Assistant(
            AssistantMessage::text("The button is off screen.").with_reasoning(
                Reasoning::new("openai_responses", "Summary.")
                    .with_id("rs_1")
                    .with_encrypted("gAAAA"),
            ),
        ),
    ];
    let json = serde_json::to_string(&messages).unwrap();
    let loaded: Vec<Message> = serde_json::from_str(&json).unwrap();
    assert_eq!(loaded, messages);
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        value[0]["parts"][0],
        json!({"type": "image", "media_type": "image/png", "source": {"base64": "iVBORw=="}})
    );
    assert_eq!(
        value[1]["reasoning"][0],
        json!({"provider": "anthropic", "text": "I should look again.", "signature": "EqQBCg"})
    );
}

#[test]
fn bad_parts_are_refused_saying_what_is_wrong() {
    let broken = json!([
        {"role": "user", "content": "hi", "parts": [{"type": "image", "media_type": "image/png"}]}
    ]);
    let error = serde_json::from_value::<Vec<Message>>(broken).unwrap_err();
    assert!(
        error.to_string().contains("missing field `source`"),
        "{error}"
    );
    let unknown = json!({"role": "user", "content": "hi", "parts": [{"type": "hologram"}]});
    let error = serde_json::from_value::<Message>(unknown).unwrap_err();
    assert!(error.to_string().contains("hologram"), "{error}");
}
