//! Tab- and comma-separated output (`--format tsv|csv`) of `dump`, `dump --history` and `scan`,
//! for spreadsheets and reports.
//!
//! Every table starts with a header row. Text is UTF-8; bytes that are not UTF-8 show as U+FFFD
//! in the text columns (`key`, `value`) and exactly in the hex columns (`key_hex`, `value_hex`).
//! - **CSV** (RFC 4180): fields holding a comma, a double quote, CR or LF are enclosed in double
//!   quotes, with inner quotes doubled; rows end with CRLF.
//! - **TSV**: one row per line, fields separated by one tab; inside a field, backslash, tab, LF
//!   and CR are written `\\`, `\t`, `\n`, `\r` (so a value never breaks a row).
//!
//! Entry and record rows (`dump`, `dump --history`): `index, offset, status, key, key_hex, type,
//! value, value_hex, expire_at`. `type` and `value` are the first of the JSON `guesses` (or the
//! pinned type's decoding): strings as their text, every other value as its JSON text (numbers,
//! `true`, arrays; bytes as hex, `inf`), empty for deletion markers. `expire_at` is a UTC date
//! (`YYYY-MM-DD HH:MM:SSZ`), empty when the key never expires.
//!
//! Scan rows: `path, entries, superseded, removed, expired, encrypted, crc_ok, sequence,
//! meta_version, data_size, file_size, version_guess, error`.

use std::path::Path;

use clap::ValueEnum;
use mmkv_reader::raw::read_raw;
use mmkv_reader::records::holder_len;

use crate::analysis::{Analysis, RecordInfo};
use crate::infer::{guesses_or_pinned, Guess, Val};
use crate::output::Pins;
use crate::scan::{ScanJson, ScanRow};
use crate::util::{hex, key_lossy, utc};

/// Output format of `dump` and `scan`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// The readable table (the default).
    Table,
    /// One JSON object (the same as `--json`).
    Json,
    /// Tab-separated values with a header row (tabs, newlines and backslashes escaped).
    Tsv,
    /// Comma-separated values with a header row (RFC 4180 quoting).
    Csv,
}

/// A delimited format: how fields are written and separated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delimited {
    /// Tab-separated.
    Tsv,
    /// Comma-separated.
    Csv,
}

impl Delimited {
    /// The delimited format of `f`, if it is one.
    pub fn of(f: Format) -> Option<Delimited> {
        match f {
            Format::Tsv => Some(Delimited::Tsv),
            Format::Csv => Some(Delimited::Csv),
            Format::Table | Format::Json => None,
        }
    }

    /// One field, quoted or escaped as the format requires.
    pub fn field(self, s: &str) -> String {
        match self {
            Delimited::Csv => {
                if s.contains([',', '"', '\r', '\n']) {
                    format!("\"{}\"", s.replace('"', "\"\""))
                } else {
                    s.to_string()
                }
            }
            Delimited::Tsv => {
                let mut out = String::with_capacity(s.len());
                for c in s.chars() {
                    match c {
                        '\\' => out.push_str("\\\\"),
                        '\t' => out.push_str("\\t"),
                        '\n' => out.push_str("\\n"),
                        '\r' => out.push_str("\\r"),
                        c => out.push(c),
                    }
                }
                out
            }
        }
    }

    /// Appends one row (fields joined by the separator, then the line end).
    pub fn row<S: AsRef<str>>(self, out: &mut String, fields: &[S]) {
        let sep = match self {
            Delimited::Csv => ",",
            Delimited::Tsv => "\t",
        };
        let cells: Vec<String> = fields.iter().map(|f| self.field(f.as_ref())).collect();
        out.push_str(&cells.join(sep));
        out.push_str(match self {
            Delimited::Csv => "\r\n",
            Delimited::Tsv => "\n",
        });
    }
}

/// Header of the entry and record rows.
pub const RECORD_HEADER: [&str; 9] = [
    "index",
    "offset",
    "status",
    "key",
    "key_hex",
    "type",
    "value",
    "value_hex",
    "expire_at",
];

/// Header of the scan rows.
pub const SCAN_HEADER: [&str; 13] = [
    "path",
    "entries",
    "superseded",
    "removed",
    "expired",
    "encrypted",
    "crc_ok",
    "sequence",
    "meta_version",
    "data_size",
    "file_size",
    "version_guess",
    "error",
];

/// A decoded value as one text field: what the JSON `value` holds, without JSON quoting when it
/// is a JSON string (text, bytes as hex, `inf`/`-inf`/`NaN`), else its JSON text.
pub fn value_text(v: &Val) -> String {
    let json = serde_json::to_string(v).unwrap_or_default();
    if json.starts_with('"') {
        serde_json::from_str::<String>(&json).unwrap_or(json)
    } else {
        json
    }
}

fn record_row(r: &RecordInfo, pins: &Pins) -> [String; 9] {
    let top: Option<Guess> = if r.deletion {
        None
    } else {
        guesses_or_pinned(&r.payload, pins.get(&r.key).copied())
            .into_iter()
            .next()
    };
    [
        r.index.to_string(),
        r.offset.to_string(),
        r.status.name().to_string(),
        key_lossy(&r.key),
        hex(&r.key),
        top.as_ref()
            .map_or_else(String::new, |g| g.ty.name().to_string()),
        top.as_ref()
            .map_or_else(String::new, |g| value_text(&g.value)),
        hex(&r.payload),
        r.expire_at.map_or_else(String::new, utc),
    ]
}

