//! Doc comments into descriptions: the function's becomes the tool's, a parameter's (or its entry in
//! a rustdoc `# Arguments` list) becomes the parameter's.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, ExprLit, Lit, Meta};

/// One line of a doc comment, with the span of the attribute it came from.
pub struct DocLine {
    pub text: String,
    pub span: Span,
}

/// A parameter documented in a `# Arguments` list.
pub struct ArgumentDoc {
    pub name: String,
    pub description: String,
    pub span: Span,
}

/// The lines of every `#[doc = "..."]` (`///` and `/** */`) among `attrs`.
pub fn doc_lines(attrs: &[Attribute]) -> Vec<DocLine> {
    let mut lines = Vec::new();
    for attr in attrs {
        let Meta::NameValue(meta) = &attr.meta else {
            continue;
        };
        if !meta.path.is_ident("doc") {
            continue;
        }
        if let Expr::Lit(ExprLit {
            lit: Lit::Str(text),
            ..
        }) = &meta.value
        {
            // `split`, not `lines`: an empty `///` is a paragraph break and must stay a line.
            for line in text.value().split('\n') {
                lines.push(DocLine {
                    text: line.trim_end_matches('\r').to_owned(),
                    span: attr.span(),
                });
            }
        }
    }
    dedent(&mut lines);
    lines
}

/// Removes the indentation every non-blank line shares (the space after `///`, a block comment's margin).
fn dedent(lines: &mut [DocLine]) {
    let indent = lines
        .iter()
        .filter(|line| !line.text.trim().is_empty())
        .map(|line| line.text.len() - line.text.trim_start().len())
        .min()
        .unwrap_or(0);
    for line in lines.iter_mut() {
        let cut = indent.min(line.text.len() - line.text.trim_start().len());
        line.text.drain(..cut);
        line.text.truncate(line.text.trim_end().len());
    }
}

/// Splits the `# Arguments` (or `# Parameters`) section off a doc comment: returns the rest and the
/// parameters it documents.
pub fn split_arguments(lines: Vec<DocLine>) -> (Vec<DocLine>, Vec<ArgumentDoc>) {
    let mut body = Vec::new();
    let mut arguments: Vec<ArgumentDoc> = Vec::new();
    let mut section_level: Option<usize> = None;
    for line in lines {
        let heading = heading_level(&line.text);
        if let Some(level) = section_level {
            if heading.is_some_and(|(found, _)| found <= level) {
                section_level = None;
            } else {
                if let Some(doc) = argument_item(&line) {
                    arguments.push(doc);
                } else if let Some(last) = arguments.last_mut() {
                    // An indented continuation of the previous item.
                    let text = line.text.trim();
                    if !text.is_empty() {
                        join_line(&mut last.description, text);
                    }
                }
                continue;
            }
        }
        if let Some((level, title)) = heading
            && (title.eq_ignore_ascii_case("arguments") || title.eq_ignore_ascii_case("parameters"))
        {
            section_level = Some(level);
            continue;
        }
        body.push(line);
    }
    (body, arguments)
}

fn heading_level(line: &str) -> Option<(usize, &str)> {
    let level = line.bytes().take_while(|&byte| byte == b'#').count();
    let rest = &line[level..];
    ((1..=6).contains(&level) && rest.starts_with(' ')).then(|| (level, rest.trim()))
}

/// `* `city` - City name`, `- city: City name` and the like.
fn argument_item(line: &DocLine) -> Option<ArgumentDoc> {
    let text = line.text.trim_start();
    let rest = text
        .strip_prefix("* ")
        .or_else(|| text.strip_prefix("- "))?
        .trim_start();
    let (name, rest) = match rest.strip_prefix('`') {
        Some(quoted) => {
            let end = quoted.find('`')?;
            (&quoted[..end], &quoted[end + 1..])
        }
        None => {
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            (&rest[..end], &rest[end..])
        }
    };
    if name.is_empty() {
        return None;
    }
    let rest = rest.trim_start();
    let description = ["- ", "– ", "— ", ": ", "-", ":"]
        .iter()
        .find_map(|separator| rest.strip_prefix(separator))
        .unwrap_or(rest)
        .trim();
    Some(ArgumentDoc {
        name: name.trim_start_matches("r#").to_owned(),
        description: render_inline(description),
        span: line.span,
    })
}

