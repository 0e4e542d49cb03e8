//! A tool's signature checked: everything in it that the model or the generated code cannot
//! work with is a compile error here, pointing at the offending tokens and saying how to fix it.

use proc_macro2::{Group, Span, TokenStream, TokenTree};
use quote::{ToTokens, quote, quote_spanned};
use syn::parse::Parse;
use syn::{
    GenericArgument, Ident, ItemFn, ItemImpl, Pat, Path, PathArguments, Receiver, ReceiverKind,
    Type,
};

use super::Errors;
use super::attr::DefaultValue;
use super::docs::{render, split_arguments};
use super::parse::{Param, ToolFn, ToolImpl};
use crate::respan::respan;

/// A tool ready to expand.
pub struct ValidTool {
    pub function: ItemFn,
    pub name: String,
    /// Where the name was written: the `name = "..."` or the function's identifier.
    pub name_span: Span,
    pub description: String,
    pub params: Vec<ValidParam>,
    pub flags: Vec<(&'static str, bool)>,
    pub timeout_millis: Option<u64>,
    /// A sync function that runs on the calling task rather than a blocking thread.
    pub inline: bool,
    /// The path of agent-core: `::agent_core` unless `crate = "..."` says otherwise.
    pub krate: Path,
    /// Whether the function sits in an impl block not marked `#[tool]` (a mistake: a free
    /// function taking `self`, or one the source shows there), where no struct can go.
    pub in_impl: bool,
    /// How a method's tool reaches the value it is a method of.
    pub receiving: Receiving,
}

/// Where the function under `#[tool]` is.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// A free function, under `#[tool]` of its own (or a method whose impl block lacks `#[tool]`).
    Free,
    /// An associated function (no `self`) in an impl block not marked `#[tool]`, as its source
    /// file shows.
    UnmarkedImpl,
    /// A method marked `#[tool]` in an impl block under `#[tool]`.
    Method,
}

/// How a tool calls its function.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Receiving {
    /// With no receiver: a free function, or an associated function of the impl's type.
    Nothing,
    /// `&self`: a borrow of the value the tool holds.
    Shared,
    /// `self: Arc<Self>`: a clone of the `Arc` the tool holds.
    Owned,
}

pub enum ValidParam {
    /// Filled from the model's arguments.
    Model(ModelParam),
    /// Filled from the run's context: `ty` is written `State<inner>`.
    State { ty: Type, inner: Type },
    /// Filled from the run: which call this is (`ty` is written `CallInfo`).
    Call { ty: Type },
}

pub struct ModelParam {
    /// The JSON field name: the identifier without `r#`.
    pub field: String,
    pub ty: Type,
    pub description: Option<String>,
    pub default: Option<DefaultValue>,
    pub required: bool,
    /// The type, as written, can hold no struct: see [`holds_no_struct`].
    pub flat: bool,
}

/// An impl block ready to expand.
pub struct ValidImpl {
    /// The block to re-emit.
    pub block: ItemImpl,
    /// The tools of its `#[tool]` methods, with `Self` in their types spelt out (their glue sits
    /// outside the block).
    pub tools: Vec<ValidTool>,
    pub krate: Path,
    /// Whether the block's type can be a `ToolBox`: not for a trait impl or a generic block.
    pub toolbox: bool,
}

