// C++ half of the mmkv-sys cxx bridge (see bridge.h).
#include "mmkv-sys/shim/bridge.h"
#include "mmkv-sys/src/bridge.rs.h"

#include <dlfcn.h>
#include <stdexcept>
#include <string>

namespace mmkv_sys {

namespace {

void *ptr(size_t h) {
    return reinterpret_cast<void *>(h);
}

// One call into Rust per buffer (a memcpy there), not one per byte.
void sinkToVec(void *ctx, const uint8_t *data, size_t len) {
    static_cast<ByteSink *>(ctx)->extend(rust::Slice<const uint8_t>(data, len));
}

struct Items {
    ByteSink *data;
    rust::Vec<size_t> *lens;
};

void sinkToItems(void *ctx, const uint8_t *data, size_t len) {
    auto items = static_cast<Items *>(ctx);
    sinkToVec(items->data, data, len);
    items->lens->push_back(len);
}

} // namespace

ShimLibrary::ShimLibrary(void *handle, const mmkv_shim_api_t *api) : m_handle(handle), m_api(api) {}

std::unique_ptr<ShimLibrary> load_shim(rust::Str path) {
    std::string p(path.data(), path.size());
    // Never dlclose()d: MMKV keeps global state and threads alive for the process lifetime.
    void *handle = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *err = dlerror();
        throw std::runtime_error(std::string("dlopen failed: ") + (err ? err : p));
    }
    auto entry = reinterpret_cast<mmkv_shim_api_fn>(dlsym(handle, "mmkv_shim_api"));
    if (!entry) {
        throw std::runtime_error("dlopen: " + p + " has no mmkv_shim_api symbol");
    }
    const mmkv_shim_api_t *api = entry(MMKV_SHIM_ABI_VERSION);
    if (!api || api->abi_version != MMKV_SHIM_ABI_VERSION) {
        throw std::runtime_error("shim ABI mismatch in " + p);
    }
    return std::make_unique<ShimLibrary>(handle, api);
}

void ShimLibrary::check(int rc, const char *what) const {
    switch (rc) {
        case MMKV_SHIM_OK: return;
        case MMKV_SHIM_UNSUPPORTED: throw std::runtime_error(std::string("unsupported: ") + what);
        case MMKV_SHIM_BAD_ARG: throw std::runtime_error(std::string("bad argument: ") + what + ": " + m_api->last_error());
        case MMKV_SHIM_FAILED: throw std::runtime_error(std::string("failed: ") + what + ": " + m_api->last_error());
        default: throw std::runtime_error(std::string("exception: ") + what + ": " + m_api->last_error());
    }
}

rust::String ShimLibrary::mmkv_version() const {
    return rust::String(m_api->mmkv_version);
}
uint32_t ShimLibrary::shim_version() const {
    return m_api->shim_version;
}
uint64_t ShimLibrary::caps() const {
    return m_api->caps;
}
void ShimLibrary::set_error_strategy(bool recover) const {
    check(m_api->set_error_strategy(recover ? 1 : 0), "registerErrorHandler");
}

void ShimLibrary::set_test_time(bool has_time, int64_t secs) const {
    check(m_api->set_test_time(has_time ? 1 : 0, secs), "set_test_time");
}

void ShimLibrary::set_page_size(size_t size) const {
    check(m_api->set_page_size(size), "set_page_size");
}

size_t ShimLibrary::initialized_page_size() const {
    return m_api->initialized_page_size();
}

size_t ShimLibrary::open_as(rust::Slice<const uint8_t> dir, rust::Slice<const uint8_t> id, bool multi,
                            bool read_only, bool name_space, rust::Slice<const uint8_t> key, bool has_key,
                            bool aes256) const {
    const uint32_t flags = (read_only ? MMKV_SHIM_OPEN_READ_ONLY : 0u) | (name_space ? MMKV_SHIM_OPEN_NAME_SPACE : 0u);
    void *out = nullptr;
    check(m_api->open_as(dir.data(), dir.size(), id.data(), id.size(), multi ? 1 : 0, flags, key.data(), key.size(),
                         has_key ? 1 : 0, aes256 ? 1 : 0, &out),
          name_space ? "NameSpace::mmkvWithID" : "mmkvWithID");
    return reinterpret_cast<size_t>(out);
}
void ShimLibrary::close(size_t h) const {
    check(m_api->close(ptr(h)), "close");
}
bool ShimLibrary::enable_key_expire(size_t h, uint32_t secs) const {
    int ret = 0;
    check(m_api->enable_key_expire(ptr(h), secs, &ret), "enableAutoKeyExpire");
    return ret != 0;
}
bool ShimLibrary::disable_key_expire(size_t h) const {
    int ret = 0;
    check(m_api->disable_key_expire(ptr(h), &ret), "disableAutoKeyExpire");
    return ret != 0;
}

