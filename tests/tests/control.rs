//! Control of a run: limits, timeouts, the step-limit choice, hooks, approval, tracing, cancellation.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_core::testing::ScriptedModel;
use agent_core::{
    Agent, Approval, AssistantMessage, AtStepLimit, BoxFuture, ChatResponse, Hooks, Message,
    ModelError, RunError, RunOutput, State, StopReason, TokenKind, ToolCall, ToolDecision, ToolDef,
    ToolResultMessage, Usage, agent, tool,
};
use tests::{call, get_weather, model_calling, now, tool_results};

fn contents(output: &RunOutput) -> Vec<&str> {
    tool_results(output)
        .iter()
        .map(|result| result.content.as_str())
        .collect()
}

/// Counts how many of its calls are alive; a call that is dropped (cancelled) counts down too.
#[derive(Clone, Default)]
struct Liveness {
    started: Arc<AtomicUsize>,
    alive: Arc<AtomicUsize>,
    started_signal: Arc<tokio::sync::Notify>,
}

struct AliveGuard(Arc<AtomicUsize>);

impl Drop for AliveGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Waits for a very long time.
#[tool]
async fn wait_forever(State(liveness): State<Liveness>) -> String {
    liveness.alive.fetch_add(1, Ordering::SeqCst);
    let _guard = AliveGuard(Arc::clone(&liveness.alive));
    liveness.started.fetch_add(1, Ordering::SeqCst);
    liveness.started_signal.notify_one();
    tokio::time::sleep(Duration::from_secs(3600)).await;
    "woke up".to_owned()
}

/// Sleeps past its own short timeout.
#[tool(timeout = "50ms")]
async fn impatient() -> String {
    tokio::time::sleep(Duration::from_secs(3600)).await;
    "never".to_owned()
}

#[tokio::test]
async fn a_tool_past_the_agents_timeout_is_cancelled_and_the_run_goes_on() {
    let liveness = Liveness::default();
    let model = model_calling([call(0, "wait_forever", "{}"), call(1, "now", "")], "done");
    let agent = agent!(model, wait_forever, now)
        .tool_timeout(Duration::from_millis(100))
        .bind_context(liveness.clone());
    let started = Instant::now();
    let output = agent.run("go").await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(
        contents(&output),
        [
            "Error: the tool did not finish within 100 ms and was cancelled",
            "12:00"
        ]
    );
    assert_eq!(output.text, "done");
    assert_eq!(
        liveness.started.load(Ordering::SeqCst),
        1,
        "the call had started"
    );
    assert_eq!(
        liveness.alive.load(Ordering::SeqCst),
        0,
        "the timed-out call was dropped"
    );
}

#[tokio::test]
async fn a_tools_own_timeout_wins_over_the_agents() {
    let model = model_calling([call(0, "impatient", "{}")], "done");
    let output = agent!(model, impatient)
        .tool_timeout(Duration::from_secs(60))
        .run("go")
        .await
        .unwrap();
    assert_eq!(
        contents(&output),
        ["Error: the tool did not finish within 50 ms and was cancelled"]
    );
}

#[tokio::test]
async fn the_tool_call_limit_stops_the_run_with_every_call_answered() {
    let model = model_calling(
        [call(0, "now", ""), call(1, "now", ""), call(2, "now", "")],
        "unreachable",
    );
    let output = agent!(model.clone(), now)
        .max_tool_calls(2)
        .run("go")
        .await
        .unwrap();
    assert_eq!(output.stop_reason, StopReason::ToolCallLimit { limit: 2 });
    assert_eq!(
        contents(&output),
        [
            "12:00",
            "12:00",
            "Error: the call was not run: the run's limit of 2 tool calls is reached"
        ]
    );
    assert_eq!(output.text, "Stopped before finishing.");
    assert_eq!(model.requests().len(), 1);
}

/// Replies with a tool call each turn, reporting 100 input and 10 output tokens per call.
struct Spender;

