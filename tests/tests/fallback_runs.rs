//! Runs of a model fallback chain over real HTTP (each vendor's adapter pointed at a loopback
//! server speaking its wire format): each vendor gets its own settings, and runs say which model
//! answered each step, streamed, paused and resumed, journaled, and kept in a session alike.

use std::sync::Arc;
use std::time::Duration;

use agent_core::testing::ScriptedModel;
use agent_core::{
    Agent, AssistantMessage, ChatResponse, Decision, Fallback, ModelError, ModelSettings, RunError,
    RunEvent, StopReason, ToolCall, ToolChoice, agent, tool,
};
use futures_util::StreamExt;
use serde_json::{Value, json};
use tests::http::{
    always, event_stream_reply, first_then_always, fixture, json_reply, quick_retries, received,
    request_bodies,
};
use tests::vendors::{CLAUDE_ANSWERED, OPENAI_ANSWERED, claude_at, openai_at};
use tests::{get_weather, streamed_output, streamed_text};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer};

#[tokio::test]
async fn each_vendor_gets_its_own_settings_over_the_runs() {
    let primary = always(json_reply(
        503,
        r#"{"error":{"message":"Service Unavailable"}}"#,
    ))
    .await;
    let backup = always(json_reply(200, &fixture("anthropic", "answer.json"))).await;
    let chain = Fallback::new(openai_at(&primary.uri(), quick_retries().max_retries(0))).then_with(
        claude_at(&backup.uri()),
        ModelSettings::new()
            .temperature(0.2)
            .max_tokens(2048)
            // The run's tool choice wins over a model's own.
            .tool_choice(ToolChoice::None),
    );
    let agent = agent!(chain, get_weather)
        .temperature(0.9)
        .max_tokens(300)
        .tool_choice(ToolChoice::Required);
    let output = agent.run("Do I need an umbrella?").await.unwrap();
    assert_eq!(
        output.text,
        "Yes: light rain and 18°C in Beijing. Take an umbrella."
    );

    // The first model got the run's settings in OpenAI's words...
    let sent: Vec<Value> = request_bodies(&primary).await;
    assert_eq!(sent[0]["model"], "gpt-4o-mini");
    assert_eq!(
        sent[0]["temperature"].as_f64().map(|t| (t * 10.0).round()),
        Some(9.0)
    );
    assert_eq!(sent[0]["max_completion_tokens"], 300);
    assert_eq!(sent[0]["tool_choice"], "required");
    // ...the second its own over them, in Anthropic's, with the same conversation and tools.
    let sent: Vec<Value> = request_bodies(&backup).await;
    assert_eq!(sent.len(), 1);
    let body = &sent[0];
    assert_eq!(body["model"], "claude-sonnet-4-5");
    assert_eq!(
        body["temperature"].as_f64().map(|t| (t * 10.0).round()),
        Some(2.0)
    );
    assert_eq!(body["max_tokens"], 2048);
    assert_eq!(body["tool_choice"]["type"], "any");
    assert_eq!(body["tools"][0]["name"], "get_weather");
    assert_eq!(
        body["messages"][0]["content"][0]["text"],
        "Do I need an umbrella?"
    );
}

