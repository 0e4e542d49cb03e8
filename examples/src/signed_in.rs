//! Chats per signed-in person, for a chat server behind a sign-in proxy (oauth2-proxy, a load
//! balancer's OIDC, …) that puts who signed in into a request header: requests without it are
//! refused (`401`), and each chat id is taken as the person's own (`alice` asking for chat `c1`
//! gets `alice/c1`), so people sharing one database never see or continue each other's chats.
//!
//! The header is trusted as it comes: the server must be reachable only through the proxy, which
//! sets it (and drops any the client sent). This is what today's `ChatServer` allows: the agent,
//! its system prompt and its tools are the same for everyone; the person's name in the prompt or a
//! tool's context waits for an identity API on `ChatServer`.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The header the sign-in proxy sets (oauth2-proxy's `--pass-user-headers` sends it).
pub const USER_HEADER: &str = "x-forwarded-user";

/// `router` (a `ChatServer`'s) for signed-in people only, each with chats of their own.
pub fn signed_in(router: axum::Router) -> axum::Router {
    router.layer(axum::middleware::from_fn(per_person))
}

/// The chat id `id` of person `user`, as kept in the session store.
pub fn chat_of(user: &str, id: &str) -> String {
    format!("{user}/{id}")
}

/// Who signed in: the header's value, when it is a plain name (no `/`, no control characters).
fn user(request: &Request) -> Option<String> {
    let value = request.headers().get(USER_HEADER)?.to_str().ok()?.trim();
    let plain = !value.is_empty()
        && value.len() <= 200
        && !value.chars().any(|c| c == '/' || c.is_control());
    plain.then(|| value.to_owned())
}

fn refuse(status: StatusCode, message: &str) -> Response {
    let body = serde_json::json!({ "error": message }).to_string();
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

async fn per_person(request: Request, next: Next) -> Response {
    let Some(user) = user(&request) else {
        return refuse(StatusCode::UNAUTHORIZED, "sign in first");
    };
    if request.uri().path() != "/api/chat" {
        return next.run(request).await;
    }
    let (mut parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, agent_core::web::DEFAULT_BODY_LIMIT).await else {
        return refuse(StatusCode::PAYLOAD_TOO_LARGE, "the body is too large");
    };
    // A body that is not a chat request goes on as it is: the server refuses it (`400`).
    let bytes = match serde_json::from_slice::<serde_json::Value>(&bytes) {
        Ok(mut chat) => match chat.get("id").and_then(serde_json::Value::as_str) {
            Some(id) => {
                chat["id"] = chat_of(&user, id).into();
                parts.headers.remove(header::CONTENT_LENGTH);
                serde_json::to_vec(&chat).unwrap_or_default().into()
            }
            None => bytes,
        },
        Err(_) => bytes,
    };
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}
