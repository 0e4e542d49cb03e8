//! Every cut of a history a shape can ask for gives one a provider accepts.

use std::collections::HashSet;

use super::*;
use crate::message::{AssistantMessage, Message, ToolCall, ToolResultMessage};
use crate::model::ChatRequest;
use crate::texts::{English, Texts};

/// A history with every kind of unit: system prompts, turns of plain replies, replies with one
/// and with several calls, a result that answers no reply before it, and a reply whose call waits.
fn history() -> Vec<Message> {
    let call = |id: &str| ToolCall::new(id, "look", r#"{"q":"x"}"#);
    vec![
        Message::system("Be brief."),
        Message::user("first question"),
        Message::Assistant(AssistantMessage::text("first answer")),
        Message::user("second question"),
        Message::Assistant(AssistantMessage::tool_calls([call("a")])),
        Message::Tool(ToolResultMessage::new("a", "result a, which is long")),
        Message::Assistant(AssistantMessage::tool_calls([call("b"), call("c")])),
        Message::Tool(ToolResultMessage::new("c", "result c")),
        Message::Tool(ToolResultMessage::new("b", "result b")),
        Message::Assistant(AssistantMessage::text("second answer")),
        Message::system("A reminder."),
        Message::user("third question"),
        Message::Assistant(AssistantMessage::tool_calls([call("d")])),
        Message::Tool(ToolResultMessage::new("d", "result d")),
        Message::Tool(ToolResultMessage::new("stray", "a result of no call here")),
        Message::Assistant(AssistantMessage::tool_calls([call("e"), call("f")])),
        Message::Tool(ToolResultMessage::new("e", "result e")),
        Message::user("fourth question"),
        Message::Assistant(AssistantMessage::text("fourth answer")),
    ]
}

fn turns(messages: &[Message]) -> Turns<'_> {
    Turns::new(&ChatRequest::new(messages, &[]))
}

/// What a provider checks: every call of a reply answered (save a reply whose calls wait, as the
/// original had it), and every result after a reply that has its call, unless it was so in the
/// original.
fn assert_accepted(original: &[Message], sent: &[Message]) {
    let stray: HashSet<&str> = HashSet::from(["stray"]);
    let mut open: Vec<&str> = Vec::new();
    let mut called: HashSet<&str> = HashSet::new();
    for message in sent {
        match message {
            Message::Assistant(reply) => {
                assert!(
                    open.is_empty() || open == ["f"],
                    "calls {open:?} unanswered before a reply in {sent:#?}"
                );
                open = reply
                    .tool_calls
                    .iter()
                    .map(|call| call.id.as_str())
                    .collect();
                called.extend(open.iter().copied());
            }
            Message::Tool(result) => {
                let id = result.tool_call_id.as_str();
                assert!(
                    called.contains(id) || stray.contains(id),
                    "result {id} without its call in {sent:#?}"
                );
                open.retain(|open| *open != id);
            }
            _ => {}
        }
    }
    // Every system message is kept, and the last message is the original's last.
    let systems = |messages: &[Message]| {
        messages
            .iter()
            .filter(|message| matches!(message, Message::System { .. }))
            .count()
    };
    assert_eq!(systems(sent), systems(original));
    assert_eq!(sent.last(), original.last());
}

#[test]
fn the_units_of_a_history() {
    let messages = history();
    let turns = turns(&messages);
    let kinds: Vec<UnitKind> = turns.units().iter().map(|unit| unit.kind).collect();
    use UnitKind::*;
    assert_eq!(
        kinds,
        [
            System, User, Step, User, Step, Step, Step, System, User, Step, Waiting, User, Step
        ]
    );
    // The stray result goes with the step before it; the waiting reply holds its one result.
    assert_eq!(turns.units()[9].messages, 12..15);
    assert_eq!(turns.units()[10].messages, 15..17);
    assert_eq!(turns.turn_starts().collect::<Vec<_>>(), [1, 3, 8, 11]);
    assert!(turns.tokens() > 0);
}