#define MMKV_SYS_SETTER(NAME, TYPE, CAST)                                                                  \
    bool ShimLibrary::NAME(size_t h, rust::Slice<const uint8_t> key, TYPE v, bool has_expire, uint32_t expire) \
        const {                                                                                            \
        int ret = 0;                                                                                       \
        check(m_api->NAME(ptr(h), key.data(), key.size(), CAST(v), has_expire ? 1 : 0, expire, &ret),       \
              has_expire ? "set with expireDuration" : "set");                                             \
        return ret != 0;                                                                                   \
    }

#define MMKV_SYS_SAME(v) (v)
#define MMKV_SYS_BOOL(v) ((v) ? 1 : 0)
MMKV_SYS_SETTER(set_bool, bool, MMKV_SYS_BOOL)
MMKV_SYS_SETTER(set_i32, int32_t, MMKV_SYS_SAME)
MMKV_SYS_SETTER(set_u32, uint32_t, MMKV_SYS_SAME)
MMKV_SYS_SETTER(set_i64, int64_t, MMKV_SYS_SAME)
MMKV_SYS_SETTER(set_u64, uint64_t, MMKV_SYS_SAME)
MMKV_SYS_SETTER(set_f32, float, MMKV_SYS_SAME)
MMKV_SYS_SETTER(set_f64, double, MMKV_SYS_SAME)

bool ShimLibrary::set_string(size_t h, rust::Slice<const uint8_t> key, rust::Slice<const uint8_t> v, bool has_expire,
                             uint32_t expire) const {
    int ret = 0;
    check(m_api->set_string(ptr(h), key.data(), key.size(), v.data(), v.size(), has_expire ? 1 : 0, expire, &ret),
          "set(std::string)");
    return ret != 0;
}
bool ShimLibrary::set_bytes(size_t h, rust::Slice<const uint8_t> key, rust::Slice<const uint8_t> v, bool has_expire,
                            uint32_t expire) const {
    int ret = 0;
    check(m_api->set_bytes(ptr(h), key.data(), key.size(), v.data(), v.size(), has_expire ? 1 : 0, expire, &ret),
          "set(MMBuffer)");
    return ret != 0;
}
bool ShimLibrary::set_string_vec(size_t h, rust::Slice<const uint8_t> key, rust::Slice<const uint8_t> data,
                                 rust::Slice<const size_t> offsets, bool has_expire, uint32_t expire) const {
    if (offsets.size() == 0) {
        throw std::runtime_error("bad argument: string vector offsets");
    }
    int ret = 0;
    check(m_api->set_string_vec(ptr(h), key.data(), key.size(), data.data(), offsets.data(), offsets.size() - 1,
                                has_expire ? 1 : 0, expire, &ret),
          "set(std::vector<std::string>)");
    return ret != 0;
}
bool ShimLibrary::set_vec(size_t h, rust::Slice<const uint8_t> key, int32_t kind, rust::Slice<const uint8_t> raw,
                          size_t count, bool has_expire, uint32_t expire) const {
    int ret = 0;
    check(m_api->set_vec(ptr(h), key.data(), key.size(), kind, raw.data(), count, has_expire ? 1 : 0, expire, &ret),
          "set(std::vector<T>)");
    return ret != 0;
}

bool ShimLibrary::get_bool(size_t h, rust::Slice<const uint8_t> key, bool &out) const {
    int v = 0, has = 0;
    check(m_api->get_bool(ptr(h), key.data(), key.size(), &v, &has), "getBool");
    out = v != 0;
    return has != 0;
}

#define MMKV_SYS_GETTER(NAME, TYPE, WHAT)                                                 \
    bool ShimLibrary::NAME(size_t h, rust::Slice<const uint8_t> key, TYPE &out) const {   \
        int has = 0;                                                                      \
        check(m_api->NAME(ptr(h), key.data(), key.size(), &out, &has), WHAT);             \
        return has != 0;                                                                  \
    }
