//! The chat page in a real browser: headless Chromium (Debian's `chromium` and `chromium-driver`)
//! driven over WebDriver (fantoccini). A person opens the page, asks a question, sees the answer
//! stream in with the tool call rendered, asks for something that needs approval, reloads the page
//! (the chat comes back from the server, the approval still asked), clicks Approve, and sees the
//! result; asks for the answer again; starts a second chat, edits its question, reloads while a
//! slow tool runs (the page rejoins the answer in progress), goes back to the first chat from the
//! list of chats and renames it there; a screenshot is saved under the target directory. And a long
//! chat whose older turns are summarized for the model is shown whole after a reload, with a note
//! where the summary stands in.
//!
//! Chromium's background services try the internet on their own, so the test binary runs itself in
//! a private network namespace with nothing but loopback (`unshare -n`, as root), where the server,
//! chromedriver and Chromium all live. Without the browser, or without a namespace, the test is
//! reported ignored; in CI it fails.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_core::context::Summarize;
use agent_core::session::{MemorySessions, SessionStore};
use agent_core::testing::ScriptedModel;
use agent_core::{Agent, AssistantMessage, Reasoning, ToolCall, tool};
use agent_web::ChatServer;
use fantoccini::{Client, ClientBuilder, Locator};
use tests::get_weather;
use tests::peers::{Peer, Test};

/// The variable that says this process runs inside its own network namespace.
const IN_NAMESPACE: &str = "AGENT_CORE_BROWSER_NETNS";

static BROWSER: Peer = Peer {
    name: "Chromium and chromedriver in a private network namespace",
    why: "This test drives the chat page in a real browser, isolated from any network",
    enable: "as root, `apt-get install -y chromium chromium-driver` (the test enters a network \
             namespace of its own with `unshare -n`)",
    detect: detect_browser,
};

fn detect_browser() -> Result<(), String> {
    for binary in ["/usr/bin/chromium", "/usr/bin/chromedriver"] {
        if !std::path::Path::new(binary).exists() {
            return Err(format!("{binary} is not installed"));
        }
    }
    if !tests::netns::inside(IN_NAMESPACE) {
        return Err("no private network namespace (`unshare -n` needs root)".to_owned());
    }
    Ok(())
}

/// Deletes all of the user's notes.
#[tool(requires_approval, destructive)]
fn delete_notes() -> String {
    "deleted 12 notes".to_owned()
}

/// Runs the survey (slowly).
#[tool]
async fn survey() -> String {
    tokio::time::sleep(Duration::from_millis(1500)).await;
    "42 answers".to_owned()
}

