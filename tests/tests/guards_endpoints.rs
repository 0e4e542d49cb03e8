//! Guards seen through the three endpoints, over loopback HTTP with a scripted model: a run a
//! guard trips reaches the web chat as one `error` chunk naming the guard (and none of the
//! answer it stopped, when the answer is held back), AG-UI as `RUN_ERROR` with the code
//! `guard_tripped`, and A2A as a task that failed with the trip as its status message; a call a
//! guard refuses reaches the web chat as the tool's error, and the run goes on to its answer.

use std::sync::Arc;

use agent_a2a::A2aServer;
use agent_agui::AguiServer;
use agent_core::guard::{At, HoldBack, Verdict, What, guard_fn};
use agent_core::testing::ScriptedModel;
use agent_core::{Agent, AssistantMessage, Message, ToolCall};
use agent_web::ChatServer;
use serde_json::{Value, json};
use tests::chat::user;
use tests::{get_weather, serve_chat};

/// The word the scripted answer gives away, which the answer guard stops.
const SECRET: &str = "swordfish";

/// The answer the scripted model gives: it holds [`SECRET`].
fn leaky_answer() -> AssistantMessage {
    AssistantMessage::text(format!("The vault's password is {SECRET}."))
}

/// An agent on `model` whose answer guard, `no secrets`, trips on an answer that holds
/// [`SECRET`], with the answer's streamed text held back as `hold_back` says.
fn guarded_answer(model: &ScriptedModel, hold_back: HoldBack) -> Agent {
    Agent::new(model.clone())
        .guard(
            At::ANSWER,
            guard_fn("no secrets", |checked| match &checked.what {
                What::Answer { text, .. } if text.contains(SECRET) => {
                    Verdict::trip("the answer gives a password away")
                }
                _ => Verdict::Allow,
            }),
        )
        .hold_back(hold_back)
}

/// What the error of a run that `no secrets` tripped at the answer says.
const ANSWER_TRIP: &str = "the guard `no secrets` stopped the run at the answer: the answer gives \
                           a password away";

// ---- the web chat (the AI SDK's UI message stream) ---------------------------------------------

/// Posts the person's `text` to the chat endpoint at `base` in chat `chat`; the stream's text.
async fn chat(base: &str, chat: &str, text: &str) -> String {
    let body = json!({ "id": chat, "messages": [user("m1", text)] });
    let reply = reqwest::Client::new()
        .post(format!("{base}/api/chat"))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status().as_u16(), 200);
    assert_eq!(reply.headers()["x-vercel-ai-ui-message-stream"], "v1");
    reply.text().await.unwrap()
}

/// The chunks of a UI message stream, each a JSON value; checks it ends with `[DONE]`.
fn chunks(stream: &str) -> Vec<Value> {
    assert!(stream.trim_end().ends_with("data: [DONE]"), "{stream}");
    stream
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter(|data| *data != "[DONE]")
        .map(|data| serde_json::from_str(data).unwrap())
        .collect()
}

/// The chunks of type `kind`.
fn of_type<'c>(chunks: &'c [Value], kind: &str) -> Vec<&'c Value> {
    chunks
        .iter()
        .filter(|chunk| chunk["type"] == kind)
        .collect()
}

/// The texts of the stream's `text-delta` chunks, joined.
fn streamed_text(chunks: &[Value]) -> String {
    of_type(chunks, "text-delta")
        .iter()
        .map(|chunk| chunk["delta"].as_str().unwrap())
        .collect()
}

/// The stream's one `error` chunk's `errorText`; fails unless there is exactly one, and it is the
/// last chunk (nothing after it but `[DONE]`: no `finish`).
fn the_error(chunks: &[Value]) -> &str {
    let errors = of_type(chunks, "error");
    assert_eq!(errors.len(), 1, "{chunks:?}");
    assert_eq!(chunks.last(), Some(errors[0]), "{chunks:?}");
    assert!(of_type(chunks, "finish").is_empty(), "{chunks:?}");
    errors[0]["errorText"].as_str().unwrap()
}

