#!/usr/bin/env bash
# The README's conformance report (`cargo run --release -p conformance -- report`, every version
# of versions.yaml) built for aarch64 and run under user-mode qemu (#39). Not part of .ci/run:
# hours of emulation. docs/maintainers.md, "arm64 under emulation", has the measured run.
# Emulated times are not timings.
#
#   bash ci/arm64-report.sh [REPORT ARGS...]      e.g. --cases 2 for a quick look
#
# The aarch64 conformance binary runs through ci/qemu-aarch64.sh (plain qemu-aarch64-static);
# its cells and writers are child processes, which the kernel runs through qemu-user-binfmt's
# handler. The guest runs at the host's page size; the report runs its cells at 4 and 16 KiB
# official pages (--page-sizes). Environment:
#   ARM64_REPORT_SHARDS=N    cut versions.yaml's tags into N contiguous slices and run one report
#                            per slice (`report --only`, as CI's shards), then `conformance
#                            merge` them; a slice whose JSON is already there is kept (rerun:
#                            delete it), so a stopped run goes on where it stopped
#   ARM64_REPORT_SHARD=I     with N shards: run only slice I (1-based; a list, "1 20 36", runs
#                            those), no merge
#   CONFORMANCE_WORKLOAD_TIMEOUT  the per-workload watchdog (default here 10800 s, 36 times the
#                            native default: qemu translates every instruction, and a niced
#                            cell on a loaded machine gets a fraction of a core)
#   CONFORMANCE_CHILD_TIMEOUT     the one-shot children's timeout (default here 300 s, ten times
#                            the native default; conformance/README.md)
#   ARM64_TARGET_DIR=DIR     the build's and the output's target directory (default target/arm64)
# Output in target/arm64/report/ (DIR/report/): report.json and report.md (the merged ones with shards),
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
# Emulation is slow: the per-workload watchdog and the one-shot children's timeout. Measured
# (docs/maintainers.md): v2.4.2's 4 KiB many-keys workload needed over 3000 s of wall time
# (over 400 s of CPU) niced on a loaded 2-core machine.
export CONFORMANCE_WORKLOAD_TIMEOUT="${CONFORMANCE_WORKLOAD_TIMEOUT:-10800}"
export CONFORMANCE_CHILD_TIMEOUT="${CONFORMANCE_CHILD_TIMEOUT:-300}"

exe="$CARGO_TARGET_DIR/$triple/release/conformance"
run() { "$root/ci/qemu-aarch64.sh" "$exe" "$@"; }
out="$CARGO_TARGET_DIR/report"
mkdir -p "$out"
# v1.1.0-v1.2.1 have no Linux aarch64 build upstream: their CMakeLists gives the ARM AES
# assembly its flags (`-march=armv8+crypto`) only for Android ABIs, and outside Android the
# assembly names its symbols the Apple way (`_openssl_aes_arm_set_encrypt_key`), which
# AESCrypt.cpp's `openssl_aes_arm_set_encrypt_key` does not find on Linux (with either
# compiler; GCC also refuses their crc32_armv8.cpp). v1.2.2 added both. Here they are golden
# rows: their corpora checked, no live cells.
no_linux_arm64="v1.1.0 v1.1.1 v1.1.2 v1.2.0 v1.2.1"
# The aarch64 conformance with the versions $1 (comma-separated; empty: every version of
# versions.yaml), less the ones above. The first build of a version compiles its official Core
# for aarch64 (with clang, mmkv-sys/build.rs), then MMKV_SYS_CACHE keeps it.
build() {
  local list=${1:-$(awk '/^  - tag:/ {print $3}' versions.yaml | paste -sd,)}
  list=$({ tr ',' '\n' <<<"$list" | grep -vxF -f <(tr ' ' '\n' <<<"$no_linux_arm64") || true; } | paste -sd,)
  say "building the aarch64 conformance (release) with ${list:-no version}"
  MMKV_VERSIONS=${list:-none} cargo build -q --release --target "$triple" -p conformance
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
