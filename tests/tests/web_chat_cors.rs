//! The web endpoint for a page on another origin (CORS): a preflight is answered for the origins
//! allowed only, with the headers and credentials an app asks for, and a page on an allowed
//! origin reads how long a `429` asks it to wait.

use std::sync::Arc;

use agent_core::testing::ScriptedModel;
use agent_core::{Agent, AssistantMessage};
use agent_web::ChatServer;
use serde_json::{Value, json};
use tests::chat::user;
use tests::serve_chat;

#[tokio::test]
async fn cors_is_for_the_origins_allowed() {
    let agent: Agent = Agent::new(ScriptedModel::new(Vec::<AssistantMessage>::new()));
    let server = ChatServer::new(Arc::new(agent)).allow_origin("https://app.example.com");
    let base = serve_chat(server).await;
    let http = reqwest::Client::new();
    let preflight = |origin: &'static str| {
        http.request(reqwest::Method::OPTIONS, format!("{base}/api/chat"))
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .send()
    };
    let allowed = preflight("https://app.example.com").await.unwrap();
    assert_eq!(allowed.status().as_u16(), 204);
    assert_eq!(
        allowed.headers()["access-control-allow-origin"],
        "https://app.example.com"
    );
    assert_eq!(
        allowed.headers()["access-control-allow-headers"],
        "content-type, authorization"
    );
    assert!(
        allowed
            .headers()
            .get("access-control-allow-credentials")
            .is_none()
    );
    let other = preflight("https://evil.example").await.unwrap();
    assert!(other.headers().get("access-control-allow-origin").is_none());
}

/// A page on an allowed origin reads how long a `429` asks it to wait: the response exposes its
/// `retry-after` to the page's script.
#[tokio::test]
async fn a_page_on_an_allowed_origin_reads_a_429s_retry_after() {
    let model = ScriptedModel::new([AssistantMessage::text("Hi.")]);
    let agent: Agent = Agent::new(model);
    let limits = agent_web::UserLimits::new().requests(1, std::time::Duration::from_secs(60));
    let server = ChatServer::new(Arc::new(agent))
        .allow_origin("https://app.example.com")
        .limits(limits);
    let base = serve_chat(server).await;
    let http = reqwest::Client::new();
    let ask = |id: &str| json!({ "id": "c", "messages": [user(id, "Hello")] });
    let post = |body: Value| {
        http.post(format!("{base}/api/chat"))
            .header("origin", "https://app.example.com")
            .json(&body)
            .send()
    };
    let first = post(ask("m1")).await.unwrap();
    assert_eq!(first.status().as_u16(), 200);
    first.text().await.unwrap();
    let over = post(ask("m2")).await.unwrap();
    assert_eq!(over.status().as_u16(), 429);
    assert!(over.headers().contains_key("retry-after"));
    let exposed = over.headers()["access-control-expose-headers"]
        .to_str()
        .unwrap()
        .to_ascii_lowercase();
    assert!(
        exposed.split(',').any(|name| name.trim() == "retry-after"),
        "{exposed}"
    );
}

#[tokio::test]
async fn cors_lets_an_apps_own_sign_in_header_and_cookies_through() {
    let agent: Agent = Agent::new(ScriptedModel::new(Vec::<AssistantMessage>::new()));
    let server = ChatServer::new(Arc::new(agent))
        .allow_origin("https://app.example.com")
        .allow_header(axum::http::HeaderName::from_static("x-api-key"))
        .allow_credentials();
    let base = serve_chat(server).await;
    let preflight = reqwest::Client::new()
        .request(reqwest::Method::OPTIONS, format!("{base}/api/chat"))
        .header("origin", "https://app.example.com")
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "content-type, x-api-key")
        .send()
        .await
        .unwrap();
    assert_eq!(preflight.status().as_u16(), 204);
    assert_eq!(
        preflight.headers()["access-control-allow-headers"],
        "content-type, authorization, x-api-key"
    );
    assert_eq!(
        preflight.headers()["access-control-allow-credentials"],
        "true"
    );
}
