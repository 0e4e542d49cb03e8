//! A2A's parts and ours: text, files (bytes or a URL, with a media type and a name), and data,
//! which our side reads as its JSON text.

use agent_core::{Media, Part, Source};

use crate::wire::MessagePart;

/// An A2A part as one of ours (`None`: a part with nothing in it).
pub(crate) fn part_in(part: &MessagePart) -> Option<Part> {
    if let Some(text) = &part.text {
        return Some(Part::text(text.clone()));
    }
    if let Some(data) = &part.data {
        return Some(Part::text(data.to_string()));
    }
    let media_type = (part.media_type.clone()).unwrap_or_else(|| "application/octet-stream".into());
    let mut media = match (&part.raw, &part.url) {
        (Some(raw), _) => Media::base64(media_type.clone(), raw.clone()),
        (None, Some(url)) => Media::url(media_type.clone(), url.clone()),
        _ => return None,
    };
    media.name = part.filename.clone();
    Some(if media_type.starts_with("image/") {
        Part::Image(media)
    } else if media_type.starts_with("audio/") {
        Part::Audio(media)
    } else {
        Part::Document(media)
    })
}

/// One of our parts as an A2A part.
pub(crate) fn part_out(part: &Part) -> MessagePart {
    let Some(media) = part.media() else {
        return match part {
            Part::Text { text } => MessagePart::text(text.clone()),
            _ => MessagePart::default(),
        };
    };
    let mut out = match &media.source {
        Source::Base64(data) => MessagePart::raw(data.clone(), media.media_type.clone()),
        Source::Url(url) => MessagePart::url(url.clone(), media.media_type.clone()),
        // A source of a later agent-core: as the URL it is read from.
        _ => MessagePart::url(media.to_url(), media.media_type.clone()),
    };
    out.filename = media.name.clone();
    out
}
