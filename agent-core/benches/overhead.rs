//! The framework's own cost per tool call and per step, next to the floor: `serde_json` parsing the
//! same arguments and serializing the same result, which no dispatch can beat.
//!
//! `cargo bench -p agent-core --bench overhead`. Every future here but one completes without waiting,
//! so it is polled once (`now_or_never`) and no runtime's cost is measured; the exception is
//! `dispatch_sync_tool`, whose call hops to tokio's blocking pool and back.

mod common;
// The bench's own module, beside it (`benches/` holds one file per bench).
#[path = "overhead/floors.rs"]
mod floors;

use std::future::IntoFuture;
use std::time::Duration;

use agent_core::{Agent, RunOutput, ToolCall, ToolSet, agent, tool};
use common::{ARGUMENTS, TurnsModel, Weather, get_weather, weather_in};
use divan::{Bencher, black_box};
use floors::{floor_call, floor_loop, same_transcript, structured};
use futures_util::FutureExt;

fn main() {
    divan::main();
}

/// The arguments `get_weather` parses, as a plain serde struct: what the floor deserializes.
#[derive(serde::Deserialize)]
struct WeatherArgs {
    city: String,
}

fn tools() -> ToolSet {
    let mut tools = ToolSet::new();
    tools.add(get_weather {}).expect("one tool");
    tools
}

fn dispatch(bencher: Bencher, name: &str, arguments: &str, expect_error: bool) {
    let tools = tools();
    let call = ToolCall::new("call_1", name, arguments);
    bencher.bench_local(|| {
        let result = tools
            .dispatch(&(), black_box(&call))
            .now_or_never()
            .expect("ready");
        debug_assert_eq!(result.is_error, expect_error);
        result
    });
}

/// The floor: parse the arguments into the same struct, serialize the same result.
#[divan::bench]
fn floor_serde(bencher: Bencher) {
    bencher.bench_local(|| {
        let args: WeatherArgs = serde_json::from_str(black_box(ARGUMENTS)).expect("valid");
        let weather = Weather {
            city: args.city,
            weather: "小雨",
            temp: 18,
        };
        serde_json::to_string(&weather).expect("serializable")
    });
}

#[divan::bench]
fn dispatch_ok(bencher: Bencher) {
    dispatch(bencher, "get_weather", ARGUMENTS, false);
}

/// `get_weather` as a sync function, which runs on a blocking thread.
#[tool]
fn get_weather_sync(
    /// City name
    city: String,
) -> Weather {
    weather_in(city)
}

/// A sync tool's call: the same work as `dispatch_ok` plus the hop to tokio's blocking pool and
/// back, on a current-thread runtime.
#[divan::bench]
fn dispatch_sync_tool(bencher: Bencher) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let mut tools = ToolSet::new();
    tools.add(get_weather_sync {}).expect("one tool");
    let call = ToolCall::new("call_1", "get_weather_sync", ARGUMENTS);
    bencher.bench_local(|| {
        let result = runtime.block_on(tools.dispatch(&(), black_box(&call)));
        debug_assert!(!result.is_error);
        result
    });
}

/// A stop on a route: a nested struct, where the parser must look for fields serde would ignore.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Stop {
    /// City name
    city: String,
    /// Nights to stay
    nights: u8,
}

/// Plan a route.
#[tool]
async fn plan_route(
    /// The stops, in order
    stops: Vec<Stop>,
) -> String {
    route(&stops)
}

fn route(stops: &[Stop]) -> String {
    let nights: u32 = stops.iter().map(|stop| u32::from(stop.nights)).sum();
    let first = stops.first().map_or("nowhere", |stop| stop.city.as_str());
    format!("{} stops from {first}, {nights} nights", stops.len())
}

const NESTED_ARGUMENTS: &str = r#"{"stops":[{"city":"北京","nights":2},{"city":"上海","nights":1},{"city":"西安","nights":3}]}"#;

/// The arguments `plan_route` parses, as a plain serde struct.
#[derive(serde::Deserialize)]
struct RouteArgs {
    stops: Vec<Stop>,
}

