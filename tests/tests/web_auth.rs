//! Who is asking, and how much they may ask: a `ChatServer` given an `identify` function, served
//! on a loopback port and driven over HTTP with a scripted model. Chats are the caller's own
//! (another user's chat id is a `404` on every route, existing or not, and nothing of it changes),
//! tools see the caller's context, and per-user limits answer `429` with `retry-after`.

use std::sync::Arc;
use std::time::Duration;

use agent_core::session::{Conversation, MemorySessions, SessionStore};
use agent_core::testing::ScriptedModel;
use agent_core::{Agent, AssistantMessage, ChatResponse, State, ToolCall, Usage};
use agent_web::{ChatOwner, ChatServer, UserLimits};
use axum::http::StatusCode;
use serde_json::{Value, json};
use tests::chat::user;

/// The signed-in user: the run's context.
#[derive(Clone, Debug)]
struct UserId(String);

impl ChatOwner for UserId {
    fn owner(&self) -> &str {
        &self.0
    }
}

/// Says who is asking.
#[agent_core::tool]
fn whoami(State(user): State<UserId>) -> String {
    format!("you are {}", user.0)
}

/// Deletes every file in a folder.
#[agent_core::tool(requires_approval)]
fn wipe(
    /// The folder.
    folder: String,
) -> String {
    format!("wiped {folder}")
}

/// Lets a held call go.
static RELEASE: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// Looks something up, slowly: until the test lets it go.
#[agent_core::tool]
async fn slow() -> String {
    RELEASE.notified().await;
    "found".to_owned()
}

/// Where the person is: the browser answers.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Nothing {}

/// The sign-in: `authorization: Bearer token-<name>` is user `<name>`, for Ann and Bob.
async fn sign_in(parts: axum::http::request::Parts) -> Result<UserId, (StatusCode, String)> {
    let header = parts
        .headers
        .get("authorization")
        .and_then(|value| value.to_str().ok())
        .ok_or((StatusCode::UNAUTHORIZED, "sign in first".to_owned()))?;
    match header.strip_prefix("Bearer token-") {
        Some(name @ ("ann" | "bob")) => Ok(UserId(name.to_owned())),
        _ => Err((
            StatusCode::UNAUTHORIZED,
            "that token is no one's".to_owned(),
        )),
    }
}

/// Notes whose runs ask the model: the owner of each model request's context.
struct Seen(Arc<std::sync::Mutex<Vec<String>>>);

impl agent_core::Hooks<UserId> for Seen {
    fn on_model_request(&self, user: &UserId, _: usize, _: &[agent_core::Message]) {
        self.0.lock().unwrap().push(user.0.clone());
    }
}

/// A server for `model` with every kind of tool, identifying callers, with `limits`; its base URL
/// and its store.
async fn serve(
    model: &Arc<ScriptedModel>,
    limits: Option<UserLimits>,
) -> (String, Arc<MemorySessions>) {
    let (base, store, _) = serve_seeing(model, limits).await;
    (base, store)
}

/// [`serve`], and the users its hook saw ask the model, in order.
async fn serve_seeing(
    model: &Arc<ScriptedModel>,
    limits: Option<UserLimits>,
) -> (
    String,
    Arc<MemorySessions>,
    Arc<std::sync::Mutex<Vec<String>>>,
) {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let agent: Agent<UserId> = Agent::new(Arc::clone(model))
        .try_tool(whoami {})
        .unwrap()
        .try_tool(wipe {})
        .unwrap()
        .try_tool(slow {})
        .unwrap()
        .try_tool(agent_core::ExternalTool::new::<Nothing>(
            "where_am_i",
            "Where the user is.",
        ))
        .unwrap()
        .hook(Seen(Arc::clone(&seen)))
        .defer_approvals();
    let store = Arc::new(MemorySessions::new());
    let mut server = ChatServer::new(Arc::new(agent))
        .identify(sign_in)
        .sessions(store.clone());
    if let Some(limits) = limits {
        server = server.limits(limits);
    }
    (tests::serve_chat(server).await, store, seen)
}

/// A reply: its status, `retry-after`, and body (the stream's chunks, or the error).
struct Reply {
    status: u16,
    retry_after: Option<String>,
    body: String,
}

impl Reply {
    /// The stream's JSON chunks.
    fn chunks(&self) -> Vec<Value> {
        self.body
            .lines()
            .filter_map(|line| line.strip_prefix("data: "))
            .filter(|data| *data != "[DONE]")
            .map(|data| serde_json::from_str(data).unwrap())
            .collect()
    }

