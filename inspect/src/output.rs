//! JSON shapes and readable tables of `dump`, `dump --history` and `meta`.

use std::collections::HashMap;
use std::fmt::Write as _;

use mmkv_reader::locate::Source;
use mmkv_reader::meta::MetaInfo;
use serde::Serialize;

use crate::analysis::{Analysis, RecordInfo, Status};
use crate::infer::{guesses_or_pinned, Decoding, Guess};
use crate::util::{hex, key_display, key_lossy, truncate};

/// `"meta"` of `dump --json` (and of the first `watch` line).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MetaJson {
    /// Meta version.
    pub version: u32,
    /// Full write-back count.
    pub sequence: u32,
    /// CRC digest recorded in the meta.
    pub crc: u32,
    /// The CRC-32 of the stored data region equals `crc`.
    pub crc_ok: bool,
    /// Length of the data region.
    pub actual_size: usize,
    /// Key expiration is enabled.
    pub key_expire: bool,
    /// Which region the official loader reads and why (`mmkv_reader::locate`).
    pub region: RegionJson,
    /// How the read was kept consistent with a writer (`shared` lock, or `none` when a writer
    /// held an exclusive lock, or there was no meta file).
    pub lock: &'static str,
}

/// `"meta"."region"` of `dump --json`: the locator's decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RegionJson {
    /// `meta`, `header`, `last_confirmed` or `recovered` (`--recover` only: read unverified,
    /// decoded up to the first record that does not parse).
    pub source: &'static str,
    /// Bytes of region read (data-file bytes 4 .. 4 + size).
    pub size: u64,
    /// The region passed its CRC check.
    pub crc_ok: bool,
    /// The actual size the loader started from (the meta's, or the header's before meta version 3).
    pub actual_size: u32,
    /// Why that actual size was not used as it is (null when it was).
    pub problem: Option<String>,
    /// Data file length.
    pub file_len: u64,
    /// The meta file was shorter than its structure (or missing) and read zero-filled.
    pub meta_zero_filled: bool,
    /// The page size of the loader followed (`--page-size`): the data file is mapped rounded
    /// up to its pages.
    pub page_size: u64,
    /// Why that page size: `inferred`, `host_not_inferred`, `host` or `given`.
    pub page_size_source: &'static str,
}

impl RegionJson {
    /// From a raw store read at `page`.
    pub fn new(raw: &mmkv_reader::raw::RawStore, page: &mmkv_reader::PageSize) -> RegionJson {
        let l = &raw.location;
        RegionJson {
            source: l.source.as_str(),
            size: l.size,
            crc_ok: l.crc_ok,
            actual_size: l.actual_size,
            problem: l.problem.map(|p| p.to_string()),
            file_len: l.file_len,
            meta_zero_filled: raw.meta_short(),
            page_size: page.size,
            page_size_source: page.source.as_str(),
        }
    }
}

/// The `lock` word of a read.
pub fn lock_word(sync: mmkv_reader::ReadSync) -> &'static str {
    match sync {
        mmkv_reader::ReadSync::Locked => "shared",
        _ => "none",
    }
}

impl MetaJson {
    /// From an analysis.
    pub fn from_analysis(a: &Analysis) -> MetaJson {
        MetaJson {
            version: a.raw.meta.version,
            sequence: a.raw.meta.sequence,
            crc: a.raw.meta.crc_digest,
            crc_ok: a.raw.crc_ok,
            actual_size: a.raw.actual_size,
            key_expire: a.raw.meta.key_expire(),
            region: RegionJson::new(&a.raw, &a.page),
            lock: lock_word(a.raw.sync),
        }
    }
}

/// One entry of `dump --json`.
#[derive(Debug, Clone, Serialize)]
pub struct EntryJson {
    /// Key as UTF-8 (lossy).
    pub key: String,
    /// Key as hex.
    pub key_hex: String,
    /// Value payload (without the expire suffix) as hex.
    pub value_hex: String,
    /// Expire time (epoch seconds) or null.
    pub expire_at: Option<u32>,
    /// Plausible decodings, most likely first (or the pinned type's decoding).
    pub guesses: Vec<Guess>,
}