/// An answer held back whole and tripped: the stream's error chunk names the guard and its
/// message, and not a word of the answer reached the stream.
#[tokio::test]
async fn web_a_tripped_answer_held_back_is_an_error_chunk_and_no_text() {
    let model = ScriptedModel::new([leaky_answer()]);
    let agent = guarded_answer(&model, HoldBack::All);
    let base = serve_chat(ChatServer::new(Arc::new(agent))).await;
    let stream = chat(&base, "chat-trip", "What is the vault's password?").await;
    let chunks = chunks(&stream);
    assert_eq!(the_error(&chunks), ANSWER_TRIP);
    assert!(of_type(&chunks, "text-delta").is_empty(), "{chunks:?}");
    assert!(!stream.contains(SECRET), "{stream}");
    assert_eq!(chunks[0]["type"], "start");
    assert_eq!(model.requests().len(), 1);
}

/// The same answer not held back: its text streamed before the guard saw the whole of it, so it
/// is in the stream, and the error comes after it (what `HoldBack::All` prevents above).
#[tokio::test]
async fn web_a_tripped_answer_not_held_back_was_streamed_before_the_error() {
    let model = ScriptedModel::new([leaky_answer()]);
    let agent = guarded_answer(&model, HoldBack::None);
    let base = serve_chat(ChatServer::new(Arc::new(agent))).await;
    let stream = chat(&base, "chat-late", "What is the vault's password?").await;
    let chunks = chunks(&stream);
    assert_eq!(the_error(&chunks), ANSWER_TRIP);
    assert!(streamed_text(&chunks).contains(SECRET), "{chunks:?}");
}

/// The same password said by a reply that also calls a tool, held back whole and with a window:
/// the guard sees the reply's text before it goes, so none of it reaches the stream, and the
/// tool never runs.
#[tokio::test]
async fn web_a_tripped_reply_that_calls_a_tool_leaks_no_text() {
    for hold_back in [HoldBack::All, HoldBack::Window(16)] {
        let model = ScriptedModel::new([
            leaky_answer().with_tool_call(ToolCall::new("c1", "get_weather", r#"{"city":"Oslo"}"#)),
            AssistantMessage::text("Done."),
        ]);
        let agent = guarded_answer(&model, hold_back)
            .try_tool(get_weather {})
            .unwrap();
        let base = serve_chat(ChatServer::new(Arc::new(agent))).await;
        let stream = chat(&base, "chat-call", "What is the vault's password?").await;
        let chunks = chunks(&stream);
        assert_eq!(the_error(&chunks), ANSWER_TRIP, "{hold_back:?}");
        assert!(!stream.contains(SECRET), "{hold_back:?}: {stream}");
        assert!(
            of_type(&chunks, "tool-output-available").is_empty(),
            "{hold_back:?}: {chunks:?}"
        );
        assert_eq!(model.requests().len(), 1, "{hold_back:?}");
    }
}

/// An input guard that trips: the same error chunk, and the model was never asked.
#[tokio::test]
async fn web_a_tripped_input_is_an_error_chunk_and_the_model_is_never_asked() {
    let model = ScriptedModel::new([AssistantMessage::text("Sure, here it is.")]);
    let agent = Agent::new(model.clone()).guard(
        At::INPUT,
        guard_fn("no passwords", |checked| match &checked.what {
            What::Input(_) if checked.what.text().contains("hunter2") => {
                Verdict::trip("a password in the input")
            }
            _ => Verdict::Allow,
        }),
    );
    let base = serve_chat(ChatServer::new(Arc::new(agent))).await;
    let stream = chat(&base, "chat-input", "My password is hunter2, keep it.").await;
    let chunks = chunks(&stream);
    assert_eq!(
        the_error(&chunks),
        "the guard `no passwords` stopped the run at the input: a password in the input"
    );
    assert!(of_type(&chunks, "text-delta").is_empty(), "{chunks:?}");
    assert!(model.requests().is_empty(), "the model was asked");
}

/// A call guard that refuses: the call's card ends in the tool's error with the refusal's words,
/// the tool never ran (no output), and the run goes on to its answer, which finishes well.
#[tokio::test]
async fn web_a_refused_call_is_the_tools_error_and_the_run_goes_on() {
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new(
            "call_w",
            "get_weather",
            r#"{"city":"Paris"}"#,
        )]),
        AssistantMessage::text("The weather desk is closed; try later."),
    ]);
    let agent = Agent::new(model.clone())
        .try_tool(get_weather {})
        .unwrap()
        .guard(
            At::CALLS,
            guard_fn("weather desk", |checked| match &checked.what {
                What::Call { call, .. } if call.name == "get_weather" => {
                    Verdict::Refuse("the weather desk is closed today".into())
                }
                _ => Verdict::Allow,
            }),
        );
    let base = serve_chat(ChatServer::new(Arc::new(agent))).await;
    let stream = chat(&base, "chat-refuse", "Umbrella in Paris?").await;
    let chunks = chunks(&stream);

    let refused = of_type(&chunks, "tool-output-error");
    assert_eq!(refused.len(), 1, "{chunks:?}");
    assert_eq!(refused[0]["toolCallId"], "call_w");
    let error_text = refused[0]["errorText"].as_str().unwrap();
    assert!(
        error_text.contains("weather desk") && error_text.contains("closed today"),
        "{error_text}"
    );
    assert!(
        of_type(&chunks, "tool-output-available").is_empty(),
        "{chunks:?}"
    );
    assert!(of_type(&chunks, "error").is_empty(), "{chunks:?}");
    assert_eq!(
        streamed_text(&chunks),
        "The weather desk is closed; try later."
    );
    let finish = chunks.last().unwrap();
    assert_eq!(finish["type"], "finish");
    assert_eq!(finish["finishReason"], "stop");
    // The model read the refusal as the call's result.
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    let read = requests[1].messages.last().unwrap();
    assert!(
        matches!(read, Message::Tool(result) if result.is_error && result.content == error_text),
        "{read:?}"
    );
}

