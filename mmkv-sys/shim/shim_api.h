// C ABI between one version's shim shared library (libmmkv_shim_<tag>.so) and the
// mmkv-sys bridge. Written for this project; it only uses C types so that libraries built
// against different MMKV versions can be loaded side by side with dlopen(RTLD_LOCAL).
//
// The single exported symbol is `mmkv_shim_api(abi_version)`, returning a pointer to a
// static, immutable table of function pointers (or NULL when the ABI version differs).
#ifndef MMKV_SHIM_API_H
#define MMKV_SHIM_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MMKV_SHIM_ABI_VERSION 1u

// Status codes returned by every table function.
#define MMKV_SHIM_OK 0
#define MMKV_SHIM_UNSUPPORTED 1 // this MMKV version has no such call
#define MMKV_SHIM_EXCEPTION 2   // the library threw; see last_error()
#define MMKV_SHIM_FAILED 3      // the library returned NULL / refused (open)
#define MMKV_SHIM_BAD_ARG 4     // bad argument from the caller

// Capability bits (mmkv_shim_api_t::caps): what this build's MMKV API offers.
#define MMKV_SHIM_CAP_HAS_VALUE (1ull << 0)          // getters take a hasValue out-param
#define MMKV_SHIM_CAP_EXPIRE (1ull << 1)             // per-key expire + enableAutoKeyExpire
#define MMKV_SHIM_CAP_TYPED_VECTORS (1ull << 2)      // set/getVector of std::vector<T>
#define MMKV_SHIM_CAP_AES256 (1ull << 3)             // aes256 flag on open / reKey
#define MMKV_SHIM_CAP_CONFIG (1ull << 4)             // opened through MMKVConfig
#define MMKV_SHIM_CAP_COUNT_FILTER (1ull << 5)       // count(filterExpire) / allKeys(filterExpire)
#define MMKV_SHIM_CAP_CLEAR_KEEP_SPACE (1ull << 6)   // clearAll(keepSpace)
#define MMKV_SHIM_CAP_REMOVE_RETURNS_BOOL (1ull << 7) // removeValueForKey returns bool
#define MMKV_SHIM_CAP_GET_BYTES_FLAG (1ull << 8)     // bool getBytes(key, MMBuffer&)
#define MMKV_SHIM_CAP_REKEY (1ull << 9)              // reKey()
#define MMKV_SHIM_CAP_ERROR_STRATEGY (1ull << 10)    // recover-on-error can be requested

// Element kinds of typed vectors.
#define MMKV_SHIM_VEC_BOOL 0 // one byte per item (0 / 1)
#define MMKV_SHIM_VEC_I32 1
#define MMKV_SHIM_VEC_U32 2
#define MMKV_SHIM_VEC_I64 3
#define MMKV_SHIM_VEC_U64 4
#define MMKV_SHIM_VEC_F32 5
#define MMKV_SHIM_VEC_F64 6

// Receives a byte buffer (copied by the receiver before returning).
typedef void (*mmkv_shim_sink)(void *ctx, const uint8_t *data, size_t len);

typedef const uint8_t *bytes_t;

