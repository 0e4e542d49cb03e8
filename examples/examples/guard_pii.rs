//! A guard that redacts personal data from tool results: a `lookup_customer` tool returns a
//! customer's record with an email address, a phone number and a card number, and a guard on the
//! tools' results rewrites them to `[email]`, `[phone]` and `[card]` before the model reads the
//! result. The guard is plain code (`guard_fn`) with small hand-written matchers.
//!
//! `cargo run -p examples --example guard_pii` runs offline: a scripted model plays the LLM, looks
//! the customer up and answers; the example then reads every request the model was sent and
//! checks that none of them holds the email address, the phone number or the card number.
//!
//! With a provider in the environment it runs against the real model instead, e.g.
//! `OPENAI_API_KEY=... cargo run -p examples --example guard_pii` (see `providers::from_env`);
//! then the transcript the run kept (what the model was sent) is checked instead.

use agent_core::guard::{Checked, GuardFn, Verdict, What, guard_fn};
use agent_core::providers::from_env;
use agent_core::testing::ScriptedModel;
use agent_core::{AssistantMessage, Message, Model, RunError, RunOutput, ToolCall, agent, tool};
use serde::Serialize;

/// The customer the example looks up, and the personal data in the record.
const NAME: &str = "Ann Lee";
const EMAIL: &str = "ann.lee@example.com";
const PHONE: &str = "+1 415-555-0134";
const CARD: &str = "4111 1111 1111 1111";

/// A customer's record, as the company's database holds it.
#[derive(Serialize)]
struct Customer {
    name: String,
    email: &'static str,
    phone: &'static str,
    card: &'static str,
    plan: &'static str,
    customer_since: &'static str,
}

/// The record of `name` (every name has the same record here).
fn record_of(name: String) -> Customer {
    Customer {
        name,
        email: EMAIL,
        phone: PHONE,
        card: CARD,
        plan: "Pro, 3 seats",
        customer_since: "2021-03-14",
    }
}

/// Look a customer up by name: their contact details, payment card and plan.
#[tool(read_only, reads_private)]
fn lookup_customer(
    /// The customer's full name
    name: String,
) -> Customer {
    record_of(name)
}

/// The guard: every tool result is shown to it before the model reads it; a result with personal
/// data in it is rewritten, and any other result goes through as it is.
fn redact_pii() -> GuardFn<impl Fn(&Checked<'_>) -> Verdict + Send + Sync> {
    guard_fn("redact personal data", |checked| match &checked.what {
        What::Result { result, .. } => match redact(&result.content) {
            Some(redacted) => Verdict::Rewrite(redacted),
            None => Verdict::Allow,
        },
        _ => Verdict::Allow,
    })
}

/// `text` with every email address, phone number and card number replaced by `[email]`,
/// `[phone]` and `[card]`; `None` when it holds none of them.
fn redact(text: &str) -> Option<String> {
    let mut redacted = String::with_capacity(text.len());
    let mut found = false;
    let mut rest = text;
    while let Some(first) = rest.chars().next() {
        // A match starts only at the start of a word, never inside one.
        let at_word_start = !redacted.ends_with(|c: char| c.is_alphanumeric());
        let matched = match at_word_start {
            true => {
                (email_at(rest).map(|length| (length, Some("[email]")))).or_else(|| number_at(rest))
            }
            false => None,
        };
        match matched {
            Some((length, Some(label))) => {
                redacted.push_str(label);
                found = true;
                rest = &rest[length..];
            }
            // A number that is neither a phone nor a card number is kept whole, so that its
            // tail is not read as a shorter number.
            Some((length, None)) => {
                redacted.push_str(&rest[..length]);
                rest = &rest[length..];
            }
            None => {
                redacted.push(first);
                rest = &rest[first.len_utf8()..];
            }
        }
    }
    found.then_some(redacted)
}

/// The length in bytes of the email address `text` starts with, if it starts with one: a local
/// part, an `@`, and a domain of at least two labels (`example.com`).
fn email_at(text: &str) -> Option<usize> {
    let is_local = |c: char| c.is_ascii_alphanumeric() || "_.%+-".contains(c);
    let is_domain = |c: char| c.is_ascii_alphanumeric() || c == '.' || c == '-';
    let local = text.find(|c: char| !is_local(c)).unwrap_or(text.len());
    if local == 0 || !text[local..].starts_with('@') {
        return None;
    }
    let domain_start = local + 1;
    let domain = &text[domain_start..];
    let domain_length = domain.find(|c: char| !is_domain(c)).unwrap_or(domain.len());
    // A full stop after the address ends the sentence; it is not part of the domain.
    let domain = domain[..domain_length].trim_end_matches('.');
    let labels: Vec<&str> = domain.split('.').collect();
    if labels.len() < 2 || labels.iter().any(|label| label.is_empty()) {
        return None;
    }
    Some(domain_start + domain.len())
}

