//! What a model is shown of an MCP tool result's content blocks.

use rmcp::model::{ContentBlock, ResourceContents};

/// The blocks as one text, one block per line. Text goes verbatim; what a text-only model cannot
/// take in (images, audio, binary resources) is named, so the model knows it is there.
pub(super) fn as_text(blocks: &[ContentBlock]) -> String {
    let mut text = String::new();
    for block in blocks {
        if !text.is_empty() {
            text.push('\n');
        }
        match block {
            ContentBlock::Text(content) => text.push_str(&content.text),
            ContentBlock::Image(image) => {
                text.push_str(&format!("[image: {}]", image.mime_type));
            }
            ContentBlock::Audio(audio) => {
                text.push_str(&format!("[audio: {}]", audio.mime_type));
            }
            ContentBlock::Resource(embedded) => match &embedded.resource {
                ResourceContents::TextResourceContents {
                    uri, text: body, ..
                } => {
                    text.push_str(&format!("[resource {uri}]\n{body}"));
                }
                ResourceContents::BlobResourceContents { uri, mime_type, .. } => {
                    let kind = mime_type.as_deref().unwrap_or("binary data");
                    text.push_str(&format!("[resource {uri}: {kind}]"));
                }
                _ => text.push_str("[resource]"),
            },
            ContentBlock::ResourceLink(link) => {
                text.push_str(&format!("[resource link {}: {}]", link.name, link.uri));
            }
            _ => text.push_str("[content of a kind this client does not know]"),
        }
    }
    text
}
