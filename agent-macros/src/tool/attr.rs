//! The arguments of `#[tool(...)]` and of `#[arg(...)]` on a parameter.

use proc_macro2::{Span, TokenStream, TokenTree};
use syn::meta::ParseNestedMeta;
use syn::parse::{ParseStream, Parser};
use syn::spanned::Spanned;
use syn::{Expr, LitStr, Path};

use super::Errors;

/// `#[tool(name = "...", description = "...", read_only, destructive, idempotent, open_world,
/// requires_approval, reads_untrusted, reads_private, sends_out, timeout = "30s", inline,
/// crate = "path")]`.
#[derive(Default)]
pub struct ToolAttrs {
    pub name: Option<LitStr>,
    pub description: Option<LitStr>,
    /// The MCP-style hints, `requires_approval` and what the tool touches (`reads_untrusted`,
    /// `reads_private`, `sends_out`), as (annotation method, value).
    pub flags: Vec<(&'static str, bool)>,
    pub timeout_millis: Option<u64>,
    /// `inline`: a sync function runs on the calling task instead of a blocking thread.
    pub inline: Option<Span>,
    /// `crate = "path"`: where the generated code finds agent-core, for crates that re-export it.
    pub krate: Option<Path>,
}

const FLAGS: &[&str] = &[
    "read_only",
    "destructive",
    "idempotent",
    "open_world",
    "requires_approval",
    "reads_untrusted",
    "reads_private",
    "sends_out",
];

const KEYS_HELP: &str = "expected `name = \"...\"`, `description = \"...\"`, `read_only`, `destructive`, `idempotent`, `open_world`, `requires_approval`, `reads_untrusted`, `reads_private`, `sends_out`, `timeout = \"30s\"`, `inline` or `crate = \"path::to::agent_core\"`";

/// Parses `#[tool(...)]`. Every mistake is pushed to `errors` and parsing goes on with the next key,
/// so one compile shows them all.
pub fn parse_tool_attrs(tokens: TokenStream, errors: &mut Errors) -> ToolAttrs {
    let mut attrs = ToolAttrs::default();
    let mut seen: Vec<String> = Vec::new();
    parse_keys(tokens, errors, |meta, key_errors| {
        parse_tool_key(meta, &mut attrs, &mut seen, key_errors)
    });
    attrs
}

/// Runs `parse_key` on each key of an attribute's arguments. A key it refuses is reported and
/// skipped, value and all, and parsing goes on with the next, so one compile shows every mistake.
fn parse_keys(
    tokens: TokenStream,
    errors: &mut Errors,
    mut parse_key: impl FnMut(&ParseNestedMeta<'_>, &mut Errors) -> syn::Result<()>,
) {
    let mut key_errors = Errors::default();
    let parser = syn::meta::parser(|meta| {
        if let Err(error) = parse_key(&meta, &mut key_errors) {
            key_errors.push(error);
            skip_value(meta.input)?;
        }
        Ok(())
    });
    if let Err(error) = parser.parse2(tokens) {
        key_errors.push(error);
    }
    errors.extend(key_errors);
}

fn parse_tool_key(
    meta: &ParseNestedMeta<'_>,
    attrs: &mut ToolAttrs,
    seen: &mut Vec<String>,
    errors: &mut Errors,
) -> syn::Result<()> {
    let Some(key) = meta.path.get_ident().map(ToString::to_string) else {
        return Err(meta.error(format!("unknown #[tool] key; {KEYS_HELP}")));
    };
    if seen.contains(&key) {
        errors.push_spanned(&meta.path, "this key is given twice; give it once");
    }
    seen.push(key.clone());
    if let Some(flag) = FLAGS.iter().find(|flag| **flag == key) {
        // `read_only` alone means true; `read_only = false` says so explicitly.
        let value = if meta.input.peek(syn::Token![=]) {
            meta.value()?.parse::<syn::LitBool>()?.value
        } else {
            true
        };
        attrs.flags.push((flag, value));
        return Ok(());
    }
    match key.as_str() {
        "name" => attrs.name = Some(meta.value()?.parse()?),
        "description" => attrs.description = Some(meta.value()?.parse()?),
        "timeout" => {
            let text: LitStr = meta.value()?.parse()?;
            match parse_duration_millis(&text.value()) {
                Some(millis) => attrs.timeout_millis = Some(millis),
                None => errors.push_spanned(
                    &text,
                    "invalid timeout; write a number and a unit: \"500ms\", \"30s\", \"2m\" or \"1h\"",
                ),
            }
        }
        "inline" => {
            if meta.input.peek(syn::Token![=]) {
                return Err(meta.error("`inline` takes no value; write `#[tool(inline)]`"));
            }
            attrs.inline = Some(meta.path.span());
        }
        "crate" => {
            if let Some(path) = parse_crate_value(meta, errors)? {
                attrs.krate = Some(path);
            }
        }
        _ => return Err(meta.error(format!("unknown #[tool] key; {KEYS_HELP}"))),
    }
    Ok(())
}

/// The value of `crate = "path"` (a string, as serde's `crate = "..."`) or `crate = path` (bare,
/// as rustc's own suggestions write it). A string that is not a path is pushed to `errors`.
fn parse_crate_value(meta: &ParseNestedMeta<'_>, errors: &mut Errors) -> syn::Result<Option<Path>> {
    let value = meta.value()?;
    if value.peek(LitStr) {
        let text: LitStr = value.parse()?;
        return Ok(match text.parse::<Path>() {
            Ok(path) => Some(path),
            Err(_) => {
                errors.push_spanned(
                    &text,
                    "`crate` takes the path agent-core is reachable by, e.g. `crate = \"my_framework::agent_core\"`",
                );
                None
            }
        });
    }
    let path = value.parse::<Path>()?;
    if !(value.is_empty() || value.peek(syn::Token![,])) {
        return Err(value.error(
            "`crate` takes the path agent-core is reachable by, e.g. `crate = my_framework::agent_core`",
        ));
    }
    Ok(Some(path))
}

/// Parses the `#[tool(...)]` of an impl block, which takes only `crate = "..."`: what a tool is
/// (its name, hints, timeout) is said on the `#[tool(...)]` of each method.
pub fn parse_impl_attrs(tokens: TokenStream, errors: &mut Errors) -> Option<Path> {
    let mut krate = None;
    parse_keys(tokens, errors, |meta, key_errors| {
        if !meta.path.is_ident("crate") {
            return Err(meta.error(
                "on an impl block, #[tool] takes only `crate = \"...\"`: put the tool's options on the `#[tool(...)]` of the method they are for",
            ));
        }
        if krate.is_some() {
            key_errors.push_spanned(&meta.path, "this key is given twice; give it once");
        }
        parse_crate_value(meta, key_errors).map(|path| krate = krate.take().or(path))
    });
    krate
}

/// Skips what is left of a key that failed (`= value`, `(...)`), up to the next `,`.
fn skip_value(input: ParseStream<'_>) -> syn::Result<()> {
    input.step(|cursor| {
        let mut rest = *cursor;
        while let Some((token, next)) = rest.token_tree() {
            if matches!(&token, TokenTree::Punct(punct) if punct.as_char() == ',') {
                break;
            }
            rest = next;
        }
        Ok(((), rest))
    })
}

/// `"500ms"`, `"30s"`, `"2m"`, `"1h"` in milliseconds; `None` for anything else or zero.
fn parse_duration_millis(text: &str) -> Option<u64> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit())?;
    let (number, unit) = text.split_at(split);
    let number: u64 = number.parse().ok()?;
    let scale = match unit.trim() {
        "ms" => 1,
        "s" => 1_000,
        "m" | "min" => 60_000,
        "h" => 3_600_000,
        _ => return None,
    };
    number.checked_mul(scale).filter(|millis| *millis > 0)
}

