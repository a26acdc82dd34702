#!/usr/bin/env bash
# End-to-end test of the maintainer flow "adding an MMKV version" (docs: "adding an MMKV version").
#
# It makes a synthetic upstream: a git repository holding the upstream mirror's tags (the newest
# one of versions.yaml among them) plus a new release tag, one minor version up, whose Core/ is the newest
# tag's with MMKV_VERSION in MMKVPredef.h bumped. Then, on a clone of this checkout's HEAD:
#
#   MMKV_GIT_URL=<synthetic> cargo run -p track-upstream -- add-version <new>
#
# and it checks what the docs promise: the new versions.yaml entry is pinned by the tag's Core tree
# hash, corpus/<new> is recorded, `MMKV_VERSIONS=<new> cargo test -p mmkv-sys` passes, and
# `report --only <new>` has the row `live` with every applicable kind `pass`. Second case: a tag whose
# MMKVPredef.h declares another version is refused with the documented message.
#
# Nothing names a version: the tags come from versions.yaml. The mirror is MMKV_GIT_URL when set,
# else ../shared/upstream/mmkv-core.bundle (as .ci/run finds it), else upstream. MMKV_SYS_CACHE is shared
# with the checkout, so only the new official version compiles; the clone builds our crates in its
# own target/ (dependencies from RUSTC_WRAPPER's cache when .ci/run sets one).
# Usage: bash ci/maintainer-flow.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
started=$(date +%s)
say() { printf 'maintainer-flow: %s\n' "$*"; }
fail() { printf 'maintainer-flow: FAIL: %s\n' "$*" >&2; exit 1; }

# The upstream mirror: MMKV_GIT_URL, else the bundle .ci/run uses, else the upstream repository
# that versions.yaml names.
mirror="${MMKV_GIT_URL:-}"
if [ -z "$mirror" ]; then
  mirror="$(cd .. && pwd)/shared/upstream/mmkv-core.bundle"
  [ -f "$mirror" ] || mirror=$(sed -n 's/.*git: {url: "\([^"]*\)".*/\1/p' versions.yaml | tail -1)
  [ -n "$mirror" ] || fail "no upstream mirror: set MMKV_GIT_URL"
fi
say "upstream mirror: $mirror"

# The newest tag of versions.yaml and the synthetic release after it (vX.Y.Z -> vX.(Y+1).0), plus
# a second one (vX.(Y+1).1) whose header is not bumped.
newest=$(sed -n 's/^  - tag: \(v[0-9.]*\).*/\1/p' versions.yaml | sort -V | tail -1)
[ -n "$newest" ] || fail "no tag in versions.yaml"
IFS=. read -r major minor _ <<<"${newest#v}"
new="v$major.$((minor + 1)).0"
stale="v$major.$((minor + 1)).1"
say "newest tag in versions.yaml: $newest; synthetic releases: $new (bumped), $stale (not bumped)"

# The work folder: MAINTAINER_FLOW_DIR when set (.ci/run sets it) and not in use by another
# run, else a new temporary folder. A fixed path lets a compilation cache hit across runs:
# sccache keys each crate by the working directory and, for crates that include build-script
# output (serde's), by their OUT_DIR under the target directory. At a new path every dependency
# compiles again (measured: 147 release and 127 test units, all misses at a new path, all
# hits at the same path).
work=""
if [ -n "${MAINTAINER_FLOW_DIR:-}" ]; then
  mkdir -p "$(dirname "$MAINTAINER_FLOW_DIR")"
  exec 9>"$MAINTAINER_FLOW_DIR.lock"
  if flock -n 9; then
    work="$MAINTAINER_FLOW_DIR"
    rm -rf "$work"
    mkdir -p "$work"
  else
    say "$MAINTAINER_FLOW_DIR is in use by another run: working in a temporary folder"
  fi
fi
[ -n "$work" ] || work=$(mktemp -d "${TMPDIR:-/tmp}/maintainer-flow.XXXXXX")
cleanup() { rm -rf "$work"; }
trap cleanup EXIT

# --- the synthetic upstream
up="$work/upstream"
git init -q "$up"
g() { git -C "$up" -c user.name=maintainer-flow -c user.email=flow@example.invalid "$@"; }
# Every tag of the mirror: add-version's conformance step also builds the anchors it compares with.
g fetch -q "$mirror" "+refs/tags/*:refs/tags/*"
g checkout -q --detach "refs/tags/$newest"
predef="$up/Core/MMKVPredef.h"
grep -q "MMKV_VERSION = \"$newest\"" "$predef" || fail "$newest's MMKVPredef.h does not declare $newest"
g tag "$stale" # the newest tag's Core as is: its header says $newest
sed -i "s/MMKV_VERSION = \"$newest\"/MMKV_VERSION = \"$new\"/" "$predef"
g commit -q -am "MMKV $new (synthetic: $newest with the version bumped)"
g tag -a "$new" -m "$new"
new_tree=$(g rev-parse "$new:Core")
say "synthetic upstream $up: $new Core/ tree $new_tree"

