//! The web endpoint read by the AI SDK's own client: `DefaultChatTransport` (what `useChat` uses)
//! posts to it over loopback, parses the UI message stream with the `ai` package's chunk schema, and
//! `readUIMessageStream` rebuilds the assistant's message; plus the requests it refuses. What a
//! page on another origin may do is in `web_chat_cors.rs`.

use std::sync::Arc;

use agent_core::testing::ScriptedModel;
use agent_core::{Agent, AssistantMessage, ChatResponse, Message, Reasoning, ToolCall};
use agent_web::ChatServer;
use serde_json::{Value, json};
use tests::chat::{part, user};
use tests::node::{AI_SDK, ai_sdk_chat};
use tests::peers::Test;
use tests::wipe;
use tests::{get_weather, serve_chat};

async fn the_ai_sdk_rebuilds_the_message_we_streamed() {
    let model = Arc::new(ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new(
            "call_1",
            "get_weather",
            r#"{"city":"Beijing"}"#,
        )])
        .with_text("Let me check.")
        .with_reasoning(Reasoning::new("scripted", "The weather needs the tool.")),
        AssistantMessage::text("Light rain: take an umbrella."),
        AssistantMessage::text("You asked about Beijing."),
    ]));
    let agent: Agent = Agent::new(Arc::clone(&model))
        .try_tool(get_weather {})
        .unwrap();
    let base = serve_chat(ChatServer::new(Arc::new(agent))).await;
    let api = format!("{base}/api/chat");

    let first = ai_sdk_chat(&api, "chat-1", &json!([user("m1", "Umbrella in Beijing?")])).await;
    let kinds: Vec<&str> = first["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|chunk| chunk["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "start",
            "start-step",
            "reasoning-start",
            "reasoning-delta",
            "reasoning-end",
            "text-start",
            "text-delta",
            "text-end",
            "tool-input-start",
            "tool-input-available",
            "tool-output-available",
            "finish-step",
            "start-step",
            "text-start",
            "text-delta",
            "text-end",
            "finish-step",
            "finish"
        ]
    );
    // A server not asked for metadata sends none.
    let finish = first["chunks"].as_array().unwrap().last().unwrap();
    assert_eq!(finish.get("messageMetadata"), None);
    let message = &first["message"];
    assert_eq!(message["role"], "assistant");
    let parts = message["parts"].as_array().unwrap();
    let reasoning = parts
        .iter()
        .find(|part| part["type"] == "reasoning")
        .unwrap();
    assert_eq!(reasoning["text"], "The weather needs the tool.");
    let call = parts
        .iter()
        .find(|part| part["type"] == "tool-get_weather")
        .unwrap();
    assert_eq!(call["state"], "output-available");
    assert_eq!(call["input"], json!({ "city": "Beijing" }));
    assert_eq!(call["output"]["weather"], "小雨");
    let texts: Vec<&str> = parts
        .iter()
        .filter(|part| part["type"] == "text")
        .map(|part| part["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["Let me check.", "Light rain: take an umbrella."]);

    // The next turn of the same chat: the server kept the conversation.
    let history = json!([
        user("m1", "Umbrella in Beijing?"),
        first["message"],
        user("m3", "What did I ask?")
    ]);
    let second = ai_sdk_chat(&api, "chat-1", &history).await;
    let text = part(&second["message"], "text");
    assert_eq!(text["text"], "You asked about Beijing.");
    let sent = &model.requests()[2].messages;
    assert!(matches!(&sent[1], Message::User { content, .. } if content == "Umbrella in Beijing?"));
    assert!(
        matches!(sent.last(), Some(Message::User { content, .. }) if content == "What did I ask?")
    );
}

async fn an_answers_metadata_reaches_the_client() {
    // Two steps answered by two models, as a fallback chain may do.
    let model = ScriptedModel::new([
        ChatResponse::new(AssistantMessage::tool_calls([ToolCall::new(
            "call_1",
            "get_weather",
            r#"{"city":"Beijing"}"#,
        )]))
        .with_model("primary-1"),
        ChatResponse::new(AssistantMessage::text("Light rain.")).with_model("backup-2"),
    ]);
    let agent: Agent = Agent::new(model).try_tool(get_weather {}).unwrap();
    let server = ChatServer::new(Arc::new(agent)).metadata(|run| {
        let model = run.step_models.iter().rev().flatten().next();
        Some(json!({ "model": model, "steps": run.steps }))
    });
    let base = serve_chat(server).await;
    let answer = ai_sdk_chat(
        &format!("{base}/api/chat"),
        "chat-m",
        &json!([user("m1", "Umbrella?")]),
    )
    .await;
    let finish = answer["chunks"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(finish["type"], "finish");
    let expected = json!({ "model": "backup-2", "steps": 2 });
    assert_eq!(finish["messageMetadata"], expected);
    // What `useChat` keeps on the message.
    assert_eq!(answer["message"]["metadata"], expected);
}

async fn a_forgotten_chat_starts_afresh() {
    let model = Arc::new(ScriptedModel::new([
        AssistantMessage::text("Noted: you like tea."),
        AssistantMessage::text("Hello."),
    ]));
    let agent: Agent = Agent::new(Arc::clone(&model));
    let base = serve_chat(ChatServer::new(Arc::new(agent))).await;
    let api = format!("{base}/api/chat");
    ai_sdk_chat(&api, "chat-f", &json!([user("m1", "I like tea.")])).await;
    let http = reqwest::Client::new();
    let forget = |chat: &str| http.delete(format!("{api}/{chat}")).send();
    assert_eq!(forget("chat-f").await.unwrap().status().as_u16(), 204);
    assert_eq!(forget("chat-f").await.unwrap().status().as_u16(), 404);
    assert_eq!(forget("chat-none").await.unwrap().status().as_u16(), 404);
    assert_eq!(forget("a%1Fb").await.unwrap().status().as_u16(), 400);
    ai_sdk_chat(&api, "chat-f", &json!([user("m2", "Hi")])).await;
    let shown = model.last_request().unwrap();
    assert_eq!(shown.messages.len(), 2, "the model saw the forgotten chat");
}

async fn bad_requests_get_a_400_and_never_reach_the_model() {
    let model = Arc::new(ScriptedModel::new(Vec::<AssistantMessage>::new()));
    let agent: Agent = Agent::new(Arc::clone(&model));
    let store = Arc::new(agent_core::session::MemorySessions::new());
    let server = ChatServer::new(Arc::new(agent)).sessions(store.clone());
    let base = serve_chat(server.body_limit(1024)).await;
    let http = reqwest::Client::new();
    let cases = [
        ("{\"id\":", 400, "the body is not a chat request"),
        (
            r#"{"id":"c","messages":[{"role":"user","parts":[{"type":"hologram"}]}]}"#,
            400,
            "messages[0]: unknown part type `hologram`",
        ),
        (
            r#"{"id":"c","messages":[]}"#,
            400,
            "the request has no messages",
        ),
        (
            r#"{"id":"c","messages":[{"role":"user","parts":[{"type":"file","mediaType":"image/png","url":"data:image/png;base64,%%not-base64%%"}]}]}"#,
            400,
            "a file's data URL does not hold valid base64",
        ),
        // Two requests glued together: neither is answered.
        (
            r#"{"id":"c","messages":[{"role":"user","parts":[{"type":"text","text":"a"}]}]}{"id":"d","messages":[]}"#,
            400,
            "the body has more after its JSON",
        ),
        // A text that is not text is not dropped from the message.
        (
            r#"{"id":"c","messages":[{"role":"user","parts":[{"type":"text","text":"a"},{"type":"text","text":7}]}]}"#,
            400,
            "messages[0]: a `text` part's `text` is not a string: 7",
        ),
    ];
    for (body, status, says) in cases {
        let reply = http
            .post(format!("{base}/api/chat"))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(reply.status().as_u16(), status, "{body}");
        let error: Value = reply.json().await.unwrap();
        assert!(
            error["error"].as_str().unwrap().starts_with(says),
            "{error}"
        );
    }
    let large = format!(
        r#"{{"id":"c","messages":[{{"role":"user","parts":[{{"type":"text","text":"{}"}}]}}]}}"#,
        "x".repeat(2000)
    );
    let reply = http
        .post(format!("{base}/api/chat"))
        .body(large)
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status().as_u16(), 413);
    assert!(model.requests().is_empty());
    for chat in ["c", "d"] {
        let kept = agent_core::session::SessionStore::load(&*store, chat).await;
        assert_eq!(kept.unwrap(), Default::default(), "{chat}");
    }
}

/// A chat whose model asks to wipe a folder, then says `then`, with the approval left to the
/// person: the model, the endpoint, and the first answer as the AI SDK read it (`chunks`, and the
/// `message` that asks).
async fn asked_to_wipe(chat: &str, then: &str) -> (Arc<ScriptedModel>, String, Value) {
    let model = Arc::new(ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new("call_w", "wipe", r#"{"folder":"/tmp/old"}"#)]),
        AssistantMessage::text(then),
    ]));
    let agent: Agent = Agent::new(Arc::clone(&model))
        .try_tool(wipe {})
        .unwrap()
        .defer_approvals();
    let base = serve_chat(ChatServer::new(Arc::new(agent))).await;
    let api = format!("{base}/api/chat");
    let asked = ai_sdk_chat(&api, chat, &json!([user("m1", "Clean /tmp/old")])).await;
    (model, api, asked)
}

