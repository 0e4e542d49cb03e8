//! The run is traced: spans for the run, each step, each model call and each tool call, with
//! OpenTelemetry GenAI field names; arguments and results only at debug level.

use std::sync::{Arc, Mutex};

use agent_core::{ChatResponse, Usage, agent};
use tests::{call, get_weather};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

/// Field names and their values, as text.
type FieldList = Vec<(String, String)>;

#[derive(Clone, Default)]
struct Captured {
    spans: Arc<Mutex<Vec<(String, FieldList)>>>,
    events: Arc<Mutex<Vec<(Level, FieldList)>>>,
}

struct Fields(FieldList);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push((field.name().to_owned(), format!("{value:?}")));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push((field.name().to_owned(), value.to_owned()));
    }
}

/// Keeps each span's fields (at creation and recorded later) and each event.
struct Capture(Captured);

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Capture {
    fn on_new_span(&self, attributes: &Attributes<'_>, id: &Id, _context: Context<'_, S>) {
        let mut fields = Fields(Vec::new());
        attributes.record(&mut fields);
        let mut spans = self.0.spans.lock().unwrap();
        spans.push((attributes.metadata().name().to_owned(), fields.0));
        let _ = id;
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, context: Context<'_, S>) {
        let Some(span) = context.span(id) else { return };
        let mut fields = Fields(Vec::new());
        values.record(&mut fields);
        let mut spans = self.0.spans.lock().unwrap();
        if let Some(entry) = spans.iter_mut().rev().find(|(name, _)| name == span.name()) {
            entry.1.extend(fields.0);
        }
    }

    fn on_event(&self, event: &Event<'_>, _context: Context<'_, S>) {
        let mut fields = Fields(Vec::new());
        event.record(&mut fields);
        self.0
            .events
            .lock()
            .unwrap()
            .push((*event.metadata().level(), fields.0));
    }
}

/// A model that calls `get_weather` once, then answers, reporting usage.
struct Weatherman;

impl agent_core::Model for Weatherman {
    fn chat<'a>(
        &'a self,
        request: agent_core::ChatRequest<'a>,
    ) -> agent_core::BoxFuture<'a, Result<ChatResponse, agent_core::ModelError>> {
        let reply = if request.messages.len() < 3 {
            agent_core::AssistantMessage::tool_calls([call(7, "get_weather", r#"{"city":"北京"}"#)])
        } else {
            agent_core::AssistantMessage::text("rain")
        };
        Box::pin(async move {
            Ok(ChatResponse::new(reply)
                .with_usage(Usage::new(50, 5))
                .with_model("weatherman-1"))
        })
    }
}

fn field<'a>(fields: &'a [(String, String)], name: &str) -> Option<&'a str> {
    fields
        .iter()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.as_str())
}

#[tokio::test]
async fn runs_steps_model_calls_and_tool_calls_are_spans() {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::registry().with(Capture(captured.clone()));
    let _guard = tracing::subscriber::set_default(subscriber);

    let output = agent!(Weatherman, get_weather)
        .run("weather?")
        .await
        .unwrap();
    assert!(output.is_finished());

    let spans = captured.spans.lock().unwrap().clone();
    let names: Vec<&str> = spans.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        names,
        [
            "invoke_agent",
            "step",
            "chat",
            "execute_tool",
            "step",
            "chat"
        ]
    );

    let run = &spans[0].1;
    assert_eq!(field(run, "gen_ai.operation.name"), Some("invoke_agent"));
    assert_eq!(field(run, "gen_ai.usage.input_tokens"), Some("100"));
    assert_eq!(field(run, "gen_ai.usage.output_tokens"), Some("10"));
    assert_eq!(field(run, "agent.steps"), Some("2"));
    assert_eq!(field(run, "agent.stop_reason"), Some("Finished"));
    assert_eq!(field(&spans[1].1, "agent.step"), Some("1"));
    assert_eq!(field(&spans[2].1, "gen_ai.operation.name"), Some("chat"));
    assert_eq!(field(&spans[2].1, "gen_ai.usage.input_tokens"), Some("50"));
    assert_eq!(
        field(&spans[2].1, "gen_ai.response.model"),
        Some("weatherman-1")
    );
    let tool = &spans[3].1;
    assert_eq!(field(tool, "gen_ai.operation.name"), Some("execute_tool"));
    assert_eq!(field(tool, "gen_ai.tool.name"), Some("get_weather"));
    assert_eq!(field(tool, "gen_ai.tool.call.id"), Some("call_7"));
    assert_eq!(field(tool, "error.type"), None);

    // Arguments and results may hold user data: never in spans, and only in debug events.
    let all_span_text = format!("{spans:?}");
    assert!(!all_span_text.contains("北京"), "{all_span_text}");
    let events = captured.events.lock().unwrap().clone();
    for (level, fields) in &events {
        let text = format!("{fields:?}");
        if text.contains("北京") {
            assert!(
                matches!(*level, Level::DEBUG | Level::TRACE),
                "{level} {text}"
            );
        }
    }
    assert!(events.iter().any(|(level, fields)| *level == Level::DEBUG && format!("{fields:?}").contains("北京")));
}

