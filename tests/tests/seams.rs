//! The run's seams from outside the crate: a call policy, a model-call layer and an answer check
//! of a user's own, each through public API only, plugged into a run beside the crate's own.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_core::seams::{
    AnswerCheck, CallPolicy, Judgement, ModelCall, ModelLayer, Next, Offer, PolicyCall,
    ReplyRulings, Ruled, Ruling, RunStatus,
};
use agent_core::testing::ScriptedModel;
use agent_core::{
    Agent, AssistantMessage, BoxFuture, ChatResponse, ModelError, NotRun, StopReason, ToolCall,
    ToolError, ToolResultMessage, agent, tool,
};

/// Says what it was given.
#[tool]
fn echo(text: String) -> String {
    format!("echo: {text} (secret 1234)")
}

/// Removes a file.
#[tool]
fn rm(path: String) -> String {
    format!("removed {path}")
}

/// A deployment's own rules: no `rm`, every `echo` shouted, no secret in a result the model
/// reads, at most three steps, and a record of every result it was shown.
#[derive(Default)]
struct HouseRules {
    seen: Mutex<Vec<(String, Duration)>>,
}

impl CallPolicy for HouseRules {
    fn before_step(&self, status: &RunStatus<'_>) -> Option<StopReason> {
        (status.step > 3).then(|| StopReason::Stopped {
            reason: "three steps are enough".into(),
        })
    }

    fn on_reply(
        &self,
        _status: &RunStatus<'_>,
        reply: &AssistantMessage,
        _cut_off: bool,
        rulings: &mut ReplyRulings<'_>,
    ) {
        for (index, call) in reply.tool_calls.iter().enumerate() {
            if call.name == "rm" {
                let refused = ToolError::NotRun {
                    why: NotRun::Skipped("rm is not allowed here".into()),
                };
                rulings.rule(index, Ruling::Answer(Err(refused)));
            }
        }
    }

    fn rule<'a>(&'a self, call: PolicyCall<'a, ()>) -> Option<Ruled<'a>> {
        if call.call.name != "echo" || !call.so_far.runs() {
            return None;
        }
        let arguments: serde_json::Value = serde_json::from_str(&call.call.arguments).unwrap();
        let loud = arguments["text"]
            .as_str()
            .unwrap_or_default()
            .to_uppercase();
        Some(Ruling::RunWith(serde_json::json!({ "text": loud }).to_string()).into())
    }

    fn after_call(
        &self,
        _context: &(),
        call: &ToolCall,
        result: &mut ToolResultMessage,
        elapsed: Duration,
    ) {
        result.content = result.content.replace("1234", "****");
        self.seen.lock().unwrap().push((call.id.clone(), elapsed));
    }
}

#[tokio::test]
async fn a_call_policy_of_ones_own_rules_rewrites_and_redacts() {
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([
            ToolCall::new("a", "echo", r#"{"text":"hi"}"#),
            ToolCall::new("b", "rm", r#"{"path":"/"}"#),
        ]),
        AssistantMessage::text("Done."),
    ]);
    let rules = Arc::new(HouseRules::default());
    let agent: Agent = agent!(model, echo, rm).policy(Arc::clone(&rules));
    let out = agent.run("go").await.unwrap();
    assert_eq!(out.stop_reason, StopReason::Finished);
    assert_eq!(
        tests::result_texts(&out.messages),
        [
            "echo: HI (secret ****)",
            "Error: the call was not run: rm is not allowed here"
        ]
    );
    // Each result as it came (the calls ran at once).
    let mut seen: Vec<String> = rules
        .seen
        .lock()
        .unwrap()
        .iter()
        .map(|(id, _)| id.clone())
        .collect();
    seen.sort();
    assert_eq!(seen, ["a", "b"]);
}

