//! Reasoning over the services that speak OpenAI Chat Completions, against loopback servers that
//! speak each service's documented wire format: every piece of reasoning says which service wrote
//! it and goes back to that service only (DeepSeek's `reasoning_content` is not OpenRouter's to
//! read); OpenRouter's `reasoning_details` (Claude's signed thinking, redacted thinking, an OpenAI
//! model's summary and encrypted reasoning) are kept with their signatures and sent back
//! unmodified within a tool loop, streamed or not
//! (<https://openrouter.ai/docs/use-cases/reasoning-tokens#preserving-reasoning-blocks>).

use agent_core::providers::{EnvModel, OpenAi, from_variables};
use agent_core::{Message, Reasoning, RunEvent, agent};
use futures_util::StreamExt;
use serde_json::{Value, json};
use tests::get_weather;
use tests::http::{json_reply, quick_retries, request_bodies, serve_event_streams, serve_in_order};
use tests::{streamed_output, streamed_reasoning};

/// The model `AGENT_MODEL={service}:{model}` chooses, its requests going to `base` (a loopback
/// server) through the service's `{SERVICE}_BASE_URL`, as an application configures it.
fn service_model(service: &str, model: &str, base: &str) -> EnvModel {
    let upper = service.to_ascii_uppercase();
    let choice = format!("{service}:{model}");
    let base = format!("{base}/v1");
    from_variables(|name| match name {
        "AGENT_MODEL" => Some(choice.clone()),
        _ if name == format!("{upper}_BASE_URL") => Some(base.clone()),
        _ if name == format!("{upper}_API_KEY") => Some("test-key-123".to_owned()),
        _ => None,
    })
    .unwrap()
    .unwrap()
    .http_config(quick_retries())
}

fn reply(message: Value, finish_reason: &str) -> String {
    json!({
        "id": "gen-1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5}
    })
    .to_string()
}

fn answer(text: &str) -> String {
    reply(json!({"role": "assistant", "content": text}), "stop")
}

/// The assistant turn of a history at `at`.
fn reasoning_at(messages: &[Message], at: usize) -> &[Reasoning] {
    match &messages[at] {
        Message::Assistant(reply) => &reply.reasoning,
        other => panic!("{other:?}"),
    }
}

/// Every message of a request body that carries reasoning back, by its place.
fn reasoning_sent(body: &Value) -> Vec<(usize, &str)> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .flat_map(|(at, message)| {
            ["reasoning_content", "reasoning_details", "reasoning"]
                .into_iter()
                .filter(move |field| message.get(*field).is_some())
                .map(move |field| (at, field))
        })
        .collect()
}

#[test]
fn a_base_url_names_its_service_unless_the_service_is_named() {
    for (base, service) in [
        ("https://api.openai.com/v1", "openai"),
        ("https://api.deepseek.com/v1", "deepseek"),
        ("https://api.deepseek.com", "deepseek"),
        ("https://openrouter.ai/api/v1", "openrouter"),
        ("https://api.groq.com/openai/v1", "groq"),
        ("https://dashscope.aliyuncs.com/compatible-mode/v1", "qwen"),
        (
            "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
            "qwen",
        ),
        ("http://localhost:11434/v1", "localhost:11434"),
        ("http://127.0.0.1:8000/v1", "127.0.0.1:8000"),
        ("https://notopenrouter.ai/api/v1", "notopenrouter.ai"),
    ] {
        let model = OpenAi::new("m").base_url(base);
        assert_eq!(model.service_name(), service, "{base}");
    }
    assert_eq!(OpenAi::new("gpt-4o").service_name(), "openai");
    let azure = OpenAi::azure("https://res.openai.azure.com", "gpt-4o", "2024-10-21");
    assert_eq!(azure.service_name(), "azure");
    // A proxy in front of DeepSeek is DeepSeek, whichever comes first.
    for proxied in [
        OpenAi::new("deepseek-chat")
            .service("deepseek")
            .base_url("http://10.0.0.2:8080/v1"),
        OpenAi::new("deepseek-chat")
            .base_url("http://10.0.0.2:8080/v1")
            .service("deepseek"),
    ] {
        assert_eq!(proxied.service_name(), "deepseek");
    }
}