typedef struct mmkv_shim_api {
    uint32_t abi_version;
    uint32_t shim_version; // MMKV_SHIM_VERSION: major*10000 + minor*100 + patch
    uint64_t caps;
    const char *mmkv_version; // the library's MMKV_VERSION, "" when it has none

    // Message of the last failure on the calling thread ("" when none).
    const char *(*last_error)(void);
    // Error strategy for CRC / length errors of every later load: 0 discard (default), 1 recover.
    int (*set_error_strategy)(int recover);

    int (*open)(bytes_t dir, size_t dir_len, bytes_t id, size_t id_len, uint32_t multi_process,
                bytes_t crypt_key, size_t crypt_key_len, int has_crypt_key, int aes256, void **out);
    int (*close)(void *h);
    int (*enable_key_expire)(void *h, uint32_t default_secs, int *ret);
    int (*disable_key_expire)(void *h, int *ret);

    // Setters: has_expire=0 calls set(value, key); has_expire=1 calls set(value, key, expire).
    int (*set_bool)(void *h, bytes_t k, size_t kl, int v, int has_expire, uint32_t expire, int *ret);
    int (*set_i32)(void *h, bytes_t k, size_t kl, int32_t v, int has_expire, uint32_t expire, int *ret);
    int (*set_u32)(void *h, bytes_t k, size_t kl, uint32_t v, int has_expire, uint32_t expire, int *ret);
    int (*set_i64)(void *h, bytes_t k, size_t kl, int64_t v, int has_expire, uint32_t expire, int *ret);
    int (*set_u64)(void *h, bytes_t k, size_t kl, uint64_t v, int has_expire, uint32_t expire, int *ret);
    int (*set_f32)(void *h, bytes_t k, size_t kl, float v, int has_expire, uint32_t expire, int *ret);
    int (*set_f64)(void *h, bytes_t k, size_t kl, double v, int has_expire, uint32_t expire, int *ret);
    int (*set_string)(void *h, bytes_t k, size_t kl, bytes_t v, size_t vl, int has_expire, uint32_t expire, int *ret);
    int (*set_bytes)(void *h, bytes_t k, size_t kl, bytes_t v, size_t vl, int has_expire, uint32_t expire, int *ret);
    // Items: `count` strings, item i is data[offsets[i] .. offsets[i+1]] (offsets has count+1 entries).
    int (*set_string_vec)(void *h, bytes_t k, size_t kl, bytes_t data, const size_t *offsets, size_t count,
                          int has_expire, uint32_t expire, int *ret);
    // `data` holds `count` items of `kind` in native layout.
    int (*set_vec)(void *h, bytes_t k, size_t kl, int kind, const void *data, size_t count, int has_expire,
                   uint32_t expire, int *ret);

    // Getters: *has receives the official hasValue flag (emulated with containsKey when
    // MMKV_SHIM_CAP_HAS_VALUE is missing).
    int (*get_bool)(void *h, bytes_t k, size_t kl, int *out, int *has);
    int (*get_i32)(void *h, bytes_t k, size_t kl, int32_t *out, int *has);
    int (*get_u32)(void *h, bytes_t k, size_t kl, uint32_t *out, int *has);
    int (*get_i64)(void *h, bytes_t k, size_t kl, int64_t *out, int *has);
    int (*get_u64)(void *h, bytes_t k, size_t kl, uint64_t *out, int *has);
    int (*get_f32)(void *h, bytes_t k, size_t kl, float *out, int *has);
    int (*get_f64)(void *h, bytes_t k, size_t kl, double *out, int *has);
    // Variable-size getters hand the value to `sink` (once; string vectors: once per item).
    int (*get_string)(void *h, bytes_t k, size_t kl, mmkv_shim_sink sink, void *ctx, int *has);
    int (*get_bytes)(void *h, bytes_t k, size_t kl, mmkv_shim_sink sink, void *ctx, int *has);
    int (*get_string_vec)(void *h, bytes_t k, size_t kl, mmkv_shim_sink sink, void *ctx, int *has);
    int (*get_vec)(void *h, bytes_t k, size_t kl, int kind, mmkv_shim_sink sink, void *ctx, int *has);

    // *ret: 1/0 when removeValueForKey returns bool, -1 when it returns void.
    int (*remove)(void *h, bytes_t k, size_t kl, int *ret);
    int (*clear_all)(void *h, int keep_space);
    int (*trim)(void *h);
    int (*sync)(void *h, int synchronous);
    int (*clear_memory_cache)(void *h);
    int (*all_keys)(void *h, int filter_expire, mmkv_shim_sink sink, void *ctx);
    int (*count)(void *h, int filter_expire, uint64_t *out);
    int (*contains)(void *h, bytes_t k, size_t kl, int *out);
    int (*total_size)(void *h, uint64_t *out);
    int (*actual_size)(void *h, uint64_t *out);
    int (*value_size)(void *h, bytes_t k, size_t kl, int actual, uint64_t *out);
    int (*rekey)(void *h, bytes_t key, size_t key_len, int aes256, int *ret);
    // removeValuesForKeys: `count` keys, key i is data[offsets[i] .. offsets[i+1]].
    int (*remove_keys)(void *h, bytes_t data, const size_t *offsets, size_t count);
} mmkv_shim_api_t;

typedef const mmkv_shim_api_t *(*mmkv_shim_api_fn)(uint32_t abi_version);

#ifdef __cplusplus
}
#endif

#endif // MMKV_SHIM_API_H
