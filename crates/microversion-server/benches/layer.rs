//! Placeholder replaced by the layer benchmark.
fn main() {}