#[tokio::test]
async fn deepseek_reasoning_is_deepseeks_and_goes_back_to_deepseek_only() {
    let thinking_call = reply(
        json!({
            "role": "assistant",
            "content": "",
            "reasoning_content": "The user wants Beijing's weather; call the tool.",
            "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": "get_weather", "arguments": "{\"city\":\"Beijing\"}"}}]
        }),
        "tool_calls",
    );
    let deepseek = serve_in_order(vec![
        json_reply(200, &thinking_call),
        json_reply(200, &answer("Light rain.")),
        json_reply(200, &answer("Still rain, on Friday too.")),
    ])
    .await;
    let openrouter = serve_in_order(vec![json_reply(200, &answer("Rain tomorrow."))]).await;

    let first = agent!(
        service_model("deepseek", "deepseek-reasoner", &deepseek.uri()),
        get_weather
    )
    .run("Weather in Beijing?")
    .await
    .unwrap();
    let pieces = reasoning_at(&first.messages, 2);
    assert_eq!(pieces.len(), 1);
    assert_eq!(
        pieces[0].text,
        "The user wants Beijing's weather; call the tool."
    );
    assert_eq!(pieces[0].provider, "deepseek");

    // The run's model changes to another service behind the same wire format: DeepSeek's
    // reasoning stays out of its requests.
    let second = agent!(
        service_model("openrouter", "deepseek/deepseek-r1", &openrouter.uri()),
        get_weather
    )
    .run("And tomorrow?")
    .history(first.messages.clone())
    .await
    .unwrap();
    assert_eq!(second.text, "Rain tomorrow.");
    let body = &request_bodies(&openrouter).await[0];
    assert_eq!(
        body["messages"][2]["tool_calls"][0]["id"], "call_1",
        "{body}"
    );
    assert_eq!(reasoning_sent(body), [], "{body}");

    // Back on DeepSeek, the tool-call turn's reasoning goes back again, as DeepSeek requires.
    let third = agent!(
        service_model("deepseek", "deepseek-reasoner", &deepseek.uri()),
        get_weather
    )
    .run("And on Friday?")
    .history(second.messages.clone())
    .await
    .unwrap();
    assert_eq!(third.text, "Still rain, on Friday too.");
    let bodies = request_bodies(&deepseek).await;
    assert_eq!(
        bodies[1]["messages"][2]["reasoning_content"],
        "The user wants Beijing's weather; call the tool."
    );
    let last = &bodies[2];
    assert_eq!(
        last["messages"][2]["reasoning_content"],
        "The user wants Beijing's weather; call the tool.",
        "{last}"
    );
    assert_eq!(reasoning_sent(last), [(2, "reasoning_content")], "{last}");
}

/// Claude's signed thinking and a redacted block, as OpenRouter returns them on a message.
fn claude_details() -> Value {
    json!([
        {"type": "reasoning.text", "text": "The user wants Beijing's weather; call the tool.",
         "signature": "EqQBCkgIARABGAIiQLs1gn", "format": "anthropic-claude-v1", "index": 0},
        {"type": "reasoning.encrypted", "data": "EmwKAhgBEgy3vaRedacted",
         "id": "rd_1", "format": "anthropic-claude-v1", "index": 1}
    ])
}

