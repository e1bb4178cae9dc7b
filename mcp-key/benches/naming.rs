//! Placeholder, replaced by the naming benchmark.
fn main() {}