/// The tool part of type `kind` in a UI message, to answer as the client does.
fn tool_part<'m>(message: &'m mut Value, kind: &str) -> &'m mut Value {
    let parts = message["parts"].as_array_mut().unwrap();
    parts
        .iter_mut()
        .find(|part| part["type"] == kind)
        .unwrap_or_else(|| panic!("no `{kind}` part"))
}

async fn an_approval_goes_out_as_a_request_and_the_answer_resumes_the_run() {
    let (model, api, asked) = asked_to_wipe("chat-w", "Wiped.").await;
    let mut message = asked["message"].clone();
    let call = tool_part(&mut message, "tool-wipe");
    assert_eq!(call["state"], "approval-requested", "{call}");
    assert_eq!(call["approval"]["id"], "call_w");
    assert!(asked["chunks"].as_array().unwrap().iter().any(|chunk| {
        chunk["type"] == "tool-approval-request" && chunk["toolCallId"] == "call_w"
    }));

    // What `addToolApprovalResponse` does to the part before the client sends the messages back.
    call["state"] = json!("approval-responded");
    call["approval"] = json!({ "id": "call_w", "approved": true });
    let resumed = ai_sdk_chat(
        &api,
        "chat-w",
        &json!([user("m1", "Clean /tmp/old"), message]),
    )
    .await;
    // The answer goes on in the message that asked: the same id, so the client shows the call
    // once.
    let start = &resumed["chunks"][0];
    assert_eq!(start["type"], "start", "{start}");
    assert_eq!(start["messageId"], message["id"], "{start}");
    assert_eq!(resumed["message"]["id"], message["id"]);
    let outputs: Vec<&Value> = resumed["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|chunk| chunk["type"] == "tool-output-available")
        .collect();
    assert_eq!(outputs.len(), 1);
    assert_eq!(outputs[0]["toolCallId"], "call_w");
    assert_eq!(outputs[0]["output"], "wiped /tmp/old");
    let text = part(&resumed["message"], "text");
    assert_eq!(text["text"], "Wiped.");
    let call = part(&resumed["message"], "tool-wipe");
    assert_eq!(call["state"], "output-available");
    assert_eq!(model.requests().len(), 2);
}

async fn a_denial_ends_the_call_as_denied_in_the_same_message() {
    let (model, api, asked) = asked_to_wipe("chat-d", "I left it alone.").await;
    let mut message = asked["message"].clone();
    let call = tool_part(&mut message, "tool-wipe");
    call["state"] = json!("approval-responded");
    call["approval"] = json!({ "id": "call_w", "approved": false, "reason": "not today" });
    let resumed = ai_sdk_chat(
        &api,
        "chat-d",
        &json!([user("m1", "Clean /tmp/old"), message]),
    )
    .await;
    let chunks = resumed["chunks"].as_array().unwrap();
    // As the AI SDK's own server ends a denied call: `tool-output-denied`, no error.
    assert!(
        chunks
            .iter()
            .any(|chunk| chunk["type"] == "tool-output-denied" && chunk["toolCallId"] == "call_w"),
        "{chunks:?}"
    );
    assert!(
        !chunks
            .iter()
            .any(|chunk| chunk["type"] == "tool-output-error"),
        "{chunks:?}"
    );
    let call = part(&resumed["message"], "tool-wipe");
    assert_eq!(call["state"], "output-denied", "{call}");
    assert_eq!(resumed["message"]["id"], message["id"]);
    // The model was told, and answered.
    let told = model.requests()[1]
        .messages
        .last()
        .unwrap()
        .content()
        .to_owned();
    assert!(told.contains("not today"), "{told}");
}

/// A tool's image reaches the client as a file part it shows, after the tool's output.
async fn a_tools_image_reaches_the_client_as_a_file() {
    let model = Arc::new(ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new("call_s", "screenshot", "{}")]),
        AssistantMessage::text("Here it is."),
    ]));
    let screenshot = agent_core::tool_fn(
        "screenshot",
        "Takes a screenshot.",
        |_: serde_json::Map<String, Value>| async move {
            vec![
                agent_core::Part::text("the page"),
                agent_core::Part::image("image/png", [0x89, b'P', b'N', b'G']),
            ]
        },
    );
    let agent: Agent = Agent::new(Arc::clone(&model)).try_tool(screenshot).unwrap();
    let base = serve_chat(ChatServer::new(Arc::new(agent))).await;
    let answered = ai_sdk_chat(
        &format!("{base}/api/chat"),
        "chat-s",
        &json!([user("m1", "Show me")]),
    )
    .await;
    let file = part(&answered["message"], "file");
    assert_eq!(file["mediaType"], "image/png");
    assert_eq!(file["url"], "data:image/png;base64,iVBORw==");
    let call = part(&answered["message"], "tool-screenshot");
    assert_eq!(call["output"], "the page", "{call}");
}