#[tokio::test]
async fn openrouter_reasoning_details_go_back_unmodified_with_their_signatures() {
    let thinking_call = reply(
        json!({
            "role": "assistant",
            "content": "",
            "reasoning": "The user wants Beijing's weather; call the tool.",
            "reasoning_details": claude_details(),
            "tool_calls": [{"id": "toolu_01", "index": 0, "type": "function",
                "function": {"name": "get_weather", "arguments": "{\"city\":\"Beijing\"}"}}]
        }),
        "tool_calls",
    );
    let final_answer = reply(
        json!({
            "role": "assistant",
            "content": "Light rain.",
            "reasoning": "The tool says rain.",
            "reasoning_details": [{"type": "reasoning.text", "text": "The tool says rain.",
                "signature": "EqQBAnswerSig", "format": "anthropic-claude-v1", "index": 0}]
        }),
        "stop",
    );
    let server = serve_in_order(vec![
        json_reply(200, &thinking_call),
        json_reply(200, &final_answer),
    ])
    .await;
    let agent = agent!(
        service_model("openrouter", "anthropic/claude-sonnet-4.5", &server.uri()),
        get_weather
    );
    let output = agent.run("Weather in Beijing?").await.unwrap();
    assert_eq!(output.text, "Light rain.");

    // The stored reasoning: the thinking with its signature, the redacted block's data, both
    // OpenRouter's, each as OpenRouter framed it.
    let pieces = reasoning_at(&output.messages, 2);
    assert_eq!(pieces.len(), 2, "{pieces:?}");
    assert_eq!(
        pieces[0].text,
        "The user wants Beijing's weather; call the tool."
    );
    assert_eq!(
        pieces[0].signature.as_deref(),
        Some("EqQBCkgIARABGAIiQLs1gn")
    );
    assert_eq!(pieces[1].text, "");
    assert_eq!(
        pieces[1].encrypted.as_deref(),
        Some("EmwKAhgBEgy3vaRedacted")
    );
    assert_eq!(pieces[1].id.as_deref(), Some("rd_1"));
    assert!(pieces.iter().all(|piece| piece.provider == "openrouter"));

    // The second request of the tool loop gives them back exactly as they came, and no
    // `reasoning_content` beside them.
    let second = &request_bodies(&server).await[1];
    let turn = &second["messages"][2];
    assert_eq!(turn["tool_calls"][0]["id"], "toolu_01");
    assert_eq!(turn["reasoning_details"], claude_details(), "{turn}");
    assert_eq!(
        reasoning_sent(second),
        [(2, "reasoning_details")],
        "{second}"
    );
}