#[tokio::test]
async fn the_run_says_which_model_answered_each_step() {
    // OpenAI answers the first step, then goes down: Anthropic answers the second.
    let primary = first_then_always(
        vec![json_reply(200, &fixture("openai", "weather_call.json"))],
        json_reply(503, r#"{"error":{"message":"Service Unavailable"}}"#),
    )
    .await;
    let backup = always(json_reply(200, &fixture("anthropic", "answer.json"))).await;
    let chain = Fallback::new(openai_at(&primary.uri(), quick_retries().max_retries(1)))
        .then(claude_at(&backup.uri()));
    let output = agent!(chain, get_weather)
        .run("Do I need an umbrella in Beijing?")
        .await
        .unwrap();
    assert_eq!(output.steps, 2);
    assert_eq!(
        output.step_models,
        [
            Some(OPENAI_ANSWERED.to_owned()),
            Some(CLAUDE_ANSWERED.to_owned())
        ]
    );
    assert_eq!(output.step_model(1), Some(CLAUDE_ANSWERED));
    assert_eq!(output.step_usage[1].input_tokens, 790, "the backup's usage");
    // 1 answer, then a 503 and its retry.
    assert_eq!(received(&primary).await.len(), 3);
}

#[tokio::test]
async fn a_streamed_run_says_which_model_answered_each_step() {
    let primary = always(json_reply(
        429,
        &fixture("openai", "error_insufficient_quota.json"),
    ))
    .await;
    let backup = always(event_stream_reply(fixture(
        "anthropic",
        "stream_answer.sse",
    )))
    .await;
    let chain =
        Fallback::new(openai_at(&primary.uri(), quick_retries())).then(claude_at(&backup.uri()));
    let events: Vec<RunEvent> = Agent::new(chain).run("北京天气？").stream().collect().await;
    assert_eq!(streamed_text(&events), "北京今天有小雨，记得带伞。");
    let output = streamed_output(&events);
    assert_eq!(output.step_models, [Some(CLAUDE_ANSWERED.to_owned())]);
    // The step's end names it too, as it happens.
    let step_models: Vec<(usize, Option<&str>)> = events
        .iter()
        .filter_map(|event| match event {
            RunEvent::StepFinished { step, model, .. } => Some((*step, model.as_deref())),
            _ => None,
        })
        .collect();
    assert_eq!(step_models, [(1, Some(CLAUDE_ANSWERED))]);
}

#[tokio::test]
async fn with_a_cooldown_a_failed_model_is_not_asked_again_at_once() {
    for cooldown in [None, Some(Duration::from_secs(60))] {
        let primary = always(json_reply(
            503,
            r#"{"error":{"message":"Service Unavailable"}}"#,
        ))
        .await;
        let backup = MockServer::start().await;
        for (index, name) in ["tool_use.json", "answer.json"].into_iter().enumerate() {
            Mock::given(method("POST"))
                .respond_with(json_reply(200, &fixture("anthropic", name)))
                .up_to_n_times(1)
                .with_priority(u8::try_from(index + 1).unwrap())
                .mount(&backup)
                .await;
        }
        let mut chain = Fallback::new(openai_at(&primary.uri(), quick_retries().max_retries(1)))
            .then(claude_at(&backup.uri()));
        if let Some(period) = cooldown {
            chain = chain.cooldown(period);
        }
        let output = agent!(chain, get_weather).run("Beijing?").await.unwrap();
        assert_eq!(output.steps, 2);
        assert_eq!(
            output.step_models,
            [
                Some(CLAUDE_ANSWERED.to_owned()),
                Some(CLAUDE_ANSWERED.to_owned())
            ]
        );
        // Each step waits out the primary's retry; with a cooldown, only the first.
        let expected = if cooldown.is_some() { 2 } else { 4 };
        assert_eq!(received(&primary).await.len(), expected, "{cooldown:?}");
    }
}

/// Deletes a file.
#[tool(requires_approval, destructive)]
fn delete_file(
    /// The file's path.
    path: String,
) -> String {
    format!("deleted {path}")
}

#[tokio::test]
async fn a_paused_run_keeps_its_models_through_its_saved_form() {
    let primary = ScriptedModel::new([ChatResponse::new(AssistantMessage::tool_calls([
        ToolCall::new("c1", "delete_file", r#"{"path":"old.log"}"#),
    ]))
    .with_model("first-1")]);
    let backup = ScriptedModel::new([
        ChatResponse::new(AssistantMessage::text("Deleted.")).with_model("second-1")
    ]);
    // The first model answers the first step, and has nothing more (an error no retry fixes).
    let chain = Arc::new(
        Fallback::new(primary)
            .then(backup)
            .fall_back_when(|error| matches!(error, ModelError::Other(_))),
    );
    let agent = Agent::new(Arc::clone(&chain))
        .try_tool(delete_file {})
        .unwrap()
        .defer_approvals();
    let first = agent.run("Delete old.log").await.unwrap();
    assert_eq!(first.stop_reason, StopReason::Paused);
    assert_eq!(first.step_models, [Some("first-1".to_owned())]);
    let saved = first.paused.unwrap().to_json();

    let paused = agent_core::PausedRun::from_json(&saved).unwrap();
    let resumed = agent
        .resume(paused, [("c1", Decision::Approve)])
        .await
        .unwrap();
    assert_eq!(resumed.text, "Deleted.");
    assert_eq!(
        resumed.step_models,
        [Some("first-1".to_owned()), Some("second-1".to_owned())]
    );
}

#[tokio::test]
async fn the_answering_model_is_part_of_the_journaled_reply() {
    // A durable run journals the model call's reply as JSON and replays it from there.
    let reply =
        ChatResponse::new(AssistantMessage::text("Take an umbrella.")).with_model(CLAUDE_ANSWERED);
    let journaled = serde_json::to_value(&reply).unwrap();
    assert_eq!(journaled["model"], CLAUDE_ANSWERED);
    let replayed: ChatResponse = serde_json::from_value(journaled).unwrap();
    assert_eq!(replayed, reply);
    // A reply journaled before replies named their model replays without one.
    let older: ChatResponse = serde_json::from_value(json!({
        "message": {"content": "Take an umbrella."},
        "usage": {"input_tokens": 1, "output_tokens": 2},
        "finish_reason": "stop"
    }))
    .unwrap();
    assert_eq!(older.model, None);
    // A model that names none keeps the form as it was.
    let unnamed = serde_json::to_value(ChatResponse::new(AssistantMessage::text("ok"))).unwrap();
    assert!(unnamed.get("model").is_none(), "{unnamed}");
}

#[tokio::test]
async fn scripted_models_without_names_keep_no_list() {
    let chain = Fallback::new(ScriptedModel::new([AssistantMessage::text("hi")]));
    let output = Agent::new(chain).run("hello").await.unwrap();
    assert!(output.step_models.is_empty());
    assert_eq!(output.step_model(0), None);
}

/// A chain whose every model refuses the request as it is (a part none can take) leaves a
/// session's conversation as it was, as one model's refusal does: the next message is answered,
/// and the refused one is neither kept nor sent again.
#[tokio::test]
async fn a_chain_that_refuses_a_part_leaves_the_session_as_it_was() {
    use agent_core::session::{MemorySessions, SessionStore};
    use agent_core::testing::ScriptStep;

    let refusal = |service: &'static str| {
        ScriptStep::error(move || ModelError::Unsupported {
            message: format!("{service} cannot take a PDF by URL"),
        })
    };
    let first = ScriptedModel::from_steps([
        refusal("the first service"),
        AssistantMessage::text("Hello again.").into(),
    ]);
    let second = ScriptedModel::from_steps([refusal("the second service")]);
    let agent = Agent::new(Fallback::new(first.clone()).then(second.clone()));
    let store = MemorySessions::new();

    let pdf = agent_core::Part::document_url("https://example.com/a.pdf");
    let refused = agent
        .run("read this PDF")
        .parts([pdf])
        .session(&store, "chat")
        .await;
    let Err(RunError::Model { source, .. }) = &refused else {
        panic!("{refused:?}")
    };
    assert!(matches!(source, ModelError::AllFailed { .. }), "{source:?}");
    assert!(source.is_refusal());
    assert!(store.load("chat").await.unwrap().messages.is_empty());

    let output = agent.run("hello").session(&store, "chat").await.unwrap();
    assert_eq!(output.text, "Hello again.");
    let seen = &first.requests()[1].messages;
    assert!(
        !seen
            .iter()
            .any(|message| message.content() == "read this PDF"),
        "{seen:?}"
    );
    let kept = store.load("chat").await.unwrap().messages;
    assert_eq!(kept.len(), 3, "{kept:?}");
}
