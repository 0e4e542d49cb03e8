//! CORS: which other origins' pages may call the endpoint from the browser, with which request
//! headers, and whether with their cookies.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// What a server allows other origins' pages: which may call it from the browser, with which
/// request headers, and whether with their cookies. [`ChatServer`](super::ChatServer) keeps one
/// (see [`ChatServer::allow_origin`](super::ChatServer::allow_origin)); a server on another
/// protocol takes the same rules onto its routes with [`apply`](Cors::apply).
///
/// ```
/// use agent_web::Cors;
/// use axum::http::HeaderName;
///
/// let cors = Cors::new()
///     .allow_origin("https://app.example.com")
///     .allow_header(HeaderName::from_static("x-api-key"));
/// let routes = cors.apply(axum::Router::new());
/// # let _ = routes;
/// ```
#[derive(Debug, Default, Clone)]
pub struct Cors {
    pub(super) origins: Vec<String>,
    /// Request headers allowed beside `content-type` and `authorization`.
    pub(super) headers: Vec<HeaderName>,
    pub(super) credentials: bool,
}

impl Cors {
    /// No other origin allowed: browsers keep other origins' pages out.
    pub fn new() -> Self {
        Cors::default()
    }

    /// Lets pages from `origin` (`https://app.example.com`) call the routes from the browser,
    /// sending `content-type` and `authorization`.
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Self {
        self.origins.push(origin.into());
        self
    }

    /// Lets the pages of the origins allowed send the request header `name` too (a sign-in
    /// header of the application's own).
    pub fn allow_header(mut self, name: HeaderName) -> Self {
        self.headers.push(name);
        self
    }

    /// Lets the pages of the origins allowed send their cookies
    /// (`access-control-allow-credentials`); their requests must ask for it too
    /// (`credentials: "include"`).
    pub fn allow_credentials(mut self) -> Self {
        self.credentials = true;
        self
    }

    /// `router` under these rules: a preflight (`OPTIONS`) from an origin allowed is answered
    /// `204` before any route, and every response to such an origin is marked for it; other
    /// origins get no CORS header.
    pub fn apply(self, router: axum::Router) -> axum::Router {
        router.layer(axum::middleware::from_fn_with_state(Arc::new(self), cors))
    }

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
