//! The one repair of a stored or given history before a run sends it: every call of a reply is
//! answered, so a provider accepts the request. A reply whose calls have no results (its run
//! stopped after the reply was kept: its process died, its future was dropped) gets one result
//! per missing call, saying the run stopped before its result was recorded: it may have started
//! and had its effect, or not have run at all (nothing recorded says which), in the run's words.

use crate::message::{Message, ToolResultMessage};
use crate::reasons::tool_error::{Interruption, ToolError};
use crate::tool::dispatcher::ToolSet;

/// Answers every unanswered call in `messages`, each right after the results its reply has.
/// Returns the positions, in the repaired history, of the results put among its messages (before
/// the last message as given: a repair of its last reply only adds at the end).
pub(crate) fn answer_every_call<S: Send + Sync + 'static>(
    messages: &mut Vec<Message>,
    tools: &ToolSet<S>,
) -> Vec<usize> {
    let mut inserted_before_end = Vec::new();
    let mut index = 0;
    while index < messages.len() {
        let Message::Assistant(reply) = &messages[index] else {
            index += 1;
            continue;
        };
        // The results that follow the reply.
        let mut end = index + 1;
        while matches!(messages.get(end), Some(Message::Tool(_))) {
            end += 1;
        }
        let answered = |id: &str| {
            messages[index + 1..end].iter().any(
                |message| matches!(message, Message::Tool(result) if result.tool_call_id == id),
            )
        };
        let missing: Vec<ToolResultMessage> = reply
            .tool_calls
            .iter()
            .filter(|call| !answered(&call.id))
            .map(|call| {
                let error = ToolError::Interrupted {
                    by: Interruption::Unrecorded,
                };
                tools.result_message(call, Err(error))
            })
            .collect();
        let added = missing.len();
        if end < messages.len() {
            inserted_before_end.extend(end..end + added);
        }
        messages.splice(end..end, missing.into_iter().map(Message::Tool));
        index = end + added;
    }
    inserted_before_end
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{AssistantMessage, ToolCall};
    use crate::{Chinese, Texts};

    fn reply(ids: &[&str]) -> Message {
        let calls = ids.iter().map(|id| ToolCall::new(*id, "pay", "{}"));
        Message::Assistant(AssistantMessage::tool_calls(calls))
    }

    fn result(id: &str) -> Message {
        Message::Tool(ToolResultMessage::new(id, "paid"))
    }

    fn answered_ids(messages: &[Message]) -> Vec<&str> {
        messages
            .iter()
            .filter_map(|message| match message {
                Message::Tool(result) => Some(result.tool_call_id.as_str()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_last_reply_without_results_is_answered_at_the_end() {
        let tools: ToolSet = ToolSet::new();
        let mut messages = vec![Message::user("pay"), reply(&["a", "b"]), result("a")];
        let before_end = answer_every_call(&mut messages, &tools);
        assert!(before_end.is_empty());
        assert_eq!(answered_ids(&messages), ["a", "b"]);
        let Message::Tool(added) = &messages[3] else {
            panic!()
        };
        assert!(added.is_error);
        // Whether it had started is not known: the model is told it may or may not have run.
        assert!(
            added.content.contains("may have started") && added.content.contains("not have run"),
            "{}",
            added.content
        );
    }

    #[test]
    fn a_reply_in_the_middle_is_answered_in_place_in_the_runs_language() {
        let mut tools: ToolSet = ToolSet::new();
        tools.set_texts(std::sync::Arc::new(Chinese));
        let mut messages = vec![
            reply(&["a"]),
            Message::user("again"),
            reply(&["b"]),
            result("b"),
        ];
        let before_end = answer_every_call(&mut messages, &tools);
        assert_eq!(before_end, [1]);
        assert_eq!(answered_ids(&messages), ["a", "b"]);
        assert!(matches!(&messages[1], Message::Tool(result) if result.tool_call_id == "a"));
        let Message::Tool(added) = &messages[1] else {
            panic!()
        };
        assert!(
            added.content.contains("也可能根本没有执行"),
            "{}",
            added.content
        );
        assert!(!Chinese.run_stopped().is_empty());
    }

    #[test]
    fn a_whole_history_is_left_as_it_is() {
        let tools: ToolSet = ToolSet::new();
        let mut messages = vec![reply(&["a"]), result("a"), Message::user("thanks")];
        let whole = messages.clone();
        assert!(answer_every_call(&mut messages, &tools).is_empty());
        assert_eq!(messages, whole);
    }
}