/// The number `text` starts with, if it starts with one: its length in bytes and what it is.
/// A number is digits with single separators between them (a space, `-` or `.`), perhaps a `+`
/// before it and an area code in brackets, as people write phone and card numbers. It is a card
/// number when it has 13 to 19 digits and passes the Luhn check cards carry, a phone number when
/// it has 10 to 15 digits, and neither otherwise (a year, a date, an amount).
fn number_at(text: &str) -> Option<(usize, Option<&'static str>)> {
    let bytes = text.as_bytes();
    // It starts with a digit, or with a `+` or a bracket just before one.
    let starts = match bytes {
        [first, ..] if first.is_ascii_digit() => true,
        [b'+' | b'(', second, ..] => second.is_ascii_digit(),
        _ => false,
    };
    if !starts {
        return None;
    }
    let mut end = 0;
    let mut digits = Vec::new();
    let mut index = usize::from(bytes[0] == b'+');
    while index < bytes.len() {
        let byte = bytes[index];
        if byte.is_ascii_digit() {
            digits.push(byte - b'0');
            index += 1;
            end = index;
            continue;
        }
        // A separator counts only with a digit after it: `(415) 555`, `415-555`, `4111 1111`.
        let after = bytes.get(index + 1).copied();
        let next_is_digit = after.is_some_and(|b| b.is_ascii_digit());
        let separates = match byte {
            b' ' | b'-' | b'.' => next_is_digit || (byte == b' ' && after == Some(b'(')),
            b'(' => next_is_digit,
            b')' => next_is_digit || after == Some(b' ') || after == Some(b'-'),
            _ => false,
        };
        if !separates {
            break;
        }
        index += 1;
    }
    let kind = match digits.len() {
        13..=19 if luhn(&digits) => Some("[card]"),
        10..=15 => Some("[phone]"),
        _ => None,
    };
    Some((end, kind))
}

/// The Luhn check: from the right, every second digit doubled (less 9 when over 9), and the sum
/// a multiple of 10. Every payment card number passes it.
fn luhn(digits: &[u8]) -> bool {
    let sum: u32 = (digits.iter().rev().enumerate())
        .map(|(place, &digit)| match place % 2 {
            1 if digit * 2 > 9 => u32::from(digit * 2 - 9),
            1 => u32::from(digit * 2),
            _ => u32::from(digit),
        })
        .sum();
    sum.is_multiple_of(10)
}

/// The offline stand-in for an LLM: it looks the customer up, then answers from what it read.
fn scripted_model() -> ScriptedModel {
    ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new(
            "call_1",
            "lookup_customer",
            r#"{"name":"Ann Lee"}"#,
        )]),
        AssistantMessage::text(
            "Ann Lee has been a customer since March 2021, on the Pro plan with 3 seats. Her \
             email, phone number and card are on file, but they are redacted for me, so I \
             cannot read them out.",
        ),
    ])
}

/// Runs the agent with `model`: the lookup's results go through the guard.
async fn run(model: impl Model + 'static) -> Result<RunOutput, RunError> {
    // `guard_results` adds the guard at `At::RESULTS`; it also answers for the tool's private
    // data, which `agent!` would otherwise ask about if a tool could send it out.
    let agent = agent!(model, lookup_customer; guard_results = redact_pii())
        .system("You are a support assistant. Answer from the customer's record.")
        .max_steps(5);
    agent.run(format!("What do we know about {NAME}?")).await
}

/// What the run did: each call, each result as the model read it, the answer.
fn render(output: &RunOutput) -> String {
    let mut text = String::new();
    for message in &output.messages {
        match message {
            Message::User { content, .. } => text.push_str(&format!("user:   {content}\n")),
            Message::Assistant(reply) if !reply.tool_calls.is_empty() => {
                for call in &reply.tool_calls {
                    text.push_str(&format!("call:   {} {}\n", call.name, call.arguments));
                }
            }
            Message::Tool(result) => {
                text.push_str(&format!("result: {}\n", result.content));
            }
            Message::Assistant(reply) => text.push_str(&format!("answer: {}\n", reply.content)),
            _ => {}
        }
    }
    text
}

