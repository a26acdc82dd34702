#!/usr/bin/env bash
# Differential fuzzing campaign (target `differential`): the reader against the official
# library of one version, both error strategies. Builds that version into mmkv-sys (default
# the newest tag of versions.yaml, else whatever MMKV_VERSIONS selects), seeds from the golden
# corpora (the `reload` seeds: golden regions cut at record boundaries), and runs RUNS
# executions (default 1,000,000) in fork mode, so that an official crash or hang is saved
# under artifacts/differential/ and the campaign goes on. Log: $LOG_DIR/differential.log.
#   MMKV_CORE_V2_4_2=/path/to/v2.4.2/Core nohup fuzz/diff-run.sh > /dev/null 2>&1 &
set -uo pipefail
cd "$(dirname "$0")"
RUNS="${RUNS:-1000000}"
LOG_DIR="${LOG_DIR:-/work/notes/fuzz-logs}"
FORK="${FORK:-1}"
# Default: the newest tag of versions.yaml.
export MMKV_VERSIONS="${MMKV_VERSIONS:-$(sed -n 's/^  - tag: \(v[0-9.]*\).*/\1/p' ../versions.yaml | sort -V | tail -1)}"
export MMKV_SYS_JOBS="${MMKV_SYS_JOBS:-1}"
export RUSTC_BOOTSTRAP=1
mkdir -p "$LOG_DIR" corpus/differential
command -v cargo-fuzz > /dev/null || cargo install --locked cargo-fuzz
./seed.sh
cp -n corpus/reload/* corpus/differential/ 2> /dev/null || true
echo "== differential start $(date -u +%FT%TZ) runs=$RUNS fork=$FORK" >> "$LOG_DIR/summary.log"
cargo fuzz run -s none -a --features official differential -- -runs="$RUNS" -max_len=4096 \
    -timeout=20 -rss_limit_mb=4096 -fork="$FORK" -ignore_crashes=1 -ignore_timeouts=1 \
    -print_final_stats=1 > "$LOG_DIR/differential.log" 2>&1
rc=$?
echo "== differential end $(date -u +%FT%TZ) rc=$rc" >> "$LOG_DIR/summary.log"
