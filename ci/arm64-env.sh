# shellcheck shell=bash
# shellcheck disable=SC2034 # its variables are for the scripts that source it
# Sourced by ci/arm64.sh and ci/arm64-report.sh: the aarch64 toolchain's packages and the
# environment of every aarch64 build and run (docs/maintainers.md, "arm64 under emulation").
# Expects `root` (the checkout) to be set.

# The packages (Debian 12): Debian's rustc-web (a rustc with an aarch64 std), the cross
# toolchain, clang (mmkv-sys/build.rs compiles every aarch64 official Core with it) and the
# aarch64 zlib (the official Core links it).
arm64_pkgs=(rustc-web libstd-rust-web-dev:arm64 g++-aarch64-linux-gnu gcc-aarch64-linux-gnu
  clang zlib1g-dev:arm64)
# And qemu-user-static at least arm64_qemu_min: on Debian 12 from its backports (qemu 10; the
# release's own is 7.2, whose heap grew without bound in the report's 16 KiB many-keys cells
# until the OOM killer struck: docs/maintainers.md, "arm64 under emulation"). qemu 10's
# qemu-user-static is a transitional package: qemu-user has the static binaries (and the
# qemu-aarch64-static name), qemu-user-binfmt the binfmt entry.
arm64_qemu_min=1:10
arm64_qemu_suite=
# shellcheck source=/dev/null
if [ "$(. /etc/os-release && echo "${VERSION_CODENAME:-}")" = bookworm ]; then
  arm64_qemu_suite=bookworm-backports
fi
arm64_qemu_pkgs=(qemu-user-static qemu-user qemu-user-binfmt)
[ -z "$arm64_qemu_suite" ] || arm64_qemu_pkgs=("${arm64_qemu_pkgs[@]/%//$arm64_qemu_suite}")

# The aarch64 build: Debian's rustc (rustup's has no aarch64 std here), through the caller's
# RUSTC_WRAPPER when there is one (sccache keys every compilation by the compiler and its
# target, so .ci/run's cache serves both toolchains: measured, a second release build of the
# aarch64 mmkv at the same path took 33 s instead of 230 s, 102 of 111 crates hits). The cross
# gcc links and compiles the cxx bridge; mmkv-sys keys each built official library by its
# compiler, target and flags (clang++ --target=aarch64-unknown-linux-gnu), so host and aarch64
# builds share MMKV_SYS_CACHE without ever mixing.
export RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc
# ARM64_TARGET_DIR: another target directory (default target/arm64), e.g. for two report runs
# at once.
export CARGO_TARGET_DIR="${ARM64_TARGET_DIR:-$root/target/arm64}"
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="$root/ci/qemu-aarch64.sh"
export CXX_aarch64_unknown_linux_gnu=aarch64-linux-gnu-g++ CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc
arm64_triple=aarch64-unknown-linux-gnu
arm64_binfmt=/proc/sys/fs/binfmt_misc/qemu-aarch64

# The packages of arm64_pkgs that are not installed, one a line, and qemu-user-static when it
# is not installed at arm64_qemu_min or newer.
arm64_missing() {
  local p v
  for p in "${arm64_pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || echo "$p"
  done
  v=$(dpkg-query -W -f='${Status} ${Version}' qemu-user-static 2>/dev/null || true)
  [[ "$v" == "install ok installed "* ]] && dpkg --compare-versions "${v##* }" ge "$arm64_qemu_min" ||
    echo "qemu-user-static (>= $arm64_qemu_min)"
}

# apt-get update, and arm64_qemu_suite added to apt's sources when no source has it yet, as
# Debian documents backports (main, one deb822 entry in sources.list.d), on the mirror apt
# already uses for the release itself (with its Debian archive keyring when installed), then
# apt-get update again. apt-get indextargets lists only the suites whose indexes apt has
# fetched, hence the first update.
arm64_apt_update() {
  local release=${arm64_qemu_suite%-backports} mirror key=/usr/share/keyrings/debian-archive-keyring.gpg
  apt-get update -qq
  [ -n "$arm64_qemu_suite" ] || return 0
  # shellcheck disable=SC2016 # apt's own $(FIELD) format, not a shell expansion
  apt-get indextargets --format '$(RELEASE)' | grep -qxF "$arm64_qemu_suite" && return 0
  # shellcheck disable=SC2016
  mirror=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' |
    awk -v r="$release" '$2 == r {print $1; exit}')
  [ -n "$mirror" ] || { echo "no apt source for $release: cannot add $arm64_qemu_suite" >&2; return 1; }
  {
    printf 'Types: deb\nURIs: %s\nSuites: %s\nComponents: main\n' "$mirror" "$arm64_qemu_suite"
    [ ! -e "$key" ] || printf 'Signed-By: %s\n' "$key"
  } >"/etc/apt/sources.list.d/$arm64_qemu_suite.sources"
  apt-get update -qq
}

# Debian 12's own qemu-aarch64-static (7.2), unpacked into a cache, not installed: qemu 10
# ignores -p on a 4 KiB host, 7.2 gives the guest the page size asked for, so ci/arm64.sh runs
# the reader's tests under it at 16 KiB guest pages (docs/maintainers.md, "arm64 under
# emulation"). ARM64_QEMU72=PATH: one unpacked elsewhere.
arm64_qemu72="${ARM64_QEMU72:-${XDG_CACHE_HOME:-$HOME/.cache}/mmkv-reader-ci/qemu-7.2/qemu-aarch64-static}"

# Unpacks arm64_qemu72 when it is not there: the newest qemu-user-static 7.2 apt knows (the
# release's own, asked for by its version: with backports configured apt would pick 10),
# fetched by apt-get download (checked against apt's indexes; one apt-get update first when
# apt knows none) and unpacked with dpkg-deb -x. Only the aarch64 binary is kept.
arm64_fetch_qemu72() {
  local v best='' tmp
  [ -x "$arm64_qemu72" ] && return 0
  for _ in 1 2; do
    while read -r v; do
      if dpkg --compare-versions "$v" ge 1:7.2 && dpkg --compare-versions "$v" lt 1:7.3~ &&
        { [ -z "$best" ] || dpkg --compare-versions "$v" gt "$best"; }; then
        best=$v
      fi
    done < <(apt-cache madison qemu-user-static 2>/dev/null | awk -F'|' '{gsub(/ /, "", $2); print $2}')
    [ -z "$best" ] || break
    apt-get update -qq
  done
  [ -n "$best" ] || { echo "apt knows no qemu-user-static 7.2" >&2; return 1; }
  tmp=$(mktemp -d)
  # apt fetches as its _apt user when it runs as root: that user writes the .deb here.
  [ "$(id -u)" != 0 ] || chown _apt "$tmp" 2>/dev/null || true
  if ! { (cd "$tmp" && apt-get download -qq "qemu-user-static=$best") &&
    dpkg-deb -x "$tmp"/qemu-user-static_*.deb "$tmp/root" &&
    mkdir -p "${arm64_qemu72%/*}" &&
    install -m 755 "$tmp/root/usr/bin/qemu-aarch64-static" "$arm64_qemu72.tmp"; }; then
    rm -rf "$tmp"
    echo "could not unpack qemu-user-static $best" >&2
    return 1
  fi
  rm -rf "$tmp"
  echo "$best" >"${arm64_qemu72%/*}/version"
  mv "$arm64_qemu72.tmp" "$arm64_qemu72"
}
