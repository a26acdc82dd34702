//! benches (under construction).
