//! Ids the framework makes are fresh in every process: the ids made up for calls a provider sent
//! without one (so a run paused in one process and resumed in another never gives a new call an
//! old call's idempotency key), and the web endpoint's answer ids (so two instances on one
//! database never give two answers one id). And a run id with a `/` cannot make two calls share a
//! key.

use std::process::Command;
use std::sync::Arc;

use agent_core::providers::{Gemini, OpenAi};
use agent_core::session::MemorySessions;
use agent_core::testing::ScriptedModel;
use agent_core::web::ChatServer;
use agent_core::{Agent, AssistantMessage, CallInfo, ChatRequest, Message, Model, RunId, ToolCall};
use serde_json::{Value, json};
use tests::http::{fixture, json_reply, quick_retries, serve_in_order};
use tests::serve_chat;

/// The ids a Gemini reply and an OpenAI-compatible reply without call ids are given, printed one
/// a line. Run by [`made_up_call_ids_differ_between_processes`], once in each of two processes.
#[test]
#[ignore = "run in a child process by made_up_call_ids_differ_between_processes"]
fn print_made_up_call_ids() {
    tests::child::block_on(async {
        let gemini = serve_in_order(vec![json_reply(
            200,
            &fixture("gemini", "two_function_calls.json"),
        )])
        .await;
        let openai = serve_in_order(vec![json_reply(
            200,
            &fixture("openai", "calls_without_ids.json"),
        )])
        .await;
        let models: [Box<dyn Model>; 2] = [
            Box::new(
                Gemini::new("gemini-2.5-flash")
                    .api_key("test-key")
                    .base_url(&format!("{}/v1beta", gemini.uri()))
                    .http_config(quick_retries()),
            ),
            Box::new(
                OpenAi::new("qwen2.5:7b")
                    .api_key("test-key")
                    .base_url(&format!("{}/v1", openai.uri()))
                    .http_config(quick_retries()),
            ),
        ];
        let messages = [Message::user("Weather and time in Beijing?")];
        for model in models {
            let reply = model.chat(ChatRequest::new(&messages, &[])).await.unwrap();
            for call in &reply.message.tool_calls {
                println!("made-up {}", call.id);
            }
        }
    });
}

/// The made-up ids one run of [`print_made_up_call_ids`] in a process of its own printed.
fn made_up_in_a_new_process() -> Vec<String> {
    let output = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "print_made_up_call_ids",
            "--ignored",
            "--nocapture",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .filter_map(|line| line.strip_prefix("made-up "))
        .map(str::to_owned)
        .collect()
}

#[test]
fn made_up_call_ids_differ_between_processes() {
    let first = made_up_in_a_new_process();
    let second = made_up_in_a_new_process();
    for ids in [&first, &second] {
        // Two Gemini calls, then two OpenAI-compatible ones.
        assert_eq!(ids.len(), 4, "{ids:?}");
        assert!(
            ids[..2].iter().all(|id| id.starts_with("gemini_call_")),
            "{ids:?}"
        );
        assert!(
            ids[2..].iter().all(|id| id.starts_with("call_agent_")),
            "{ids:?}"
        );
    }
    let mut all: Vec<&String> = first.iter().chain(&second).collect();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 8, "{first:?} {second:?}");
    // And so are the keys a tool hands a payment API, in a run resumed in the other process.
    let key = |id: &str| {
        CallInfo::new(RunId::from("order-7"), &ToolCall::new(id, "charge", "{}")).idempotency_key()
    };
    assert_ne!(key(&first[0]), key(&second[0]));
}

#[test]
fn a_slash_in_a_run_id_cannot_make_two_calls_share_a_key() {
    let key = |run: &str, call: &str| {
        CallInfo::new(RunId::from(run), &ToolCall::new(call, "charge", "{}")).idempotency_key()
    };
    assert_eq!(key("order-7", "call_1"), "order-7/call_1");
    assert_ne!(key("a/b", "c"), key("a", "b/c"));
    assert_ne!(key("a%2Fb", "c"), key("a/b", "c"));
    assert_eq!(key("a/b", "c"), "a%2Fb/c");
    assert_eq!(key("100%", "c"), "100%25/c");
}

/// The answer id in a UI message stream: its `start` chunk's `messageId`.
fn answer_id(stream: &str) -> String {
    stream
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter_map(|data| serde_json::from_str::<Value>(data).ok())
        .find(|chunk| chunk["type"] == "start")
        .unwrap_or_else(|| panic!("no start chunk in {stream}"))["messageId"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Posts `body` to the chat endpoint at `base`; the stream's text.
async fn post(base: &str, body: &Value) -> String {
    let reply = reqwest::Client::new()
        .post(format!("{base}/api/chat"))
        .json(body)
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 200);
    reply.text().await.unwrap()
}

/// Two instances of the endpoint behind one load balancer, on one database: a chat answered by
/// one and regenerated by each in turn gets an answer with an id of its own each time, and either
/// instance reads back the id the other gave.
#[tokio::test]
async fn two_instances_on_one_store_give_each_answer_its_own_id() {
    let store = Arc::new(MemorySessions::new());
    let model = ScriptedModel::new([
        AssistantMessage::text("Hello!"),
        AssistantMessage::text("Hi!"),
        AssistantMessage::text("Hey!"),
        AssistantMessage::text("Hi there!"),
        AssistantMessage::text("Fine."),
    ]);
    let instance = || {
        let agent: Agent = Agent::new(model.clone());
        serve_chat(ChatServer::new(Arc::new(agent)).sessions(store.clone()))
    };
    let instances = [instance().await, instance().await];
    let hi = json!({ "id": "u1", "role": "user", "parts": [{ "type": "text", "text": "Hi" }] });
    let mut ids = vec![answer_id(
        &post(&instances[0], &json!({ "id": "chat-1", "messages": [hi] })).await,
    )];
    let again = json!({ "id": "chat-1", "trigger": "regenerate-message", "messages": [hi] });
    for turn in 1..4 {
        ids.push(answer_id(&post(&instances[turn % 2], &again).await));
    }
    let mut distinct = ids.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 4, "{ids:?}");

    // The first instance reads back the id the second gave last: a question after that answer
    // goes on from it.
    let last = ids.last().unwrap();
    let parts = [json!({ "type": "text", "text": "Hi there!" })];
    let answer = json!({ "id": last, "role": "assistant", "parts": parts });
    let parts = [json!({ "type": "text", "text": "How are you?" })];
    let next = json!({ "id": "u2", "role": "user", "parts": parts });
    let body = json!({ "id": "chat-1", "messageId": "u2", "messages": [hi, answer, next] });
    post(&instances[0], &body).await;
    let shown = &model.requests()[4].messages;
    assert_eq!(shown.last().unwrap().content(), "How are you?");
    assert_eq!(shown[shown.len() - 2].content(), "Hi there!");
}
