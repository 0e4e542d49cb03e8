//! The web endpoint as `useChat` users meet it: the AI SDK's own `Chat` (the class `useChat` wraps)
//! with `DefaultChatTransport` sends messages, edits earlier ones, regenerates answers, approves
//! and denies calls and answers client-side tools against a real `ChatServer` over loopback
//! (`web/chat_session.mjs`). Each test checks the messages the chat ends with (one assistant
//! message per turn, each call in its final state), what the scripted model was shown, and what the
//! chat's session keeps; each ends with a normal message that is answered.

use std::sync::Arc;

use agent_core::session::{MemorySessions, SessionStore};
use agent_core::testing::{ScriptStep, ScriptedModel};
use agent_core::{Agent, AssistantMessage, Message, ModelError, Part, ToolCall};
use agent_sql::SqliteSessions;
use agent_web::ChatServer;
use serde_json::{Value, json};
use tests::get_weather;
use tests::node::{AI_SDK, ai_sdk_chat_session};
use tests::peers::Test;
use tests::{
    chat::{lines, part},
    wipe,
};

/// Look up today's weather for a city: a lookup that changes nothing, so an answer that called it
/// may be taken back whole (a regenerate or an edit keeps the steps of tools with effects).
#[agent_core::tool(read_only, name = "get_weather")]
fn weather_lookup(
    /// The city.
    city: String,
) -> String {
    format!("light rain in {city}")
}

/// Serves `server` on a loopback port; returns its chat endpoint's URL.
async fn serve(server: ChatServer) -> String {
    format!("{}/api/chat", tests::serve_chat(server).await)
}

/// A message as one line: its role, then its text, calls, results and files.
fn line(message: &Message) -> String {
    match message {
        Message::System { .. } => "system".to_owned(),
        Message::User { content, parts } => {
            let mut pieces: Vec<String> = Vec::new();
            if !content.is_empty() {
                pieces.push(content.clone());
            }
            for part in parts {
                match part {
                    Part::Text { text } => pieces.push(text.clone()),
                    media => pieces.push(media.media().unwrap().media_type.clone()),
                }
            }
            format!("user: {}", pieces.join(" | "))
        }
        Message::Assistant(reply) => {
            let mut pieces: Vec<String> = Vec::new();
            if !reply.content.is_empty() {
                pieces.push(reply.content.clone());
            }
            for call in &reply.tool_calls {
                pieces.push(format!("calls {}", call.name));
            }
            format!("assistant: {}", pieces.join(" | "))
        }
        Message::Tool(result) => format!("tool {}: {}", result.tool_call_id, result.content),
        other => format!("{other:?}"),
    }
}

/// Each request the model received, as the lines of the messages it was shown.
fn shown(model: &ScriptedModel) -> Vec<Vec<String>> {
    model
        .requests()
        .iter()
        .map(|request| request.messages.iter().map(line).collect())
        .collect()
}

/// The lines of the conversation `chat` keeps, after checking no run waits in it.
async fn kept(store: &dyn SessionStore, chat: &str) -> Vec<String> {
    let conversation = store.load(chat).await.unwrap();
    assert!(conversation.paused.is_none(), "{:?}", conversation.paused);
    conversation.messages.iter().map(line).collect()
}