/// The floor for nested arguments: parse them, make the same text.
#[divan::bench]
fn floor_serde_nested(bencher: Bencher) {
    bencher.bench_local(|| {
        let args: RouteArgs = serde_json::from_str(black_box(NESTED_ARGUMENTS)).expect("valid");
        route(&args.stops)
    });
}

/// Nested arguments, checked for unknown fields at every depth.
#[divan::bench]
fn dispatch_nested_ok(bencher: Bencher) {
    let mut tools = ToolSet::new();
    tools.add(plan_route {}).expect("one tool");
    let call = ToolCall::new("call_1", "plan_route", NESTED_ARGUMENTS);
    bencher.bench_local(|| {
        let result = tools
            .dispatch(&(), black_box(&call))
            .now_or_never()
            .expect("ready");
        debug_assert!(!result.is_error, "{}", result.content);
        result
    });
}

#[divan::bench]
fn dispatch_invalid_args(bencher: Bencher) {
    dispatch(bencher, "get_weather", r#"{"city":42}"#, true);
}

#[divan::bench]
fn dispatch_bad_json(bencher: Bencher) {
    dispatch(bencher, "get_weather", r#"{"city":"#, true);
}

#[divan::bench]
fn dispatch_unknown_tool(bencher: Bencher) {
    dispatch(bencher, "get_wether", ARGUMENTS, true);
}

/// The floor of `dispatch_unknown_tool`: the name found in no definition and the model told so in
/// the dispatcher's own words, written into one `String` (`floor_call`); checked before timing to
/// give the dispatcher's answer.
#[divan::bench]
fn floor_dispatch_unknown_tool(bencher: Bencher) {
    let tools = tools();
    let definitions = tools.definitions().to_vec();
    let call = ToolCall::new("call_1", "get_wether", ARGUMENTS);
    let dispatched = tools.dispatch(&(), &call).now_or_never().expect("ready");
    assert_eq!(floor_call(&call, &definitions), dispatched);
    bencher.bench_local(|| floor_call(black_box(&call), &definitions));
}

/// The instant model of a run of `turns` model calls: tool calls until the last, which answers.
fn instant_model(turns: usize) -> TurnsModel {
    TurnsModel {
        turns,
        latency: Duration::ZERO,
    }
}

fn agent_with_turns(turns: usize) -> Agent {
    agent!(instant_model(turns), get_weather).max_steps(turns)
}

/// What a floor is handed of `agent`: its system prompt and its tools' definitions, owned, so that
/// the floor borrows nothing of the agent it is checked against.
fn floor_inputs(agent: &Agent) -> (String, Vec<agent_core::ToolDef>) {
    (
        agent.system_prompt().to_owned(),
        agent.tools().definitions().to_vec(),
    )
}

/// Runs to the end and hands back the output: like every case here, the result is in hand and its
/// drop is left to divan, outside the timing.
fn run_to_the_end(agent: &Agent, turns: usize) -> RunOutput {
    let output = agent
        .run("Umbrella?")
        .into_future()
        .now_or_never()
        .expect("ready")
        .expect("runs");
    debug_assert_eq!(output.steps, turns);
    debug_assert!(output.is_finished());
    output
}

/// The floor of a 10-step run: what any loop must do with this model and this tool, written
/// inline with nothing else: a conversation of the same system prompt and input, ten calls of the
/// same model through the `Model` trait (its reply, its boxed future), nine calls' arguments parsed
/// and results serialized as in `floor_serde`, each reply and result kept in the transcript, the
/// answer's text and the transcript in hand at the end. No lookup, no limits, no spans, no hooks,
/// no panic guard, no time limit, no usage: the figure `loop_10_steps` is measured against.
#[divan::bench]
fn floor_loop_10_steps(bencher: Bencher) {
    floor_loops(bencher, 10);
}

/// `floor_loop_10_steps` for a run that answers at once: the floor of `run1_text`.
#[divan::bench]
fn floor_run1_text(bencher: Bencher) {
    floor_loops(bencher, 1);
}

/// Times `floor_loop` for runs of `turns` model calls.
fn floor_loops(bencher: Bencher, turns: usize) {
    let model = instant_model(turns);
    let agent = agent_with_turns(turns);
    let (system_prompt, definitions) = floor_inputs(&agent);
    same_transcript(
        run_to_the_end(&agent, turns),
        floor_loop(&model, &system_prompt, &definitions),
    );
    bencher.bench_local(|| floor_loop(&model, &system_prompt, &definitions));
}

/// The floors of `run1_text` and `loop_10_steps` built as a run is: `floor_loop`'s work in an
/// async layer for the run, one for each step and one for each model call, keeping the per-step
/// usage and handing back a `RunOutput`; nothing else (no limits, spans, hooks, settings, typed
/// output, streaming or journal). Next to `floor_loop` it shows what building a loop in layers
/// costs whoever writes it; the runs next to it show what the features cost beyond that.
#[divan::bench(args = [1, 10])]
fn floor_structured(bencher: Bencher, turns: usize) {
    let model = instant_model(turns);
    let agent = agent_with_turns(turns);
    let (system_prompt, definitions) = floor_inputs(&agent);
    assert_eq!(
        structured::run(&model, &system_prompt, &definitions),
        run_to_the_end(&agent, turns)
    );
    bencher.bench_local(|| structured::run(&model, &system_prompt, &definitions));
}

/// `floor_run2_unknown_tool` built as a run is, as `floor_structured` builds the others: the floor
/// a run with the run's layers has on the unknown-tool scenario.
#[divan::bench]
fn floor_structured_unknown_tool(bencher: Bencher) {
    let agent = agent!(UnknownToolModel, get_weather);
    let (system_prompt, definitions) = floor_inputs(&agent);
    assert_eq!(
        structured::run(&UnknownToolModel, &system_prompt, &definitions),
        run_to_the_end(&agent, 2)
    );
    bencher.bench_local(|| structured::run(&UnknownToolModel, &system_prompt, &definitions));
}

/// A whole run: 9 turns asking for `get_weather`, an answer on the 10th.
#[divan::bench]
fn loop_10_steps(bencher: Bencher) {
    let agent = agent_with_turns(10);
    bencher.bench_local(|| run_to_the_end(&agent, 10));
}

/// A run of two steps (a tool call, then the answer as text): what `run2_typed` compares with.
#[divan::bench]
fn run2_text(bencher: Bencher) {
    let agent = agent_with_turns(2);
    bencher.bench_local(|| run_to_the_end(&agent, 2));
}

/// A typed run's answer (`common::ADVICE`): whether to take an umbrella.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Advice {
    /// Where.
    city: String,
    /// Whether to take one.
    umbrella: bool,
}

/// The same two steps in a typed run: the answer comes through the final-answer tool (a tool call
/// the model makes and the run answers, where `run2_text` has a text) and is read into a struct.
#[divan::bench]
fn run2_typed(bencher: Bencher) {
    typed_runs(bencher, agent_with_turns(2));
}

/// The typed run in native mode: the answer is the reply's text, as in `run2_text`, so the model
/// does the same work and the difference is the typed run's own. Target: at most 1.3x `run2_text`.
#[divan::bench]
fn run2_typed_native(bencher: Bencher) {
    typed_runs(
        bencher,
        agent_with_turns(2).output_mode(agent_core::OutputMode::Native),
    );
}

/// Times two-step typed runs of `agent`, each in hand at the end.
fn typed_runs(bencher: Bencher, agent: Agent) {
    bencher.bench_local(|| {
        let output = agent
            .run("Umbrella?")
            .output::<Advice>()
            .into_future()
            .now_or_never()
            .expect("ready")
            .expect("runs");
        debug_assert!(output.value.umbrella && output.value.city == "北京");
        output
    });
}

/// The same run, longer: the time per step (the throughput divan prints) must stay flat.
#[divan::bench(args = [10, 100, 1000])]
fn loop_steps_scaling(bencher: Bencher, steps: usize) {
    let agent = agent_with_turns(steps);
    bencher
        .counter(divan::counter::ItemsCount::new(steps))
        .bench_local(|| run_to_the_end(&agent, steps));
}

/// `run2_text` through the run builder (`run_with(&(), ..)`), whose future is boxed (`IntoFuture`
/// needs a type to name): what a run with options, and every typed run, pays for the box.
#[divan::bench]
fn run2_text_builder(bencher: Bencher) {
    let agent = agent_with_turns(2);
    bencher.bench_local(|| {
        agent
            .run("Umbrella?")
            .into_future()
            .now_or_never()
            .expect("ready")
            .expect("runs")
    });
}

/// The fixed cost of a run: a model that answers at once, no tool called. Target (issue 17): at
/// most 2x `floor_serde`.
#[divan::bench]
fn run1_text(bencher: Bencher) {
    let agent = agent_with_turns(1);
    bencher.bench_local(|| run_to_the_end(&agent, 1));
}

/// Calls a tool that does not exist once, then answers: `run2_text` with the dispatcher's
/// unknown-tool path instead of a tool run.
struct UnknownToolModel;

impl agent_core::Model for UnknownToolModel {
    fn chat<'a>(
        &'a self,
        request: agent_core::ChatRequest<'a>,
    ) -> agent_core::BoxFuture<'a, Result<agent_core::ChatResponse, agent_core::ModelError>> {
        let reply = if request.messages.len() <= 2 {
            agent_core::AssistantMessage::tool_calls([ToolCall::new(
                "call",
                "get_wether",
                ARGUMENTS,
            )])
        } else {
            agent_core::AssistantMessage::text("Take an umbrella.")
        };
        Box::pin(std::future::ready(Ok(agent_core::ChatResponse::new(reply))))
    }
}

