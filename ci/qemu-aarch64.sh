#!/bin/sh
# Runs an aarch64 Linux program under user-mode qemu (ci/arm64.sh; docs/maintainers.md, "arm64
# under emulation"): `qemu-aarch64.sh PROGRAM ARGS...`, or with ARM64_EXE=PROGRAM set,
# `qemu-aarch64.sh ARGS...` (a single command for drivers that take one, as suite/drivers/
# mmkv_dump.py's MMKV). ARM64_GUEST_PAGE=16384 sets the guest page size through QEMU_PAGESIZE
# (qemu's -p), which the guest's environment passes on to the aarch64 programs it starts (run
# by the binfmt handler of qemu-user-static). Plain qemu: no `-L /usr/aarch64-linux-gnu`
# (threads hang with that C library); the static qemu finds the aarch64 loader and libraries at
# their multiarch paths.
if [ -n "${ARM64_GUEST_PAGE:-}" ]; then
  QEMU_PAGESIZE=$ARM64_GUEST_PAGE
  export QEMU_PAGESIZE
fi
exec qemu-aarch64-static ${ARM64_EXE:+"$ARM64_EXE"} "$@"
