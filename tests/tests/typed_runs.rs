//! Typed runs through a real `Agent` and the scripted model: the answer as a value, tools first,
//! corrections within the retry budget, validators, each output mode, streaming, and what a run
//! that ends without its value gives back.

use std::sync::atomic::{AtomicUsize, Ordering};

use agent_core::testing::ScriptedModel;
use agent_core::{
    Agent, AssistantMessage, Message, ModelSettings, OutputMode, OutputProblem, RunError, RunEvent,
    StopReason, ToolCall, ToolChoice, ToolError, agent, tool,
};
use futures_util::StreamExt;
use tests::{Priority, Ticket, get_weather, tool_results};

fn output_call(id: &str, arguments: &str) -> AssistantMessage {
    AssistantMessage::tool_calls([ToolCall::new(id, "final_result", arguments)])
}

const GOOD: &str = r#"{"title": "Umbrella broke", "priority": "high", "customer": 7}"#;

fn good_ticket() -> Ticket {
    Ticket {
        title: "Umbrella broke".into(),
        priority: Priority::High,
        customer: Some(7),
    }
}

#[tokio::test]
async fn the_model_calls_tools_first_then_answers_with_the_final_answer_tool() {
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new("w", "get_weather", r#"{"city":"北京"}"#)]),
        output_call("out", GOOD),
    ]);
    let agent = agent!(model.clone(), get_weather);
    let out = agent
        .run("My umbrella broke in the rain")
        .output::<Ticket>()
        .await
        .unwrap();

    assert_eq!(out.value, good_ticket());
    assert_eq!(out.run.steps, 2);
    assert_eq!(out.run.stop_reason, StopReason::Finished);
    assert_eq!(out.run.text, GOOD);
    // The final-answer call is answered too, so the conversation can go on.
    let results = tool_results(&out.run);
    assert_eq!(results.len(), 2);
    assert_eq!(results[1].tool_call_id, "out");
    assert_eq!(results[1].content, "Final answer received.");
    assert!(!results[1].is_error);

    let requests = model.requests();
    let names: Vec<&str> = requests[0]
        .tools
        .iter()
        .map(|tool| tool.name.as_str())
        .collect();
    assert_eq!(names, ["get_weather", "final_result"]);
    let final_tool = &requests[0].tools[1];
    assert!(
        final_tool
            .description
            .ends_with("A support ticket made from a customer's email."),
        "{}",
        final_tool.description
    );
    assert_eq!(final_tool.parameters["required"][0], "title");
    // A tool call is asked for on every step: the answer comes through the tool.
    for request in &requests {
        assert_eq!(request.settings.tool_choice, Some(ToolChoice::Required));
        assert!(request.response_format.is_none());
    }
}

