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
#   ARM64_REPORT_SHARD=I     with N shards: run only slice I (1-based; a list, "1 20 36", runs
#                            those), no merge
#   CONFORMANCE_WORKLOAD_TIMEOUT  the per-workload watchdog (default here 3000 s: ten times the
#                            native default, qemu translates every instruction)
#   CONFORMANCE_CHILD_TIMEOUT     the one-shot children's timeout (default here 300 s, ten times
#                            the native default; conformance/README.md)
# Output in target/arm64/report/: report.json and report.md (the merged ones with shards),
# shard-I.json, and a log per report run. Fails when a report fails.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
start=$SECONDS
say() { printf '[arm64-report %5ds] %s\n' $((SECONDS - start)) "$*"; }

# The aarch64 toolchain and runner exactly as ci/arm64.sh sets them up (it installs the
# packages when missing: run it once first).
. ci/arm64-env.sh
triple=$arm64_triple
missing=$(arm64_missing | paste -sd' ')
[ -z "$missing" ] || { say "missing packages $missing: run ci/arm64.sh once (it installs them)"; exit 1; }
[ -e "$arm64_binfmt" ] ||
  { say "no binfmt handler for aarch64: the report's child processes cannot run"; exit 1; }
# Emulation is slow: the per-workload watchdog and the one-shot children's timeout, each ten
# times its native default (qemu translates every instruction).
export CONFORMANCE_WORKLOAD_TIMEOUT="${CONFORMANCE_WORKLOAD_TIMEOUT:-3000}"
export CONFORMANCE_CHILD_TIMEOUT="${CONFORMANCE_CHILD_TIMEOUT:-300}"
[ -z "${ARM64_GUEST_PAGE:-}" ] || export ARM64_GUEST_PAGE

exe="$CARGO_TARGET_DIR/$triple/release/conformance"
run() { "$root/ci/qemu-aarch64.sh" "$exe" "$@"; }
out="$CARGO_TARGET_DIR/report"
mkdir -p "$out"
# The aarch64 conformance with the versions $1 (comma-separated; empty: every version of
# versions.yaml). The first build of a version compiles its official Core for aarch64 (with
# clang, mmkv-sys/build.rs), then MMKV_SYS_CACHE keeps it.
build() {
  say "building the aarch64 conformance (release) with ${1:-every version}"
  if [ -n "$1" ]; then
    MMKV_VERSIONS=$1 cargo build -q --release --target "$triple" -p conformance
  else
    (unset MMKV_VERSIONS && cargo build -q --release --target "$triple" -p conformance)
  fi
}

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
  build "${MMKV_VERSIONS:-}"
  report report --json "$out/report.json" --markdown "$out/report.md" "$@"
  say "done: $out/report.json"
  exit 0
fi

# Contiguous slices of versions.yaml's tags (oldest first), sizes differing by at most one.
# Each slice's report runs a binary built with the slice's versions only (the caller's
# MMKV_VERSIONS instead, when set), as CI's shards do: a stopped run has built what it ran.
mapfile -t tags < <(awk '/^  - tag:/ {print $3}' versions.yaml)
n=${#tags[@]}
[ "$n" -gt 0 ] || { say "no tag in versions.yaml"; exit 1; }
only=${ARM64_REPORT_SHARD:-}
only=" ${only//,/ } "
failed=()
files=()
first=0
for ((i = 1; i <= shards; i++)); do
  len=$((n / shards + (i <= n % shards ? 1 : 0)))
  slice=$(IFS=,; echo "${tags[*]:first:len}")
  first=$((first + len))
  file="$out/shard-$i.json"
  files+=("$file")
  [ "$only" = "  " ] || [[ "$only" == *" $i "* ]] || continue
  if [ -s "$file" ]; then
    say "shard $i/$shards ($slice): kept $file"
    continue
  fi
  build "${MMKV_VERSIONS:-$slice}"
  # A failing slice keeps its JSON as shard-I.failed.json and the run goes on with the next
  # (a rerun runs it again).
  if report "shard-$i" --only "$slice" --json "$file.part" --markdown "$out/shard-$i.md" "$@"; then
    mv "$file.part" "$file"
  else
    mv "$file.part" "$out/shard-$i.failed.json" 2>/dev/null || true
    failed+=("$i")
  fi
done
[ ${#failed[@]} = 0 ] || { say "FAILED: shards ${failed[*]} (their logs: $out/shard-I.log)"; exit 1; }
[ "$only" = "  " ] || exit 0
say "merging ${#files[@]} shards"
run merge "${files[@]}" --json "$out/report.json" --markdown "$out/report.md" >"$out/merge.log" 2>&1 ||
  { cat "$out/merge.log"; exit 1; }
say "done: $out/report.json"
