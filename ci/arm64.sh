#!/usr/bin/env bash
# The arm64 part of CI (#39), under user-mode qemu: the reader's and the mmkv CLI's tests, the
# conformance test `differential` (and `faults` with ARM64_FAULTS=1) for one version of each
# era (with ARM64_BENCHES=1 the benches once each, criterion's test mode), then `conformance
# suite grade` of the aarch64 `mmkv`. Under qemu 10 (installed) the guest runs at the host's
# page size, as qemu 10 emulates no other; the conformance tests run the official Core at 16 KiB
# pages by default (MMKV_SYS_PAGE_SIZE, as the report's 16 KiB cells), so one aarch64 run covers
# both the other architecture and the other page size; the x86-64 tests cover 4 KiB
# (ARM64_PAGES lists the official page sizes, e.g. ARM64_PAGES="4096 16384"). The reader's tests
# run a second time at 16 KiB guest pages under Debian 12's qemu 7.2 (unpacked into a cache, not
# installed), whose -p works. Installs what it needs when missing (Debian 12). Its own target
# directory (target/arm64), so it never waits for the host build's lock. Fails on any failure.
# docs/maintainers.md, "arm64 under emulation". Emulated times are not timings.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
# One version per era of the format (overridable, e.g. ARM64_VERSIONS=v2.4.2).
versions="${ARM64_VERSIONS:-v1.2.16,v1.3.17,v2.4.2}"
pages="${ARM64_PAGES:-16384}"
start=$SECONDS
say() { printf '[arm64 %4ds] %s\n' $((SECONDS - start)) "$*"; }

. ci/arm64-env.sh
triple=$arm64_triple
# Nothing to install when every package is there.
mapfile -t missing < <(arm64_missing)
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64
  arm64_apt_update
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${arm64_pkgs[@]}" "${arm64_qemu_pkgs[@]}"
fi

