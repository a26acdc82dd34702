//! Benchmarks of the official MMKV library against `mmkv-reader`, and the `speedup-table` tool.
//!
//! The criterion benches live in `benches/benches/` (`cargo bench` at the workspace root runs
//! them all); this library holds what they share with the table tool:
//!
//! - [`ids`]: the criterion group and function names, so the tool finds every estimate;
//! - [`paths`]: where criterion writes its results (and where the benches put extra JSON files);
//! - [`memory`]: a counting global allocator and the memory report the `open` bench writes;
//! - [`table`]: the speedup table, in two steps: [`table::collect`](mod@table::collect)
//!   reads criterion's estimates and the benches' JSON files into a report of what was
//!   measured; [`table::render`](mod@table::render) evaluates the targets, merges the
//!   architectures, renders the Markdown tables and replaces them between marker comments in
//!   benches/README.md.
#![deny(missing_docs)]

pub mod ids;
pub mod memory;
pub mod paths;
pub mod table;