// ---- AG-UI -------------------------------------------------------------------------------------

/// Serves `server` on a loopback port; its endpoint's URL.
async fn serve_agui(server: AguiServer) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    tokio::spawn(server.serve(listener));
    url
}

/// Posts a `RunAgentInput` of thread `thread` whose message is the person's `text`; the events.
async fn agui_run(url: &str, thread: &str, text: &str) -> Vec<Value> {
    let body = json!({
        "threadId": thread, "runId": "run-1", "state": {}, "tools": [], "context": [],
        "forwardedProps": {}, "messages": [{"id": "m1", "role": "user", "content": text}]
    });
    let reply = reqwest::Client::new()
        .post(url)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status().as_u16(), 200);
    let text = reply.text().await.unwrap();
    text.split("\n\n")
        .filter(|frame| !frame.is_empty())
        .map(|frame| serde_json::from_str(frame.strip_prefix("data: ").unwrap()).unwrap())
        .collect()
}

/// A tripped answer ends the AG-UI run with `RUN_ERROR`, code `guard_tripped`, its message the
/// trip's; no text of the answer was sent, and no `RUN_FINISHED`.
#[tokio::test]
async fn agui_a_tripped_run_ends_with_run_error_guard_tripped() {
    let model = ScriptedModel::new([leaky_answer()]);
    let agent = guarded_answer(&model, HoldBack::All);
    let url = serve_agui(AguiServer::new(Arc::new(agent))).await;
    let events = agui_run(&url, "t-trip", "What is the vault's password?").await;
    assert_eq!(events[0]["type"], "RUN_STARTED");
    let end = events.last().unwrap();
    assert_eq!(
        *end,
        json!({"type": "RUN_ERROR", "message": ANSWER_TRIP, "code": "guard_tripped"}),
        "{events:?}"
    );
    let kinds: Vec<&str> = events
        .iter()
        .map(|event| event["type"].as_str().unwrap())
        .collect();
    assert!(!kinds.contains(&"TEXT_MESSAGE_CONTENT"), "{kinds:?}");
    assert!(!kinds.contains(&"RUN_FINISHED"), "{kinds:?}");
    let sent = serde_json::to_string(&events).unwrap();
    assert!(!sent.contains(SECRET), "{sent}");
}