/// `dump --json`.
#[derive(Debug, Clone, Serialize)]
pub struct DumpJson {
    /// Meta fields.
    pub meta: MetaJson,
    /// Live entries sorted by key bytes.
    pub entries: Vec<EntryJson>,
}

/// One record of `dump --history --json`.
#[derive(Debug, Clone, Serialize)]
pub struct RecordJson {
    /// Position in file order.
    pub index: usize,
    /// Byte offset of the record in the data file.
    pub offset: usize,
    /// Key as UTF-8 (lossy).
    pub key: String,
    /// Key as hex.
    pub key_hex: String,
    /// Value payload (without the expire suffix) as hex; empty for a deletion marker.
    pub value_hex: String,
    /// Status.
    pub status: Status,
    /// Expire time or null.
    pub expire_at: Option<u32>,
    /// Plausible decodings (empty for a deletion marker).
    pub guesses: Vec<Guess>,
}

/// `dump --history --json`.
#[derive(Debug, Clone, Serialize)]
pub struct HistoryJson {
    /// Meta fields.
    pub meta: MetaJson,
    /// Every record in file order (carved ones last).
    pub records: Vec<RecordJson>,
}

/// Type pins by key.
pub type Pins = HashMap<Vec<u8>, Decoding>;

fn record_guesses(r: &RecordInfo, pins: &Pins) -> Vec<Guess> {
    if r.deletion {
        return Vec::new();
    }
    guesses_or_pinned(&r.payload, pins.get(&r.key).copied())
}

/// The entry JSON of a live record.
pub fn entry_json(r: &RecordInfo, pins: &Pins) -> EntryJson {
    entry_json_parts(&r.key, &r.payload, r.expire_at, pins)
}

/// The entry JSON of a live key with its payload and expire time.
pub fn entry_json_parts(
    key: &[u8],
    payload: &[u8],
    expire_at: Option<u32>,
    pins: &Pins,
) -> EntryJson {
    EntryJson {
        key: key_lossy(key),
        key_hex: hex(key),
        value_hex: hex(payload),
        expire_at,
        guesses: guesses_or_pinned(payload, pins.get(key).copied()),
    }
}

/// `dump --json`.
pub fn dump_json(a: &Analysis, pins: &Pins) -> DumpJson {
    DumpJson {
        meta: MetaJson::from_analysis(a),
        entries: a.live().into_iter().map(|r| entry_json(r, pins)).collect(),
    }
}

/// `dump --history --json` (with `carved` appended).
pub fn history_json(a: &Analysis, carved: &[RecordInfo], pins: &Pins) -> HistoryJson {
    HistoryJson {
        meta: MetaJson::from_analysis(a),
        records: a
            .records
            .iter()
            .chain(carved)
            .map(|r| RecordJson {
                index: r.index,
                offset: r.offset,
                key: key_lossy(&r.key),
                key_hex: hex(&r.key),
                value_hex: hex(&r.payload),
                status: r.status,
                expire_at: r.expire_at,
                guesses: record_guesses(r, pins),
            })
            .collect(),
    }
}