/// What each request of a session posted: its trigger.
fn triggers(session: &Value) -> Vec<&str> {
    session["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|request| request["trigger"].as_str().unwrap())
        .collect()
}

/// A model that asks to wipe `/tmp/old`, then says each of `then`, and its agent, which leaves
/// the approval to the person.
fn wiping(then: &[&str]) -> (ScriptedModel, Agent) {
    let mut script = vec![AssistantMessage::tool_calls([ToolCall::new(
        "call_w",
        "wipe",
        r#"{"folder":"/tmp/old"}"#,
    )])];
    script.extend(then.iter().map(|text| AssistantMessage::text(*text)));
    let model = ScriptedModel::new(script);
    let agent = Agent::new(model.clone())
        .try_tool(wipe {})
        .unwrap()
        .defer_approvals();
    (model, agent)
}

/// The person approves (or denies) the call in the chat; `sendAutomaticallyWhen` sends the
/// answer back and the run goes on in the same message; the next message is answered.
async fn approved_or_denied(approve: bool) {
    let then = if approve {
        "Wiped."
    } else {
        "I left it alone."
    };
    let (model, agent) = wiping(&[then, "Anything else?"]);
    let store = Arc::new(MemorySessions::new());
    let api = serve(ChatServer::new(Arc::new(agent)).sessions(store.clone())).await;
    let session = ai_sdk_chat_session(
        &api,
        &json!({
            "chatId": "chat-a",
            "steps": [
                { "send": "Clean /tmp/old" },
                { "approve": approve, "reason": "not today" },
                { "send": "Thanks" }
            ]
        }),
    )
    .await;
    let asked = &session["steps"][0]["messages"];
    assert_eq!(
        lines(asked),
        [
            "user: Clean /tmp/old",
            "assistant: tool-wipe approval-requested"
        ]
    );
    let (state, output) = if approve {
        ("output-available", "wiped /tmp/old")
    } else {
        ("output-denied", "")
    };
    assert_eq!(
        lines(&session["messages"]),
        [
            "user: Clean /tmp/old".to_owned(),
            format!("assistant: tool-wipe {state} | {then}"),
            "user: Thanks".to_owned(),
            "assistant: Anything else?".to_owned(),
        ]
    );
    let answered = &session["messages"][1];
    assert_eq!(
        answered["id"], asked[1]["id"],
        "the answer went on in the message that asked"
    );
    if approve {
        assert_eq!(part(answered, "tool-wipe")["output"], output);
    }
    // The chat sent the answered message back by itself, then the next message.
    assert_eq!(triggers(&session), ["submit-message"; 3]);
    assert_eq!(
        session["requests"][1]["messages"],
        json!([asked[0]["id"], asked[1]["id"]])
    );

    let shown = shown(&model);
    assert_eq!(shown.len(), 3);
    let result = &shown[1][3];
    if approve {
        assert_eq!(result, "tool call_w: wiped /tmp/old");
    } else {
        assert!(
            result.starts_with("tool call_w: ") && result.contains("not today"),
            "{result}"
        );
    }
    assert_eq!(
        shown[2],
        [
            "system",
            "user: Clean /tmp/old",
            "assistant: calls wipe",
            result,
            &format!("assistant: {then}"),
            "user: Thanks"
        ]
    );
    let mut expected = shown[2].clone();
    expected.push("assistant: Anything else?".to_owned());
    assert_eq!(kept(&*store, "chat-a").await, expected);
}

async fn an_approved_call_runs_in_the_message_that_asked() {
    approved_or_denied(true).await;
}

async fn a_denied_call_ends_as_denied_in_the_message_that_asked() {
    approved_or_denied(false).await;
}

/// `regenerate()` replaces the last answer: the chat shows the new one in its place, the model is
/// asked the question again without the answer it replaces (and without the question twice), and
/// the session keeps the question once and the new answer. On both stores.
async fn a_regenerated_answer_replaces_the_last_one() {
    for store in [
        Arc::new(MemorySessions::new()) as Arc<dyn SessionStore>,
        Arc::new(SqliteSessions::in_memory().unwrap()),
    ] {
        let model = ScriptedModel::new([
            AssistantMessage::text("First answer."),
            AssistantMessage::text("Second answer."),
            AssistantMessage::text("Third answer."),
        ]);
        let agent: Agent = Agent::new(model.clone());
        let api = serve(ChatServer::new(Arc::new(agent)).sessions(store.clone())).await;
        let session = ai_sdk_chat_session(
            &api,
            &json!({
                "chatId": "chat-r",
                "steps": [
                    { "send": "Tell me a joke" },
                    { "regenerate": {} },
                    { "send": "Another" }
                ]
            }),
        )
        .await;
        let first = &session["steps"][0]["messages"];
        let again = &session["steps"][1];
        assert_eq!(again["error"], Value::Null, "{again}");
        assert_eq!(
            lines(&again["messages"]),
            ["user: Tell me a joke", "assistant: Second answer."]
        );
        // The new answer is a message of its own, where the old one was.
        assert_eq!(again["messages"][0]["id"], first[0]["id"]);
        assert_ne!(again["messages"][1]["id"], first[1]["id"]);
        assert_eq!(
            lines(&session["messages"]),
            [
                "user: Tell me a joke",
                "assistant: Second answer.",
                "user: Another",
                "assistant: Third answer."
            ]
        );
        assert_eq!(
            triggers(&session),
            ["submit-message", "regenerate-message", "submit-message"]
        );

        let shown = shown(&model);
        assert_eq!(shown[1], ["system", "user: Tell me a joke"]);
        assert_eq!(
            shown[2],
            [
                "system",
                "user: Tell me a joke",
                "assistant: Second answer.",
                "user: Another"
            ]
        );
        let mut expected = shown[2].clone();
        expected.push("assistant: Third answer.".to_owned());
        assert_eq!(kept(&*store, "chat-r").await, expected);
    }
}

/// `regenerate({messageId})` of an earlier answer: the chat drops everything after its question,
/// and so does the server; the tool call in the answer taken back (a read-only lookup) is gone
/// with it.
async fn regenerating_an_earlier_answer_takes_back_the_turns_after_it() {
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new(
            "call_1",
            "get_weather",
            r#"{"city":"Oslo"}"#,
        )]),
        AssistantMessage::text("Rainy."),
        AssistantMessage::text("Also rainy."),
        AssistantMessage::text("Oslo: light rain."),
        AssistantMessage::text("You're welcome."),
    ]);
    let agent: Agent = Agent::new(model.clone())
        .try_tool(weather_lookup {})
        .unwrap();
    let store = Arc::new(MemorySessions::new());
    let api = serve(ChatServer::new(Arc::new(agent)).sessions(store.clone())).await;
    let session = ai_sdk_chat_session(
        &api,
        &json!({
            "chatId": "chat-o",
            "steps": [
                { "send": "Weather in Oslo?" },
                { "send": "And tomorrow?" },
                { "regenerate": { "at": 1 } },
                { "send": "Thanks" }
            ]
        }),
    )
    .await;
    let before = &session["steps"][1]["messages"];
    assert_eq!(
        lines(before),
        [
            "user: Weather in Oslo?",
            "assistant: tool-get_weather output-available | Rainy.",
            "user: And tomorrow?",
            "assistant: Also rainy."
        ]
    );
    let regenerate = &session["requests"][2];
    assert_eq!(regenerate["trigger"], "regenerate-message");
    assert_eq!(regenerate["messageId"], before[1]["id"]);
    assert_eq!(
        lines(&session["messages"]),
        [
            "user: Weather in Oslo?",
            "assistant: Oslo: light rain.",
            "user: Thanks",
            "assistant: You're welcome."
        ]
    );
    let shown = shown(&model);
    assert_eq!(shown[3], ["system", "user: Weather in Oslo?"]);
    assert_eq!(
        kept(&*store, "chat-o").await,
        [
            "system",
            "user: Weather in Oslo?",
            "assistant: Oslo: light rain.",
            "user: Thanks",
            "assistant: You're welcome."
        ]
    );
}

