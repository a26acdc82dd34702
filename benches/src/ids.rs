//! Criterion benchmark ids shared by the bench binaries and the table tool.
//!
//! Criterion stores each estimate in `<criterion dir>/<group>/<function>/new/estimates.json`.

/// One read benchmark group: its criterion group name and the label of its table row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GetGroup {
    /// Criterion group name.
    pub group: &'static str,
    /// Row label in the table.
    pub label: &'static str,
}

/// `get_i32` of a 4-byte-or-less varint value.
pub const GET_I32: GetGroup = GetGroup {
    group: "get_i32",
    label: "get_i32",
};
/// `get_string` of a 38-byte value (copied into an owned string).
pub const GET_STRING: GetGroup = GetGroup {
    group: "get_string",
    label: "get_string (38 B)",
};
/// `get_bytes` of a 4 KiB value, copied into an owned buffer.
pub const GET_BYTES_COPY: GetGroup = GetGroup {
    group: "get_bytes_copy",
    label: "get_bytes 4 KB copy",
};
/// `get_bytes` of a 4 KiB value borrowed from the reader's current state (`Store::view`, with
/// check-on-read); the official library has no zero-copy getter: its columns repeat its copying
/// getter.
pub const GET_BYTES_ZERO_COPY: GetGroup = GetGroup {
    group: "get_bytes_zero_copy",
    label: "get_bytes 4 KB zero-copy",
};
/// All read groups, in table order.
pub const GET_GROUPS: [GetGroup; 4] = [GET_I32, GET_STRING, GET_BYTES_COPY, GET_BYTES_ZERO_COPY];

/// Function id: the official library, `MMKV_SINGLE_PROCESS`.
pub const OFFICIAL_SINGLE: &str = "official_single";
/// Function id: the official library, `MMKV_MULTI_PROCESS`.
pub const OFFICIAL_MULTI: &str = "official_multi";
/// Function id: mmkv-reader (a `Store` with check-on-read on every read).
pub const READER: &str = "reader";
/// Function id: a bare `HashMap` lookup with the reader's hasher and the same keys.
pub const FLOOR: &str = "floor";

/// Group of the reader-threads benchmark (`Store::get_i32` on one store from 1 and 2 threads,
/// and the floor lookup the same way).
pub const THREADS_GROUP: &str = "get_i32_threads";
/// Function id: one reader thread.
pub const THREADS_ONE: &str = "reader_1_thread";
/// Function id: two reader threads at once (time per read on every thread).
pub const THREADS_TWO: &str = "reader_2_threads";
/// Function id: the floor `HashMap` lookup on one thread.
pub const THREADS_FLOOR_ONE: &str = "floor_1_thread";
/// Function id: the floor `HashMap` lookup on two threads at once.
pub const THREADS_FLOOR_TWO: &str = "floor_2_threads";

/// Group of the open + parse benchmark (100,000-key store).
pub const OPEN_GROUP: &str = "open_100k";
/// Function id: official `mmkvWithID` + first access (`count()`).
pub const OPEN_OFFICIAL: &str = "official";
/// Function id: `Store::open`.
pub const OPEN_READER: &str = "reader";

/// Group of the reload benchmarks (reader partial reload after an append, on each scaling store).
pub const RELOAD_GROUP: &str = "reload";
/// Group of the scaling open benchmarks (`Store::open` + first access of each scaling store).
pub const SCALE_OPEN_GROUP: &str = "scale_open";

/// A store of the scaling benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReloadStore {
    /// Short name used in function ids.
    pub name: &'static str,
    /// Number of keys written before the appends.
    pub keys: usize,
    /// Bytes of each value written before the appends.
    pub value_len: usize,
}

/// The ~64 MB store of [`OPEN_GROUP`] and of the memory report.
pub const OPEN_STORE: ReloadStore = ReloadStore {
    name: "store_64mb",
    keys: 100_000,
    value_len: 650,
};
/// Scaling stores (100-byte values), in table order: open time and heap grow with the size,
/// reload time with the appended bytes only.
pub const SCALE_STORES: [ReloadStore; 4] = [
    ReloadStore {
        name: "keys_1k",
        keys: 1_000,
        value_len: 100,
    },
    ReloadStore {
        name: "keys_10k",
        keys: 10_000,
        value_len: 100,
    },
    ReloadStore {
        name: "keys_100k",
        keys: 100_000,
        value_len: 100,
    },
    ReloadStore {
        name: "keys_1m",
        keys: 1_000_000,
        value_len: 100,
    },
];
/// Appended sizes k (label, bytes), in table order.
pub const RELOAD_APPENDS: [(&str, usize); 3] =
    [("1kb", 1024), ("64kb", 64 * 1024), ("1mb", 1024 * 1024)];

/// The function id of a reload benchmark: `<store>_append_<k>`, e.g. `store_64mb_append_1kb`.
pub fn reload_function(store: &str, append: &str) -> String {
    format!("{store}_append_{append}")
}

/// File (in the criterion directory) with each scaling store's size and reader heap, written by
/// the `scaling` bench.
pub const SCALING_FILE: &str = "scaling.json";
/// File (in the criterion directory) describing the machine of the run, written by the `gets` bench.
pub const MACHINE_FILE: &str = "machine.json";
/// File (in the criterion directory) with the reader's memory figures, written by the `open` bench.
pub const MEMORY_FILE: &str = "memory.json";
/// File (in the criterion directory) describing a bench's fixture: `fixture-<bench>.json`.
pub fn fixture_file(bench: &str) -> String {
    format!("fixture-{bench}.json")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reload_ids_are_path_safe_and_distinct() {
        let mut seen = std::collections::BTreeSet::new();
        for s in SCALE_STORES {
            for (a, _) in RELOAD_APPENDS {
                let id = reload_function(s.name, a);
                assert!(id
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'));
                assert!(seen.insert(id));
            }
        }
        assert_eq!(reload_function("a", "b"), "a_append_b");
    }
}
