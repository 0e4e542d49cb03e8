//! Expand: the function as written, a unit struct of the same name, and its `Tool` impl with the
//! argument struct, the schema and the parsing glue.

use proc_macro2::TokenStream;
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::attr::DefaultValue;
use super::validate::{ModelParam, ValidParam, ValidTool};

pub fn expand(tool: &ValidTool) -> TokenStream {
    let function = &tool.function;
    let vis = &function.vis;
    let ident = &function.sig.ident;
    let name = &tool.name;
    let description = &tool.description;
    let struct_doc = format!(
        " The tool made by `#[tool]` from the function [`{ident}`](fn@{ident}): pass it to `agent!` or `Agent::try_tool`."
    );

    let model_params: Vec<&ModelParam> = tool
        .params
        .iter()
        .filter_map(|param| match param {
            ValidParam::Model(param) => Some(param),
            ValidParam::State { .. } => None,
        })
        .collect();

    let fields = model_params.iter().map(|param| argument_field(param));
    let default_fns = model_params.iter().filter_map(|param| default_fn(param));
    let field_specs = model_params.iter().map(|param| {
        let field = &param.field;
        let ty = &param.ty;
        let required = param.required;
        quote! {
            __p::FieldSpec { name: #field, required: #required, check: __p::check_field::<#ty> }
        }
    });
    let parameter_checks = model_params.iter().map(|param| {
        let ty = &param.ty;
        quote_spanned! {ty.span()=> __p::assert_tool_parameter::<#ty>(); }
    });

    let argument_idents: Vec<_> = model_params.iter().map(|param| &param.ident).collect();
    let argument_locals: Vec<_> = (0..model_params.len())
        .map(|index| format_ident!("__argument_{}", index))
        .collect();

    let state_bounds = tool.params.iter().filter_map(|param| match param {
        ValidParam::State { ty, inner } => Some(quote_spanned! {ty.span()=>
            #inner: ::agent_core::FromRef<__S>
        }),
        ValidParam::Model(_) => None,
    });
    let mut next_model = 0;
    let call_arguments: Vec<TokenStream> = tool
        .params
        .iter()
        .map(|param| match param {
            ValidParam::State { inner, .. } => quote! {
                ::agent_core::State(<#inner as ::agent_core::FromRef<__S>>::from_ref(__state))
            },
            ValidParam::Model(_) => {
                let local = &argument_locals[next_model];
                next_model += 1;
                quote! { #local }
            }
        })
        .collect();
    let annotation_calls = tool.flags.iter().map(|(flag, value)| {
        let method = format_ident!("{}", flag);
        quote! { .#method(#value) }
    });
    let timeout_call = tool.timeout_millis.map(|millis| {
        quote! { .timeout(::core::time::Duration::from_millis(#millis)) }
    });
    let awaited = function.sig.asyncness.map(|_| quote!(.await));
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

    quote! {
        #function

        #[doc = #struct_doc]
        #[allow(non_camel_case_types)]
        #[derive(Debug, Clone, Copy, Default)]
        #vis struct #ident {}

        const _: () = {
            use ::agent_core::__private as __p;
            #[allow(unused_imports)]
            use __p::{DisplayKind as _, ExactKind as _, JsonKind as _, PlainKind as _, ResultKind as _, ToolErrorKind as _};

            #[derive(__p::serde::Deserialize, __p::schemars::JsonSchema)]
            #[serde(crate = "::agent_core::__private::serde", deny_unknown_fields)]
            #[schemars(crate = "::agent_core::__private::schemars")]
            struct __Arguments {
                #(#fields,)*
            }

            #(#default_fns)*

            const __FIELDS: &[__p::FieldSpec] = &[#(#field_specs),*];

            #[allow(dead_code)]
            fn __assert_parameters() {
                #(#parameter_checks)*
            }

            impl #ident {
                /// The name the model calls this tool by.
                pub const NAME: &'static str = #name;
            }

            impl<__S: ::core::marker::Send + ::core::marker::Sync + 'static> ::agent_core::Tool<__S> for #ident
            where
                #(#state_bounds,)*
            {
                fn definition(&self) -> &::agent_core::ToolDef {
                    static DEFINITION: __p::DefinitionCell = __p::DefinitionCell::new();
                    DEFINITION.get_or_init(|| {
                        ::agent_core::ToolDef::new(#name, #description, __p::parameters_schema::<__Arguments>())
                            .with_annotations(::agent_core::ToolAnnotations::default() #(#annotation_calls)* #timeout_call)
                            .with_output_schema(#output_schema)
                    })
                }

                fn call<'__a>(
                    &'__a self,
                    __state: &'__a __S,
                    __call: &'__a ::agent_core::ToolCall,
                ) -> ::agent_core::BoxFuture<'__a, ::core::result::Result<::agent_core::ToolOutput, ::agent_core::ToolError>> {
                    ::std::boxed::Box::pin(async move {
                        let __Arguments { #(#argument_idents: #argument_locals),* } =
                            __p::parse_arguments::<__Arguments>(&__call.arguments, __FIELDS)?;
                        let __returned = #ident(#(#call_arguments),*) #awaited;
                        #convert
                    })
                }
            }
        };
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

/// One field of the argument struct: the parameter's type, description and default.
fn argument_field(param: &ModelParam) -> TokenStream {
    let ident = &param.ident;
    let ty = &param.ty;
    let description = param.description.as_ref().map(|text| {
        quote! { #[schemars(description = #text)] }
    });
    let default = match &param.default {
        None => None,
        Some(DefaultValue::Trait(span)) => Some(quote_spanned! {*span=> #[serde(default)] }),
        Some(DefaultValue::Expr(_)) => {
            let function = default_fn_name(param).to_string();
            Some(quote! { #[serde(default = #function)] })
        }
    };
    quote! {
        #description
        #default
        #ident: #ty
    }
}

/// `#[arg(default = expr)]` becomes a function serde calls when the field is missing.
fn default_fn(param: &ModelParam) -> Option<TokenStream> {
    let Some(DefaultValue::Expr(expr)) = &param.default else {
        return None;
    };
    let function = default_fn_name(param);
    let ty = &param.ty;
    Some(quote_spanned! {expr.span()=>
        fn #function() -> #ty {
            #expr
        }
    })
}

fn default_fn_name(param: &ModelParam) -> syn::Ident {
    format_ident!("__default_{}", param.field)
}
