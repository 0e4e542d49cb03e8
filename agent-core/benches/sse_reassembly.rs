//! Reassembling a streamed reply per vendor: a server-sent-event body of 200 text deltas and a
//! tool call whose arguments come in 20 fragments, read by the adapter's own stream reader (SSE
//! framing, JSON per event, the reply built up) as it arrives in pieces of 1 byte, 64 bytes, or
//! whole. The floor: `serde_json` parsing the same events' data payloads, one after another from
//! one buffer, into `Value`s. Throughput is in bytes of the body.
//!
//! `cargo bench -p agent-core --features bench-internals --bench sse_reassembly`

use agent_core::providers::__bench;
use divan::Bencher;
use divan::counter::BytesCount;

fn main() {
    divan::main();
}

const DELTAS: usize = 200;
const FRAGMENTS: usize = 20;

/// A word of the answer, different enough each time.
fn word(index: usize) -> String {
    format!("word{index} ")
}

/// The call's arguments, in fragments that only make JSON together.
fn fragments() -> Vec<String> {
    let arguments = format!(
        r#"{{"city":"Beijing","note":"{}"}}"#,
        "x".repeat(4 * FRAGMENTS)
    );
    let size = arguments.len().div_ceil(FRAGMENTS);
    arguments
        .as_bytes()
        .chunks(size)
        .map(|chunk| String::from_utf8(chunk.to_vec()).expect("ASCII"))
        .collect()
}

fn escape(text: &str) -> String {
    serde_json::to_string(text).expect("a string")
}