MMKV_SYS_GETTER(get_i32, int32_t, "getInt32")
MMKV_SYS_GETTER(get_u32, uint32_t, "getUInt32")
MMKV_SYS_GETTER(get_i64, int64_t, "getInt64")
MMKV_SYS_GETTER(get_u64, uint64_t, "getUInt64")
MMKV_SYS_GETTER(get_f32, float, "getFloat")
MMKV_SYS_GETTER(get_f64, double, "getDouble")

bool ShimLibrary::get_string(size_t h, rust::Slice<const uint8_t> key, ByteSink &out) const {
    int has = 0;
    check(m_api->get_string(ptr(h), key.data(), key.size(), sinkToVec, &out, &has), "getString");
    return has != 0;
}
bool ShimLibrary::get_bytes(size_t h, rust::Slice<const uint8_t> key, ByteSink &out) const {
    int has = 0;
    check(m_api->get_bytes(ptr(h), key.data(), key.size(), sinkToVec, &out, &has), "getBytes");
    return has != 0;
}
bool ShimLibrary::get_string_vec(size_t h, rust::Slice<const uint8_t> key, ByteSink &data,
                                 rust::Vec<size_t> &lens) const {
    int has = 0;
    Items items{&data, &lens};
    check(m_api->get_string_vec(ptr(h), key.data(), key.size(), sinkToItems, &items, &has),
          "getVector(std::vector<std::string>)");
    return has != 0;
}
bool ShimLibrary::get_vec(size_t h, rust::Slice<const uint8_t> key, int32_t kind, ByteSink &raw) const {
    int has = 0;
    check(m_api->get_vec(ptr(h), key.data(), key.size(), kind, sinkToVec, &raw, &has), "getVector(std::vector<T>)");
    return has != 0;
}

int32_t ShimLibrary::remove(size_t h, rust::Slice<const uint8_t> key) const {
    int ret = 0;
    check(m_api->remove(ptr(h), key.data(), key.size(), &ret), "removeValueForKey");
    return ret;
}
void ShimLibrary::remove_keys(size_t h, rust::Slice<const uint8_t> data, rust::Slice<const size_t> offsets) const {
    if (offsets.size() == 0) {
        throw std::runtime_error("bad argument: key offsets");
    }
    check(m_api->remove_keys(ptr(h), data.data(), offsets.data(), offsets.size() - 1), "removeValuesForKeys");
}
void ShimLibrary::clear_all(size_t h, bool keep_space) const {
    check(m_api->clear_all(ptr(h), keep_space ? 1 : 0), keep_space ? "clearAll(keepSpace)" : "clearAll");
}
void ShimLibrary::trim(size_t h) const {
    check(m_api->trim(ptr(h)), "trim");
}
void ShimLibrary::sync(size_t h, bool synchronous) const {
    check(m_api->sync(ptr(h), synchronous ? 1 : 0), "sync");
}
void ShimLibrary::clear_memory_cache(size_t h) const {
    check(m_api->clear_memory_cache(ptr(h)), "clearMemoryCache");
}
void ShimLibrary::all_keys(size_t h, bool filter_expire, ByteSink &data, rust::Vec<size_t> &lens) const {
    Items items{&data, &lens};
    check(m_api->all_keys(ptr(h), filter_expire ? 1 : 0, sinkToItems, &items),
          filter_expire ? "allKeys(filterExpire)" : "allKeys");
}
uint64_t ShimLibrary::count(size_t h, bool filter_expire) const {
    uint64_t out = 0;
    check(m_api->count(ptr(h), filter_expire ? 1 : 0, &out), filter_expire ? "count(filterExpire)" : "count");
    return out;
}
bool ShimLibrary::contains(size_t h, rust::Slice<const uint8_t> key) const {
    int out = 0;
    check(m_api->contains(ptr(h), key.data(), key.size(), &out), "containsKey");
    return out != 0;
}
uint64_t ShimLibrary::total_size(size_t h) const {
    uint64_t out = 0;
    check(m_api->total_size(ptr(h), &out), "totalSize");
    return out;
}
uint64_t ShimLibrary::actual_size(size_t h) const {
    uint64_t out = 0;
    check(m_api->actual_size(ptr(h), &out), "actualSize");
    return out;
}
uint64_t ShimLibrary::value_size(size_t h, rust::Slice<const uint8_t> key, bool actual) const {
    uint64_t out = 0;
    check(m_api->value_size(ptr(h), key.data(), key.size(), actual ? 1 : 0, &out), "getValueSize");
    return out;
}
bool ShimLibrary::rekey(size_t h, rust::Slice<const uint8_t> key, bool aes256) const {
    int ret = 0;
    check(m_api->rekey(ptr(h), key.data(), key.size(), aes256 ? 1 : 0, &ret), aes256 ? "reKey(aes256)" : "reKey");
    return ret != 0;
}

