//! Giving generated tokens the span of the user's tokens they stand for, so the compiler's errors
//! (and its labels such as "unsatisfied trait bound introduced here") point at the user's code.

use proc_macro2::{Group, Span, TokenStream, TokenTree};
use quote::ToTokens;

/// `tokens` with every token, nested ones too, at `span`.
pub fn respan(tokens: &impl ToTokens, span: Span) -> TokenStream {
    tokens
        .to_token_stream()
        .into_iter()
        .map(|token| match token {
            TokenTree::Group(group) => {
                let mut respanned = Group::new(group.delimiter(), respan(&group.stream(), span));
                respanned.set_span(span);
                TokenTree::Group(respanned)
            }
            mut other => {
                other.set_span(span);
                other
            }
        })
        .collect()
}
