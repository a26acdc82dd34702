//! Every `unsafe` of the crate, behind safe interfaces; the rest of the crate is
//! `#![deny(unsafe_code)]` (this module is the one `allow`).
//!
//! * [`map`]: a read-only memory mapping read only through volatile copies and aligned
//!   volatile `u32` loads whose bounds are checked at compile time ([`map::Mapped`]), and the
//!   huge-page advice on freshly allocated read buffers ([`map::advise_huge_pages`]).
//! * [`slots`]: the per-thread snapshot cache of a store (an `UnsafeCell` only its own thread
//!   touches, and borrows counted so that a pinned snapshot is never replaced).
//! * `alloc` (feature `test-support`): the `GlobalAlloc` of the counting allocator, forwarding
//!   to the system allocator.

#[cfg(feature = "test-support")]
mod alloc;
pub(crate) mod map;
pub(crate) mod slots;
