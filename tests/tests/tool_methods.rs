//! Tools from methods: `#[tool]` on an impl block makes each of its `#[tool]` methods a tool that
//! calls the method on one shared value, and the value a `ToolBox` an agent takes.

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use agent_core::testing::ScriptedModel;
use agent_core::{Agent, AssistantMessage, State, ToolBox, ToolSet, ToolSetError, tool, tools};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tests::{call, model_calling, tool_results};

/// An issue, as the fake tracker returns it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Issue {
    /// The issue's number
    pub id: u64,
    /// Its title
    pub title: String,
}

/// Why a search failed.
#[derive(Debug)]
pub struct SearchError(String);

impl fmt::Display for SearchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the search failed: {}", self.0)
    }
}

/// Who the agent works for: a part of its context.
#[derive(Clone)]
struct Viewer(String);

/// An issue tracker's client: what a real one holds (a connection, a token), here in memory.
struct Tracker {
    issues: Vec<Issue>,
    comments: Mutex<Vec<String>>,
    calls: AtomicUsize,
}

impl Tracker {
    fn new() -> Self {
        Tracker {
            issues: vec![
                Issue {
                    id: 1,
                    title: "Crash on start".to_owned(),
                },
                Issue {
                    id: 2,
                    title: "Slow start".to_owned(),
                },
                Issue {
                    id: 3,
                    title: "Typo in docs".to_owned(),
                },
            ],
            comments: Mutex::new(Vec::new()),
            calls: AtomicUsize::new(0),
        }
    }
}

#[tool]
impl Tracker {
    /// The most hits a search returns unless told otherwise.
    const DEFAULT_LIMIT: usize = 10;

    /// Search issues by a word in their titles.
    #[tool(read_only, timeout = "5s")]
    async fn search(
        &self,
        /// A word the title contains
        word: String,
        /// How many hits at most
        #[arg(default = Self::DEFAULT_LIMIT)]
        limit: usize,
    ) -> Result<Vec<Issue>, SearchError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if word.is_empty() {
            return Err(SearchError("the word is empty".to_owned()));
        }
        Ok(self
            .issues
            .iter()
            .filter(|issue| issue.title.contains(&word))
            .take(limit)
            .cloned()
            .collect())
    }

    /// Get one issue by its number.
    ///
    /// # Arguments
    ///
    /// * `id` - The issue's number
    #[tool(name = "get_issue", idempotent)]
    fn get(&self, id: u64) -> Result<Issue, String> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.issues
            .iter()
            .find(|issue| issue.id == id)
            .cloned()
            .ok_or_else(|| format!("there is no issue {id}"))
    }

    /// Comment on an issue, signed by the person the agent works for.
    #[tool(inline)]
    fn comment(
        &self,
        State(viewer): State<Viewer>,
        /// The issue's number
        id: u64,
        /// What to say
        text: String,
    ) {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let mut comments = self.comments.lock().unwrap();
        comments.push(format!("#{id} {}: {text}", viewer.0));
    }

    /// Count the calls of this tracker's tools so far.
    #[tool]
    async fn count_calls(self: Arc<Self>) -> String {
        // An owned handle outlives the call: a task spawned with it could go on after.
        let tracker = Arc::clone(&self);
        format!("{} calls", tracker.calls.load(Ordering::SeqCst))
    }

    /// Tell today's date (the tracker is not needed for that).
    #[tool(inline)]
    fn today() -> &'static str {
        "2024-05-01"
    }

    /// Not a tool: an ordinary method, left as it is.
    fn comments(&self) -> Vec<String> {
        self.comments.lock().unwrap().clone()
    }
}

fn contents(output: &agent_core::RunOutput) -> Vec<(bool, &str)> {
    tool_results(output)
        .iter()
        .map(|result| (result.is_error, result.content.as_str()))
        .collect()
}

