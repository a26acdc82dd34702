//! `conformance` command line (under construction).
fn main() {}