/// The personal data of the record that `sent` (what the model was sent) holds.
fn leaked(sent: &str) -> Vec<&'static str> {
    [EMAIL, PHONE, CARD]
        .into_iter()
        .filter(|value| sent.contains(value))
        .collect()
}

/// One line on what the model was sent: `sent` is each request (or message), as JSON.
fn sent_report(what: &str, sent: &[String]) -> String {
    let leaks: Vec<&str> = sent.iter().flat_map(|sent| leaked(sent)).collect();
    match leaks.is_empty() {
        true => format!(
            "{} {what}, none with the email address, the phone number or the card number",
            sent.len()
        ),
        false => format!("the model was sent {}", leaks.join(", ")),
    }
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    match choose_model_and_run().await {
        Ok(printed) => {
            print!("{printed}");
            std::process::ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Runs against the model the environment names, or offline when it names none, and checks that
/// the personal data never reached the model.
async fn choose_model_and_run() -> Result<String, Box<dyn std::error::Error>> {
    let raw = serde_json::to_string(&record_of(NAME.to_owned()))?;
    let mut printed = format!("lookup_customer returns: {raw}\n");
    let report = match from_env()? {
        Some(model) => {
            println!("(model: {model})");
            let output = run(model).await?;
            printed.push_str(&render(&output));
            // What the run kept is what each request was built from.
            let messages: Vec<String> = (output.messages.iter())
                .map(serde_json::to_string)
                .collect::<Result<_, _>>()?;
            sent_report("messages kept", &messages)
        }
        None => {
            println!("(offline: no AGENT_MODEL or API key set, so a scripted model plays the LLM)");
            let model = scripted_model();
            let output = run(model.clone()).await?;
            printed.push_str(&render(&output));
            let requests: Vec<String> = (model.requests().iter())
                .map(serde_json::to_string)
                .collect::<Result<_, _>>()?;
            sent_report("requests to the model", &requests)
        }
    };
    printed.push_str(&format!("sent:   {report}\n"));
    if report.starts_with("the model was sent") {
        return Err(report.into());
    }
    Ok(printed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_model_never_reads_the_personal_data() {
        let model = scripted_model();
        let output = run(model.clone()).await.unwrap();
        assert_eq!(
            render(&output),
            "\
user:   What do we know about Ann Lee?
call:   lookup_customer {\"name\":\"Ann Lee\"}
result: {\"name\":\"Ann Lee\",\"email\":\"[email]\",\"phone\":\"[phone]\",\"card\":\"[card]\",\"plan\":\"Pro, 3 seats\",\"customer_since\":\"2021-03-14\"}
answer: Ann Lee has been a customer since March 2021, on the Pro plan with 3 seats. Her email, phone number and card are on file, but they are redacted for me, so I cannot read them out.
"
        );
        let requests = model.requests();
        assert_eq!(requests.len(), 2);
        // The second request carries the result, redacted.
        let second = serde_json::to_string(&requests[1]).unwrap();
        assert!(second.contains("[card]"), "{second}");
        let sent: Vec<String> = (requests.iter())
            .map(|request| serde_json::to_string(request).unwrap())
            .collect();
        assert_eq!(
            sent_report("requests to the model", &sent),
            "2 requests to the model, none with the email address, the phone number or the card number"
        );
    }

    #[test]
    fn the_matchers_find_each_kind_and_leave_the_rest() {
        let cases = [
            ("write to ann.lee@example.com.", "write to [email]."),
            ("a@b.co and x.y+z@mail.example.org", "[email] and [email]"),
            ("call +1 415-555-0134 today", "call [phone] today"),
            ("call (415) 555-0134", "call [phone]"),
            ("or 020 7946 0958", "or [phone]"),
            ("card 4111 1111 1111 1111", "card [card]"),
            ("card 5500-0000-0000-0004, ok", "card [card], ok"),
            ("card 378282246310005", "card [card]"),
        ];
        for (text, expected) in cases {
            assert_eq!(redact(text).as_deref(), Some(expected), "{text}");
        }
        // Not personal data: a date, a year, an amount, a handle, a number inside a word, and a
        // 16-digit number that fails the card check.
        for text in [
            "since 2021-03-14",
            "in 2021, 3 seats at 49.90 each",
            "@support on the forum; mail me@home",
            "order A41111111111111111",
            "id 1234 5678 9012 3456",
        ] {
            assert_eq!(redact(text), None, "{text}");
        }
    }
}