#[tokio::test]
async fn an_agent_calls_the_methods_of_a_shared_value() {
    let model = model_calling(
        [
            call(0, "search", r#"{"word":"start"}"#),
            call(1, "search", r#"{"word":"start","limit":1}"#),
            call(2, "search", r#"{"word":""}"#),
            call(3, "get_issue", r#"{"id":3}"#),
            call(4, "get_issue", r#"{"id":9}"#),
            call(5, "comment", r#"{"id":2,"text":"Seen it too."}"#),
            call(6, "today", "{}"),
            call(7, "count_calls", ""),
        ],
        "done",
    );
    let tracker = Arc::new(Tracker::new());
    let agent = Agent::new(model)
        .sequential_tools()
        .try_toolbox(Arc::clone(&tracker))
        .unwrap()
        .bind_context(Viewer("ann".to_owned()));
    let output = agent.run("triage").await.unwrap();
    assert_eq!(
        contents(&output),
        [
            (
                false,
                r#"[{"id":1,"title":"Crash on start"},{"id":2,"title":"Slow start"}]"#
            ),
            (false, r#"[{"id":1,"title":"Crash on start"}]"#),
            (true, "Error: the search failed: the word is empty"),
            (false, r#"{"id":3,"title":"Typo in docs"}"#),
            (true, "Error: there is no issue 9"),
            (false, "Done."),
            (false, "2024-05-01"),
            (false, "6 calls"),
        ]
    );
    // The agent's tools and this handle share one tracker.
    assert_eq!(tracker.comments(), ["#2 ann: Seen it too."]);
    assert_eq!(output.text, "done");
}

#[tokio::test]
async fn the_methods_stay_ordinary_methods() {
    let tracker = Tracker::new();
    assert_eq!(tracker.get(1).unwrap().title, "Crash on start");
    assert_eq!(tracker.search("Typo".to_owned(), 5).await.unwrap().len(), 1);
    tracker.comment(State(Viewer("bo".to_owned())), 1, "Fixed.".to_owned());
    assert_eq!(tracker.comments(), ["#1 bo: Fixed."]);
    assert_eq!(Tracker::today(), "2024-05-01");
    assert_eq!(Arc::new(tracker).count_calls().await, "3 calls");
}

#[tokio::test]
async fn the_model_sees_each_method_as_a_tool_with_its_schema() {
    let model = model_calling([], "done");
    let agent = Agent::new(model.clone())
        .try_toolbox(Tracker::new())
        .unwrap()
        .bind_context(Viewer("ann".to_owned()));
    let _ = agent.run("hi").await.unwrap();
    let offered = &model.requests()[0].tools;
    insta::assert_json_snapshot!("tracker_tools", offered);
}

#[test]
fn each_tool_says_how_it_runs() {
    let tools = ToolBox::<Viewer>::into_tools(Tracker::new());
    let by_name = |name: &str| {
        tools
            .iter()
            .find(|tool| tool.definition().name == name)
            .unwrap_or_else(|| panic!("no tool {name}"))
    };
    // A plain method runs on a blocking thread, as a plain `#[tool] fn` does; `inline` and async
    // ones on the agent's task.
    assert!(by_name("get_issue").runs_on_a_blocking_thread());
    assert!(!by_name("comment").runs_on_a_blocking_thread());
    assert!(!by_name("search").runs_on_a_blocking_thread());
    assert!(!by_name("today").runs_on_a_blocking_thread());
    let names: Vec<&str> = tools
        .iter()
        .map(|tool| tool.definition().name.as_str())
        .collect();
    assert_eq!(
        names,
        ["search", "get_issue", "comment", "count_calls", "today"]
    );
}

#[tokio::test]
async fn arguments_that_do_not_fit_reach_the_model_with_their_path() {
    let model = model_calling(
        [
            call(0, "search", r#"{"word":5}"#),
            call(1, "get_issue", r#"{"id":1,"number":1}"#),
        ],
        "done",
    );
    let agent = Agent::new(model).try_toolbox(Tracker::new()).unwrap();
    let agent = agent.bind_context(Viewer("ann".to_owned()));
    let output = agent.run("go").await.unwrap();
    assert_eq!(
        contents(&output),
        [
            (
                true,
                r#"Error: invalid arguments: word: invalid type: integer `5`, expected a string"#
            ),
            (
                true,
                "Error: invalid arguments: number: unknown field, expected one of `id`"
            ),
        ]
    );
}

/// Tell today's date.
#[tool(name = "today")]
fn today_elsewhere() -> &'static str {
    "yesterday"
}

#[test]
fn a_name_taken_already_fails_and_adds_none_of_the_tools() {
    let mut set: ToolSet<Viewer> = tools!(today_elsewhere);
    assert_eq!(
        set.add_toolbox(Tracker::new()),
        Err(ToolSetError::DuplicateName {
            name: "today".to_owned()
        })
    );
    assert_eq!(set.len(), 1);
    // Twice the same value: the first copy's names are taken.
    let agent: Agent<Viewer> = Agent::new(ScriptedModel::new(Vec::<AssistantMessage>::new()));
    let agent = agent.try_toolbox(Tracker::new()).unwrap();
    assert_eq!(agent.tools().len(), 5);
    let rejected = agent.try_toolbox(Tracker::new()).unwrap_err();
    assert!(matches!(
        rejected.error(),
        ToolSetError::DuplicateName { name } if name == "search"
    ));
    // The agent comes back with the tools it had.
    let agent = rejected.into_agent();
    assert_eq!(agent.tools().len(), 5);
    assert!(agent.tools().get("search").is_some());
}

#[tokio::test]
async fn a_toolbox_taken_as_a_list_goes_to_an_agent() {
    let model = model_calling([call(0, "get_issue", r#"{"id":1}"#)], "done");
    let tools = ToolBox::<Viewer>::into_tools(Tracker::new());
    let agent = Agent::new(model)
        .try_tools(
            tools
                .iter()
                .filter(|tool| tool.definition().name != "today")
                .cloned(),
        )
        .unwrap();
    assert_eq!(agent.tools().len(), 4);
    // Taken as the shared tools they are: the list and the agent hold the same ones.
    assert_eq!(Arc::strong_count(&tools[0]), 2);
    let held = agent.tools().get("search").unwrap();
    assert!(std::ptr::addr_eq(held, &*tools[0]));
    let agent = agent
        .try_tools(tools)
        .unwrap_err()
        .into_agent()
        .bind_context(Viewer("ann".to_owned()));
    let output = agent.run("issue one").await.unwrap();
    assert_eq!(
        contents(&output),
        [(false, r#"{"id":1,"title":"Crash on start"}"#)]
    );
}

/// A value whose tools need no state: it is a `ToolBox<S>` for every `S`.
struct Clock;

#[tool]
impl Clock {
    /// Tell the time.
    #[tool]
    async fn time(&self) -> &'static str {
        "12:00"
    }
}

#[tokio::test]
async fn a_toolbox_without_state_fits_any_agent() {
    let model = model_calling([call(0, "time", "{}")], "done");
    let output = Agent::new(model)
        .try_toolbox(Clock)
        .unwrap()
        .run("what time is it?")
        .await
        .unwrap();
    assert_eq!(contents(&output), [(false, "12:00")]);
    let set: ToolSet<Viewer> = {
        let mut set = ToolSet::new();
        set.add_toolbox(Clock).unwrap();
        set
    };
    assert_eq!(set.definitions()[0].name, "time");
}

/// Get one issue by its number.
///
/// # Arguments
///
/// * `id` - The issue's number
#[tool(name = "get_issue", idempotent)]
fn get_issue_fn(id: u64) -> Result<Issue, String> {
    Err(format!("no issue {id}"))
}

#[test]
fn a_method_and_a_function_of_the_same_shape_make_the_same_tool() {
    let tools = ToolBox::<Viewer>::into_tools(Tracker::new());
    let method = tools
        .iter()
        .find(|tool| tool.definition().name == "get_issue")
        .unwrap();
    assert_eq!(method.definition(), get_issue_fn {}.definition());
}

/// A point on a grid, which is its own toolbox.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize, JsonSchema)]
struct Point {
    x: i32,
    y: i32,
}

/// Grid math, reached through a module of the same name as a tool.
mod shift {
    /// How far to shift.
    pub const DEFAULT: i32 = 1;
}

#[tool]
impl Point {
    /// Add another point to this one.
    #[tool(inline)]
    fn plus(&self, other: Self) -> Self {
        Point {
            x: self.x + other.x,
            y: self.y + other.y,
        }
    }

    /// Shift this point right.
    #[tool(inline)]
    fn shift(
        &self,
        /// How far
        #[arg(default = shift::DEFAULT)]
        by: i32,
    ) -> Self {
        Self::new(self.x + by, self.y)
    }

    fn new(x: i32, y: i32) -> Self {
        Point { x, y }
    }
}

#[tokio::test]
async fn self_in_a_tools_types_is_the_blocks_type() {
    let tools: ToolSet = {
        let mut tools = ToolSet::new();
        tools.add_toolbox(Point::new(1, 2)).unwrap();
        tools
    };
    let plus = tools
        .dispatch(&(), &call(0, "plus", r#"{"other":{"x":10,"y":20}}"#))
        .await;
    assert_eq!(plus.content, r#"{"x":11,"y":22}"#);
    let shifted = tools.dispatch(&(), &call(1, "shift", "{}")).await;
    assert_eq!(shifted.content, r#"{"x":2,"y":2}"#);
    let definition = &tools.definitions()[0];
    assert_eq!(
        definition.parameters["properties"]["other"]["$ref"],
        "#/$defs/Point"
    );
    assert_eq!(definition.output_schema.as_ref().unwrap()["title"], "Point");
    // A nested point with a misspelt field: its path.
    let misspelt = tools
        .dispatch(&(), &call(2, "plus", r#"{"other":{"x":1,"y":2,"z":3}}"#))
        .await;
    assert_eq!(
        misspelt.content,
        "Error: invalid arguments: other.z: unknown field; leave it out or check its spelling against the schema"
    );
}

/// A crate that re-exports agent-core and has its users name it instead.
mod framework {
    pub use agent_core as engine;
}

/// A clock reached through a re-export of agent-core.
struct Wall;

#[framework::engine::tool(crate = "framework::engine")]
impl Wall {
    /// Tell the time on the wall.
    #[framework::engine::tool(read_only)]
    async fn wall_time(&self) -> &'static str {
        "noon"
    }
}

#[tokio::test]
async fn a_block_names_agent_core_through_a_reexport() {
    let model = model_calling([call(0, "wall_time", "{}")], "done");
    let agent: Agent = Agent::new(model).try_toolbox(Wall).unwrap();
    let output = agent.run("time?").await.unwrap();
    assert_eq!(contents(&output), [(false, "noon")]);
    assert_eq!(
        agent.tools().definitions()[0].annotations.read_only,
        Some(true)
    );
}
