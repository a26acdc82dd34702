// C++ half of the mmkv-sys cxx bridge: loads one version's shim library with dlopen and
// forwards calls through its C function table (shim_api.h).
#pragma once

#include "rust/cxx.h"
#include "shim_api.h"
#include "io_faults_api.h"

#include <cstdint>
#include <memory>

namespace mmkv_sys {

// Rust-side growable byte buffer (bridge.rs); C++ appends whole buffers to it.
struct ByteSink;

class ShimLibrary {
public:
    ShimLibrary(void *handle, const mmkv_shim_api_t *api);
    ShimLibrary(const ShimLibrary &) = delete;
    ShimLibrary &operator=(const ShimLibrary &) = delete;

    rust::String mmkv_version() const;
    uint32_t shim_version() const;
    uint64_t caps() const;
    void set_error_strategy(bool recover) const;
    void set_test_time(bool has_time, int64_t secs) const;
    void set_page_size(size_t size) const;
    size_t initialized_page_size() const;

    // The shim's open_as (its MMKV_SHIM_OPEN_* flags from read_only and name_space).
    size_t open_as(rust::Slice<const uint8_t> dir, rust::Slice<const uint8_t> id, bool multi, bool read_only,
                   bool name_space, rust::Slice<const uint8_t> key, bool has_key, bool aes256) const;
    void close(size_t h) const;
    bool enable_key_expire(size_t h, uint32_t secs) const;
    bool disable_key_expire(size_t h) const;

    bool set_bool(size_t h, rust::Slice<const uint8_t> key, bool v, bool has_expire, uint32_t expire) const;
    bool set_i32(size_t h, rust::Slice<const uint8_t> key, int32_t v, bool has_expire, uint32_t expire) const;
    bool set_u32(size_t h, rust::Slice<const uint8_t> key, uint32_t v, bool has_expire, uint32_t expire) const;
    bool set_i64(size_t h, rust::Slice<const uint8_t> key, int64_t v, bool has_expire, uint32_t expire) const;
    bool set_u64(size_t h, rust::Slice<const uint8_t> key, uint64_t v, bool has_expire, uint32_t expire) const;
    bool set_f32(size_t h, rust::Slice<const uint8_t> key, float v, bool has_expire, uint32_t expire) const;
    bool set_f64(size_t h, rust::Slice<const uint8_t> key, double v, bool has_expire, uint32_t expire) const;
    bool set_string(size_t h, rust::Slice<const uint8_t> key, rust::Slice<const uint8_t> v, bool has_expire,
                    uint32_t expire) const;
    bool set_bytes(size_t h, rust::Slice<const uint8_t> key, rust::Slice<const uint8_t> v, bool has_expire,
                   uint32_t expire) const;
    bool set_string_vec(size_t h, rust::Slice<const uint8_t> key, rust::Slice<const uint8_t> data,
                        rust::Slice<const size_t> offsets, bool has_expire, uint32_t expire) const;
    bool set_vec(size_t h, rust::Slice<const uint8_t> key, int32_t kind, rust::Slice<const uint8_t> raw, size_t count,
                 bool has_expire, uint32_t expire) const;

    bool get_bool(size_t h, rust::Slice<const uint8_t> key, bool &out) const;
    bool get_i32(size_t h, rust::Slice<const uint8_t> key, int32_t &out) const;
    bool get_u32(size_t h, rust::Slice<const uint8_t> key, uint32_t &out) const;
    bool get_i64(size_t h, rust::Slice<const uint8_t> key, int64_t &out) const;
    bool get_u64(size_t h, rust::Slice<const uint8_t> key, uint64_t &out) const;
    bool get_f32(size_t h, rust::Slice<const uint8_t> key, float &out) const;
    bool get_f64(size_t h, rust::Slice<const uint8_t> key, double &out) const;
    bool get_string(size_t h, rust::Slice<const uint8_t> key, ByteSink &out) const;
    bool get_bytes(size_t h, rust::Slice<const uint8_t> key, ByteSink &out) const;
    bool get_string_vec(size_t h, rust::Slice<const uint8_t> key, ByteSink &data,
                        rust::Vec<size_t> &lens) const;
    bool get_vec(size_t h, rust::Slice<const uint8_t> key, int32_t kind, ByteSink &raw) const;

    int32_t remove(size_t h, rust::Slice<const uint8_t> key) const;
    void remove_keys(size_t h, rust::Slice<const uint8_t> data, rust::Slice<const size_t> offsets) const;
    void clear_all(size_t h, bool keep_space) const;
    void trim(size_t h) const;
    void sync(size_t h, bool synchronous) const;
    void clear_memory_cache(size_t h) const;
    void all_keys(size_t h, bool filter_expire, ByteSink &data, rust::Vec<size_t> &lens) const;
    uint64_t count(size_t h, bool filter_expire) const;
    bool contains(size_t h, rust::Slice<const uint8_t> key) const;
    uint64_t total_size(size_t h) const;
    uint64_t actual_size(size_t h) const;
    uint64_t value_size(size_t h, rust::Slice<const uint8_t> key, bool actual) const;
    bool rekey(size_t h, rust::Slice<const uint8_t> key, bool aes256) const;

    // The disk-error schedule (io_faults_api.h): `call` MMKV_IO_CALLS resets every rule and
    // counter, another sets that call's rule; io_fault_count reads a call's counter.
    void set_io_fault(uint32_t call, uint64_t from, uint64_t count, int32_t err) const;
    uint64_t io_fault_count(uint32_t call, bool failed) const;
    bool compare_before_set(size_t h, bool enable) const;
    bool lock(size_t h, int32_t op) const;
    bool backup_one(rust::Slice<const uint8_t> id, rust::Slice<const uint8_t> dst_dir,
                    rust::Slice<const uint8_t> src_dir) const;
    bool restore_one(rust::Slice<const uint8_t> id, rust::Slice<const uint8_t> src_dir,
                     rust::Slice<const uint8_t> dst_dir) const;
    bool is_file_valid(rust::Slice<const uint8_t> id, rust::Slice<const uint8_t> dir) const;
    bool remove_storage(rust::Slice<const uint8_t> id, rust::Slice<const uint8_t> dir) const;
    uint64_t import_from(size_t h, size_t src) const;

private:
    void check(int rc, const char *what) const;
    void *m_handle;
    const mmkv_shim_api_t *m_api;
};

// dlopen(path, RTLD_NOW | RTLD_LOCAL) and fetch the shim's table; throws on failure.
std::unique_ptr<ShimLibrary> load_shim(rust::Str path);

} // namespace mmkv_sys