#[test]
fn every_cut_with_or_without_a_summary_and_notes_is_accepted() {
    let messages = history();
    let turns = turns(&messages);
    let units = turns.units().len();
    for first in 0..=units + 1 {
        for summary in [None, Some("they asked three questions")] {
            for shortened in [vec![], (0..units).collect::<Vec<_>>()] {
                let mut shape = Shape::from_unit(first).shortening(shortened);
                shape.summary = summary.map(Summary::from);
                let sent = turns.apply(&shape, &English);
                assert_accepted(&messages, &sent);
                // Nothing from the waiting reply on is ever left out.
                assert!(sent.ends_with(&messages[15..]));
            }
        }
    }
}

#[test]
fn a_cut_inside_a_turn_keeps_its_question() {
    let messages = history();
    let turns = turns(&messages);
    // From the second step of the second turn.
    let sent = turns.apply(&Shape::from_unit(5), &English);
    assert_eq!(sent[0], messages[0]);
    assert_eq!(sent[1], Message::user("second question"));
    assert_eq!(sent[2], messages[6]);
    // A summary stands for what was left out instead.
    let sent = turns.apply(&Shape::from_unit(5).with_summary("earlier"), &English);
    assert_eq!(sent[1], Message::user(English.context_summary("earlier")));
    assert_eq!(sent[2], messages[6]);
    // The tokens of a cut count the question too.
    assert!(turns.tokens_from(5) > turns.units()[5..].iter().map(|unit| unit.tokens).sum());
}

#[test]
fn a_cut_never_passes_a_waiting_reply() {
    let messages = history();
    let turns = turns(&messages);
    assert_eq!(turns.earliest_cut(12), 10);
    let sent = turns.apply(&Shape::from_unit(12), &English);
    // The question of the waiting reply's turn, the reply, and all after it.
    assert_eq!(sent[2], Message::user("third question"));
    assert!(sent.ends_with(&messages[15..]));
}

#[test]
fn shortened_results_keep_their_calls() {
    let messages = history();
    let turns = turns(&messages);
    let sent = turns.apply(&Shape::everything().shortening([4, 10]), &English);
    assert_eq!(sent.len(), messages.len());
    let Message::Tool(result) = &sent[5] else {
        panic!("{:?}", sent[5]);
    };
    assert_eq!(
        result.content,
        English.result_left_out(23, "a", RECALL_TOOL)
    );
    // A waiting reply's results are sent as they are.
    assert_eq!(sent[16], messages[16]);
    assert!(turns.result_tokens(4) > 0);
    assert_eq!(turns.result_tokens(2), 0);
}

#[tokio::test]
async fn the_policies_keep_what_they_say() {
    let messages = history();
    let turns = turns(&messages);
    let shape = KeepLastTurns(2).shape(&turns).await.unwrap();
    assert_eq!(shape, Shape::from_unit(8));
    assert_eq!(
        KeepLastTurns(9).shape(&turns).await.unwrap(),
        Shape::everything()
    );
    let all = turns.tokens();
    assert_eq!(
        TokenWindow::new(all).shape(&turns).await.unwrap(),
        Shape::everything()
    );
    let last_two = turns.tokens_from(8);
    assert_eq!(
        TokenWindow::new(last_two).shape(&turns).await.unwrap(),
        Shape::from_unit(8)
    );
    // Too small for any whole turn: the last replies that fit, with their question; never past
    // the waiting reply.
    let shape = TokenWindow::new(turns.tokens_from(12))
        .shape(&turns)
        .await
        .unwrap();
    assert_eq!(shape, Shape::from_unit(10));
    // With notes first: a request over the window is brought to half of it (room to grow, so
    // the next requests keep its prefix), its oldest results sent as notes before turns are left
    // out, so it keeps at least the turns a cut alone keeps. (Here the waiting reply holds the
    // cut, and a note is about as long as the result it stands for: the same cut.)
    let window = all - turns.result_tokens(4);
    let noted = TokenWindow::new(window)
        .shortening_results()
        .shape(&turns)
        .await
        .unwrap();
    let cut = TokenWindow::new(window).shape(&turns).await.unwrap();
    assert!(noted.keep_from <= cut.keep_from, "{noted:?} {cut:?}");
}