# The CLI's tests start the aarch64 mmkv as a child process: the kernel runs it through
# qemu-user-binfmt's handler. The package registers it where systemd runs; in a
# container binfmt_misc may need mounting and the package's binfmt.d entry registering.
# The kernel keeps the interpreter it opened when the entry was registered (flag F): after an
# install here (e.g. qemu 10 over Debian 12's 7.2) an older entry would go on running the old
# qemu, so it is registered again.
binfmt=$arm64_binfmt
if [ ${#missing[@]} -gt 0 ] && [ -e "$binfmt" ]; then echo -1 >"$binfmt"; fi
if [ ! -e "$binfmt" ]; then
  misc=${binfmt%/*}
  [ -e "$misc/register" ] || mount -t binfmt_misc binfmt_misc "$misc" 2>/dev/null || true
  /usr/lib/systemd/systemd-binfmt /usr/lib/binfmt.d/qemu-aarch64.conf 2>/dev/null ||
    update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 || true
fi
[ -e "$binfmt" ] || { say "no binfmt handler for aarch64 ($binfmt)"; exit 1; }

# Debian 12's qemu 7.2, for the reader's tests at 16 KiB guest pages (below).
if [ ! -x "$arm64_qemu72" ]; then
  say "unpacking Debian 12's qemu-aarch64-static 7.2 into ${arm64_qemu72%/*}"
  arm64_fetch_qemu72
fi

export PROPTEST_CASES="${PROPTEST_CASES:-2}"
# The tests' dependencies (not our crates) optimised: under qemu their debug code is what costs.
# Measured: the reader's corpus test took 256 s with debug dependencies, 4 s with these (13 s on
# the host in debug). Our crates keep the test profile: debug assertions and overflow checks.
deps_opt=(--config 'profile.dev.package."*".opt-level=2')
$RUSTC --version

# The faults test (damaged stores, each judged by child processes) took over 6 minutes per page
# size here under load: opt-in with ARM64_FAULTS=1.
faults=()
if [ "${ARM64_FAULTS:-0}" = 1 ]; then faults=(--test faults); fi
passed=0
# Runs cargo test, counts the passed tests from its "test result:" lines.
run_tests() {
  local label=$1 log
  shift
  log=$(mktemp)
  say "$label"
  if ! cargo test -q --target "$triple" "${deps_opt[@]}" "$@" >"$log" 2>&1; then
    cat "$log"
    say "FAILED: $label"
    exit 1
  fi
  local n
  n=$(awk '/^test result:/ {for (i = 1; i <= NF; i++) if ($i == "passed;") s += $(i - 1)} END {print s + 0}' "$log")
  [ "$n" -gt 0 ] || { cat "$log"; say "FAILED: $label ran no test"; exit 1; }
  say "$label: $n passed"
  passed=$((passed + n))
  rm -f "$log"
}

say "building the aarch64 mmkv (release)"
cargo build -q --release --target "$triple" -p mmkv-inspect

# Under qemu 10 the guest's page is the host's; the reader's tests check that it sees it.
host_page=$(getconf PAGESIZE)
MMKV_READER_EXPECT_PAGE_SIZE=$host_page \
  run_tests "reader + inspect tests, guest page $host_page" -p mmkv-reader -p mmkv-inspect
# The reader's tests (unit, integration and doc tests) again at 16 KiB guest pages, as on Apple
# silicon and recent Android: under qemu 7.2 with -p 16384 (qemu 10 ignores -p on a 4 KiB
# host), its host_page_size and mmap handling at 16 KiB; the tests check that the guest's page
# is 16384. Not the CLI's tests: they start the aarch64 mmkv as a child, which the kernel runs
# through binfmt, i.e. qemu 10 at the host's page, and compare the page it reports with their
# own.
qemu72_version=$(cat "${arm64_qemu72%/*}/version" 2>/dev/null || echo 7.2)
ARM64_QEMU=$arm64_qemu72 ARM64_GUEST_PAGE=16384 MMKV_READER_EXPECT_PAGE_SIZE=16384 \
  run_tests "reader tests, guest page 16384 (qemu $qemu72_version)" -p mmkv-reader
for page in $pages; do
  MMKV_SYS_PAGE_SIZE=$page MMKV_VERSIONS=$versions \
    run_tests "conformance differential ($versions), official page $page" \
    -p conformance --test differential "${faults[@]}"
done
# ARM64_BENCHES=1: the benches once each too (criterion's test mode: every benchmark runs one
# iteration; "Success" per benchmark). Opt-in: about 5 minutes here, most of it the 1M-key
# benchmarks under qemu, for a check that only says they run.
if [ "${ARM64_BENCHES:-0}" = 1 ]; then
  log=$(mktemp)
  say "benches (test mode)"
  MMKV_VERSIONS=${versions##*,} cargo test -q --target "$triple" "${deps_opt[@]}" -p benches --benches >"$log" 2>&1 ||
    { cat "$log"; say "FAILED: benches"; exit 1; }
  n=$(grep -c '^Success' "$log" || true)
  [ "$n" -gt 0 ] || { cat "$log"; say "FAILED: benches ran no benchmark"; exit 1; }
  say "benches (test mode): $n benchmarks ran"
  rm -f "$log"
fi

# The host conformance binary drives the grade (CONFORMANCE=PATH: one built elsewhere). Built
# here, after the aarch64 work, so that the caller's release build has made it already.
conformance="${CONFORMANCE:-$root/target/release/conformance}"
if [ -z "${CONFORMANCE:-}" ]; then
  say "host conformance (release) for suite grade"
  (unset RUSTC RUSTDOC CARGO_TARGET_DIR && cd "$root" && cargo build --release -q -p conformance)
fi
# The grade once (2,040 cases: about 1.5 minutes under qemu here).
say "suite grade of the aarch64 mmkv"
ARM64_EXE="$CARGO_TARGET_DIR/$triple/release/mmkv" \
  "$conformance" suite grade \
  --reader "mmkv=MMKV=$root/ci/qemu-aarch64.sh python3 suite/drivers/mmkv_dump.py" \
  --require-pass mmkv --json "$CARGO_TARGET_DIR/suite-grades.json"
say "done: $passed tests passed (guest pages: $host_page, the reader's also 16384; official pages: $pages); suite grade passed"
