//! Who asks, for a chat server behind a sign-in proxy (oauth2-proxy, a load balancer's OIDC, …)
//! that puts who signed in into a request header: [`signed_in`] is the function
//! [`ChatServer::identify`](agent_web::ChatServer::identify) takes, turning the header into
//! the run's [`User`] (a request without it is refused, `401`). The server keeps each person's
//! chats apart (a chat id names only one of the caller's own), and the tools are told who asks.
//!
//! The header is trusted as it comes: the server must be reachable only through the proxy, which
//! sets it (and drops any the client sent).

use agent_web::ChatOwner;
use axum::http::StatusCode;
use axum::http::request::Parts;

/// The header the sign-in proxy sets (oauth2-proxy's `--pass-user-headers` sends it).
pub const USER_HEADER: &str = "x-forwarded-user";

/// The person a request is for: the context of their runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User(pub String);

impl ChatOwner for User {
    fn owner(&self) -> &str {
        &self.0
    }
}

/// Who signed in: the header's value, when it is a plain name (no control characters, at most
/// 200 bytes); else the refusal.
pub async fn signed_in(parts: Parts) -> Result<User, (StatusCode, &'static str)> {
    let value = parts
        .headers
        .get(USER_HEADER)
        .and_then(|value| value.to_str().ok())
        .map(str::trim)
        .unwrap_or_default();
    let plain = !value.is_empty() && value.len() <= 200 && !value.chars().any(char::is_control);
    if plain {
        Ok(User(value.to_owned()))
    } else {
        Err((StatusCode::UNAUTHORIZED, "sign in first"))
    }
}
