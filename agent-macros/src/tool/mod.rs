//! `#[tool]`: parse the attribute and the function (or the impl block and its `#[tool]` methods),
//! validate them, expand into the tool (or the tools and the value's `ToolBox` impl).

mod attr;
mod docs;
mod expand;
mod parse;
mod place;
mod signature;

pub use place::Source;

use proc_macro2::TokenStream;
use quote::ToTokens;

/// Expands `#[tool]` with `attr` on `item`, found in `source`.
pub fn expand(attr: TokenStream, item: TokenStream, source: &Source) -> TokenStream {
    let mut errors = Errors::default();
    match parse::parse(attr, item, &mut errors) {
        parse::Parsed::Fn(tool) => {
            // An associated function looks free to the attribute: the source says where it is.
            let name = tool.function.sig.ident.to_string();
            let place = match tool.receiver.is_none() && source.in_unmarked_impl(&name) {
                true => signature::Place::UnmarkedImpl,
                false => signature::Place::Free,
            };
            let valid = signature::validate(*tool, place, &mut errors);
            if errors.is_empty() {
                return expand::expand(&valid);
            }
            // Every mistake is reported, and the function, its struct and a `Tool` impl are still
            // emitted, so calls of the function and an `agent!` listing it add no errors of their own.
            let mut tokens = errors.into_compile_error();
            tokens.extend(expand::fallback(&valid));
            tokens
        }
        parse::Parsed::Impl(block) => {
            let valid = signature::validate_impl(*block, &mut errors);
            if errors.is_empty() {
                return expand::expand_impl(&valid);
            }
            // The same for a block: its methods, and a `ToolBox` impl, are still emitted.
            let mut tokens = errors.into_compile_error();
            tokens.extend(expand::fallback_impl(&valid));
            tokens
        }
        // Neither a function nor an impl block: the item stays as written, so only the misplaced
        // attribute is an error.
        parse::Parsed::Other(item) => {
            let mut tokens = errors.into_compile_error();
            tokens.extend(item);
            tokens
        }
    }
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
