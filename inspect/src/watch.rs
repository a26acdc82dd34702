//! `mmkv watch`: follow a store through `mmkv_reader::Store`'s check-on-read.
//!
//! Output (one JSON object per line, flushed each time):
//! 1. the live entries as `dump --json` prints them (`{"meta": ..., "entries": [...]}`);
//! 2. per observed change: `{"sequence": N, "set": [{"key_hex", "value_hex", "expire_at"}],
//!    "removed": [KEY_HEX, ...]}` (keys sorted), where `set` holds new keys and keys whose value or
//!    expire time changed, `removed` keys that disappeared (removed, cleared or expired).
//!
//! Ends after `--duration-ms`, on SIGINT (Ctrl-C) or on SIGTERM, with exit status 0. A failed
//! reload (the writer mid-write, CRC mismatch) is reported once on stderr and the last good
//! snapshot stays in use.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mmkv_reader::{Options, Store};
use serde::Serialize;

use crate::analysis::{Analysis, CryptOpts};
use crate::error::{Error, Result};
use crate::output::{entry_json_parts, DumpJson, MetaJson, Pins};
use crate::util::hex;

/// Live state: key -> (payload, expire time).
type State = BTreeMap<Vec<u8>, (Vec<u8>, Option<u32>)>;

/// One `set` item of a change line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SetJson {
    /// Key as hex.
    pub key_hex: String,
    /// New value payload as hex.
    pub value_hex: String,
    /// Expire time or null.
    pub expire_at: Option<u32>,
}

/// A change line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChangeJson {
    /// The meta sequence after the change.
    pub sequence: u32,
    /// Keys set (new or changed).
    pub set: Vec<SetJson>,
    /// Keys removed (hex).
    pub removed: Vec<String>,
}

fn state_of(snap: &mmkv_reader::Snapshot) -> State {
    snap.entries()
        .map(|(k, v, t)| (k.to_vec(), (v.to_vec(), (t != 0).then_some(t))))
        .collect()
}

/// The change from `old` to `new`, `None` when nothing changed.
pub fn diff(old: &State, new: &State, sequence: u32) -> Option<ChangeJson> {
    let set: Vec<SetJson> = new
        .iter()
        .filter(|(k, v)| old.get(*k) != Some(*v))
        .map(|(k, (v, e))| SetJson {
            key_hex: hex(k),
            value_hex: hex(v),
            expire_at: *e,
        })
        .collect();
    let removed: Vec<String> = old
        .keys()
        .filter(|k| !new.contains_key(*k))
        .map(|k| hex(k))
        .collect();
    (!set.is_empty() || !removed.is_empty()).then_some(ChangeJson {
        sequence,
        set,
        removed,
    })
}

/// Writes one JSON line and flushes. `Ok(false)`: stdout is closed (stop quietly).
fn emit<T: Serialize>(value: &T) -> Result<bool> {
    let line = serde_json::to_string(value).map_err(Error::Serialize)?;
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{line}").and_then(|_| out.flush()) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(false),
        Err(source) => Err(Error::Io {
            path: "<stdout>".into(),
            source,
        }),
    }
}

/// Runs `watch` until the duration passes or a termination signal arrives.
pub fn watch(
    path: &Path,
    crypt: &CryptOpts,
    interval: Duration,
    duration: Option<Duration>,
) -> Result<()> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let io = |source| Error::Io {
            path: "<signal handler>".into(),
            source,
        };
        // A second signal while the first is being handled ends the process at once (status 1).
        signal_hook::flag::register_conditional_shutdown(sig, 1, Arc::clone(&stop)).map_err(io)?;
        signal_hook::flag::register(sig, Arc::clone(&stop)).map_err(io)?;
    }
    let deadline = duration.map(|d| Instant::now() + d);

    // The inspection read gives the precise errors (looks encrypted, wrong key, ...).
    let page = crate::commands::page_note(path, crypt)?;
    let analysis = Analysis::open_at(path, crypt, crate::util::now_secs(), page)?;
    // The store follows the page size the note announced, whatever the .crc becomes.
    let mut opts = Options::new().aes256(crypt.aes256).page_size(page.size);
    if let Some(k) = &crypt.key {
        opts = opts.crypt_key(k.clone());
    }
    let store = Store::open(path, opts).map_err(|e| Error::reader(path, e))?;
    let snap = store.snapshot();
    let mut state = state_of(&snap);
    let pins = Pins::new();
    let mut meta = MetaJson::from_analysis(&analysis);
    let m = snap.meta();
    meta.version = m.version;
    meta.sequence = m.sequence;
    meta.crc = m.crc_digest;
    meta.crc_ok = true; // the store verified it
    meta.key_expire = snap.key_expire();
    meta.actual_size = snap.region_len();
    let first = DumpJson {
        meta,
        entries: state
            .iter()
            .map(|(k, (v, e))| entry_json_parts(k, v, *e, &pins))
            .collect(),
    };
    drop(snap);
    if !emit(&first)? {
        return Ok(());
    }
    let mut last_error: Option<String> = None;
    let step = interval
        .min(Duration::from_millis(20))
        .max(Duration::from_millis(1));
    let mut next_poll = Instant::now() + interval;
    loop {
        let finished =
            stop.load(Ordering::Relaxed) || deadline.is_some_and(|d| Instant::now() >= d);
        if finished || Instant::now() >= next_poll {
            next_poll = Instant::now() + interval;
            let snap = store.snapshot();
            if let Some(e) = store.last_reload_error() {
                let msg = e.to_string();
                if last_error.as_deref() != Some(msg.as_str()) {
                    eprintln!("mmkv watch: reload failed (serving the last good state): {msg}");
                    last_error = Some(msg);
                }
            } else {
                last_error = None;
            }
            let new_state = state_of(&snap);
            if let Some(change) = diff(&state, &new_state, snap.meta().sequence) {
                if !emit(&change)? {
                    return Ok(());
                }
            }
            state = new_state;
        }
        if finished {
            return Ok(());
        }
        std::thread::sleep(step);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diffs() {
        let mut a = State::new();
        a.insert(b"k1".to_vec(), (vec![1], None));
        a.insert(b"k2".to_vec(), (vec![2], None));
        let mut b = a.clone();
        assert_eq!(diff(&a, &b, 1), None);
        b.remove(b"k1".as_slice());
        b.insert(b"k2".to_vec(), (vec![3], Some(9)));
        b.insert(b"k3".to_vec(), (vec![4], None));
        let d = diff(&a, &b, 2).unwrap();
        assert_eq!(d.sequence, 2);
        assert_eq!(d.removed, vec!["6b31".to_string()]);
        assert_eq!(
            d.set,
            vec![
                SetJson {
                    key_hex: "6b32".into(),
                    value_hex: "03".into(),
                    expire_at: Some(9)
                },
                SetJson {
                    key_hex: "6b33".into(),
                    value_hex: "04".into(),
                    expire_at: None
                }
            ]
        );
    }
}
