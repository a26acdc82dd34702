//! The names every writer uses: the store id and key `i`'s name. Keys mix ASCII, Cyrillic and
//! 40-byte names, so every writer exercises multi-byte and long keys.

/// The store id every writer child opens (the data file's name in its folder).
pub const STORE_ID: &str = "store";

/// The name of key `i`: `ключ-i` (one in seven), `ki-xxxx…` (40 x's, one in seven), else `ki`.
pub fn key_name(i: usize) -> String {
    match i % 7 {
        0 => format!("ключ-{i}"),
        1 => format!("k{i}-{}", "x".repeat(40)),
        _ => format!("k{i}"),
    }
}

/// The index `i` whose [`key_name`] is `name`, if any.
pub fn key_index(name: &[u8]) -> Option<usize> {
    let name = std::str::from_utf8(name).ok()?;
    let rest = name
        .strip_prefix("ключ-")
        .or_else(|| name.strip_prefix('k'))?;
    let digits = rest.split('-').next()?;
    let i: usize = digits.parse().ok()?;
    (key_name(i) == name).then_some(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for i in 0..100 {
            assert_eq!(key_index(key_name(i).as_bytes()), Some(i));
        }
        assert_eq!(key_index(b"k7"), None, "7 is a Cyrillic name");
        assert_eq!(key_index(b"k2-x"), None);
        assert_eq!(key_index(b"live-002"), None);
    }
}