fn records_table<'a>(
    d: Delimited,
    recs: impl Iterator<Item = &'a RecordInfo>,
    pins: &Pins,
) -> String {
    let mut out = String::new();
    d.row(&mut out, &RECORD_HEADER);
    for r in recs {
        d.row(&mut out, &record_row(r, pins));
    }
    out
}

/// `dump --format tsv|csv`: one row per live entry, sorted by key bytes (as `dump --json`).
pub fn dump_delimited(d: Delimited, a: &Analysis, pins: &Pins) -> String {
    records_table(d, a.live().into_iter(), pins)
}

/// `dump --history --format tsv|csv`: one row per record in file order, carved ones last.
pub fn history_delimited(d: Delimited, a: &Analysis, carved: &[RecordInfo], pins: &Pins) -> String {
    records_table(d, a.records.iter().chain(carved), pins)
}

/// A guess of the MMKV releases that wrote a store, from its format features (meta version,
/// the v2.4.0 zero header, the item-size holder width of a plaintext region). `unknown` when
/// nothing tells (e.g. a store never written).
pub fn version_guess(path: &Path, plaintext: bool) -> (Option<u32>, String) {
    let Ok(raw) = read_raw(path, None) else {
        return (None, "unknown".into());
    };
    let m = &raw.meta;
    let header = raw
        .file
        .get(..4)
        .map_or(0, |h| u32::from_le_bytes([h[0], h[1], h[2], h[3]]));
    let holder = if plaintext && !raw.region().is_empty() {
        holder_len(raw.region()).ok()
    } else {
        None
    };
    let guess = match m.version {
        v if v >= 3 && raw.actual_size > 0 && header == 0 => "v2.4.0+",
        4.. if raw.actual_size == 0 => "v1.3.0+",
        4.. => "v1.3.0-v2.3.x",
        3 => match holder {
            Some(2 | 3) => "v1.1.x",
            Some(4) => "v1.2.x",
            _ => "v1.1.0-v1.2.x",
        },
        _ if raw.actual_size == 0 => "unknown",
        _ => "v1.2.x or older",
    };
    (Some(m.sequence), guess.to_string())
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(String::new, |x| x.to_string())
}

fn scan_row(r: &ScanRow) -> [String; 13] {
    let (sequence, guess) = if r.error.is_some() && r.meta_version.is_none() {
        (None, "unknown".to_string())
    } else {
        version_guess(Path::new(&r.path), r.encrypted == "no")
    };
    [
        r.path.clone(),
        opt(r.entries),
        opt(r.superseded),
        opt(r.removed),
        opt(r.expired),
        r.encrypted.to_string(),
        r.crc_ok
            .map_or_else(String::new, |ok| if ok { "yes" } else { "no" }.into()),
        opt(sequence),
        opt(r.meta_version),
        opt(r.data_size),
        opt(r.file_size),
        guess,
        r.error.clone().unwrap_or_default(),
    ]
}

/// `scan --format tsv|csv`: one row per store (directories that could not be listed are not
/// rows; they go to stderr).
pub fn scan_delimited(d: Delimited, s: &ScanJson) -> String {
    let mut out = String::new();
    d.row(&mut out, &SCAN_HEADER);
    for r in &s.stores {
        d.row(&mut out, &scan_row(r));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quoting() {
        let d = Delimited::Csv;
        assert_eq!(d.field("plain"), "plain");
        assert_eq!(d.field("a,b"), "\"a,b\"");
        assert_eq!(d.field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(d.field("two\nlines"), "\"two\nlines\"");
        assert_eq!(d.field("cr\r"), "\"cr\r\"");
        assert_eq!(d.field("tab\there"), "tab\there");
        let mut out = String::new();
        d.row(&mut out, &["a", "b,c", ""]);
        assert_eq!(out, "a,\"b,c\",\r\n");
    }

    #[test]
    fn tsv_escaping() {
        let d = Delimited::Tsv;
        assert_eq!(d.field("a\tb\nc\rd\\e"), "a\\tb\\nc\\rd\\\\e");
        assert_eq!(d.field("x,\"y\""), "x,\"y\"");
        let mut out = String::new();
        d.row(&mut out, &["a\tb", "c"]);
        assert_eq!(out, "a\\tb\tc\n");
    }

    #[test]
    fn value_texts() {
        assert_eq!(value_text(&Val::Str("a\"b".into())), "a\"b");
        assert_eq!(value_text(&Val::I64(-5)), "-5");
        assert_eq!(value_text(&Val::F64(f64::INFINITY)), "inf");
        assert_eq!(value_text(&Val::F64(0.5)), "0.5");
        assert_eq!(value_text(&Val::F32(0.1)), "0.1");
        assert_eq!(value_text(&Val::Hex(vec![0, 0xff])), "00ff");
        assert_eq!(
            value_text(&Val::List(vec![Val::Str("x".into()), Val::Bool(true)])),
            "[\"x\",true]"
        );
    }
}
