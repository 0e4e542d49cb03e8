//! The agent's card, `GET /.well-known/agent-card.json`: what an agent's card says by default, and
//! how it is served so that clients may cache it (`Cache-Control` with a `max-age`, an `ETag` a
//! revalidation is answered `304` by, and `Last-Modified`, the time the server was built).

use agent_core::Agent;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use crate::wire::{AgentCard, AgentInterface, Capabilities, Skill};

/// How long a client may keep the card before it asks again (`Cache-Control: max-age`), in
/// seconds. A card changes only when its server does, so a few minutes spare the requests of
/// clients that read it before each call.
pub const CARD_MAX_AGE: u64 = 300;

/// The card of `agent`: its name, its tools as skills.
pub(crate) fn card_of<S: Send + Sync + 'static>(agent: &Agent<S>) -> AgentCard {
    let name = agent.name().unwrap_or("agent").to_owned();
    let skills = (agent.tools().definitions().iter())
        .map(|tool| Skill {
            id: tool.name.clone(),
            name: tool.name.clone(),
            description: tool.description.clone(),
            tags: vec!["tool".to_owned()],
            examples: Vec::new(),
        })
        .collect();
    AgentCard {
        description: format!("The agent `{name}`."),
        name,
        supported_interfaces: Vec::new(),
        version: "1.0.0".to_owned(),
        capabilities: Capabilities {
            streaming: true,
            push_notifications: false,
        },
        security_schemes: serde_json::Map::new(),
        security_requirements: Vec::new(),
        default_input_modes: vec!["text/plain".to_owned()],
        default_output_modes: vec!["text/plain".to_owned()],
        skills,
    }
}

/// The card as served: the server's `card` with the endpoint it is reached at (`public_url`, or
/// `http://` and the `Host` asked), and its caching headers; `304` with no body when the
/// request's `If-None-Match` names the card's tag. `modified` is the `Last-Modified` date.
pub(crate) fn serve_card(
    card: &AgentCard,
    public_url: Option<&str>,
    modified: &HeaderValue,
    headers: &HeaderMap,
) -> Response {
    let url = match public_url {
        Some(url) => url.to_owned(),
        None => {
            let host = (headers.get(header::HOST))
                .and_then(|host| host.to_str().ok())
                .unwrap_or("127.0.0.1");
            format!("http://{host}")
        }
    };
    let mut card = card.clone();
    card.supported_interfaces = vec![AgentInterface {
        url,
        protocol_binding: "JSONRPC".to_owned(),
        protocol_version: "1.0".to_owned(),
    }];
    // A card is plain data: serializing it cannot fail.
    let body = serde_json::to_vec(&card).unwrap_or_default();
    let etag = entity_tag(&body);
    let caching = [
        (
            header::CACHE_CONTROL,
            HeaderValue::from_str(&format!("public, max-age={CARD_MAX_AGE}"))
                .unwrap_or(HeaderValue::from_static("no-cache")),
        ),
        (header::ETAG, etag.clone()),
        (header::LAST_MODIFIED, modified.clone()),
    ];
    if names_tag(headers, &etag) {
        return (StatusCode::NOT_MODIFIED, caching).into_response();
    }
    let json = [(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    )];
    (json, caching, body).into_response()
}

/// The card's entity tag: a digest of its bytes, so it changes when they do.
fn entity_tag(body: &[u8]) -> HeaderValue {
    let digest = Sha256::digest(body);
    let hex: String = digest[..16]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    // Quotes and hex digits are all visible ASCII.
    HeaderValue::from_str(&format!("\"{hex}\"")).unwrap_or(HeaderValue::from_static("\"card\""))
}

/// Whether the request's `If-None-Match` names `etag` (or is `*`): the client's copy is current.
/// Tags compare weakly, as RFC 9110 asks of `If-None-Match`: `W/"x"` names `"x"`.
fn names_tag(headers: &HeaderMap, etag: &HeaderValue) -> bool {
    let etag = etag.to_str().unwrap_or_default();
    (headers.get_all(header::IF_NONE_MATCH).iter())
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(str::trim)
        .any(|tag| tag == "*" || tag.trim_start_matches("W/") == etag)
}

/// `at` as an HTTP date (RFC 9110's IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`).
pub(crate) fn http_date(at: time::OffsetDateTime) -> HeaderValue {
    let at = at.to_offset(time::UtcOffset::UTC);
    let (weekday, month) = (at.weekday().to_string(), at.month().to_string());
    let date = format!(
        "{}, {:02} {} {} {:02}:{:02}:{:02} GMT",
        &weekday[..3],
        at.day(),
        &month[..3],
        at.year(),
        at.hour(),
        at.minute(),
        at.second()
    );
    // The date is visible ASCII: digits, English names, spaces and colons.
    HeaderValue::from_str(&date)
        .unwrap_or(HeaderValue::from_static("Thu, 01 Jan 1970 00:00:00 GMT"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_written_as_http_dates() {
        let at = time::OffsetDateTime::from_unix_timestamp(784_111_777).unwrap();
        assert_eq!(http_date(at), "Sun, 06 Nov 1994 08:49:37 GMT");
    }

    #[test]
    fn if_none_match_names_a_tag_strongly_weakly_or_by_star() {
        let etag = entity_tag(b"{}");
        let asked = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::IF_NONE_MATCH, HeaderValue::from_str(value).unwrap());
            names_tag(&headers, &etag)
        };
        let tag = etag.to_str().unwrap();
        assert!(asked(tag));
        assert!(asked(&format!("W/{tag}")));
        assert!(asked(&format!("\"a\", {tag}")));
        assert!(asked("*"));
        assert!(!asked("\"a\""));
        assert!(!names_tag(&HeaderMap::new(), &etag));
    }
}