/// An OpenRouter stream of Claude thinking: the text in pieces (with the same text as
/// `reasoning`), the signature in a piece of its own, a redacted block, then a call.
fn claude_stream() -> String {
    let detail = |fields: Value| {
        let mut detail =
            json!({"type": "reasoning.text", "format": "anthropic-claude-v1", "index": 0});
        detail
            .as_object_mut()
            .unwrap()
            .extend(fields.as_object().unwrap().clone());
        detail
    };
    let chunks = [
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": "", "reasoning": null, "reasoning_details": []}}]}),
        json!({"choices": [{"index": 0, "delta": {"content": "", "reasoning": "Two cities: ",
            "reasoning_details": [detail(json!({"text": "Two cities: "}))]}}]}),
        json!({"choices": [{"index": 0, "delta": {"content": "", "reasoning": "call twice, 北京 first.",
            "reasoning_details": [detail(json!({"text": "call twice, 北京 first."}))]}}]}),
        json!({"choices": [{"index": 0, "delta": {"content": "",
            "reasoning_details": [detail(json!({"text": "", "signature": "EqQBStreamedSig"}))]}}]}),
        json!({"choices": [{"index": 0, "delta": {"reasoning_details": [{"type": "reasoning.encrypted",
            "data": "EmwKStreamedRedacted", "format": "anthropic-claude-v1", "index": 1}]}}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "toolu_a", "type": "function",
            "function": {"name": "get_weather", "arguments": "{\"city\":\"北京\"}"}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
               "usage": {"prompt_tokens": 20, "completion_tokens": 9}}),
    ];
    event_stream(&chunks)
}

fn answer_stream() -> String {
    event_stream(&[
        json!({"choices": [{"index": 0, "delta": {"content": "Rain in 北京."}, "finish_reason": "stop"}]}),
    ])
}

fn event_stream(chunks: &[Value]) -> String {
    let mut body: String = chunks
        .iter()
        .map(|chunk| format!("data: {chunk}\n\n"))
        .collect();
    body.push_str("data: [DONE]\n\n");
    body
}

#[tokio::test]
async fn streamed_openrouter_reasoning_details_are_joined_and_go_back_signed() {
    let (base, received) = serve_event_streams(vec![claude_stream(), answer_stream()], 7).await;
    let agent = agent!(
        service_model("openrouter", "anthropic/claude-sonnet-4.5", &base),
        get_weather
    );
    let events: Vec<RunEvent> = agent.run("Weather in 北京?").stream().collect().await;
    // The readable thinking streams once, though it came as `reasoning` and in the details.
    assert_eq!(
        streamed_reasoning(&events),
        "Two cities: call twice, 北京 first."
    );
    let output = streamed_output(&events);
    assert_eq!(output.text, "Rain in 北京.");

    let pieces = reasoning_at(&output.messages, 2);
    assert_eq!(pieces.len(), 2, "{pieces:?}");
    assert_eq!(pieces[0].text, "Two cities: call twice, 北京 first.");
    assert_eq!(pieces[0].signature.as_deref(), Some("EqQBStreamedSig"));
    assert_eq!(pieces[1].encrypted.as_deref(), Some("EmwKStreamedRedacted"));
    assert!(pieces.iter().all(|piece| piece.provider == "openrouter"));

    let second: Value = serde_json::from_str(&received.lock().unwrap()[1]).unwrap();
    assert_eq!(
        second["messages"][2]["reasoning_details"],
        json!([
            {"type": "reasoning.text", "text": "Two cities: call twice, 北京 first.",
             "signature": "EqQBStreamedSig", "format": "anthropic-claude-v1", "index": 0},
            {"type": "reasoning.encrypted", "data": "EmwKStreamedRedacted",
             "format": "anthropic-claude-v1", "index": 1}
        ]),
        "{second}"
    );
    assert_eq!(
        reasoning_sent(&second),
        [(2, "reasoning_details")],
        "{second}"
    );
}

/// An OpenAI reasoning model behind OpenRouter, from a server that streams the details alone: a
/// summary in pieces, then the encrypted reasoning, then a call.
fn summary_stream() -> String {
    let summary = |text: &str| {
        json!({"choices": [{"index": 0, "delta": {"reasoning_details": [{"type": "reasoning.summary",
            "summary": text, "format": "openai-responses-v1", "index": 0}]}}]})
    };
    event_stream(&[
        summary("**Checking"),
        summary(" the weather**"),
        json!({"choices": [{"index": 0, "delta": {"reasoning_details": [{"type": "reasoning.encrypted",
            "data": "gAAAAABoEncrypted", "id": "rs_1", "format": "openai-responses-v1", "index": 0}]}}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_s", "type": "function",
            "function": {"name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"}}]},
            "finish_reason": "tool_calls"}]}),
    ])
}

#[tokio::test]
async fn streamed_summaries_without_plain_text_still_stream_and_go_back() {
    let (base, received) = serve_event_streams(vec![summary_stream(), answer_stream()], 5).await;
    let agent = agent!(
        service_model("openrouter", "openai/gpt-5-mini", &base),
        get_weather
    );
    let events: Vec<RunEvent> = agent.run("Weather in Oslo?").stream().collect().await;
    assert_eq!(streamed_reasoning(&events), "**Checking the weather**");
    let output = streamed_output(&events);
    let pieces = reasoning_at(&output.messages, 2);
    assert_eq!(pieces.len(), 2, "{pieces:?}");
    assert_eq!(pieces[0].text, "**Checking the weather**");
    assert_eq!(pieces[0].kind.as_deref(), Some("reasoning.summary"));

    let second: Value = serde_json::from_str(&received.lock().unwrap()[1]).unwrap();
    assert_eq!(
        second["messages"][2]["reasoning_details"],
        json!([
            {"type": "reasoning.summary", "summary": "**Checking the weather**",
             "format": "openai-responses-v1", "index": 0},
            {"type": "reasoning.encrypted", "data": "gAAAAABoEncrypted", "id": "rs_1",
             "format": "openai-responses-v1", "index": 0}
        ]),
        "{second}"
    );
}
