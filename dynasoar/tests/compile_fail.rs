//! The compile-fail suite: every misuse of the DSL the macros and types can catch is a compile
//! error with a message that says what is wrong (expected messages in `tests/ui/*.stderr`).

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
