//! Every outcome of one tool call, driven through a real `Agent` by a scripted model: each failure
//! reaches the model as an error result and the run goes on to its final answer.

use agent_core::{Chinese, Message, agent};
use tests::{Unit, call, model_calling, run_fixture_calls, tool_results};

/// Shows its arguments exactly as they were parsed.
#[agent_core::tool]
fn parsed(
    /// A unit, if any
    unit: Option<Unit>,
    /// Days ahead
    #[arg(default = 3)]
    days: u32,
) -> String {
    format!("unit: {unit:?}, days: {days}")
}

/// What `parsed` made of `arguments`: its result, and whether it is an error.
async fn parse(arguments: &str) -> (String, bool) {
    let model = model_calling([call(0, "parsed", arguments)], "final answer");
    let output = agent!(model, parsed).run("go").await.unwrap();
    assert_eq!(output.text, "final answer");
    let results = tool_results(&output);
    assert_eq!(results.len(), 1);
    (results[0].content.clone(), results[0].is_error)
}

async fn one_result(name: &str, arguments: &str) -> (String, bool) {
    let output = run_fixture_calls(vec![call(0, name, arguments)], |agent| agent).await;
    assert_eq!(
        output.text, "final answer",
        "the run must go on after the call"
    );
    let results = tool_results(&output);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].tool_call_id, "call_0");
    (results[0].content.clone(), results[0].is_error)
}

