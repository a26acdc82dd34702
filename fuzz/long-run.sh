#!/usr/bin/env bash
# Long fuzzing campaign: every target (or the ones given as arguments), one after another,
# 10 million executions each (override with RUNS=...). Logs to $LOG_DIR/<target>.log.
#   nohup fuzz/long-run.sh > /dev/null 2>&1 &
set -uo pipefail
cd "$(dirname "$0")"
RUNS="${RUNS:-10000000}"
LOG_DIR="${LOG_DIR:-/work/notes/fuzz-logs}"
mkdir -p "$LOG_DIR"
export RUSTC_BOOTSTRAP=1
command -v cargo-fuzz > /dev/null || cargo install --locked cargo-fuzz
./seed.sh
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(meta data_plain decrypt_aes128 decrypt_aes256 reload)
for t in "${targets[@]}"; do
    echo "== $t start $(date -u +%FT%TZ) runs=$RUNS" >> "$LOG_DIR/summary.log"
    cargo fuzz run -s none -a "$t" -- -runs="$RUNS" -max_len=2048 -timeout=10 \
        -print_final_stats=1 > "$LOG_DIR/$t.log" 2>&1
    rc=$?
    echo "== $t end $(date -u +%FT%TZ) rc=$rc $(grep -E '^Done [0-9]+ runs' "$LOG_DIR/$t.log")" \
        >> "$LOG_DIR/summary.log"
done