impl agent_core::Model for Spender {
    fn chat<'a>(
        &'a self,
        _request: agent_core::ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let reply = AssistantMessage::tool_calls([call(0, "now", "")]);
        let usage = Usage::new(100, 10);
        Box::pin(async move { Ok(ChatResponse::new(reply).with_usage(usage)) })
    }
}

#[tokio::test]
async fn token_limits_stop_the_run_before_the_next_call() {
    let output = agent!(Spender, now)
        .max_input_tokens(250)
        .run("go")
        .await
        .unwrap();
    assert_eq!(
        output.stop_reason,
        StopReason::TokenLimit {
            kind: TokenKind::Input,
            limit: 250,
            used: 300
        }
    );
    assert_eq!(output.steps, 3);
    assert_eq!(output.step_usage, vec![Usage::new(100, 10); 3]);
    assert_eq!(output.usage, Usage::new(300, 30));

    let output = agent!(Spender, now)
        .max_output_tokens(10)
        .run("go")
        .await
        .unwrap();
    assert_eq!(
        output.stop_reason,
        StopReason::TokenLimit {
            kind: TokenKind::Output,
            limit: 10,
            used: 10
        }
    );
    assert_eq!(output.steps, 1);
}

#[tokio::test]
async fn the_time_limit_cancels_what_is_in_flight() {
    let liveness = Liveness::default();
    let model = model_calling([call(0, "wait_forever", "{}")], "unreachable");
    let agent = agent!(model, wait_forever)
        .time_limit(Duration::from_millis(200))
        .bind_context(liveness.clone());
    let started = Instant::now();
    let output = agent.run("go").await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(
        output.stop_reason,
        StopReason::TimeLimit {
            limit: Duration::from_millis(200)
        }
    );
    assert_eq!(
        contents(&output),
        [
            "Error: the call was interrupted when the run's time limit passed: it had started and \
             may have had its effect, so check before calling it again"
        ]
    );
    assert_eq!(liveness.alive.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn the_time_limit_counts_from_the_runs_first_poll() {
    let model = model_calling([call(0, "impatient", "{}")], "Done.");
    let agent = agent!(model, impatient).time_limit(Duration::from_millis(200));
    // Made, then left unpolled past its whole limit: the run has not started yet.
    let run = agent.run("go");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let output = run.await.unwrap();
    assert_eq!(output.stop_reason, StopReason::Finished);
    assert_eq!(output.text, "Done.");
}

#[tokio::test]
async fn at_the_step_limit_the_model_can_be_asked_for_a_final_answer() {
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([call(0, "now", "")]),
        AssistantMessage::tool_calls([call(1, "now", "")]),
        AssistantMessage::text("It is noon.").with_tool_call(call(2, "now", "")),
    ]);
    let output = agent!(model.clone(), now)
        .max_steps(2)
        .at_step_limit(AtStepLimit::AskForFinalAnswer)
        .run("time?")
        .await
        .unwrap();
    assert_eq!(
        output.stop_reason,
        StopReason::StepLimitAnswered { limit: 2 }
    );
    assert_eq!(output.text, "It is noon.");
    assert_eq!(output.steps, 3);
    let requests = model.requests();
    assert_eq!(requests[1].tools.len(), 1);
    assert!(
        requests[2].tools.is_empty(),
        "the last call offers no tools"
    );
    // A call made anyway is dropped, so no call in the history goes unanswered.
    let Some(Message::Assistant(last)) = output.messages.last() else {
        panic!()
    };
    assert!(last.tool_calls.is_empty());
}

/// Records every hook call, and steers tool calls by name.
#[derive(Default, Clone)]
struct Recorder {
    events: Arc<Mutex<Vec<String>>>,
}

impl Recorder {
    fn push(&self, event: String) {
        self.events.lock().unwrap().push(event);
    }