/// Where the person is: the browser knows, so the browser answers.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Nothing {}

/// A client-side tool (an `ExternalTool`): the client gets the call, answers it the way the AI
/// SDK's `addToolOutput` does (the tool part `output-available` with its `output`), and the run
/// goes on with that result in the same message; the chat takes a normal message after.
async fn a_client_side_tool_is_answered_by_the_client() {
    let model = Arc::new(ScriptedModel::new([
        AssistantMessage::tool_calls([
            ToolCall::new("call_t", "get_weather", r#"{"city":"Oslo"}"#),
            ToolCall::new("call_l", "where_am_i", "{}"),
        ]),
        AssistantMessage::text("You are in Oslo, and it is sunny."),
        AssistantMessage::text("Goodbye."),
    ]));
    let agent: Agent = Agent::new(Arc::clone(&model))
        .try_tool(get_weather {})
        .unwrap()
        .try_tool(agent_core::ExternalTool::new::<Nothing>(
            "where_am_i",
            "Where the user is.",
        ))
        .unwrap();
    let base = serve_chat(ChatServer::new(Arc::new(agent))).await;
    let api = format!("{base}/api/chat");
    let asked = ai_sdk_chat(&api, "chat-t", &json!([user("m1", "Where am I?")])).await;
    let mut message = asked["message"].clone();
    let call = tool_part(&mut message, "tool-where_am_i");
    assert_eq!(call["state"], "input-available", "{call}");
    // What `addToolOutput` does to the part.
    call["state"] = json!("output-available");
    call["output"] = json!({ "city": "Oslo" });
    let answered = ai_sdk_chat(&api, "chat-t", &json!([user("m1", "Where am I?"), message])).await;
    assert_eq!(answered["message"]["id"], message["id"]);
    let text = part(&answered["message"], "text");
    assert_eq!(text["text"], "You are in Oslo, and it is sunny.");
    // The model read the client's result, and the server's own call's result once.
    let results: Vec<String> = model.requests()[1]
        .messages
        .iter()
        .filter_map(|message| match message {
            Message::Tool(result) => Some(format!("{}={}", result.tool_call_id, result.content)),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(
        results.contains(&r#"call_l={"city":"Oslo"}"#.to_owned()),
        "{results:?}"
    );
    // Not stuck: the next message is answered.
    let next = ai_sdk_chat(
        &api,
        "chat-t",
        &json!([
            user("m1", "Where am I?"),
            answered["message"],
            user("m2", "Bye")
        ]),
    )
    .await;
    let text = part(&next["message"], "text");
    assert_eq!(text["text"], "Goodbye.");
}

static HANG_DROPPED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Sets [`HANG_DROPPED`] when the call holding it is dropped.
struct DropFlag;

impl Drop for DropFlag {
    fn drop(&mut self) {
        HANG_DROPPED.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Looks something up, forever.
#[agent_core::tool]
async fn hang() -> String {
    let _flag = DropFlag;
    std::future::pending::<String>().await
}

async fn a_client_that_goes_away_cancels_its_run() {
    let model = Arc::new(ScriptedModel::new([AssistantMessage::tool_calls([
        ToolCall::new("call_h", "hang", "{}"),
    ])]));
    let agent: Agent = Agent::new(Arc::clone(&model)).try_tool(hang {}).unwrap();
    let store = Arc::new(agent_core::session::MemorySessions::new());
    // Gone for longer than the window a reload has to rejoin the answer.
    let server = ChatServer::new(Arc::new(agent))
        .sessions(store.clone())
        .rejoin_within(std::time::Duration::from_millis(200));
    let base = serve_chat(server).await;
    let body = json!({ "id": "chat-h", "messages": [user("m1", "Look it up")] });
    // Read until the call is under way, then hang up.
    let headers = tests::chat::post_and_hang_up(&base, &body, "tool-input-available").await;
    assert_eq!(headers["x-vercel-ai-ui-message-stream"], "v1");
    let started = std::time::Instant::now();
    while !HANG_DROPPED.load(std::sync::atomic::Ordering::SeqCst) {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "the tool was not dropped"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    // The cancelled run is kept: its call answered as cancelled.
    let stored = loop {
        let stored = agent_core::session::SessionStore::load(&*store, "chat-h")
            .await
            .unwrap();
        if !stored.messages.is_empty() {
            break stored;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "nothing was saved"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    };
    let Some(Message::Tool(result)) = stored.messages.last() else {
        panic!("{:?}", stored.messages.last());
    };
    assert!(result.content.contains("cancelled"), "{}", result.content);
}

async fn the_page_is_served_whole_from_the_crate() {
    let agent: Agent = Agent::new(ScriptedModel::new(Vec::<AssistantMessage>::new()));
    let base = serve_chat(ChatServer::new(Arc::new(agent))).await;
    let reply = reqwest::get(format!("{base}/")).await.unwrap();
    assert_eq!(reply.status().as_u16(), 200);
    assert!(
        reply.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    let html = reply.text().await.unwrap();
    for hook in [
        r#"id="composer""#,
        r#"id="send""#,
        r#"id="new-chat""#,
        "/api/chat",
    ] {
        assert!(html.contains(hook), "the page has no {hook}");
    }
    // Self-contained: nothing loaded from elsewhere.
    assert!(!html.contains("<script src") && !html.contains("<link rel=\"stylesheet\""));
}

async fn a_model_failure_is_one_error_chunk_and_the_question_is_kept() {
    let model = ScriptedModel::from_steps([agent_core::testing::ScriptStep::error(|| {
        agent_core::ModelError::Overloaded {
            status: 529,
            message: "overloaded".into(),
        }
    })]);
    let agent: Agent = Agent::new(model);
    let store = Arc::new(agent_core::session::MemorySessions::new());
    let base = serve_chat(ChatServer::new(Arc::new(agent)).sessions(store.clone())).await;
    let body = json!({ "id": "chat-e", "messages": [user("m1", "Hello?")] });
    let text = reqwest::Client::new()
        .post(format!("{base}/api/chat"))
        .json(&body)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let errors: Vec<&str> = text
        .lines()
        .filter(|line| line.contains(r#""type":"error""#))
        .collect();
    assert_eq!(errors.len(), 1, "{text}");
    assert!(errors[0].contains("overloaded"), "{}", errors[0]);
    assert!(text.ends_with("data: [DONE]\n\n"), "{text}");
    let stored = agent_core::session::SessionStore::load(&*store, "chat-e")
        .await
        .unwrap();
    assert!(
        stored
            .messages
            .iter()
            .any(|message| message.content() == "Hello?")
    );
}

fn main() -> std::process::ExitCode {
    tests::peers::main([
        Test::tokio(
            "the_ai_sdk_rebuilds_the_message_we_streamed",
            the_ai_sdk_rebuilds_the_message_we_streamed,
        )
        .needs(&AI_SDK),
        Test::tokio(
            "a_forgotten_chat_starts_afresh",
            a_forgotten_chat_starts_afresh,
        )
        .needs(&AI_SDK),
        Test::tokio(
            "an_answers_metadata_reaches_the_client",
            an_answers_metadata_reaches_the_client,
        )
        .needs(&AI_SDK),
        Test::tokio(
            "an_approval_goes_out_as_a_request_and_the_answer_resumes_the_run",
            an_approval_goes_out_as_a_request_and_the_answer_resumes_the_run,
        )
        .needs(&AI_SDK),
        Test::tokio(
            "a_denial_ends_the_call_as_denied_in_the_same_message",
            a_denial_ends_the_call_as_denied_in_the_same_message,
        )
        .needs(&AI_SDK),
        Test::tokio(
            "a_tools_image_reaches_the_client_as_a_file",
            a_tools_image_reaches_the_client_as_a_file,
        )
        .needs(&AI_SDK),
        Test::tokio(
            "a_client_side_tool_is_answered_by_the_client",
            a_client_side_tool_is_answered_by_the_client,
        )
        .needs(&AI_SDK),
        Test::tokio(
            "a_client_that_goes_away_cancels_its_run",
            a_client_that_goes_away_cancels_its_run,
        ),
        Test::tokio(
            "the_page_is_served_whole_from_the_crate",
            the_page_is_served_whole_from_the_crate,
        ),
        Test::tokio(
            "a_model_failure_is_one_error_chunk_and_the_question_is_kept",
            a_model_failure_is_one_error_chunk_and_the_question_is_kept,
        ),
        Test::tokio(
            "bad_requests_get_a_400_and_never_reach_the_model",
            bad_requests_get_a_400_and_never_reach_the_model,
        ),
    ])
}
