#!/bin/sh
# Runs an aarch64 Linux program under user-mode qemu (ci/arm64.sh; docs/maintainers.md, "arm64
# under emulation"): `qemu-aarch64.sh PROGRAM ARGS...`, or with ARM64_EXE=PROGRAM set,
# `qemu-aarch64.sh ARGS...` (a single command for drivers that take one, as suite/drivers/
# mmkv_dump.py's MMKV). ARM64_GUEST_PAGE=16384 sets the guest page size (qemu's -p). Plain qemu:
# no `-L /usr/aarch64-linux-gnu` (threads hang with that C library); the statically linked qemu
# finds the aarch64 loader and libraries at their multiarch paths.
exec qemu-aarch64-static ${ARM64_GUEST_PAGE:+-p "$ARM64_GUEST_PAGE"} ${ARM64_EXE:+"$ARM64_EXE"} "$@"