/// Regenerating an answer that waits for approval takes the request back with it: the call never
/// runs, nothing waits any more, and the chat goes on.
async fn regenerating_an_answer_that_asks_for_approval_withdraws_the_request() {
    let (model, agent) = wiping(&["I would rather not wipe anything.", "OK."]);
    let store = Arc::new(MemorySessions::new());
    let api = serve(ChatServer::new(Arc::new(agent)).sessions(store.clone())).await;
    let session = ai_sdk_chat_session(
        &api,
        &json!({
            "chatId": "chat-p",
            "steps": [
                { "send": "Clean /tmp/old" },
                { "regenerate": {} },
                { "send": "Fine" }
            ]
        }),
    )
    .await;
    assert_eq!(
        lines(&session["steps"][0]["messages"]),
        [
            "user: Clean /tmp/old",
            "assistant: tool-wipe approval-requested"
        ]
    );
    let again = &session["steps"][1];
    assert_eq!(again["error"], Value::Null, "{again}");
    assert_eq!(
        lines(&session["messages"]),
        [
            "user: Clean /tmp/old",
            "assistant: I would rather not wipe anything.",
            "user: Fine",
            "assistant: OK."
        ]
    );
    assert_eq!(shown(&model)[1], ["system", "user: Clean /tmp/old"]);
    assert_eq!(
        kept(&*store, "chat-p").await,
        [
            "system",
            "user: Clean /tmp/old",
            "assistant: I would rather not wipe anything.",
            "user: Fine",
            "assistant: OK."
        ]
    );
}

