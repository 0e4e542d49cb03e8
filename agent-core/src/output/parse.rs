//! Finding the JSON in an answer written as text.

/// The JSON in an answer written as text: the answer itself, the inside of a fenced code block,
/// or the span from the first `{` or `[` to the last `}` or `]` (models put words around it).
pub(crate) fn json_in_text(text: &str) -> &str {
    let text = text.trim();
    // JSON as it is comes first: a fence inside one of its strings is no fence.
    if text.starts_with(['{', '[']) {
        return text;
    }
    if let Some(fenced) = fenced_block(text) {
        return fenced;
    }
    let start = text.find(['{', '[']);
    let end = text.rfind(['}', ']']);
    match (start, end) {
        (Some(start), Some(end)) if start < end => &text[start..=end],
        _ => text,
    }
}

/// The inside of the first ```` ``` ```` block (with or without a language tag).
fn fenced_block(text: &str) -> Option<&str> {
    let after = &text[text.find("```")? + 3..];
    // The language tag runs to the end of the line.
    let body = &after[after.find('\n')? + 1..];
    let end = body.find("```")?;
    Some(body[..end].trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_found_in_fences_and_among_words() {
        assert_eq!(json_in_text(" {\"a\": 1} "), "{\"a\": 1}");
        assert_eq!(json_in_text("```json\n{\"a\": 1}\n```"), "{\"a\": 1}");
        assert_eq!(
            json_in_text("Here it is:\n```\n[1, 2]\n```\nDone."),
            "[1, 2]"
        );
        assert_eq!(
            json_in_text("Sure! {\"a\": {\"b\": 2}} Hope that helps."),
            "{\"a\": {\"b\": 2}}"
        );
        assert_eq!(json_in_text("no json here"), "no json here");
        let with_a_fence_inside = "{\"body\": \"run:\\n```sh\\nls\\n```\"}";
        assert_eq!(json_in_text(with_a_fence_inside), with_a_fence_inside);
    }
}
