//! Every compile error of `#[tool]` and `agent!`, with the message and the tokens it points at.

#[test]
fn macro_misuse_is_a_compile_error_at_the_offending_tokens() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("ui/*.rs");
}