/// Starts chromedriver on a free loopback port; returns it and its URL. The port is free when
/// probed, but something else (another test's server) may take it before chromedriver binds it:
/// then chromedriver exits, and it is started again on another port. It is taken as ready when
/// its own `/status` says so, not when anything answers on the port.
async fn chromedriver() -> (tokio::process::Child, String) {
    let started = Instant::now();
    loop {
        let port = {
            let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            probe.local_addr().unwrap().port()
        };
        let mut child = tokio::process::Command::new("/usr/bin/chromedriver")
            .arg(format!("--port={port}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("chromedriver starts");
        let url = format!("http://127.0.0.1:{port}");
        loop {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "chromedriver never became ready"
            );
            if child.try_wait().expect("its status").is_some() {
                break; // It could not take the port: another one.
            }
            let status = reqwest::get(format!("{url}/status")).await;
            if let Ok(response) = status
                && let Ok(body) = response.json::<serde_json::Value>().await
                && body["value"]["ready"] == true
            {
                return (child, url);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

async fn browser(webdriver: &str) -> Client {
    let mut capabilities = serde_json::Map::new();
    capabilities.insert(
        "goog:chromeOptions".into(),
        serde_json::json!({
            "binary": "/usr/bin/chromium",
            "args": [
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--disable-background-networking",
                "--window-size=1100,900"
            ]
        }),
    );
    ClientBuilder::rustls()
        .expect("a connector")
        .capabilities(capabilities)
        .connect(webdriver)
        .await
        .expect("a browser session")
}

/// Waits until the page's text has `text` (the answer streamed in), or fails after 20 s.
async fn wait_for_text(client: &Client, text: &str) {
    let started = Instant::now();
    loop {
        let body = client
            .find(Locator::Css("body"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        if body.contains(text) {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "no `{text}` on the page: {body}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The page's text.
async fn page_text(client: &Client) -> String {
    let body = client.find(Locator::Css("body")).await.unwrap();
    body.text().await.unwrap()
}

/// Clicks the element `css` finds.
async fn click(client: &Client, css: &str) {
    let element = client.find(Locator::Css(css)).await.unwrap();
    element.click().await.unwrap();
}

async fn ask(client: &Client, question: &str) {
    let composer = client.find(Locator::Id("composer")).await.unwrap();
    composer.send_keys(question).await.unwrap();
    client
        .find(Locator::Id("send"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

/// The chat page of a server for `agent` (its chats in memory), open in a browser: the store, the
/// browser, and its driver (which stops when dropped).
async fn open_chat(agent: Agent) -> (Arc<MemorySessions>, Client, tokio::process::Child) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let page = format!("http://{}/", listener.local_addr().unwrap());
    let store = Arc::new(MemorySessions::new());
    tokio::spawn(
        ChatServer::new(Arc::new(agent))
            .sessions(store.clone())
            .serve(listener),
    );
    let (driver, webdriver) = chromedriver().await;
    let client = browser(&webdriver).await;
    client.goto(&page).await.unwrap();
    (store, client, driver)
}

async fn a_person_chats_sees_the_tool_calls_and_approves_one() {
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new(
            "call_1",
            "get_weather",
            r#"{"city":"Beijing"}"#,
        )])
        .with_text("Let me check.")
        .with_reasoning(Reasoning::new(
            "scripted",
            "A weather question: ask the tool.",
        )),
        AssistantMessage::text("Light rain in Beijing: take an umbrella."),
        AssistantMessage::tool_calls([ToolCall::new("call_2", "delete_notes", "{}")]),
        AssistantMessage::text("Your notes are gone."),
        AssistantMessage::text("Gone, as you asked."),
        AssistantMessage::text("Hi there."),
        AssistantMessage::text("Good evening to you too."),
        AssistantMessage::tool_calls([ToolCall::new("call_3", "survey", "{}")]),
        AssistantMessage::text("Survey complete."),
    ]);
    let agent: Agent = Agent::new(model)
        .try_tool(get_weather {})
        .and_then(|agent| agent.try_tool(delete_notes {}))
        .and_then(|agent| agent.try_tool(survey {}))
        .unwrap()
        .defer_approvals();
    let (store, client, _driver) = open_chat(agent).await;
    ask(&client, "Do I need an umbrella in Beijing?").await;
    wait_for_text(&client, "Light rain in Beijing: take an umbrella.").await;
    let card = client
        .find(Locator::Css(".tool-card[data-tool-name='get_weather']"))
        .await
        .unwrap();
    assert_eq!(
        card.attr("data-state").await.unwrap().as_deref(),
        Some("output-available")
    );
    assert!(card.text().await.unwrap().contains("Beijing"));

    ask(&client, "Delete my notes").await;
    let asking = Locator::Css(".tool-card[data-state='approval-requested'] .approve");
    client
        .wait()
        .at_most(Duration::from_secs(20))
        .for_element(asking)
        .await
        .unwrap();
    // The page reloads with the approval pending: the chat comes back from the server, the
    // request still asking, and the approval given now goes through.
    client.refresh().await.unwrap();
    wait_for_text(&client, "Light rain in Beijing: take an umbrella.").await;
    let approve = client
        .wait()
        .at_most(Duration::from_secs(20))
        .for_element(asking)
        .await
        .unwrap();
    approve.click().await.unwrap();
    wait_for_text(&client, "Your notes are gone.").await;
    let card = client
        .find(Locator::Css(".tool-card[data-tool-name='delete_notes']"))
        .await
        .unwrap();
    assert_eq!(
        card.attr("data-state").await.unwrap().as_deref(),
        Some("output-available")
    );
    assert!(card.text().await.unwrap().contains("deleted 12 notes"));

    // The last answer asked for again: the new one replaces it (the deletion is not repeated).
    client
        .find(Locator::Css("button.regenerate"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_for_text(&client, "Gone, as you asked.").await;
    assert!(!page_text(&client).await.contains("Your notes are gone."));

    // A second chat, then back to the first from the list of chats.
    click(&client, "#new-chat").await;
    ask(&client, "Hello").await;
    wait_for_text(&client, "Hi there.").await;
    // The question edited: its answer taken back, the edited one answered.
    click(&client, ".message.user button.edit").await;
    let composer = client.find(Locator::Id("composer")).await.unwrap();
    composer.clear().await.unwrap();
    composer.send_keys("Good evening").await.unwrap();
    click(&client, "#send").await;
    wait_for_text(&client, "Good evening to you too.").await;
    let text = page_text(&client).await;
    assert!(
        !text.contains("Hi there.") && !text.contains("Hello\n"),
        "{text}"
    );
    // Reloaded while a slow tool runs: the page rejoins the answer, which finishes once.
    ask(&client, "Run the survey").await;
    client
        .wait()
        .at_most(Duration::from_secs(20))
        .for_element(Locator::Css(".tool-card[data-tool-name='survey']"))
        .await
        .unwrap();
    client.refresh().await.unwrap();
    wait_for_text(&client, "Survey complete.").await;
    let cards = client
        .find_all(Locator::Css(".tool-card[data-tool-name='survey']"))
        .await
        .unwrap();
    assert_eq!(cards.len(), 1, "the rejoined answer is shown once");
    assert_eq!(
        cards[0].attr("data-state").await.unwrap().as_deref(),
        Some("output-available")
    );

    click(&client, "#history summary").await;
    let first = client
        .wait()
        .at_most(Duration::from_secs(20))
        .for_element(Locator::XPath(
            "//ul[@id='chat-list']//button[@class='open'][starts-with(., 'Do I need an umbrella')]",
        ))
        .await
        .unwrap();
    first.click().await.unwrap();
    wait_for_text(&client, "Gone, as you asked.").await;
    assert!(
        !page_text(&client)
            .await
            .contains("Good evening to you too.")
    );

    // The first chat renamed in the list: the title typed in place of it, Enter keeps it, and the
    // server has it.
    click(&client, "#history summary").await;
    client
        .wait()
        .at_most(Duration::from_secs(20))
        .for_element(Locator::XPath(
            "//ul[@id='chat-list']/li[button[@class='open'][starts-with(., 'Do I need an umbrella')]]\
             /button[@class='rename']",
        ))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let field = client
        .find(Locator::Css("#chat-list input.title"))
        .await
        .unwrap();
    // Typed over the old title, which the field selects (WebDriver's clear would leave the field,
    // which keeps what it has).
    field.send_keys("Umbrella plans\u{E007}").await.unwrap();
    client
        .wait()
        .at_most(Duration::from_secs(20))
        .for_element(Locator::XPath(
            "//ul[@id='chat-list']//button[@class='open'][. = 'Umbrella plans']",
        ))
        .await
        .unwrap();
    let titles: Vec<Option<String>> = store
        .list("")
        .await
        .unwrap()
        .into_iter()
        .map(|listed| listed.title)
        .collect();
    assert!(
        titles.contains(&Some("Umbrella plans".to_owned())),
        "{titles:?}"
    );

    let screenshot = client.screenshot().await.unwrap();
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("web-chat.png");
    std::fs::write(&path, &screenshot).unwrap();
    assert!(screenshot.starts_with(b"\x89PNG"));
    client.close().await.unwrap();
}

/// A long chat whose agent summarizes older turns for the model: after a reload the page shows
/// every question and answer, and a note where the summary stands in for the messages above it.
async fn a_summarized_chat_is_shown_whole() {
    const TURNS: usize = 8;
    let answers = (0..TURNS).map(|turn| {
        AssistantMessage::text(format!(
            "Answer {turn}: {}",
            "here is a reply long enough to fill the window. ".repeat(3)
        ))
    });
    let summaries =
        (0..TURNS).map(|index| AssistantMessage::text(format!("Summary {index} of the chat.")));
    let summarizer = Arc::new(ScriptedModel::new(summaries));
    let agent: Agent = Agent::new(ScriptedModel::new(answers))
        // The summarizer's own window takes what a cut leaves out in one request: each summary
        // is one request, and shows as one note.
        .context_policy(Summarize::new(Arc::clone(&summarizer), 200).summarizer_window(10_000));
    let (store, client, _driver) = open_chat(agent).await;
    for turn in 0..TURNS {
        ask(
            &client,
            &format!("Question {turn}: tell me something about the weather, please."),
        )
        .await;
        wait_for_text(&client, &format!("Answer {turn}:")).await;
    }
    assert!(!summarizer.requests().is_empty(), "nothing was summarized");
    // Each summary shows as it is made, over the question of its turn.
    let live = client
        .find_all(Locator::Css(".message.user .summary-note"))
        .await
        .unwrap();
    assert_eq!(live.len(), summarizer.requests().len());
    client.refresh().await.unwrap();
    wait_for_text(&client, &format!("Answer {}:", TURNS - 1)).await;
    let text = page_text(&client).await;
    for turn in 0..TURNS {
        assert!(text.contains(&format!("Question {turn}:")), "{text}");
        assert!(text.contains(&format!("Answer {turn}:")), "{text}");
    }
    let notes = client
        .find_all(Locator::Css(".message.user .summary-note"))
        .await
        .unwrap();
    assert_eq!(notes.len(), summarizer.requests().len(), "{text}");
    // One note for each summary the chat's session keeps, over every message it keeps.
    let chats = store.list("").await.unwrap();
    let stored = store.load(&chats[0].id).await.unwrap();
    assert_eq!(stored.summaries.len(), notes.len());
    assert_eq!(stored.messages.len(), 1 + 2 * TURNS);
    let last = notes.last().unwrap();
    last.find(Locator::Css("summary"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let shown = last.text().await.unwrap();
    let latest = format!("Summary {} of the chat.", notes.len() - 1);
    assert!(
        shown.contains("Earlier messages are summarized") && shown.contains(&latest),
        "{shown}"
    );
    client.close().await.unwrap();
}

/// A guard stops an answer before anyone reads it: the page shows the trip, never the answer.
async fn a_guards_trip_shows_on_the_page_and_the_stopped_answer_never_does() {
    use agent_core::guard::{At, HoldBack, Verdict, What, guard_fn};

    let no_secrets = guard_fn("no secrets", |checked| match &checked.what {
        What::Answer { text, .. } if text.contains("swordfish") => {
            Verdict::trip("the answer gives a password away")
        }
        _ => Verdict::Allow,
    });
    let model = ScriptedModel::new([AssistantMessage::text("The password is swordfish.")]);
    let agent: Agent = Agent::new(model)
        .guard(At::ANSWER, no_secrets)
        .hold_back(HoldBack::All);
    let (_store, client, _driver) = open_chat(agent).await;
    ask(&client, "What is the vault's password?").await;
    wait_for_text(&client, "the answer gives a password away").await;
    let banner = client.find(Locator::Css(".error-banner")).await.unwrap();
    let shown = banner.text().await.unwrap();
    assert!(
        shown.contains("the guard `no secrets` stopped the run"),
        "{shown}"
    );
    assert!(!page_text(&client).await.contains("swordfish"));
    client.close().await.unwrap();
}

/// Files a refund.
#[tool(requires_approval)]
fn file_refund(
    /// The order number.
    order: String,
) -> String {
    format!("refund filed for {order}")
}

/// A child agent's calls show under the card of the call that started it, each with its agent,
/// its tool and how it stands; its call that needs approval is approved in the page as any
/// other, and after a reload the calls are there still.
async fn a_child_agents_calls_show_under_the_call_that_started_it() {
    let billing = agent_core::agent!(
        ScriptedModel::new([
            AssistantMessage::tool_calls([ToolCall::new(
                "b1",
                "get_weather",
                r#"{"city":"Oslo"}"#,
            )]),
            AssistantMessage::tool_calls([ToolCall::new("b2", "file_refund", r#"{"order":"7"}"#,)]),
            AssistantMessage::text("Refund filed."),
        ]),
        get_weather,
        file_refund
    )
    .named("billing")
    .defer_approvals();
    let agent = Agent::new(ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new(
            "t1",
            "billing",
            r#"{"input":"refund order 7"}"#,
        )]),
        AssistantMessage::text("Billing filed your refund."),
    ]))
    .named("triage")
    .try_tool(billing.as_tool("billing", "Billing questions."))
    .unwrap();
    let (_store, client, _driver) = open_chat(agent).await;
    ask(&client, "Refund order 7, please").await;
    let asking = Locator::Css(".tool-card[data-state='approval-requested'] .approve");
    let approve = client
        .wait()
        .at_most(Duration::from_secs(20))
        .for_element(asking)
        .await
        .unwrap();
    let rows = client
        .find_all(Locator::Css(".tool-activity .activity-row"))
        .await
        .unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(
        rows[0].attr("data-agent").await.unwrap().as_deref(),
        Some("triage/billing")
    );
    assert_eq!(
        rows[0].attr("data-state").await.unwrap().as_deref(),
        Some("output-available")
    );
    assert!(rows[0].text().await.unwrap().contains("get_weather"));
    approve.click().await.unwrap();
    wait_for_text(&client, "Billing filed your refund.").await;
    let filed = Locator::Css(".tool-activity .activity-row[data-tool-name='file_refund']");
    let row = client.find(filed).await.unwrap();
    assert_eq!(
        row.attr("data-state").await.unwrap().as_deref(),
        Some("output-available")
    );
    assert!(row.text().await.unwrap().contains("refund filed for 7"));
    // After a reload the child's calls are under its call still.
    client.refresh().await.unwrap();
    wait_for_text(&client, "Billing filed your refund.").await;
    let rows = client
        .find_all(Locator::Css(".tool-activity .activity-row"))
        .await
        .unwrap();
    assert_eq!(rows.len(), 2);
    client.close().await.unwrap();
}

fn main() -> ExitCode {
    if let Some(code) = tests::netns::rerun_inside(IN_NAMESPACE) {
        return code;
    }
    tests::peers::main([
        Test::tokio(
            "a_person_chats_sees_the_tool_calls_and_approves_one",
            a_person_chats_sees_the_tool_calls_and_approves_one,
        )
        .needs(&BROWSER),
        Test::tokio(
            "a_child_agents_calls_show_under_the_call_that_started_it",
            a_child_agents_calls_show_under_the_call_that_started_it,
        )
        .needs(&BROWSER),
        Test::tokio(
            "a_summarized_chat_is_shown_whole",
            a_summarized_chat_is_shown_whole,
        )
        .needs(&BROWSER),
        Test::tokio(
            "a_guards_trip_shows_on_the_page_and_the_stopped_answer_never_does",
            a_guards_trip_shows_on_the_page_and_the_stopped_answer_never_does,
        )
        .needs(&BROWSER),
    ])
}
