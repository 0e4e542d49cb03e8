//! A server without sign-in, over loopback: each browser is a visitor of its own, known by the
//! signed cookie the server gives it, and a chat is its visitor's alone. Another browser that
//! learns the chat's id (a shared link) reads nothing of it, takes none of its grants, approves
//! nothing and stops nothing: every route answers it as for a chat that does not exist. A cookie
//! the server did not sign makes a new visitor. A server that opts out (`shared_chats`) keeps
//! chats under their ids, for anyone who has one.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use agent_core::testing::ScriptedModel;
use agent_core::{Agent, AssistantMessage, State, ToolCall, tool};
use agent_web::ChatServer;
use reqwest::Method;
use serde_json::{Value, json};
use tests::chat::{answer_id, user};

/// Folders wiped so far.
type Wiped = Arc<AtomicUsize>;

/// Deletes every file in a folder.
#[tool(requires_approval, destructive)]
fn wipe(
    State(wiped): State<Wiped>,
    /// The folder.
    folder: String,
) -> String {
    wiped.fetch_add(1, Ordering::SeqCst);
    format!("wiped {folder}")
}

/// Serves an agent that asks to wipe a folder, then says it did, with the server's defaults but
/// for `shared` (`ChatServer::shared_chats`); its base URL and the count of wipes.
async fn serve(shared: bool) -> (String, Wiped) {
    let wiped = Wiped::default();
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new("call_w", "wipe", r#"{"folder":"/a"}"#)]),
        AssistantMessage::text("Wiped."),
    ]);
    let agent = Agent::new(model)
        .try_tool(wipe {})
        .unwrap()
        .defer_approvals()
        .bind_context(Arc::clone(&wiped));
    let mut server = ChatServer::new(Arc::new(agent));
    if shared {
        server = server.shared_chats();
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(server.serve(listener));
    (base, wiped)
}

/// A browser: it keeps the cookies the server sets and sends them back.
#[derive(Default)]
struct Browser {
    cookies: Mutex<Vec<String>>,
}

/// A reply read whole: its status, the cookies it set, and its body.
struct Reply {
    status: u16,
    set: Vec<String>,
    body: String,
}

impl Browser {
    /// A browser that sends `cookie` (a `name=value` of its own making).
    fn with_cookie(cookie: &str) -> Self {
        Browser {
            cookies: Mutex::new(vec![cookie.to_owned()]),
        }
    }

    async fn send(&self, method: Method, url: String, body: Option<&Value>) -> Reply {
        let mut request = reqwest::Client::new().request(method, url);
        let cookies = self.cookies.lock().unwrap().join("; ");
        if !cookies.is_empty() {
            request = request.header("cookie", cookies);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        let reply = request.send().await.unwrap();
        let set: Vec<String> = (reply.headers().get_all("set-cookie").iter())
            .map(|value| value.to_str().unwrap().to_owned())
            .collect();
        for cookie in &set {
            let pair = cookie.split(';').next().unwrap().to_owned();
            let name = pair.split('=').next().unwrap().to_owned();
            let mut kept = self.cookies.lock().unwrap();
            kept.retain(|old| !old.starts_with(&format!("{name}=")));
            kept.push(pair);
        }
        Reply {
            status: reply.status().as_u16(),
            set,
            body: reply.text().await.unwrap(),
        }
    }

    async fn post(&self, base: &str, body: &Value) -> Reply {
        self.send(Method::POST, format!("{base}/api/chat"), Some(body))
            .await
    }

    async fn get(&self, url: String) -> Reply {
        self.send(Method::GET, url, None).await
    }
}

/// The `data-call-grant` part a stream gave.
fn grant_of(stream: &str) -> Value {
    let grant = stream
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter_map(|data| serde_json::from_str::<Value>(data).ok())
        .find(|chunk| chunk["type"] == "data-call-grant");
    grant.unwrap_or_else(|| panic!("no grant in {stream}"))
}

/// The message approving the wipe in the answer `asked` began, with the grant it gave.
fn approving(asked: &str) -> Value {
    let parts = [
        json!({
            "type": "tool-wipe", "toolCallId": "call_w", "state": "approval-responded",
            "input": { "folder": "/a" }, "approval": { "id": "call_w", "approved": true }
        }),
        grant_of(asked),
    ];
    let answer = json!({ "id": answer_id(asked), "role": "assistant", "parts": parts });
    json!({ "id": "c", "messages": [answer] })
}

#[tokio::test]
async fn a_chat_is_its_browsers_alone() {
    let (base, wiped) = serve(false).await;
    let ann = Browser::default();
    let asked = ann
        .post(
            &base,
            &json!({ "id": "c", "messages": [user("u1", "Clean up")] }),
        )
        .await;
    assert_eq!(asked.status, 200, "{}", asked.body);
    let cookie = &asked.set[0];
    assert!(cookie.starts_with("agent_web_visitor="), "{cookie}");
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax"),
        "{cookie}"
    );
    let chat = format!("{base}/api/chat/c");
    assert_eq!(ann.get(chat.clone()).await.status, 200);

