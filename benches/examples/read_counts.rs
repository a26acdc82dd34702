//! Instruction-count driver for the read paths (a profiling aid, not a benchmark).
//!
//! Builds the `gets` benches' fixture, then calls one read operation N times (cycling through
//! that kind's keys) inside `count_reads`, so that
//! `valgrind --tool=callgrind --toggle-collect='*count_reads*'` counts exactly those reads.
//! Instruction counts are repeatable on a loaded machine, unlike wall-clock times;
//! `benches/callgrind.sh` runs every operation and prints instructions per read.
//!
//! Usage: `read_counts OP N`, OP one of [`OPS`] (`read_counts list` prints them).

#[path = "../benches/common/mod.rs"]
mod common;

use std::hint::black_box;

use common::reads::{build, Fixture};
use common::Cycle;

/// Operation names: `reader_*` go through `Store` (check-on-read), `held_*` through a
/// `Snapshot` taken once, `floor_*` through the floor `HashMap`s.
const OPS: [&str; 10] = [
    "reader_i32",
    "held_i32",
    "floor_i32",
    "reader_string",
    "floor_string",
    "reader_bytes_copy",
    "floor_bytes_copy",
    "reader_bytes_view",
    "held_bytes_view",
    "floor_bytes_view",
];

/// Runs `read` `n` times over `keys`; the function callgrind's toggle collects.
#[inline(never)]
fn count_reads<R: SomeLike>(keys: &[Vec<u8>], n: u64, mut read: impl FnMut(&[u8]) -> R) -> u64 {
    let mut k = Cycle::new(keys);
    let mut some = 0u64;
    for _ in 0..n {
        some += u64::from(black_box(read(black_box(k.next_key()))).is_some_like());
    }
    some
}

/// "The read found a value", for every result type the operations return.
trait SomeLike {
    fn is_some_like(&self) -> bool;
}
impl<T> SomeLike for Option<T> {
    fn is_some_like(&self) -> bool {
        self.is_some()
    }
}
impl SomeLike for bool {
    fn is_some_like(&self) -> bool {
        *self
    }
}

fn run(fx: &Fixture, op: &str, n: u64) -> Option<u64> {
    let snap = fx.store.snapshot();
    Some(match op {
        "reader_i32" => count_reads(&fx.i32_keys, n, |k| fx.store.get_i32(k)),
        "held_i32" => count_reads(&fx.i32_keys, n, |k| snap.get_i32(k)),
        "floor_i32" => count_reads(&fx.i32_keys, n, |k| fx.floor_i32.get(k).copied()),
        "reader_string" => count_reads(&fx.string_keys, n, |k| fx.store.get_string(k)),
        "floor_string" => count_reads(&fx.string_keys, n, |k| fx.floor_string.get(k).cloned()),
        "reader_bytes_copy" => count_reads(&fx.bytes_keys, n, |k| fx.store.get_bytes(k)),
        "floor_bytes_copy" => count_reads(&fx.bytes_keys, n, |k| {
            fx.floor_bytes.get(k).map(|v| v.to_vec())
        }),
        "reader_bytes_view" => count_reads(&fx.bytes_keys, n, |k| {
            black_box(fx.store.view().get_bytes(k)).is_some()
        }),
        "held_bytes_view" => count_reads(&fx.bytes_keys, n, |k| {
            black_box(snap.get_bytes(k)).is_some()
        }),
        "floor_bytes_view" => count_reads(&fx.bytes_keys, n, |k| {
            black_box(fx.floor_bytes.get(k).map(Vec::as_slice)).is_some()
        }),
        _ => return None,
    })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("list") {
        println!("{}", OPS.join("\n"));
        return;
    }
    let (Some(op), Some(n)) = (
        args.first(),
        args.get(1).and_then(|s| s.parse::<u64>().ok()),
    ) else {
        eprintln!("usage: read_counts OP N   (OP: {})", OPS.join(", "));
        std::process::exit(2);
    };
    if !OPS.contains(&op.as_str()) {
        eprintln!("unknown operation {op:?} (one of: {})", OPS.join(", "));
        std::process::exit(2);
    }
    let fx = build();
    let found = run(&fx, op, n).unwrap_or(0);
    assert_eq!(found, n, "{op}: every read must find its key");
    println!("{op}: {n} reads");
}
