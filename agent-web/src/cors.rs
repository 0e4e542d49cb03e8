//! CORS: which other origins' pages may call the endpoint from the browser, with which request
//! headers, and whether with their cookies.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// What the server allows other origins (see [`ChatServer::allow_origin`](super::ChatServer::allow_origin)).
#[derive(Debug, Default)]
pub(super) struct Cors {
    pub(super) origins: Vec<String>,
    /// Request headers allowed beside `content-type` and `authorization`.
    pub(super) headers: Vec<HeaderName>,
    pub(super) credentials: bool,
}

impl Cors {
    /// The `access-control-allow-headers` value: the two every chat request may send, then the
    /// server's own.
    fn allowed_headers(&self) -> HeaderValue {
        let mut names = String::from("content-type, authorization");
        for name in &self.headers {
            names.push_str(", ");
            names.push_str(name.as_str());
        }
        // Header names are visible ASCII, and so is what joins them.
        HeaderValue::from_str(&names).unwrap_or(HeaderValue::from_static("content-type"))
    }
}

/// CORS for the origins allowed: preflights answered, responses marked. Other origins get no
/// header, so browsers keep their pages out.
pub(super) async fn cors(
    State(cors): State<Arc<Cors>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let origin = request
        .headers()
        .get(header::ORIGIN)
        .and_then(|origin| origin.to_str().ok())
        .filter(|origin| cors.origins.iter().any(|allowed| allowed == origin))
        .map(str::to_owned);
    let mut response = if request.method() == Method::OPTIONS && origin.is_some() {
        StatusCode::NO_CONTENT.into_response()
    } else {
        next.run(request).await
    };
    if let Some(origin) = origin.and_then(|origin| HeaderValue::from_str(&origin).ok()) {
        let headers = response.headers_mut();
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static("GET, POST, PATCH, DELETE, OPTIONS"),
        );
        headers.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, cors.allowed_headers());
        // A `429` says in `retry-after` how long to wait: a page's script may read it.
        headers.insert(
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static("retry-after"),
        );
        if cors.credentials {
            headers.insert(
                header::ACCESS_CONTROL_ALLOW_CREDENTIALS,
                HeaderValue::from_static("true"),
            );
        }
        headers.insert(header::VARY, HeaderValue::from_static("origin"));
    }
    response
}
