//! `agent!(model, tool_a, module::tool_b)` and `tools!(tool_a, module::tool_b)`: parse, reject
//! duplicates, expand into builder calls.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote, quote_spanned};
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, Path, Token};

use crate::respan::respan;

struct AgentInput {
    krate: Path,
    model: Expr,
    tools: Vec<Path>,
}

/// A leading `crate = path;`, for crates that re-export agent-core: where the generated code finds
/// it. `::agent_core` without one.
fn parse_crate(input: ParseStream) -> syn::Result<Path> {
    if input.peek(Token![crate]) && input.peek2(Token![=]) {
        input.parse::<Token![crate]>()?;
        input.parse::<Token![=]>()?;
        let path = input.call(Path::parse_mod_style)?;
        input.parse::<Token![;]>().map_err(|error| {
            syn::Error::new(
                error.span(),
                "expected `;` after the crate path: `crate = path::to::agent_core; ...`",
            )
        })?;
        return Ok(path);
    }
    Ok(syn::parse_quote!(::agent_core))
}

impl Parse for AgentInput {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let krate = parse_crate(input)?;
        if input.is_empty() {
            return Err(input.error("expected a model: `agent!(model, tool_a, tool_b)`"));
        }
        let model: Expr = input.parse()?;
        let mut tools = Vec::new();
        if !input.is_empty() {
            input.parse::<Token![,]>()?;
            let rest = Punctuated::<Path, Token![,]>::parse_terminated(input)?;
            tools.extend(rest);
        }
        Ok(AgentInput {
            krate,
            model,
            tools,
        })
    }
}

/// The tools alone, for `tools!`.
struct ToolList {
    krate: Path,
    tools: Vec<Path>,
}

impl Parse for ToolList {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let krate = parse_crate(input)?;
        let tools = Punctuated::<Path, Token![,]>::parse_terminated(input)?;
        Ok(ToolList {
            krate,
            tools: tools.into_iter().collect(),
        })
    }
}

/// `agent!`: an `Agent` with the tools added.
pub fn expand_agent(input: TokenStream) -> TokenStream {
    match syn::parse2::<AgentInput>(input) {
        Ok(AgentInput {
            krate,
            model,
            tools,
        }) => with_checked_tools(&krate, quote!(#krate::Agent::new(#model)), &tools, "agent!"),
        Err(error) => error.to_compile_error(),
    }
}

/// `tools!`: a `ToolSet` with the tools added.
pub fn expand_tools(input: TokenStream) -> TokenStream {
    match syn::parse2::<ToolList>(input) {
        Ok(ToolList { krate, tools }) => {
            with_checked_tools(&krate, quote!(#krate::ToolSet::new()), &tools, "tools!")
        }
        Err(error) => error.to_compile_error(),
    }
}

/// `start` with each tool added through `__private::AddCheckedTool`, after proving the tools
/// distinct.
fn with_checked_tools(
    krate: &Path,
    start: TokenStream,
    tools: &[Path],
    macro_name: &str,
) -> TokenStream {
    if let Some(error) = listed_twice(tools, macro_name) {
        return error.to_compile_error();
    }
    let name_checks = distinct_name_checks(krate, tools);
    let additions = tools.iter().map(|path| {
        let krate = respan(krate, path.span());
        quote_spanned! {path.span()=>
            let __tools = #krate::__private::AddCheckedTool::add_checked_tool(__tools, #path {});
        }
    });
    quote! {{
        #name_checks
        let __tools = #start;
        #(#additions)*
        __tools
    }}
}

/// The same path listed twice is caught here, pointing at the second one.
fn listed_twice(tools: &[Path], macro_name: &str) -> Option<syn::Error> {
    let mut errors: Option<syn::Error> = None;
    for (index, path) in tools.iter().enumerate() {
        let text = path.to_token_stream().to_string();
        if tools[..index]
            .iter()
            .any(|earlier| earlier.to_token_stream().to_string() == text)
        {
            let error = syn::Error::new_spanned(
                path,
                format!(
                    "`{}` is listed twice in `{macro_name}`; list each tool once",
                    text.replace(' ', "")
                ),
            );
            match &mut errors {
                Some(errors) => errors.combine(error),
                None => errors = Some(error),
            }
        }
    }
    errors
}

/// Different functions may still share a tool name through `#[tool(name = "...")]`; that is checked
/// at compile time by a constant assertion per pair.
fn distinct_name_checks(krate: &Path, tools: &[Path]) -> TokenStream {
    let mut checks = TokenStream::new();
    for (index, later) in tools.iter().enumerate() {
        for earlier in &tools[..index] {
            let message = format!(
                "`{}` and `{}` have the same tool name; tool names must be unique (rename one with #[tool(name = \"...\")])",
                earlier.to_token_stream().to_string().replace(' ', ""),
                later.to_token_stream().to_string().replace(' ', ""),
            );
            let span = later
                .segments
                .last()
                .map_or_else(|| later.span(), |last| last.ident.span());
            checks.extend(quote_spanned! {span=>
                ::core::assert!(!#krate::__private::str_eq(<#earlier>::NAME, <#later>::NAME), #message);
            });
        }
    }
    if checks.is_empty() {
        return checks;
    }
    quote! { const _: () = { #checks }; }
}