/// The readable summary line(s) of a store's meta.
pub fn meta_summary(a: &Analysis) -> String {
    let m = &a.raw.meta;
    let mut s = format!(
        "{}: meta version {}, sequence {}, crc {:#010x} ({}), actual size {}, key expiration {}",
        a.path.display(),
        m.version,
        m.sequence,
        m.crc_digest,
        if a.raw.crc_ok { "ok" } else { "MISMATCH" },
        a.raw.actual_size,
        if m.key_expire() { "on" } else { "off" },
    );
    if a.crypt.key.is_some() {
        let _ = write!(
            s,
            ", encrypted ({})",
            if a.crypt.aes256 { "AES-256" } else { "AES-128" }
        );
    }
    let l = &a.raw.location;
    if !l.is_primary() {
        let _ = write!(
            s,
            "\nregion: {} ({} bytes){}{}",
            match l.source {
                Source::Recovered =>
                    "RECOVERED (--recover: read unverified, decoded up to the first bad record)",
                Source::Header => "header size (the meta's actual size failed)",
                Source::LastConfirmed => "last-confirmed size (the meta's actual size failed)",
                other => other.as_str(),
            },
            l.size,
            l.problem.map(|p| format!("; {p}")).unwrap_or_default(),
            if a.raw.meta_short() {
                "; meta file short or missing, read zero-filled"
            } else {
                ""
            },
        );
    }
    if a.raw.sync != mmkv_reader::ReadSync::Locked {
        let _ = write!(s, "\nlock: {}", a.raw.sync.describe());
    }
    s
}

fn guess_text(g: &[Guess], deletion: bool, pinned: bool) -> String {
    if deletion {
        return "(deletion marker)".into();
    }
    match g.split_first() {
        None if pinned => "(no value as the pinned type)".into(),
        None => String::new(),
        Some((first, rest)) => {
            let mut s = truncate(&first.to_string(), 80);
            if !rest.is_empty() {
                let others: Vec<String> = rest
                    .iter()
                    .take(3)
                    .map(|g| truncate(&g.to_string(), 30))
                    .collect();
                let _ = write!(s, "   (or: {})", others.join("; "));
            }
            s
        }
    }
}

fn expire_text(e: Option<u32>) -> String {
    e.map_or_else(|| "-".into(), crate::util::utc)
}

/// The readable table of `dump`.
pub fn dump_table(a: &Analysis, pins: &Pins) -> String {
    let live = a.live();
    let c = a.counts();
    let mut out = meta_summary(a);
    let _ = writeln!(
        out,
        "\n{} live entries ({} superseded, {} removed, {} expired records in the file)",
        live.len(),
        c.superseded,
        c.removed,
        c.expired
    );
    let rows: Vec<[String; 4]> = live
        .iter()
        .map(|r| {
            let pinned = pins.contains_key(&r.key);
            [
                truncate(&key_display(&r.key), 40),
                expire_text(r.expire_at),
                r.payload.len().to_string(),
                guess_text(&record_guesses(r, pins), false, pinned),
            ]
        })
        .collect();
    table(
        &mut out,
        &["KEY", "EXPIRES", "BYTES", "VALUE (most likely first)"],
        &rows,
    );
    out
}

/// The readable table of `dump --history`.
pub fn history_table(a: &Analysis, carved: &[RecordInfo], pins: &Pins) -> String {
    let mut out = meta_summary(a);
    let c = a.counts();
    let _ = writeln!(
        out,
        "\n{} records: {} live, {} superseded, {} removed, {} expired{}",
        a.records.len(),
        c.live,
        c.superseded,
        c.removed,
        c.expired,
        if carved.is_empty() {
            String::new()
        } else {
            format!("; {} stale records carved after the region", carved.len())
        }
    );
    let rows: Vec<[String; 6]> = a
        .records
        .iter()
        .chain(carved)
        .map(|r| {
            let pinned = pins.contains_key(&r.key);
            [
                r.index.to_string(),
                r.offset.to_string(),
                r.status.name().to_string(),
                truncate(&key_display(&r.key), 40),
                expire_text(r.expire_at),
                guess_text(&record_guesses(r, pins), r.deletion, pinned),
            ]
        })
        .collect();
    table(
        &mut out,
        &["#", "OFFSET", "STATUS", "KEY", "EXPIRES", "VALUE"],
        &rows,
    );
    out
}