/// A two-step run whose tool call names a tool that does not exist.
#[divan::bench]
fn run2_unknown_tool(bencher: Bencher) {
    let agent = agent!(UnknownToolModel, get_weather);
    bencher.bench_local(|| run_to_the_end(&agent, 2));
}

/// The floor of `run2_unknown_tool`: `floor_loop` with the same model, whose first call names a
/// tool that does not exist and gets the run's text for it.
#[divan::bench]
fn floor_run2_unknown_tool(bencher: Bencher) {
    let agent = agent!(UnknownToolModel, get_weather);
    let (system_prompt, definitions) = floor_inputs(&agent);
    same_transcript(
        run_to_the_end(&agent, 2),
        floor_loop(&UnknownToolModel, &system_prompt, &definitions),
    );
    bencher.bench_local(|| floor_loop(&UnknownToolModel, &system_prompt, &definitions));
}

/// `loop_10_steps` streamed: every event through the run's queue and out of the stream. Target
/// (issue 17): at most 1.3x `loop_10_steps`.
#[divan::bench]
fn loop_10_steps_stream(bencher: Bencher) {
    let agent = agent_with_turns(10);
    bencher.bench_local(|| {
        let last = consume(agent.run("Umbrella?").stream());
        debug_assert!(matches!(last, Some(agent_core::RunEvent::Finished(Ok(_)))));
        last
    });
}