    /// The answer's message id (its `start` chunk's).
    fn message_id(&self) -> String {
        let chunks = self.chunks();
        chunks[0]["messageId"].as_str().unwrap().to_owned()
    }

    /// The outputs of the calls answered in the stream.
    fn outputs(&self) -> Vec<Value> {
        self.chunks()
            .into_iter()
            .filter(|chunk| chunk["type"] == "tool-output-available")
            .map(|chunk| chunk["output"].clone())
            .collect()
    }

    /// The grant the stream gave a call the run waits on (its `data-call-grant` part).
    fn grant(&self) -> Value {
        let chunks = self.chunks();
        let grant = chunks
            .iter()
            .find(|chunk| chunk["type"] == "data-call-grant");
        grant
            .unwrap_or_else(|| panic!("no grant in {chunks:?}"))
            .clone()
    }

    fn error(&self) -> String {
        let error: Value =
            serde_json::from_str(&self.body).unwrap_or_else(|_| panic!("{}", self.body));
        error["error"].as_str().unwrap().to_owned()
    }
}

/// Posts `body` to the chat endpoint as `who` (a token, or nobody), and reads the whole reply.
async fn post(base: &str, who: Option<&str>, body: &Value) -> Reply {
    let mut request = reqwest::Client::new()
        .post(format!("{base}/api/chat"))
        .json(body);
    if let Some(token) = who {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    let reply = request.send().await.unwrap();
    let status = reply.status().as_u16();
    let retry_after = reply
        .headers()
        .get("retry-after")
        .map(|value| value.to_str().unwrap().to_owned());
    let body = reply.text().await.unwrap();
    Reply {
        status,
        retry_after,
        body,
    }
}

/// Asks the endpoint to forget chat `chat`, as `who`.
async fn forget(base: &str, who: &str, chat: &str) -> Reply {
    let path = format!("/api/chat/{chat}");
    call(base, reqwest::Method::DELETE, &path, who, None).await
}

/// Reads chat `chat` back, as `who`.
async fn read_back(base: &str, who: &str, chat: &str) -> Reply {
    let path = format!("/api/chat/{chat}");
    call(base, reqwest::Method::GET, &path, who, None).await
}

/// The chat `chat` of `owner` as stored.
async fn stored(store: &MemorySessions, owner: &str, chat: &str) -> Conversation {
    store.load(&format!("{owner}\u{1f}{chat}")).await.unwrap()
}

#[tokio::test]
async fn another_users_chat_is_a_404_on_every_route_and_stays_as_it_was() {
    let model = Arc::new(ScriptedModel::new([AssistantMessage::tool_calls([
        ToolCall::new("call_w", "wipe", r#"{"folder":"/tmp/old"}"#),
    ])]));
    let (base, store) = serve(&model, None).await;
    // Ann's chat waits for her approval.
    let asked = post(
        &base,
        Some("token-ann"),
        &json!({ "id": "chat-a", "messages": [user("m1", "Clean /tmp/old")] }),
    )
    .await;
    assert_eq!(asked.status, 200, "{}", asked.body);
    assert!(
        asked.body.contains("tool-approval-request"),
        "{}",
        asked.body
    );
    let answer_id = asked.message_id();
    let grant = asked.grant();
    let before = stored(&store, "ann", "chat-a").await;
    assert!(before.paused.is_some());
    let asked_model = model.requests().len();

    let call = |state: &str, extra: Value| {
        let mut part = json!({
            "type": "tool-wipe", "toolCallId": "call_w", "state": state,
            "input": { "folder": "/tmp/old" }
        });
        part.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        json!({ "id": answer_id, "role": "assistant", "parts": [part, grant.clone()] })
    };
    let approved = call(
        "approval-responded",
        json!({ "approval": { "id": "call_w", "approved": true } }),
    );
    let client_answer = json!({
        "id": answer_id, "role": "assistant",
        "parts": [{ "type": "tool-where_am_i", "toolCallId": "call_w", "state": "output-available",
                    "input": {}, "output": { "city": "Oslo" } }]
    });
    // What Bob's client sends for a chat id, on every route: going on with a new message, an
    // approval, a client-side tool's result, a regenerate, an edit.
    let attempts = |chat: &str| {
        [
            (
                "a new message",
                json!({ "id": chat, "messages": [
                user("m1", "Clean /tmp/old"), call("input-available", json!({})), user("m2", "And /tmp/new")
            ] }),
            ),
            (
                "an approval",
                json!({ "id": chat, "messages": [user("m1", "Clean /tmp/old"), approved.clone()] }),
            ),
            (
                "a client-side tool's result",
                json!({ "id": chat, "messages": [user("m1", "Clean /tmp/old"), client_answer.clone()] }),
            ),
            (
                "a regenerate",
                json!({ "id": chat, "trigger": "regenerate-message", "messageId": answer_id,
                                     "messages": [user("m1", "Clean /tmp/old")] }),
            ),
            (
                "an edit",
                json!({ "id": chat, "messageId": "m1", "messages": [user("m1", "Clean /tmp/all")] }),
            ),
        ]
    };
    // Ann's chat and a chat no one has are answered alike.
    for chat in ["chat-a", "chat-none"] {
        for (route, body) in attempts(chat) {
            let reply = post(&base, Some("token-bob"), &body).await;
            assert_eq!(reply.status, 404, "{route} on {chat}: {}", reply.body);
            assert_eq!(
                reply.error(),
                format!("there is no chat `{chat}`"),
                "{route}"
            );
        }
        let deleted = forget(&base, "token-bob", chat).await;
        assert_eq!(deleted.status, 404, "a delete on {chat}: {}", deleted.body);
        assert_eq!(deleted.error(), format!("there is no chat `{chat}`"));
        let read = read_back(&base, "token-bob", chat).await;
        assert_eq!(read.status, 404, "a read of {chat}: {}", read.body);
        assert_eq!(read.error(), format!("there is no chat `{chat}`"));
    }
    // Ann reads hers back, its approval still asked for.
    let read = read_back(&base, "token-ann", "chat-a").await;
    assert_eq!(read.status, 200, "{}", read.body);
    let messages: Value = serde_json::from_str(&read.body).unwrap();
    assert_eq!(messages[1]["parts"][1]["state"], "approval-requested");
    assert_eq!(stored(&store, "ann", "chat-a").await, before);
    assert_eq!(model.requests().len(), asked_model, "Bob reached the model");
    assert_eq!(
        store.ids(),
        ["ann\u{1f}chat-a"],
        "Bob's attempts wrote a chat"
    );

    // Bob's own first message under that id is a chat of his, and Ann's is untouched.
    model.push(AssistantMessage::tool_calls([ToolCall::new(
        "call_b", "whoami", "{}",
    )]));
    model.push(AssistantMessage::text("Hello Bob."));
    let bobs = post(
        &base,
        Some("token-bob"),
        &json!({ "id": "chat-a", "messages": [user("b1", "Who am I?")] }),
    )
    .await;
    assert_eq!(bobs.status, 200, "{}", bobs.body);
    assert_eq!(bobs.outputs(), [json!("you are bob")]);
    assert_eq!(stored(&store, "ann", "chat-a").await, before);
    assert_eq!(stored(&store, "bob", "chat-a").await.messages.len(), 5);

    // Ann's approval still goes through, in her chat.
    model.push(AssistantMessage::text("Wiped."));
    let resumed = post(
        &base,
        Some("token-ann"),
        &json!({ "id": "chat-a", "messages": [user("m1", "Clean /tmp/old"), approved] }),
    )
    .await;
    assert_eq!(resumed.status, 200, "{}", resumed.body);
    assert_eq!(resumed.outputs(), [json!("wiped /tmp/old")]);

    // Ann forgets her chat: gone from the store, Bob's untouched; a second delete finds nothing,
    // and her next message under that id starts afresh.
    let deleted = forget(&base, "token-ann", "chat-a").await;
    assert_eq!(deleted.status, 204, "{}", deleted.body);
    let forgotten = stored(&store, "ann", "chat-a").await;
    assert!(forgotten.messages.is_empty() && forgotten.paused.is_none());
    assert_eq!(stored(&store, "bob", "chat-a").await.messages.len(), 5);
    assert_eq!(forget(&base, "token-ann", "chat-a").await.status, 404);
    model.push(AssistantMessage::text("Hello again."));
    let again = post(
        &base,
        Some("token-ann"),
        &json!({ "id": "chat-a", "messages": [user("n1", "Hi")] }),
    )
    .await;
    assert_eq!(again.status, 200, "{}", again.body);
    let shown = model.last_request().unwrap();
    assert_eq!(shown.messages.len(), 2, "the model saw the forgotten chat");
    assert_eq!(stored(&store, "ann", "chat-a").await.messages.len(), 3);
}

/// The texts of a stored chat's messages after its system prompt.
fn lines(conversation: &Conversation) -> Vec<String> {
    conversation
        .messages
        .iter()
        .skip(1)
        .map(|message| message.content().to_owned())
        .collect()
}

#[tokio::test]
async fn an_owner_goes_on_with_their_own_chat_on_every_route() {
    let model = Arc::new(ScriptedModel::new(
        ["One.", "Again.", "Edited answer.", "Two."].map(AssistantMessage::text),
    ));
    let (base, store) = serve(&model, None).await;
    let ann = Some("token-ann");
    let first = post(
        &base,
        ann,
        &json!({ "id": "chat-1", "messages": [user("m1", "Hi")] }),
    )
    .await;
    assert_eq!(first.status, 200, "{}", first.body);
    let regenerate = json!({ "id": "chat-1", "trigger": "regenerate-message",
                             "messageId": first.message_id(), "messages": [user("m1", "Hi")] });
    let again = post(&base, ann, &regenerate).await;
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(
        lines(&stored(&store, "ann", "chat-1").await),
        ["Hi", "Again."]
    );
    let edit = json!({ "id": "chat-1", "messageId": "m1", "messages": [user("m1", "Hello")] });
    let edited = post(&base, ann, &edit).await;
    assert_eq!(edited.status, 200, "{}", edited.body);
    assert_eq!(
        lines(&stored(&store, "ann", "chat-1").await),
        ["Hello", "Edited answer."]
    );
    let answer = json!({ "id": edited.message_id(), "role": "assistant",
                         "parts": [{ "type": "text", "text": "Edited answer." }] });
    let next =
        json!({ "id": "chat-1", "messages": [user("m1", "Hello"), answer, user("m2", "More")] });
    let two = post(&base, ann, &next).await;
    assert_eq!(two.status, 200, "{}", two.body);
    assert_eq!(
        lines(&stored(&store, "ann", "chat-1").await),
        ["Hello", "Edited answer.", "More", "Two."]
    );
}

#[tokio::test]
async fn each_run_has_its_callers_context_in_its_tools_and_hooks() {
    let model = Arc::new(ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new("call_1", "whoami", "{}")]),
        AssistantMessage::text("That is you."),
        AssistantMessage::tool_calls([ToolCall::new("call_2", "whoami", "{}")]),
        AssistantMessage::text("That is you."),
    ]));
    let (base, _, seen) = serve_seeing(&model, None).await;
    for (token, said) in [("token-ann", "you are ann"), ("token-bob", "you are bob")] {
        let reply = post(
            &base,
            Some(token),
            &json!({ "id": "chat-1", "messages": [user("m1", "Who am I?")] }),
        )
        .await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        assert_eq!(reply.outputs(), [json!(said)]);
    }
    // The hooks got the same context, step by step.
    assert_eq!(*seen.lock().unwrap(), ["ann", "ann", "bob", "bob"]);
}