/// Renders rows under a header with columns padded to their widest cell (the last column unpadded).
pub fn table<const N: usize>(out: &mut String, header: &[&str; N], rows: &[[String; N]]) {
    let mut widths = [0usize; N];
    for (i, h) in header.iter().enumerate() {
        widths[i] = h.chars().count();
    }
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            widths[i] = widths[i].max(c.chars().count());
        }
    }
    let line = |out: &mut String, cells: &[&str]| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                s.push_str(c);
            } else {
                let pad = widths[i].saturating_sub(c.chars().count());
                s.push_str(c);
                s.push_str(&" ".repeat(pad + 2));
            }
        }
        out.push_str(s.trim_end());
        out.push('\n');
    };
    line(out, header);
    for r in rows {
        let cells: Vec<&str> = r.iter().map(String::as_str).collect();
        line(out, &cells);
    }
}

/// Bytes of the meta structure.
pub const META_LEN: usize = mmkv_reader::meta::META_SIZE;

/// `mmkv meta --json`.
#[derive(Debug, Clone, Serialize)]
pub struct FullMetaJson {
    /// CRC digest of the data region.
    pub crc: u32,
    /// Meta version.
    pub version: u32,
    /// Full write-back count.
    pub sequence: u32,
    /// AES IV as hex (random bytes in plaintext stores after `clearAll()`: not evidence of encryption).
    pub iv_hex: String,
    /// Actual size of the data region (meta version >= 3; 0 otherwise).
    pub actual_size: u32,
    /// Last confirmed actual size.
    pub last_confirmed_size: u32,
    /// Last confirmed CRC digest.
    pub last_confirmed_crc: u32,
    /// Flags word.
    pub flags: u64,
    /// Key expiration enabled (flag bit 0, meta version >= 4).
    pub key_expire: bool,
    /// Bytes in the meta file; fewer than 112 are read zero-filled, as the official library does.
    pub meta_file_len: usize,
    /// Which region the official loader (default strategy) reads: `meta`, `header`,
    /// `last_confirmed` or `discarded` (null when the data file is not there).
    pub region: Option<&'static str>,
    /// Why the meta's actual size was not used as it is (null when it was).
    pub region_problem: Option<String>,
    /// The page size of the loader whose choice `region` is (`--page-size`).
    pub page_size: u64,
    /// Why that page size: `inferred`, `host_not_inferred`, `host` or `given`.
    pub page_size_source: &'static str,
}

impl FullMetaJson {
    /// From parsed meta info, for a loader at `page`.
    pub fn new(m: &MetaInfo, page: &mmkv_reader::PageSize) -> FullMetaJson {
        FullMetaJson {
            crc: m.crc_digest,
            version: m.version,
            sequence: m.sequence,
            iv_hex: hex(&m.iv),
            actual_size: m.actual_size,
            last_confirmed_size: m.last_confirmed_size,
            last_confirmed_crc: m.last_confirmed_crc,
            flags: m.flags,
            key_expire: m.key_expire(),
            meta_file_len: crate::output::META_LEN,
            region: None,
            region_problem: None,
            page_size: page.size,
            page_size_source: page.source.as_str(),
        }
    }

    /// The readable form.
    pub fn text(&self) -> String {
        format!(
            "version              {}\nsequence             {}\ncrc                  {:#010x} ({})\n\
             iv                   {}\nactual_size          {}\nlast_confirmed_size  {}\n\
             last_confirmed_crc   {:#010x}\nflags                {:#x}\nkey_expire           {}\n\
             meta_file_len        {}{}\npage_size            {} ({})\nregion               {}{}\n",
            self.version,
            self.sequence,
            self.crc,
            self.crc,
            self.iv_hex,
            self.actual_size,
            self.last_confirmed_size,
            self.last_confirmed_crc,
            self.flags,
            self.key_expire,
            self.meta_file_len,
            if self.meta_file_len < META_LEN {
                " (short: read zero-filled)"
            } else {
                ""
            },
            self.page_size,
            self.page_size_source,
            self.region.unwrap_or("(no data file)"),
            self.region_problem
                .as_ref()
                .map(|p| format!(" ({p})"))
                .unwrap_or_default(),
        )
    }
}
