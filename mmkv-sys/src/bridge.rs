//! The cxx bridge to the C++ loader (shim/bridge.cc): one `ShimLibrary` per loaded version.

#[allow(clippy::too_many_arguments)]
#[cxx::bridge(namespace = "mmkv_sys")]
pub(crate) mod ffi {
    extern "Rust" {
        type ByteSink;
        fn extend(self: &mut ByteSink, data: &[u8]);
    }

    unsafe extern "C++" {
        include!("mmkv-sys/shim/bridge.h");

        type ShimLibrary;

        fn load_shim(path: &str) -> Result<UniquePtr<ShimLibrary>>;

        fn mmkv_version(self: &ShimLibrary) -> String;
        fn shim_version(self: &ShimLibrary) -> u32;
        fn caps(self: &ShimLibrary) -> u64;
        fn set_error_strategy(self: &ShimLibrary, recover: bool) -> Result<()>;
        fn set_test_time(self: &ShimLibrary, has_time: bool, secs: i64) -> Result<()>;
        fn set_page_size(self: &ShimLibrary, size: usize) -> Result<()>;
        fn initialized_page_size(self: &ShimLibrary) -> usize;

        fn open_as(
            self: &ShimLibrary,
            dir: &[u8],
            id: &[u8],
            multi: bool,
            read_only: bool,
            name_space: bool,
            key: &[u8],
            has_key: bool,
            aes256: bool,
        ) -> Result<usize>;
        fn close(self: &ShimLibrary, h: usize) -> Result<()>;
        fn enable_key_expire(self: &ShimLibrary, h: usize, secs: u32) -> Result<bool>;
        fn disable_key_expire(self: &ShimLibrary, h: usize) -> Result<bool>;

        fn set_bool(
            self: &ShimLibrary,
            h: usize,
            key: &[u8],
            v: bool,
            has_expire: bool,
            expire: u32,
        ) -> Result<bool>;
        fn set_i32(
            self: &ShimLibrary,
            h: usize,
            key: &[u8],
            v: i32,
            has_expire: bool,
            expire: u32,
        ) -> Result<bool>;
        fn set_u32(
            self: &ShimLibrary,
            h: usize,
            key: &[u8],
            v: u32,
            has_expire: bool,
            expire: u32,
        ) -> Result<bool>;
        fn set_i64(
            self: &ShimLibrary,
            h: usize,
            key: &[u8],
            v: i64,
            has_expire: bool,
            expire: u32,
        ) -> Result<bool>;
        fn set_u64(
            self: &ShimLibrary,
            h: usize,
            key: &[u8],
            v: u64,
            has_expire: bool,
            expire: u32,
        ) -> Result<bool>;
        fn set_f32(
            self: &ShimLibrary,
            h: usize,
            key: &[u8],
            v: f32,
            has_expire: bool,
            expire: u32,
        ) -> Result<bool>;
        fn set_f64(
            self: &ShimLibrary,
            h: usize,
            key: &[u8],
            v: f64,
            has_expire: bool,
            expire: u32,
        ) -> Result<bool>;
        fn set_string(
            self: &ShimLibrary,
            h: usize,
            key: &[u8],
            v: &[u8],
            has_expire: bool,
            expire: u32,
        ) -> Result<bool>;
        fn set_bytes(
            self: &ShimLibrary,
            h: usize,
            key: &[u8],
            v: &[u8],
            has_expire: bool,
            expire: u32,
        ) -> Result<bool>;
        fn set_string_vec(
            self: &ShimLibrary,
            h: usize,
            key: &[u8],
            data: &[u8],
            offsets: &[usize],
            has_expire: bool,
            expire: u32,
        ) -> Result<bool>;
        fn set_vec(
            self: &ShimLibrary,
            h: usize,
            key: &[u8],
            kind: i32,
            raw: &[u8],
            count: usize,
            has_expire: bool,
            expire: u32,
        ) -> Result<bool>;

        fn get_bool(self: &ShimLibrary, h: usize, key: &[u8], out: &mut bool) -> Result<bool>;
        fn get_i32(self: &ShimLibrary, h: usize, key: &[u8], out: &mut i32) -> Result<bool>;
        fn get_u32(self: &ShimLibrary, h: usize, key: &[u8], out: &mut u32) -> Result<bool>;
        fn get_i64(self: &ShimLibrary, h: usize, key: &[u8], out: &mut i64) -> Result<bool>;
        fn get_u64(self: &ShimLibrary, h: usize, key: &[u8], out: &mut u64) -> Result<bool>;
        fn get_f32(self: &ShimLibrary, h: usize, key: &[u8], out: &mut f32) -> Result<bool>;
        fn get_f64(self: &ShimLibrary, h: usize, key: &[u8], out: &mut f64) -> Result<bool>;
        fn get_string(self: &ShimLibrary, h: usize, key: &[u8], out: &mut ByteSink)
            -> Result<bool>;
        fn get_bytes(self: &ShimLibrary, h: usize, key: &[u8], out: &mut ByteSink) -> Result<bool>;
        fn get_string_vec(
            self: &ShimLibrary,
            h: usize,
            key: &[u8],
            data: &mut ByteSink,
            lens: &mut Vec<usize>,
        ) -> Result<bool>;
        fn get_vec(
            self: &ShimLibrary,
            h: usize,
            key: &[u8],
            kind: i32,
            raw: &mut ByteSink,
        ) -> Result<bool>;

        fn remove(self: &ShimLibrary, h: usize, key: &[u8]) -> Result<i32>;
        fn remove_keys(self: &ShimLibrary, h: usize, data: &[u8], offsets: &[usize]) -> Result<()>;
        fn clear_all(self: &ShimLibrary, h: usize, keep_space: bool) -> Result<()>;
        fn trim(self: &ShimLibrary, h: usize) -> Result<()>;
        fn sync(self: &ShimLibrary, h: usize, synchronous: bool) -> Result<()>;
        fn clear_memory_cache(self: &ShimLibrary, h: usize) -> Result<()>;
        fn all_keys(
            self: &ShimLibrary,
            h: usize,
            filter_expire: bool,
            data: &mut ByteSink,
            lens: &mut Vec<usize>,
        ) -> Result<()>;
        fn count(self: &ShimLibrary, h: usize, filter_expire: bool) -> Result<u64>;
        fn contains(self: &ShimLibrary, h: usize, key: &[u8]) -> Result<bool>;
        fn total_size(self: &ShimLibrary, h: usize) -> Result<u64>;
        fn actual_size(self: &ShimLibrary, h: usize) -> Result<u64>;
        fn value_size(self: &ShimLibrary, h: usize, key: &[u8], actual: bool) -> Result<u64>;
        fn rekey(self: &ShimLibrary, h: usize, key: &[u8], aes256: bool) -> Result<bool>;

        fn set_io_fault(
            self: &ShimLibrary,
            call: u32,
            from: u64,
            count: u64,
            err: i32,
        ) -> Result<()>;
        fn io_fault_count(self: &ShimLibrary, call: u32, failed: bool) -> Result<u64>;
        fn compare_before_set(self: &ShimLibrary, h: usize, enable: bool) -> Result<bool>;
        fn lock(self: &ShimLibrary, h: usize, op: i32) -> Result<bool>;
        fn backup_one(
            self: &ShimLibrary,
            id: &[u8],
            dst_dir: &[u8],
            src_dir: &[u8],
        ) -> Result<bool>;
        fn restore_one(
            self: &ShimLibrary,
            id: &[u8],
            src_dir: &[u8],
            dst_dir: &[u8],
        ) -> Result<bool>;
        fn is_file_valid(self: &ShimLibrary, id: &[u8], dir: &[u8]) -> Result<bool>;
        fn remove_storage(self: &ShimLibrary, id: &[u8], dir: &[u8]) -> Result<bool>;
        fn import_from(self: &ShimLibrary, h: usize, src: usize) -> Result<u64>;
    }
}

/// A byte buffer the C++ loader appends values to, one call (one memcpy) per buffer.
#[derive(Default)]
pub(crate) struct ByteSink(pub(crate) Vec<u8>);

impl ByteSink {
    fn extend(&mut self, data: &[u8]) {
        self.0.extend_from_slice(data);
    }
}

// SAFETY: the table functions are plain C functions over MMKV instances; MMKV guards every
// instance with its own locks and its globals with process-wide locks, so one library may be
// called from several threads. Instance lifetime is managed on the Rust side (refcounts).
unsafe impl Send for ffi::ShimLibrary {}
unsafe impl Sync for ffi::ShimLibrary {}