fn openai_body() -> String {
    let chunk = |delta: String, finish: &str| {
        format!(
            "data: {{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-test\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":{finish}}}]}}\n\n"
        )
    };
    let mut body = chunk(r#"{"role":"assistant","content":""}"#.to_owned(), "null");
    for index in 0..DELTAS {
        body += &chunk(format!(r#"{{"content":{}}}"#, escape(&word(index))), "null");
    }
    for (index, fragment) in fragments().iter().enumerate() {
        let head = if index == 0 {
            r#""id":"call_1","type":"function","function":{"name":"get_weather","arguments":"#
        } else {
            r#""function":{"arguments":"#
        };
        let delta = format!(
            r#"{{"tool_calls":[{{"index":0,{head}{}}}}}]}}"#,
            escape(fragment)
        );
        body += &chunk(delta, "null");
    }
    body += &chunk("{}".to_owned(), "\"tool_calls\"");
    body += "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-test\",\"choices\":[],\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":400,\"total_tokens\":450}}\n\n";
    body += "data: [DONE]\n\n";
    body
}

fn anthropic_body() -> String {
    let event = |kind: &str, data: String| format!("event: {kind}\ndata: {data}\n\n");
    let mut body = event(
        "message_start",
        r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-test","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":50,"output_tokens":1}}}"#.to_owned(),
    );
    body += &event(
        "content_block_start",
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#
            .to_owned(),
    );
    for index in 0..DELTAS {
        body += &event(
            "content_block_delta",
            format!(
                r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":{}}}}}"#,
                escape(&word(index))
            ),
        );
    }
    body += &event(
        "content_block_stop",
        r#"{"type":"content_block_stop","index":0}"#.to_owned(),
    );
    body += &event(
        "content_block_start",
        r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}}"#.to_owned(),
    );
    for fragment in fragments() {
        body += &event(
            "content_block_delta",
            format!(
                r#"{{"type":"content_block_delta","index":1,"delta":{{"type":"input_json_delta","partial_json":{}}}}}"#,
                escape(&fragment)
            ),
        );
    }
    body += &event(
        "content_block_stop",
        r#"{"type":"content_block_stop","index":1}"#.to_owned(),
    );
    body += &event(
        "message_delta",
        r#"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":400}}"#.to_owned(),
    );
    body += &event("message_stop", r#"{"type":"message_stop"}"#.to_owned());
    body
}

fn gemini_body() -> String {
    let chunk = |parts: String, finish: &str| {
        format!(
            "data: {{\"candidates\":[{{\"content\":{{\"parts\":[{parts}],\"role\":\"model\"}}{finish},\"index\":0}}],\"usageMetadata\":{{\"promptTokenCount\":50,\"candidatesTokenCount\":400,\"totalTokenCount\":450}},\"modelVersion\":\"gemini-test\"}}\r\n\r\n"
        )
    };
    let mut body = String::new();
    for index in 0..DELTAS {
        body += &chunk(format!(r#"{{"text":{}}}"#, escape(&word(index))), "");
    }
    // Gemini sends a call whole, in one part.
    let arguments: String = fragments().concat();
    body += &chunk(
        format!(r#"{{"functionCall":{{"name":"get_weather","args":{arguments}}}}}"#),
        r#","finishReason":"STOP""#,
    );
    body
}

fn responses_body() -> String {
    let mut sequence = 0;
    let mut event = |kind: &str, rest: String| {
        sequence += 1;
        format!(
            "event: {kind}\ndata: {{\"type\":\"{kind}\",\"sequence_number\":{sequence}{rest}}}\n\n"
        )
    };
    let text: String = (0..DELTAS).map(word).collect();
    let arguments: String = fragments().concat();
    let mut body = event(
        "response.created",
        r#","response":{"id":"resp_1","object":"response","status":"in_progress","output":[]}"#
            .to_owned(),
    );
    body += &event(
        "response.output_item.added",
        r#","output_index":0,"item":{"type":"message","id":"msg_1","status":"in_progress","role":"assistant","content":[]}"#.to_owned(),
    );
    for index in 0..DELTAS {
        body += &event(
            "response.output_text.delta",
            format!(
                r#","item_id":"msg_1","output_index":0,"content_index":0,"delta":{},"logprobs":[]"#,
                escape(&word(index))
            ),
        );
    }
    let message = format!(
        r#"{{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{{"type":"output_text","text":{},"annotations":[]}}]}}"#,
        escape(&text)
    );
    body += &event(
        "response.output_item.done",
        format!(r#","output_index":0,"item":{message}"#),
    );
    body += &event(
        "response.output_item.added",
        r#","output_index":1,"item":{"type":"function_call","id":"fc_1","status":"in_progress","call_id":"call_1","name":"get_weather","arguments":""}"#.to_owned(),
    );
    for fragment in fragments() {
        body += &event(
            "response.function_call_arguments.delta",
            format!(
                r#","item_id":"fc_1","output_index":1,"delta":{}"#,
                escape(&fragment)
            ),
        );
    }
    let call = format!(
        r#"{{"type":"function_call","id":"fc_1","status":"completed","call_id":"call_1","name":"get_weather","arguments":{}}}"#,
        escape(&arguments)
    );
    body += &event(
        "response.output_item.done",
        format!(r#","output_index":1,"item":{call}"#),
    );
    body += &event(
        "response.completed",
        format!(
            r#","response":{{"id":"resp_1","object":"response","status":"completed","model":"gpt-test","output":[{message},{call}],"usage":{{"input_tokens":50,"output_tokens":400,"total_tokens":450}}}}"#
        ),
    );
    body
}

/// The data payloads of a body's events, one per line, in one buffer: what the floor parses.
fn payloads(body: &str) -> String {
    body.lines()
        .filter_map(|line| line.trim_end().strip_prefix("data: "))
        .filter(|data| *data != "[DONE]")
        .map(|data| format!("{data}\n"))
        .collect()
}

/// `body` in pieces of `size` bytes (0: whole), kept for the whole run, so that no iteration
/// copies them.
fn pieces(body: &str, size: usize) -> &'static [&'static [u8]] {
    let body: &'static [u8] = Box::leak(body.as_bytes().to_vec().into_boxed_slice());
    let pieces: Vec<&'static [u8]> = if size == 0 {
        vec![body]
    } else {
        body.chunks(size).collect()
    };
    Box::leak(pieces.into_boxed_slice())
}

type Reader =
    fn(&'static [&'static [u8]]) -> Vec<Result<agent_core::StreamEvent, agent_core::ModelError>>;

const VENDORS: &[&str] = &["openai", "anthropic", "gemini", "openai_responses"];

fn vendor(name: &str) -> (String, Reader) {
    match name {
        "openai" => (openai_body(), __bench::openai_stream),
        "anthropic" => (anthropic_body(), __bench::anthropic_stream),
        "gemini" => (gemini_body(), __bench::gemini_stream),
        _ => (responses_body(), __bench::openai_responses_stream),
    }
}

#[divan::bench(args = VENDORS)]
fn floor_serde_payloads(bencher: Bencher, name: &str) {
    let (body, _) = vendor(name);
    let payloads = payloads(&body);
    bencher
        .counter(BytesCount::new(body.len()))
        .bench_local(|| {
            serde_json::Deserializer::from_str(&payloads)
                .into_iter::<serde_json::Value>()
                .map(|value| value.expect("valid JSON"))
                .collect::<Vec<_>>()
        });
}

fn reassemble(bencher: Bencher, name: &str, size: usize) {
    let (body, read) = vendor(name);
    let pieces = pieces(&body, size);
    let events = read(pieces);
    assert!(
        matches!(
            events.last(),
            Some(Ok(agent_core::StreamEvent::Finished(_)))
        ),
        "{name}: {:?}",
        events.last()
    );
    bencher
        .counter(BytesCount::new(body.len()))
        .bench_local(|| read(pieces));
}

#[divan::bench(args = VENDORS)]
fn whole(bencher: Bencher, name: &str) {
    reassemble(bencher, name, 0);
}

#[divan::bench(args = VENDORS)]
fn pieces_of_64_bytes(bencher: Bencher, name: &str) {
    reassemble(bencher, name, 64);
}

#[divan::bench(args = VENDORS)]
fn pieces_of_1_byte(bencher: Bencher, name: &str) {
    reassemble(bencher, name, 1);
}
