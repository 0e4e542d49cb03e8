//! The arguments of `#[tool(...)]` and of `#[arg(...)]` on a parameter.

use proc_macro2::{Span, TokenStream};
use syn::parse::Parser;
use syn::{Expr, LitStr};

use super::Errors;

/// `#[tool(name = "...", description = "...")]`.
#[derive(Default)]
pub struct ToolAttrs {
    pub name: Option<LitStr>,
    pub description: Option<LitStr>,
}

pub fn parse_tool_attrs(tokens: TokenStream) -> syn::Result<ToolAttrs> {
    let mut attrs = ToolAttrs::default();
    let mut errors = Errors::default();
    let parser = syn::meta::parser(|meta| {
        let slot = if meta.path.is_ident("name") {
            &mut attrs.name
        } else if meta.path.is_ident("description") {
            &mut attrs.description
        } else {
            return Err(meta.error(
                "unknown #[tool] key; expected `name = \"...\"` or `description = \"...\"`",
            ));
        };
        let value: LitStr = meta.value()?.parse()?;
        if slot.is_some() {
            errors.push_spanned(&meta.path, "this key is given twice; give it once");
        }
        *slot = Some(value);
        Ok(())
    });
    parser.parse2(tokens)?;
    errors.finish(attrs)
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

/// Parses every `#[arg(...)]` among a parameter's attributes.
pub fn parse_arg_attrs(attrs: &[syn::Attribute], errors: &mut Errors) -> ArgAttrs {
    let mut parsed = ArgAttrs::default();
    for attr in attrs.iter().filter(|attr| attr.path().is_ident("arg")) {
        let result = attr.parse_nested_meta(|meta| {
            if !meta.path.is_ident("default") {
                return Err(meta
                    .error("unknown #[arg] key; expected `default` or `default = <expression>`"));
            }
            if parsed.default.is_some() {
                return Err(meta.error("`default` is given twice; give it once"));
            }
            parsed.default = Some(if meta.input.peek(syn::Token![=]) {
                DefaultValue::Expr(Box::new(meta.value()?.parse()?))
            } else {
                DefaultValue::Trait(syn::spanned::Spanned::span(&meta.path))
            });
            Ok(())
        });
        if let Err(error) = result {
            errors.push(error);
        }
    }
    parsed
}
