#!/bin/sh
# Runs an aarch64 Linux program under user-mode qemu (ci/arm64.sh; docs/maintainers.md, "arm64
# under emulation"): `qemu-aarch64.sh PROGRAM ARGS...`, or with ARM64_EXE=PROGRAM set,
# `qemu-aarch64.sh ARGS...` (a single command for drivers that take one, as suite/drivers/
# mmkv_dump.py's MMKV). The aarch64 programs it starts run through qemu-user-binfmt's handler
# (the installed qemu 10). By default the guest's page size is the host's: qemu 10 emulates no
# other (its -p, or QEMU_PAGESIZE, only warns); MMKV_SYS_PAGE_SIZE gives the official Core
# other page sizes. ARM64_QEMU=PATH runs another qemu-aarch64 and ARM64_GUEST_PAGE=16384 gives
# it `-p 16384`: ci/arm64.sh runs the reader's tests so with Debian 12's qemu 7.2 (unpacked,
# ci/arm64-env.sh), whose -p works. Only this process gets it: the children it starts run
# through binfmt at the host's page. Plain qemu: no `-L /usr/aarch64-linux-gnu` (threads hang
# with that C library); the static qemu finds the aarch64 loader and libraries at their
# multiarch paths.
exec "${ARM64_QEMU:-qemu-aarch64-static}" ${ARM64_GUEST_PAGE:+-p "$ARM64_GUEST_PAGE"} \
  ${ARM64_EXE:+"$ARM64_EXE"} "$@"
