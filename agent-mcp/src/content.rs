//! MCP content blocks and our parts, both ways: what a model is shown of an MCP tool result, and
//! what an MCP client gets of our tools' images and documents.

use rmcp::model::{ContentBlock, Resource, ResourceContents};

use agent_core::ToolResultMessage;
use agent_core::{ContentNote, Texts};
use agent_core::{Media, Part, Source};

/// The blocks as one text, one block per line: for an error result, whose text is what the model
/// reads. What is not text is named in `texts`, so the model knows it is there.
pub(super) fn as_text(blocks: &[ContentBlock], texts: &dyn Texts) -> String {
    let mut text = String::new();
    for part in as_parts(blocks, texts) {
        if !text.is_empty() {
            text.push('\n');
        }
        let note = match &part {
            Part::Text { text: piece } => {
                text.push_str(piece);
                continue;
            }
            Part::Image(media) => ContentNote::Image {
                media_type: &media.media_type,
            },
            Part::Document(media) => ContentNote::Document {
                media_type: &media.media_type,
            },
            Part::Audio(media) => ContentNote::Audio {
                media_type: &media.media_type,
            },
            // `as_parts` makes no other kind.
            _ => continue,
        };
        text.push_str(&texts.content_note(note));
    }
    text
}

/// The blocks as parts, in order: text as text (consecutive texts joined by a line break), images
/// and audio as themselves, an embedded resource's blob as the part its MIME type says (a PDF as
/// a document) and its text as text, a resource link as a line that names it in `texts`.
pub(super) fn as_parts(blocks: &[ContentBlock], texts: &dyn Texts) -> Vec<Part> {
    let mut parts: Vec<Part> = Vec::with_capacity(blocks.len());
    for block in blocks {
        let part = match block {
            ContentBlock::Text(content) => Part::text(content.text.clone()),
            ContentBlock::Image(image) => {
                Part::Image(Media::base64(image.mime_type.clone(), image.data.clone()))
            }
            ContentBlock::Audio(audio) => {
                Part::Audio(Media::base64(audio.mime_type.clone(), audio.data.clone()))
            }
            ContentBlock::Resource(embedded) => match &embedded.resource {
                ResourceContents::TextResourceContents { uri, text, .. } => {
                    let mut named = texts.content_note(ContentNote::TextResource { uri });
                    named.push('\n');
                    named.push_str(text);
                    Part::text(named)
                }
                ResourceContents::BlobResourceContents {
                    uri,
                    mime_type,
                    blob,
                    ..
                } => blob_part(uri, mime_type.as_deref(), blob, texts),
                _ => Part::text(texts.content_note(ContentNote::UnknownResource)),
            },
            ContentBlock::ResourceLink(link) => {
                Part::text(texts.content_note(ContentNote::ResourceLink {
                    name: &link.name,
                    uri: &link.uri,
                }))
            }
            _ => Part::text(texts.content_note(ContentNote::UnknownContent)),
        };
        match (parts.last_mut(), part) {
            (Some(Part::Text { text }), Part::Text { text: more }) => {
                text.push('\n');
                text.push_str(&more);
            }
            (_, part) => parts.push(part),
        }
    }
    parts
}

/// An embedded binary resource: an image, audio or document when its type says so, else a line
/// that names it (a model cannot read arbitrary bytes).
fn blob_part(uri: &str, mime_type: Option<&str>, blob: &str, texts: &dyn Texts) -> Part {
    let unreadable = |media_type| {
        Part::text(texts.content_note(ContentNote::BinaryResource { uri, media_type }))
    };
    let Some(media_type) = mime_type else {
        return unreadable(None);
    };
    let media = Media::base64(media_type, blob).with_name(uri);
    if media_type.starts_with("image/") {
        Part::Image(media)
    } else if media_type.starts_with("audio/") {
        Part::Audio(media)
    } else if media_type == "application/pdf" || media_type.starts_with("text/") {
        Part::Document(media)
    } else {
        unreadable(Some(media_type))
    }
}

/// A tool result as MCP content: its text, then each part as the block MCP has for it (images and
/// audio as themselves, documents as embedded resources, anything by URL as a resource link).
pub(super) fn blocks_of(result: ToolResultMessage) -> Vec<ContentBlock> {
    let mut blocks = Vec::with_capacity(1 + result.parts.len());
    if !result.content.is_empty() || result.parts.is_empty() {
        blocks.push(ContentBlock::text(result.content));
    }
    for part in result.parts {
        blocks.push(block_of(part));
    }
    blocks
}