#[tokio::test]
async fn no_credential_or_a_bad_one_is_a_401_with_the_functions_body() {
    let model = Arc::new(ScriptedModel::new(Vec::<AssistantMessage>::new()));
    let (base, store) = serve(&model, None).await;
    let body = json!({ "id": "chat-1", "messages": [user("m1", "Hi")] });
    let nobody = post(&base, None, &body).await;
    assert_eq!(
        (nobody.status, nobody.body.as_str()),
        (401, "sign in first")
    );
    let forged = post(&base, Some("token-eve"), &body).await;
    assert_eq!(
        (forged.status, forged.body.as_str()),
        (401, "that token is no one's")
    );
    assert!(model.requests().is_empty());
    assert!(store.ids().is_empty());
}

/// A reply of `tokens` tokens in all.
fn costing(text: &str, tokens: u64) -> ChatResponse {
    ChatResponse::new(AssistantMessage::text(text))
        .with_usage(Usage::new(tokens / 2, tokens - tokens / 2))
}

#[tokio::test]
async fn over_the_request_budget_is_a_429_until_the_window_ends() {
    let window = Duration::from_secs(3);
    let model = Arc::new(ScriptedModel::new(
        ["One.", "Two.", "Bob.", "Three."].map(AssistantMessage::text),
    ));
    let (base, store) = serve(&model, Some(UserLimits::new().requests(2, window))).await;
    let ask = |id: &str, text: &str| json!({ "id": "chat-1", "messages": [user(id, text)] });
    assert_eq!(
        post(&base, Some("token-ann"), &ask("m1", "1")).await.status,
        200
    );
    assert_eq!(
        post(&base, Some("token-ann"), &ask("m2", "2")).await.status,
        200
    );
    let kept = stored(&store, "ann", "chat-1").await;
    let over = post(&base, Some("token-ann"), &ask("m3", "3")).await;
    assert_eq!(over.status, 429, "{}", over.body);
    let wait: u64 = over.retry_after.as_deref().unwrap().parse().unwrap();
    assert!((1..=3).contains(&wait), "{wait}");
    assert_eq!(stored(&store, "ann", "chat-1").await, kept);
    assert_eq!(model.requests().len(), 2);
    // Another user has a budget of their own.
    assert_eq!(
        post(&base, Some("token-bob"), &ask("b1", "hi"))
            .await
            .status,
        200
    );
    // After the window, Ann is served again: the wait is the one the limiter gave, which it counts
    // from its own window's start (rounded up to whole seconds), not from this test's.
    tokio::time::sleep(Duration::from_secs(wait)).await;
    let again = post(&base, Some("token-ann"), &ask("m3", "3")).await;
    assert_eq!(again.status, 200, "{}", again.body);
    assert!(again.body.contains("Three."), "{}", again.body);
}

