//! `agent!(model, tool_a, module::tool_b; setting = value)` and `tools!(tool_a, module::tool_b)`:
//! parse, reject duplicates, check an agent's tools for the lethal mix, expand into builder calls.

use proc_macro2::{Delimiter, Group, Span, TokenStream, TokenTree};
use quote::{ToTokens, quote, quote_spanned};
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, Ident, Lit, LitStr, Path, Token};

use crate::respan::respan;

struct AgentInput {
    krate: Path,
    model: Expr,
    tools: Vec<Path>,
    settings: Settings,
}

/// What `agent!` takes after its tools, behind a `;`: `guard_results = <a guard>` and
/// `allow_lethal_mix = "why"`, each at most once.
#[derive(Default)]
struct Settings {
    /// `guard_results = expr`: a guard on the tools' results.
    guard_results: Option<Expr>,
    /// `allow_lethal_mix = "why"`: the risk accepted, and why.
    allow_lethal_mix: Option<LitStr>,
    /// Mistakes in the settings, reported beside the agent, so that they are all shown at once
    /// and the code around the macro adds no errors of its own.
    errors: Option<syn::Error>,
}

const SETTINGS_HELP: &str =
    "the settings are `guard_results = <a guard>` and `allow_lethal_mix = \"why\"`";

impl Settings {
    /// Parses `name = value, ...` up to the end of the input.
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut settings = Settings::default();
        let mut seen: Vec<String> = Vec::new();
        while !input.is_empty() {
            let name: Ident = input.parse().map_err(|error| {
                syn::Error::new(
                    error.span(),
                    format!("expected a setting after `;`; {SETTINGS_HELP}"),
                )
            })?;
            if input.parse::<Option<Token![=]>>()?.is_none() {
                return Err(syn::Error::new_spanned(
                    &name,
                    format!("expected `=` and a value after `{name}`; {SETTINGS_HELP}"),
                ));
            }
            let value: Expr = input.parse()?;
            let key = name.to_string();
            if seen.contains(&key) {
                settings.push_error(syn::Error::new_spanned(
                    &name,
                    format!("`{key}` is given twice; give it once"),
                ));
            }
            seen.push(key);
            settings.set(&name, value);
            if input.is_empty() {
                break;
            }
            if input.parse::<Option<Token![,]>>()?.is_none() {
                return Err(input.error("expected `,` between the settings"));
            }
        }
        Ok(settings)
    }

    /// Takes the value of the setting `name`, or records why it cannot.
    fn set(&mut self, name: &Ident, value: Expr) {
        if name == "guard_results" {
            self.guard_results = Some(value);
        } else if name == "allow_lethal_mix" {
            match reason(&value) {
                Ok(reason) => self.allow_lethal_mix = Some(reason),
                Err(error) => self.push_error(error),
            }
        } else {
            self.push_error(syn::Error::new_spanned(
                name,
                format!("unknown `agent!` setting `{name}`; {SETTINGS_HELP}"),
            ));
        }
    }

    fn push_error(&mut self, error: syn::Error) {
        match &mut self.errors {
            Some(errors) => errors.combine(error),
            None => self.errors = Some(error),
        }
    }

    /// Whether the agent answers for the lethal mix itself, or the settings could not say:
    /// either way `agent!` does not check its tools for the mix.
    fn answers_for_the_mix(&self) -> bool {
        self.guard_results.is_some() || self.allow_lethal_mix.is_some() || self.errors.is_some()
    }

    /// The builder calls the settings stand for, each at its value.
    fn calls(&self, krate: &Path) -> TokenStream {
        let mut calls = TokenStream::new();
        if let Some(guard) = &self.guard_results {
            let krate = respan(krate, guard.span());
            calls.extend(quote_spanned! {guard.span()=>
                .guard(#krate::guard::At::RESULTS, #guard)
            });
        }
        if let Some(reason) = &self.allow_lethal_mix {
            calls.extend(quote_spanned! {reason.span()=> .allow_lethal_mix(#reason) });
        }
        calls
    }
}

/// The value of `allow_lethal_mix`: a string literal that says why.
fn reason(value: &Expr) -> syn::Result<LitStr> {
    let example = "e.g. `allow_lethal_mix = \"the inbox holds only test data\"`";
    match value {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(text),
            ..
        }) if text.value().trim().is_empty() => Err(syn::Error::new_spanned(
            value,
            format!(
                "`allow_lethal_mix` needs a reason: write why this agent may take the risk, {example}"
            ),
        )),
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(text),
            ..
        }) => Ok(text.clone()),
        _ => Err(syn::Error::new_spanned(
            value,
            format!(
                "`allow_lethal_mix` takes a string literal: write why this agent may take the risk, {example}"
            ),
        )),
    }
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
        if !input.is_empty() && !input.peek(Token![;]) {
            input.parse::<Token![,]>()?;
        }
        // The tools, up to the end or to the `;` before the settings.
        while !input.is_empty() && !input.peek(Token![;]) {
            tools.push(input.parse::<Path>()?);
            if input.is_empty() || input.peek(Token![;]) {
                break;
            }
            if input.parse::<Option<Token![,]>>()?.is_none() {
                return Err(input.error(
                    "expected `,` between the tools, or `;` before the settings: `agent!(model, tool_a, tool_b; guard_results = ...)`",
                ));
            }
        }
        let settings = match input.parse::<Option<Token![;]>>()? {
            Some(_) => Settings::parse(input)?,
            None => Settings::default(),
        };
        Ok(AgentInput {
            krate,
            model,
            tools,
            settings,
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
            settings,
        }) => {
            let errors = settings.errors.as_ref().map(syn::Error::to_compile_error);
            // A list with a tool twice is one error, not also a mix.
            let mix_check = (!settings.answers_for_the_mix()
                && listed_twice(&tools, "agent!").is_none())
            .then(|| lethal_mix_check(&krate, &tools));
            let agent =
                with_checked_tools(&krate, quote!(#krate::Agent::new(#model)), &tools, "agent!");
            let calls = settings.calls(&krate);
            quote! {{
                #errors
                #mix_check
                let __agent = #agent;
                __agent #calls
            }}
        }
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

/// The lethal mix among an agent's tools, checked at compile time: a constant that panics with
/// `MixCheck::message` when some tool reads untrusted content, one reads private data and one
/// sends data out without an approval. The panic's tokens run from the first tool to the last, so
/// the error underlines the list.
fn lethal_mix_check(krate: &Path, tools: &[Path]) -> TokenStream {
    let (Some(first), Some(last)) = (tools.first(), tools.last()) else {
        return TokenStream::new();
    };
    let start = first
        .to_token_stream()
        .into_iter()
        .next()
        .map_or_else(Span::call_site, |token| token.span());
    let end = last
        .segments
        .last()
        .map_or_else(|| last.span(), |segment| segment.ident.span());
    let entries = tools
        .iter()
        .map(|path| quote_spanned! {path.span()=> (#path {}).__mix_check() });
    let panic = quote_spanned! {start=> ::core::panic! };
    let mut arguments = Group::new(
        Delimiter::Parenthesis,
        quote_spanned! {end=> "{}", #krate::__private::MixCheck::text(&__MIX) },
    );
    arguments.set_span(end);
    let arguments = TokenTree::Group(arguments);
    quote! {
        const _: () = {
            const __MIX: ([u8; 1024], usize) =
                #krate::__private::MixCheck::message(&[#(#entries),*]);
            if __MIX.1 > 0 {
                #panic #arguments
            }
        };
    }
}
