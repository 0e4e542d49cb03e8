//! The web endpoint as `useChat` users take back a chat's history: the AI SDK's own `Chat`
//! regenerates answers and edits earlier questions against a real `ChatServer` over loopback
//! (`web/chat_session.mjs`), and what the chat cannot place is a `404`. Each test checks the
//! messages the chat ends with, what the scripted model was shown, and what the chat's session
//! keeps; each ends with a normal message that is answered.

use std::sync::Arc;

use agent_core::session::{MemorySessions, SessionStore};
use agent_core::testing::ScriptedModel;
use agent_core::{Agent, AssistantMessage, ToolCall};
use agent_sql::SqliteSessions;
use agent_web::ChatServer;
use serde_json::{Value, json};
use tests::chat::lines;
use tests::chat_client::{kept, post, serve, shown, triggers, weather_lookup, wiping};
use tests::node::{AI_SDK, ai_sdk_chat_session};
use tests::peers::Test;
use tests::wipe;

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

fn main() -> std::process::ExitCode {
    tests::peers::main([
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
            "a_regenerate_of_an_unknown_message_is_a_404",
            a_regenerate_of_an_unknown_message_is_a_404,
        ),
        Test::tokio(
            "an_edit_the_chat_cannot_place_is_a_404",
            an_edit_the_chat_cannot_place_is_a_404,
        ),
    ])
}