# --- a fresh copy of this checkout (its HEAD: what CI tests)
repo="$work/repo"
git clone -q "$root" "$repo"
# The clone builds in its own target directory, build directory included. Sharing the
# checkout's build directory replaced the checkout's artifacts: cargo hashes a path crate by its
# path inside the workspace, so the clone's `mmkv-corpus` (which bakes its CARGO_MANIFEST_DIR
# in) took the checkout's place, and `cargo run` in the checkout then ran binaries that read the
# corpus of this temporary clone (seen: a report after the flow checked 0 corpus stores). .ci/run
# runs this flow beside its report and suite; compiled dependencies come from its sccache.
unset CARGO_BUILD_BUILD_DIR
export CARGO_TARGET_DIR="$repo/target"
# The built official libraries are shared (each cache entry is locked while it is built).
export MMKV_SYS_CACHE="${MMKV_SYS_CACHE:-$root/target/mmkv-sys-cache}"
# The clone fetches its sources into its own vendor/ (from the synthetic upstream).
unset MMKV_VENDOR_DIR
# mmkv-sys's override test builds in MMKV_SYS_OVERRIDE_TEST_DIR, else the checkout's
# target/mmkv-sys-override-test: the same directory as the checkout's run of it.
export MMKV_SYS_OVERRIDE_TEST_DIR="${MMKV_SYS_OVERRIDE_TEST_DIR:-$root/target/mmkv-sys-override-test}"
mkdir -p "$repo/target"
# The property cases of add-version's conformance step, as few as .ci/run's tests run.
export PROPTEST_CASES="${PROPTEST_CASES:-2}" MIGRATION_CASES="${MIGRATION_CASES:-1}"
export MMKV_GIT_URL="$up"
cd "$repo"

# --- case 1: add-version, then what the maintainer runs after it
say "+ MMKV_GIT_URL=$up cargo run -p track-upstream -- add-version $new"
t0=$(date +%s)
cargo run -q -p track-upstream -- add-version "$new" 2>&1 | tee "$work/add.log" \
  || fail "add-version $new failed (log above)"
say "add-version took $(($(date +%s) - t0)) s"

entry=$(awk -v t="  - tag: $new" '$0 == t {on=1; print; next} on && /^  - tag:/ {exit} on {print}' versions.yaml)
[ -n "$entry" ] || fail "versions.yaml has no entry for $new"
printf '%s\n' "$entry"
grep -q "tag: $new, core_tree: $new_tree}" <<<"$entry" \
  || fail "the $new entry is not pinned by its Core tree $new_tree"
grep -q "features copied from $newest by add-version: review them" <<<"$entry" \
  || fail "the $new entry does not mark its features for review"
[ -f "corpus/$new/manifest.json" ] || fail "corpus/$new/manifest.json was not recorded"
[ -n "$(git status --porcelain -- "corpus/$new")" ] || fail "corpus/$new is not a new folder"
changed=$(git status --porcelain | grep -v -e ' versions.yaml$' -e " corpus/$new/\$" || true)
[ -z "$changed" ] || fail "add-version changed other files: $changed"
say "entry pinned by $new_tree, features marked for review, corpus/$new recorded"

# add-version ran the tag's tests (step 4 of the docs) and fails when one fails: that they ran is
# in its log (running them again here would only repeat them).
for t in "MMKV_VERSIONS=$new cargo test -p mmkv-sys" "MMKV_VERSIONS=$new,.* cargo test -p conformance"; do
  grep -qx "+ $t" "$work/add.log" || fail "add-version did not run: $t"
done
say "add-version ran and passed the mmkv-sys and conformance tests of $new"

say "+ MMKV_VERSIONS=$new cargo run --release -p conformance -- report --only $new"
t0=$(date +%s)
rc=0
MMKV_VERSIONS="$new" CONFORMANCE_CASES="${CONFORMANCE_CASES:-2}" \
  CONFORMANCE_FAULT_STATES="${CONFORMANCE_FAULT_STATES:-20}" \
  cargo run -q --release -p conformance -- report --only "$new" --markdown "$work/report.md" \
  >"$work/report.out" 2>&1 || rc=$?
tail -20 "$work/report.out"
say "report took $(($(date +%s) - t0)) s (exit status $rc)"
[ "$rc" = 0 ] || fail "report --only $new exited with $rc"
# The row of $new in the Markdown table: `live`, and every kind column `pass` or `n/a` (at least one
# `pass`). The kind columns are the header's cells between `source` and `workloads`.
verdict=$(awk -F' *[|] *' -v t="$new" '
  NR == 1 { for (i = 2; i < NF; i++) { if ($i == "source") s = i; if ($i == "workloads") w = i } ; next }
  $2 == t {
    if ($(s) != "live") { print "source " $(s); exit }
    for (i = s + 1; i < w; i++) {
      if ($i == "pass") pass++; else if ($i != "n/a") { print "kind column " i ": " $i; exit }
    }
    print (pass > 0 ? "ok " pass : "no kind passed"); exit
  }' "$work/report.md")
grep -F "| $new |" "$work/report.md" || true
case "$verdict" in
  ok*) say "report row $new: live, ${verdict#ok } kind(s) pass, the others n/a" ;;
  *) fail "report row $new: ${verdict:-missing}" ;;
esac

# --- case 2: a tag whose MMKVPredef.h is not the tag is refused, and nothing is written
git checkout -q -- versions.yaml
rm -rf "corpus/$new"
rc=0
cargo run -q -p track-upstream -- add-version "$stale" --no-test >"$work/stale.log" 2>&1 || rc=$?
cat "$work/stale.log"
want="track-upstream: error: refs/tags/$stale of $up embeds MMKV $newest (MMKVPredef.h), not the requested $stale"
[ "$rc" != 0 ] || fail "add-version $stale (header says $newest) succeeded"
grep -qxF "$want" "$work/stale.log" || fail "add-version $stale: expected the message: $want"
[ -z "$(git status --porcelain)" ] || fail "the refused add-version changed files: $(git status --porcelain)"
say "$stale (MMKVPredef.h says $newest) refused with the documented message"

say "passed in $(($(date +%s) - started)) s"