#[tokio::test]
async fn over_the_token_budget_is_a_429() {
    let model = Arc::new(ScriptedModel::new([
        costing("Long.", 150),
        costing("Bob.", 10),
    ]));
    let limits = UserLimits::new().tokens(100, Duration::from_secs(60));
    let (base, store) = serve(&model, Some(limits)).await;
    let ask = |id: &str| json!({ "id": "chat-1", "messages": [user(id, "Tell me everything")] });
    // The run that crosses the budget finishes; the next does not start.
    assert_eq!(post(&base, Some("token-ann"), &ask("m1")).await.status, 200);
    let kept = stored(&store, "ann", "chat-1").await;
    let over = post(&base, Some("token-ann"), &ask("m2")).await;
    assert_eq!(over.status, 429, "{}", over.body);
    assert!(over.retry_after.is_some());
    assert_eq!(stored(&store, "ann", "chat-1").await, kept);
    assert_eq!(post(&base, Some("token-bob"), &ask("b1")).await.status, 200);
}

#[tokio::test]
async fn over_the_concurrent_runs_cap_is_a_429_while_a_run_holds() {
    use futures_util::StreamExt;

    let model = Arc::new(ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new("call_s", "slow", "{}")]),
        AssistantMessage::text("Hi Bob."),
        AssistantMessage::text("Found it."),
        AssistantMessage::text("Next."),
    ]));
    let (base, store) = serve(&model, Some(UserLimits::new().concurrent_runs(1))).await;
    // Ann's first run holds in its slow tool.
    let held = reqwest::Client::new()
        .post(format!("{base}/api/chat"))
        .header("authorization", "Bearer token-ann")
        .json(&json!({ "id": "chat-1", "messages": [user("m1", "Look it up")] }))
        .send()
        .await
        .unwrap();
    let mut stream = held.bytes_stream();
    let mut seen = String::new();
    while !seen.contains("tool-input-available") {
        let piece = stream.next().await.expect("more of the stream").unwrap();
        seen.push_str(&String::from_utf8_lossy(&piece));
    }
    let other = json!({ "id": "chat-2", "messages": [user("n1", "Meanwhile?")] });
    let kept = stored(&store, "ann", "chat-2").await;
    let busy = post(&base, Some("token-ann"), &other).await;
    assert_eq!(busy.status, 429, "{}", busy.body);
    assert_eq!(busy.retry_after.as_deref(), Some("1"));
    assert_eq!(stored(&store, "ann", "chat-2").await, kept);
    // Bob is not held up by Ann.
    let bob = post(
        &base,
        Some("token-bob"),
        &json!({ "id": "chat-1", "messages": [user("b1", "Hi")] }),
    )
    .await;
    assert_eq!(bob.status, 200, "{}", bob.body);
    assert!(bob.body.contains("Hi Bob."), "{}", bob.body);
    // Once Ann's run ends, her next is served.
    RELEASE.notify_one();
    while let Some(piece) = stream.next().await {
        seen.push_str(&String::from_utf8_lossy(&piece.unwrap()));
    }
    assert!(seen.contains("Found it."), "{seen}");
    let next = post(&base, Some("token-ann"), &other).await;
    assert_eq!(next.status, 200, "{}", next.body);
    assert!(next.body.contains("Next."), "{}", next.body);
}

