//! The agent loop: history order, what the model is sent, limits, concurrency, state, errors.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_core::testing::ScriptedModel;
use agent_core::{
    AddToolError, Agent, AssistantMessage, BoxFuture, ChatResponse, FinishReason, FromRef, Message,
    Model, ModelError, RunError, State, StopReason, Tool, ToolCall, ToolDef, ToolError, ToolOutput,
    ToolResultMessage, ToolSetError, Usage, agent, tool,
};
use tests::{call, get_weather, model_calling, now, tool_results};
use tokio::sync::Barrier;

#[tokio::test]
async fn the_history_is_system_user_reply_then_results_in_call_order() {
    let model = model_calling(
        [
            call(0, "get_weather", r#"{"city":"北京"}"#),
            call(1, "now", ""),
        ],
        "Take an umbrella.",
    );
    let agent = agent!(model.clone(), get_weather, now).system("Be brief.");
    let output = agent.run("Umbrella in Beijing?").await.unwrap();

    assert_eq!(output.text, "Take an umbrella.");
    assert_eq!(output.steps, 2);
    assert_eq!(output.stop_reason, StopReason::Finished);
    assert!(output.is_finished());
    let expected = vec![
        Message::system("Be brief."),
        Message::user("Umbrella in Beijing?"),
        Message::Assistant(AssistantMessage::tool_calls([
            call(0, "get_weather", r#"{"city":"北京"}"#),
            call(1, "now", ""),
        ])),
        Message::Tool(ToolResultMessage::new(
            "call_0",
            r#"{"city":"北京","weather":"小雨","temp":18}"#,
        )),
        Message::Tool(ToolResultMessage::new("call_1", "12:00")),
        Message::Assistant(AssistantMessage::text("Take an umbrella.")),
    ];
    assert_eq!(output.messages, expected);

    // The model saw the whole history each time, and every tool each time.
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].messages, expected[..2]);
    assert_eq!(requests[1].messages, expected[..5]);
    let names: Vec<&str> = requests[1]
        .tools
        .iter()
        .map(|def| def.name.as_str())
        .collect();
    assert_eq!(names, ["get_weather", "now"]);
}

#[tokio::test]
async fn the_default_system_prompt_comes_from_the_texts() {
    let model = ScriptedModel::new([AssistantMessage::text("hi")]);
    let output = Agent::new(model).run("hello").await.unwrap();
    assert!(
        output.messages[0]
            .content()
            .starts_with("You are a helpful assistant that can use tools.")
    );
    assert!(
        output.messages[0]
            .content()
            .contains("Never make up results.")
    );
}

#[tokio::test]
async fn the_step_limit_is_a_typed_outcome_with_the_transcript() {
    let replies = (0..20).map(|index| AssistantMessage::tool_calls([call(index, "now", "{}")]));
    let model = ScriptedModel::new(replies);
    let output = agent!(model.clone(), now)
        .run("loop forever")
        .await
        .unwrap();
    assert_eq!(output.stop_reason, StopReason::StepLimit { limit: 10 });
    assert!(!output.is_finished());
    assert_eq!(output.steps, 10);
    assert_eq!(model.requests().len(), 10);
    assert_eq!(
        output.text,
        "Stopped after 10 steps without finishing; try narrowing the question."
    );
    // system + user + 10 × (reply + result)
    assert_eq!(output.messages.len(), 22);
    assert!(matches!(output.messages.last(), Some(Message::Tool(_))));

    let model = ScriptedModel::new(
        (0..5).map(|index| AssistantMessage::tool_calls([call(index, "now", "{}")])),
    );
    let output = agent!(model, now).max_steps(3).run("loop").await.unwrap();
    assert_eq!(output.stop_reason, StopReason::StepLimit { limit: 3 });
    assert_eq!(output.steps, 3);
}

#[tokio::test]
async fn a_model_error_ends_the_run_with_that_error_and_the_history() {
    let model = ScriptedModel::new([AssistantMessage::tool_calls([call(0, "now", "{}")])]);
    let error = agent!(model, now).run("what time is it").await.unwrap_err();
    let RunError::Model {
        step,
        source,
        messages,
        ..
    } = &error
    else {
        panic!("expected a model error, got {error:?}")
    };
    assert_eq!(*step, 2);
    assert_eq!(
        source.downcast_ref::<agent_core::testing::ScriptExhausted>(),
        Some(&agent_core::testing::ScriptExhausted {
            request: 2,
            scripted: 1
        }),
        "{source:?}"
    );
    assert_eq!(messages.len(), 4, "system, user, reply, result");
    assert_eq!(
        error.to_string(),
        "the model failed at step 2: the scripted model has run out: it was asked for reply 2 but was given only 1"
    );
    assert_eq!(error.messages().len(), 4);
}

