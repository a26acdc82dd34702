// mmkv-sys shim: the disk-error schedule (io_faults_api.h).
//
// build.rs links each shim library with `-Wl,--wrap=ftruncate,--wrap=mmap,--wrap=msync,
// --wrap=write,--wrap=rename`: the calls that Core's objects (libcore.a, linked in that step)
// make go to the `__wrap_` functions here, `__real_` is libc's. Other libraries, the process
// and Rust's own I/O keep libc's functions. These are the file calls Core makes on Linux in
// every tag (none calls fallocate, posix_fallocate, fsync, fdatasync or pwrite): ftruncate
// (grow, trim, clearAll, truncate back), mmap (load and after every resize), msync (sync and
// the meta file), write (zero-filling a grown file, copyFile) and rename (tryAtomicRename,
// from v1.2.11).
#include "io_faults_api.h"

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

namespace {

struct Rule {
    std::atomic<uint64_t> from{0};
    std::atomic<uint64_t> count{0}; // 0: no rule
    std::atomic<int> err{0};
    std::atomic<uint64_t> made{0};
    std::atomic<uint64_t> failed{0};
};

Rule g_rules[MMKV_IO_CALLS];

// Counts one call of `call`; true (errno set) when the schedule fails it.
bool fails(uint32_t call) {
    Rule &r = g_rules[call];
    const uint64_t n = r.made.fetch_add(1, std::memory_order_acq_rel) + 1;
    const uint64_t count = r.count.load(std::memory_order_acquire);
    if (count == 0) {
        return false;
    }
    const uint64_t from = r.from.load(std::memory_order_acquire);
    if (n < from || n - from >= count) {
        return false;
    }
    r.failed.fetch_add(1, std::memory_order_acq_rel);
    errno = r.err.load(std::memory_order_acquire);
    return true;
}

void reset() {
    for (auto &r : g_rules) {
        r.count.store(0, std::memory_order_release);
        r.from.store(0, std::memory_order_release);
        r.err.store(0, std::memory_order_release);
        r.made.store(0, std::memory_order_release);
        r.failed.store(0, std::memory_order_release);
    }
}

int setRule(uint32_t call, uint64_t from, uint64_t count, int err) {
    if (call >= MMKV_IO_CALLS) {
        return -1;
    }
    Rule &r = g_rules[call];
    r.count.store(0, std::memory_order_release);
    r.from.store(from, std::memory_order_release);
    r.err.store(err, std::memory_order_release);
    r.count.store(count, std::memory_order_release);
    return 0;
}

uint64_t made(uint32_t call) {
    return call < MMKV_IO_CALLS ? g_rules[call].made.load(std::memory_order_acquire) : 0;
}

uint64_t failed(uint32_t call) {
    return call < MMKV_IO_CALLS ? g_rules[call].failed.load(std::memory_order_acquire) : 0;
}

const mmkv_shim_io_faults_t kFaults = {
    MMKV_IO_FAULTS_ABI_VERSION, MMKV_IO_CALLS, reset, setRule, made, failed,
};

} // namespace

extern "C" {
int __real_ftruncate(int fd, off_t length);
void *__real_mmap(void *addr, size_t length, int prot, int flags, int fd, off_t offset);
int __real_msync(void *addr, size_t length, int flags);
ssize_t __real_write(int fd, const void *buf, size_t count);
int __real_rename(const char *from, const char *to);

int __wrap_ftruncate(int fd, off_t length) {
    return fails(MMKV_IO_FTRUNCATE) ? -1 : __real_ftruncate(fd, length);
}

void *__wrap_mmap(void *addr, size_t length, int prot, int flags, int fd, off_t offset) {
    return fails(MMKV_IO_MMAP) ? MAP_FAILED : __real_mmap(addr, length, prot, flags, fd, offset);
}

int __wrap_msync(void *addr, size_t length, int flags) {
    return fails(MMKV_IO_MSYNC) ? -1 : __real_msync(addr, length, flags);
}

ssize_t __wrap_write(int fd, const void *buf, size_t count) {
    return fails(MMKV_IO_WRITE) ? -1 : __real_write(fd, buf, count);
}

int __wrap_rename(const char *from, const char *to) {
    return fails(MMKV_IO_RENAME) ? -1 : __real_rename(from, to);
}

__attribute__((visibility("default"))) const mmkv_shim_io_faults_t *mmkv_shim_io_faults(uint32_t abiVersion) {
    return abiVersion == MMKV_IO_FAULTS_ABI_VERSION ? &kFaults : nullptr;
}
} // extern "C"