/// Renders doc lines as the model should read them: hard-wrapped lines joined, paragraphs separated by
/// a blank line, lists, headings and code blocks kept on their own lines, intra-doc links unwrapped.
pub fn render(lines: &[DocLine]) -> String {
    let mut paragraphs: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut in_code = false;
    for line in lines {
        let text = line.text.as_str();
        let fence = text.trim_start().starts_with("```") || text.trim_start().starts_with("~~~");
        if in_code || fence {
            if fence {
                in_code = !in_code;
            }
            if !current.is_empty() {
                current.push('\n');
            }
            current.push_str(text);
            continue;
        }
        if text.trim().is_empty() {
            if !current.is_empty() {
                paragraphs.push(std::mem::take(&mut current));
            }
            continue;
        }
        let rendered = render_inline(text);
        if heading_level(text).is_some() {
            // A heading stands alone as its own paragraph.
            if !current.is_empty() {
                paragraphs.push(std::mem::take(&mut current));
            }
            paragraphs.push(rendered);
            continue;
        }
        if current.is_empty() {
            current = rendered;
        } else if starts_own_line(text) {
            current.push('\n');
            current.push_str(&rendered);
        } else {
            join_line(&mut current, rendered.trim_start());
        }
    }
    if !current.is_empty() {
        paragraphs.push(current);
    }
    paragraphs.join("\n\n")
}

fn starts_own_line(line: &str) -> bool {
    let text = line.trim_start();
    let numbered = text.split_once(". ").is_some_and(|(number, _)| {
        !number.is_empty() && number.bytes().all(|byte| byte.is_ascii_digit())
    });
    numbered
        || ["- ", "* ", "+ ", "> ", "#", "|"]
            .iter()
            .any(|marker| text.starts_with(marker))
}

/// Joins a wrapped line to the text before it: with a space, or without one between CJK characters.
fn join_line(text: &mut String, next: &str) {
    let tight = text.chars().last().is_some_and(is_cjk) && next.chars().next().is_some_and(is_cjk);
    if !tight {
        text.push(' ');
    }
    text.push_str(next);
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x2E80..=0x303F | 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF |
        0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0xFF00..=0xFFEF)
}

/// Unwraps rustdoc intra-doc links (`[`Unit`]` becomes `` `Unit` ``) outside code spans; keeps
/// `[text](url)` links, which read fine.
fn render_inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_code = false;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if c == '`' {
            in_code = !in_code;
        } else if c == '['
            && !in_code
            && let Some(end) = rest.find(']')
        {
            let inner = &rest[1..end];
            let after = &rest[end + 1..];
            if !inner.is_empty() && !inner.contains('[') && !after.starts_with('(') {
                out.push_str(inner);
                rest = after;
                // `[text][target]`: keep the text, drop the target.
                if let Some(target) = rest.strip_prefix('[')
                    && let Some(close) = target.find(']')
                {
                    rest = &target[close + 1..];
                }
                continue;
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<DocLine> {
        let mut lines: Vec<DocLine> = text
            .lines()
            .map(|line| DocLine {
                text: line.to_owned(),
                span: Span::call_site(),
            })
            .collect();
        dedent(&mut lines);
        lines
    }

    #[test]
    fn wrapped_lines_join_and_paragraphs_stay_apart() {
        let text = render(&lines(
            " Look up the weather\n for a city.\n\n Use it for umbrellas.",
        ));
        assert_eq!(
            text,
            "Look up the weather for a city.\n\nUse it for umbrellas."
        );
    }

    #[test]
    fn chinese_lines_join_without_a_space() {
        assert_eq!(
            render(&lines(" 查询指定城市\n 今天的天气。")),
            "查询指定城市今天的天气。"
        );
    }

    #[test]
    fn lists_and_code_keep_their_lines() {
        let text = render(&lines(
            " Modes:\n - fast\n - slow\n\n ```\n let x = 1;\n ```",
        ));
        assert_eq!(text, "Modes:\n- fast\n- slow\n\n```\nlet x = 1;\n```");
    }

    #[test]
    fn intra_doc_links_are_unwrapped() {
        assert_eq!(
            render_inline("See [`Unit`], [docs](https://x.y) and [the enum][Unit]; `a[0]` stays."),
            "See `Unit`, [docs](https://x.y) and the enum; `a[0]` stays."
        );
    }

    #[test]
    fn arguments_section_is_split_off() {
        let (body, arguments) = split_arguments(lines(
            " Get the weather.\n\n # Arguments\n\n * `city` - City name,\n   e.g. Beijing\n - unit: Unit\n\n # Errors\n When offline.",
        ));
        assert_eq!(
            render(&body),
            "Get the weather.\n\n# Errors\n\nWhen offline."
        );
        let found: Vec<(&str, &str)> = arguments
            .iter()
            .map(|doc| (doc.name.as_str(), doc.description.as_str()))
            .collect();
        assert_eq!(
            found,
            [("city", "City name, e.g. Beijing"), ("unit", "Unit")]
        );
    }
}