/// How both streamed benches take a 10-step run's events: each is handled and dropped as the next
/// comes, as a front end does, and the last (the run's end) is kept. (Collecting them all into a
/// `Vec` measured the `Vec`'s growth as much as the stream.)
fn consume<S: futures_util::Stream + Unpin>(mut stream: S) -> Option<S::Item> {
    use futures_util::StreamExt;

    let mut events = 0_usize;
    let mut last = None;
    while let Some(event) = stream.next().now_or_never().expect("ready") {
        events += 1;
        last = Some(event);
    }
    debug_assert!(events > 40);
    last
}

/// The floor of `loop_10_steps_stream`: the loop of `floor_loop` written by hand as a stream (no
/// async, no queue shared with a run), taken by the same consumer loop. Each step asks the model
/// through `Model::chat_stream`, the trait's way to stream (this model takes the trait's default,
/// which streams its plain reply: a loop cannot know a model does not stream natively), reads it
/// to its end, and makes the step's events as the stream promises them, owned copies (a start and
/// an end, the text, each call, each result); they are handed out one per `poll_next` before the
/// next step begins.
#[divan::bench]
fn floor_loop_10_steps_stream(bencher: Bencher) {
    let model = instant_model(10);
    let agent = agent_with_turns(10);
    let (system_prompt, definitions) = floor_inputs(&agent);
    // The floor makes the events a streamed run makes, in the same order.
    assert_eq!(
        events_before_the_end(FloorStream::new(&model, &system_prompt, &definitions)),
        events_before_the_end(agent.run("Umbrella?").stream())
    );
    bencher.bench_local(|| consume(FloorStream::new(&model, &system_prompt, &definitions)));
}

