//! conformance (under construction).
