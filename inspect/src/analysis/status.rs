//! Record statuses: what happened to each record of a store (see the [module docs](super)).

use std::collections::HashMap;

use mmkv_reader::clock::expired;
use mmkv_reader::records::split_expire;
use serde::Serialize;

/// The status of a record in `--history`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// The latest write of a key that is present now.
    Live,
    /// A value followed by a later value of the same key.
    Superseded,
    /// A deletion marker, or a value whose next record of the same key is a deletion marker.
    Removed,
    /// The latest write of a key whose expire time has passed.
    Expired,
    /// A record carved from the bytes after the data region (left from before a write-back).
    Stale,
}

impl Status {
    /// The status as JSON and the tables spell it.
    pub fn name(self) -> &'static str {
        match self {
            Status::Live => "live",
            Status::Superseded => "superseded",
            Status::Removed => "removed",
            Status::Expired => "expired",
            Status::Stale => "stale",
        }
    }
}

/// One record of the store, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordInfo {
    /// Position in file order (0-based; carved records continue the numbering).
    pub index: usize,
    /// Byte offset of the record's first byte in the DATA FILE (region offset + 4).
    pub offset: usize,
    /// The key bytes.
    pub key: Vec<u8>,
    /// The value payload: the stored value without the expire suffix (empty for a deletion marker).
    pub payload: Vec<u8>,
    /// The expire time when key expiration is on and the time is non-zero.
    pub expire_at: Option<u32>,
    /// The stored value is empty: a deletion marker.
    pub deletion: bool,
    /// What happened to this record.
    pub status: Status,
}

/// Counts of records by status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Live entries.
    pub live: usize,
    /// Superseded values.
    pub superseded: usize,
    /// Deletion markers and removed values.
    pub removed: usize,
    /// Expired entries.
    pub expired: usize,
}

/// Splits a stored value into payload and expire time (`None` for 0 = never).
pub(super) fn split_value(value: &[u8], key_expire: bool) -> (Vec<u8>, Option<u32>) {
    if key_expire {
        if let Some((payload, t)) = split_expire(value) {
            return (payload.to_vec(), (t != 0).then_some(t));
        }
    }
    (value.to_vec(), None)
}

/// Assigns statuses to region records in file order (see the module docs).
pub(super) fn assign_statuses(recs: &mut [RecordInfo], now: u32) {
    // For each key: is its next record (later in the file) a value (true) or a marker (false)?
    let mut next_is_value: HashMap<Vec<u8>, bool> = HashMap::new();
    for r in recs.iter_mut().rev() {
        r.status = if r.deletion {
            Status::Removed
        } else {
            match next_is_value.get(&r.key) {
                Some(true) => Status::Superseded,
                Some(false) => Status::Removed,
                None => match r.expire_at {
                    Some(t) if expired(t, || now) => Status::Expired,
                    _ => Status::Live,
                },
            }
        };
        next_is_value.insert(r.key.clone(), !r.deletion);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(key: &str, value: &[u8], expire: Option<u32>) -> RecordInfo {
        RecordInfo {
            index: 0,
            offset: 0,
            key: key.as_bytes().to_vec(),
            payload: value.to_vec(),
            expire_at: expire,
            deletion: value.is_empty(),
            status: Status::Stale,
        }
    }

    fn statuses(recs: &mut [RecordInfo], now: u32) -> Vec<&'static str> {
        assign_statuses(recs, now);
        recs.iter().map(|r| r.status.name()).collect()
    }

    #[test]
    fn next_event_precedence() {
        let mut v = vec![
            rec("a", b"\x01", None),
            rec("a", b"", None),
            rec("a", b"\x02", None),
        ];
        assert_eq!(statuses(&mut v, 0), ["removed", "removed", "live"]);
        let mut v = vec![
            rec("a", b"\x01", None),
            rec("a", b"\x02", None),
            rec("a", b"", None),
        ];
        assert_eq!(statuses(&mut v, 0), ["superseded", "removed", "removed"]);
        let mut v = vec![
            rec("a", b"\x01", None),
            rec("b", b"\x01", Some(10)),
            rec("c", b"\x01", Some(11)),
            rec("a", b"\x03", Some(5)),
        ];
        assert_eq!(
            statuses(&mut v, 10),
            ["superseded", "expired", "live", "expired"]
        );
    }
}
