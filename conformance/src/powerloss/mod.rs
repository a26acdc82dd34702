//! Power-loss states: what a phone that loses power, a kernel panic or a pulled battery
//! leaves of a store, judged against the official loader of the version that wrote it.
//!
//! A SIGKILL (the fault suite, [`crate::fault`]) loses nothing the writer put in its
//! mappings: the kernel still holds every dirty page and writes it back later, so every such
//! state is a prefix of the writer's memory writes. A power loss drops the pages written
//! since the last write-back **in any subset**, independently for the data file and the
//! `.crc` file, and can tear a page at a 512-byte sector boundary. This suite models exactly
//! that:
//!
//! - [`record`]: the one writer's power-loss plan run by the official library in a child
//!   process, stopping after every official call (`--steps`) while the parent copies both
//!   files (with `read()`: the page cache shows what the mapping wrote) and derives which
//!   4 KiB pages changed and where the library synced (`sync()`, full write-back, `clearAll`);
//! - [`states`]: crash states: at a point between two sync points, each file as last synced
//!   plus any subset of the pages dirtied since (every version they had, exhaustively when
//!   few, sampled when many), torn pages, and the file size either side of a pending
//!   `ftruncate`;
//! - [`suite`]: the run: the official library of that version (`OnErrorDiscard`,
//!   `OnErrorRecover`) reads batches of states in child processes (`conformance faults read`), the reader (`Store`, both
//!   strategies, and the `mmkv dump` path) reads them in-process, and the fault suite's judge
//!   ([`crate::judge::state::judge_outcomes`], the one exceptions table) decides; disagreements
//!   are shrunk to a minimal state and saved; [`judged`]: one judged state;
//! - [`section`]: the result as `conformance report` and `conformance faults powerloss` show it;
//! - [`cli`]: `conformance faults powerloss`.

pub mod cli;
pub mod judged;
pub mod record;
pub mod section;
pub mod states;
pub mod suite;
