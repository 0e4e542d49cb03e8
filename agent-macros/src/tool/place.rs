//! Where a `#[tool]` function sits, read from its source file: the attribute sees only the
//! function, and an associated function in an impl block not marked `#[tool]` looks like a free
//! one. Expanded as one, it would put a struct in the impl block, and rustc would report that and
//! three errors more, none of them saying what to do; read from the file, it gets one error that
//! does.
//!
//! The file is lexed once per compilation (kept per thread, as rustc runs a crate's macros on one)
//! and scanned for `#[tool]` functions inside impl blocks that are not marked `#[tool]`. A name
//! found both there and outside such a block is left alone: the scan cannot tell which is this one.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::rc::Rc;

use proc_macro2::{Delimiter, TokenStream, TokenTree};

/// The source file of a `#[tool]` attribute, when the compiler names one on disk.
pub struct Source {
    file: Option<PathBuf>,
}

/// What a file's scan found: the names of `#[tool]` functions in impl blocks not marked `#[tool]`,
/// and of those anywhere else.
#[derive(Default)]
struct Found {
    in_unmarked_impls: HashSet<String>,
    elsewhere: HashSet<String>,
}

thread_local! {
    static SCANNED: RefCell<HashMap<PathBuf, Rc<Found>>> = RefCell::new(HashMap::new());
}

impl Source {
    /// The source of the attribute at `call_site`.
    pub fn of(call_site: proc_macro::Span) -> Self {
        Source {
            file: call_site.local_file(),
        }
    }

    /// Whether the `#[tool]` function `name` sits in an impl block not marked `#[tool]`.
    pub fn in_unmarked_impl(&self, name: &str) -> bool {
        let Some(file) = &self.file else {
            return false;
        };
        let found = SCANNED.with(|scanned| {
            let mut scanned = scanned.borrow_mut();
            Rc::clone(scanned.entry(file.clone()).or_insert_with(|| {
                let found = std::fs::read_to_string(file)
                    .ok()
                    .and_then(|text| strip_shebang(&text).parse::<TokenStream>().ok())
                    .map(scan)
                    .unwrap_or_default();
                Rc::new(found)
            }))
        });
        found.in_unmarked_impls.contains(name) && !found.elsewhere.contains(name)
    }
}

/// The text without a `#!` line at its start (a script's interpreter line, not an attribute).
fn strip_shebang(text: &str) -> &str {
    match text.strip_prefix("#!") {
        Some(rest) if !rest.trim_start().starts_with('[') => {
            rest.find('\n').map_or("", |end| &rest[end..])
        }
        _ => text,
    }
}

fn scan(tokens: TokenStream) -> Found {
    let mut found = Found::default();
    scan_level(tokens, false, &mut found);
    found
}

/// Scans one level of items (a file, a module's, an impl's or a block's), `in_unmarked_impl`
/// when they are the body of an impl block without `#[tool]`.
fn scan_level(tokens: TokenStream, in_unmarked_impl: bool, found: &mut Found) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    // Since the last item ended: whether a `#[tool]` attribute came, whether an item may start
    // here (`impl` in a type, `-> impl Trait`, is not an impl block), and the impl block begun
    // (with whether it is marked `#[tool]`).
    let mut marked = false;
    let mut item_start = true;
    let mut impl_block: Option<bool> = None;
    let mut at = 0;
    while at < tokens.len() {
        match &tokens[at] {
            TokenTree::Punct(punct) if punct.as_char() == '#' => {
                // `#[...]`, or an inner `#![...]`.
                let (group, length) = match tokens.get(at + 1) {
                    Some(TokenTree::Punct(bang)) if bang.as_char() == '!' => {
                        (tokens.get(at + 2), 3)
                    }
                    next => (next, 2),
                };
                if let Some(TokenTree::Group(attribute)) = group
                    && attribute.delimiter() == Delimiter::Bracket
                {
                    marked |= is_tool(attribute.stream());
                    at += length;
                    continue;
                }
                item_start = false;
            }
            TokenTree::Ident(ident) if ident == "impl" && item_start => {
                impl_block = Some(marked);
                item_start = false;
            }
            TokenTree::Ident(ident) if ident == "fn" => {
                if let (Some(TokenTree::Ident(name)), true) = (tokens.get(at + 1), marked) {
                    let name = name.to_string();
                    match in_unmarked_impl && impl_block.is_none() {
                        true => found.in_unmarked_impls.insert(name),
                        false => found.elsewhere.insert(name),
                    };
                }
                item_start = false;
            }
            // What may come before `impl` in an impl block's head.
            TokenTree::Ident(ident) if ident == "unsafe" || ident == "default" => {}
            TokenTree::Group(group) if group.delimiter() == Delimiter::Brace => {
                let body_of_unmarked_impl = impl_block.take() == Some(false);
                scan_level(group.stream(), body_of_unmarked_impl, found);
                marked = false;
                item_start = true;
            }
            TokenTree::Punct(punct) if punct.as_char() == ';' => {
                marked = false;
                item_start = true;
                impl_block = None;
            }
            _ => item_start = false,
        }
        at += 1;
    }
}

/// Whether an attribute's tokens (inside `#[...]`) are `tool` or a path ending in `tool`, with or
/// without arguments.
fn is_tool(attribute: TokenStream) -> bool {
    let mut last = None;
    for token in attribute {
        match token {
            TokenTree::Ident(ident) => last = Some(ident.to_string()),
            TokenTree::Punct(punct) if punct.as_char() == ':' => {}
            _ => break,
        }
    }
    last.as_deref() == Some("tool")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> (Vec<String>, Vec<String>) {
        let found = scan(text.parse().unwrap());
        let mut inside: Vec<String> = found.in_unmarked_impls.into_iter().collect();
        let mut elsewhere: Vec<String> = found.elsewhere.into_iter().collect();
        inside.sort();
        elsewhere.sort();
        (inside, elsewhere)
    }

    #[test]
    fn tools_in_unmarked_impl_blocks_are_told_apart() {
        let text = r#"
            #[tool]
            fn free(city: String) -> impl Into<String> { city }

            impl Weather {
                /// Looks it up.
                #[tool]
                fn lookup(city: String) -> String { city }
                fn helper() {}
            }

            #[tool]
            impl Marked {
                #[tool]
                fn method(&self) -> u8 { 1 }
            }

            unsafe impl<T> Send for Wrapper<T> where T: Send {
                #[agent_core::tool(read_only)]
                fn other() -> u8 { 2 }
            }

            mod inner {
                impl Nested { #[tool] fn deep() {} }
            }
        "#;
        assert_eq!(
            found(text),
            (
                vec!["deep".to_owned(), "lookup".to_owned(), "other".to_owned()],
                vec!["free".to_owned(), "method".to_owned()]
            )
        );
    }

    #[test]
    fn a_shebang_line_is_not_lexed() {
        assert_eq!(
            strip_shebang("#!/usr/bin/env run\nfn a() {}"),
            "\nfn a() {}"
        );
        assert_eq!(
            strip_shebang("#![allow(x)]\nfn a() {}"),
            "#![allow(x)]\nfn a() {}"
        );
    }
}
