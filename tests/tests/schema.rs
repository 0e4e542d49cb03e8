//! The exact schema and description `#[tool]` generates, as snapshots.

use agent_core::{Tool, ToolDef};
use tests::schema_set::*;

fn definition(tool: &impl Tool) -> &ToolDef {
    tool.definition()
}

#[test]
fn primitives_schema() {
    insta::assert_json_snapshot!(definition(&primitives {}));
}

#[test]
fn option_schema() {
    insta::assert_json_snapshot!(definition(&optional {}));
}

#[test]
fn defaulted_schema() {
    insta::assert_json_snapshot!(definition(&defaulted {}));
}

#[test]
fn enum_with_docs_schema() {
    insta::assert_json_snapshot!(definition(&draw {}));
}

#[test]
fn nested_struct_and_vec_schema() {
    insta::assert_json_snapshot!(definition(&plan_trip {}));
}

#[test]
fn map_schema() {
    insta::assert_json_snapshot!(definition(&set_counters {}));
}

#[test]
fn no_parameters_schema() {
    insta::assert_json_snapshot!(definition(&now {}));
}

#[test]
fn chinese_description_schema() {
    insta::assert_json_snapshot!(definition(&get_weather {}));
}

#[test]
fn rustdoc_arguments_list_and_renamed_tool() {
    insta::assert_json_snapshot!(definition(&rustdoc_arguments {}));
}

#[test]
fn description_attribute_overrides_docs() {
    assert_eq!(definition(&hello {}).description, "Says hello.");
    assert_eq!(hello::NAME, "hello");
}