/// Checks the tool, pushing every mistake to `errors`; what comes back is complete enough for the
/// fallback expansion even when there were mistakes.
pub fn validate(tool: ToolFn, place: Place, errors: &mut Errors) -> ValidTool {
    let sig = &tool.function.sig;

    let receiving = match (&tool.receiver, place) {
        (None, Place::UnmarkedImpl) => {
            errors.push_spanned(
                &sig.ident,
                "a function in an impl block is a tool only when the block is marked #[tool] too: write `#[tool] impl YourType { .. }` (its tools are added with `Agent::try_toolbox(value)`), or move the function out of the impl block",
            );
            Receiving::Nothing
        }
        (None, _) => Receiving::Nothing,
        (Some(receiver), Place::Free | Place::UnmarkedImpl) => {
            errors.push_spanned(
                receiver,
                "a method is a tool only in an impl block marked #[tool] too: write `#[tool] impl YourType { .. }`, then add the value's tools with `Agent::try_toolbox(value)`",
            );
            Receiving::Nothing
        }
        (Some(receiver), Place::Method) => method_receiving(receiver, errors),
    };
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        errors.push_spanned(
            &sig.generics,
            "a tool cannot be generic: the model needs one concrete schema; use concrete types",
        );
    }
    if let (Some(span), Some(_)) = (tool.attrs.inline, &sig.asyncness) {
        errors.push(syn::Error::new(
            span,
            "`inline` is for sync functions: an async tool already runs on the agent's task; remove `inline`",
        ));
    }
    if let syn::Safety::Unsafe(token) = &sig.safety {
        errors.push_spanned(
            token,
            "a tool cannot be `unsafe`: the model calls it with arguments it chose",
        );
    }
    let (body, argument_docs) = split_arguments(tool.docs);
    for doc in &argument_docs {
        let exists = tool
            .params
            .iter()
            .any(|param| param_name(param).as_deref() == Some(doc.name.as_str()));
        if !exists {
            errors.push(syn::Error::new(
                doc.span,
                format!(
                    "`{}` is documented in `# Arguments`, but the function has no parameter of that name",
                    doc.name
                ),
            ));
        }
    }

    let mut params = Vec::new();
    for param in tool.params {
        if let Some(param) = validate_param(param, &argument_docs, errors) {
            params.push(param);
        }
    }

    let description = match &tool.attrs.description {
        Some(text) => text.value().trim().to_owned(),
        None => render(&body),
    };
    if description.is_empty() {
        let span = match &tool.attrs.description {
            Some(text) => text.span(),
            None => sig.ident.span(),
        };
        errors.push(syn::Error::new(
            span,
            format!(
                "tool `{}` has no description, and the model cannot use a tool it does not understand: add a doc comment (`/// What it does and when to use it`) or #[tool(description = \"...\")]",
                sig.ident
            ),
        ));
    }

    let (name, name_span) = match &tool.attrs.name {
        Some(name) => (name.value(), name.span()),
        None => (unraw(&sig.ident), sig.ident.span()),
    };
    if !is_valid_tool_name(&name) {
        errors.push(syn::Error::new(
            name_span,
            format!(
                "invalid tool name `{name}`: a tool name is 1 to 64 ASCII letters, digits, `_` or `-`, starting with a letter or `_` (the rule every provider and MCP share); set another with #[tool(name = \"...\")]"
            ),
        ));
    }

    let in_impl = match place {
        Place::Free => tool.receiver.is_some(),
        Place::UnmarkedImpl => true,
        Place::Method => false,
    };
    let krate = tool
        .attrs
        .krate
        .unwrap_or_else(|| syn::parse_quote!(::agent_core));
    ValidTool {
        inline: tool.attrs.inline.is_some(),
        function: tool.function,
        name,
        description,
        params,
        flags: tool.attrs.flags,
        timeout_millis: tool.attrs.timeout_millis,
        krate,
        in_impl,
        receiving,
        name_span,
    }
}

