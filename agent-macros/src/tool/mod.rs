//! `#[tool]`: parse the attribute and the function, validate them, expand into the tool.

mod attr;
mod docs;
mod expand;
mod parse;
mod validate;

use proc_macro2::TokenStream;

pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let original = item.clone();
    let result = parse::parse(attr, item)
        .and_then(validate::validate)
        .map(|valid| expand::expand(&valid));
    match result {
        Ok(tokens) => tokens,
        // Re-emit the item as written where it is a function, so one mistake in the attribute does not
        // also turn every call of the function into an error.
        Err(errors) => {
            let mut tokens = errors.to_compile_error();
            if let Ok(function) = syn::parse2::<syn::ItemFn>(original) {
                tokens.extend(parse::strip_param_attrs(function).into_token_stream());
            }
            tokens
        }
    }
}

use quote::ToTokens;

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

    pub fn finish<T>(self, value: T) -> syn::Result<T> {
        match self.0 {
            Some(errors) => Err(errors),
            None => Ok(value),
        }
    }
}
