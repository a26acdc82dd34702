#!/bin/sh
# Runs an aarch64 Linux program under user-mode qemu (ci/arm64.sh; docs/maintainers.md, "arm64
# under emulation"): `qemu-aarch64.sh PROGRAM ARGS...`, or with ARM64_EXE=PROGRAM set,
# `qemu-aarch64.sh ARGS...` (a single command for drivers that take one, as suite/drivers/
# mmkv_dump.py's MMKV). The aarch64 programs it starts run through qemu-user-binfmt's handler.
# The guest's page size is the host's: qemu 10 emulates no other (its -p, or
# QEMU_PAGESIZE, only warns); MMKV_SYS_PAGE_SIZE gives the official Core other page sizes. Plain
# qemu: no `-L /usr/aarch64-linux-gnu` (threads hang with that C library); the static qemu
# finds the aarch64 loader and libraries at their multiarch paths.
exec qemu-aarch64-static ${ARM64_EXE:+"$ARM64_EXE"} "$@"
