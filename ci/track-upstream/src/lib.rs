//! Upstream-release tracking and CI plumbing for the MMKV reader's differential harness.
//!
//! Four jobs, all behind the `track-upstream` binary:
//!
//! - **Tracking** ([`check::run_check`]): list upstream MMKV release tags (`git ls-remote`
//!   of the upstream repository, or a file), probe npm packages that embed `MMKV/Core` for
//!   versions newer than versions.yaml pins, and open one issue per tag that versions.yaml
//!   lacks (idempotently; `--dry-run` prints `new: vX.Y.Z` lines instead).
//! - **Adding a version** ([`add_version`]): pack an npm package, check that its
//!   `MMKVPredef.h` declares the tag, record source and integrity in versions.yaml with a
//!   text-preserving edit ([`edit::upsert_entry`]), then build and test that tag.
//! - **Planning CI** ([`plan::plan_slices`]): versions.yaml's tags cut into the slices of the CI
//!   matrix, each built with the anchors the conformance tests need.
//! - **Hunt issues** ([`hunt_issues::run_hunt_issues`], `hunt-issues`): read the summaries of
//!   the nightly conformance hunt ([`hunt`], `conformance hunt --json`), merge them (one per CI
//!   shard) into one finding per failure signature, and open one issue per new signature
//!   (title token `[hunt <id>]`, label `upstream-difference`) with its minimal workload and
//!   replay command, or comment on its existing issue when the example got smaller or a closed
//!   issue's difference is back (the rules are in [`hunt_issues`]).
//!
//! Everything that reaches the network (git, npm, gh) sits behind a trait or a flag, so the
//! tests run offline.
#![deny(missing_docs)]

pub mod add_version;
pub mod check;
mod command;
pub mod edit;
pub mod error;
pub mod git;
pub mod hunt;
pub mod hunt_issues;
pub mod issues;
pub mod npm;
pub mod plan;
pub mod tags;
pub mod tarball;
pub mod tracker;
pub mod versions;

pub use error::{Error, Result};
