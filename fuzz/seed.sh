#!/usr/bin/env bash
# Writes seed inputs for every fuzz target into fuzz/corpus/<target>/ (git-ignored) from the
# golden stores in ../corpus plus synthetic stores. Safe to re-run (existing files are kept).
set -euo pipefail
cd "$(dirname "$0")"
cargo run --quiet --release --no-default-features --features tools --bin seed-corpus
