//! Differential under faults: the official writer is killed with SIGKILL at random points of
//! a seeded workload, the stores it leaves are truncated and bit-flipped, and for every
//! damaged state the official library reopened with each error strategy (discard, the
//! default; `OnErrorRecover`) is compared with the reader, key by key and getter by getter.
//! A difference is either a row of [`crate::judge::exceptions::TABLE`] (recognised by a
//! precise check, [`crate::judge::state`]) or a failure. The official library runs in child
//! processes (`conformance faults read`; writers are `conformance writer --plan faults`): a
//! crash or hang on damaged files is an upstream finding, not a failure of
//! ours. `conformance report` runs the suite and carries its [`section::FaultSection`].
//!
//! - [`damage`]: truncations, bit flips, a missing meta file;
//! - the reads of a state by each side: [`crate::sides::reads`], [`crate::fault::official`];
//! - [`suite`]: the run (`cargo test -p conformance --test faults`);
//! - [`summary`]: its judged states and counts;
//! - [`section`]: its result as the report and `conformance faults run` show it;
//! - [`cli`]: `conformance faults run|read`.

pub mod cli;
pub mod damage;
pub mod official;
pub mod section;
pub mod suite;
pub mod summary;