/// What `#[arg(...)]` says about a parameter.
#[derive(Default)]
pub struct ArgAttrs {
    pub default: Option<DefaultValue>,
}

/// How a parameter the model leaves out gets its value.
pub enum DefaultValue {
    /// `#[arg(default)]`: `Default::default()`.
    Trait(Span),
    /// `#[arg(default = expr)]`.
    Expr(Box<Expr>),
}

impl DefaultValue {
    /// Where the default was written, for the errors that point at it.
    pub fn span(&self) -> Span {
        match self {
            DefaultValue::Trait(span) => *span,
            DefaultValue::Expr(expr) => syn::spanned::Spanned::span(&**expr),
        }
    }
}

/// Parses every `#[arg(...)]` among a parameter's attributes.
pub fn parse_arg_attrs(attrs: &[syn::Attribute], errors: &mut Errors) -> ArgAttrs {
    let mut parsed = ArgAttrs::default();
    for attr in attrs.iter().filter(|attr| attr.path().is_ident("arg")) {
        let result = attr.parse_nested_meta(|meta| {
            if let Err(error) = parse_arg_key(&meta, &mut parsed) {
                errors.push(error);
                skip_value(meta.input)?;
            }
            Ok(())
        });
        if let Err(error) = result {
            errors.push(error);
        }
    }
    parsed
}

fn parse_arg_key(meta: &ParseNestedMeta<'_>, parsed: &mut ArgAttrs) -> syn::Result<()> {
    if !meta.path.is_ident("default") {
        return Err(
            meta.error("unknown #[arg] key; expected `default` or `default = <expression>`")
        );
    }
    if parsed.default.is_some() {
        return Err(meta.error("`default` is given twice; give it once"));
    }
    parsed.default = Some(if meta.input.peek(syn::Token![=]) {
        DefaultValue::Expr(Box::new(meta.value()?.parse()?))
    } else {
        DefaultValue::Trait(meta.path.span())
    });
    Ok(())
}
