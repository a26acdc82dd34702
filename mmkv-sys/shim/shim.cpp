// mmkv-sys shim: a C ABI over one MMKV version's C++ API (see shim_api.h).
//
// Compiled once per MMKV version against that version's Core headers, with
// -DMMKV_SHIM_VERSION=<major*10000+minor*100+patch>, and linked with that version's libcore.a
// into libmmkv_shim_<tag>.so, which exports only `mmkv_shim_api`.
//
// API differences between versions are detected at compile time with C++20 concepts on the
// real signatures (so an unreleased commit given through an override variable builds too);
// the version macro is only used where a name may not exist at all.
#include "shim_api.h"

#include "MMKV.h"
#include "MMKVPredef.h"

#include <atomic>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <mutex>
#include <string_view>
#include <string>
#include <type_traits>
#include <vector>

#ifndef MMKV_SHIM_VERSION
#error "MMKV_SHIM_VERSION must be defined"
#endif

// ---- the test clock ---------------------------------------------------------------------
// build.rs links this library with `-Wl,--wrap=time`: every call to `time()` in Core's
// objects and in this file is bound at link time to `__wrap_time`, and `__real_time` is libc's
// `time()`. Core's only clock is `time(nullptr)`: `MMKV::getCurrentTimeInSecond()` (expire
// times written and judged) and `srand(time(nullptr))` before the random IVs of encrypted
// stores. Nothing else is interposed: `clock_gettime`, `gettimeofday` and file times are the
// real ones, and libraries of other versions (and the process) keep their own `time()`.
namespace {
constexpr int64_t kNoTestTime = INT64_MIN;
std::atomic<int64_t> g_testTime{kNoTestTime};
} // namespace

extern "C" time_t __real_time(time_t *out);

extern "C" time_t __wrap_time(time_t *out) {
    const int64_t secs = g_testTime.load(std::memory_order_acquire);
    if (secs == kNoTestTime) {
        return __real_time(out);
    }
    if (out) {
        *out = static_cast<time_t>(secs);
    }
    return static_cast<time_t>(secs);
}

// ---- the page size ---------------------------------------------------------------------
// build.rs also links with `-Wl,--wrap=getpagesize`: Core's one page-size source (every tag's
// `mmkv::getPageSize()` in MemoryFile.cpp calls `getpagesize()`; none calls
// `sysconf(_SC_PAGESIZE)`) goes to `__wrap_getpagesize`, which returns the size chosen through
// `set_page_size` (0: the real one). Core reads it once, in the `initialize()` that
// `initializeMMKV` runs under a once-token, into `DEFAULT_MMAP_SIZE` (the data file's growth
// step, the `.crc` file's size); `g_initPageSize` records that value.
namespace {
std::atomic<size_t> g_pageSize{0};
std::atomic<size_t> g_initPageSize{0};
} // namespace

extern "C" int __real_getpagesize(void);

extern "C" int __wrap_getpagesize(void) {
    const size_t size = g_pageSize.load(std::memory_order_acquire);
    return size == 0 ? __real_getpagesize() : static_cast<int>(size);
}

// Newer MMKV versions may declare their types in namespace mmkv; older ones keep MMKV global.
namespace mmkv {}
using namespace mmkv;