    // Bob has the link, and Ann's message with its grant: every route is a 404 (or, for a rejoin,
    // nothing under way), nothing runs, and Ann's chat is as it was.
    let bob = Browser::default();
    assert_eq!(bob.get(chat.clone()).await.status, 404);
    let taken = bob.post(&base, &approving(&asked.body)).await;
    assert_eq!(taken.status, 404, "{}", taken.body);
    assert_eq!(bob.get(format!("{chat}/stream")).await.status, 204);
    let stop = bob
        .send(Method::DELETE, format!("{chat}/stream"), None)
        .await;
    assert_eq!(stop.status, 404);
    let forget = bob.send(Method::DELETE, chat.clone(), None).await;
    assert_eq!(forget.status, 404);
    let listed = bob.get(format!("{base}/api/chats")).await;
    assert_eq!(
        serde_json::from_str::<Value>(&listed.body).unwrap(),
        json!([])
    );
    assert_eq!(wiped.load(Ordering::SeqCst), 0);
    // A browser without cookies, or with one the server did not sign (Ann's id under another
    // tag), is a visitor of its own too.
    assert_eq!(Browser::default().get(chat.clone()).await.status, 404);
    let ann_id = cookie.split(['=', '.']).nth(1).unwrap();
    let forged = Browser::with_cookie(&format!("agent_web_visitor={ann_id}.AAAA"));
    let reply = forged.get(chat.clone()).await;
    assert_eq!(reply.status, 404);
    assert_eq!(reply.set.len(), 1, "a new visitor's cookie");

    // Ann goes on: her approval runs, and her chats are listed.
    let approved = ann.post(&base, &approving(&asked.body)).await;
    assert_eq!(approved.status, 200, "{}", approved.body);
    assert!(approved.body.contains("Wiped."), "{}", approved.body);
    assert!(approved.set.is_empty(), "Ann keeps her cookie");
    assert_eq!(wiped.load(Ordering::SeqCst), 1);
    let listed = ann.get(format!("{base}/api/chats")).await;
    let listed: Value = serde_json::from_str(&listed.body).unwrap();
    assert_eq!(listed[0]["id"], "c", "{listed}");
}

#[tokio::test]
async fn a_server_that_shares_its_chats_lets_anyone_with_the_id_in() {
    let (base, wiped) = serve(true).await;
    let ann = Browser::default();
    let asked = ann
        .post(
            &base,
            &json!({ "id": "c", "messages": [user("u1", "Clean up")] }),
        )
        .await;
    assert_eq!(asked.status, 200, "{}", asked.body);
    assert!(asked.set.is_empty(), "no visitors, no cookie");
    let bob = Browser::default();
    assert_eq!(bob.get(format!("{base}/api/chat/c")).await.status, 200);
    let approved = bob.post(&base, &approving(&asked.body)).await;
    assert_eq!(approved.status, 200, "{}", approved.body);
    assert_eq!(wiped.load(Ordering::SeqCst), 1);
}
