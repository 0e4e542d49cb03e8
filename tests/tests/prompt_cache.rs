//! Prompt caching: the Anthropic adapter places `cache_control` breakpoints (the user's pins
//! first, then the tools, the system text and the moving tail), never more than the API's four,
//! pinned whole as insta snapshots for 0 to 6 pins; the OpenAI adapters send a
//! `prompt_cache_key`, which a run makes from its session's id (the same for every run of one
//! conversation, another for another, never the id itself).

use agent_core::providers::{Anthropic, OpenAi, OpenAiResponses};
use agent_core::session::MemorySessions;
use agent_core::{
    Agent, AssistantMessage, ChatRequest, Message, Model, ModelSettings, PromptCache, ToolCall,
    ToolDef, ToolResultMessage,
};
use serde_json::{Value, json};
use tests::http::{fixture, json_reply, quick_retries, request_bodies, serve_in_order};

/// A history with a system prompt, two turns and a tool call.
fn history() -> Vec<Message> {
    vec![
        Message::system("You are a contracts assistant."),
        Message::user("Read the contract with ACME."),
        Message::Assistant(AssistantMessage::tool_calls([ToolCall::new(
            "toolu_1",
            "read_contract",
            r#"{"party":"ACME"}"#,
        )])),
        Message::Tool(ToolResultMessage::new(
            "toolu_1",
            "Notice period: three months.",
        )),
        Message::Assistant(AssistantMessage::text("The notice period is three months.")),
        Message::user("And the renewal terms?"),
    ]
}

fn tools() -> Vec<ToolDef> {
    ["read_contract", "list_contracts"]
        .into_iter()
        .map(|name| {
            ToolDef::new(
                name,
                "Contracts by party.",
                json!({"type": "object", "properties": {"party": {"type": "string"}}}),
            )
        })
        .collect()
}

/// Where `body` puts breakpoints: each `cache_control`'s place, in order of the body.
fn breakpoints(body: &Value) -> Vec<String> {
    let mut found = Vec::new();
    for (index, tool) in body["tools"].as_array().into_iter().flatten().enumerate() {
        if tool.get("cache_control").is_some() {
            found.push(format!("tool {index}"));
        }
    }
    if body["system"].is_array() && body["system"][0].get("cache_control").is_some() {
        found.push("system".to_owned());
    }
    for (index, message) in body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let blocks = message["content"].as_array().into_iter().flatten();
        if blocks
            .clone()
            .any(|block| block.get("cache_control").is_some())
        {
            found.push(format!("message {index}"));
        }
    }
    found
}

#[tokio::test]
async fn anthropic_places_at_most_four_breakpoints_the_users_first() {
    // Pins: the first question, the system prompt, the call's result, the answer, the second
    // question, the call.
    let pins = [1, 0, 3, 4, 5, 2];
    let replies = (0..=pins.len())
        .map(|_| json_reply(200, &fixture("anthropic", "answer.json")))
        .collect();
    let server = serve_in_order(replies).await;
    let model = Anthropic::new("claude-sonnet-4-5")
        .api_key("test-key")
        .base_url(&server.uri())
        .http_config(quick_retries());
    let (messages, tools) = (history(), tools());
    for count in 0..=pins.len() {
        let cache = pins[..count]
            .iter()
            .fold(PromptCache::auto(), |cache, &pin| cache.pin(pin));
        let settings = ModelSettings::new().prompt_cache(cache);
        let request = ChatRequest::new(&messages, &tools).with_settings(&settings);
        model.chat(request).await.unwrap();
    }
    let bodies = request_bodies(&server).await;
    let placed: Vec<Vec<String>> = bodies.iter().map(breakpoints).collect();
    // The wire's messages: 0 the first question, 1 the call, 2 its result, 3 the answer and
    // 4 the second question (merged with nothing: roles alternate).
    let expected: [&[&str]; 7] = [
        &["tool 1", "system", "message 4"],
        &["tool 1", "system", "message 0", "message 4"],
        &["tool 1", "system", "message 0", "message 4"],
        &["tool 1", "system", "message 0", "message 2"],
        &["system", "message 0", "message 2", "message 3"],
        &["system", "message 0", "message 2", "message 3"],
        &["system", "message 0", "message 2", "message 3"],
    ];
    assert_eq!(placed, expected.map(|places| places.to_vec()));
    for body in &bodies {
        let marks = body.to_string().matches("cache_control").count();
        assert!(marks <= 4, "{marks} breakpoints in {body}");
    }
    insta::assert_json_snapshot!("anthropic_breakpoints", bodies);
}