fn block_of(part: Part) -> ContentBlock {
    let kind = part.kind();
    let media = match part {
        Part::Text { text } => return ContentBlock::text(text),
        Part::Image(media) | Part::Document(media) | Part::Audio(media) => media,
        // A kind of part of a later agent-core: named, so the client knows one was there.
        other => return ContentBlock::text(format!("[{}]", other.kind())),
    };
    match media.source {
        Source::Base64(data) if kind == "image" => ContentBlock::image(data, media.media_type),
        Source::Base64(data) if kind == "audio" => ContentBlock::audio(data, media.media_type),
        Source::Base64(data) => {
            let uri = format!("attachment:///{}", media.name.as_deref().unwrap_or(kind));
            ContentBlock::resource(
                ResourceContents::blob(data, uri).with_mime_type(media.media_type),
            )
        }
        Source::Url(url) => {
            let name = media.name.unwrap_or_else(|| kind.to_owned());
            ContentBlock::resource_link(Resource::new(url, name).with_mime_type(media.media_type))
        }
        // A source of a later agent-core: named, so the client knows one was there.
        _ => ContentBlock::text(format!("[{kind} ({})]", media.media_type)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_core::{Chinese, English};

    #[test]
    fn blocks_become_parts_and_parts_blocks() {
        let blocks = vec![
            ContentBlock::text("Here it is:"),
            ContentBlock::text("a chart"),
            ContentBlock::image("iVBORw==", "image/png"),
            ContentBlock::resource(
                ResourceContents::blob("JVBERg==", "file:///a.pdf")
                    .with_mime_type("application/pdf"),
            ),
            ContentBlock::resource(ResourceContents::blob("AAAA", "file:///x.bin")),
        ];
        let parts = as_parts(&blocks, &English);
        assert_eq!(
            parts,
            vec![
                Part::text("Here it is:\na chart"),
                Part::Image(Media::base64("image/png", "iVBORw==")),
                Part::Document(
                    Media::base64("application/pdf", "JVBERg==").with_name("file:///a.pdf")
                ),
                Part::text("[resource file:///x.bin: binary data]"),
            ]
        );
        assert_eq!(
            as_text(&blocks, &English),
            "Here it is:\na chart\n[image: image/png]\n[document: application/pdf]\n\
             [resource file:///x.bin: binary data]"
        );
        assert_eq!(
            as_text(&blocks, &Chinese),
            "Here it is:\na chart\n[图片：image/png]\n[文档：application/pdf]\n\
             [资源 file:///x.bin：二进制数据]"
        );

        let result = ToolResultMessage::new("c1", "Rendered:")
            .with_part(Part::image("image/png", [1, 2, 3]))
            .with_part(Part::document_url("https://example.com/r.pdf"));
        let back = blocks_of(result);
        assert_eq!(back.len(), 3);
        assert_eq!(back[1], ContentBlock::image("AQID", "image/png"));
        let ContentBlock::ResourceLink(link) = &back[2] else {
            panic!("{:?}", back[2]);
        };
        assert_eq!(link.uri, "https://example.com/r.pdf");
        assert_eq!(link.mime_type.as_deref(), Some("application/pdf"));
    }

    #[test]
    fn what_the_model_cannot_read_is_named_in_the_texts_given() {
        let blocks = vec![
            ContentBlock::resource(ResourceContents::text("第一行", "memo://1")),
            ContentBlock::resource(
                ResourceContents::blob("AAAA", "file:///x.bin")
                    .with_mime_type("application/octet-stream"),
            ),
            ContentBlock::resource_link(Resource::new("file:///报告.pdf", "报告")),
        ];
        assert_eq!(
            as_parts(&blocks, &English),
            [Part::text(
                "[resource memo://1]\n第一行\n\
                 [resource file:///x.bin: application/octet-stream]\n\
                 [resource link 报告: file:///报告.pdf]"
            )]
        );
        assert_eq!(
            as_parts(&blocks, &Chinese),
            [Part::text(
                "[资源 memo://1]\n第一行\n\
                 [资源 file:///x.bin：application/octet-stream]\n\
                 [资源链接 报告：file:///报告.pdf]"
            )]
        );
    }
}