/// Waits until `parties` calls are inside at once, so it only finishes when calls run concurrently.
#[tool]
async fn rendezvous(State(barrier): State<Arc<Barrier>>, name: String) -> String {
    barrier.wait().await;
    name
}

#[tokio::test]
async fn calls_of_one_reply_run_concurrently() {
    let model = model_calling(
        [
            call(0, "rendezvous", r#"{"name":"a"}"#),
            call(1, "rendezvous", r#"{"name":"b"}"#),
            call(2, "rendezvous", r#"{"name":"c"}"#),
        ],
        "met",
    );
    let agent = agent!(model, rendezvous).bind_context(Arc::new(Barrier::new(3)));
    let output = tokio::time::timeout(Duration::from_secs(5), agent.run("meet"))
        .await
        .expect("three calls waiting for each other finish only if they run at once")
        .unwrap();
    let results: Vec<&str> = tool_results(&output)
        .iter()
        .map(|result| result.content.as_str())
        .collect();
    assert_eq!(results, ["a", "b", "c"]);
}

#[derive(Clone, Default)]
struct Timeline {
    finished: Arc<Mutex<Vec<String>>>,
    running: Arc<AtomicUsize>,
    most_at_once: Arc<AtomicUsize>,
}

/// Sleeps, then reports its name.
#[tool]
async fn sleepy(State(timeline): State<Timeline>, name: String, millis: u64) -> String {
    let now_running = timeline.running.fetch_add(1, Ordering::SeqCst) + 1;
    timeline
        .most_at_once
        .fetch_max(now_running, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(millis)).await;
    timeline.running.fetch_sub(1, Ordering::SeqCst);
    timeline.finished.lock().unwrap().push(name.clone());
    name
}

fn sleepy_calls() -> [ToolCall; 3] {
    [
        call(0, "sleepy", r#"{"name":"slow","millis":80}"#),
        call(1, "sleepy", r#"{"name":"medium","millis":40}"#),
        call(2, "sleepy", r#"{"name":"fast","millis":0}"#),
    ]
}

// Paused time: tokio advances the clock to each timer in turn, so the calls finish fast, medium,
// slow on any machine, however loaded.
#[tokio::test(start_paused = true)]
async fn results_keep_call_order_when_calls_finish_out_of_order() {
    let timeline = Timeline::default();
    let agent =
        agent!(model_calling(sleepy_calls(), "done"), sleepy).bind_context(timeline.clone());
    let output = agent.run("go").await.unwrap();
    assert_eq!(
        *timeline.finished.lock().unwrap(),
        ["fast", "medium", "slow"]
    );
    assert_eq!(timeline.most_at_once.load(Ordering::SeqCst), 3);
    let results: Vec<&str> = tool_results(&output)
        .iter()
        .map(|result| result.content.as_str())
        .collect();
    assert_eq!(results, ["slow", "medium", "fast"]);
}

#[tokio::test(start_paused = true)]
async fn sequential_tools_run_one_at_a_time() {
    let timeline = Timeline::default();
    let agent = agent!(model_calling(sleepy_calls(), "done"), sleepy)
        .sequential_tools()
        .bind_context(timeline.clone());
    let output = agent.run("go").await.unwrap();
    assert_eq!(
        *timeline.finished.lock().unwrap(),
        ["slow", "medium", "fast"]
    );
    assert_eq!(timeline.most_at_once.load(Ordering::SeqCst), 1);
    let results: Vec<&str> = tool_results(&output)
        .iter()
        .map(|result| result.content.as_str())
        .collect();
    assert_eq!(results, ["slow", "medium", "fast"]);
}

/// The context of a whole application.
#[derive(Clone)]
struct AppState {
    greeting: Greeting,
    user_id: UserId,
}

#[derive(Clone)]
struct Greeting(String);

#[derive(Clone)]
struct UserId(u32);

impl FromRef<AppState> for Greeting {
    fn from_ref(state: &AppState) -> Self {
        state.greeting.clone()
    }
}

impl FromRef<AppState> for UserId {
    fn from_ref(state: &AppState) -> Self {
        state.user_id.clone()
    }
}

/// Greet the current user.
#[tool]
fn greet(
    State(greeting): State<Greeting>,
    State(user): State<UserId>,
    punctuation: String,
) -> String {
    format!("{}, user {}{punctuation}", greeting.0, user.0)
}

#[tokio::test]
async fn tools_take_parts_of_the_agent_state() {
    let model = model_calling([call(0, "greet", r#"{"punctuation":"!"}"#)], "greeted");
    let state = AppState {
        greeting: Greeting("Hello".into()),
        user_id: UserId(7),
    };
    let agent = agent!(model.clone(), greet, now).bind_context(state);
    let output = agent.run("greet me").await.unwrap();
    assert_eq!(tool_results(&output)[0].content, "Hello, user 7!");
    // State parameters are not in the schema.
    let schema = &model.requests()[0].tools[0].parameters;
    assert_eq!(schema["properties"].as_object().unwrap().len(), 1);
    assert_eq!(schema["required"], serde_json::json!(["punctuation"]));
}

/// A tool defined at run time, say from a configuration file.
struct Echo {
    definition: ToolDef,
}

impl Echo {
    fn named(name: &str) -> Self {
        Echo {
            definition: ToolDef::new(
                name,
                "Echo the arguments back.",
                serde_json::json!({"type": "object"}),
            ),
        }
    }
}

impl<S: Send + Sync + 'static> Tool<S> for Echo {
    fn definition(&self) -> &ToolDef {
        &self.definition
    }

    fn call<'a>(
        &'a self,
        _state: &'a S,
        call: &'a ToolCall,
        _run: &'a agent_core::RunScope,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move { Ok(ToolOutput::Text(format!("echo {}", call.arguments))) })
    }
}

#[tokio::test]
async fn tools_built_at_run_time_join_the_macro_ones() {
    let model = model_calling([call(0, "echo", r#"{"x":1}"#), call(1, "now", "")], "ok");
    let agent = agent!(model, now).try_tool(Echo::named("echo")).unwrap();
    let output = agent.run("echo").await.unwrap();
    let results: Vec<&str> = tool_results(&output)
        .iter()
        .map(|result| result.content.as_str())
        .collect();
    assert_eq!(results, [r#"echo {"x":1}"#, "12:00"]);
}

#[test]
fn a_run_time_tool_with_a_taken_or_invalid_name_is_a_clear_error() {
    let model = ScriptedModel::new([AssistantMessage::text("")]);
    let rejected: AddToolError = agent!(model.clone(), now)
        .try_tool(Echo::named("now"))
        .unwrap_err();
    assert_eq!(
        *rejected.error(),
        ToolSetError::DuplicateName { name: "now".into() }
    );
    assert_eq!(
        rejected.error().to_string(),
        "a tool named `now` is already registered; tool names must be unique"
    );
    // The reason is the error's source, said once by a report that walks the chain.
    assert_eq!(rejected.to_string(), "the agent did not take a tool");
    let source = std::error::Error::source(&rejected).unwrap();
    assert_eq!(
        source.downcast_ref::<ToolSetError>(),
        Some(rejected.error())
    );
    assert_eq!(
        format!("{rejected:?}"),
        r#"AddToolError { error: DuplicateName { name: "now" }, .. }"#
    );

    let error: ToolSetError = Agent::<()>::new(model)
        .try_tool(Echo::named("echo all"))
        .unwrap_err()
        .into();
    assert_eq!(
        error,
        ToolSetError::InvalidName {
            name: "echo all".into()
        }
    );
}

/// A context that is not `Debug`: a rejected tool's error is still `Debug` (for `unwrap`), and
/// an error whose source is the reason (for `?` into a boxed error).
struct NotDebug;

fn adding_to(
    agent: Agent<NotDebug>,
) -> Result<Agent<NotDebug>, Box<dyn std::error::Error + Send + Sync>> {
    Ok(agent.try_tool(Echo::named("now"))?)
}

#[tokio::test]
async fn a_rejected_tool_hands_the_agent_back_with_its_tools() {
    let model = model_calling([call(0, "echo", r#"{"x":1}"#), call(1, "now", "")], "ok");
    let mut agent = agent!(model, now).system("Be brief.").max_steps(3);
    // Names from a configuration, two of them bad: each failure hands the agent back.
    for name in ["now", "echo", "not a name", "echo"] {
        agent = match agent.try_tool(Echo::named(name)) {
            Ok(agent) => agent,
            Err(rejected) => {
                let (error, agent) = rejected.into_parts();
                assert!(matches!(
                    error,
                    ToolSetError::DuplicateName { .. } | ToolSetError::InvalidName { .. }
                ));
                agent
            }
        };
    }
    let names: Vec<&str> = agent
        .tools()
        .definitions()
        .iter()
        .map(|definition| definition.name.as_str())
        .collect();
    assert_eq!(names, ["now", "echo"]);
    assert_eq!(agent.system_prompt(), "Be brief.");

    // A list is all or none: one taken name and none of it is added.
    let agent = agent
        .try_tools([Echo::named("fresh"), Echo::named("now")])
        .unwrap_err()
        .into_agent();
    assert_eq!(agent.tools().len(), 2);
    let rejected = agent
        .try_tools([Echo::named("twin"), Echo::named("twin")])
        .unwrap_err();
    assert_eq!(
        *rejected.error(),
        ToolSetError::DuplicateName {
            name: "twin".into()
        }
    );
    let agent = rejected.into_agent();

    // And the agent runs with the tools it had.
    let output = agent.run("echo").await.unwrap();
    let results: Vec<&str> = tool_results(&output)
        .iter()
        .map(|result| result.content.as_str())
        .collect();
    assert_eq!(results, [r#"echo {"x":1}"#, "12:00"]);

    let agent: Agent<NotDebug> = Agent::new(ScriptedModel::new([AssistantMessage::text("")]))
        .try_tool(Echo::named("now"))
        .unwrap();
    let error = adding_to(agent).unwrap_err();
    assert_eq!(error.to_string(), "the agent did not take a tool");
    assert!(error.source().unwrap().is::<ToolSetError>());
}

#[tokio::test]
async fn a_shared_tool_is_added_as_it_is() {
    let shared: Arc<dyn Tool> = Arc::new(Echo::named("echo"));
    let model = model_calling([call(0, "echo", "{}")], "ok");
    let agent = Agent::new(model).try_tool(Arc::clone(&shared)).unwrap();
    // Not wrapped in a second `Arc`: the set holds this one, and calls reach the tool itself.
    assert_eq!(Arc::strong_count(&shared), 2);
    let held: &dyn Tool = agent.tools().get("echo").unwrap();
    assert!(std::ptr::addr_eq(held, &*shared));
    assert_eq!(agent.tools().definitions(), [shared.definition().clone()]);
    let output = agent.run("echo").await.unwrap();
    assert_eq!(tool_results(&output)[0].content, "echo {}");
}

/// A model chosen at run time, behind a `Box<dyn Model>`, counting tokens.
struct CountingModel;

impl Model for CountingModel {
    fn chat<'a>(
        &'a self,
        request: agent_core::ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let reply = if request.messages.len() < 4 {
            AssistantMessage::tool_calls([call(0, "now", "")])
        } else {
            AssistantMessage::text(format!("{} messages", request.messages.len()))
        };
        let usage = Usage::new(10 * request.messages.len() as u64, 5);
        Box::pin(async move { Ok(ChatResponse::new(reply).with_usage(usage)) })
    }
}

#[tokio::test]
async fn a_boxed_model_works_and_usage_is_summed() {
    let model: Box<dyn Model> = Box::new(CountingModel);
    let output = agent!(model, now).run("time?").await.unwrap();
    assert_eq!(output.text, "4 messages");
    assert_eq!(output.usage, Usage::new(20 + 40, 10));
    assert_eq!(output.usage.total_tokens(), 70);
}

#[tokio::test]
async fn a_conversation_goes_on_from_a_saved_transcript() {
    let model = ScriptedModel::new([
        AssistantMessage::text("It rains."),
        AssistantMessage::text("Yes, take one."),
    ]);
    let agent = agent!(model.clone(), get_weather);
    let first = agent.run("Weather?").await.unwrap();

    // Save and load the transcript as JSON, as a chat application would.
    let saved = serde_json::to_string(&first.messages).unwrap();
    let loaded: Vec<Message> = serde_json::from_str(&saved).unwrap();
    assert_eq!(loaded, first.messages);

    let second = agent.run("Umbrella?").history(loaded).await.unwrap();
    assert_eq!(second.text, "Yes, take one.");
    assert_eq!(second.messages.len(), 5, "system, user, reply, user, reply");
    assert_eq!(model.requests()[1].messages.len(), 4);
    assert!(matches!(&second.messages[0], Message::System { .. }));
}

#[test]
fn the_transcript_format_is_stable_json() {
    let messages = vec![
        Message::user("hi"),
        Message::Assistant(AssistantMessage::tool_calls([call(0, "now", "{}")])),
        Message::Tool(ToolResultMessage::new("call_0", "12:00")),
    ];
    assert_eq!(
        serde_json::to_value(&messages).unwrap(),
        serde_json::json!([
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "call_0", "name": "now", "arguments": "{}"}]},
            {"role": "tool", "tool_call_id": "call_0", "content": "12:00", "is_error": false}
        ])
    );
}

#[tokio::test]
async fn a_tool_function_stays_an_ordinary_function() {
    let weather = get_weather("上海".into(), None).await.unwrap();
    assert_eq!(weather.city, "上海");
    assert_eq!(now(), "12:00");
    assert_eq!(get_weather::NAME, "get_weather");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_agent_serves_many_runs_at_once_across_threads() {
    // The model answers from the history alone, so concurrent runs cannot disturb each other.
    let agent = Arc::new(agent!(CountingModel, now));
    let handles: Vec<_> = (0..50)
        .map(|index| {
            let agent = Arc::clone(&agent);
            tokio::spawn(async move { agent.run(format!("time {index}")).await })
        })
        .collect();
    for (index, handle) in handles.into_iter().enumerate() {
        let output = handle.await.unwrap().unwrap();
        assert_eq!(output.text, "4 messages");
        assert_eq!(output.messages[1], Message::user(format!("time {index}")));
    }
}

/// A reply cut off at the output token limit in the middle of its second call's arguments.
fn cut_off_reply(finish_reason: FinishReason) -> ChatResponse {
    ChatResponse::new(AssistantMessage::tool_calls([
        call(0, "get_weather", r#"{"city":"北京"}"#),
        call(1, "get_weather", r#"{"city":"上"#),
    ]))
    .with_finish_reason(finish_reason)
}

#[tokio::test]
async fn a_call_cut_off_at_the_token_limit_is_answered_not_run() {
    let model = ScriptedModel::new([
        cut_off_reply(FinishReason::Length),
        ChatResponse::new(AssistantMessage::text("北京有小雨。")),
    ]);
    let agent = agent!(model.clone(), get_weather).max_tool_calls(1);
    let output = agent.run("北京和上海的天气？").await.unwrap();

    assert_eq!(
        output.stop_reason,
        StopReason::Finished,
        "the cut call is not counted"
    );
    let results = tool_results(&output);
    assert_eq!(results.len(), 2);
    assert!(!results[0].is_error, "{}", results[0].content);
    assert_eq!(results[1].tool_call_id, "call_1");
    assert!(results[1].is_error);
    assert_eq!(
        results[1].content,
        "Error: the call was not run: your reply was cut off at the output token limit before \
         this call's arguments were complete; call the tool again with shorter arguments, or \
         split the work into smaller calls"
    );
    // The model is told so on its next turn.
    let requests = model.requests();
    assert_eq!(
        requests[1].messages.last(),
        Some(&Message::Tool((*results[1]).clone()))
    );
}

#[tokio::test]
async fn a_cut_off_call_is_told_in_the_agents_language() {
    let model = ScriptedModel::new([
        cut_off_reply(FinishReason::Length),
        ChatResponse::new(AssistantMessage::text("好。")),
    ]);
    let agent = agent!(model, get_weather).texts(agent_core::Chinese);
    let output = agent.run("天气？").await.unwrap();
    assert_eq!(
        tool_results(&output)[1].content,
        "出错：未执行：回复达到输出 token 上限被截断，此调用的参数不完整；请用更短的参数重新调用，或把工作拆成几次较小的调用"
    );
}

#[tokio::test]
async fn only_a_reply_cut_at_the_token_limit_has_its_broken_call_spared() {
    // The same broken arguments without the finish reason: the model wrote bad JSON, and is told.
    for reason in [FinishReason::ToolCalls, FinishReason::Stop] {
        let model = ScriptedModel::new([
            cut_off_reply(reason),
            ChatResponse::new(AssistantMessage::text("ok")),
        ]);
        let output = agent!(model, get_weather).run("hi").await.unwrap();
        let result = &tool_results(&output)[1];
        assert!(
            result
                .content
                .starts_with("Error: the arguments are not valid JSON"),
            "{}",
            result.content
        );
    }
    // Cut at the limit after whole arguments: every call runs.
    let whole = ChatResponse::new(AssistantMessage::tool_calls([
        call(0, "get_weather", r#"{"city":"北京"}"#),
        call(1, "now", ""),
    ]))
    .with_finish_reason(FinishReason::Length);
    let model = ScriptedModel::new([whole, ChatResponse::new(AssistantMessage::text("ok"))]);
    let output = agent!(model, get_weather, now).run("hi").await.unwrap();
    let results = tool_results(&output);
    assert!(results.iter().all(|result| !result.is_error), "{results:?}");
    assert_eq!(results[1].content, "12:00");
}
