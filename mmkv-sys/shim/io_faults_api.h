// C ABI of a shim library's disk-error schedule (io_faults.cpp). Written for this project.
//
// build.rs links every shim library with `-Wl,--wrap=` for each call below: Core's calls go to
// io_faults.cpp's `__wrap_` functions, which count them and fail the ones the schedule names
// (return -1 / MAP_FAILED with errno set) and otherwise call libc's. With no rule set every
// call goes straight to libc, as in a library linked without the wraps.
#ifndef MMKV_SHIM_IO_FAULTS_API_H
#define MMKV_SHIM_IO_FAULTS_API_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MMKV_IO_FAULTS_ABI_VERSION 1u

// The wrapped calls (indices of the schedule and of the counters).
#define MMKV_IO_FTRUNCATE 0u
#define MMKV_IO_MMAP 1u
#define MMKV_IO_MSYNC 2u
#define MMKV_IO_WRITE 3u
#define MMKV_IO_RENAME 4u
#define MMKV_IO_CALLS 5u

typedef struct mmkv_shim_io_faults {
    uint32_t abi_version;
    uint32_t calls; // MMKV_IO_CALLS
    // Clears every rule and counter.
    void (*reset)(void);
    // Fails calls `from` .. `from + count - 1` of `call` (numbered from 1 since the last reset)
    // with `err`; count 0 removes the call's rule. Returns 0, or -1 for an unknown call.
    int (*set_rule)(uint32_t call, uint64_t from, uint64_t count, int err);
    // Calls of `call` made since the last reset (failed ones included), and those failed.
    uint64_t (*made)(uint32_t call);
    uint64_t (*failed)(uint32_t call);
} mmkv_shim_io_faults_t;

typedef const mmkv_shim_io_faults_t *(*mmkv_shim_io_faults_fn)(uint32_t abi_version);

#ifdef __cplusplus
}
#endif

#endif // MMKV_SHIM_IO_FAULTS_API_H
