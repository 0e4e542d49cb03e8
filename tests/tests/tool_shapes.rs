//! Tools of every shape: sync functions (on a blocking thread, or inline), many parameters, a crate
//! that re-exports agent-core, and definitions read without naming a context type.

use std::future::Future;
use std::pin::pin;
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

use agent_core::{Agent, State, StopReason, ToolSet, agent, tool, tools};
use agent_mcp::{McpClient, McpServer, McpTool};
use tests::{call, model_calling, tool_results};

/// Two calls meet here: each waits (up to two seconds) until both are inside the function at once.
#[derive(Clone, Default)]
struct Meeting(Arc<(Mutex<usize>, Condvar)>);

impl Meeting {
    fn arrive(&self) -> bool {
        let (arrived, both) = &*self.0;
        let mut count = arrived.lock().unwrap();
        *count += 1;
        both.notify_all();
        let (count, timeout) = both
            .wait_timeout_while(count, Duration::from_secs(2), |count| *count < 2)
            .unwrap();
        !timeout.timed_out() && *count >= 2
    }
}

/// Waits for the other call to arrive.
#[tool]
fn meet(State(meeting): State<Meeting>) -> &'static str {
    if meeting.arrive() { "met" } else { "alone" }
}

/// Sleeps 400 ms, blocking its thread.
#[tool]
fn sleep_400ms() -> &'static str {
    thread::sleep(Duration::from_millis(400));
    "slept"
}

/// Blocks its thread for a second.
#[tool]
fn stuck() -> &'static str {
    thread::sleep(Duration::from_secs(1));
    "unstuck"
}

/// Panics.
#[tool]
fn explode_sync() -> String {
    panic!("the sync tool blew up")
}

/// Says which thread it runs on.
#[tool]
fn which_thread() -> String {
    format!("{:?}", thread::current().id())
}

/// Says which thread it runs on, run inline.
#[tool(inline)]
fn which_thread_inline() -> String {
    format!("{:?}", thread::current().id())
}

fn contents(output: &agent_core::RunOutput) -> Vec<&str> {
    tool_results(output)
        .iter()
        .map(|result| result.content.as_str())
        .collect()
}

#[tokio::test]
async fn two_calls_of_a_sync_tool_run_at_once() {
    let meeting = Meeting::default();
    let model = model_calling([call(0, "meet", "{}"), call(1, "meet", "{}")], "done");
    let agent = agent!(model, meet).bind_context(meeting);
    let output = agent.run("go").await.unwrap();
    // Each call returns "met" only if the other was inside the function at the same time.
    assert_eq!(contents(&output), ["met", "met"]);
}

const ABANDONED: &str = "Error: the tool did not finish within 100 ms and is no longer waited for; \
                         it may still complete its work, so check before calling it again";

#[tokio::test]
async fn a_sync_tool_past_the_timeout_is_abandoned_and_the_run_goes_on() {
    let model = model_calling(
        [call(0, "sleep_400ms", "{}"), call(1, "sleep_400ms", "{}")],
        "done",
    );
    let agent: Agent = agent!(model, sleep_400ms).tool_timeout(Duration::from_millis(100));
    let started = Instant::now();
    let output = agent.run("go").await.unwrap();
    assert!(
        started.elapsed() < Duration::from_millis(400),
        "the run waited for the sync calls: {:?}",
        started.elapsed()
    );
    assert_eq!(
        contents(&output),
        // Its thread cannot be stopped, so the model is not told it was cancelled.
        [ABANDONED, ABANDONED]
    );
    assert_eq!(output.text, "done");
}

#[tokio::test]
async fn the_time_limit_stops_a_run_stuck_in_a_sync_tool() {
    let model = model_calling([call(0, "stuck", "{}")], "unreachable");
    let agent: Agent = agent!(model, stuck).time_limit(Duration::from_millis(100));
    let started = Instant::now();
    let output = agent.run("go").await.unwrap();
    assert!(started.elapsed() < Duration::from_millis(900));
    assert_eq!(
        output.stop_reason,
        StopReason::TimeLimit {
            limit: Duration::from_millis(100)
        }
    );
}

#[tokio::test]
async fn a_panicking_sync_tool_gives_the_panic_error() {
    let tools: ToolSet = tools!(explode_sync);
    let result = tools.dispatch(&(), &call(0, "explode_sync", "{}")).await;
    assert!(result.is_error);
    assert_eq!(
        result.content,
        "Error: the tool panicked: the sync tool blew up"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_sync_tool_runs_off_the_calling_thread_unless_inline() {
    let here = format!("{:?}", thread::current().id());
    let tools: ToolSet = tools!(which_thread, which_thread_inline);
    let elsewhere = tools.dispatch(&(), &call(0, "which_thread", "{}")).await;
    let inline = tools
        .dispatch(&(), &call(1, "which_thread_inline", "{}"))
        .await;
    assert!(!elsewhere.is_error && !inline.is_error);
    assert!(elsewhere.content.starts_with("ThreadId("));
    assert_ne!(elsewhere.content, here);
    assert_eq!(inline.content, here);
}

/// The smallest executor: polls on this thread and parks until woken. No tokio anywhere.
fn block_on<F: Future>(future: F) -> F::Output {
    struct Unpark(Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(thread::current())));
    let mut context = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut context) {
            return output;
        }
        thread::park();
    }
}

