#!/usr/bin/env bash
# The README's conformance report (`cargo run --release -p conformance -- report`, every version
# of versions.yaml) built for aarch64 and run under user-mode qemu (#39). Not part of .ci/run:
# hours of emulation. docs/maintainers.md, "arm64 under emulation", has the measured run.
# Emulated times are not timings.
#
#   bash ci/arm64-report.sh [REPORT ARGS...]      e.g. --cases 2 for a quick look
#
# The aarch64 conformance binary runs through ci/qemu-aarch64.sh (plain qemu-aarch64-static);
# its cells and writers are child processes, which the kernel runs through qemu-user-static's
# binfmt handler. Environment:
#   ARM64_GUEST_PAGE=16384   the guest's page size (default: qemu's, 4 KiB; the report itself
#                            runs its cells at 4 and 16 KiB official pages, --page-sizes)
#   ARM64_REPORT_SHARDS=N    cut versions.yaml's tags into N contiguous slices and run one report
#                            per slice (`report --only`, as CI's shards), then `conformance
#                            merge` them; a slice whose JSON is already there is kept (rerun:
#                            delete it), so a stopped run goes on where it stopped
#   ARM64_REPORT_SHARD=I     with N shards: run only slice I (1-based), no merge
#   CONFORMANCE_WORKLOAD_TIMEOUT  the per-workload watchdog (default here 3000 s: ten times the
#                            native default, qemu translates every instruction)
# Output in target/arm64/report/: report.json and report.md (the merged ones with shards),
# shard-I.json, and a log per report run. Fails when a report fails.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
triple=aarch64-unknown-linux-gnu
start=$SECONDS
say() { printf '[arm64-report %5ds] %s\n' $((SECONDS - start)) "$*"; }

# The aarch64 toolchain and runner exactly as ci/arm64.sh sets them up (it installs the
# packages when missing: run it once first).
for p in rustc-web libstd-rust-web-dev:arm64 g++-aarch64-linux-gnu zlib1g-dev:arm64 qemu-user-static; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
    { say "missing package $p: run ci/arm64.sh once (it installs them)"; exit 1; }
done
[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] ||
  { say "no binfmt handler for aarch64: the report's child processes cannot run"; exit 1; }
export RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc
export CARGO_TARGET_DIR="$root/target/arm64"
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="$root/ci/qemu-aarch64.sh"
export CXX_aarch64_unknown_linux_gnu=aarch64-linux-gnu-g++ CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc
export CONFORMANCE_WORKLOAD_TIMEOUT="${CONFORMANCE_WORKLOAD_TIMEOUT:-3000}"
[ -z "${ARM64_GUEST_PAGE:-}" ] || export ARM64_GUEST_PAGE

# Every version that GCC builds for aarch64 (MMKV_VERSIONS from the caller replaces the list):
# v1.1.0-v1.2.1's Core/crc32/crc32_armv8.cpp uses clang's ARM builtins (`__builtin_arm_crc32b`,
# `target("crc")`), which aarch64-linux-gnu-g++ refuses, so those five tags are the report's
# golden rows here (their corpora checked, no live cells). The first build compiles each
# official Core with aarch64-linux-gnu-g++, then MMKV_SYS_CACHE keeps it.
gcc_refuses="v1.1.0 v1.1.1 v1.1.2 v1.2.0 v1.2.1"
if [ -z "${MMKV_VERSIONS:-}" ]; then
  MMKV_VERSIONS=$(awk '/^  - tag:/ {print $3}' versions.yaml | grep -vxF -f <(tr ' ' '\n' <<<"$gcc_refuses") | paste -sd,)
fi
export MMKV_VERSIONS
say "building the aarch64 conformance (release)"
cargo build -q --release --target "$triple" -p conformance
exe="$CARGO_TARGET_DIR/$triple/release/conformance"
run() { "$root/ci/qemu-aarch64.sh" "$exe" "$@"; }
out="$CARGO_TARGET_DIR/report"
mkdir -p "$out"

# One report run: its arguments after the label; the table to stdout of the log, wall time
# and load average said at the end.
report() {
  local label=$1 t0=$SECONDS rc=0
  shift
  say "report $label: $* (log: $out/$label.log)"
  run report "$@" >"$out/$label.log" 2>&1 || rc=$?
  say "report $label: exit $rc after $((SECONDS - t0)) s, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  [ "$rc" = 0 ] || { tail -n 40 "$out/$label.log"; return "$rc"; }
}

shards="${ARM64_REPORT_SHARDS:-1}"
if [ "$shards" = 1 ]; then
  report report --json "$out/report.json" --markdown "$out/report.md" "$@"
  say "done: $out/report.json"
  exit 0
fi

# Contiguous slices of versions.yaml's tags (oldest first; unbuilt ones are golden rows),
# sizes differing by at most one.
mapfile -t tags < <(awk '/^  - tag:/ {print $3}' versions.yaml)
n=${#tags[@]}
[ "$n" -gt 0 ] || { say "no tag in versions.yaml"; exit 1; }
only="${ARM64_REPORT_SHARD:-}"
files=()
first=0
for ((i = 1; i <= shards; i++)); do
  len=$((n / shards + (i <= n % shards ? 1 : 0)))
  slice=$(IFS=,; echo "${tags[*]:first:len}")
  first=$((first + len))
  file="$out/shard-$i.json"
  files+=("$file")
  [ -z "$only" ] || [ "$only" = "$i" ] || continue
  if [ -s "$file" ]; then
    say "shard $i/$shards ($slice): kept $file"
    continue
  fi
  report "shard-$i" --only "$slice" --json "$file.part" --markdown "$out/shard-$i.md" "$@"
  mv "$file.part" "$file"
done
[ -z "$only" ] || exit 0
say "merging ${#files[@]} shards"
run merge "${files[@]}" --json "$out/report.json" --markdown "$out/report.md" >"$out/merge.log" 2>&1 ||
  { cat "$out/merge.log"; exit 1; }
say "done: $out/report.json"
