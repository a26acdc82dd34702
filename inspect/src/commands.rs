//! Running the commands.

use std::io::Write;
use std::path::PathBuf;

use serde::Serialize;

use crate::analysis::{Analysis, CryptOpts, Status};
use crate::cli::Cli;
use crate::error::{Error, Result};
use crate::infer::{decode_as, Val};
use crate::output::{dump_json, dump_table, history_json, history_table, FullMetaJson};
use crate::settings::{
    DumpSettings, GetSettings, MetaSettings, Output, ScanSettings, Settings, WatchSettings,
};
use crate::tabular;
use crate::util::{hex, key_lossy};

/// Validates the parsed command line ([`Settings::from_cli`]), then runs it.
pub fn run(cli: &Cli) -> Result<()> {
    match Settings::from_cli(cli)? {
        Settings::Dump(s) => dump(&s),
        Settings::Get(s) => get(&s),
        Settings::Meta(s) => meta(&s),
        Settings::Watch(s) => watch(&s),
        Settings::Scan(s) => scan(&s),
    }
}

/// Writes `text` to stdout; a closed pipe (e.g. `| head`) is not an error.
fn print(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(source) => Err(Error::Io {
            path: PathBuf::from("<stdout>"),
            source,
        }),
    }
}

/// Says on stderr which page size the store at `path` is read with and why (before reading it,
/// so an error that depends on it follows the note); returns it.
pub fn page_note(path: &std::path::Path, crypt: &CryptOpts) -> Result<mmkv_reader::PageSize> {
    let page = crypt.page_size(path)?;
    eprintln!("mmkv: {}: {page}", path.display());
    Ok(page)
}

fn print_json<T: Serialize>(value: &T) -> Result<()> {
    let mut s = serde_json::to_string_pretty(value).map_err(Error::Serialize)?;
    s.push('\n');
    print(&s)
}

fn dump(s: &DumpSettings) -> Result<()> {
    let page = page_note(&s.path, &s.crypt)?;
    let a = Analysis::open_at(&s.path, &s.crypt, s.now, page)?;
    if let Output::Delimited(d) = s.output {
        return print(&if s.history {
            let carved = if s.carve { a.carve() } else { Vec::new() };
            tabular::history_delimited(d, &a, &carved, &s.pins)
        } else {
            tabular::dump_delimited(d, &a, &s.pins)
        });
    }
    let json = s.output == Output::Json;
    if s.history {
        let carved = s.carve.then(|| a.carve_counted());
        let records = carved.as_ref().map_or(&[][..], |c| &c.records[..]);
        if json {
            let mut v = serde_json::to_value(history_json(&a, records, &s.pins))
                .map_err(Error::Serialize)?;
            if let Some(c) = &carved {
                v["carve"] = serde_json::json!({"stale": c.records.len(), "rejected": c.rejected});
            }
            print_json(&v)
        } else {
            let mut text = history_table(&a, records, &s.pins);
            if let Some(c) = &carved {
                text.push_str(&format!(
                    "carving: {} stale records kept, {} candidates rejected (implausible keys)\n",
                    c.records.len(),
                    c.rejected
                ));
            }
            print(&text)
        }
    } else if json {
        print_json(&dump_json(&a, &s.pins))
    } else {
        print(&dump_table(&a, &s.pins))
    }
}

/// `mmkv get --json`.
#[derive(Debug, Serialize)]
struct GetJson {
    key: String,
    key_hex: String,
    #[serde(rename = "type")]
    ty: &'static str,
    value: Val,
    expire_at: Option<u32>,
}

fn get(s: &GetSettings) -> Result<()> {
    let (key, now) = (&s.key, s.now);
    let page = page_note(&s.path, &s.crypt)?;
    let a = Analysis::open_at(&s.path, &s.crypt, now, page)?;
    let Some(rec) = a.live_value(key) else {
        if let Some(r) = a
            .records
            .iter()
            .rev()
            .find(|r| r.key == *key && r.status == Status::Expired)
        {
            return Err(Error::BadArgument(format!(
                "{}: key {:?} expired at {} (now {now}; pass --now to read it as of an earlier time)",
                s.path.display(),
                key_lossy(key),
                r.expire_at.unwrap_or(0)
            )));
        }
        return Err(Error::KeyNotFound {
            path: s.path.clone(),
            key: key_lossy(key),
        });
    };
    let value = decode_as(s.ty, &rec.payload).ok_or_else(|| Error::NoValueAs {
        path: s.path.clone(),
        key: key_lossy(key),
        ty: s.ty.to_string(),
    })?;
    if s.json {
        return print_json(&GetJson {
            key: key_lossy(key),
            key_hex: hex(key),
            ty: s.ty.name(),
            value,
            expire_at: rec.expire_at,
        });
    }
    let text = match &value {
        Val::Str(s) => s.clone(),
        Val::List(_) => serde_json::to_string(&value).map_err(Error::Serialize)?,
        other => other.to_string(),
    };
    print(&format!("{text}\n"))
}

fn meta(s: &MetaSettings) -> Result<()> {
    let bytes = std::fs::read(&s.meta).map_err(|source| Error::Io {
        path: s.meta.clone(),
        source,
    })?;
    // As the official library reads it: a short file zero-filled.
    let m = mmkv_reader::locate::parse_meta(&bytes);
    let page = s
        .page
        .resolve(Some(bytes.len() as u64))
        .map_err(|e| Error::BadArgument(format!("--page-size: {e}")))?;
    eprintln!("mmkv: {}: {page}", s.meta.display());
    let mut j = FullMetaJson::new(&m, &page);
    j.meta_file_len = bytes.len();
    // The region the official loader would choose, when the data file is there.
    if let Ok(data) = std::fs::read(&s.data) {
        let rules = mmkv_reader::locate::Rules::official().with_page_size(page.size);
        if let Ok(found) = mmkv_reader::locate::locate(&m, data.as_slice(), rules) {
            j.region = Some(found.location.source.as_str());
            j.region_problem = found.location.problem.map(|p| p.to_string());
        }
    }
    if s.json {
        print_json(&j)
    } else {
        print(&j.text())
    }
}

fn watch(s: &WatchSettings) -> Result<()> {
    crate::watch::watch(&s.path, &s.crypt, s.interval, s.duration)
}

fn scan(s: &ScanSettings) -> Result<()> {
    let scan = crate::scan::scan(&s.dir, &s.crypt, s.now)?;
    eprintln!(
        "mmkv: {}: {}",
        s.dir.display(),
        crate::scan::page_note(&scan)
    );
    match s.output {
        Output::Delimited(d) => {
            for w in &scan.walk_errors {
                eprintln!("mmkv: cannot list {}: {}", w.path, w.error);
            }
            print(&tabular::scan_delimited(d, &scan))
        }
        Output::Json => print_json(&scan),
        Output::Table => print(&crate::scan::scan_table(&scan)),
    }
}
