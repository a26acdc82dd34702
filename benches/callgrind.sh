#!/usr/bin/env bash
# Instructions per read of each read operation (valgrind callgrind, repeatable under load).
# Usage: benches/callgrind.sh [N] [OP...]   (default N=20000, every operation)
# Needs valgrind; builds the read_counts example in release mode (official version: MMKV_VERSIONS).
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-20000}"
shift || true
cargo build --profile bench -q -p benches --example read_counts
bin="${CARGO_TARGET_DIR:-target}/release/examples/read_counts"
ops=("$@")
if [ ${#ops[@]} -eq 0 ]; then
  mapfile -t ops < <("$bin" list)
fi
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
for op in "${ops[@]}"; do
  valgrind --tool=callgrind --toggle-collect='*count_reads*' \
    --callgrind-out-file="$out/$op.out" "$bin" "$op" "$n" >/dev/null 2>"$out/$op.err" ||
    { cat "$out/$op.err" >&2; exit 1; }
  ir="$(sed -n 's/^summary: //p' "$out/$op.out")"
  awk -v op="$op" -v ir="$ir" -v n="$n" 'BEGIN { printf "%-20s %8.1f instructions/read\n", op, ir / n }'
done
