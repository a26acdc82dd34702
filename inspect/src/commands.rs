//! Running the commands.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::analysis::{Analysis, Status};
use crate::cli::{parse_pins, Cli, Command, DumpArgs, GetArgs, MetaArgs, ScanArgs, WatchArgs};
use crate::error::{Error, Result};
use crate::infer::{decode_as, Val};
use crate::output::{dump_json, dump_table, history_json, history_table, FullMetaJson, Pins};
use crate::tabular::{self, Delimited, Format};
use crate::util::{hex, key_lossy, now_secs, parse_hex};

/// Runs the parsed command line.
pub fn run(cli: &Cli) -> Result<()> {
    match &cli.command {
        Command::Dump(a) => dump(a),
        Command::Get(a) => get(a),
        Command::Meta(a) => meta(a),
        Command::Watch(a) => watch(a),
        Command::Scan(a) => scan(a),
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

fn print_json<T: Serialize>(value: &T) -> Result<()> {
    let mut s =
        serde_json::to_string_pretty(value).map_err(|e| Error::BadArgument(e.to_string()))?;
    s.push('\n');
    print(&s)
}

fn dump(args: &DumpArgs) -> Result<()> {
    let crypt = args.crypt.to_opts()?;
    let pins: Pins = parse_pins(&args.types)?.into_iter().collect();
    let now = args.now.unwrap_or_else(now_secs);
    let a = Analysis::open(&args.path, &crypt, now)?;
    let json = args.json || args.format == Some(Format::Json);
    if let Some(d) = args.format.and_then(Delimited::of) {
        return print(&if args.history {
            let carved = if args.carve { a.carve() } else { Vec::new() };
            tabular::history_delimited(d, &a, &carved, &pins)
        } else {
            tabular::dump_delimited(d, &a, &pins)
        });
    }
    if args.history {
        let carved = args.carve.then(|| a.carve_counted());
        let records = carved.as_ref().map_or(&[][..], |c| &c.records[..]);
        if json {
            let mut v = serde_json::to_value(history_json(&a, records, &pins))
                .map_err(|e| Error::BadArgument(e.to_string()))?;
            if let Some(c) = &carved {
                v["carve"] = serde_json::json!({"stale": c.records.len(), "rejected": c.rejected});
            }
            print_json(&v)
        } else {
            let mut text = history_table(&a, records, &pins);
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
        print_json(&dump_json(&a, &pins))
    } else {
        print(&dump_table(&a, &pins))
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

fn get(args: &GetArgs) -> Result<()> {
    let crypt = args.crypt.to_opts()?;
    let key = if args.key_hex {
        parse_hex(&args.key).map_err(|e| Error::BadArgument(format!("KEY: {e}")))?
    } else {
        args.key.as_bytes().to_vec()
    };
    let now = args.now.unwrap_or_else(now_secs);
    let a = Analysis::open(&args.path, &crypt, now)?;
    let Some(rec) = a.live_value(&key) else {
        if let Some(r) = a
            .records
            .iter()
            .rev()
            .find(|r| r.key == key && r.status == Status::Expired)
        {
            return Err(Error::BadArgument(format!(
                "{}: key {:?} expired at {} (now {now}; pass --now to read it as of an earlier time)",
                args.path.display(),
                key_lossy(&key),
                r.expire_at.unwrap_or(0)
            )));
        }
        return Err(Error::KeyNotFound {
            path: args.path.clone(),
            key: key_lossy(&key),
        });
    };
    let value = decode_as(args.ty, &rec.payload).ok_or_else(|| Error::NoValueAs {
        path: args.path.clone(),
        key: key_lossy(&key),
        ty: args.ty.to_string(),
    })?;
    if args.json {
        return print_json(&GetJson {
            key: key_lossy(&key),
            key_hex: hex(&key),
            ty: args.ty.name(),
            value,
            expire_at: rec.expire_at,
        });
    }
    let text = match &value {
        Val::Str(s) => s.clone(),
        Val::List(_) => {
            serde_json::to_string(&value).map_err(|e| Error::BadArgument(e.to_string()))?
        }
        other => other.to_string(),
    };
    print(&format!("{text}\n"))
}

/// The meta file for a path: `PATH.crc`, or PATH itself when it already ends with `.crc`.
pub fn meta_path(path: &Path) -> PathBuf {
    if path.extension().is_some_and(|e| e == "crc") {
        path.to_path_buf()
    } else {
        let mut p = path.as_os_str().to_owned();
        p.push(".crc");
        PathBuf::from(p)
    }
}

fn meta(args: &MetaArgs) -> Result<()> {
    let p = meta_path(&args.path);
    let bytes = std::fs::read(&p).map_err(|source| Error::Io {
        path: p.clone(),
        source,
    })?;
    // As the official library reads it: a short file zero-filled.
    let m = mmkv_reader::locate::parse_meta(&bytes);
    let mut j = FullMetaJson::new(&m);
    j.meta_file_len = bytes.len();
    // The region the official loader would choose, when the data file is there.
    let data_path = p.with_extension("");
    if let Ok(data) = std::fs::read(&data_path) {
        if let Ok(found) =
            mmkv_reader::locate::locate(&m, data.as_slice(), mmkv_reader::locate::Rules::official())
        {
            j.region = Some(found.location.source.as_str());
            j.region_problem = found.location.problem.map(|p| p.to_string());
        }
    }
    if args.json {
        print_json(&j)
    } else {
        print(&j.text())
    }
}

fn watch(args: &WatchArgs) -> Result<()> {
    let crypt = args.crypt.to_opts()?;
    if args.interval_ms == 0 {
        return Err(Error::BadArgument(
            "--interval-ms must be at least 1".into(),
        ));
    }
    crate::watch::watch(
        &args.path,
        &crypt,
        Duration::from_millis(args.interval_ms),
        args.duration_ms.map(Duration::from_millis),
    )
}

fn scan(args: &ScanArgs) -> Result<()> {
    let crypt = args.crypt.to_opts()?;
    let s = crate::scan::scan(&args.dir, &crypt, now_secs())?;
    if let Some(d) = args.format.and_then(Delimited::of) {
        for w in &s.walk_errors {
            eprintln!("mmkv: cannot list {}: {}", w.path, w.error);
        }
        return print(&tabular::scan_delimited(d, &s));
    }
    if args.json || args.format == Some(Format::Json) {
        print_json(&s)
    } else {
        print(&crate::scan::scan_table(&s))
    }
}
