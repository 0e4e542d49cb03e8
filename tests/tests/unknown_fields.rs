//! A field the parameters do not have is an error the model sees, at any depth, with its path;
//! serde would otherwise drop it, and a misspelt `agee` would quietly become `age: None`.

use std::collections::HashMap;

use agent_core::{ToolCall, ToolSet, tool, tools};
use schemars::JsonSchema;
use serde::Deserialize;

/// A person.
#[derive(Debug, Deserialize, JsonSchema)]
struct Person {
    /// Their name
    name: String,
    /// Their age, when known
    age: Option<u32>,
}

/// Greet people.
#[tool]
fn greet(
    /// Who to greet first
    who: Person,
    /// Who else, if anyone
    others: Option<Vec<Person>>,
) -> String {
    let mut names = vec![format!("{}:{:?}", who.name, who.age)];
    for person in others.unwrap_or_default() {
        names.push(format!("{}:{:?}", person.name, person.age));
    }
    names.join(",")
}

/// A setting that keeps whatever else it is given: it opts in to extra fields.
#[derive(Debug, Deserialize, JsonSchema)]
struct Open {
    /// The setting's name
    name: String,
    /// Everything else
    #[serde(flatten)]
    extra: HashMap<String, serde_json::Value>,
}

/// Store a setting.
#[tool]
fn store(
    /// The setting
    setting: Open,
) -> String {
    let mut keys: Vec<&String> = setting.extra.keys().collect();
    keys.sort();
    format!("{} {keys:?}", setting.name)
}

async fn result(arguments: &str, tool: &str) -> (String, bool) {
    let tools: ToolSet = tools!(greet, store);
    let result = tools
        .dispatch(&(), &ToolCall::new("1", tool, arguments))
        .await;
    (result.content, result.is_error)
}

#[tokio::test]
async fn a_misspelt_nested_field_is_an_error_with_its_path() {
    assert_eq!(
        result(r#"{"who":{"name":"Ann","agee":30}}"#, "greet").await,
        (
            "Error: invalid arguments: who.agee: unknown field; leave it out or check its spelling against the schema"
                .to_owned(),
            true
        )
    );
}

#[tokio::test]
async fn unknown_fields_inside_lists_and_options_are_all_reported() {
    let (content, is_error) = result(
        r#"{"who":{"name":"Ann"},"others":[{"name":"Bo"},{"name":"Cy","nick":"C","agee":3}]}"#,
        "greet",
    )
    .await;
    assert!(is_error);
    assert_eq!(
        content,
        "Error: invalid arguments: others.1.nick: unknown field; leave it out or check its spelling against the schema; \
         others.1.agee: unknown field; leave it out or check its spelling against the schema"
    );
}

#[tokio::test]
async fn an_unknown_nested_field_is_reported_beside_other_mistakes() {
    let (content, is_error) = result(
        r#"{"who":{"name":"Ann","agee":30},"others":[{"age":1}]}"#,
        "greet",
    )
    .await;
    assert!(is_error);
    assert_eq!(
        content,
        "Error: invalid arguments: who.agee: unknown field; leave it out or check its spelling against the schema; \
         others.0.name: missing required field"
    );
}

#[tokio::test]
async fn an_unknown_nested_field_is_found_when_null_stands_for_a_left_out_option() {
    let (content, is_error) =
        result(r#"{"who":{"name":"Ann","agee":30},"others":null}"#, "greet").await;
    assert!(is_error);
    assert_eq!(
        content,
        "Error: invalid arguments: who.agee: unknown field; leave it out or check its spelling against the schema"
    );
}

#[tokio::test]
async fn fitting_arguments_still_parse() {
    assert_eq!(
        result(
            r#"{"who":{"name":"Ann","age":30},"others":[{"name":"Bo"}]}"#,
            "greet"
        )
        .await,
        ("Ann:Some(30),Bo:None".to_owned(), false)
    );
}

#[tokio::test]
async fn a_type_that_keeps_extra_fields_gets_them() {
    assert_eq!(
        result(
            r#"{"setting":{"name":"theme","colour":"blue","size":3}}"#,
            "store"
        )
        .await,
        (r#"theme ["colour", "size"]"#.to_owned(), false)
    );
}

/// A room to book.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Room {
    guests: u8,
    /// Nights; one when left out
    #[serde(default = "one")]
    nights: u8,
    /// A wish, if any
    wish: Option<String>,
}

fn one() -> u8 {
    1
}

/// Book a room.
#[agent_core::tool]
fn book(room: Room) -> String {
    format!(
        "{} guests, {} nights, {:?}",
        room.guests, room.nights, room.wish
    )
}

/// OpenAI's strict mode makes optional fields nullable at every depth; `null` inside a struct is
/// read as "left out" as it is at the top.
#[tokio::test]
async fn null_for_an_optional_field_deep_inside_means_left_out() {
    let mut tools = agent_core::ToolSet::new();
    tools.add(book {}).unwrap();
    let result = tools
        .dispatch(
            &(),
            &tests::call(
                0,
                "book",
                r#"{"room":{"guests":2,"nights":null,"wish":null}}"#,
            ),
        )
        .await;
    assert!(!result.is_error, "{}", result.content);
    assert_eq!(result.content, "2 guests, 1 nights, None");
    // A required field's `null` is still the model's mistake.
    let result = tools
        .dispatch(&(), &tests::call(1, "book", r#"{"room":{"guests":null}}"#))
        .await;
    assert!(result.is_error);
    assert!(result.content.contains("room.guests"), "{}", result.content);
}

/// Where to look.
#[derive(Debug, Deserialize, JsonSchema)]
struct Filter {
    /// The city
    city: String,
}

/// Find places.
#[tool]
fn find(
    /// What to look for
    what: String,
    /// Where, if anywhere
    filter: Option<Filter>,
) -> String {
    format!("{what} {:?}", filter.map(|filter| filter.city))
}

/// A misspelt field inside an optional struct: both problems are named, the unknown field and the
/// field it leaves missing, as a closure tool and a typed output name them.
#[tokio::test]
async fn a_misspelt_field_inside_an_optional_struct_is_named() {
    let tools: ToolSet = tools!(find);
    let call = ToolCall::new("1", "find", r#"{"what":"cafe","filter":{"cty":"Paris"}}"#);
    let result = tools.dispatch(&(), &call).await;
    assert!(result.is_error);
    assert_eq!(
        result.content,
        "Error: invalid arguments: filter.city: missing required field; filter.cty: unknown \
         field, expected one of `city`"
    );
    let fine = ToolCall::new("2", "find", r#"{"what":"cafe","filter":{"city":"Paris"}}"#);
    assert_eq!(
        tools.dispatch(&(), &fine).await.content,
        r#"cafe Some("Paris")"#
    );
}
