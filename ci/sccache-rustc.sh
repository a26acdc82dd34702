#!/usr/bin/env bash
# RUSTC_WRAPPER of .ci/run: compiles through sccache (a compilation cache kept between runs) and,
# when that fails, compiles again without it. A broken, missing or unreachable sccache then costs
# time but never fails the build; a real compile error fails both times, and only the second
# attempt's output (the compiler's own) is shown. Bash, not sh: dash drops environment variables
# whose names are not shell identifiers, such as cargo's CARGO_BIN_EXE_<bin-name> for tests.
out=$(mktemp) || exec "$@"
err=$(mktemp) || { rm -f "$out"; exec "$@"; }
if sccache "$@" >"$out" 2>"$err"; then
  cat "$out"
  cat "$err" >&2
  rm -f "$out" "$err"
  exit 0
fi
rm -f "$out" "$err"
exec "$@"