/// A streamed run's events as their `Debug` text, all but its end (whose type differs between a
/// run and its floor: the floor's is its text and transcript).
fn events_before_the_end(stream: impl futures_util::Stream<Item: std::fmt::Debug>) -> Vec<String> {
    use futures_util::StreamExt;

    let events = stream
        .map(|event| format!("{event:?}"))
        .collect::<Vec<_>>()
        .now_or_never()
        .expect("ready");
    events
        .into_iter()
        .take_while(|event| !event.starts_with("Finished"))
        .collect()
}

/// The events of `floor_loop_10_steps_stream`: a run's, ending with its text and transcript.
type FloorEvent = agent_core::RunEvent<(String, Vec<agent_core::Message>)>;

/// The stream of `floor_loop_10_steps_stream`.
struct FloorStream<'a> {
    model: &'a TurnsModel,
    definitions: &'a [agent_core::ToolDef],
    messages: Vec<agent_core::Message>,
    step: usize,
    /// The step's events, not yet handed out.
    ready: std::collections::VecDeque<FloorEvent>,
    /// The run's end, once the model has answered.
    finished: Option<FloorEvent>,
}

impl<'a> FloorStream<'a> {
    fn new(
        model: &'a TurnsModel,
        system_prompt: &str,
        definitions: &'a [agent_core::ToolDef],
    ) -> Self {
        use agent_core::Message;

        let mut messages = Vec::with_capacity(6);
        messages.push(Message::system(system_prompt));
        messages.push(Message::user(black_box("Umbrella?")));
        FloorStream {
            model,
            definitions,
            messages,
            step: 0,
            ready: std::collections::VecDeque::with_capacity(8),
            finished: None,
        }
    }

    /// Runs the next step, its events into `ready`.
    #[inline(never)]
    fn step(&mut self, context: &mut std::task::Context<'_>) {
        use agent_core::{ChatRequest, Message, Model, RunEvent, StreamEvent};

        self.step += 1;
        let step = self.step;
        self.ready.push_back(RunEvent::StepStarted { step });
        let request = ChatRequest::new(&self.messages, self.definitions);
        let mut replies = self.model.chat_stream(request);
        let response = loop {
            match replies.as_mut().poll_next(context) {
                std::task::Poll::Ready(Some(Ok(StreamEvent::TextDelta(text)))) => {
                    self.ready.push_back(RunEvent::TextDelta(text));
                }
                std::task::Poll::Ready(Some(Ok(StreamEvent::Finished(response)))) => {
                    break response;
                }
                std::task::Poll::Ready(Some(Ok(_))) => {}
                _ => unreachable!("the model answers at once"),
            }
        };
        drop(replies);
        let usage = response.usage;
        let reply = response.message;
        if reply.tool_calls.is_empty() {
            let text = reply.content.clone();
            self.messages.push(Message::Assistant(reply));
            self.ready.push_back(RunEvent::StepFinished {
                step,
                usage,
                model: None,
            });
            let messages = std::mem::take(&mut self.messages);
            self.finished = Some(RunEvent::Finished(Ok((text, messages))));
            return;
        }
        for call in &reply.tool_calls {
            self.ready
                .push_back(RunEvent::ToolCallRequested(call.clone()));
        }
        let results: Vec<_> = reply
            .tool_calls
            .iter()
            .map(|call| floor_call(call, self.definitions))
            .collect();
        self.messages.push(Message::Assistant(reply));
        for result in results {
            self.ready.push_back(RunEvent::ToolResult(result.clone()));
            self.messages.push(Message::Tool(result));
        }
        self.ready.push_back(RunEvent::StepFinished {
            step,
            usage,
            model: None,
        });
    }
}

impl futures_util::Stream for FloorStream<'_> {
    type Item = FloorEvent;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        context: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<FloorEvent>> {
        let this = &mut *self;
        // The transcript goes out with the end: once it is empty, the run is over.
        if this.ready.is_empty() && this.finished.is_none() && !this.messages.is_empty() {
            this.step(context);
        }
        std::task::Poll::Ready(this.ready.pop_front().or_else(|| this.finished.take()))
    }
}
