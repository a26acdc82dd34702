# Sourced by ci/arm64.sh and ci/arm64-report.sh: the aarch64 toolchain's packages and the
# environment of every aarch64 build and run (docs/maintainers.md, "arm64 under emulation").
# Expects `root` (the checkout) to be set.

# The packages (Debian 12): Debian's rustc-web (a rustc with an aarch64 std), the cross
# toolchain, clang (mmkv-sys/build.rs compiles every aarch64 official Core with it), the
# aarch64 zlib (the official Core links it) and qemu-user-static.
arm64_pkgs=(rustc-web libstd-rust-web-dev:arm64 g++-aarch64-linux-gnu gcc-aarch64-linux-gnu
  clang zlib1g-dev:arm64 qemu-user-static)

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

# The packages of arm64_pkgs that are not installed, one a line.
arm64_missing() {
  local p
  for p in "${arm64_pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || echo "$p"
  done
}
