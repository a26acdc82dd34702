#!/usr/bin/env bash
# Fuzz smoke test (called from .ci/run): builds every target and runs each for a few seconds
# (SMOKE_SECS, default 5) on seeds derived from the golden corpora. Fails if a target does not
# build or finds a crash. Works on a fresh machine: installs cargo-fuzz when it is missing;
# only a stable toolchain is needed (RUSTC_BOOTSTRAP=1 lets it accept cargo-fuzz's flags).
set -euo pipefail
cd "$(dirname "$0")"
SECS="${SMOKE_SECS:-5}"
TARGETS="meta data_plain decrypt_aes128 decrypt_aes256 reload load"
export RUSTC_BOOTSTRAP=1
if ! cargo fuzz --version > /dev/null 2>&1; then
    cargo install --locked cargo-fuzz
fi
./seed.sh
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for t in $TARGETS; do
    echo "== fuzz smoke: $t (${SECS}s)"
    # Same flags as the long runs (see README.md): no sanitizer, debug assertions on.
    if ! cargo fuzz run -s none -a "$t" -- -max_total_time="$SECS" -max_len=2048 \
        -timeout=10 > "$log" 2>&1; then
        tail -n 60 "$log" >&2
        echo "fuzz smoke: target $t failed; artifacts in fuzz/artifacts/$t" >&2
        exit 1
    fi
    grep -E '^Done [0-9]+ runs' "$log" || true
done
echo "fuzz smoke: all targets ok"
