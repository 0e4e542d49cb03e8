//! Per-run context: one agent, built once, runs for many users at once, and every tool call, hook
//! and approval of a run sees that run's own context; a context bound at build time keeps working.

use std::sync::{Arc, Mutex};

use agent_core::{
    Agent, Approval, Approver, AssistantMessage, BoxFuture, ChatRequest, ChatResponse, FromRef,
    Hooks, Message, Model, ModelError, State, ToolCall, ToolDef, ToolResultMessage, agent, tool,
};

/// Who a run is for.
#[derive(Clone, Debug, PartialEq)]
struct UserId(u64);

/// What a request brings: the user, and a shared service handle.
#[derive(Clone)]
struct RequestContext {
    user: UserId,
    greeting: Arc<str>,
}

impl FromRef<RequestContext> for UserId {
    fn from_ref(context: &RequestContext) -> Self {
        context.user.clone()
    }
}

/// Says who is asking.
#[tool]
async fn whoami(State(user): State<UserId>) -> String {
    // Interleave the runs: a task switch between taking the context and answering.
    tokio::task::yield_now().await;
    format!("user {}", user.0)
}

/// Greets the user the way the service is set up to.
#[tool]
fn greet(State(context): State<RequestContext>) -> String {
    format!("{} {}", context.greeting, context.user.0)
}

/// A model that calls `whoami` on a fresh question and answers with the tool's result after it:
/// each conversation is answered by its own history, so concurrent runs cannot share a script.
struct EchoesTheTool;

impl Model for EchoesTheTool {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let reply = match request.messages.last() {
            Some(Message::Tool(result)) => AssistantMessage::text(result.content.clone()),
            _ => AssistantMessage::tool_calls([ToolCall::new("who", "whoami", "{}")]),
        };
        Box::pin(async move { Ok(ChatResponse::new(reply)) })
    }
}

/// Records, for every tool result, the user its run was for.
#[derive(Clone, Default)]
struct SeenBy(Arc<Mutex<Vec<(u64, String)>>>);

impl Hooks<RequestContext> for SeenBy {
    fn on_tool_result(
        &self,
        context: &RequestContext,
        _call: &ToolCall,
        result: &ToolResultMessage,
        _elapsed: std::time::Duration,
    ) {
        let seen = (context.user.0, result.content.clone());
        self.0.lock().unwrap().push(seen);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_thousand_concurrent_runs_of_one_agent_each_see_their_own_user() {
    let seen = SeenBy::default();
    let agent: Arc<Agent<RequestContext>> =
        Arc::new(agent!(EchoesTheTool, whoami).hook(seen.clone()));
    let greeting: Arc<str> = Arc::from("hello");
    let runs = (0..1000u64).map(|id| {
        let agent = Arc::clone(&agent);
        let context = RequestContext {
            user: UserId(id),
            greeting: Arc::clone(&greeting),
        };
        tokio::spawn(async move {
            let out = agent.run("Who am I?").context(&context).await.unwrap();
            (id, out.text)
        })
    });
    let answers = futures_util::future::join_all(runs).await;
    for answer in answers {
        let (id, text) = answer.unwrap();
        assert_eq!(text, format!("user {id}"));
    }
    let mut seen = seen.0.lock().unwrap().clone();
    assert_eq!(seen.len(), 1000);
    seen.sort();
    for (index, (id, content)) in seen.iter().enumerate() {
        assert_eq!(*id, index as u64);
        assert_eq!(
            content,
            &format!("user {id}"),
            "the hook saw its own run's user"
        );
    }
}

/// Approves only the calls of user 1.
struct OnlyUserOne;

impl Approver<UserId> for OnlyUserOne {
    fn approve<'a>(
        &'a self,
        user: &'a UserId,
        _call: &'a ToolCall,
        _tool: &'a ToolDef,
    ) -> BoxFuture<'a, Approval> {
        let approval = if user.0 == 1 {
            Approval::Approve
        } else {
            Approval::Deny {
                reason: Some(format!("user {} may not", user.0)),
            }
        };
        Box::pin(async move { approval })
    }
}

/// Deletes the user's data.
#[tool(requires_approval)]
fn delete_my_data(State(user): State<UserId>) -> String {
    format!("deleted the data of user {}", user.0)
}

#[tokio::test]
async fn the_approver_decides_by_the_runs_context() {
    let call = || ToolCall::new("del", "delete_my_data", "{}");
    let model = agent_core::testing::ScriptedModel::new([
        AssistantMessage::tool_calls([call()]),
        AssistantMessage::text("done"),
        AssistantMessage::tool_calls([call()]),
        AssistantMessage::text("done"),
    ]);
    let agent: Agent<UserId> = agent!(model, delete_my_data).approve_with(OnlyUserOne);
    let first = agent
        .run("Delete my data")
        .context(&UserId(1))
        .await
        .unwrap();
    let second = agent
        .run("Delete my data")
        .context(&UserId(2))
        .await
        .unwrap();
    assert_eq!(
        tests::tool_results(&first)[0].content,
        "deleted the data of user 1"
    );
    assert_eq!(
        tests::tool_results(&second)[0].content,
        "Error: the call was not run: the user did not approve this call: user 2 may not"
    );
}

#[tokio::test]
async fn a_context_bound_at_build_time_reaches_tools_and_hooks_as_before() {
    let seen = SeenBy::default();
    let model = tests::model_calling([ToolCall::new("g", "greet", "{}")], "done");
    let agent = agent!(model, greet)
        .hook(seen.clone())
        .bind_context(RequestContext {
            user: UserId(5),
            greeting: Arc::from("welcome"),
        });
    let out = agent.run("Greet me").await.unwrap();
    assert_eq!(tests::tool_results(&out)[0].content, "welcome 5");
    assert_eq!(
        *seen.0.lock().unwrap(),
        [(5, "welcome 5".to_owned())],
        "the hook was handed the bound context"
    );
}

#[tokio::test]
async fn tools_taking_parts_of_the_context_and_the_whole_run_side_by_side() {
    let model = agent_core::testing::ScriptedModel::new([
        AssistantMessage::tool_calls([
            ToolCall::new("a", "whoami", "{}"),
            ToolCall::new("b", "greet", "{}"),
        ]),
        AssistantMessage::text("done"),
    ]);
    let agent: Agent<RequestContext> = agent!(model, whoami, greet);
    let context = RequestContext {
        user: UserId(42),
        greeting: Arc::from("hi"),
    };
    let out = agent.run("Who and hello").context(&context).await.unwrap();
    let results = tests::tool_results(&out);
    assert_eq!(results[0].content, "user 42");
    assert_eq!(results[1].content, "hi 42");
}