#[tokio::test]
async fn a_call_policy_of_ones_own_stops_the_run_before_a_model_call() {
    let calls = (0..5).map(|step| {
        AssistantMessage::tool_calls([ToolCall::new(format!("c{step}"), "echo", r#"{"text":"x"}"#)])
    });
    let model = ScriptedModel::new(calls);
    let agent: Agent = agent!(model.clone(), echo).policy(HouseRules::default());
    let out = agent.run("go").await.unwrap();
    assert_eq!(
        out.stop_reason,
        StopReason::Stopped {
            reason: "three steps are enough".into()
        }
    );
    assert_eq!(out.steps, 3);
    assert_eq!(model.requests().len(), 3);
}

/// Answers a request it has answered before from memory, without the model.
#[derive(Default)]
struct Cache {
    answers: Mutex<Vec<(String, ChatResponse)>>,
    model_calls: AtomicUsize,
}

impl ModelLayer for Cache {
    fn call<'a>(
        &'a self,
        call: ModelCall<'a, ()>,
        next: Next<'a, ()>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async move {
            let key = serde_json::to_string(call.request.messages).unwrap();
            let known = self
                .answers
                .lock()
                .unwrap()
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, a)| a.clone());
            if let Some(answer) = known {
                return Ok(answer);
            }
            self.model_calls.fetch_add(1, Ordering::SeqCst);
            let answer = next.call(call).await?;
            self.answers.lock().unwrap().push((key, answer.clone()));
            Ok(answer)
        })
    }
}

#[tokio::test]
async fn a_model_layer_of_ones_own_answers_without_the_model() {
    let model = ScriptedModel::new([AssistantMessage::text("Paris.")]);
    let cache = Arc::new(Cache::default());
    let agent = Agent::new(model.clone()).model_layer(Arc::clone(&cache));
    let first = agent.run("Capital of France?").await.unwrap();
    // The script is spent: only the cache can answer the second run.
    let second = agent.run("Capital of France?").await.unwrap();
    assert_eq!(
        (first.text.as_str(), second.text.as_str()),
        ("Paris.", "Paris.")
    );
    assert_eq!(cache.model_calls.load(Ordering::SeqCst), 1);
    assert_eq!(model.requests().len(), 1);
}

/// An answer must name a number; until it does, the model is told to.
struct NamesANumber {
    tries: usize,
}

impl AnswerCheck for NamesANumber {
    fn offer<'a>(&'a self, offer: &mut Offer<'a>) {
        if offer.last_try {
            offer.tools = &[];
        }
    }

    fn judge(
        &mut self,
        _context: &(),
        reply: &mut AssistantMessage,
        _cut_off: bool,
        _last_try: bool,
    ) -> Judgement {
        if !reply.tool_calls.is_empty() {
            return Judgement::Continue;
        }
        self.tries += 1;
        if reply.content.chars().any(|c| c.is_ascii_digit()) {
            Judgement::Answer(reply.content.clone())
        } else if self.tries > 2 {
            Judgement::GiveUp
        } else {
            Judgement::Retry("answer with a number".into())
        }
    }
}

#[tokio::test]
async fn an_answer_check_of_ones_own_sends_its_correction_and_takes_its_answer() {
    let model = ScriptedModel::new([
        AssistantMessage::text("Many."),
        AssistantMessage::text("There are 8."),
    ]);
    let agent = Agent::new(model.clone());
    let out = agent
        .run("How many planets?")
        .answer_check(NamesANumber { tries: 0 })
        .await
        .unwrap();
    assert_eq!(out.text, "There are 8.");
    let second = &model.requests()[1].messages;
    assert_eq!(second.last().unwrap().content(), "answer with a number");
}

#[tokio::test]
async fn an_answer_check_of_ones_own_gives_up() {
    let model = ScriptedModel::new(["One.", "Two.", "Three."].map(AssistantMessage::text));
    let agent = Agent::new(model);
    let error = agent
        .run("How many?")
        .answer_check(NamesANumber { tries: 0 })
        .await
        .unwrap_err();
    assert!(
        matches!(error, agent_core::RunError::Output { .. }),
        "{error:?}"
    );
}
