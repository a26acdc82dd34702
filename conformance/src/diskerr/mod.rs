//! Disk errors: the official writer runs the power-loss plan's ops while chosen file calls of
//! the official library fail (`ftruncate`, `mmap`, `msync`, `write` with `ENOSPC`, `EIO` or
//! `ENOMEM`; [`mmkv_sys::io_faults`], wrapped at link time as `time` is), goes on after each
//! failure as an app would (`conformance writer --plan diskerr --io-faults SCHEDULE`, which
//! says every official call that saw a failure and what it returned), and the files it leaves
//! (both: data and `.crc`) are judged exactly as the fault suite judges its damaged states
//! ([`crate::fault::suite::judge_state`]: official reads in a child with each error strategy
//! against the reader, the one exceptions table). A writer the library crashes after a failed
//! call (a remap that failed leaves Core writing through a null mapping) leaves its state too,
//! and is counted as an upstream finding of the writer.
//!
//! - [`suite`]: the run (seeded schedules and kill points, one state per writer run);
//! - [`record`]: one judged state;
//! - [`section`]: its result as the report and `conformance faults diskerr` show it;
//! - [`cli`]: `conformance faults diskerr`.

pub mod cli;
pub mod record;
pub mod section;
pub mod suite;
