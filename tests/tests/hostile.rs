//! A battery of hostile tool calls in one run: every one gets an error result, the run finishes,
//! nothing panics.

use std::time::Duration;

use agent_core::{ToolCall, agent, tool};
use schemars::JsonSchema;
use serde::Deserialize;
use tests::{model_calling, tool_results};

/// One line of an order.
#[derive(Debug, Deserialize, JsonSchema)]
struct Item {
    /// Stock keeping unit
    sku: String,
    /// How many
    qty: u16,
}

/// An order with nested items.
#[derive(Debug, Deserialize, JsonSchema)]
struct Order {
    id: u32,
    items: Vec<Item>,
    note: Option<String>,
}

/// Place an order.
#[tool]
fn place_order(order: Order) -> String {
    let units: u32 = order.items.iter().map(|item| u32::from(item.qty)).sum();
    let skus: Vec<&str> = order.items.iter().map(|item| item.sku.as_str()).collect();
    format!(
        "order {}: {units} units of {skus:?}, note {:?}",
        order.id, order.note
    )
}

/// Never answers.
#[tool]
async fn hang() -> String {
    std::future::pending::<()>().await;
    unreachable!()
}

/// The arguments for `place_order`, with `order` set to this JSON text.
fn order(json: &str) -> String {
    format!(r#"{{"order":{json}}}"#)
}

fn hostile_calls() -> Vec<(String, String)> {
    let deep_array = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let deep_object = format!("{}1{}", r#"{"a":"#.repeat(5_000), "}".repeat(5_000));
    let huge_string = "A".repeat(1_000_000);
    let ten_megabytes = format!(r#"{{"id":1,"items":[{}1]}}"#, "1,".repeat(5 * 1024 * 1024));
    let mut calls: Vec<(String, String)> = [
        // Truncated, malformed or not-quite JSON.
        order(r#"{"id":1,"items":["#),
        r#"{"order":{"id":1,"items":[}]}}"#.to_owned(),
        order(r#"{"id":1,"items":[]} trailing"#),
        format!("\u{feff}{}", order(r#"{"id":1,"items":[]}"#)),
        order(r#"{'id':1,'items':[]}"#),
        order(r#"{"id":1 /* comment */,"items":[]}"#),
        order(r#"{"id":1,"items":[],}"#),
        order(r#"{id:1,items:[]}"#),
        order(r#"{"id":01,"items":[]}"#),
        order(r#"{"id":0x10,"items":[]}"#),
        // Numbers that are not numbers, or not these.
        order(r#"{"id":NaN,"items":[]}"#),
        order(r#"{"id":Infinity,"items":[]}"#),
        order(r#"{"id":1e999,"items":[]}"#),
        order(r#"{"id":-1,"items":[]}"#),
        order(r#"{"id":4294967296,"items":[]}"#),
        order(r#"{"id":1.5,"items":[]}"#),
        order(r#"{"id":1e2,"items":[]}"#),
        order(r#"{"id":1,"items":[{"sku":"x","qty":70000}]}"#),
        // Wrong types and shapes.
        order(r#"{"id":"one","items":[]}"#),
        order(r#"{"id":1,"items":[{"sku":123,"qty":1}]}"#),
        order(r#"{"id":1,"items":{"sku":"x","qty":1}}"#),
        order(r#"{"id":1,"items":[null]}"#),
        order(r#"[1,2]"#),
        r#"[{"id":1,"items":[]}]"#.to_owned(),
        "null".to_owned(),
        r#""just a string""#.to_owned(),
        "true".to_owned(),
        "42".to_owned(),
        "{}".to_owned(),
        "".to_owned(),
        // Missing, null, unknown and duplicate fields.
        order(r#"{"items":[]}"#),
        order(r#"{"id":null,"items":[]}"#),
        r#"{"order":{"id":1,"items":[]},"sudo":1}"#.to_owned(),
        order(r#"{"id":1,"id":2,"items":[]}"#),
        order(r#"{"":1}"#),
        // Bad strings.
        order(r#"{"id":1,"items":[],"note":"\ud800"}"#),
        order(r#"{"id":1,"items":[],"note":"\x41"}"#),
        order("{\"id\":1,\"items\":[],\"note\":\"a\u{1}b\"}"),
        // Deep nesting, huge values, 10 MB of arguments.
        order(&format!(r#"{{"id":1,"items":{deep_array}}}"#)),
        order(&deep_object),
        order(&format!(
            r#"{{"id":1,"items":[{{"sku":"x","qty":"{huge_string}"}}]}}"#
        )),
        order(&ten_megabytes),
    ]
    .into_iter()
    .map(|arguments| ("place_order".to_owned(), arguments))
    .collect();
    // Tool names that are not tools.
    for name in [
        "place_order\u{0}\n",
        "",
        "PLACE_ORDER",
        "place order",
        &"x".repeat(10_000),
        "../etc/passwd",
    ] {
        calls.push((name.to_owned(), order(r#"{"id":1,"items":[]}"#)));
    }
    // A tool that panics and one that never returns.
    calls.push(("explode".to_owned(), r#"{"reason":"hostile"}"#.to_owned()));
    calls.push(("hang".to_owned(), "{}".to_owned()));
    calls
}

/// Always panics. Its own timeout is long: this call is about the panic, and printing a panic's
/// backtrace (`RUST_BACKTRACE=1`) on a loaded machine can take longer than the run's 200 ms.
#[tool(timeout = "30s")]
fn explode(reason: String) -> String {
    panic!("boom: {reason}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_hostile_call_gets_an_error_result_and_the_run_finishes() {
    let hostile = hostile_calls();
    assert!(hostile.len() >= 40, "{} calls", hostile.len());
    let mut calls: Vec<ToolCall> = hostile
        .iter()
        .enumerate()
        .map(|(index, (name, arguments))| ToolCall::new(format!("call_{index}"), name, arguments))
        .collect();
    // The same call id twice.
    calls.push(ToolCall::new("call_0", "place_order", "{"));
    let count = calls.len();
    let model = model_calling(calls.clone(), "I could not place the order.");
    let agent = agent!(model, place_order, explode, hang).tool_timeout(Duration::from_millis(200));

    let output = agent.run("order things").await.expect("the run finishes");

    assert_eq!(output.text, "I could not place the order.");
    assert!(output.is_finished());
    let results = tool_results(&output);
    assert_eq!(results.len(), count);
    for (index, (call, result)) in calls.iter().zip(&results).enumerate() {
        assert_eq!(
            result.tool_call_id, call.id,
            "result {index} answers its call"
        );
        assert!(
            result.is_error,
            "call {index} ({:?} with {} bytes) was accepted: {}",
            call.name.chars().take(40).collect::<String>(),
            call.arguments.len(),
            result.content.chars().take(200).collect::<String>()
        );
        assert!(
            result.content.chars().count() <= 8000 + 100,
            "call {index}: the error text is truncated too"
        );
    }
    // The tools' own failures say what happened.
    let last = &results[count - 3..];
    assert_eq!(last[0].content, "Error: the tool panicked: boom: hostile");
    assert_eq!(
        last[1].content,
        "Error: the tool did not finish within 200 ms and was cancelled"
    );
}

/// Unknown fields are rejected at every depth, inside your own types too: a smuggled `admin` does
/// not slip through as silently ignored (a type that wants extra fields keeps them in a
/// `#[serde(flatten)]` map; see `unknown_fields.rs`).
#[tokio::test]
async fn unknown_fields_inside_a_users_type_are_rejected_with_their_path() {
    let model = model_calling(
        [ToolCall::new(
            "lenient",
            "place_order",
            order(r#"{"id":1,"items":[],"admin":true}"#),
        )],
        "done",
    );
    let output = agent!(model, place_order).run("order").await.unwrap();
    let result = tool_results(&output)[0];
    assert!(result.is_error);
    assert_eq!(
        result.content,
        "Error: invalid arguments: order.admin: unknown field; leave it out or check its spelling against the schema"
    );
}

#[tokio::test]
async fn valid_orders_still_go_through() {
    let model = model_calling(
        [ToolCall::new(
            "ok",
            "place_order",
            order(r#"{"id":1,"items":[{"sku":"x","qty":2}],"note":"雨伞"}"#),
        )],
        "done",
    );
    let output = agent!(model, place_order).run("order").await.unwrap();
    assert_eq!(
        tool_results(&output)[0].content,
        r#"order 1: 2 units of ["x"], note Some("雨伞")"#
    );
}

/// What a typed run asks for in the hostile-output test: the order, under the same `order` key
/// the hostile arguments use.
#[derive(Debug, Deserialize, JsonSchema)]
struct PlacedOrder {
    #[allow(dead_code)]
    order: Order,
}

/// Every hostile argument text, given as a typed run's output (through the final-answer tool and
/// as a native answer's text), is rejected with its raw text kept, and nothing panics.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_hostile_output_is_rejected_as_a_typed_error() {
    use agent_core::testing::ScriptedModel;
    use agent_core::{Agent, AssistantMessage, OutputMode, RunError};

    let outputs: Vec<String> = hostile_calls()
        .into_iter()
        .filter(|(name, _)| name == "place_order")
        .map(|(_, arguments)| arguments)
        .collect();
    assert!(outputs.len() >= 40, "{} outputs", outputs.len());
    for (index, output) in outputs.iter().enumerate() {
        for mode in [OutputMode::Tool, OutputMode::Native] {
            let reply = match mode {
                OutputMode::Tool => AssistantMessage::tool_calls([ToolCall::new(
                    "out",
                    "final_result",
                    output.as_str(),
                )]),
                _ => AssistantMessage::text(output.as_str()),
            };
            let agent = Agent::new(ScriptedModel::new([reply])).output_mode(mode);
            let outcome = agent
                .run("order")
                .output::<PlacedOrder>()
                .output_retries(0)
                .await;
            match outcome {
                Err(RunError::Output { attempts, .. }) => {
                    assert_eq!(attempts.len(), 1, "output {index} in {mode:?}");
                    let raw = &attempts[0].raw;
                    assert!(
                        output.trim().contains(raw.as_str()) || raw.is_empty(),
                        "output {index} in {mode:?}: the raw text is kept"
                    );
                    // What the model is told stays short, however many problems there are.
                    let said = attempts[0].problem.to_string();
                    assert!(
                        !said.is_empty() && said.len() < 4_000,
                        "output {index} in {mode:?}: {} bytes of correction",
                        said.len()
                    );
                }
                // A text answer may have words (or a byte-order mark) around its JSON: valid
                // JSON inside is taken.
                Ok(_) if mode == OutputMode::Native && json_after_words(output) => {}
                other => panic!(
                    "output {index} in {mode:?} ({} bytes) was not rejected: {:?}",
                    output.len(),
                    other.map(|out| out.run.text.chars().take(200).collect::<String>())
                ),
            }
        }
    }
}

/// Whether `text` is a valid JSON object once whatever comes before its first `{` is dropped.
fn json_after_words(text: &str) -> bool {
    text.find('{')
        .is_some_and(|start| serde_json::from_str::<serde_json::Value>(&text[start..]).is_ok())
}
