//! Tools made at run time from closures (`tool_fn`): names and descriptions from configuration, a
//! typed argument struct for the schema and the parsing, state from the agent, and every return
//! value a `#[tool] fn` may have.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agent_core::{
    Agent, FromRef, Json, State, Tool, ToolError, ToolOutput, ToolSet, ToolSetError, tool, tool_fn,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tests::{call, model_calling, tool_results};

fn contents(output: &agent_core::RunOutput) -> Vec<(bool, &str)> {
    tool_results(output)
        .iter()
        .map(|result| (result.is_error, result.content.as_str()))
        .collect()
}

#[derive(Deserialize, JsonSchema)]
struct Query {
    /// Words to look for
    words: String,
}

/// One search backend of a configuration: the name the model sees, what it is for, its documents.
struct Backend {
    name: &'static str,
    description: &'static str,
    documents: Vec<&'static str>,
}

#[tokio::test]
async fn tools_named_by_configuration_run_through_an_agent() {
    let config = [
        Backend {
            name: "search_wiki",
            description: "Search the team wiki.",
            documents: vec!["Deploying on Fridays", "On-call rota"],
        },
        Backend {
            name: "search_tickets",
            description: "Search support tickets.",
            documents: vec!["Login fails on Fridays", "Refund request"],
        },
    ];
    let searches = Arc::new(AtomicUsize::new(0));
    let mut agent: Agent = Agent::new(model_calling(
        [
            call(0, "search_wiki", r#"{"words":"Fridays"}"#),
            call(1, "search_tickets", r#"{"words":"Fridays"}"#),
            call(2, "search_tickets", r#"{"words":"nothing like it"}"#),
        ],
        "done",
    ));
    for backend in config {
        let documents = Arc::new(backend.documents);
        let searches = Arc::clone(&searches);
        let search = tool_fn(backend.name, backend.description, move |query: Query| {
            let (documents, searches) = (Arc::clone(&documents), Arc::clone(&searches));
            async move {
                searches.fetch_add(1, Ordering::SeqCst);
                let hits: Vec<&str> = documents
                    .iter()
                    .copied()
                    .filter(|document| document.contains(&query.words))
                    .collect();
                if hits.is_empty() {
                    return Err(format!("nothing matches `{}`", query.words));
                }
                Ok(Json(hits))
            }
        })
        .read_only(true);
        agent = agent.try_tool(search).unwrap();
    }
    let names: Vec<&str> = agent
        .tools()
        .definitions()
        .iter()
        .map(|definition| definition.name.as_str())
        .collect();
    assert_eq!(names, ["search_wiki", "search_tickets"]);
    let output = agent.run("What happens on Fridays?").await.unwrap();
    assert_eq!(
        contents(&output),
        [
            (false, r#"["Deploying on Fridays"]"#),
            (false, r#"["Login fails on Fridays"]"#),
            (true, "Error: nothing matches `nothing like it`"),
        ]
    );
    assert_eq!(searches.load(Ordering::SeqCst), 3);
}

/// A customer's address.
#[derive(Deserialize, JsonSchema)]
struct Address {
    /// The city
    city: String,
    /// The postal code
    zip: u32,
}

#[derive(Deserialize, JsonSchema)]
struct NewCustomer {
    /// Full name
    name: String,
    /// Where they live
    address: Address,
    /// Tags to file them under
    #[serde(default)]
    tags: Vec<String>,
    /// A note, if any
    note: Option<String>,
}

fn create_customer() -> impl Tool {
    tool_fn(
        "create_customer",
        "Create a customer.",
        |customer: NewCustomer| async move {
            format!(
                "{} in {} {} ({} tags, note: {})",
                customer.name,
                customer.address.zip,
                customer.address.city,
                customer.tags.len(),
                customer.note.as_deref().unwrap_or("none")
            )
        },
    )
}

/// A search, maybe only near an address.
#[derive(Deserialize, JsonSchema)]
struct NearbySearch {
    /// What to look for
    words: String,
    /// Only near here, if given
    near: Option<Address>,
}

/// Inside an `Option` of a struct (a choice of the struct or `null` in the schema), a problem has
/// its path as it has without the `Option`, rather than "no shape matches".
#[tokio::test]
async fn a_problem_inside_an_optional_struct_has_its_path() {
    let mut tools = ToolSet::new();
    let search = tool_fn("search", "Search.", |search: NearbySearch| async move {
        format!(
            "{} near {:?}",
            search.words,
            search.near.map(|near| near.city)
        )
    });
    tools.add(search).unwrap();
    let run = |arguments: &'static str| {
        let tools = tools.clone();
        async move {
            tools
                .dispatch(&(), &call(0, "search", arguments))
                .await
                .content
        }
    };
    assert_eq!(
        run(r#"{"words":"tea","near":{"city":"Oslo","zip":150,"contry":"NO"}}"#).await,
        "Error: invalid arguments: near.contry: unknown field; leave it out or check its spelling against the schema"
    );
    assert_eq!(
        run(r#"{"words":"tea","near":{"city":"Oslo","zip":"0150"}}"#).await,
        r#"Error: invalid arguments: near.zip: expected an integer, got "0150""#
    );
    // What fits still runs, with the struct or without it.
    assert_eq!(run(r#"{"words":"tea","near":null}"#).await, "tea near None");
    assert_eq!(
        run(r#"{"words":"tea","near":{"city":"Oslo","zip":150}}"#).await,
        r#"tea near Some("Oslo")"#
    );
}

#[tokio::test]
async fn arguments_that_do_not_fit_reach_the_model_with_their_field_paths() {
    let tools = {
        let mut tools = ToolSet::new();
        tools.add(create_customer()).unwrap();
        tools
    };
    let run = |arguments: &'static str| {
        let tools = tools.clone();
        async move {
            let result = tools
                .dispatch(&(), &call(0, "create_customer", arguments))
                .await;
            (result.is_error, result.content)
        }
    };
    let expect = |content: &str| (true, content.to_owned());
    // A value of the wrong type, deep inside: its path.
    assert_eq!(
        run(r#"{"name":"Ann","address":{"city":"Oslo","zip":"0150"}}"#).await,
        expect(r#"Error: invalid arguments: address.zip: expected an integer, got "0150""#)
    );
    // A misspelt field, deep inside: its path, never silently dropped.
    assert_eq!(
        run(r#"{"name":"Ann","address":{"city":"Oslo","zip":150,"contry":"NO"}}"#).await,
        expect(
            "Error: invalid arguments: address.contry: unknown field; leave it out or check its spelling against the schema"
        )
    );
    // A misspelt field of the arguments: which fields there are.
    assert_eq!(
        run(r#"{"name":"Ann","address":{"city":"Oslo","zip":150},"tag":["vip"]}"#).await,
        expect(
            "Error: invalid arguments: tag: unknown field, expected one of `address`, `name`, `note`, `tags`"
        )
    );
    // Every missing field at once, with the unknown one.
    assert_eq!(
        run(r#"{"nmae":"Ann"}"#).await,
        expect(
            "Error: invalid arguments: name: missing required field; address: missing required field; nmae: unknown field, expected one of `address`, `name`, `note`, `tags`"
        )
    );
    assert_eq!(
        run(r#"["Ann"]"#).await,
        expect(
            "Error: invalid arguments: arguments: expected a JSON object of named arguments, got an array"
        )
    );
    assert!(
        run(r#"{"name":"#)
            .await
            .1
            .starts_with("Error: the arguments are not valid JSON: ")
    );
    // `null` for what may be left out means "left out", as OpenAI's strict mode sends it.
    assert_eq!(
        run(r#"{"name":"Ann","address":{"city":"Oslo","zip":150},"tags":null,"note":null}"#).await,
        (false, "Ann in 150 Oslo (0 tags, note: none)".to_owned())
    );
}

/// Create a customer.
#[tool]
fn create_customer_fn(
    /// Full name
    name: String,
    /// Where they live
    address: Address,
    /// Tags to file them under
    #[arg(default)]
    tags: Vec<String>,
    /// A note, if any
    note: Option<String>,
) -> String {
    let _ = (name, address, tags, note);
    String::new()
}

#[test]
fn the_schema_is_the_one_a_tool_fn_with_those_parameters_has() {
    let closure = create_customer();
    let function = create_customer_fn {};
    let (closure, function) = (
        &closure.definition().parameters,
        &function.definition().parameters,
    );
    // `#[arg(default)]` shows the default's value; `#[serde(default)]` on a field does too.
    assert_eq!(closure, function);
    insta::assert_json_snapshot!("create_customer_parameters", closure);
}

#[derive(Clone)]
struct Prices(HashMap<&'static str, u32>);

/// The agent's context: prices and more.
#[derive(Clone)]
struct Shop {
    prices: Prices,
    currency: &'static str,
}

impl FromRef<Shop> for Prices {
    fn from_ref(shop: &Shop) -> Self {
        shop.prices.clone()
    }
}

#[derive(Deserialize, JsonSchema)]
struct Item {
    /// The item's name
    item: String,
}

#[derive(Serialize, JsonSchema)]
struct Price {
    item: String,
    cents: u32,
}

#[tokio::test]
async fn a_closure_takes_a_part_of_the_agents_state() {
    let price = tool_fn(
        "price",
        "Tell an item's price.",
        |State(prices): State<Prices>, Item { item }: Item| async move {
            let Some(cents) = prices.0.get(item.as_str()).copied() else {
                return Err(ToolError::failed(format!("we do not sell {item}")));
            };
            Ok(Json(Price { item, cents }))
        },
    )
    .output_schema::<Price>();
    let currency = tool_fn(
        "currency",
        "Tell the shop's currency.",
        |State(shop): State<Shop>, _: HashMap<String, String>| async move { shop.currency },
    );
    assert_eq!(
        price.definition().output_schema.as_ref().unwrap()["required"],
        serde_json::json!(["item", "cents"])
    );
    let model = model_calling(
        [
            call(0, "price", r#"{"item":"tea"}"#),
            call(1, "price", r#"{"item":"coffee"}"#),
            call(2, "currency", ""),
        ],
        "done",
    );
    let shop = Shop {
        prices: Prices(HashMap::from([("tea", 350)])),
        currency: "EUR",
    };
    let agent = Agent::new(model)
        .try_tool(price)
        .unwrap()
        .try_tool(currency)
        .unwrap()
        .bind_context(shop);
    let output = agent.run("How much is tea?").await.unwrap();
    assert_eq!(
        contents(&output),
        [
            (false, r#"{"item":"tea","cents":350}"#),
            (true, "Error: we do not sell coffee"),
            (false, "EUR"),
        ]
    );
}

#[derive(Deserialize, JsonSchema)]
struct Nothing {}

#[tokio::test]
async fn every_return_value_means_what_it_means_for_a_tool_fn() {
    let mut tools: ToolSet = ToolSet::new();
    tools
        .add(tool_fn("text", "Text.", |_: Nothing| async { "verbatim" }))
        .unwrap();
    tools
        .add(tool_fn("nothing", "Nothing.", |_: Nothing| async {}))
        .unwrap();
    tools
        .add(tool_fn("value", "A JSON value.", |_: Nothing| async {
            serde_json::json!({"ok": true})
        }))
        .unwrap();
    tools
        .add(tool_fn("output", "A ready output.", |_: Nothing| async {
            ToolOutput::Json("[1]".to_owned())
        }))
        .unwrap();
    tools
        .add(tool_fn("timed_out", "A tool error.", |_: Nothing| async {
            Err::<String, _>(ToolError::TimedOut {
                after: Duration::from_secs(2),
            })
        }))
        .unwrap();
    tools
        .add(tool_fn("parse", "Any error.", |_: Nothing| async {
            "x".parse::<u32>().map(Json)
        }))
        .unwrap();
    let mut results = Vec::new();
    for (index, name) in ["text", "nothing", "value", "output", "timed_out", "parse"]
        .into_iter()
        .enumerate()
    {
        let result = tools.dispatch(&(), &call(index, name, "{}")).await;
        results.push((result.is_error, result.content));
    }
    let expected = [
        (false, "verbatim"),
        (false, "Done."),
        (false, r#"{"ok":true}"#),
        (false, "[1]"),
        (
            true,
            "Error: the tool did not finish within 2 s and was cancelled",
        ),
        (true, "Error: invalid digit found in string"),
    ];
    let expected: Vec<(bool, String)> = expected
        .into_iter()
        .map(|(is_error, content)| (is_error, content.to_owned()))
        .collect();
    assert_eq!(results, expected);
}

#[tokio::test]
async fn annotations_are_set_by_builder_methods_and_honoured() {
    let slow = tool_fn("slow", "Take a while.", |_: Nothing| async {
        tokio::time::sleep(Duration::from_secs(5)).await;
        "finally"
    })
    .timeout(Duration::from_millis(50))
    .idempotent(true);
    let delete = tool_fn("delete", "Delete everything.", |_: Nothing| async {
        "deleted"
    })
    .destructive(true)
    .requires_approval(true);
    let annotations = &delete.definition().annotations;
    assert_eq!(annotations.destructive, Some(true));
    assert!(annotations.requires_approval);
    assert_eq!(
        slow.definition().annotations.timeout,
        Some(Duration::from_millis(50))
    );
    let model = model_calling([call(0, "slow", "{}"), call(1, "delete", "{}")], "done");
    let agent: Agent = Agent::new(model)
        .try_tool(slow)
        .unwrap()
        .try_tool(delete)
        .unwrap();
    let output = agent.run("clean up").await.unwrap();
    assert_eq!(
        contents(&output),
        [
            (
                true,
                "Error: the tool did not finish within 50 ms and was cancelled"
            ),
            // No approver: a call that needs approval is not run.
            (
                true,
                "Error: the call was not run: this tool needs approval and no one is there to approve it"
            ),
        ]
    );
}

#[test]
fn a_name_no_provider_accepts_or_one_taken_is_rejected_when_added() {
    let mut tools: ToolSet = ToolSet::new();
    let make = |name: &str| tool_fn(name.to_owned(), "A tool.", |_: Nothing| async {});
    assert_eq!(
        tools.add(make("look up")),
        Err(ToolSetError::InvalidName {
            name: "look up".to_owned()
        })
    );
    assert_eq!(
        tools.add(make("")),
        Err(ToolSetError::InvalidName {
            name: String::new()
        })
    );
    tools.add(make("lookup")).unwrap();
    assert_eq!(
        tools.add(make("lookup")),
        Err(ToolSetError::DuplicateName {
            name: "lookup".to_owned()
        })
    );
    assert_eq!(tools.len(), 1);
}

#[derive(Deserialize, JsonSchema)]
struct Settings {
    /// The theme
    theme: String,
    /// Everything else, kept as given
    #[serde(flatten)]
    rest: HashMap<String, serde_json::Value>,
}

#[tokio::test]
async fn a_type_that_takes_extra_fields_keeps_them() {
    let tools = {
        let mut tools: ToolSet = ToolSet::new();
        tools
            .add(tool_fn(
                "configure",
                "Change settings.",
                |settings: Settings| async move {
                    let mut keys: Vec<String> = settings.rest.into_keys().collect();
                    keys.sort();
                    format!("{} + {}", settings.theme, keys.join(","))
                },
            ))
            .unwrap();
        tools
    };
    let result = tools
        .dispatch(
            &(),
            &call(
                0,
                "configure",
                r#"{"theme":"dark","font":"mono","size":12}"#,
            ),
        )
        .await;
    assert_eq!(
        (result.is_error, result.content.as_str()),
        (false, "dark + font,size")
    );
    let missing = tools
        .dispatch(&(), &call(1, "configure", r#"{"font":"mono"}"#))
        .await;
    assert_eq!(
        missing.content,
        "Error: invalid arguments: theme: missing required field"
    );
}

#[tokio::test]
async fn a_closure_taking_any_json_object_takes_every_field() {
    let echo = tool_fn(
        "echo",
        "Echo the arguments.",
        |arguments: serde_json::Value| async move { arguments },
    );
    // Its schema is an object of anything, not one without fields.
    assert_eq!(
        echo.definition().parameters,
        serde_json::json!({"type": "object", "properties": {}})
    );
    let mut tools: ToolSet = ToolSet::new();
    tools.add(echo).unwrap();
    let result = tools
        .dispatch(&(), &call(0, "echo", r#"{"any":{"thing":[1]}}"#))
        .await;
    assert_eq!(
        (result.is_error, result.content.as_str()),
        (false, r#"{"any":{"thing":[1]}}"#)
    );
}

#[tokio::test]
async fn a_field_no_argument_has_is_refused_even_when_every_field_is_given() {
    let search = tool_fn("search", "Search the docs.", |query: Query| async move {
        format!("found {}", query.words)
    });
    let mut tools = ToolSet::new();
    tools.add(search).unwrap();
    let result = tools
        .dispatch(&(), &call(0, "search", r#"{"words":"rain","limt":3}"#))
        .await;
    assert!(result.is_error);
    assert_eq!(
        result.content,
        "Error: invalid arguments: limt: unknown field, expected one of `words`"
    );
    let nested = tools
        .dispatch(&(), &call(1, "search", r#"{"words":"rain"}"#))
        .await;
    assert_eq!(nested.content, "found rain");
}
