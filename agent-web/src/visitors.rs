//! Visitors: on a server that does not identify its callers, each browser is a visitor of its
//! own, known by a cookie the server signs, so a chat is its visitor's alone. Without it, a chat
//! id would be a bearer token: whoever learned it (a shared link, a log, a screen) could read the
//! chat, take its grants and approve its calls.
//!
//! The first request without a good cookie (none, or one whose signature does not verify under
//! the server's keys) makes a new visitor: a random id, sent back in a `set-cookie` as the id and
//! an HMAC-SHA256 of it under the server's keys (those of its grants, [`CallGrants`], with a field
//! of its own so a visitor's tag is never a grant). A visitor's chats are kept under their owner
//! key (`visitor-<id>`), as a signed-in user's are under theirs: another browser's requests on the
//! same chat id are a `404`, as for a chat that does not exist. The cookie is `HttpOnly` (no
//! script reads it) and `SameSite=Lax` (another site's page does not send it).

use axum::extract::{Request, State};
use axum::http::header::{COOKIE, SET_COOKIE};
use axum::http::{HeaderMap, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;

use super::grants::CallGrants;
use agent_core::RunId;

/// The cookie a visitor is known by.
pub(crate) const VISITOR_COOKIE: &str = "agent_web_visitor";

/// The field that names a visitor's tag among the uses of the server's keys.
const USE: &str = "visitor/1";

/// How long a browser keeps its cookie: 400 days, the most browsers keep one.
const KEPT_FOR_SECONDS: u64 = 400 * 24 * 60 * 60;

/// The visitor a request is from: what [`visitors`] puts in each request's extensions.
#[derive(Debug, Clone)]
pub(crate) struct Visitor {
    id: String,
}

impl Visitor {
    /// The owner key the visitor's chats are kept under.
    pub(crate) fn owner(&self) -> String {
        format!("visitor-{}", self.id)
    }
}

/// The layer that knows each request's visitor: the one its cookie names when the cookie's tag
/// verifies under `grants`' keys, else a new one, whose cookie the response sets.
pub(crate) async fn visitors(
    State(grants): State<CallGrants>,
    mut request: Request,
    next: Next,
) -> Response {
    let known = cookie(request.headers()).and_then(|value| verified(&grants, value));
    let (visitor, set) = match known {
        Some(visitor) => (visitor, None),
        None => {
            let visitor = Visitor {
                id: RunId::new().to_string(),
            };
            let set = set_cookie(&grants, &visitor);
            (visitor, Some(set))
        }
    };
    request.extensions_mut().insert(visitor);
    let mut response = next.run(request).await;
    if let Some(set) = set {
        response.headers_mut().append(SET_COOKIE, set);
    }
    response
}

/// The value of the visitor's cookie among the request's cookies, if it has one.
fn cookie(headers: &HeaderMap) -> Option<&str> {
    (headers.get_all(COOKIE).iter())
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == VISITOR_COOKIE)
        .map(|(_, value)| value)
}

/// The visitor a cookie's value names, when its tag verifies: `id.tag`, the id plain hexadecimal.
fn verified(grants: &CallGrants, value: &str) -> Option<Visitor> {
    let (id, tag) = value.split_once('.')?;
    let plain = !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_hexdigit());
    (plain && grants.verify_fields(&[USE, id], tag)).then(|| Visitor { id: id.to_owned() })
}

/// The `set-cookie` that gives a browser `visitor`'s cookie.
fn set_cookie(grants: &CallGrants, visitor: &Visitor) -> HeaderValue {
    let tag = grants.sign_fields(&[USE, &visitor.id]);
    let cookie = format!(
        "{VISITOR_COOKIE}={}.{tag}; Path=/; Max-Age={KEPT_FOR_SECONDS}; HttpOnly; SameSite=Lax",
        visitor.id
    );
    // Hexadecimal, URL-safe base64 and the attributes: visible ASCII only.
    HeaderValue::from_str(&cookie).unwrap_or_else(|_| HeaderValue::from_static(""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cookie_verifies_under_the_keys_that_signed_it_only() {
        let grants = CallGrants::with_keys(["k1"]);
        let visitor = Visitor {
            id: RunId::new().to_string(),
        };
        let set = set_cookie(&grants, &visitor);
        let pair = set.to_str().unwrap().split(';').next().unwrap();
        let value = pair.split_once('=').unwrap().1;
        let found = verified(&grants, value).unwrap();
        assert_eq!(found.owner(), visitor.owner());
        // Rotated: the old key still verifies; another server's does not.
        let rotated = CallGrants::with_keys(["k2", "k1"]);
        assert!(verified(&rotated, value).is_some());
        assert!(verified(&CallGrants::with_keys(["k2"]), value).is_none());
        // Another id under the same tag, a bare id, or an id that is not plain: none.
        let (_, tag) = value.split_once('.').unwrap();
        for forged in [
            format!("abcdef.{tag}"),
            visitor.id.clone(),
            format!("a\u{1f}b.{tag}"),
        ] {
            assert!(verified(&grants, &forged).is_none(), "{forged}");
        }
        let mut headers = HeaderMap::new();
        let sent = format!("theme=dark; {VISITOR_COOKIE}={value}");
        headers.insert(COOKIE, HeaderValue::from_str(&sent).unwrap());
        assert_eq!(cookie(&headers), Some(value));
    }
}