/// How a `#[tool]` method takes its value: `&self`, or `self: Arc<Self>` for a method that needs
/// a handle it owns (to spawn a task with, say).
fn method_receiving(receiver: &Receiver, errors: &mut Errors) -> Receiving {
    const MUTABLE: &str = "a tool method takes `&self`, not `&mut self`: the tools of a value share it, and calls may run at once; keep what changes behind a `Mutex`, an `RwLock` or an atomic (interior mutability)";
    const OTHER: &str = "a tool method takes `&self` (or `self: Arc<Self>`): its tools hold the value in an `Arc` and share it";
    match &receiver.kind {
        ReceiverKind::Reference(_, _, None) => return Receiving::Shared,
        ReceiverKind::Reference(_, _, Some(_)) => errors.push_spanned(receiver, MUTABLE),
        ReceiverKind::Value => errors.push_spanned(
            receiver,
            "a tool method takes `&self` (or `self: Arc<Self>`), not `self`: the value is shared by its tools and called again and again",
        ),
        ReceiverKind::Typed(_, ty) => match &**ty {
            Type::Reference(reference) if is_self(&reference.elem) => {
                if reference.mutability.is_none() {
                    return Receiving::Shared;
                }
                errors.push_spanned(receiver, MUTABLE);
            }
            Type::Path(path) if is_arc_of_self(path) => return Receiving::Owned,
            _ => errors.push_spanned(receiver, OTHER),
        },
        _ => errors.push_spanned(receiver, OTHER),
    }
    Receiving::Nothing
}

fn is_self(ty: &Type) -> bool {
    matches!(ty, Type::Path(path) if path.qself.is_none() && path.path.is_ident("Self"))
}

/// `Arc<Self>` under any path (`Arc`, `std::sync::Arc`), judged by its last segment.
fn is_arc_of_self(path: &syn::TypePath) -> bool {
    let Some(last) = path.path.segments.last() else {
        return false;
    };
    let PathArguments::AngleBracketed(arguments) = &last.arguments else {
        return false;
    };
    last.ident == "Arc"
        && path.qself.is_none()
        && matches!(arguments.args.iter().collect::<Vec<_>>().as_slice(),
            [GenericArgument::Type(inner)] if is_self(inner))
}