#[tokio::test]
async fn success_serializes_a_struct_as_json() {
    let (content, is_error) = one_result("get_weather", r#"{"city":"北京"}"#).await;
    assert!(!is_error);
    assert_eq!(content, r#"{"city":"北京","weather":"小雨","temp":18}"#);
}

#[tokio::test]
async fn success_passes_a_string_verbatim() {
    let (content, is_error) =
        one_result("plan_route", r#"{"stops":[{"city":"Paris","nights":2}]}"#).await;
    assert!(!is_error);
    assert_eq!(content, "Paris (0 preferences)");
    assert_eq!(one_result("now", "{}").await, ("12:00".to_owned(), false));
}

#[tokio::test]
async fn unit_result_is_a_short_success_text() {
    assert_eq!(
        one_result("remember", r#"{"note":"milk"}"#).await,
        ("Done.".to_owned(), false)
    );
}

#[tokio::test]
async fn empty_arguments_mean_an_empty_object() {
    assert_eq!(one_result("now", "").await, ("12:00".to_owned(), false));
    assert_eq!(one_result("now", "  ").await, ("12:00".to_owned(), false));
    let (content, is_error) = one_result("get_weather", "").await;
    assert!(is_error);
    assert_eq!(
        content,
        "Error: invalid arguments: city: missing required field"
    );
}

#[tokio::test]
async fn unknown_tool_names_it_and_the_tools_that_exist() {
    let (content, is_error) = one_result("get_wether", "{}").await;
    assert!(is_error);
    assert_eq!(
        content,
        "Error: there is no tool named `get_wether`; available tools: get_weather, plan_route, now, remember, explode, refuse, repeat, forecast"
    );
}

#[tokio::test]
async fn an_unknown_tool_error_lists_the_tools_added_since_the_last_one() {
    let mut tools = agent_core::ToolSet::new();
    tools.add(tests::now {}).unwrap();
    let misspelled = agent_core::ToolCall::new("call_0", "nwo", "{}");
    let first = tools.dispatch(&(), &misspelled).await;
    assert_eq!(
        first.content,
        "Error: there is no tool named `nwo`; available tools: now"
    );
    tools.add(tests::repeat {}).unwrap();
    let second = tools.dispatch(&(), &misspelled).await;
    assert_eq!(
        second.content,
        "Error: there is no tool named `nwo`; available tools: now, repeat"
    );
}

#[tokio::test]
async fn invalid_json_carries_the_parser_message() {
    let (content, is_error) = one_result("get_weather", r#"{"city":"#).await;
    assert!(is_error);
    assert_eq!(
        content,
        "Error: the arguments are not valid JSON: EOF while parsing a value at line 1 column 8"
    );
}

#[tokio::test]
async fn schema_mismatch_lists_every_field_with_its_path() {
    let (content, is_error) = one_result(
        "get_weather",
        r#"{"city":42,"unit":"kelvin","country":"CN"}"#,
    )
    .await;
    assert!(is_error);
    assert_eq!(
        content,
        "Error: invalid arguments: city: invalid type: integer `42`, expected a string; \
         unit: unknown variant `kelvin`, expected `celsius` or `fahrenheit`; \
         country: unknown field, expected one of `city`, `unit`"
    );
}

#[tokio::test]
async fn nested_mismatches_have_nested_paths() {
    let arguments = r#"{"stops":[{"city":"Paris","nights":2},{"city":"Lyon","nights":300}],"preferences":{"quiet":"yes"}}"#;
    let (content, is_error) = one_result("plan_route", arguments).await;
    assert!(is_error);
    assert_eq!(
        content,
        "Error: invalid arguments: stops.1.nights: invalid value: integer `300`, expected u8; \
         preferences.quiet: invalid type: string \"yes\", expected a boolean"
    );
}

#[tokio::test]
async fn null_is_none_for_an_option_and_an_error_for_a_required_field() {
    let none = ("unit: None, days: 3".to_owned(), false);
    assert_eq!(parse(r#"{"unit":null}"#).await, none);
    assert_eq!(parse("{}").await, none);
    assert_eq!(
        parse(r#"{"unit":"celsius"}"#).await,
        ("unit: Some(Celsius), days: 3".to_owned(), false)
    );
    let (content, is_error) = one_result("get_weather", r#"{"city":"北京","unit":null}"#).await;
    assert!(!is_error, "{content}");
    let (content, is_error) = one_result("get_weather", r#"{"city":null}"#).await;
    assert!(is_error);
    assert_eq!(
        content,
        "Error: invalid arguments: city: invalid type: null, expected a string"
    );
}

#[tokio::test]
async fn a_default_applies_when_the_model_leaves_it_out_or_sends_null() {
    assert_eq!(
        one_result("forecast", r#"{"city":"Oslo"}"#).await,
        ("Oslo: 3 days".to_owned(), false)
    );
    assert_eq!(
        one_result("forecast", r#"{"city":"Oslo","days":5}"#).await,
        ("Oslo: 5 days".to_owned(), false)
    );
    // OpenAI's strict mode makes optional parameters nullable, so `null` means "left out".
    assert_eq!(
        one_result("forecast", r#"{"city":"Oslo","days":null}"#).await,
        ("Oslo: 3 days".to_owned(), false)
    );
    assert_eq!(
        parse(r#"{"unit":"fahrenheit","days":null}"#).await,
        ("unit: Some(Fahrenheit), days: 3".to_owned(), false)
    );
    assert_eq!(
        parse(r#"{"days":5}"#).await,
        ("unit: None, days: 5".to_owned(), false)
    );
    assert_eq!(
        parse(r#"{"days":0}"#).await,
        ("unit: None, days: 0".to_owned(), false)
    );
    let (content, is_error) = one_result("forecast", r#"{"city":null,"days":null}"#).await;
    assert!(is_error);
    assert_eq!(
        content,
        "Error: invalid arguments: city: invalid type: null, expected a string"
    );
}

#[tokio::test]
async fn arguments_that_are_not_an_object_are_rejected() {
    let (content, is_error) = one_result("get_weather", r#"["北京"]"#).await;
    assert!(is_error);
    assert_eq!(
        content,
        "Error: invalid arguments: arguments: expected a JSON object of named arguments, got an array"
    );
}

#[tokio::test]
async fn a_duplicate_key_is_rejected_with_its_field() {
    let (content, is_error) = one_result("get_weather", r#"{"city":"北京","city":"上海"}"#).await;
    assert!(is_error);
    assert_eq!(
        content,
        "Error: invalid arguments: arguments: duplicate field `city`"
    );
}

#[tokio::test]
async fn a_tool_error_reaches_the_model() {
    let (content, is_error) = one_result("get_weather", r#"{"city":"Atlantis"}"#).await;
    assert!(is_error);
    assert_eq!(content, "Error: no weather station in Atlantis");
    assert_eq!(
        one_result("refuse", "{}").await,
        ("Error: not allowed today".to_owned(), true)
    );
}

#[tokio::test]
async fn a_panicking_tool_becomes_an_error_and_the_next_call_still_runs() {
    let output = run_fixture_calls(
        vec![
            call(0, "explode", r#"{"reason":"test"}"#),
            call(1, "now", "{}"),
        ],
        |agent| agent,
    )
    .await;
    let results = tool_results(&output);
    assert_eq!(results[0].content, "Error: the tool panicked: boom: test");
    assert!(results[0].is_error);
    assert_eq!(results[1].content, "12:00");
    assert_eq!(output.text, "final answer");
}

#[tokio::test]
async fn long_chinese_results_are_cut_at_a_character_with_a_marker() {
    let output = run_fixture_calls(
        vec![call(0, "repeat", r#"{"text":"北京🌧","times":5000}"#)],
        |agent| agent,
    )
    .await;
    let content = &tool_results(&output)[0].content;
    let (kept, marker) = content.split_at(content.find('\n').expect("a marker line"));
    assert_eq!(kept.chars().count(), 8000);
    assert!(kept.starts_with("北京🌧北京🌧"));
    assert_eq!(
        marker,
        "\n[result truncated: showing the first 8000 of 15000 characters]"
    );
}

#[tokio::test]
async fn the_result_limit_is_configurable() {
    let output = run_fixture_calls(
        vec![call(0, "repeat", r#"{"text":"雨","times":10}"#)],
        |agent| agent.result_limit(3),
    )
    .await;
    assert_eq!(
        tool_results(&output)[0].content,
        "雨雨雨\n[result truncated: showing the first 3 of 10 characters]"
    );
    let exact = run_fixture_calls(
        vec![call(0, "repeat", r#"{"text":"雨","times":3}"#)],
        |agent| agent.result_limit(3),
    )
    .await;
    assert_eq!(tool_results(&exact)[0].content, "雨雨雨");
}

#[tokio::test]
async fn chinese_texts_reproduce_the_reference_loop() {
    let calls = vec![
        call(0, "missing", "{}"),
        call(1, "get_weather", r#"{"city":42}"#),
        call(2, "get_weather", "{"),
        call(3, "get_weather", r#"{"city":"Atlantis"}"#),
        call(4, "remember", r#"{"note":"x"}"#),
        call(5, "repeat", r#"{"text":"雨","times":9000}"#),
        call(6, "get_weather", r#"["x"]"#),
    ];
    let output = run_fixture_calls(calls, |agent| agent.texts(Chinese)).await;
    let Message::System { content } = &output.messages[0] else {
        panic!("the history starts with the system prompt")
    };
    assert_eq!(
        content,
        "你是一个能使用工具的助手。工具出错时根据错误信息调整；无法完成时如实说明，不要编造结果。"
    );
    let results: Vec<&str> = tool_results(&output)
        .iter()
        .map(|result| result.content.as_str())
        .collect();
    assert_eq!(results[0], "不存在工具 missing");
    assert_eq!(
        results[1],
        "参数校验失败：city：类型不对：应为字符串，实际为 42"
    );
    assert_eq!(
        results[2],
        "出错：参数不是合法的 JSON：第 1 行第 1 列：对象还没结束，文本就结束了"
    );
    assert_eq!(results[3], "出错：no weather station in Atlantis");
    assert_eq!(results[4], "执行成功");
    assert_eq!(
        results[5],
        format!("{}\n（结果过长，已截断）", "雨".repeat(8000))
    );
    assert_eq!(
        results[6],
        "参数校验失败：参数：应为由具名参数组成的 JSON 对象，实际为数组"
    );
}
