//! Parse: the attribute's keys, the function, its parameters and their docs and `#[arg]`s.

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::{FnArg, GenericArgument, Item, ItemFn, Pat, PathArguments, Receiver, Type};

use super::Errors;
use super::attr::{ArgAttrs, ToolAttrs, parse_arg_attrs, parse_tool_attrs};
use super::docs::{DocLine, doc_lines};

/// A function under `#[tool]`, as written.
pub struct ToolFn {
    /// The function to re-emit, without the parameter attributes only `#[tool]` understands.
    pub function: ItemFn,
    pub attrs: ToolAttrs,
    pub docs: Vec<DocLine>,
    pub receiver: Option<Receiver>,
    pub params: Vec<Param>,
}

/// One parameter, as written.
pub struct Param {
    pub pat: Pat,
    pub ty: Type,
    pub docs: Vec<DocLine>,
    pub arg: ArgAttrs,
    /// `T` when the type is written `State<T>`: the value comes from the agent, not the model.
    pub state: Option<Type>,
}

/// Parses the attribute and the function, pushing every mistake to `errors`. A non-function item
/// comes back as `Err` with its tokens, to be emitted unchanged.
pub fn parse(
    attr: TokenStream,
    item: TokenStream,
    errors: &mut Errors,
) -> Result<ToolFn, TokenStream> {
    let function = match syn::parse2::<Item>(item) {
        Ok(Item::Fn(function)) => function,
        Ok(other) => {
            errors.push(not_a_function(&other));
            return Err(other.into_token_stream());
        }
        Err(error) => {
            errors.push(error);
            return Err(TokenStream::new());
        }
    };
    let attrs = parse_tool_attrs(attr, errors);
    let mut receiver = None;
    let mut params = Vec::new();
    for input in &function.sig.inputs {
        match input {
            FnArg::Receiver(found) => receiver = Some(found.clone()),
            FnArg::Typed(typed) => params.push(Param {
                pat: (*typed.pat).clone(),
                ty: (*typed.ty).clone(),
                docs: doc_lines(&typed.attrs),
                arg: parse_arg_attrs(&typed.attrs, errors),
                state: state_inner(&typed.ty),
            }),
        }
    }
    Ok(ToolFn {
        docs: doc_lines(&function.attrs),
        function: strip_param_attrs(function),
        attrs,
        receiver,
        params,
    })
}

/// Removes `///` and `#[arg]` from parameters: rustc accepts neither there.
pub fn strip_param_attrs(mut function: ItemFn) -> ItemFn {
    for input in &mut function.sig.inputs {
        if let FnArg::Typed(typed) = input {
            typed
                .attrs
                .retain(|attr| !attr.path().is_ident("doc") && !attr.path().is_ident("arg"));
        }
    }
    function
}

/// `State<T>` (any path ending in `State` with one type argument) gives `T`. The generated code
/// checks that the type really is `agent_core::State`: a type of one's own named `State` is an error
/// there, never quietly taken from the agent.
fn state_inner(ty: &Type) -> Option<Type> {
    let Type::Path(path) = ty else { return None };
    if path.qself.is_some() {
        return None;
    }
    let last = path.path.segments.last()?;
    if last.ident != "State" {
        return None;
    }
    let PathArguments::AngleBracketed(arguments) = &last.arguments else {
        return None;
    };
    match arguments.args.iter().collect::<Vec<_>>().as_slice() {
        [GenericArgument::Type(inner)] => Some(inner.clone()),
        _ => None,
    }
}

fn not_a_function(item: &Item) -> syn::Error {
    let message = match item {
        Item::Impl(_) => {
            "#[tool] goes on a function, not on an impl block; put it on a free function"
        }
        _ => "#[tool] goes on a function (`fn` or `async fn`)",
    };
    let header = match item {
        Item::Struct(item) => {
            let (keyword, ident) = (&item.struct_token, &item.ident);
            quote::quote!(#keyword #ident)
        }
        Item::Enum(item) => {
            let (keyword, ident) = (&item.enum_token, &item.ident);
            quote::quote!(#keyword #ident)
        }
        Item::Trait(item) => {
            let (keyword, ident) = (&item.trait_token, &item.ident);
            quote::quote!(#keyword #ident)
        }
        Item::Impl(item) => quote::ToTokens::to_token_stream(&item.impl_token),
        other => quote::ToTokens::to_token_stream(other),
    };
    syn::Error::new_spanned(header, message)
}