/// Checks an impl block under `#[tool]` and each of its `#[tool]` methods.
pub fn validate_impl(block: ToolImpl, errors: &mut Errors) -> ValidImpl {
    let item = &block.block;
    let mut toolbox = true;
    if let Some((path, _)) = &item.trait_ {
        errors.push_spanned(
            path,
            "#[tool] goes on an inherent impl block (`impl YourType { .. }`), not on a trait impl: put the tool methods in an inherent impl block (they may call the trait's methods)",
        );
        toolbox = false;
    } else if !item.generics.params.is_empty() || item.generics.where_clause.is_some() {
        let generics = &item.generics;
        let where_clause = &generics.where_clause;
        errors.push_spanned(
            quote!(#generics #where_clause),
            "a #[tool] impl block cannot be generic: each tool needs one concrete schema; write the block for a concrete type (`impl Service<Concrete> { .. }`)",
        );
        toolbox = false;
    }
    if block.methods.is_empty() {
        let (impl_token, self_ty) = (&item.impl_token, &item.self_ty);
        errors.push_spanned(
            quote!(#impl_token #self_ty),
            "this impl block has no #[tool] method: mark each method that is a tool with #[tool], or take #[tool] off the block",
        );
    }
    let krate: Path = block
        .krate
        .unwrap_or_else(|| syn::parse_quote!(::agent_core));
    let self_ty = (*item.self_ty).clone();
    let mut tools: Vec<ValidTool> = Vec::new();
    for method in block.methods {
        let mut tool = validate(method, Place::Method, errors);
        tool.krate = krate.clone();
        spell_out_self(&mut tool, &self_ty);
        if tools.iter().any(|earlier| earlier.name == tool.name) {
            errors.push(syn::Error::new(
                tool.name_span,
                format!(
                    "two tools of this impl block are named `{}`; tool names must be unique: rename one with #[tool(name = \"...\")]",
                    tool.name
                ),
            ));
        }
        tools.push(tool);
    }
    ValidImpl {
        block: block.block,
        tools,
        krate,
        toolbox,
    }
}

/// Writes the impl's type for `Self` in what the glue of a method's tool names (parameter types,
/// defaults, the return type): the glue sits outside the impl block, where `Self` means nothing.
fn spell_out_self(tool: &mut ValidTool, self_ty: &Type) {
    resolve_self(&mut tool.function.sig.output, self_ty);
    for param in &mut tool.params {
        match param {
            ValidParam::Model(param) => {
                resolve_self(&mut param.ty, self_ty);
                if let Some(DefaultValue::Expr(expr)) = &mut param.default {
                    resolve_self(&mut **expr, self_ty);
                }
            }
            ValidParam::State { ty, inner } => {
                resolve_self(ty, self_ty);
                resolve_self(inner, self_ty);
            }
            ValidParam::Call { ty } => resolve_self(ty, self_ty),
        }
    }
}

fn resolve_self<T: Parse + ToTokens>(node: &mut T, self_ty: &Type) {
    if let Ok(resolved) = syn::parse2(replace_self(node.to_token_stream(), self_ty)) {
        *node = resolved;
    }
}

/// `tokens` with each `Self` replaced by the type (`<Type>` before `::`, as in `Self::new()`), at
/// the span of the `Self` it replaces.
fn replace_self(tokens: TokenStream, self_ty: &Type) -> TokenStream {
    let mut out = TokenStream::new();
    let mut tokens = tokens.into_iter().peekable();
    while let Some(token) = tokens.next() {
        match token {
            TokenTree::Ident(ident) if ident == "Self" => {
                let ty = respan(self_ty, ident.span());
                let before_path = matches!(tokens.peek(), Some(TokenTree::Punct(punct)) if punct.as_char() == ':');
                if before_path {
                    out.extend(quote_spanned!(ident.span()=> <#ty>));
                } else {
                    out.extend(ty);
                }
            }
            TokenTree::Group(group) => {
                let mut replaced =
                    Group::new(group.delimiter(), replace_self(group.stream(), self_ty));
                replaced.set_span(group.span());
                out.extend([TokenTree::Group(replaced)]);
            }
            other => out.extend([other]),
        }
    }
    out
}

fn validate_param(
    param: Param,
    argument_docs: &[super::docs::ArgumentDoc],
    errors: &mut Errors,
) -> Option<ValidParam> {
    if let Some(inner) = param.state {
        if let Some(default) = &param.arg.default {
            errors.push(syn::Error::new(
                default.span(),
                "a `State` parameter comes from the agent, not the model: it cannot have a default",
            ));
        }
        // Any pattern is fine here: `State(db): State<Db>` is the usual way to take it.
        return Some(ValidParam::State {
            ty: param.ty,
            inner,
        });
    }
    if param.call_info {
        if let Some(default) = &param.arg.default {
            errors.push(syn::Error::new(
                default.span(),
                "a `CallInfo` parameter comes from the run, not the model: it cannot have a default",
            ));
        }
        return Some(ValidParam::Call { ty: param.ty });
    }
    let ident = match &param.pat {
        Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => pat.ident.clone(),
        other => {
            errors.push_spanned(
                other,
                "a tool parameter needs a plain name, which the model sees as a JSON field; destructure it inside the function",
            );
            return None;
        }
    };
    let mut valid = true;
    if let Some(found) = find_impl_trait(&param.ty) {
        errors.push_spanned(
            found,
            "a tool parameter cannot be `impl Trait`: its schema needs a concrete type",
        );
        valid = false;
    } else if let Some(reference) = find_reference(&param.ty) {
        errors.push_spanned(
            reference,
            "a tool parameter must be an owned type (`String`, not `&str`): it is parsed from the model's JSON",
        );
        valid = false;
    }
    let field = unraw(&ident);
    let description = if param.docs.is_empty() {
        argument_docs
            .iter()
            .find(|doc| doc.name == field)
            .map(|doc| doc.description.clone())
    } else {
        Some(render(&param.docs))
    };
    let required = param.arg.default.is_none() && !is_option(&param.ty);
    valid.then_some(ValidParam::Model(ModelParam {
        field,
        flat: holds_no_struct(&param.ty),
        ty: param.ty,
        description,
        default: param.arg.default,
        required,
    }))
}

fn param_name(param: &Param) -> Option<String> {
    match &param.pat {
        Pat::Ident(pat) => Some(unraw(&pat.ident)),
        _ => None,
    }
}

fn unraw(ident: &Ident) -> String {
    let text = ident.to_string();
    text.strip_prefix("r#").map(str::to_owned).unwrap_or(text)
}

/// The same rule as `agent_core::is_valid_tool_name`, checked at compile time.
fn is_valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .next()
            .is_some_and(|first| first.is_ascii_alphabetic() || first == b'_')
        && name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-')
}

/// Whether a type, as written, can hold no struct, so serde cannot silently drop a field inside it:
/// strings, numbers, `bool`, `char`, a JSON `Value` (which keeps everything), and `Option`s, lists,
/// sets, boxes, tuples and string-keyed maps of those. Judged by names, as serde's derive judges
/// `Option`: a user's own type named `String` would be taken for the real one, which only skips the
/// parser's search for unknown nested fields.
fn holds_no_struct(ty: &Type) -> bool {
    const LEAVES: &[&str] = &[
        "String", "bool", "char", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32",
        "u64", "u128", "usize", "f32", "f64", "Value",
    ];
    const WRAPPERS: &[&str] = &[
        "Option", "Vec", "VecDeque", "Box", "HashSet", "BTreeSet", "HashMap", "BTreeMap",
    ];
    match ty {
        Type::Paren(inner) => holds_no_struct(&inner.elem),
        Type::Group(inner) => holds_no_struct(&inner.elem),
        Type::Array(array) => holds_no_struct(&array.elem),
        Type::Tuple(tuple) => tuple.elems.iter().all(holds_no_struct),
        Type::Path(path) if path.qself.is_none() => {
            let Some(last) = path.path.segments.last() else {
                return false;
            };
            let name = last.ident.to_string();
            match &last.arguments {
                PathArguments::None => LEAVES.contains(&name.as_str()),
                PathArguments::AngleBracketed(arguments) if WRAPPERS.contains(&name.as_str()) => {
                    arguments.args.iter().all(|argument| match argument {
                        GenericArgument::Type(inner) => holds_no_struct(inner),
                        _ => false,
                    })
                }
                _ => false,
            }
        }
        _ => false,
    }
}

/// `Option<T>` by its last path segment, as serde's derive decides that a missing field is `None`.
fn is_option(ty: &Type) -> bool {
    matches!(ty, Type::Path(path) if path.qself.is_none()
        && path.path.segments.last().is_some_and(|last| last.ident == "Option"
            && matches!(last.arguments, PathArguments::AngleBracketed(_))))
}

/// The first `impl Trait` anywhere in a type.
fn find_impl_trait(ty: &Type) -> Option<&Type> {
    find_type(ty, &|ty| matches!(ty, Type::ImplTrait(_)))
}

/// The first reference anywhere in a type.
fn find_reference(ty: &Type) -> Option<&Type> {
    find_type(ty, &|ty| matches!(ty, Type::Reference(_)))
}

fn find_type<'a>(ty: &'a Type, wanted: &dyn Fn(&Type) -> bool) -> Option<&'a Type> {
    if wanted(ty) {
        return Some(ty);
    }
    match ty {
        Type::Array(array) => find_type(&array.elem, wanted),
        Type::Slice(slice) => find_type(&slice.elem, wanted),
        Type::Paren(paren) => find_type(&paren.elem, wanted),
        Type::Group(group) => find_type(&group.elem, wanted),
        Type::Tuple(tuple) => tuple.elems.iter().find_map(|elem| find_type(elem, wanted)),
        Type::Path(path) => {
            path.path
                .segments
                .iter()
                .find_map(|segment| match &segment.arguments {
                    PathArguments::AngleBracketed(arguments) => {
                        arguments.args.iter().find_map(|argument| match argument {
                            GenericArgument::Type(inner) => find_type(inner, wanted),
                            _ => None,
                        })
                    }
                    _ => None,
                })
        }
        _ => None,
    }
}
