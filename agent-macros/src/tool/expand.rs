//! Expand: the function as written, a unit struct of the same name, and its `Tool` impl with the
//! table of its parameters and the parsing glue; for an impl block, the block as written, a
//! tool for each `#[tool]` method (the same glue, calling the method on the value) and the
//! `ToolBox` impl that hands them out.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, ImplItem, ItemFn, ItemImpl, Type};

use super::attr::DefaultValue;
use super::signature::{ModelParam, Receiving, ValidImpl, ValidParam, ValidTool};

/// A `#[tool] fn`: the function, its unit struct, and the tool.
pub fn expand(tool: &ValidTool) -> TokenStream {
    let function = emitted_function(tool);
    let ident = &function.sig.ident;
    let unit_struct = unit_struct(tool);
    let items = tool_items(tool, &quote!(#ident), Callee::Function);
    quote! {
        #function

        #unit_struct

        const _: () = {
            #items
        };
    }
}

/// A `#[tool] impl` block: the block, a struct holding an `Arc` of the value for each `#[tool]`
/// method with the same tool items as a `#[tool] fn`, and the value's `ToolBox` impl.
pub fn expand_impl(valid: &ValidImpl) -> TokenStream {
    let block = emitted_block(valid);
    let krate = &valid.krate;
    let self_ty = &*valid.block.self_ty;
    // Each tool is a struct named after its method (so the compiler's notes name it by the
    // method), prefixed so that it hides no type or module of the user's that the glue names
    // (`fn users(&self) -> users::User`), and braced so that it takes no name in the value
    // namespace either.
    let structs: Vec<Ident> = valid
        .tools
        .iter()
        .map(|tool| {
            let ident = &tool.function.sig.ident;
            format_ident!("__tool_{}", ident, span = ident.span())
        })
        .collect();
    let tools = valid.tools.iter().zip(&structs).map(|(tool, name)| {
        let items = tool_items(tool, &quote!(#name), Callee::Method { self_ty });
        quote! {
            #[allow(non_camel_case_types)]
            struct #name {
                __shared: ::std::sync::Arc<#self_ty>,
            }

            const _: () = {
                #items
            };
        }
    });
    let bounds: Vec<TokenStream> = valid.tools.iter().flat_map(state_bounds).collect();
    // At the type, so a value that cannot be shared between threads is an error there.
    let toolbox = quote_spanned! {self_ty.span()=>
        #[automatically_derived]
        impl<__S: ::core::marker::Send + ::core::marker::Sync + 'static> #krate::ToolBox<__S> for #self_ty
        where
            #(#bounds,)*
        {
            fn tools(
                self: ::std::sync::Arc<Self>,
            ) -> ::std::vec::Vec<::std::sync::Arc<dyn #krate::Tool<__S>>> {
                ::std::vec![
                    #(::std::sync::Arc::new(#structs { __shared: ::std::sync::Arc::clone(&self) })
                        as ::std::sync::Arc<dyn #krate::Tool<__S>>),*
                ]
            }
        }
    };
    quote! {
        #block

        const _: () = {
            use #krate::__private as __p;

            #(#tools)*

            #toolbox
        };
    }
}

/// How the generated `call` reaches the function.
#[derive(Clone, Copy)]
enum Callee<'a> {
    /// A free function, by its name.
    Function,
    /// A method (or associated function) of `self_ty`; the tool holds the value as its field
    /// `__shared`, an `Arc<self_ty>`.
    Method { self_ty: &'a Type },
}

/// What makes `tool_ty` a tool, for a `#[tool] fn` and a `#[tool]` method alike: the table of its
/// parameters (from which agent-core parses the arguments and makes the schema), the glue that
/// parses along it, `NAME` and `definition()`, and the `Tool` impl. They go inside a
/// `const _: () = { .. };`.
fn tool_items(tool: &ValidTool, tool_ty: &TokenStream, callee: Callee<'_>) -> TokenStream {
    let krate = &tool.krate;
    let function = &tool.function;
    let ident = &function.sig.ident;
    let name = &tool.name;
    let description = &tool.description;
    let model_params: Vec<&ModelParam> = tool
        .params
        .iter()
        .filter_map(|param| match param {
            ValidParam::Model(param) => Some(param),
            ValidParam::State { .. } | ValidParam::Call { .. } => None,
        })
        .collect();

    // Every parameter type is a generic parameter of the glue that parses the arguments and makes
    // the table of parameters; the user's types are named only as the arguments of `__glue`,
    // bounded by `ToolParameter`: a type that does not fit is one error, at the parameter, instead
    // of one per use inside the glue. A default is an expression of the user's type, handed to the
    // generic parameter through `Same` (which every type is to itself), so it adds no bound of its
    // own. There is no argument struct: agent-core reads the arguments into the parameters along
    // the table (`__p::Slot`s) and makes the schema from it, so no `Deserialize` or `JsonSchema`
    // impl is generated per tool.
    let generics: Vec<Ident> = (0..model_params.len())
        .map(|index| format_ident!("__P{}", index))
        .collect();
    let bounds: Vec<TokenStream> = model_params
        .iter()
        .zip(&generics)
        .map(|(param, generic)| {
            let ty = &param.ty;
            match param.default {
                Some(_) => quote!(#generic: __p::ToolParameter + __p::Same<#ty>),
                None => quote!(#generic: __p::ToolParameter),
            }
        })
        .collect();
    let type_arguments: Vec<&Type> = model_params.iter().map(|param| &param.ty).collect();
    // The parameters as the parser gives them, nested: `(P0, (P1, ()))`.
    let nested = |types: Vec<TokenStream>| {
        types
            .into_iter()
            .rev()
            .fold(quote!(()), |rest, ty| quote!((#ty, #rest)))
    };
    let nested_types = nested(type_arguments.iter().map(|ty| quote!(#ty)).collect());
    let nested_generics = nested(generics.iter().map(|generic| quote!(#generic)).collect());
    let default_fns = model_params
        .iter()
        .enumerate()
        .filter_map(|(index, param)| default_fns(param, index));
    let field_specs = model_params
        .iter()
        .zip(&generics)
        .enumerate()
        .map(|(index, (param, generic))| field_spec(param, generic, index));
    // The slots, nested as agent-core reads them: `(Slot<P0>, (Slot<P1>, ()))`.
    let slots = model_params.iter().zip(&generics).enumerate().rev().fold(
        quote!(()),
        |rest, (index, (param, generic))| match param.default {
            Some(_) => {
                let (generic_fn, _) = default_fn_names(index);
                quote!((__p::Slot::<#generic>::or(#generic_fn::<#generic>), #rest))
            }
            None => quote!((__p::Slot::<#generic>::new(), #rest)),
        },
    );
    let field_count = model_params.len();
    // Parameters that hold no struct never need the strict parser: leaving it out of the glue
    // halves what reading the parameters costs the user's build.
    let parse = if model_params.iter().all(|param| param.flat) {
        quote!(parse_flat_arguments)
    } else {
        quote!(parse_arguments)
    };
    let argument_locals: Vec<_> = (0..model_params.len())
        .map(|index| format_ident!("__argument_{}", index))
        .collect();
    let nested_locals = argument_locals
        .iter()
        .rev()
        .fold(quote!(()), |rest, local| quote!((#local, #rest)));

    // A `State` parameter is built from the run's context through `FromRef`, and wrapped through
    // `AgentState`, which only agent-core's `State` implements: another type named `State` is one
    // error, at it.
    let state_params: Vec<(&Type, &Type)> = tool
        .params
        .iter()
        .filter_map(|param| match param {
            ValidParam::State { ty, inner } => Some((ty, inner)),
            ValidParam::Model(_) | ValidParam::Call { .. } => None,
        })
        .collect();
    let state_locals: Vec<_> = (0..state_params.len())
        .map(|index| format_ident!("__state_{}", index))
        .collect();
    let state_bounds = state_bounds(tool);
    let state_values = state_params
        .iter()
        .zip(&state_locals)
        .map(|((ty, inner), local)| {
            quote_spanned! {ty.span()=>
                let #local = <#ty as __p::AgentState<#inner>>::from_inner(
                    __p::ProvidesState::<#inner>::provide(__state),
                );
            }
        });
    // A `CallInfo` parameter says which call this is: the model's call and the run's id (`__run`;
    // a call made outside a run is a run of its own). It is wrapped through `AgentCallInfo`,
    // which only agent-core's `CallInfo` implements.
    let call_params: Vec<&Type> = tool
        .params
        .iter()
        .filter_map(|param| match param {
            ValidParam::Call { ty } => Some(ty),
            ValidParam::Model(_) | ValidParam::State { .. } => None,
        })
        .collect();
    let call_locals: Vec<_> = (0..call_params.len())
        .map(|index| format_ident!("__call_info_{}", index))
        .collect();
    let call_values = call_params.iter().zip(&call_locals).map(|(ty, local)| {
        quote_spanned! {ty.span()=>
            let #local = <#ty as __p::AgentCallInfo>::from_call(__call, __run);
        }
    });
    let (mut next_model, mut next_state, mut next_call) = (
        argument_locals.iter(),
        state_locals.iter(),
        call_locals.iter(),
    );
    let call_arguments: Vec<&Ident> = tool
        .params
        .iter()
        .filter_map(|param| match param {
            ValidParam::State { .. } => next_state.next(),
            ValidParam::Model(_) => next_model.next(),
            ValidParam::Call { .. } => next_call.next(),
        })
        .collect();

    let annotation_calls = tool.flags.iter().map(|(flag, value)| {
        let method = format_ident!("{}", flag);
        quote! { .#method(#value) }
    });
    let touches = touches(tool);
    let timeout_call = tool.timeout_millis.map(|millis| {
        quote! { .timeout(::core::time::Duration::from_millis(#millis)) }
    });
    let output_span = match &function.sig.output {
        syn::ReturnType::Type(_, ty) => ty.span(),
        syn::ReturnType::Default => ident.span(),
    };
    let output_schema = output_schema(&function.sig.output);
    let convert = quote_spanned! {output_span=>
        match (&&__p::Kind(&__returned)).__result_kind().split(__returned) {
            ::core::result::Result::Ok(__value) => (&&__p::Kind(&__value)).__output_kind().convert(__value),
            ::core::result::Result::Err(__error) => {
                ::core::result::Result::Err((&&__p::Kind(&__error)).__error_kind().convert(__error))
            }
        }
    };
    // A method is called by its path, with the value first, so no trait method of the same name
    // can get in its way.
    let blocking = function.sig.asyncness.is_none() && !tool.inline;
    let (prepare, receiver) = match (callee, tool.receiving) {
        (Callee::Function, _) | (_, Receiving::Nothing) => (None, None),
        // Borrowed from the tool while the call's future runs.
        (Callee::Method { .. }, Receiving::Shared) if !blocking => {
            (None, Some(quote!(&self.__shared)))
        }
        // The blocking thread needs a handle of its own.
        (Callee::Method { .. }, Receiving::Shared) => (
            Some(quote!(let __receiver = ::std::sync::Arc::clone(&self.__shared);)),
            Some(quote!(&__receiver)),
        ),
        (Callee::Method { .. }, Receiving::Owned) => (
            Some(quote!(let __receiver = ::std::sync::Arc::clone(&self.__shared);)),
            Some(quote!(__receiver)),
        ),
    };
    let path = match callee {
        Callee::Function => quote!(#ident),
        Callee::Method { self_ty } => quote!(<#self_ty>::#ident),
    };
    let arguments = receiver
        .into_iter()
        .chain(call_arguments.iter().map(|argument| quote!(#argument)));
    let call = quote!(#path(#(#arguments),*));
    // An async function is awaited on the agent's task; a sync one runs on a blocking thread (so it
    // has the concurrency, timeouts and cancellation of an async one) unless marked `inline`. Its
    // result is converted on that thread, so only the finished `ToolOutput` crosses back: a return
    // type that is not `Send` is fine.
    let run = if function.sig.asyncness.is_some() {
        quote! {
            #prepare
            let __returned = #call.await;
            #convert
        }
    } else if tool.inline {
        quote! {
            #prepare
            let __returned = #call;
            #convert
        }
    } else {
        let blocking_call = quote_spanned! {output_span=>
            __p::run_blocking(move || {
                let __returned = #call;
                #convert
            })
            .await?
        };
        quote! {
            #prepare
            #blocking_call
        }
    };
    // A method's call is at the method, so an error about it (a future that is not `Send`, a
    // value that is not `Sync`) names the method rather than the block's `#[tool]`.
    let call_span = match callee {
        Callee::Function => Span::call_site(),
        Callee::Method { .. } => ident.span(),
    };
    let boxed = quote_spanned! {call_span=>
        ::std::boxed::Box::pin(async move {
            let #nested_locals = (__GLUE.0)(&__call.arguments, &__GLUE.1)?;
            #(#state_values)*
            #(#call_values)*
            #run
        })
    };

    // `__GLUE` is the one place the parameter types meet their bound: how the model's arguments
    // are read into the parameters, and the table of them.
    quote! {
        use #krate::__private as __p;
        #[allow(unused_imports)]
        use __p::{DisplayKind as _, ExactKind as _, JsonKind as _, PlainKind as _, ResultKind as _, ToolErrorKind as _};

        #(#default_fns)*

        const __GLUE: __p::Glue<#nested_types, #field_count> = __glue::<#(#type_arguments),*>();

        const fn __glue<#(#bounds),*>() -> __p::Glue<#nested_generics, #field_count> {
            (
                |__raw, __fields| __p::#parse(__raw, __fields, #slots),
                [#(#field_specs),*],
            )
        }

        #[automatically_derived]
        impl #tool_ty {
            /// The name the model calls this tool by.
            pub const NAME: &'static str = #name;

            /// What this tool touches, for `agent!`'s check of the lethal mix.
            pub const TOUCHES: __p::Touches = #touches;

            /// Its name and what it touches, for `agent!`'s check of the lethal mix, which reaches
            /// them through a value of the tool so that a plain function listed by mistake is one
            /// error, the one at the value `agent!` adds.
            #[doc(hidden)]
            pub const fn __mix_check(&self) -> __p::MixCheck {
                __p::MixCheck { name: Self::NAME, touches: Self::TOUCHES }
            }

            /// What the model sees of this tool: its name, description and parameter schema.
            pub fn definition(&self) -> &'static #krate::ToolDef {
                static DEFINITION: __p::DefinitionCell = __p::DefinitionCell::new();
                DEFINITION.get_or_init(|| {
                    #krate::ToolDef::new(#name, #description, __p::arguments_schema(&__GLUE.1))
                        .with_annotations(#krate::ToolAnnotations::default() #(#annotation_calls)* #timeout_call)
                        .with_output_schema(#output_schema)
                })
            }
        }

        #[automatically_derived]
        impl<__S: ::core::marker::Send + ::core::marker::Sync + 'static> #krate::Tool<__S> for #tool_ty
        where
            #(#state_bounds,)*
        {
            fn definition(&self) -> &#krate::ToolDef {
                <#tool_ty>::definition(self)
            }

            fn runs_on_a_blocking_thread(&self) -> bool {
                #blocking
            }

            fn call<'__a>(
                &'__a self,
                __state: &'__a __S,
                __call: &'__a #krate::ToolCall,
                __run: &'__a #krate::RunScope,
            ) -> #krate::BoxFuture<'__a, ::core::result::Result<#krate::ToolOutput, #krate::ToolError>> {
                #boxed
            }
        }
    }
}

/// What a `#[tool]` with mistakes expands to besides the errors: the function, its struct and a
/// `Tool` impl with an empty definition, so that calls of the function and an `agent!` listing the
/// tool compile on and add no errors of their own. Nothing of it ever runs: the crate does not build.
pub fn fallback(tool: &ValidTool) -> TokenStream {
    let function = emitted_function(tool);
    // A function in an `impl` block: no struct can go there.
    if tool.in_impl {
        return function.into_token_stream();
    }
    let krate = &tool.krate;
    let ident = &function.sig.ident;
    let unit_struct = unit_struct(tool);
    let unique_name = format!("::{ident}");
    quote! {
        #function

        #unit_struct

        const _: () = {
            #[automatically_derived]
            impl #ident {
                /// Unlike any other tool's name, so `agent!`'s check of distinct names stays quiet.
                pub const NAME: &'static str = ::core::concat!(::core::module_path!(), #unique_name);

                /// Nothing, so `agent!`'s check of the lethal mix stays quiet too.
                pub const TOUCHES: #krate::__private::Touches = #krate::__private::Touches::NONE;

                #[doc(hidden)]
                pub const fn __mix_check(&self) -> #krate::__private::MixCheck {
                    #krate::__private::MixCheck { name: Self::NAME, touches: Self::TOUCHES }
                }

                /// An empty definition: the tool did not compile.
                pub fn definition(&self) -> &'static #krate::ToolDef {
                    static DEFINITION: #krate::__private::DefinitionCell = #krate::__private::DefinitionCell::new();
                    DEFINITION.get_or_init(|| #krate::__private::broken_tool_definition(Self::NAME))
                }
            }

            #[automatically_derived]
            impl<__S: ::core::marker::Send + ::core::marker::Sync + 'static> #krate::Tool<__S> for #ident {
                fn definition(&self) -> &#krate::ToolDef {
                    <#ident>::definition(self)
                }

                fn call<'__a>(
                    &'__a self,
                    _: &'__a __S,
                    _: &'__a #krate::ToolCall,
                    _: &'__a #krate::RunScope,
                ) -> #krate::BoxFuture<'__a, ::core::result::Result<#krate::ToolOutput, #krate::ToolError>> {
                    #krate::__private::broken_tool_call()
                }
            }
        };
    }
}

/// What a `#[tool] impl` block with mistakes expands to besides the errors: the block, and (for a
/// block that can have one) a `ToolBox` impl with no tools, so that calls of its methods and an
/// agent taking the value compile on and add no errors of their own.
pub fn fallback_impl(valid: &ValidImpl) -> TokenStream {
    let block = emitted_block(valid);
    if !valid.toolbox {
        return block.into_token_stream();
    }
    let krate = &valid.krate;
    let self_ty = &valid.block.self_ty;
    quote! {
        #block

        const _: () = {
            #[automatically_derived]
            impl<__S: ::core::marker::Send + ::core::marker::Sync + 'static> #krate::ToolBox<__S> for #self_ty {
                fn tools(
                    self: ::std::sync::Arc<Self>,
                ) -> ::std::vec::Vec<::std::sync::Arc<dyn #krate::Tool<__S>>> {
                    ::std::vec::Vec::new()
                }
            }
        };
    }
}

/// The tool's `Touches` (inside the tool's items, where `__p` is agent-core's `__private`): what
/// its flags say it reads and sends, and whether each call waits for an approval.
fn touches(tool: &ValidTool) -> TokenStream {
    let flag = |name: &str| {
        (tool.flags.iter())
            .rev()
            .find(|(flag, _)| *flag == name)
            .is_some_and(|(_, value)| *value)
    };
    let (reads_untrusted, reads_private, sends_out, requires_approval) = (
        flag("reads_untrusted"),
        flag("reads_private"),
        flag("sends_out"),
        flag("requires_approval"),
    );
    quote! {
        __p::Touches {
            reads_untrusted: #reads_untrusted,
            reads_private: #reads_private,
            sends_out: #sends_out,
            requires_approval: #requires_approval,
        }
    }
}

/// What a tool asks of the context `__S`: a part of each type its `State` parameters take.
fn state_bounds(tool: &ValidTool) -> Vec<TokenStream> {
    tool.params
        .iter()
        .filter_map(|param| match param {
            ValidParam::State { ty, inner } => Some(quote_spanned! {ty.span()=>
                __S: __p::ProvidesState<#inner>
            }),
            ValidParam::Model(_) | ValidParam::Call { .. } => None,
        })
        .collect()
}

/// The impl block as written, less what only `#[tool]` reads, with clippy's `too_many_arguments`
/// allowed on its tool methods (see [`emitted_function`]).
fn emitted_block(valid: &ValidImpl) -> ItemImpl {
    let mut block = valid.block.clone();
    for item in &mut block.items {
        if let ImplItem::Fn(method) = item
            && valid
                .tools
                .iter()
                .any(|tool| tool.function.sig.ident == method.sig.ident)
        {
            method
                .attrs
                .push(syn::parse_quote!(#[allow(clippy::too_many_arguments)]));
        }
    }
    block
}

/// The function as written, less the parameter attributes only `#[tool]` reads, with clippy's
/// `too_many_arguments` allowed (whatever threshold the user's clippy.toml sets): the model, not a
/// person, calls a tool, and each parameter is a field of its schema.
fn emitted_function(tool: &ValidTool) -> ItemFn {
    let mut function = tool.function.clone();
    function
        .attrs
        .push(syn::parse_quote!(#[allow(clippy::too_many_arguments)]));
    function
}

/// The unit struct beside the function: the tool, in the type namespace only.
fn unit_struct(tool: &ValidTool) -> TokenStream {
    let ident = &tool.function.sig.ident;
    let vis = &tool.function.vis;
    let doc = format!(
        " The tool made by `#[tool]` from the function [`{ident}`](fn@{ident}): pass it to `agent!` or `Agent::try_tool`."
    );
    quote! {
        #[doc = #doc]
        #[allow(non_camel_case_types)]
        #[derive(Debug, Clone, Copy, Default)]
        #vis struct #ident {}
    }
}

/// The schema of the success type, when it has one; found by type in `__private`. A return type
/// written as `impl Trait` cannot be named, so its tool has none.
fn output_schema(output: &syn::ReturnType) -> TokenStream {
    let syn::ReturnType::Type(_, ty) = output else {
        return quote!(::core::option::Option::None);
    };
    if names_impl_trait(ty.to_token_stream()) {
        return quote!(::core::option::Option::None);
    }
    quote! {{
        #[allow(unused_imports)]
        use __p::{PlainSuccess as _, ResultSuccess as _, WithOutputSchema as _, WithoutOutputSchema as _};
        (&&(&&__p::Probe::<#ty>::new()).__success()).__output_schema()
    }}
}

fn names_impl_trait(tokens: TokenStream) -> bool {
    tokens.into_iter().any(|token| match token {
        proc_macro2::TokenTree::Ident(ident) => ident == "impl",
        proc_macro2::TokenTree::Group(group) => names_impl_trait(group.stream()),
        _ => false,
    })
}

/// The parameter's row of the table: its name, whether it is required and flat, its description,
/// and for a parameter with a default, the default as JSON for the schema.
fn field_spec(param: &ModelParam, generic: &Ident, index: usize) -> TokenStream {
    let (field, required, flat) = (&param.field, param.required, param.flat);
    let description = param.description.as_deref().unwrap_or_default();
    let spec = quote!(__p::FieldSpec::of::<#generic>(#field, #required, #flat, #description));
    match param.default {
        Some(_) => {
            let json_fn = default_json_fn_name(index);
            quote!(#spec.with_default(#json_fn))
        }
        None => spec,
    }
}

/// `#[arg(default = expr)]` (or `#[arg(default)]`, `Default::default()`) becomes a function of the
/// parameter's own type, a generic one the parser calls when the field is missing, and one that
/// gives the schema the value as JSON (when the type serializes; else the schema shows none).
fn default_fns(param: &ModelParam, index: usize) -> Option<TokenStream> {
    let default = param.default.as_ref()?;
    let (generic_fn, value_fn) = default_fn_names(index);
    let json_fn = default_json_fn_name(index);
    let ty = &param.ty;
    let value = match default {
        DefaultValue::Expr(expr) => quote_spanned! {expr.span()=> #expr },
        DefaultValue::Trait(span) => quote_spanned! {*span=> ::core::default::Default::default() },
    };
    Some(quote! {
        fn #value_fn() -> #ty {
            #value
        }

        fn #generic_fn<__T: __p::Same<#ty>>() -> __T {
            __p::Same::same(#value_fn())
        }

        fn #json_fn() -> ::core::option::Option<__p::serde_json::Value> {
            #[allow(unused_imports)]
            use __p::{NoDefaultJson as _, SerializableDefault as _};
            (&&__p::DefaultJson(#value_fn())).__default_json()
        }
    })
}

/// The function that gives the schema a parameter's default, as JSON when it serializes.
fn default_json_fn_name(index: usize) -> Ident {
    format_ident!("__default_json_{}", index)
}

/// By the parameter's place, so no two parameters' names can meet.
fn default_fn_names(index: usize) -> (Ident, Ident) {
    (
        format_ident!("__default_{}", index),
        format_ident!("__default_value_{}", index),
    )
}