#[tokio::test]
async fn no_breakpoint_without_the_setting() {
    let server = serve_in_order(vec![json_reply(200, &fixture("anthropic", "answer.json"))]).await;
    let model = Anthropic::new("claude-sonnet-4-5")
        .api_key("test-key")
        .base_url(&server.uri())
        .http_config(quick_retries());
    let (messages, tools) = (history(), tools());
    model
        .chat(ChatRequest::new(&messages, &tools))
        .await
        .unwrap();
    let body = &request_bodies(&server).await[0];
    assert!(!body.to_string().contains("cache_control"), "{body}");
    assert!(body["system"].is_string());
}

/// The `prompt_cache_key` of each request `agent` sends through `server`, for runs in two
/// sessions.
async fn keys_of_sessions(agent: &Agent, store: &MemorySessions) {
    for conversation in ["alice", "alice", "bob"] {
        let output = agent.run("Hello").session(store, conversation).await;
        assert!(output.is_ok(), "{output:?}");
    }
}

fn openai_answer() -> String {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hi."},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
    })
    .to_string()
}

fn responses_answer() -> String {
    json!({
        "id": "resp_1", "object": "response", "created_at": 1, "status": "completed",
        "model": "gpt-5", "output": [{"type": "message", "id": "msg_1", "status": "completed",
        "role": "assistant", "content": [{"type": "output_text", "text": "Hi.", "annotations": []}]}],
        "usage": {"input_tokens": 10, "output_tokens": 2, "total_tokens": 12}
    })
    .to_string()
}

/// The keys the three runs sent: the same for one conversation, another for another, never its id.
fn assert_keyed_by_conversation(bodies: &[Value]) {
    let keys: Vec<&str> = bodies
        .iter()
        .map(|body| body["prompt_cache_key"].as_str().expect("a key"))
        .collect();
    assert_eq!(keys[0], keys[1]);
    assert_ne!(keys[0], keys[2]);
    assert!(
        keys.iter()
            .all(|key| !key.contains("alice") && !key.contains("bob"))
    );
}

#[tokio::test]
async fn openai_requests_of_one_conversation_share_a_cache_key() {
    let server = serve_in_order((0..4).map(|_| json_reply(200, &openai_answer())).collect()).await;
    let model = OpenAi::new("gpt-4o-mini")
        .api_key("test-key")
        .base_url(&format!("{}/v1", server.uri()))
        .http_config(quick_retries());
    let agent: Agent =
        Agent::new(model).model_settings(ModelSettings::new().prompt_cache(PromptCache::auto()));
    keys_of_sessions(&agent, &MemorySessions::new()).await;
    assert_keyed_by_conversation(&request_bodies(&server).await);
    // A key of your own is sent as it is; without the setting, none.
    let model = OpenAi::new("gpt-4o-mini")
        .api_key("test-key")
        .base_url(&format!("{}/v1", server.uri()))
        .http_config(quick_retries());
    let mine = ModelSettings::new().prompt_cache(PromptCache::auto().key("tenant-7"));
    let messages = [Message::user("Hello")];
    model
        .chat(ChatRequest::new(&messages, &[]).with_settings(&mine))
        .await
        .unwrap();
    let bodies = request_bodies(&server).await;
    assert_eq!(bodies[3]["prompt_cache_key"], "tenant-7");
}

#[tokio::test]
async fn openai_responses_requests_of_one_conversation_share_a_cache_key() {
    let server = serve_in_order(
        (0..3)
            .map(|_| json_reply(200, &responses_answer()))
            .collect(),
    )
    .await;
    let model = OpenAiResponses::new("gpt-5")
        .api_key("test-key")
        .base_url(&format!("{}/v1", server.uri()))
        .http_config(quick_retries());
    let agent: Agent =
        Agent::new(model).model_settings(ModelSettings::new().prompt_cache(PromptCache::auto()));
    keys_of_sessions(&agent, &MemorySessions::new()).await;
    assert_keyed_by_conversation(&request_bodies(&server).await);
}

