//! One way into a run: every setting of a `RunRequest` works with every other. A streamed,
//! cancellable session run with an image, a context and a typed output, end to end.

use std::sync::Arc;
use std::time::Duration;

use agent_core::session::{MemorySessions, SessionStore};
use agent_core::testing::ScriptedModel;
use agent_core::{
    Agent, AssistantMessage, Effort, Input, Message, ModelSettings, Part, RunError, RunEvent,
    State, StopReason, Thinking, ToolCall, ToolChoice, agent, tool,
};
use futures_util::StreamExt;
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Clone)]
struct UserId(u64);

/// Who is asking.
#[tool]
async fn whoami(State(user): State<UserId>) -> String {
    format!("user {}", user.0)
}

/// Takes an hour.
#[tool]
async fn slow() -> String {
    tokio::time::sleep(Duration::from_secs(3600)).await;
    "never".to_owned()
}

/// What the picture shows.
#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
struct Caption {
    text: String,
    user: u64,
}

const PNG: &[u8] = &[0x89, b'P', b'N', b'G', 13, 10, 26, 10];

fn model(second: ToolCall) -> ScriptedModel {
    ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new("c1", "whoami", "{}")]),
        AssistantMessage::tool_calls([second]),
    ])
}

#[tokio::test]
async fn a_streamed_cancellable_session_run_with_an_image_context_and_typed_output() {
    let model = model(ToolCall::new(
        "c2",
        "final_result",
        r#"{"text": "a cat", "user": 7}"#,
    ));
    let agent: Agent<UserId> = agent!(model.clone(), whoami, slow);
    let store = MemorySessions::new();
    let (_keep, never) = tokio::sync::oneshot::channel::<()>();
    let mut stream = agent
        .run("What is in this picture?")
        .context(&UserId(7))
        .parts([Part::image("image/png", PNG)])
        .session(&store, "album")
        .until(async move {
            let _ = never.await;
        })
        .temperature(0.0)
        .output::<Caption>()
        .stream();
    let mut results = Vec::new();
    let mut finished = None;
    while let Some(event) = stream.next().await {
        match event {
            RunEvent::ToolResult(result) => results.push(result.content),
            RunEvent::Finished(outcome) => finished = Some(outcome),
            _ => {}
        }
    }
    drop(stream);
    let typed = finished
        .expect("the stream ends with the run's end")
        .unwrap();
    assert_eq!(
        typed.value,
        Caption {
            text: "a cat".into(),
            user: 7
        }
    );
    assert_eq!(results[0], "user 7", "the tool saw the run's context");
    // The model was sent the image, with the temperature.
    let first = &model.requests()[0];
    assert_eq!(first.settings.temperature, Some(0.0));
    let Some(Message::User { parts, .. }) = first.messages.last() else {
        panic!("the question is last: {:?}", first.messages);
    };
    assert_eq!(parts, &[Part::image("image/png", PNG)]);
    // The session holds the whole run, the image included.
    let stored = store.load("album").await.unwrap();
    assert_eq!(stored.messages, typed.run.messages);
    assert!(matches!(
        &stored.messages[1],
        Message::User { parts, .. } if parts.len() == 1
    ));
}

#[tokio::test]
async fn the_same_run_cancelled_mid_tool_keeps_its_transcript_in_the_session() {
    let model = model(ToolCall::new("c2", "slow", "{}"));
    let agent: Agent<UserId> = agent!(model, whoami, slow);
    let store: Arc<dyn SessionStore> = Arc::new(MemorySessions::new());
    let mut stream = agent
        .run("What is in this picture?")
        .context(&UserId(7))
        .parts([Part::image("image/png", PNG)])
        .session(&*store, "album")
        .until(tokio::time::sleep(Duration::from_millis(200)))
        .output::<Caption>()
        .stream();
    let mut finished = None;
    while let Some(event) = stream.next().await {
        if let RunEvent::Finished(outcome) = event {
            finished = Some(outcome);
        }
    }
    drop(stream);
    let error = finished.expect("the stream ends").unwrap_err();
    let RunError::NoOutput {
        stop_reason,
        messages,
        ..
    } = &error
    else {
        panic!("a cancelled typed run has no output: {error:?}");
    };
    assert_eq!(*stop_reason, StopReason::Cancelled);
    let stored = store.load("album").await.unwrap();
    assert_eq!(
        &stored.messages, messages,
        "the session keeps what the run did"
    );
    let contents: Vec<&str> = stored.messages.iter().map(Message::content).collect();
    assert!(contents.contains(&"user 7"), "{contents:?}");
    assert_eq!(
        contents.last(),
        Some(
            &"Error: the call was interrupted when the run was cancelled: it had started and may \
              have had its effect, so check before calling it again"
        )
    );
}

#[tokio::test]
async fn a_run_goes_on_with_its_history_as_it_is() {
    let model = ScriptedModel::new([AssistantMessage::text("Still here.")]);
    let agent = Agent::new(model.clone());
    let history = vec![
        Message::system("Be brief."),
        Message::user("Are you there?"),
    ];
    let out = agent
        .run(Input::nothing())
        .history(history.clone())
        .await
        .unwrap();
    assert_eq!(out.text, "Still here.");
    assert_eq!(model.requests()[0].messages, history, "nothing was added");
}

/// The same model settings, in the same order, on an agent or on a run.
macro_rules! set_up {
    ($target:expr) => {
        $target
            .temperature(0.9)
            .model_settings(ModelSettings::new().temperature(0.2).max_tokens(100))
            .model_settings(ModelSettings::new().tool_choice(ToolChoice::None))
            .max_tokens(50)
            .thinking(Thinking::Budget(1024))
            .model_settings(ModelSettings::new())
    };
}

#[tokio::test]
async fn model_settings_merge_the_same_way_on_the_agent_and_the_run() {
    let model = ScriptedModel::new(["one", "two", "three", "four"].map(AssistantMessage::text));
    // Each setting made replaces the one before; each left out keeps it.
    let expected = ModelSettings::new()
        .temperature(0.2)
        .max_tokens(50)
        .tool_choice(ToolChoice::None)
        .thinking(Thinking::Budget(1024));

    let on_the_agent: Agent = set_up!(Agent::new(model.clone()));
    let _ = on_the_agent.run("hi").await.unwrap();
    let plain: Agent = Agent::new(model.clone());
    let _ = set_up!(plain.run("hi")).await.unwrap();
    // A run's settings over its agent's: each one the run makes is the run's, the others the
    // agent's.
    let _ = on_the_agent
        .run("hi")
        .temperature(0.7)
        .model_settings(ModelSettings::new().max_tokens(10))
        .await
        .unwrap();
    // And an agent's shorthand is its `model_settings` of one setting.
    let shorthand: Agent = Agent::new(model.clone())
        .model_settings(expected.clone())
        .thinking(Thinking::Effort(Effort::Low));
    let _ = shorthand.run("hi").await.unwrap();

    let sent: Vec<ModelSettings> = model
        .requests()
        .into_iter()
        .map(|request| request.settings)
        .collect();
    assert_eq!(sent[0], expected);
    assert_eq!(sent[1], expected);
    assert_eq!(
        sent[2],
        expected.clone().temperature(0.7).max_tokens(10),
        "the run's over the agent's"
    );
    assert_eq!(sent[3], expected.thinking(Thinking::Effort(Effort::Low)));
}
