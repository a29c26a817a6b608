//! The examples are part of the product: run them.

#[path = "../examples/minimal.rs"]
#[allow(dead_code)] // its `main` is for `cargo run --example`
mod minimal;

#[test]
fn minimal_rust_example_keeps_its_list_and_frees_the_garbage() {
    assert_eq!(minimal::run(), 20_000, "10 000 cells and their strings");
}