#[tokio::test]
async fn an_output_that_does_not_fit_goes_back_with_every_field_path() {
    let model = ScriptedModel::new([
        output_call("bad", r#"{"priority": "urgent", "customer": "seven"}"#),
        output_call("good", GOOD),
    ]);
    let out = Agent::new(model)
        .run("My umbrella broke")
        .output::<Ticket>()
        .await
        .unwrap();
    assert_eq!(out.value, good_ticket());
    let correction = tool_results(&out.run)[0];
    assert!(correction.is_error);
    assert_eq!(
        correction.content,
        "the answer does not fit the schema: title: missing required field; customer: expected \
         an integer or null, got \"seven\"; priority: expected one of \"low\", \"high\", got \
         \"urgent\". Please try again."
    );
}

#[tokio::test]
async fn when_the_retries_run_out_the_error_keeps_every_rejected_output_and_the_transcript() {
    let model = ScriptedModel::new([
        AssistantMessage::text("It is a ticket about an umbrella."),
        AssistantMessage::tool_calls([
            ToolCall::new("w", "get_weather", r#"{"city":"北京"}"#),
            ToolCall::new("bad", "final_result", "{not json"),
        ]),
        output_call("never", GOOD),
    ]);
    let agent = agent!(model.clone(), get_weather);
    let error = agent
        .run("My umbrella broke")
        .output::<Ticket>()
        .output_retries(1)
        .await
        .unwrap_err();
    let RunError::Output {
        attempts, messages, ..
    } = &error
    else {
        panic!("expected an output error, got {error:?}");
    };
    assert_eq!(model.requests().len(), 2, "one try and one retry");
    assert_eq!(attempts.len(), 2);
    assert_eq!(attempts[0].raw, "It is a ticket about an umbrella.");
    assert_eq!(
        attempts[0].problem,
        OutputProblem::NotGiven {
            tool: "final_result".into()
        }
    );
    assert_eq!(attempts[1].raw, "{not json");
    assert!(matches!(
        attempts[1].problem,
        OutputProblem::InvalidJson { .. }
    ));
    // The words were corrected with a user message; the last reply's calls are all answered,
    // none run.
    assert!(
        matches!(&messages[3], Message::User { content, .. } if content.contains("`final_result` tool"))
    );
    let Message::Tool(weather) = &messages[5] else {
        panic!("{:?}", messages[5]);
    };
    assert_eq!(
        weather.content,
        "Error: the call was not run: the run ended before this call could run"
    );
    assert_eq!(messages.len(), 7);
    assert!(
        error
            .to_string()
            .contains("no acceptable output in 2 tries")
    );
}

#[derive(Clone)]
struct Customer(u32);

#[tokio::test]
async fn a_validator_reads_the_context_and_its_rejection_reaches_the_model() {
    let model = ScriptedModel::new([
        output_call(
            "wrong",
            r#"{"title": "Umbrella broke", "priority": "high", "customer": 3}"#,
        ),
        output_call("right", GOOD),
    ]);
    let agent: Agent<Customer> = Agent::new(model);
    let out = agent
        .run("My umbrella broke")
        .context(&Customer(7))
        .output::<Ticket>()
        .validate(|customer: &Customer, ticket: &Ticket| {
            if ticket.customer == Some(customer.0) {
                Ok(())
            } else {
                Err(format!("the customer writing is number {}", customer.0))
            }
        })
        .await
        .unwrap();
    assert_eq!(out.value.customer, Some(7));
    assert_eq!(
        tool_results(&out.run)[0].content,
        "the answer was not accepted: the customer writing is number 7. Please try again."
    );
}

#[tokio::test]
async fn native_mode_sends_the_schema_as_the_response_format_and_reads_the_text() {
    let model = ScriptedModel::new([
        AssistantMessage::text("Sure, here is the ticket."),
        AssistantMessage::text(GOOD),
    ]);
    let agent = agent!(model.clone(), get_weather).output_mode(OutputMode::Native);
    let out = agent
        .run("My umbrella broke")
        .output::<Ticket>()
        .await
        .unwrap();
    assert_eq!(out.value, good_ticket());

    let requests = model.requests();
    let format = requests[0].response_format.as_ref().unwrap();
    assert_eq!(format.name, "final_result");
    assert_eq!(
        format.description.as_deref(),
        Some("A support ticket made from a customer's email.")
    );
    assert_eq!(
        format.schema["properties"]["priority"]["$ref"],
        "#/$defs/Priority"
    );
    assert_eq!(requests[0].tools.len(), 1, "no final-answer tool");
    assert_eq!(requests[0].settings.tool_choice, None);
    // Words without JSON are corrected with a user message.
    let Message::User { content, .. } = &requests[1].messages[3] else {
        panic!("{:?}", requests[1].messages);
    };
    assert!(
        content.starts_with("the answer is not valid JSON"),
        "{content}"
    );
}

#[tokio::test]
async fn prompted_mode_puts_the_schema_in_the_system_prompt_and_finds_the_json_in_the_text() {
    let model = ScriptedModel::new([AssistantMessage::text(format!(
        "Here you go:\n```json\n{GOOD}\n```"
    ))]);
    let agent = Agent::new(model.clone()).system("You file tickets.");
    let out = agent
        .run("My umbrella broke")
        .output::<Ticket>()
        .output_mode(OutputMode::Prompted)
        .await
        .unwrap();
    assert_eq!(out.value, good_ticket());
    let request = &model.requests()[0];
    let Message::System { content } = &request.messages[0] else {
        panic!("{:?}", request.messages);
    };
    assert!(
        content.starts_with("You file tickets.\n\nYour final answer must be only a JSON value")
    );
    assert!(content.contains("\"customer\""), "{content}");
    assert!(request.response_format.is_none());
    assert!(request.tools.is_empty());
}

#[tokio::test]
async fn an_output_that_is_not_an_object_travels_under_response() {
    let model = ScriptedModel::new([output_call("out", r#"{"response": ["rain", "wind"]}"#)]);
    let out = Agent::new(model.clone())
        .run("What is the weather like?")
        .output::<Vec<String>>()
        .await
        .unwrap();
    assert_eq!(out.value, ["rain", "wind"]);
    let parameters = &model.requests()[0].tools[0].parameters;
    assert_eq!(parameters["required"][0], "response");
    assert_eq!(parameters["properties"]["response"]["type"], "array");
}

static SIDE_EFFECTS: AtomicUsize = AtomicUsize::new(0);

/// Sends an email.
#[tool]
fn send_email(to: String) -> String {
    SIDE_EFFECTS.fetch_add(1, Ordering::SeqCst);
    format!("sent to {to}")
}

#[tokio::test]
async fn calls_beside_the_final_answer_are_answered_but_not_run() {
    let model = ScriptedModel::new([AssistantMessage::tool_calls([
        ToolCall::new("mail", "send_email", r#"{"to":"ops"}"#),
        ToolCall::new("out", "final_result", GOOD),
    ])]);
    let out = agent!(model, send_email)
        .run("File it")
        .output::<Ticket>()
        .await
        .unwrap();
    assert_eq!(out.value, good_ticket());
    assert_eq!(SIDE_EFFECTS.load(Ordering::SeqCst), 0);
    let results = tool_results(&out.run);
    assert_eq!(
        results[0].content,
        "Error: the call was not run: the final answer was given in the same reply, so the run \
         ended without this call"
    );
    assert_eq!(results[1].content, "Final answer received.");
}

#[tokio::test]
async fn a_run_that_stops_before_its_answer_is_no_output_with_the_reason() {
    let weather =
        || AssistantMessage::tool_calls([ToolCall::new("w", "get_weather", r#"{"city":"北京"}"#)]);
    let model = ScriptedModel::new([weather(), weather()]);
    let error = agent!(model, get_weather)
        .max_steps(2)
        .run("My umbrella broke")
        .output::<Ticket>()
        .await
        .unwrap_err();
    match error {
        RunError::NoOutput {
            stop_reason,
            messages,
            ..
        } => {
            assert_eq!(stop_reason, StopReason::StepLimit { limit: 2 });
            assert_eq!(messages.len(), 6);
        }
        other => panic!("expected no output, got {other:?}"),
    }
}

#[tokio::test]
async fn at_the_step_limit_the_last_call_offers_only_the_final_answer_tool() {
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new("w", "get_weather", r#"{"city":"北京"}"#)]),
        output_call("out", GOOD),
    ]);
    let out = agent!(model.clone(), get_weather)
        .max_steps(1)
        .at_step_limit(agent_core::AtStepLimit::AskForFinalAnswer)
        .run("My umbrella broke")
        .output::<Ticket>()
        .await
        .unwrap();
    assert_eq!(out.value, good_ticket());
    assert_eq!(
        out.run.stop_reason,
        StopReason::StepLimitAnswered { limit: 1 }
    );
    let last = &model.requests()[1];
    assert_eq!(last.tools.len(), 1);
    assert_eq!(last.tools[0].name, "final_result");
    assert_eq!(
        last.settings.tool_choice,
        Some(ToolChoice::Tool("final_result".into()))
    );
}

#[tokio::test]
async fn a_streamed_typed_run_yields_text_then_ends_with_the_value() {
    let model = ScriptedModel::new([AssistantMessage::text(GOOD)]);
    let agent = Agent::new(model).output_mode(OutputMode::Native);
    let mut stream = agent.run("My umbrella broke").output::<Ticket>().stream();
    let mut text = String::new();
    let mut last = None;
    while let Some(event) = stream.next().await {
        match event {
            RunEvent::TextDelta(delta) => text.push_str(&delta),
            RunEvent::Finished(outcome) => last = Some(outcome),
            _ => {}
        }
    }
    assert_eq!(text, GOOD);
    assert_eq!(last.unwrap().unwrap().value, good_ticket());
}

/// Books a meeting room.
#[tool]
fn book_room(room: String) -> Result<String, ToolError> {
    if !room.starts_with("R-") {
        return Err(ToolError::retry("room ids look like `R-101`"));
    }
    Ok(format!("booked {room}"))
}

#[tokio::test]
async fn a_tool_can_ask_the_model_to_try_again() {
    let model = tests::model_calling([ToolCall::new("b", "book_room", r#"{"room":"101"}"#)], "ok");
    let out = agent!(model, book_room).run("Book 101").await.unwrap();
    let result = tool_results(&out)[0];
    assert!(result.is_error);
    assert_eq!(
        result.content,
        "Error: room ids look like `R-101`; correct this and call the tool again"
    );
}

#[tokio::test]
async fn a_forced_tool_choice_holds_for_one_step_and_run_settings_override_the_agents() {
    let model = tests::model_calling(
        [ToolCall::new("w", "get_weather", r#"{"city":"北京"}"#)],
        "Rain.",
    );
    let agent = agent!(model.clone(), get_weather)
        .tool_choice(ToolChoice::Tool("get_weather".into()))
        .temperature(0.9);
    let out = agent
        .run("Weather?")
        .temperature(0.2)
        .max_tokens(99)
        .await
        .unwrap();
    assert_eq!(out.text, "Rain.");
    let requests = model.requests();
    assert_eq!(
        requests[0].settings,
        ModelSettings::new()
            .tool_choice(ToolChoice::Tool("get_weather".into()))
            .temperature(0.2)
            .max_tokens(99)
    );
    // Forced once: after the call the model must be free to answer.
    assert_eq!(
        requests[1].settings,
        ModelSettings::new().temperature(0.2).max_tokens(99)
    );
}

/// A tool whose name the final-answer tool would take.
#[tool]
fn final_result() -> String {
    "not the answer".into()
}

#[tokio::test]
async fn the_final_answer_tool_takes_a_name_no_tool_has() {
    let model = ScriptedModel::new([AssistantMessage::tool_calls([ToolCall::new(
        "out",
        "final_result_",
        GOOD,
    )])]);
    let out = agent!(model.clone(), final_result)
        .run("File it")
        .output::<Ticket>()
        .await
        .unwrap();
    assert_eq!(out.value, good_ticket());
    assert_eq!(model.requests()[0].tools[1].name, "final_result_");
}

#[tokio::test]
async fn a_forced_tool_in_a_typed_run_gives_way_to_the_final_answer_tool() {
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new("w", "get_weather", r#"{"city":"北京"}"#)]),
        output_call("out", GOOD),
    ]);
    let out = agent!(model.clone(), get_weather)
        .tool_choice(ToolChoice::Tool("get_weather".into()))
        .run("My umbrella broke")
        .output::<Ticket>()
        .await
        .unwrap();
    assert_eq!(out.value, good_ticket());
    let requests = model.requests();
    assert_eq!(
        requests[0].settings.tool_choice,
        Some(ToolChoice::Tool("get_weather".into()))
    );
    assert_eq!(requests[1].settings.tool_choice, Some(ToolChoice::Required));
}

#[tokio::test]
async fn a_rejected_answer_at_the_step_limit_leaves_every_call_answered() {
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new("w", "get_weather", r#"{"city":"北京"}"#)]),
        output_call("late", r#"{"title": "Umbrella broke"}"#),
    ]);
    let error = agent!(model, get_weather)
        .max_steps(1)
        .at_step_limit(agent_core::AtStepLimit::AskForFinalAnswer)
        .run("My umbrella broke")
        .output::<Ticket>()
        .await
        .unwrap_err();
    let RunError::NoOutput {
        stop_reason,
        attempts,
        messages,
        ..
    } = error
    else {
        panic!("expected no output, got {error:?}");
    };
    assert_eq!(stop_reason, StopReason::StepLimit { limit: 1 });
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0].raw, r#"{"title": "Umbrella broke"}"#);
    let Message::Tool(last) = messages.last().unwrap() else {
        panic!("the last call is unanswered: {messages:?}");
    };
    assert_eq!(last.tool_call_id, "late");
    assert!(last.content.contains("priority: missing required field"));
}

#[tokio::test]
async fn final_answer_calls_do_not_count_against_the_tool_call_limit() {
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new("w", "get_weather", r#"{"city":"北京"}"#)]),
        output_call("bad", r#"{"title": 1}"#),
        output_call("good", GOOD),
    ]);
    let out = agent!(model, get_weather)
        .max_tool_calls(1)
        .run("My umbrella broke")
        .output::<Ticket>()
        .await
        .unwrap();
    assert_eq!(out.value, good_ticket());
    assert_eq!(out.run.steps, 3);
}

#[tokio::test]
async fn run_settings_given_one_by_one_and_together_add_up() {
    let model = ScriptedModel::new([AssistantMessage::text("Hi.")]);
    let agent = Agent::new(model.clone());
    let _answer = agent
        .run("Hello")
        .temperature(0.2)
        .model_settings(ModelSettings::new().max_tokens(50))
        .await
        .unwrap();
    assert_eq!(
        model.requests()[0].settings,
        ModelSettings::new().temperature(0.2).max_tokens(50)
    );
}

#[tokio::test]
async fn a_streamed_typed_run_in_tool_mode_shows_each_call_and_result_in_order() {
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new("w", "get_weather", r#"{"city":"北京"}"#)]),
        output_call("out", GOOD),
    ]);
    let agent = agent!(model, get_weather);
    let events: Vec<String> = agent
        .run("My umbrella broke")
        .output::<Ticket>()
        .stream()
        .map(|event| match event {
            RunEvent::StepStarted { step } => format!("start {step}"),
            RunEvent::TextDelta(text) => format!("text {text}"),
            RunEvent::ToolCallRequested(call) => format!("call {}", call.id),
            RunEvent::ToolResult(result) => {
                format!("result {} {}", result.tool_call_id, result.is_error)
            }
            RunEvent::StepFinished { step, .. } => format!("end {step}"),
            RunEvent::Finished(outcome) => format!("finished {:?}", outcome.map(|out| out.value)),
            other => format!("{other:?}"),
        })
        .collect()
        .await;
    assert_eq!(
        events,
        [
            "start 1",
            "call w",
            "result w false",
            "end 1",
            "start 2",
            "call out",
            "result out false",
            "end 2",
            "finished Ok(Ticket { title: \"Umbrella broke\", priority: High, customer: Some(7) })",
        ]
    );
}

#[tokio::test]
async fn an_answer_cut_off_at_the_token_limit_is_asked_for_again_as_cut_off() {
    use agent_core::{ChatResponse, FinishReason};
    let model = ScriptedModel::new([
        ChatResponse::new(output_call("cut", r#"{"title": "Umbrella br"#))
            .with_finish_reason(FinishReason::Length),
        ChatResponse::new(output_call("whole", GOOD)),
    ]);
    let out = Agent::new(model)
        .run("My umbrella broke")
        .output::<Ticket>()
        .await
        .unwrap();
    assert_eq!(out.value, good_ticket());
    let correction = tool_results(&out.run)[0];
    assert_eq!(correction.tool_call_id, "cut");
    assert_eq!(
        correction.content,
        "the answer was cut off at the output token limit before it was complete; give it again, \
         shorter. Please try again."
    );
}
