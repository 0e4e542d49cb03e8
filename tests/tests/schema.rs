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
fn object_result_has_an_output_schema() {
    insta::assert_json_snapshot!(definition(&report {}));
}

#[test]
fn results_that_are_not_objects_or_have_no_schema_have_no_output_schema() {
    assert_eq!(definition(&ping {}).output_schema, None);
    assert_eq!(definition(&numbers {}).output_schema, None);
    assert_eq!(definition(&now {}).output_schema, None);
    assert_eq!(definition(&primitives {}).output_schema, None);
}

#[test]
fn description_attribute_overrides_docs() {
    assert_eq!(definition(&hello {}).description, "Says hello.");
    assert_eq!(hello::NAME, "hello");
}