/// `sendMessage({ text, messageId })` with an earlier question's id edits it: the chat drops
/// everything after it, and so does the server, which asks the edited question in its place (the
/// model is not shown the old question or the turns after it, the session keeps neither); the
/// next message goes on from the edited turn. On both stores.
async fn an_edited_question_replaces_it_and_the_turns_after_it() {
    for store in [
        Arc::new(MemorySessions::new()) as Arc<dyn SessionStore>,
        Arc::new(SqliteSessions::in_memory().unwrap()),
    ] {
        let model = ScriptedModel::new([
            AssistantMessage::tool_calls([ToolCall::new(
                "call_1",
                "get_weather",
                r#"{"city":"Oslo"}"#,
            )]),
            AssistantMessage::text("Rainy."),
            AssistantMessage::text("Also rainy."),
            AssistantMessage::text("Sunny in Paris."),
            AssistantMessage::text("You're welcome."),
        ]);
        let agent: Agent = Agent::new(model.clone())
            .try_tool(weather_lookup {})
            .unwrap();
        let api = serve(ChatServer::new(Arc::new(agent)).sessions(store.clone())).await;
        let session = ai_sdk_chat_session(
            &api,
            &json!({
                "chatId": "chat-e",
                "steps": [
                    { "send": "Weather in Oslo?" },
                    { "send": "And in Bergen?" },
                    { "edit": "Weather in Paris?", "at": 0 },
                    { "send": "Thanks" }
                ]
            }),
        )
        .await;
        let before = &session["steps"][1]["messages"];
        assert_eq!(
            lines(before),
            [
                "user: Weather in Oslo?",
                "assistant: tool-get_weather output-available | Rainy.",
                "user: And in Bergen?",
                "assistant: Also rainy."
            ]
        );
        let edited = &session["steps"][2];
        assert_eq!(edited["error"], Value::Null, "{edited}");
        assert_eq!(
            lines(&edited["messages"]),
            ["user: Weather in Paris?", "assistant: Sunny in Paris."]
        );
        // The edited message keeps its id; the AI SDK sends it as a submit naming it, with the
        // messages up to it.
        assert_eq!(edited["messages"][0]["id"], before[0]["id"]);
        let edit = &session["requests"][2];
        assert_eq!(edit["trigger"], "submit-message");
        assert_eq!(edit["messageId"], before[0]["id"]);
        assert_eq!(edit["messages"], json!([before[0]["id"]]));
        assert_eq!(
            lines(&session["messages"]),
            [
                "user: Weather in Paris?",
                "assistant: Sunny in Paris.",
                "user: Thanks",
                "assistant: You're welcome."
            ]
        );
        assert_eq!(triggers(&session), ["submit-message"; 4]);

        let shown = shown(&model);
        assert_eq!(shown.len(), 5);
        assert_eq!(shown[3], ["system", "user: Weather in Paris?"]);
        assert_eq!(
            shown[4],
            [
                "system",
                "user: Weather in Paris?",
                "assistant: Sunny in Paris.",
                "user: Thanks"
            ]
        );
        let mut expected = shown[4].clone();
        expected.push("assistant: You're welcome.".to_owned());
        assert_eq!(kept(&*store, "chat-e").await, expected);
    }
}