// ---- A2A ---------------------------------------------------------------------------------------

/// Serves `server` on a loopback port; its base URL.
async fn serve_a2a(server: A2aServer) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(server.serve(listener));
    url
}

/// A JSON-RPC call of `method` with `params` to the A2A server at `url`, in A2A 1.0.
async fn rpc(url: &str, method: &str, params: Value) -> reqwest::Response {
    reqwest::Client::new()
        .post(url)
        .header("a2a-version", "1.0")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
        .send()
        .await
        .unwrap()
}

/// The params of a message from the person with the text `text`.
fn a2a_message(id: &str, text: &str) -> Value {
    json!({"message": {"messageId": id, "role": "ROLE_USER", "parts": [{"text": text}]}})
}

/// The text parts of a status's message, joined.
fn status_text(status: &Value) -> String {
    status["message"]["parts"]
        .as_array()
        .unwrap_or_else(|| panic!("a status message in {status}"))
        .iter()
        .filter_map(|part| part["text"].as_str())
        .collect()
}

/// `SendMessage` of a run whose answer the guard trips: the task failed, its status message is
/// the trip, and no artifact holds the answer it stopped; `GetTask` reads it the same.
#[tokio::test]
async fn a2a_send_message_of_a_tripped_run_fails_the_task() {
    let model = ScriptedModel::new([leaky_answer()]);
    let agent = guarded_answer(&model, HoldBack::All);
    let url = serve_a2a(A2aServer::new(Arc::new(agent))).await;
    let reply: Value = rpc(&url, "SendMessage", a2a_message("m1", "The password?"))
        .await
        .json()
        .await
        .unwrap();
    let task = &reply["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_FAILED", "{reply}");
    assert_eq!(task["status"]["message"]["role"], "ROLE_AGENT", "{reply}");
    assert_eq!(status_text(&task["status"]), ANSWER_TRIP);
    assert!(!reply.to_string().contains(SECRET), "{reply}");

    let read: Value = rpc(&url, "GetTask", json!({"id": task["id"]}))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(read["result"]["status"]["state"], "TASK_STATE_FAILED");
    assert_eq!(status_text(&read["result"]["status"]), ANSWER_TRIP);
}

/// `SendStreamingMessage` of the same run: the stream's last event moves the task to failed with
/// the trip as its message; no event before it carried the answer it stopped.
#[tokio::test]
async fn a2a_send_streaming_message_of_a_tripped_run_ends_failed() {
    let model = ScriptedModel::new([leaky_answer()]);
    let agent = guarded_answer(&model, HoldBack::All);
    let url = serve_a2a(A2aServer::new(Arc::new(agent))).await;
    let reply = rpc(
        &url,
        "SendStreamingMessage",
        a2a_message("m1", "The password?"),
    )
    .await;
    assert_eq!(reply.headers()["content-type"], "text/event-stream");
    let stream = reply.text().await.unwrap();
    let events: Vec<Value> = stream
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .map(|data| serde_json::from_str::<Value>(data).unwrap()["result"].clone())
        .collect();
    assert!(events[0]["task"]["id"].is_string(), "{stream}");
    let task_id = events[0]["task"]["id"].clone();
    let last = &events.last().unwrap()["statusUpdate"];
    assert_eq!(last["taskId"], task_id, "{stream}");
    assert_eq!(last["status"]["state"], "TASK_STATE_FAILED", "{stream}");
    assert_eq!(status_text(&last["status"]), ANSWER_TRIP);
    assert!(!stream.contains(SECRET), "{stream}");
    let failed = events
        .iter()
        .filter(|event| event.to_string().contains("TASK_STATE_FAILED"))
        .count();
    assert_eq!(failed, 1, "{stream}");
}