#[tokio::test]
async fn no_cache_key_without_the_setting() {
    let server = serve_in_order(vec![json_reply(200, &openai_answer())]).await;
    let model = OpenAi::new("gpt-4o-mini")
        .api_key("test-key")
        .base_url(&format!("{}/v1", server.uri()))
        .http_config(quick_retries());
    let agent: Agent = Agent::new(model);
    let output = agent.run("Hello").await;
    assert!(output.is_ok());
    let body = &request_bodies(&server).await[0];
    assert!(body.get("prompt_cache_key").is_none(), "{body}");
}

/// Looks something up (the same answer each time).
#[agent_core::tool]
fn look(
    /// What to look up.
    what: String,
) -> String {
    format!("{what}: found, with a long enough record to make the history grow step by step")
}

/// A model's replies for a tool loop of `steps` steps: a lookup each, then the answer.
fn lookups(steps: usize) -> Vec<AssistantMessage> {
    let mut replies: Vec<AssistantMessage> = (0..steps)
        .map(|step| {
            AssistantMessage::tool_calls([ToolCall::new(
                format!("c{step}"),
                "look",
                format!(r#"{{"what":"item {step}"}}"#),
            )])
        })
        .collect();
    replies.push(AssistantMessage::text("Done."));
    replies
}

/// A ten-step tool loop with a prompt cache, against a scripted model.
async fn ten_steps(window: Option<u64>) -> agent_core::RunOutput {
    let replies = lookups(10);
    let mut agent: Agent =
        agent_core::agent!(agent_core::testing::ScriptedModel::new(replies), look)
            .model_settings(ModelSettings::new().prompt_cache(PromptCache::auto()));
    if let Some(window) = window {
        agent = agent.context_policy(agent_core::context::TokenWindow::new(window));
    }
    agent.run("Look up ten items.").await.unwrap()
}

#[tokio::test]
async fn a_request_that_does_not_extend_the_last_is_a_cache_bust() {
    // Each request extends the last: no bust.
    let whole = ten_steps(None).await;
    assert_eq!(whole.usage.cache_busts, 0);
    // A window that cuts the history anew as it grows: busts, counted in the steps that had them.
    let cut = ten_steps(Some(150)).await;
    assert!(cut.usage.cache_busts > 0, "{:?}", cut.usage);
    let counted: u64 = cut.step_usage.iter().map(|usage| usage.cache_busts).sum();
    assert_eq!(counted, cut.usage.cache_busts);
    assert_eq!(cut.step_usage[0].cache_busts, 0);
}

/// The bytes of a request in the order a prompt cache reads it: the tool definitions, then the
/// history (the system prompt first).
fn cache_order(request: &agent_core::testing::RecordedRequest) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(&request.tools).unwrap();
    bytes.extend(serde_json::to_vec(&request.messages).unwrap());
    bytes
}

/// Over a 50-step tool loop with a prompt cache, each request begins with the request before it
/// whole (what a provider's cache serves), so with a 5 KB system prompt each repeats at least 95%
/// of its bytes, and nothing busts.
#[tokio::test]
async fn a_fifty_step_loop_repeats_its_prefix() {
    let replies = lookups(50);
    let model = std::sync::Arc::new(agent_core::testing::ScriptedModel::new(replies));
    let system = "You are a warehouse assistant; answer from the tools. ".repeat(100);
    let agent: Agent = agent_core::agent!(std::sync::Arc::clone(&model), look)
        .system(system)
        .max_steps(60)
        .model_settings(ModelSettings::new().prompt_cache(PromptCache::auto()));
    let out = agent.run("Look up fifty items.").await.unwrap();
    assert_eq!(out.usage.cache_busts, 0);
    let requests: Vec<Vec<u8>> = model.requests().iter().map(cache_order).collect();
    assert_eq!(requests.len(), 51);
    let mut least = 1.0f64;
    for pair in requests.windows(2) {
        let (before, now) = (&pair[0], &pair[1]);
        let shared = before
            .iter()
            .zip(now.iter())
            .take_while(|(a, b)| a == b)
            .count();
        // All of the request before, but the `]` that closed its history.
        assert_eq!(shared, before.len() - 1);
        least = least.min(shared as f64 / now.len() as f64);
    }
    eprintln!("the least share of a request repeated from the one before: {least:.3}");
    assert!(least >= 0.95, "{least}");
}