// ---- the disk-error schedule (io_faults.cpp, a second entry point of the same library) ----
namespace {
const mmkv_shim_io_faults_t *ioFaults(void *handle) {
    auto entry = reinterpret_cast<mmkv_shim_io_faults_fn>(dlsym(handle, "mmkv_shim_io_faults"));
    const mmkv_shim_io_faults_t *faults = entry ? entry(MMKV_IO_FAULTS_ABI_VERSION) : nullptr;
    if (!faults || faults->calls != MMKV_IO_CALLS) {
        throw std::runtime_error("this shim library has no disk-error schedule of ABI version " +
                                 std::to_string(MMKV_IO_FAULTS_ABI_VERSION));
    }
    return faults;
}
} // namespace

void ShimLibrary::set_io_fault(uint32_t call, uint64_t from, uint64_t count, int32_t err) const {
    const mmkv_shim_io_faults_t *faults = ioFaults(m_handle);
    if (call == MMKV_IO_CALLS) {
        faults->reset();
    } else if (faults->set_rule(call, from, count, err) != 0) {
        throw std::runtime_error("bad argument: set_io_fault: no call " + std::to_string(call));
    }
}

uint64_t ShimLibrary::io_fault_count(uint32_t call, bool failed) const {
    const mmkv_shim_io_faults_t *faults = ioFaults(m_handle);
    return failed ? faults->failed(call) : faults->made(call);
}

bool ShimLibrary::compare_before_set(size_t h, bool enable) const {
    int ret = 0;
    check(m_api->compare_before_set(ptr(h), enable ? 1 : 0, &ret),
          enable ? "enableCompareBeforeSet" : "disableCompareBeforeSet");
    return ret != 0;
}
bool ShimLibrary::lock(size_t h, int32_t op) const {
    int ret = 0;
    check(m_api->lock(ptr(h), op, &ret), op == 0 ? "lock" : op == 1 ? "unlock" : "try_lock");
    return ret != 0;
}
bool ShimLibrary::backup_one(rust::Slice<const uint8_t> id, rust::Slice<const uint8_t> dst_dir,
                             rust::Slice<const uint8_t> src_dir) const {
    int ret = 0;
    check(m_api->backup_one(id.data(), id.size(), dst_dir.data(), dst_dir.size(), src_dir.data(), src_dir.size(), &ret),
          "backupOneToDirectory");
    return ret != 0;
}
bool ShimLibrary::restore_one(rust::Slice<const uint8_t> id, rust::Slice<const uint8_t> src_dir,
                              rust::Slice<const uint8_t> dst_dir) const {
    int ret = 0;
    check(m_api->restore_one(id.data(), id.size(), src_dir.data(), src_dir.size(), dst_dir.data(), dst_dir.size(), &ret),
          "restoreOneFromDirectory");
    return ret != 0;
}
bool ShimLibrary::is_file_valid(rust::Slice<const uint8_t> id, rust::Slice<const uint8_t> dir) const {
    int ret = 0;
    check(m_api->is_file_valid(id.data(), id.size(), dir.data(), dir.size(), &ret), "isFileValid");
    return ret != 0;
}
bool ShimLibrary::remove_storage(rust::Slice<const uint8_t> id, rust::Slice<const uint8_t> dir) const {
    int ret = 0;
    check(m_api->remove_storage(id.data(), id.size(), dir.data(), dir.size(), &ret), "removeStorage");
    return ret != 0;
}
uint64_t ShimLibrary::import_from(size_t h, size_t src) const {
    uint64_t out = 0;
    check(m_api->import_from(ptr(h), ptr(src), &out), "importFrom");
    return out;
}

} // namespace mmkv_sys
