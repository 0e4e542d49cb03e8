//! Parse: the attribute's keys, the function (or the impl block and its `#[tool]` methods), its
//! parameters and their docs and `#[arg]`s.

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::{
    Attribute, FnArg, GenericArgument, ImplItem, ImplItemFn, Item, ItemFn, ItemImpl, Meta, Pat,
    Path, PathArguments, Receiver, Type,
};

use super::Errors;
use super::attr::{ArgAttrs, ToolAttrs, parse_arg_attrs, parse_impl_attrs, parse_tool_attrs};
use super::docs::{DocLine, doc_lines};

/// What `#[tool]` was put on.
pub enum Parsed {
    /// A function: one tool.
    Fn(Box<ToolFn>),
    /// An impl block: a tool for each method marked `#[tool]`.
    Impl(Box<ToolImpl>),
    /// Anything else, as its tokens, to be emitted unchanged.
    Other(TokenStream),
}

/// A function under `#[tool]`, as written; or a `#[tool]` method, seen as a function.
pub struct ToolFn {
    /// The function to re-emit, without the parameter attributes only `#[tool]` understands.
    pub function: ItemFn,
    pub attrs: ToolAttrs,
    pub docs: Vec<DocLine>,
    pub receiver: Option<Receiver>,
    pub params: Vec<Param>,
}

/// An impl block under `#[tool]`, as written.
pub struct ToolImpl {
    /// The block to re-emit: the methods' `#[tool]`s and their parameters' `///` and `#[arg]`s
    /// taken out, every other item as it was.
    pub block: ItemImpl,
    /// `#[tool(crate = "...")]` on the block.
    pub krate: Option<Path>,
    /// The methods marked `#[tool]`, in order.
    pub methods: Vec<ToolFn>,
}

/// One parameter, as written.
pub struct Param {
    pub pat: Pat,
    pub ty: Type,
    pub docs: Vec<DocLine>,
    pub arg: ArgAttrs,
    /// `T` when the type is written `State<T>`: the value comes from the agent, not the model.
    pub state: Option<Type>,
    /// Whether the type is written `CallInfo` (any path ending in it): the value comes from the
    /// run, not the model.
    pub call_info: bool,
}

/// Parses the attribute and the item, pushing every mistake to `errors`.
pub fn parse(attr: TokenStream, item: TokenStream, errors: &mut Errors) -> Parsed {
    match syn::parse2::<Item>(item) {
        Ok(Item::Fn(function)) => {
            let attrs = parse_tool_attrs(attr, errors);
            Parsed::Fn(Box::new(parse_function(attrs, function, errors)))
        }
        Ok(Item::Impl(block)) => Parsed::Impl(Box::new(parse_impl(attr, block, errors))),
        Ok(other) => {
            errors.push(not_a_function(&other));
            Parsed::Other(other.into_token_stream())
        }
        Err(error) => {
            errors.push(error);
            Parsed::Other(TokenStream::new())
        }
    }
}

/// A function (or a method) and the keys of its `#[tool(...)]`.
fn parse_function(attrs: ToolAttrs, function: ItemFn, errors: &mut Errors) -> ToolFn {
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
                call_info: is_call_info(&typed.ty),
            }),
        }
    }
    ToolFn {
        docs: doc_lines(&function.attrs),
        function: strip_param_attrs(function),
        attrs,
        receiver,
        params,
    }
}

/// The block's own `#[tool(...)]` and each method marked `#[tool]`. The marks are taken out of the
/// block (the methods stay as they were), so no method's `#[tool]` expands on its own.
fn parse_impl(attr: TokenStream, mut block: ItemImpl, errors: &mut Errors) -> ToolImpl {
    let krate = parse_impl_attrs(attr, errors);
    let mut methods = Vec::new();
    for item in &mut block.items {
        let ImplItem::Fn(method) = item else {
            continue;
        };
        let Some(attrs) = take_tool_attrs(method, errors) else {
            continue;
        };
        // A method is a function with a receiver: the same tokens read as a free function.
        let function = match syn::parse2::<ItemFn>(method.to_token_stream()) {
            Ok(function) => function,
            Err(error) => {
                errors.push(error);
                continue;
            }
        };
        let tool = parse_function(attrs, function, errors);
        method.sig = tool.function.sig.clone();
        methods.push(tool);
    }
    ToolImpl {
        block,
        krate,
        methods,
    }
}

/// Takes the `#[tool]` (or `#[tool(...)]`, `#[agent_core::tool]`) off a method and parses its keys;
/// `None` for a method without one.
fn take_tool_attrs(method: &mut ImplItemFn, errors: &mut Errors) -> Option<ToolAttrs> {
    let mut found: Option<ToolAttrs> = None;
    let mut kept = Vec::new();
    for attr in std::mem::take(&mut method.attrs) {
        if !is_tool_attr(&attr) {
            kept.push(attr);
            continue;
        }
        let tokens = match &attr.meta {
            Meta::Path(_) => TokenStream::new(),
            Meta::List(list) => list.tokens.clone(),
            Meta::NameValue(meta) => {
                errors.push_spanned(meta, "write `#[tool]` or `#[tool(...)]`");
                TokenStream::new()
            }
        };
        let attrs = parse_tool_attrs(tokens, errors);
        if found.is_some() {
            errors.push_spanned(&attr, "#[tool] is given twice on this method; give it once");
            continue;
        }
        if let Some(path) = &attrs.krate {
            errors.push_spanned(
                path,
                "`crate` goes on the impl block's #[tool], for all its tools: `#[tool(crate = \"...\")] impl ...`",
            );
        }
        found = Some(attrs);
    }
    method.attrs = kept;
    found
}

/// `#[tool]` under any path: `#[tool]`, `#[agent_core::tool]`, `#[framework::engine::tool(...)]`.
fn is_tool_attr(attr: &Attribute) -> bool {
    attr.path()
        .segments
        .last()
        .is_some_and(|segment| segment.ident == "tool")
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

/// `CallInfo` (any path ending in it, with no arguments). As with `State`, the generated code
/// checks that it is agent-core's.
fn is_call_info(ty: &Type) -> bool {
    let Type::Path(path) = ty else { return false };
    path.qself.is_none()
        && path.path.segments.last().is_some_and(|last| {
            last.ident == "CallInfo" && matches!(last.arguments, PathArguments::None)
        })
}

fn not_a_function(item: &Item) -> syn::Error {
    let message = "#[tool] goes on a function (`fn` or `async fn`), or on an impl block whose methods it marks `#[tool]`";
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
        other => quote::ToTokens::to_token_stream(other),
    };
    syn::Error::new_spanned(header, message)
}