namespace {

thread_local std::string g_lastError;
std::once_flag g_initOnce;
int g_recover = 0;

std::string bytes(const uint8_t *p, size_t n) {
    return n == 0 ? std::string() : std::string(reinterpret_cast<const char *>(p), n);
}

template <class F>
int guarded(F &&f) noexcept {
    try {
        g_lastError.clear();
        return f();
    } catch (const std::exception &e) {
        g_lastError = e.what();
        return MMKV_SHIM_EXCEPTION;
    } catch (...) {
        g_lastError = "unknown C++ exception";
        return MMKV_SHIM_EXCEPTION;
    }
}

MMKV *as(void *h) {
    return static_cast<MMKV *>(h);
}

// ---- API detection ----------------------------------------------------------------------

using ShimErrorHandler = MMKVRecoverStrategic (*)(const std::string &mmapID, MMKVErrorType errorType);

template <class M>
concept HasValueGetters = requires(M *m, const std::string &k, bool *b) { m->getBool(k, false, b); };

template <class M>
concept HasExpire = requires(M *m, const std::string &k) {
    m->enableAutoKeyExpire(0u);
    m->set(true, k, 0u);
};

template <class M>
concept HasCountFilter = requires(M *m) {
    m->count(true);
    m->allKeys(true);
};

template <class M>
concept HasClearKeepSpace = requires(M *m) { m->clearAll(true); };

template <class M>
concept HasGetBytesFlag = requires(M *m, const std::string &k, mmkv::MMBuffer &b) {
    { m->getBytes(k, b) } -> std::same_as<bool>;
};

template <class M>
concept HasAes256Open = requires(const std::string &id, std::string *key, MMKVPath_t *root) {
    M::mmkvWithID(id, MMKV_SINGLE_PROCESS, key, root, size_t(0), true);
};

template <class M>
concept HasAes256Rekey = requires(M *m, const std::string &key) { m->reKey(key, true); };

template <class M>
concept HasRekey = requires(M *m, const std::string &key) { m->reKey(key); };

template <class M>
concept HasRegisterErrorHandler = requires(ShimErrorHandler handler) { M::registerErrorHandler(handler); };

template <class C>
concept ConfigHasRecover = requires(C &c) { c.recover = OnErrorRecover; };

template <class M>
concept RemoveReturnsBool = requires(M *m, const std::string &k) {
    { m->removeValueForKey(k) } -> std::same_as<bool>;
};

#if defined(MMKV_HAS_CPP20)
template <class M>
concept HasTypedVectors = requires(M *m, const std::string &k, std::vector<int32_t> &v) {
    m->getVector(k, v);
    m->set(v, k);
};
#else
template <class M>
concept HasTypedVectors = false;
#endif

// Keys are std::string_view (MMKV::MMKVKey_t is private): a type that converts to a string_view
// but not to a std::string is accepted as a key exactly then.
struct StringViewOnly {
    operator std::string_view() const { return {}; }
};
template <class M>
concept HasStringViewKeys = requires(M *m) { m->containsKey(StringViewOnly{}); };

// The POSIX positional mmkvWithID takes `const std::string *cryptKey` (the Android overloads
// always did; they are not compiled here).
template <class M>
concept HasConstCryptKeyOpen = requires(const std::string &id, const std::string *key, MMKVPath_t *root) {
    M::mmkvWithID(id, MMKV_SINGLE_PROCESS, key, root);
};

template <class M>
concept HasCompareBeforeSet = requires(M *m) {
    { m->enableCompareBeforeSet() } -> std::same_as<bool>;
    { m->disableCompareBeforeSet() } -> std::same_as<bool>;
};

template <class M>
concept HasBackupRestore = requires(const std::string &id, const MMKVPath_t &dir, const MMKVPath_t *other) {
    { M::backupOneToDirectory(id, dir, other) } -> std::same_as<bool>;
    { M::restoreOneFromDirectory(id, dir, other) } -> std::same_as<bool>;
};

template <class M>
concept HasRemoveStorage = requires(const std::string &id, MMKVPath_t *root) {
    { M::removeStorage(id, root) } -> std::same_as<bool>;
};

template <class M>
concept HasImportFrom = requires(M *m) { m->importFrom(m); };

// MMKVMode has MMKV_READ_ONLY (v2.0.0+): the instance maps its files read-only and refuses
// every write. E is MMKVMode, so that the enumerator is looked up only where it exists.
template <class E>
concept ModeHasReadOnly = requires { E::MMKV_READ_ONLY; };

template <class E>
constexpr E readOnlyMode(E mode) {
    if constexpr (ModeHasReadOnly<E>) {
        return E(mode | E::MMKV_READ_ONLY);
    } else {
        return mode;
    }
}

// MMKV::nameSpace(rootDir) and NameSpace::mmkvWithID (v2.1.0+); the AES-256 form (v2.3.0+)
// and the MMKVConfig form (v2.4.0+).
template <class M>
concept HasNameSpace = requires(const MMKVPath_t &root, const std::string &id, const std::string *key) {
    M::nameSpace(root).mmkvWithID(id, MMKV_SINGLE_PROCESS, key);
};
template <class M>
concept HasNameSpaceAes256 = requires(const MMKVPath_t &root, const std::string &id, const std::string *key) {
    M::nameSpace(root).mmkvWithID(id, MMKV_SINGLE_PROCESS, key, size_t(0), true);
};

#if MMKV_SHIM_VERSION >= 20400
template <class M>
concept HasConfigOpen = requires(const std::string &id, const MMKVConfig &config) { M::mmkvWithID(id, config); };
constexpr bool kHasConfig = HasConfigOpen<MMKV>;
constexpr bool kConfigRecover = kHasConfig && ConfigHasRecover<MMKVConfig>;
#else
constexpr bool kHasConfig = false;
constexpr bool kConfigRecover = false;
#endif
constexpr bool kErrorStrategy = HasRegisterErrorHandler<MMKV> || kConfigRecover;

constexpr uint64_t kCaps = (HasValueGetters<MMKV> ? MMKV_SHIM_CAP_HAS_VALUE_FLAG : 0) |
                           (HasExpire<MMKV> ? MMKV_SHIM_CAP_KEY_EXPIRE : 0) |
                           (HasTypedVectors<MMKV> ? MMKV_SHIM_CAP_TYPED_VECTORS : 0) |
                           (HasStringViewKeys<MMKV> ? MMKV_SHIM_CAP_STRING_VIEW_KEYS : 0) |
                           (HasConstCryptKeyOpen<MMKV> ? MMKV_SHIM_CAP_CONST_CRYPT_KEY : 0) |
                           ((HasAes256Open<MMKV> || kHasConfig) ? MMKV_SHIM_CAP_AES256 : 0) |
                           (kHasConfig ? MMKV_SHIM_CAP_MMKV_CONFIG : 0) |
                           (HasCountFilter<MMKV> ? MMKV_SHIM_CAP_COUNT_FILTER_EXPIRE : 0) |
                           (HasClearKeepSpace<MMKV> ? MMKV_SHIM_CAP_CLEAR_ALL_KEEP_SPACE : 0) |
                           (RemoveReturnsBool<MMKV> ? MMKV_SHIM_CAP_REMOVE_RETURNS_BOOL : 0) |
                           (HasGetBytesFlag<MMKV> ? MMKV_SHIM_CAP_GET_BYTES_FLAG : 0) |
                           (HasRekey<MMKV> ? MMKV_SHIM_CAP_REKEY : 0) |
                           (HasCompareBeforeSet<MMKV> ? MMKV_SHIM_CAP_COMPARE_BEFORE_SET : 0) |
                           (HasBackupRestore<MMKV> ? MMKV_SHIM_CAP_BACKUP_RESTORE : 0) |
                           (HasRemoveStorage<MMKV> ? MMKV_SHIM_CAP_REMOVE_STORAGE : 0) |
                           (HasImportFrom<MMKV> ? MMKV_SHIM_CAP_IMPORT_FROM : 0) |
                           (ModeHasReadOnly<MMKVMode> ? MMKV_SHIM_CAP_READ_ONLY : 0) |
                           (HasNameSpace<MMKV> ? MMKV_SHIM_CAP_NAME_SPACE : 0) |
                           (kErrorStrategy ? MMKV_SHIM_CAP_ERROR_STRATEGY : 0);

// ---- lifecycle ----------------------------------------------------------------------------

MMKVRecoverStrategic onError(const std::string &, MMKVErrorType) {
    return g_recover ? OnErrorRecover : OnErrorDiscard;
}

template <class M>
void registerErrorHandler() {
    if constexpr (HasRegisterErrorHandler<M>) {
        M::registerErrorHandler(onError);
    }
}

template <class C>
void setConfigRecover(C &config) {
    if constexpr (ConfigHasRecover<C>) {
        config.recover = g_recover ? OnErrorRecover : OnErrorDiscard;
    }
}

// Versions with MMKVConfig (v2.4.0+) are opened through it for every multi-process or
// encrypted store, and whenever only it can carry the request (no positional aes256 overload,
// recover-on-error without registerErrorHandler); plaintext single-process stores go through the
// positional mmkvWithID, so both entry points run.
//
// With `nameSpace` the store is opened through MMKV::nameSpace(*root).mmkvWithID instead (the
// same choice of entry point), the name space normalising the root.
template <class M>
M *openImpl(const std::string &id, MMKVMode mode, std::string *key, MMKVPath_t *root, bool aes256,
            bool nameSpace = false) {
#if MMKV_SHIM_VERSION >= 20400
    if constexpr (kHasConfig) {
        const bool viaConfig = mode != MMKV_SINGLE_PROCESS || key != nullptr || !HasAes256Open<M> ||
                               (g_recover && !HasRegisterErrorHandler<M>);
        if (viaConfig) {
            MMKVConfig config;
            config.mode = mode;
            config.cryptKey = key;
            config.rootPath = root;
            config.aes256 = aes256;
            setConfigRecover(config);
            if (nameSpace) {
                return M::nameSpace(*root).mmkvWithID(id, config);
            }
            return M::mmkvWithID(id, config);
        }
    }
#endif
    if constexpr (HasNameSpace<M>) {
        if (nameSpace) {
            if constexpr (HasNameSpaceAes256<M>) {
                return M::nameSpace(*root).mmkvWithID(id, mode, key, size_t(0), aes256);
            } else {
                (void) aes256;
                return M::nameSpace(*root).mmkvWithID(id, mode, key);
            }
        }
    }
    if constexpr (HasAes256Open<M>) {
        return M::mmkvWithID(id, mode, key, root, size_t(0), aes256);
    } else {
        (void) aes256;
        return M::mmkvWithID(id, mode, key, root);
    }
}

// initializeMMKV(root) once per library (the static calls need Core's globals too).
void ensureInitialized(const MMKVPath_t &root) {
    std::call_once(g_initOnce, [&] {
        // MMKV_SYS_LOG=1 turns the library's own logging on (to stderr), for debugging.
        const char *log = std::getenv("MMKV_SYS_LOG");
        MMKV::initializeMMKV(root, (log && *log && *log != '0') ? MMKVLogInfo : MMKVLogNone);
        g_initPageSize.store(mmkv::DEFAULT_MMAP_SIZE, std::memory_order_release);
        registerErrorHandler<MMKV>();
    });
}

const char *lastError() {
    return g_lastError.c_str();
}

int setErrorStrategy(int recover) {
    if (recover && !kErrorStrategy) {
        return MMKV_SHIM_UNSUPPORTED;
    }
    g_recover = recover ? 1 : 0;
    return MMKV_SHIM_OK;
}

// open (flags 0) and open_as: see shim_api.h.
int openAs(bytes_t dir, size_t dirLen, bytes_t id, size_t idLen, uint32_t multi, uint32_t flags, bytes_t cryptKey,
           size_t cryptKeyLen, int hasCryptKey, int aes256, void **out) {
    return guarded([&] {
        if (!out || dirLen == 0 || idLen == 0) {
            g_lastError = "empty directory or id";
            return MMKV_SHIM_BAD_ARG;
        }
        if (flags & ~uint32_t(MMKV_SHIM_OPEN_READ_ONLY | MMKV_SHIM_OPEN_NAME_SPACE)) {
            g_lastError = "unknown open flags";
            return MMKV_SHIM_BAD_ARG;
        }
        const bool readOnly = (flags & MMKV_SHIM_OPEN_READ_ONLY) != 0;
        const bool nameSpace = (flags & MMKV_SHIM_OPEN_NAME_SPACE) != 0;
        if ((aes256 && !(kCaps & MMKV_SHIM_CAP_AES256)) || (readOnly && !(kCaps & MMKV_SHIM_CAP_READ_ONLY)) ||
            (nameSpace && !(kCaps & MMKV_SHIM_CAP_NAME_SPACE))) {
            return MMKV_SHIM_UNSUPPORTED;
        }
        MMKVPath_t root = bytes(dir, dirLen);
        ensureInitialized(root);
        std::string key = bytes(cryptKey, cryptKeyLen);
        MMKVMode mode = multi ? MMKV_MULTI_PROCESS : MMKV_SINGLE_PROCESS;
        if (readOnly) {
            mode = readOnlyMode(mode);
        }
        MMKV *m = openImpl<MMKV>(bytes(id, idLen), mode, hasCryptKey ? &key : nullptr, &root, aes256 != 0, nameSpace);
        if (!m) {
            g_lastError = "mmkvWithID returned NULL";
            return MMKV_SHIM_FAILED;
        }
        *out = m;
        return MMKV_SHIM_OK;
    });
}

int openStore(bytes_t dir, size_t dirLen, bytes_t id, size_t idLen, uint32_t multi, bytes_t cryptKey,
              size_t cryptKeyLen, int hasCryptKey, int aes256, void **out) {
    return openAs(dir, dirLen, id, idLen, multi, 0, cryptKey, cryptKeyLen, hasCryptKey, aes256, out);
}

int closeStore(void *h) {
    return guarded([&] {
        as(h)->close();
        return MMKV_SHIM_OK;
    });
}

template <class M>
int enableExpireImpl(M *m, uint32_t secs, int *ret) {
    if constexpr (HasExpire<M>) {
        *ret = m->enableAutoKeyExpire(secs) ? 1 : 0;
        return MMKV_SHIM_OK;
    } else {
        (void) m, (void) secs, (void) ret;
        return MMKV_SHIM_UNSUPPORTED;
    }
}

template <class M>
int disableExpireImpl(M *m, int *ret) {
    if constexpr (HasExpire<M>) {
        *ret = m->disableAutoKeyExpire() ? 1 : 0;
        return MMKV_SHIM_OK;
    } else {
        (void) m, (void) ret;
        return MMKV_SHIM_UNSUPPORTED;
    }
}

int enableKeyExpire(void *h, uint32_t secs, int *ret) {
    return guarded([&] { return enableExpireImpl(as(h), secs, ret); });
}

int disableKeyExpire(void *h, int *ret) {
    return guarded([&] { return disableExpireImpl(as(h), ret); });
}

// ---- setters ------------------------------------------------------------------------------

// Calls m->set(value, key) or m->set(value, key, expire).
template <class M, class V>
int setImpl(M *m, const V &value, const std::string &key, int hasExpire, uint32_t expire, int *ret) {
    if (hasExpire) {
        if constexpr (HasExpire<M>) {
            *ret = m->set(value, key, expire) ? 1 : 0;
            return MMKV_SHIM_OK;
        } else {
            (void) expire;
            return MMKV_SHIM_UNSUPPORTED;
        }
    }
    *ret = m->set(value, key) ? 1 : 0;
    return MMKV_SHIM_OK;
}

template <class V>
int setScalar(void *h, bytes_t k, size_t kl, V v, int hasExpire, uint32_t expire, int *ret) {
    return guarded([&] { return setImpl(as(h), v, bytes(k, kl), hasExpire, expire, ret); });
}

int setBool(void *h, bytes_t k, size_t kl, int v, int he, uint32_t e, int *ret) {
    return setScalar<bool>(h, k, kl, v != 0, he, e, ret);
}
int setI32(void *h, bytes_t k, size_t kl, int32_t v, int he, uint32_t e, int *ret) {
    return setScalar<int32_t>(h, k, kl, v, he, e, ret);
}
int setU32(void *h, bytes_t k, size_t kl, uint32_t v, int he, uint32_t e, int *ret) {
    return setScalar<uint32_t>(h, k, kl, v, he, e, ret);
}
int setI64(void *h, bytes_t k, size_t kl, int64_t v, int he, uint32_t e, int *ret) {
    return setScalar<int64_t>(h, k, kl, v, he, e, ret);
}
int setU64(void *h, bytes_t k, size_t kl, uint64_t v, int he, uint32_t e, int *ret) {
    return setScalar<uint64_t>(h, k, kl, v, he, e, ret);
}
int setF32(void *h, bytes_t k, size_t kl, float v, int he, uint32_t e, int *ret) {
    return setScalar<float>(h, k, kl, v, he, e, ret);
}
int setF64(void *h, bytes_t k, size_t kl, double v, int he, uint32_t e, int *ret) {
    return setScalar<double>(h, k, kl, v, he, e, ret);
}

int setString(void *h, bytes_t k, size_t kl, bytes_t v, size_t vl, int he, uint32_t e, int *ret) {
    return guarded([&] {
        const std::string value = bytes(v, vl);
        return setImpl(as(h), value, bytes(k, kl), he, e, ret);
    });
}

int setBytes(void *h, bytes_t k, size_t kl, bytes_t v, size_t vl, int he, uint32_t e, int *ret) {
    return guarded([&] {
        const std::string copy = bytes(v, vl); // MMBuffer wants a mutable pointer
        const mmkv::MMBuffer value((void *) copy.data(), copy.size(), mmkv::MMBufferNoCopy);
        return setImpl(as(h), value, bytes(k, kl), he, e, ret);
    });
}

int setStringVec(void *h, bytes_t k, size_t kl, bytes_t data, const size_t *offsets, size_t count, int he,
                 uint32_t e, int *ret) {
    return guarded([&] {
        std::vector<std::string> value;
        value.reserve(count);
        for (size_t i = 0; i < count; i++) {
            value.push_back(bytes(data + offsets[i], offsets[i + 1] - offsets[i]));
        }
        return setImpl(as(h), value, bytes(k, kl), he, e, ret);
    });
}

template <class M, class T>
int setTypedVec(M *m, const std::string &key, const void *data, size_t count, int he, uint32_t e, int *ret) {
    if constexpr (HasTypedVectors<M>) {
        std::vector<T> value(count);
        if constexpr (std::is_same_v<T, bool>) {
            auto p = static_cast<const uint8_t *>(data);
            for (size_t i = 0; i < count; i++) {
                value[i] = p[i] != 0;
            }
        } else if (count > 0) {
            std::memcpy(value.data(), data, count * sizeof(T));
        }
        return setImpl(m, value, key, he, e, ret);
    } else {
        (void) m, (void) key, (void) data, (void) count, (void) he, (void) e, (void) ret;
        return MMKV_SHIM_UNSUPPORTED;
    }
}

int setVec(void *h, bytes_t k, size_t kl, int kind, const void *data, size_t count, int he, uint32_t e, int *ret) {
    return guarded([&] {
        auto key = bytes(k, kl);
        switch (kind) {
            case MMKV_SHIM_VEC_BOOL: return setTypedVec<MMKV, bool>(as(h), key, data, count, he, e, ret);
            case MMKV_SHIM_VEC_I32: return setTypedVec<MMKV, int32_t>(as(h), key, data, count, he, e, ret);
            case MMKV_SHIM_VEC_U32: return setTypedVec<MMKV, uint32_t>(as(h), key, data, count, he, e, ret);
            case MMKV_SHIM_VEC_I64: return setTypedVec<MMKV, int64_t>(as(h), key, data, count, he, e, ret);
            case MMKV_SHIM_VEC_U64: return setTypedVec<MMKV, uint64_t>(as(h), key, data, count, he, e, ret);
            case MMKV_SHIM_VEC_F32: return setTypedVec<MMKV, float>(as(h), key, data, count, he, e, ret);
            case MMKV_SHIM_VEC_F64: return setTypedVec<MMKV, double>(as(h), key, data, count, he, e, ret);
            default: g_lastError = "unknown vector kind"; return MMKV_SHIM_BAD_ARG;
        }
    });
}

// ---- getters ------------------------------------------------------------------------------

// getter(m, key, hasValuePtrOrNull) -> value
template <class V, class M, class G>
int getScalar(M *m, const std::string &key, V *out, int *has, G getter) {
    if constexpr (HasValueGetters<M>) {
        bool hasValue = false;
        *out = getter(m, key, &hasValue);
        *has = hasValue ? 1 : 0;
    } else {
        // Before v1.2.13 the getters have no hasValue out-param: presence is containsKey().
        *has = m->containsKey(key) ? 1 : 0;
        *out = getter(m, key, nullptr);
    }
    return MMKV_SHIM_OK;
}

#define MMKV_SHIM_GETTER(NAME, TYPE, CALL, DEF)                                                    \
    int NAME(void *h, bytes_t k, size_t kl, TYPE *out, int *has) {                                 \
        return guarded([&] {                                                                       \
            return getScalar<TYPE>(as(h), bytes(k, kl), out, has, [](auto *m, const std::string &key, bool *hv) { \
                if constexpr (HasValueGetters<std::remove_pointer_t<decltype(m)>>) {                \
                    return static_cast<TYPE>(m->CALL(key, DEF, hv));                               \
                } else {                                                                           \
                    (void) hv;                                                                     \
                    return static_cast<TYPE>(m->CALL(key, DEF));                                   \
                }                                                                                  \
            });                                                                                    \
        });                                                                                        \
    }

MMKV_SHIM_GETTER(getI32, int32_t, getInt32, 0)
MMKV_SHIM_GETTER(getU32, uint32_t, getUInt32, 0)
MMKV_SHIM_GETTER(getI64, int64_t, getInt64, 0)
MMKV_SHIM_GETTER(getU64, uint64_t, getUInt64, 0)
MMKV_SHIM_GETTER(getF32, float, getFloat, 0)
MMKV_SHIM_GETTER(getF64, double, getDouble, 0)

int getBool(void *h, bytes_t k, size_t kl, int *out, int *has) {
    return guarded([&] {
        bool value = false;
        int rc = getScalar<bool>(as(h), bytes(k, kl), &value, has, [](auto *m, const std::string &key, bool *hv) {
            if constexpr (HasValueGetters<std::remove_pointer_t<decltype(m)>>) {
                return m->getBool(key, false, hv);
            } else {
                (void) hv;
                return m->getBool(key, false);
            }
        });
        *out = value ? 1 : 0;
        return rc;
    });
}

int getString(void *h, bytes_t k, size_t kl, mmkv_shim_sink sink, void *ctx, int *has) {
    return guarded([&] {
        std::string value;
        bool ok = as(h)->getString(bytes(k, kl), value);
        *has = ok ? 1 : 0;
        if (ok) {
            sink(ctx, reinterpret_cast<const uint8_t *>(value.data()), value.size());
        }
        return MMKV_SHIM_OK;
    });
}

template <class M>
int getBytesImpl(M *m, const std::string &key, mmkv_shim_sink sink, void *ctx, int *has) {
    mmkv::MMBuffer value;
    bool ok;
    if constexpr (HasGetBytesFlag<M>) {
        ok = m->getBytes(key, value);
    } else {
        value = m->getBytes(key);
        ok = value.length() > 0 || m->containsKey(key);
    }
    *has = ok ? 1 : 0;
    if (ok) {
        sink(ctx, static_cast<const uint8_t *>(value.getPtr()), value.length());
    }
    return MMKV_SHIM_OK;
}

int getBytes(void *h, bytes_t k, size_t kl, mmkv_shim_sink sink, void *ctx, int *has) {
    return guarded([&] { return getBytesImpl(as(h), bytes(k, kl), sink, ctx, has); });
}

int getStringVec(void *h, bytes_t k, size_t kl, mmkv_shim_sink sink, void *ctx, int *has) {
    return guarded([&] {
        std::vector<std::string> value;
        bool ok = as(h)->getVector(bytes(k, kl), value);
        *has = ok ? 1 : 0;
        if (ok) {
            for (auto &item : value) {
                sink(ctx, reinterpret_cast<const uint8_t *>(item.data()), item.size());
            }
        }
        return MMKV_SHIM_OK;
    });
}

template <class M, class T>
int getTypedVec(M *m, const std::string &key, mmkv_shim_sink sink, void *ctx, int *has) {
    if constexpr (HasTypedVectors<M>) {
        std::vector<T> value;
        bool ok = m->getVector(key, value);
        *has = ok ? 1 : 0;
        if (ok) {
            if constexpr (std::is_same_v<T, bool>) {
                std::vector<uint8_t> flat(value.begin(), value.end());
                sink(ctx, flat.data(), flat.size());
            } else {
                sink(ctx, reinterpret_cast<const uint8_t *>(value.data()), value.size() * sizeof(T));
            }
        }
        return MMKV_SHIM_OK;
    } else {
        (void) m, (void) key, (void) sink, (void) ctx, (void) has;
        return MMKV_SHIM_UNSUPPORTED;
    }
}

int getVec(void *h, bytes_t k, size_t kl, int kind, mmkv_shim_sink sink, void *ctx, int *has) {
    return guarded([&] {
        auto key = bytes(k, kl);
        switch (kind) {
            case MMKV_SHIM_VEC_BOOL: return getTypedVec<MMKV, bool>(as(h), key, sink, ctx, has);
            case MMKV_SHIM_VEC_I32: return getTypedVec<MMKV, int32_t>(as(h), key, sink, ctx, has);
            case MMKV_SHIM_VEC_U32: return getTypedVec<MMKV, uint32_t>(as(h), key, sink, ctx, has);
            case MMKV_SHIM_VEC_I64: return getTypedVec<MMKV, int64_t>(as(h), key, sink, ctx, has);
            case MMKV_SHIM_VEC_U64: return getTypedVec<MMKV, uint64_t>(as(h), key, sink, ctx, has);
            case MMKV_SHIM_VEC_F32: return getTypedVec<MMKV, float>(as(h), key, sink, ctx, has);
            case MMKV_SHIM_VEC_F64: return getTypedVec<MMKV, double>(as(h), key, sink, ctx, has);
            default: g_lastError = "unknown vector kind"; return MMKV_SHIM_BAD_ARG;
        }
    });
}

// ---- maintenance --------------------------------------------------------------------------

int removeKeys(void *h, bytes_t data, const size_t *offsets, size_t count) {
    return guarded([&] {
        std::vector<std::string> keys;
        keys.reserve(count);
        for (size_t i = 0; i < count; i++) {
            keys.push_back(bytes(data + offsets[i], offsets[i + 1] - offsets[i]));
        }
        as(h)->removeValuesForKeys(keys);
        return MMKV_SHIM_OK;
    });
}

template <class M>
int removeImpl(M *m, const std::string &key, int *ret) {
    if constexpr (RemoveReturnsBool<M>) {
        *ret = m->removeValueForKey(key) ? 1 : 0;
    } else {
        m->removeValueForKey(key);
        *ret = -1;
    }
    return MMKV_SHIM_OK;
}

int removeKey(void *h, bytes_t k, size_t kl, int *ret) {
    return guarded([&] { return removeImpl(as(h), bytes(k, kl), ret); });
}

template <class M>
int clearAllImpl(M *m, int keepSpace) {
    if constexpr (HasClearKeepSpace<M>) {
        m->clearAll(keepSpace != 0);
    } else {
        if (keepSpace) {
            return MMKV_SHIM_UNSUPPORTED;
        }
        m->clearAll();
    }
    return MMKV_SHIM_OK;
}

int clearAll(void *h, int keepSpace) {
    return guarded([&] { return clearAllImpl(as(h), keepSpace); });
}

int trimStore(void *h) {
    return guarded([&] {
        as(h)->trim();
        return MMKV_SHIM_OK;
    });
}

int syncStore(void *h, int synchronous) {
    return guarded([&] {
        as(h)->sync(synchronous ? MMKV_SYNC : MMKV_ASYNC);
        return MMKV_SHIM_OK;
    });
}

int clearMemoryCache(void *h) {
    return guarded([&] {
        as(h)->clearMemoryCache();
        return MMKV_SHIM_OK;
    });
}

template <class M>
int allKeysImpl(M *m, int filterExpire, mmkv_shim_sink sink, void *ctx) {
    std::vector<std::string> keys;
    if constexpr (HasCountFilter<M>) {
        keys = m->allKeys(filterExpire != 0);
    } else {
        if (filterExpire) {
            return MMKV_SHIM_UNSUPPORTED;
        }
        keys = m->allKeys();
    }
    for (auto &key : keys) {
        sink(ctx, reinterpret_cast<const uint8_t *>(key.data()), key.size());
    }
    return MMKV_SHIM_OK;
}

int allKeys(void *h, int filterExpire, mmkv_shim_sink sink, void *ctx) {
    return guarded([&] { return allKeysImpl(as(h), filterExpire, sink, ctx); });
}

template <class M>
int countImpl(M *m, int filterExpire, uint64_t *out) {
    if constexpr (HasCountFilter<M>) {
        *out = m->count(filterExpire != 0);
    } else {
        if (filterExpire) {
            return MMKV_SHIM_UNSUPPORTED;
        }
        *out = m->count();
    }
    return MMKV_SHIM_OK;
}

int countKeys(void *h, int filterExpire, uint64_t *out) {
    return guarded([&] { return countImpl(as(h), filterExpire, out); });
}

int containsKey(void *h, bytes_t k, size_t kl, int *out) {
    return guarded([&] {
        *out = as(h)->containsKey(bytes(k, kl)) ? 1 : 0;
        return MMKV_SHIM_OK;
    });
}

int totalSize(void *h, uint64_t *out) {
    return guarded([&] {
        *out = as(h)->totalSize();
        return MMKV_SHIM_OK;
    });
}

int actualSize(void *h, uint64_t *out) {
    return guarded([&] {
        *out = as(h)->actualSize();
        return MMKV_SHIM_OK;
    });
}

int valueSize(void *h, bytes_t k, size_t kl, int actual, uint64_t *out) {
    return guarded([&] {
        *out = as(h)->getValueSize(bytes(k, kl), actual != 0);
        return MMKV_SHIM_OK;
    });
}

template <class M>
int rekeyImpl(M *m, const std::string &key, int aes256, int *ret) {
    if constexpr (HasAes256Rekey<M>) {
        *ret = m->reKey(key, aes256 != 0) ? 1 : 0;
        return MMKV_SHIM_OK;
    } else if constexpr (HasRekey<M>) {
        if (aes256) {
            return MMKV_SHIM_UNSUPPORTED;
        }
        *ret = m->reKey(key) ? 1 : 0;
        return MMKV_SHIM_OK;
    } else {
        (void) m, (void) key, (void) aes256, (void) ret;
        return MMKV_SHIM_UNSUPPORTED;
    }
}

int rekey(void *h, bytes_t key, size_t keyLen, int aes256, int *ret) {
    return guarded([&] { return rekeyImpl(as(h), bytes(key, keyLen), aes256, ret); });
}

// ---- the file-changing API (ABI 4) ------------------------------------------------------------

template <class M>
int compareBeforeSetImpl(M *m, int enable, int *ret) {
    if constexpr (HasCompareBeforeSet<M>) {
        *ret = (enable ? m->enableCompareBeforeSet() : m->disableCompareBeforeSet()) ? 1 : 0;
        return MMKV_SHIM_OK;
    } else {
        (void) m, (void) enable, (void) ret;
        return MMKV_SHIM_UNSUPPORTED;
    }
}

int compareBeforeSet(void *h, int enable, int *ret) {
    return guarded([&] { return compareBeforeSetImpl(as(h), enable, ret); });
}

int lockStore(void *h, int op, int *ret) {
    return guarded([&] {
        *ret = 1;
        switch (op) {
            case 0: as(h)->lock(); return MMKV_SHIM_OK;
            case 1: as(h)->unlock(); return MMKV_SHIM_OK;
            case 2: *ret = as(h)->try_lock() ? 1 : 0; return MMKV_SHIM_OK;
            default: g_lastError = "unknown lock op"; return MMKV_SHIM_BAD_ARG;
        }
    });
}

// backupOneToDirectory (backup = true) or restoreOneFromDirectory: `to` / `from` are the
// directories the files go to and come from.
template <class M>
int backupRestoreImpl(bool backup, const std::string &id, const MMKVPath_t &from, const MMKVPath_t &to, int *ret) {
    if constexpr (HasBackupRestore<M>) {
        ensureInitialized(backup ? from : to);
        *ret = (backup ? M::backupOneToDirectory(id, to, &from) : M::restoreOneFromDirectory(id, from, &to)) ? 1 : 0;
        return MMKV_SHIM_OK;
    } else {
        (void) backup, (void) id, (void) from, (void) to, (void) ret;
        return MMKV_SHIM_UNSUPPORTED;
    }
}

int backupOne(bytes_t id, size_t idLen, bytes_t dst, size_t dstLen, bytes_t src, size_t srcLen, int *ret) {
    return guarded([&] {
        if (idLen == 0 || dstLen == 0 || srcLen == 0) {
            g_lastError = "empty directory or id";
            return MMKV_SHIM_BAD_ARG;
        }
        return backupRestoreImpl<MMKV>(true, bytes(id, idLen), bytes(src, srcLen), bytes(dst, dstLen), ret);
    });
}

int restoreOne(bytes_t id, size_t idLen, bytes_t src, size_t srcLen, bytes_t dst, size_t dstLen, int *ret) {
    return guarded([&] {
        if (idLen == 0 || dstLen == 0 || srcLen == 0) {
            g_lastError = "empty directory or id";
            return MMKV_SHIM_BAD_ARG;
        }
        return backupRestoreImpl<MMKV>(false, bytes(id, idLen), bytes(src, srcLen), bytes(dst, dstLen), ret);
    });
}

int isFileValid(bytes_t id, size_t idLen, bytes_t dir, size_t dirLen, int *ret) {
    return guarded([&] {
        if (idLen == 0 || dirLen == 0) {
            g_lastError = "empty directory or id";
            return MMKV_SHIM_BAD_ARG;
        }
        MMKVPath_t root = bytes(dir, dirLen);
        ensureInitialized(root);
        *ret = MMKV::isFileValid(bytes(id, idLen), &root) ? 1 : 0;
        return MMKV_SHIM_OK;
    });
}

template <class M>
int removeStorageImpl(const std::string &id, MMKVPath_t &root, int *ret) {
    if constexpr (HasRemoveStorage<M>) {
        ensureInitialized(root);
        *ret = M::removeStorage(id, &root) ? 1 : 0;
        return MMKV_SHIM_OK;
    } else {
        (void) id, (void) root, (void) ret;
        return MMKV_SHIM_UNSUPPORTED;
    }
}

int removeStorage(bytes_t id, size_t idLen, bytes_t dir, size_t dirLen, int *ret) {
    return guarded([&] {
        if (idLen == 0 || dirLen == 0) {
            g_lastError = "empty directory or id";
            return MMKV_SHIM_BAD_ARG;
        }
        MMKVPath_t root = bytes(dir, dirLen);
        return removeStorageImpl<MMKV>(bytes(id, idLen), root, ret);
    });
}

template <class M>
int importFromImpl(M *m, M *src, uint64_t *out) {
    if constexpr (HasImportFrom<M>) {
        *out = m->importFrom(src);
        return MMKV_SHIM_OK;
    } else {
        (void) m, (void) src, (void) out;
        return MMKV_SHIM_UNSUPPORTED;
    }
}

int importFrom(void *h, void *src, uint64_t *out) {
    return guarded([&] { return importFromImpl(as(h), as(src), out); });
}

int setTestTime(int hasTime, int64_t secs) {
    if (hasTime && secs == kNoTestTime) {
        return MMKV_SHIM_BAD_ARG;
    }
    g_testTime.store(hasTime ? secs : kNoTestTime, std::memory_order_release);
    return MMKV_SHIM_OK;
}

int setPageSize(size_t size) {
    const size_t fixed = g_initPageSize.load(std::memory_order_acquire);
    if (fixed != 0 && fixed != (size == 0 ? static_cast<size_t>(__real_getpagesize()) : size)) {
        g_lastError = "the library initialised with page size " + std::to_string(fixed);
        return MMKV_SHIM_FAILED;
    }
    g_pageSize.store(size, std::memory_order_release);
    return MMKV_SHIM_OK;
}

size_t initializedPageSize() {
    return g_initPageSize.load(std::memory_order_acquire);
}

#if MMKV_SHIM_VERSION >= 10102
const char *const kVersion = MMKV_VERSION;
#else
const char *const kVersion = "";
#endif

const mmkv_shim_api_t kApi = {
    MMKV_SHIM_ABI_VERSION,
    MMKV_SHIM_VERSION,
    kCaps,
    kVersion,
    lastError,
    setErrorStrategy,
    openStore,
    closeStore,
    enableKeyExpire,
    disableKeyExpire,
    setBool,
    setI32,
    setU32,
    setI64,
    setU64,
    setF32,
    setF64,
    setString,
    setBytes,
    setStringVec,
    setVec,
    getBool,
    getI32,
    getU32,
    getI64,
    getU64,
    getF32,
    getF64,
    getString,
    getBytes,
    getStringVec,
    getVec,
    removeKey,
    clearAll,
    trimStore,
    syncStore,
    clearMemoryCache,
    allKeys,
    countKeys,
    containsKey,
    totalSize,
    actualSize,
    valueSize,
    rekey,
    removeKeys,
    setTestTime,
    setPageSize,
    initializedPageSize,
    compareBeforeSet,
    lockStore,
    backupOne,
    restoreOne,
    isFileValid,
    removeStorage,
    importFrom,
    openAs,
};

} // namespace

extern "C" __attribute__((visibility("default"))) const mmkv_shim_api_t *mmkv_shim_api(uint32_t abiVersion) {
    return abiVersion == MMKV_SHIM_ABI_VERSION ? &kApi : nullptr;
}