#[tokio::test]
async fn a_failed_tool_call_and_a_run_that_fails_say_so_in_their_spans() {
    let captured = Captured::default();
    let subscriber = tracing_subscriber::registry().with(Capture(captured.clone()));
    let _guard = tracing::subscriber::set_default(subscriber);

    // The model asks for a tool there is none of, then fails.
    let model = agent_core::testing::ScriptedModel::new([
        agent_core::AssistantMessage::tool_calls([call(1, "get_wether", r#"{"city":"北京"}"#)]),
    ]);
    let error = agent!(model, get_weather)
        .run("weather?")
        .await
        .unwrap_err();

    let spans = captured.spans.lock().unwrap().clone();
    let tool = spans
        .iter()
        .find(|(name, _)| name == "execute_tool")
        .map(|(_, fields)| fields)
        .unwrap();
    assert_eq!(field(tool, "gen_ai.tool.name"), Some("get_wether"));
    assert_eq!(field(tool, "error.type"), Some("tool_error"));
    let run = &spans[0].1;
    assert_eq!(
        field(run, "agent.stop_reason"),
        Some(error.to_string().as_str())
    );
}

#[tokio::test]
async fn calls_served_over_mcp_are_tool_spans_too() {
    use agent_core::{RunId, Tool, ToolCall, ToolSet, tools};
    use agent_mcp::{McpClient, McpServer};

    let captured = Captured::default();
    let subscriber = tracing_subscriber::registry().with(Capture(captured.clone()));
    let _guard = tracing::subscriber::set_default(subscriber);

    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    let served: ToolSet = tools!(get_weather, tests::refuse);
    let (read, write) = tokio::io::split(server_end);
    tokio::spawn(McpServer::new(served).serve_io(read, write));
    let (read, write) = tokio::io::split(client_end);
    let client = McpClient::connect_io(read, write).await.unwrap();
    for tool in client.tools().await.unwrap() {
        let call = ToolCall::new("1", "", r#"{"city":"北京"}"#);
        let _ = Tool::<()>::call(&tool, &(), &call, &agent_core::RunScope::new(RunId::new())).await;
    }

    let spans = captured.spans.lock().unwrap().clone();
    let served: Vec<&FieldList> = spans
        .iter()
        .filter(|(name, fields)| {
            name == "execute_tool" && field(fields, "mcp.method.name").is_some()
        })
        .map(|(_, fields)| fields)
        .collect();
    assert_eq!(served.len(), 2, "{spans:?}");
    assert_eq!(field(served[0], "gen_ai.tool.name"), Some("get_weather"));
    assert_eq!(field(served[0], "mcp.method.name"), Some("tools/call"));
    assert_eq!(field(served[0], "error.type"), None);
    assert_eq!(field(served[1], "gen_ai.tool.name"), Some("refuse"));
    assert_eq!(field(served[1], "error.type"), Some("tool_error"));
}

#[tokio::test]
async fn each_guard_check_is_a_span_with_its_guard_place_and_verdict() {
    use agent_core::guard::{At, Verdict, What, guard_fn};

    let captured = Captured::default();
    let subscriber = tracing_subscriber::registry().with(Capture(captured.clone()));
    let _guard = tracing::subscriber::set_default(subscriber);

    let agent = agent!(Weatherman, get_weather).guard(
        At::CALLS | At::ANSWER,
        guard_fn("weather only", |checked| match &checked.what {
            What::Answer { .. } => Verdict::Rewrite("rain, take an umbrella".into()),
            _ => Verdict::Allow,
        }),
    );
    let output = agent.run("weather?").await.unwrap();
    assert_eq!(output.text, "rain, take an umbrella");

    let spans = captured.spans.lock().unwrap().clone();
    let checks: Vec<(Option<&str>, Option<&str>, Option<&str>)> = spans
        .iter()
        .filter(|(name, _)| name == "guard")
        .map(|(_, fields)| {
            let (name, place) = (field(fields, "guard.name"), field(fields, "guard.place"));
            (name, place, field(fields, "guard.verdict"))
        })
        .collect();
    assert_eq!(
        checks,
        [
            (Some("weather only"), Some("call"), Some("allow")),
            (Some("weather only"), Some("answer"), Some("rewrite")),
        ]
    );
    // Each check sits in its step's span, and the tool's span follows its call's check.
    let names: Vec<&str> = spans.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        names,
        [
            "invoke_agent",
            "step",
            "chat",
            "guard",
            "execute_tool",
            "step",
            "chat",
            "guard"
        ]
    );
}