#[test]
fn sync_tools_run_outside_tokio_on_a_thread_of_their_own() {
    let here = format!("{:?}", thread::current().id());
    let tools: ToolSet = tools!(which_thread, explode_sync);
    let elsewhere = block_on(tools.dispatch(&(), &call(0, "which_thread", "{}")));
    assert!(!elsewhere.is_error);
    assert!(elsewhere.content.starts_with("ThreadId("));
    assert_ne!(elsewhere.content, here);
    let panicked = block_on(tools.dispatch(&(), &call(1, "explode_sync", "{}")));
    assert!(panicked.is_error);
    assert_eq!(
        panicked.content,
        "Error: the tool panicked: the sync tool blew up"
    );
}

/// Adds nine numbers: more parameters than clippy's `too_many_arguments` allows, which must not
/// warn in the crate that defines the tool (clippy runs over the tests with `-D warnings`).
#[tool]
#[allow(clippy::many_single_char_names)]
fn add_nine(a: u32, b: u32, c: u32, d: u32, e: u32, f: u32, g: u32, h: u32, i: u32) -> u32 {
    a + b + c + d + e + f + g + h + i
}

#[tokio::test]
async fn a_tool_may_have_nine_parameters() {
    let tools: ToolSet = tools!(add_nine);
    let arguments = r#"{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9}"#;
    let result = tools.dispatch(&(), &call(0, "add_nine", arguments)).await;
    assert_eq!(result.content, "45");
    assert_eq!(add_nine(1, 1, 1, 1, 1, 1, 1, 1, 1), 9);
}

/// A crate that re-exports agent-core and has its users name it instead.
mod framework {
    pub use agent_core as engine;
}

/// Echo the text.
#[tool(crate = "framework::engine")]
fn echo_through_a_reexport(text: String) -> String {
    text
}

/// Shout the text: the path written bare, as rustc's suggestions write it.
#[framework::engine::tool(crate = framework::engine)]
fn shout_through_a_reexport(text: String) -> String {
    text.to_uppercase()
}

#[tokio::test]
async fn the_macros_work_through_a_crate_that_reexports_agent_core() {
    let tools: ToolSet = framework::engine::tools!(
        crate = framework::engine;
        echo_through_a_reexport,
        shout_through_a_reexport
    );
    let result = tools
        .dispatch(&(), &call(0, "echo_through_a_reexport", r#"{"text":"hi"}"#))
        .await;
    assert_eq!(result.content, "hi");
    let result = tools
        .dispatch(
            &(),
            &call(1, "shout_through_a_reexport", r#"{"text":"hi"}"#),
        )
        .await;
    assert_eq!(result.content, "HI");
    let model = model_calling(
        [call(0, "echo_through_a_reexport", r#"{"text":"hi"}"#)],
        "done",
    );
    let agent: Agent =
        framework::engine::agent!(crate = framework::engine; model, echo_through_a_reexport);
    assert_eq!(contents(&agent.run("go").await.unwrap()), ["hi"]);
}

#[derive(Clone)]
struct Db;

/// Find a customer.
#[tool]
fn find_customer(State(_db): State<Db>, id: u32) -> u32 {
    id
}

#[test]
fn a_tools_definition_needs_no_state_type() {
    // `Tool<S>` is implemented for every fitting `S`; the inherent method needs none named.
    let definition = find_customer {}.definition();
    assert_eq!(definition.name, "find_customer");
    assert_eq!(definition.description, "Find a customer.");
    assert_eq!(meet {}.definition().name, meet::NAME);
}

#[tokio::test]
async fn an_mcp_tools_definition_needs_no_state_type() {
    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(server_end);
    tokio::spawn(McpServer::new(tools!(add_nine)).serve_io(read, write));
    let (read, write) = tokio::io::split(client_end);
    let client = McpClient::connect_io(read, write).await.unwrap();
    let tool: McpTool = client.tools().await.unwrap().remove(0);
    assert_eq!(tool.definition().name, "add_nine");
    assert_eq!(
        tool.definition().parameters["required"],
        serde_json::json!(["a", "b", "c", "d", "e", "f", "g", "h", "i"])
    );
}

/// Parse a number, failing with an error type that is not `Send`.
#[tool]
fn parse_number(
    /// The text to parse
    text: String,
) -> Result<String, Box<dyn std::error::Error>> {
    let number: i64 = text.trim().parse()?;
    Ok(format!("{number}"))
}

#[tokio::test]
async fn a_sync_tool_may_return_a_value_that_is_not_send() {
    let tools: ToolSet = tools!(parse_number);
    let parsed = tools
        .dispatch(&(), &call(0, "parse_number", r#"{"text":" 42 "}"#))
        .await;
    assert_eq!((parsed.is_error, parsed.content.as_str()), (false, "42"));
    let failed = tools
        .dispatch(&(), &call(1, "parse_number", r#"{"text":"forty-two"}"#))
        .await;
    assert_eq!(
        (failed.is_error, failed.content.as_str()),
        (true, "Error: invalid digit found in string")
    );
}

/// Add two numbers, each with a default (their names once made the defaults' helpers collide).
#[tool]
fn add_with_defaults(
    /// The first number
    #[arg(default = 1)]
    x: u32,
    /// The second number
    #[arg(default)]
    value_x: u32,
) -> String {
    format!("{}", x + value_x)
}

#[tokio::test]
async fn defaults_fill_what_the_model_leaves_out() {
    let tools: ToolSet = tools!(add_with_defaults);
    let both = tools
        .dispatch(&(), &call(0, "add_with_defaults", "{}"))
        .await;
    assert_eq!(both.content, "1");
    let one = tools
        .dispatch(&(), &call(1, "add_with_defaults", r#"{"value_x":5}"#))
        .await;
    assert_eq!(one.content, "6");
    let schema = &add_with_defaults {}.definition().parameters;
    assert_eq!(schema["properties"]["x"]["default"], 1);
    assert_eq!(schema["properties"]["value_x"]["default"], 0);
}
