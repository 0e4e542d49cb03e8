//! `#[tool]`: parse the attribute and the function, validate them, expand into the tool.

mod attr;
mod docs;
mod expand;
mod parse;
mod validate;

use proc_macro2::TokenStream;
use quote::ToTokens;

pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let tool = match parse::parse(attr, item, &mut errors) {
        Ok(tool) => tool,
        // Not a function: the item stays as written, so only the misplaced attribute is an error.
        Err(item) => {
            let mut tokens = errors.into_compile_error();
            tokens.extend(item.into_token_stream());
            return tokens;
        }
    };
    let valid = validate::validate(tool, &mut errors);
    if errors.is_empty() {
        return expand::expand(&valid);
    }
    // Every mistake is reported, and the function, its struct and a `Tool` impl are still emitted,
    // so calls of the function and an `agent!` listing it add no errors of their own.
    let mut tokens = errors.into_compile_error();
    tokens.extend(expand::fallback(&valid));
    tokens
}

/// Collects errors so a user sees every problem at once, each at its own tokens.
#[derive(Default)]
pub struct Errors(Option<syn::Error>);

impl Errors {
    pub fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(errors) => errors.combine(error),
            None => self.0 = Some(error),
        }
    }

    pub fn push_spanned(&mut self, tokens: impl ToTokens, message: impl std::fmt::Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    pub fn extend(&mut self, other: Errors) {
        if let Some(error) = other.0 {
            self.push(error);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    pub fn into_compile_error(self) -> TokenStream {
        self.0
            .map(|error| error.to_compile_error())
            .unwrap_or_default()
    }
}
