//! The web endpoint as `useChat` users meet it: the AI SDK's own `Chat` (the class `useChat` wraps)
//! with `DefaultChatTransport` approves and denies calls, answers client-side tools, sends files
//! and retries after the provider failed, against a real `ChatServer` over loopback
//! (`web/chat_session.mjs`); a child agent's calls show under its call. Each test checks the
//! messages the chat ends with (one assistant message per turn, each call in its final state),
//! what the scripted model was shown, and what the chat's session keeps; each ends with a normal
//! message that is answered. Regenerating and editing are in `web_chat_client_history.rs`.

use std::sync::Arc;

use agent_core::session::{MemorySessions, SessionStore};
use agent_core::testing::{ScriptStep, ScriptedModel};
use agent_core::{Agent, AssistantMessage, ModelError, ToolCall};
use agent_web::ChatServer;
use serde_json::{Value, json};
use tests::chat::{lines, part};
use tests::chat_client::{kept, serve, shown, triggers, wiping};
use tests::get_weather;
use tests::node::{AI_SDK, ai_sdk_chat_session};
use tests::peers::Test;

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
    ])
}