/// Sends `method` to `path` of the server at `base` as `who`, with `body` if any.
async fn call(
    base: &str,
    method: reqwest::Method,
    path: &str,
    who: &str,
    body: Option<Value>,
) -> Reply {
    let mut request = reqwest::Client::new()
        .request(method, format!("{base}{path}"))
        .header("authorization", format!("Bearer {who}"));
    if let Some(body) = body {
        request = request.json(&body);
    }
    let reply = request.send().await.unwrap();
    Reply {
        status: reply.status().as_u16(),
        retry_after: None,
        body: reply.text().await.unwrap(),
    }
}

/// A user's chats as `GET /api/chats` lists them: id and title, newest first.
async fn chats(base: &str, who: &str) -> Vec<(String, Option<String>)> {
    let listed = call(base, reqwest::Method::GET, "/api/chats", who, None).await;
    assert_eq!(listed.status, 200, "{}", listed.body);
    let listed: Value = serde_json::from_str(&listed.body).unwrap();
    listed
        .as_array()
        .unwrap()
        .iter()
        .map(|chat| {
            assert!(chat["updatedAt"].as_u64().unwrap() > 0, "{chat}");
            let title = chat["title"].as_str().map(str::to_owned);
            (chat["id"].as_str().unwrap().to_owned(), title)
        })
        .collect()
}