    fn events(&self) -> Vec<String> {
        self.events.lock().unwrap().clone()
    }
}

impl<S> Hooks<S> for Recorder {
    fn on_model_request(&self, _context: &S, step: usize, messages: &[Message]) {
        self.push(format!("request {step} ({} messages)", messages.len()));
    }

    fn on_model_response(&self, _context: &S, step: usize, response: &ChatResponse) {
        self.push(format!(
            "response {step} ({} calls)",
            response.message.tool_calls.len()
        ));
    }

    fn before_tool_call<'a>(
        &'a self,
        _context: &'a S,
        call: &'a ToolCall,
        tool: Option<&'a ToolDef>,
    ) -> BoxFuture<'a, ToolDecision> {
        self.push(format!(
            "before {} {}",
            call.id,
            tool.map_or("(unknown)", |tool| tool.name.as_str())
        ));
        let decision = match call.id.as_str() {
            "call_skip" => ToolDecision::Skip {
                reason: "skipped by policy".into(),
            },
            "call_rewrite" => ToolDecision::RunWith {
                arguments: r#"{"city":"上海"}"#.into(),
            },
            "call_stop" => ToolDecision::Stop {
                reason: "enough".into(),
            },
            _ => ToolDecision::Run,
        };
        Box::pin(async move { decision })
    }

    fn on_tool_result(
        &self,
        _context: &S,
        call: &ToolCall,
        result: &ToolResultMessage,
        _elapsed: Duration,
    ) {
        self.push(format!("result {} error={}", call.id, result.is_error));
    }

    fn on_run_end(&self, _context: &S, outcome: Result<&RunOutput, &RunError>) {
        let reason = outcome.map(|output| format!("{:?}", output.stop_reason));
        self.push(format!("end {reason:?}"));
    }
}

#[tokio::test]
async fn hooks_see_every_point_of_the_loop_in_order() {
    let recorder = Recorder::default();
    let model = model_calling([ToolCall::new("call_a", "now", "")], "done");
    let output = agent!(model, now)
        .hook(recorder.clone())
        .run("go")
        .await
        .unwrap();
    assert!(output.is_finished());
    assert_eq!(
        recorder.events(),
        [
            "request 1 (2 messages)",
            "response 1 (1 calls)",
            "before call_a now",
            "result call_a error=false",
            "request 2 (4 messages)",
            "response 2 (0 calls)",
            "end Ok(\"Finished\")",
        ]
    );
}

