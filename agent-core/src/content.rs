//! What a message holds besides its text: images, documents, audio, and text between them.
//!
//! A user message or a tool result is its text ([`Message::User`](crate::Message::User)'s
//! `content`, [`ToolResultMessage::content`](crate::ToolResultMessage::content)) followed by its
//! [`Part`]s, in order. Plain text needs no parts, and a transcript without parts is the same JSON
//! as before parts existed.

use base64::Engine as _;
use serde::{Deserialize, Serialize};

/// One piece of a message after its text.
///
/// ```
/// use agent_core::{Message, Part};
///
/// let question = Message::user("What is on this receipt?")
///     .with_part(Part::image_url("https://example.com/receipt.png"))
///     .with_part(Part::document("application/pdf", b"%PDF-1.7 ..."));
/// let saved = serde_json::to_string(&question).unwrap();
/// assert_eq!(serde_json::from_str::<Message>(&saved).unwrap(), question);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Part {
    /// More text, after the parts before it.
    Text {
        /// The text.
        text: String,
    },
    /// An image (`image/png`, `image/jpeg`, `image/gif`, `image/webp`).
    Image(Media),
    /// A document: a PDF (`application/pdf`), or plain text a provider reads as a document.
    Document(Media),
    /// Audio (`audio/wav`, `audio/mpeg`, ...). Few providers take it; in a user message the others
    /// refuse it with [`ModelError::Unsupported`](crate::ModelError::Unsupported) before sending
    /// anything, and in a tool result (which the user cannot fix) they name it in a text the model
    /// reads, as they do any part they cannot take there.
    Audio(Media),
}

/// The bytes of an image, document or audio part, or where they are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Media {
    /// The MIME type, such as `image/png` or `application/pdf`.
    pub media_type: String,
    /// The bytes (base64) or their URL.
    pub source: Source,
    /// A file name, for the providers that show one to the model (documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// Where a part's bytes are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Source {
    /// A URL the provider fetches (`https://`, or a provider's own file URI such as `gs://`).
    Url(String),
    /// The bytes, base64-encoded (standard alphabet, padded): kept encoded, since every provider
    /// and every saved transcript wants them so.
    Base64(String),
}

impl Part {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Part::Text { text: text.into() }
    }

    /// An image from its bytes.
    pub fn image(media_type: impl Into<String>, bytes: impl AsRef<[u8]>) -> Self {
        Part::Image(Media::bytes(media_type, bytes))
    }

    /// An image the provider fetches from `url`; its type is guessed from the URL's extension
    /// (`image/jpeg` when there is none it knows). [`Media::url`] says it outright.
    pub fn image_url(url: impl Into<String>) -> Self {
        let url = url.into();
        let media_type = guess_media_type(&url).unwrap_or("image/jpeg");
        Part::Image(Media::url(media_type, url))
    }

    /// A document from its bytes.
    pub fn document(media_type: impl Into<String>, bytes: impl AsRef<[u8]>) -> Self {
        Part::Document(Media::bytes(media_type, bytes))
    }

    /// A document the provider fetches from `url`; its type is guessed from the URL's extension
    /// (`application/pdf` when there is none it knows).
    pub fn document_url(url: impl Into<String>) -> Self {
        let url = url.into();
        let media_type = guess_media_type(&url).unwrap_or("application/pdf");
        Part::Document(Media::url(media_type, url))
    }

    /// Audio from its bytes.
    pub fn audio(media_type: impl Into<String>, bytes: impl AsRef<[u8]>) -> Self {
        Part::Audio(Media::bytes(media_type, bytes))
    }

    /// The media of an image, document or audio part; `None` for text.
    pub fn media(&self) -> Option<&Media> {
        match self {
            Part::Text { .. } => None,
            Part::Image(media) | Part::Document(media) | Part::Audio(media) => Some(media),
        }
    }

    /// What kind of part this is, in words: for errors that name a part a provider cannot take.
    pub fn kind(&self) -> &'static str {
        match self {
            Part::Text { .. } => "text",
            Part::Image(_) => "image",
            Part::Document(_) => "document",
            Part::Audio(_) => "audio",
        }
    }
}

impl Media {
    /// Media from its bytes, which are base64-encoded once, here.
    pub fn bytes(media_type: impl Into<String>, bytes: impl AsRef<[u8]>) -> Self {
        Media::base64(
            media_type,
            base64::engine::general_purpose::STANDARD.encode(bytes),
        )
    }

    /// Media from bytes already base64-encoded (as MCP servers send them).
    pub fn base64(media_type: impl Into<String>, data: impl Into<String>) -> Self {
        Media {
            media_type: media_type.into(),
            source: Source::Base64(data.into()),
            name: None,
        }
    }

    /// Media the provider fetches from `url`.
    pub fn url(media_type: impl Into<String>, url: impl Into<String>) -> Self {
        Media {
            media_type: media_type.into(),
            source: Source::Url(url.into()),
            name: None,
        }
    }

    /// Names the file (shown to the model by the providers that take a name).
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The bytes as a `data:` URL (`data:image/png;base64,...`), or the URL itself: the form
    /// OpenAI's APIs take.
    pub fn to_url(&self) -> String {
        self.as_url().to_string()
    }

    /// [`to_url`](Self::to_url) without building the string: it displays, and serializes as a
    /// JSON string written straight into the request body.
    pub fn as_url(&self) -> MediaUrl<'_> {
        MediaUrl(self)
    }
}

/// A part's bytes as a `data:` URL, or its URL: see [`Media::as_url`].
#[derive(Debug, Clone, Copy)]
pub struct MediaUrl<'a>(&'a Media);

impl std::fmt::Display for MediaUrl<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0.source {
            Source::Url(url) => f.write_str(url),
            Source::Base64(data) => write!(f, "data:{};base64,{data}", self.0.media_type),
        }
    }
}

impl Serialize for MediaUrl<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// The MIME type a URL's file extension names, for the common image, document and audio types.
fn guess_media_type(url: &str) -> Option<&'static str> {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    let extension = path.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match extension.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "pdf" => "application/pdf",
        "txt" => "text/plain",
        "wav" => "audio/wav",
        "mp3" => "audio/mpeg",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_are_encoded_once_and_urls_name_their_type() {
        let image = Part::image("image/png", [0x89, b'P', b'N', b'G']);
        assert_eq!(
            image.media().unwrap().source,
            Source::Base64("iVBORw==".into())
        );
        assert_eq!(
            image.media().unwrap().to_url(),
            "data:image/png;base64,iVBORw=="
        );
        let photo = Part::image_url("https://example.com/a/photo.WEBP?size=2");
        assert_eq!(photo.media().unwrap().media_type, "image/webp");
        assert_eq!(
            Part::image_url("https://example.com/x")
                .media()
                .unwrap()
                .media_type,
            "image/jpeg"
        );
        assert_eq!(
            Part::document_url("https://example.com/notes.txt")
                .media()
                .unwrap()
                .media_type,
            "text/plain"
        );
    }

    #[test]
    fn parts_serialize_tagged_and_load_again() {
        let part = Part::Document(Media::bytes("application/pdf", b"%PDF").with_name("a.pdf"));
        let json = serde_json::to_value(&part).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "type": "document",
                "media_type": "application/pdf",
                "source": {"base64": "JVBERg=="},
                "name": "a.pdf"
            })
        );
        assert_eq!(serde_json::from_value::<Part>(json).unwrap(), part);
    }
}
