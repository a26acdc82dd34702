#!/usr/bin/env bash
# Fuzz smoke test (called from .ci/run): builds every target (one `cargo fuzz build`) and runs each
# for a few seconds (SMOKE_SECS, default 5) on seeds derived from the golden corpora, as `cargo fuzz
# run` would (same binary, corpus directory and artifact prefix) without its one cargo invocation
# per target. Fails if a target does not build or finds a crash. Works on a fresh machine:
# installs cargo-fuzz when it is missing; only a stable toolchain is needed (RUSTC_BOOTSTRAP=1
# lets it accept cargo-fuzz's flags).
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
# Same flags as the long runs (see README.md): no sanitizer, debug assertions on (cargo fuzz's
# release build).
echo "== fuzz smoke: cargo fuzz build -s none -a"
cargo fuzz build -s none -a
bin_dir="${CARGO_TARGET_DIR:-target}/$(rustc -vV | sed -n 's/^host: //p')/release"
for t in $TARGETS; do
    echo "== fuzz smoke: $t (${SECS}s)"
    [ -x "$bin_dir/$t" ] || { echo "fuzz smoke: no binary $bin_dir/$t" >&2; exit 1; }
    mkdir -p "corpus/$t" "artifacts/$t"
    if ! "$bin_dir/$t" -artifact_prefix="artifacts/$t/" -max_total_time="$SECS" -max_len=2048 \
        -timeout=10 "corpus/$t" > "$log" 2>&1; then
        tail -n 60 "$log" >&2
        echo "fuzz smoke: target $t failed; artifacts in fuzz/artifacts/$t" >&2
        exit 1
    fi
    grep -E '^Done [0-9]+ runs' "$log" || true
done
echo "fuzz smoke: all targets ok"