#[tokio::test]
async fn the_before_tool_hook_skips_rewrites_and_stops() {
    let recorder = Recorder::default();
    let model = model_calling(
        [
            ToolCall::new("call_skip", "now", ""),
            ToolCall::new("call_rewrite", "get_weather", r#"{"city":"北京"}"#),
            ToolCall::new("call_stop", "now", ""),
        ],
        "unreachable",
    );
    let output = agent!(model, now, get_weather)
        .hook(recorder)
        .run("go")
        .await
        .unwrap();
    assert_eq!(
        output.stop_reason,
        StopReason::Stopped {
            reason: "enough".into()
        }
    );
    let results = contents(&output);
    assert_eq!(results[0], "Error: the call was not run: skipped by policy");
    assert_eq!(results[1], r#"{"city":"上海","weather":"小雨","temp":18}"#);
    assert_eq!(results[2], "Error: the call was not run: enough");
    // The history keeps what the model asked for; the hook's rewrite shows in the result.
    let Message::Assistant(reply) = &output.messages[2] else {
        panic!()
    };
    assert_eq!(reply.tool_calls[1].arguments, r#"{"city":"北京"}"#);
}

/// Delete a file.
#[tool(destructive, requires_approval)]
async fn delete_file(path: String) -> String {
    format!("deleted {path}")
}

#[tokio::test]
async fn tools_needing_approval_are_denied_without_an_approver() {
    let model = model_calling([call(0, "delete_file", r#"{"path":"/tmp/x"}"#)], "ok");
    let output = agent!(model, delete_file).run("delete it").await.unwrap();
    assert_eq!(
        contents(&output),
        ["Error: the call was not run: this tool needs approval and no one is there to approve it"]
    );
}

#[tokio::test]
async fn the_approver_decides_and_a_denial_reaches_the_model() {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&asked);
    let model = model_calling(
        [
            call(0, "delete_file", r#"{"path":"/tmp/keep"}"#),
            call(1, "delete_file", r#"{"path":"/tmp/junk"}"#),
            call(2, "now", ""),
        ],
        "ok",
    );
    let agent: Agent =
        agent!(model, delete_file, now).approve_with(move |call: ToolCall, tool: ToolDef| {
            seen.lock()
                .unwrap()
                .push(format!("{} {}", tool.name, call.arguments));
            async move {
                if call.arguments.contains("junk") {
                    Approval::Approve
                } else {
                    Approval::Deny {
                        reason: Some("that file is important".into()),
                    }
                }
            }
        });
    let output = agent.run("clean up").await.unwrap();
    assert_eq!(
        contents(&output),
        [
            "Error: the call was not run: the user did not approve this call: that file is important",
            "deleted /tmp/junk",
            "12:00",
        ]
    );
    // Only the tool that needs approval is asked about.
    assert_eq!(asked.lock().unwrap().len(), 2);
}

#[test]
fn tool_annotations_come_from_the_attribute() {
    use agent_core::Tool;
    let annotations = &Tool::<()>::definition(&delete_file {}).annotations;
    assert!(annotations.requires_approval);
    assert_eq!(annotations.destructive, Some(true));
    assert_eq!(annotations.read_only, None);
    assert_eq!(
        Tool::<()>::definition(&impatient {}).annotations.timeout,
        Some(Duration::from_millis(50))
    );
}

#[tokio::test]
async fn cancelling_a_run_drops_its_tool_calls_and_keeps_the_transcript() {
    let liveness = Liveness::default();
    let model = model_calling(
        [call(0, "wait_forever", "{}"), call(1, "wait_forever", "{}")],
        "unreachable",
    );
    let agent = agent!(model, wait_forever).bind_context(liveness.clone());
    let signal = Arc::clone(&liveness.started_signal);
    let counter = Arc::clone(&liveness.started);
    let cancel = async move {
        while counter.load(Ordering::SeqCst) < 2 {
            signal.notified().await;
        }
    };
    let output = agent.run("go").until(cancel).await.unwrap();
    assert_eq!(output.stop_reason, StopReason::Cancelled);
    assert_eq!(
        liveness.started.load(Ordering::SeqCst),
        2,
        "both calls were in flight"
    );
    assert_eq!(
        liveness.alive.load(Ordering::SeqCst),
        0,
        "and both were dropped"
    );
    assert_eq!(
        contents(&output),
        ["Error: the call was interrupted when the run was cancelled: it had started and may \
             have had its effect, so check before calling it again"; 2]
    );
    drop(agent);
    assert_eq!(
        Arc::strong_count(&liveness.alive),
        1,
        "no task kept the context alive"
    );
}

#[tokio::test]
async fn dropping_a_run_future_cancels_it_and_leaks_nothing() {
    let liveness = Liveness::default();
    let model = model_calling([call(0, "wait_forever", "{}")], "unreachable");
    let agent = agent!(model, wait_forever).bind_context(liveness.clone());
    // Poll the run until its tool has started, then drop it.
    tokio::select! {
        biased;
        () = liveness.started_signal.notified() => {}
        output = agent.run("go") => panic!("the run ended: {output:?}"),
    }
    assert_eq!(liveness.started.load(Ordering::SeqCst), 1);
    assert_eq!(liveness.alive.load(Ordering::SeqCst), 0);
    drop(agent);
    assert_eq!(Arc::strong_count(&liveness.alive), 1);
}