/// Editing a question whose answer waits for approval withdraws the request with the old
/// question: the call never runs, nothing waits any more, the turn before it stays, and the chat
/// goes on. The chat's transport is the guide's (`docs/src/web.md`), sending the newest message
/// only but for the edit.
async fn editing_a_question_whose_answer_asks_for_approval_withdraws_the_request() {
    let model = ScriptedModel::new([
        AssistantMessage::text("Hello!"),
        AssistantMessage::tool_calls([ToolCall::new("call_w", "wipe", r#"{"folder":"/tmp/old"}"#)]),
        AssistantMessage::text("It holds a.txt."),
        AssistantMessage::text("OK."),
    ]);
    let agent = Agent::new(model.clone())
        .try_tool(wipe {})
        .unwrap()
        .defer_approvals();
    let store = Arc::new(MemorySessions::new());
    let api = serve(ChatServer::new(Arc::new(agent)).sessions(store.clone())).await;
    let session = ai_sdk_chat_session(
        &api,
        &json!({
            "chatId": "chat-ep",
            "newestOnly": true,
            "steps": [
                { "send": "Hi" },
                { "send": "Clean /tmp/old" },
                { "edit": "Just list /tmp/old", "at": 2 },
                { "send": "Thanks" }
            ]
        }),
    )
    .await;
    let asked = &session["steps"][1]["messages"];
    assert_eq!(
        lines(asked),
        [
            "user: Hi",
            "assistant: Hello!",
            "user: Clean /tmp/old",
            "assistant: tool-wipe approval-requested"
        ]
    );
    let edited = &session["steps"][2];
    assert_eq!(edited["error"], Value::Null, "{edited}");
    let requests = &session["requests"];
    assert_eq!(requests[1]["messages"], json!([asked[2]["id"]]));
    assert_eq!(requests[2]["messageId"], asked[2]["id"]);
    assert_eq!(
        requests[2]["messages"],
        json!([asked[0]["id"], asked[1]["id"], asked[2]["id"]])
    );
    assert_eq!(requests[3]["messages"].as_array().unwrap().len(), 1);
    assert_eq!(
        lines(&session["messages"]),
        [
            "user: Hi",
            "assistant: Hello!",
            "user: Just list /tmp/old",
            "assistant: It holds a.txt.",
            "user: Thanks",
            "assistant: OK."
        ]
    );
    let shown = shown(&model);
    assert_eq!(shown.len(), 4);
    assert_eq!(
        shown[2],
        [
            "system",
            "user: Hi",
            "assistant: Hello!",
            "user: Just list /tmp/old"
        ]
    );
    let expected = [
        "system",
        "user: Hi",
        "assistant: Hello!",
        "user: Just list /tmp/old",
        "assistant: It holds a.txt.",
        "user: Thanks",
        "assistant: OK.",
    ];
    assert_eq!(shown[3], expected[..6]);
    assert_eq!(kept(&*store, "chat-ep").await, expected);
}

/// Where the person is: the browser knows, so the browser answers.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Nothing {}

/// A client-side tool (an `ExternalTool`): the chat's `onToolCall` answers it with
/// `addToolOutput`, `sendAutomaticallyWhen` sends the answer back, and the run goes on with it in
/// the same message, beside the server's own call.
async fn a_client_side_tool_is_answered_by_on_tool_call() {
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([
            ToolCall::new("call_t", "get_weather", r#"{"city":"Oslo"}"#),
            ToolCall::new("call_l", "where_am_i", "{}"),
        ]),
        AssistantMessage::text("You are in Oslo, and it is raining."),
        AssistantMessage::text("Goodbye."),
    ]);
    let agent: Agent = Agent::new(model.clone())
        .try_tool(get_weather {})
        .unwrap()
        .try_tool(agent_core::ExternalTool::new::<Nothing>(
            "where_am_i",
            "Where the user is.",
        ))
        .unwrap();
    let store = Arc::new(MemorySessions::new());
    let api = serve(ChatServer::new(Arc::new(agent)).sessions(store.clone())).await;
    let session = ai_sdk_chat_session(
        &api,
        &json!({
            "chatId": "chat-t",
            "clientTools": { "where_am_i": { "city": "Oslo" } },
            "steps": [{ "send": "Where am I?" }, { "send": "Bye" }]
        }),
    )
    .await;
    assert_eq!(
        lines(&session["messages"]),
        [
            "user: Where am I?",
            "assistant: tool-get_weather output-available | tool-where_am_i output-available \
             | You are in Oslo, and it is raining.",
            "user: Bye",
            "assistant: Goodbye."
        ]
    );
    let answered = &session["messages"][1];
    assert_eq!(
        part(answered, "tool-where_am_i")["output"],
        json!({ "city": "Oslo" })
    );
    assert_eq!(part(answered, "tool-get_weather")["output"]["city"], "Oslo");
    assert_eq!(triggers(&session), ["submit-message"; 3]);

    let shown = shown(&model);
    assert_eq!(shown.len(), 3);
    let results: Vec<&String> = shown[1]
        .iter()
        .filter(|line| line.starts_with("tool "))
        .collect();
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(results[1], r#"tool call_l: {"city":"Oslo"}"#);
    assert!(results[0].starts_with("tool call_t: "), "{results:?}");
    let mut expected = shown[2].clone();
    expected.push("assistant: Goodbye.".to_owned());
    assert_eq!(kept(&*store, "chat-t").await, expected);
}

/// A file the provider cannot take: the chat shows the error, the question is not kept, asking
/// again (`regenerate()`) asks that question, not the one before it, and the next message is
/// answered as if the refused one had not been sent.
async fn an_attachment_the_provider_refuses_leaves_the_chat_usable() {
    let refuse = || {
        ScriptStep::error(|| ModelError::Unsupported {
            message: "this model cannot read PDF files".to_owned(),
        })
    };
    let model = ScriptedModel::from_steps([
        AssistantMessage::text("Hello!").into(),
        refuse(),
        refuse(),
        AssistantMessage::text("Sure, just chat.").into(),
    ]);
    let agent: Agent = Agent::new(model.clone());
    let store = Arc::new(MemorySessions::new());
    let api = serve(ChatServer::new(Arc::new(agent)).sessions(store.clone())).await;
    let pdf = json!({
        "type": "file",
        "mediaType": "application/pdf",
        "url": "data:application/pdf;base64,JVBERi0xLjQ=",
        "filename": "a.pdf"
    });
    let session = ai_sdk_chat_session(
        &api,
        &json!({
            "chatId": "chat-f",
            "steps": [
                { "send": "Hi" },
                { "send": "Read this", "files": [pdf] },
                { "regenerate": {} },
                { "send": "Just chat then" }
            ]
        }),
    )
    .await;
    for step in [1, 2] {
        let refused = &session["steps"][step];
        assert_eq!(refused["status"], "error", "{refused}");
        let error = refused["error"].as_str().unwrap();
        assert!(error.contains("cannot read PDF files"), "{error}");
        assert_eq!(
            lines(&refused["messages"]),
            [
                "user: Hi",
                "assistant: Hello!",
                "user: file application/pdf | Read this",
                "assistant: "
            ]
        );
    }
    assert_eq!(
        lines(&session["messages"]),
        [
            "user: Hi",
            "assistant: Hello!",
            "user: file application/pdf | Read this",
            "assistant: ",
            "user: Just chat then",
            "assistant: Sure, just chat."
        ]
    );
    let shown = shown(&model);
    // Asked twice, the refused question each time after the first turn.
    let refused = [
        "system",
        "user: Hi",
        "assistant: Hello!",
        "user: application/pdf | Read this",
    ];
    assert_eq!(shown[1], refused);
    assert_eq!(shown[2], refused);
    assert_eq!(
        shown[3],
        [
            "system",
            "user: Hi",
            "assistant: Hello!",
            "user: Just chat then"
        ]
    );
    assert_eq!(
        kept(&*store, "chat-f").await,
        [
            "system",
            "user: Hi",
            "assistant: Hello!",
            "user: Just chat then",
            "assistant: Sure, just chat."
        ]
    );
}

/// A provider that is down keeps the question (the conversation ends with it, unanswered);
/// `regenerate()`, the chat's retry, answers it without asking it twice.
async fn a_retry_after_the_provider_failed_answers_the_kept_question() {
    let model = ScriptedModel::from_steps([
        ScriptStep::error(|| ModelError::Overloaded {
            status: 529,
            message: "overloaded".to_owned(),
        }),
        AssistantMessage::text("Back again.").into(),
        AssistantMessage::text("Bye.").into(),
    ]);
    let agent: Agent = Agent::new(model.clone());
    let store = Arc::new(MemorySessions::new());
    let api = serve(ChatServer::new(Arc::new(agent)).sessions(store.clone())).await;
    let session = ai_sdk_chat_session(
        &api,
        &json!({
            "chatId": "chat-d",
            "steps": [{ "send": "Hi" }, { "regenerate": {} }, { "send": "Bye" }]
        }),
    )
    .await;
    assert_eq!(session["steps"][0]["status"], "error");
    assert_eq!(session["steps"][1]["error"], Value::Null);
    assert_eq!(
        lines(&session["messages"]),
        [
            "user: Hi",
            "assistant: Back again.",
            "user: Bye",
            "assistant: Bye."
        ]
    );
    let shown = shown(&model);
    assert_eq!(shown[0], ["system", "user: Hi"]);
    assert_eq!(shown[1], ["system", "user: Hi"]);
    assert_eq!(
        kept(&*store, "chat-d").await,
        [
            "system",
            "user: Hi",
            "assistant: Back again.",
            "user: Bye",
            "assistant: Bye."
        ]
    );
}

/// Posts `body` to `api`; the status and the JSON error, or the stream's text.
async fn post(api: &str, body: &Value) -> (u16, String) {
    let reply = reqwest::Client::new()
        .post(api)
        .json(body)
        .send()
        .await
        .unwrap();
    (reply.status().as_u16(), reply.text().await.unwrap())
}

/// A regenerate naming a message the chat does not have is a `404` that says so; one that does not
/// end with the question to answer again is a `400`. Neither reaches the model or changes the chat.
async fn a_regenerate_of_an_unknown_message_is_a_404() {
    let model = ScriptedModel::new([AssistantMessage::text("Hello!")]);
    let agent: Agent = Agent::new(model.clone());
    let store = Arc::new(MemorySessions::new());
    let api = serve(ChatServer::new(Arc::new(agent)).sessions(store.clone())).await;
    let hi = json!({ "id": "u1", "role": "user", "parts": [{ "type": "text", "text": "Hi" }] });
    let (status, stream) = post(&api, &json!({ "id": "chat-u", "messages": [hi] })).await;
    assert_eq!(status, 200, "{stream}");
    let before = kept(&*store, "chat-u").await;
    assert_eq!(before, ["system", "user: Hi", "assistant: Hello!"]);

    for message_id in ["msg-nope", "msg-chat-u-7-0", "msg-other-2-0"] {
        let body = json!({
            "id": "chat-u",
            "trigger": "regenerate-message",
            "messageId": message_id,
            "messages": [hi]
        });
        let (status, error) = post(&api, &body).await;
        assert_eq!(status, 404, "{message_id}: {error}");
        let error: Value = serde_json::from_str(&error).unwrap();
        let error = error["error"].as_str().unwrap();
        assert!(error.contains(message_id), "{error}");
    }
    let answer =
        json!({ "id": "a1", "role": "assistant", "parts": [{ "type": "text", "text": "Hello!" }] });
    let body = json!({
        "id": "chat-u",
        "trigger": "regenerate-message",
        "messages": [hi, answer]
    });
    let (status, error) = post(&api, &body).await;
    assert_eq!(status, 400, "{error}");
    let (status, error) = post(
        &api,
        &json!({ "id": "chat-u", "trigger": "rewind", "messages": [hi] }),
    )
    .await;
    assert_eq!(status, 400, "{error}");
    assert!(error.contains("rewind"), "{error}");
    assert_eq!(model.requests().len(), 1);
    assert_eq!(kept(&*store, "chat-u").await, before);
}

/// A submit whose `messageId` is its own new message's id (the whole chat sent before it) is a new
/// message, answered after the rest; an edit naming a message other than the request's last, or
/// shown after an answer the chat does not have, is a `404` that reaches neither the model nor
/// the chat.
async fn an_edit_the_chat_cannot_place_is_a_404() {
    let model = ScriptedModel::new([
        AssistantMessage::text("Hello!"),
        AssistantMessage::text("Fine."),
    ]);
    let agent: Agent = Agent::new(model.clone());
    let store = Arc::new(MemorySessions::new());
    let api = serve(ChatServer::new(Arc::new(agent)).sessions(store.clone())).await;
    let user = |id: &str, text: &str| {
        let parts = [json!({ "type": "text", "text": text })];
        json!({ "id": id, "role": "user", "parts": parts })
    };
    let (status, stream) = post(
        &api,
        &json!({ "id": "chat-x", "messages": [user("u1", "Hi")] }),
    )
    .await;
    assert_eq!(status, 200, "{stream}");
    // The answer's id, from the stream's `start` chunk.
    let answer_id = stream
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter_map(|data| serde_json::from_str::<Value>(data).ok())
        .find(|chunk| chunk["type"] == "start")
        .unwrap()["messageId"]
        .as_str()
        .unwrap()
        .to_owned();
    let answer = |id: &str| {
        let parts = [json!({ "type": "text", "text": "Hello!" })];
        json!({ "id": id, "role": "assistant", "parts": parts })
    };
    let (status, stream) = post(
        &api,
        &json!({
            "id": "chat-x",
            "trigger": "submit-message",
            "messageId": "u2",
            "messages": [user("u1", "Hi"), answer(&answer_id), user("u2", "How are you?")]
        }),
    )
    .await;
    assert_eq!(status, 200, "{stream}");
    let before = kept(&*store, "chat-x").await;
    assert_eq!(
        before,
        [
            "system",
            "user: Hi",
            "assistant: Hello!",
            "user: How are you?",
            "assistant: Fine."
        ]
    );

    let other_message = json!({
        "id": "chat-x",
        "trigger": "submit-message",
        "messageId": "u1",
        "messages": [user("u1", "Hi"), answer(&answer_id), user("u2", "Hey")]
    });
    let unknown_answer = json!({
        "id": "chat-x",
        "trigger": "submit-message",
        "messageId": "u2",
        "messages": [user("u1", "Hi"), answer("msg-chat-x-9-0"), user("u2", "Hey")]
    });
    for (body, names) in [(other_message, "u1"), (unknown_answer, "msg-chat-x-9-0")] {
        let (status, error) = post(&api, &body).await;
        assert_eq!(status, 404, "{body}: {error}");
        let error: Value = serde_json::from_str(&error).unwrap();
        let error = error["error"].as_str().unwrap();
        assert!(error.contains(names), "{error}");
    }
    assert_eq!(model.requests().len(), 2);
    assert_eq!(kept(&*store, "chat-x").await, before);
}

/// Looks up an order.
#[agent_core::tool(read_only)]
fn lookup_order(
    /// The order number.
    order: String,
) -> String {
    format!("order {order}: paid twice")
}

/// Refunds an order.
#[agent_core::tool(requires_approval)]
fn refund(
    /// The order number.
    order: String,
) -> String {
    format!("refunded {order}")
}

/// An agent called as a tool shows its calls under the call that started it (a
/// `data-agent-activity` part the `Chat` keeps, upserted as they go); its call that needs
/// approval is asked in the chat as any other, and approving it goes on with the child, then the
/// caller, in the same message; a reload reads the same parts back.
async fn a_child_agents_calls_show_under_its_call_and_its_approval_is_asked_in_the_chat() {
    let billing = Agent::new(ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new("b1", "lookup_order", r#"{"order":"7"}"#)]),
        AssistantMessage::tool_calls([ToolCall::new("b2", "refund", r#"{"order":"7"}"#)]),
        AssistantMessage::text("Order 7 is refunded."),
    ]))
    .named("billing")
    .try_tool(lookup_order {})
    .unwrap()
    .try_tool(refund {})
    .unwrap()
    .defer_approvals();
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new(
            "t1",
            "billing",
            r#"{"input":"refund order 7"}"#,
        )]),
        AssistantMessage::text("Your refund is done."),
        AssistantMessage::text("Glad to help."),
    ]);
    let agent = Agent::new(model.clone())
        .named("triage")
        .try_tool(billing.as_tool("billing", "Billing questions."))
        .unwrap();
    let store = Arc::new(MemorySessions::new());
    let api = serve(ChatServer::new(Arc::new(agent)).sessions(store.clone())).await;
    let session = ai_sdk_chat_session(
        &api,
        &json!({
            "chatId": "chat-tree",
            "steps": [
                { "send": "Refund order 7" },
                { "approve": true },
                { "send": "Thanks" },
                { "reload": true }
            ]
        }),
    )
    .await;

    let asked = &session["steps"][0]["messages"];
    assert_eq!(
        lines(asked),
        [
            "user: Refund order 7",
            "assistant: tool-billing input-available | tool-refund approval-requested"
        ]
    );
    let activity = &part(&asked[1], "data-agent-activity")["data"];
    assert_eq!(activity["toolCallId"], "t1");
    let calls: Vec<(&str, &str, &str)> = (activity["calls"].as_array().unwrap().iter())
        .map(|call| {
            (
                call["agent"].as_str().unwrap(),
                call["toolName"].as_str().unwrap(),
                call["state"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        calls,
        [
            ("triage/billing", "lookup_order", "output-available"),
            ("triage/billing", "refund", "input-available")
        ]
    );
    assert_eq!(activity["calls"][0]["output"], "order 7: paid twice");

    let answered = &session["steps"][1]["messages"];
    assert_eq!(
        lines(answered),
        [
            "user: Refund order 7",
            "assistant: tool-billing output-available | tool-refund output-available | Your refund is done."
        ]
    );
    assert_eq!(answered[1]["id"], asked[1]["id"], "one message, gone on");
    assert_eq!(part(&answered[1], "tool-refund")["output"], "refunded 7");
    let activity = &part(&answered[1], "data-agent-activity")["data"];
    assert_eq!(activity["calls"][1]["state"], "output-available");
    assert_eq!(activity["calls"][1]["output"], "refunded 7");

    // Read back after a reload: the child's calls under the call that started them.
    let reloaded = &session["messages"];
    let activity = &part(&reloaded[1], "data-agent-activity")["data"];
    assert_eq!(activity["toolCallId"], "t1");
    assert_eq!(
        activity["calls"].as_array().unwrap().len(),
        2,
        "{activity:#}"
    );
    assert_eq!(activity["calls"][1]["output"], "refunded 7", "{activity:#}");
    assert_eq!(lines(reloaded)[3], "assistant: Glad to help.");
    // The conversation keeps the child's run whole.
    let conversation = store.load("chat-tree").await.unwrap();
    assert_eq!(conversation.children.len(), 1);
    assert_eq!(conversation.children[0].run.call_id, "t1");
}

fn main() -> std::process::ExitCode {
    tests::peers::main([
        Test::tokio(
            "an_approved_call_runs_in_the_message_that_asked",
            an_approved_call_runs_in_the_message_that_asked,
        )
        .needs(&AI_SDK),
        Test::tokio(
            "a_denied_call_ends_as_denied_in_the_message_that_asked",
            a_denied_call_ends_as_denied_in_the_message_that_asked,
        )
        .needs(&AI_SDK),
        Test::tokio(
            "a_regenerated_answer_replaces_the_last_one",
            a_regenerated_answer_replaces_the_last_one,
        )
        .needs(&AI_SDK),
        Test::tokio(
            "regenerating_an_earlier_answer_takes_back_the_turns_after_it",
            regenerating_an_earlier_answer_takes_back_the_turns_after_it,
        )
        .needs(&AI_SDK),
        Test::tokio(
            "regenerating_an_answer_that_asks_for_approval_withdraws_the_request",
            regenerating_an_answer_that_asks_for_approval_withdraws_the_request,
        )
        .needs(&AI_SDK),
        Test::tokio(
            "an_edited_question_replaces_it_and_the_turns_after_it",
            an_edited_question_replaces_it_and_the_turns_after_it,
        )
        .needs(&AI_SDK),
        Test::tokio(
            "editing_a_question_whose_answer_asks_for_approval_withdraws_the_request",
            editing_a_question_whose_answer_asks_for_approval_withdraws_the_request,
        )
        .needs(&AI_SDK),
        Test::tokio(
            "a_client_side_tool_is_answered_by_on_tool_call",
            a_client_side_tool_is_answered_by_on_tool_call,
        )
        .needs(&AI_SDK),
        Test::tokio(
            "an_attachment_the_provider_refuses_leaves_the_chat_usable",
            an_attachment_the_provider_refuses_leaves_the_chat_usable,
        )
        .needs(&AI_SDK),
        Test::tokio(
            "a_retry_after_the_provider_failed_answers_the_kept_question",
            a_retry_after_the_provider_failed_answers_the_kept_question,
        )
        .needs(&AI_SDK),
        Test::tokio(
            "a_child_agents_calls_show_under_its_call_and_its_approval_is_asked_in_the_chat",
            a_child_agents_calls_show_under_its_call_and_its_approval_is_asked_in_the_chat,
        )
        .needs(&AI_SDK),
        Test::tokio(
            "a_regenerate_of_an_unknown_message_is_a_404",
            a_regenerate_of_an_unknown_message_is_a_404,
        ),
        Test::tokio(
            "an_edit_the_chat_cannot_place_is_a_404",
            an_edit_the_chat_cannot_place_is_a_404,
        ),
    ])
}