#[tokio::test]
async fn a_users_chats_are_listed_titled_renamed_and_forgotten() {
    let model = Arc::new(ScriptedModel::new(
        ["Rain.", "Three days.", "Sunny.", "Hi Bob."].map(AssistantMessage::text),
    ));
    let (base, _) = serve(&model, None).await;
    let ask =
        |chat: &str, id: &str, text: &str| json!({ "id": chat, "messages": [user(id, text)] });
    for (chat, text) in [("chat-1", "Weather in Oslo?"), ("chat-2", "Plan a trip")] {
        let reply = post(&base, Some("token-ann"), &ask(chat, "m1", text)).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let titled = |id: &str, title: &str| (id.to_owned(), Some(title.to_owned()));
    assert_eq!(
        chats(&base, "token-ann").await,
        [
            titled("chat-2", "Plan a trip"),
            titled("chat-1", "Weather in Oslo?")
        ]
    );
    // A later question keeps the title and brings the chat to the top.
    let answer = json!({ "id": "x", "role": "assistant", "parts": [] });
    let next = json!({ "id": "chat-1", "messages": [user("m1", "Weather in Oslo?"), answer, user("m2", "And tomorrow?")] });
    assert_eq!(post(&base, Some("token-ann"), &next).await.status, 200);
    assert_eq!(
        chats(&base, "token-ann").await,
        [
            titled("chat-1", "Weather in Oslo?"),
            titled("chat-2", "Plan a trip")
        ]
    );
    // Bob has chats of his own only.
    assert_eq!(
        post(&base, Some("token-bob"), &ask("chat-9", "b1", "Hi"))
            .await
            .status,
        200
    );
    assert_eq!(chats(&base, "token-bob").await, [titled("chat-9", "Hi")]);

    // Renamed by its owner; another user's rename of it is a 404, as everywhere.
    let rename = |title: Value| Some(json!({ "title": title }));
    let patch = reqwest::Method::PATCH;
    let renamed = call(
        &base,
        patch.clone(),
        "/api/chat/chat-2",
        "token-ann",
        rename(json!("Fjords")),
    )
    .await;
    assert_eq!(renamed.status, 204, "{}", renamed.body);
    let refused = call(
        &base,
        patch.clone(),
        "/api/chat/chat-2",
        "token-bob",
        rename(json!("Mine")),
    )
    .await;
    assert_eq!(refused.status, 404, "{}", refused.body);
    let bad = call(
        &base,
        patch,
        "/api/chat/chat-2",
        "token-ann",
        Some(json!({ "name": "x" })),
    )
    .await;
    assert_eq!(bad.status, 400, "{}", bad.body);
    assert_eq!(
        chats(&base, "token-ann").await,
        [
            titled("chat-1", "Weather in Oslo?"),
            titled("chat-2", "Fjords")
        ]
    );

    // Forgotten: gone from the list.
    assert_eq!(forget(&base, "token-ann", "chat-1").await.status, 204);
    assert_eq!(
        chats(&base, "token-ann").await,
        [titled("chat-2", "Fjords")]
    );
}
