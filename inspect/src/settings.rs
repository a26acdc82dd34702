//! The command line validated once: every argument that can be malformed (crypt key, `--type`
//! pins, key hex, intervals, page size) is checked here and turned into the typed settings the commands
//! run with, so a command never parses an argument itself and a bad argument fails before any
//! file is opened.

use std::path::PathBuf;
use std::time::Duration;

use crate::analysis::CryptOpts;
use crate::cli::{
    Cli, Command, CryptArgs, DumpArgs, GetArgs, MetaArgs, PageArg, PageArgs, ScanArgs, WatchArgs,
};
use crate::error::{Error, Result};
use crate::infer::Decoding;
use crate::output::Pins;
use crate::tabular::{Delimited, Format};
use crate::util::{now_secs, parse_hex};
use mmkv_reader::PageSizeChoice;

/// What a command prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// The readable table (the default).
    Table,
    /// One JSON object (`--json` or `--format json`).
    Json,
    /// A header row, then one delimited row per entry, record or store.
    Delimited(Delimited),
}

impl Output {
    /// From `--json` and `--format` (clap keeps the two apart).
    fn of(json: bool, format: Option<Format>) -> Output {
        match format {
            _ if json => Output::Json,
            None | Some(Format::Table) => Output::Table,
            Some(Format::Json) => Output::Json,
            Some(f) => Delimited::of(f).map_or(Output::Table, Output::Delimited),
        }
    }
}

/// One validated command.
#[derive(Debug)]
pub enum Settings {
    /// `mmkv dump`.
    Dump(DumpSettings),
    /// `mmkv get`.
    Get(GetSettings),
    /// `mmkv meta`.
    Meta(MetaSettings),
    /// `mmkv watch`.
    Watch(WatchSettings),
    /// `mmkv scan`.
    Scan(ScanSettings),
}

/// `mmkv dump`, validated.
#[derive(Debug)]
pub struct DumpSettings {
    /// The data file.
    pub path: PathBuf,
    /// Decryption and recovery.
    pub crypt: CryptOpts,
    /// What to print.
    pub output: Output,
    /// Every record with its status instead of the live entries.
    pub history: bool,
    /// With `history`: also the records carved after the data region.
    pub carve: bool,
    /// Keys whose type is pinned for display.
    pub pins: Pins,
    /// Key expiration is evaluated at this time (epoch seconds).
    pub now: u32,
}

/// `mmkv get`, validated.
#[derive(Debug)]
pub struct GetSettings {
    /// The data file.
    pub path: PathBuf,
    /// The key's bytes.
    pub key: Vec<u8>,
    /// The type to decode the value as.
    pub ty: Decoding,
    /// Print JSON instead of the bare value.
    pub json: bool,
    /// Key expiration is evaluated at this time (epoch seconds).
    pub now: u32,
    /// Decryption and recovery.
    pub crypt: CryptOpts,
}

/// `mmkv meta`, validated.
#[derive(Debug)]
pub struct MetaSettings {
    /// The meta file (`PATH.crc`, or PATH itself when it names the `.crc` file).
    pub meta: PathBuf,
    /// The data file beside it.
    pub data: PathBuf,
    /// Print JSON.
    pub json: bool,
    /// The page size of the loader whose region choice is shown.
    pub page: PageSizeChoice,
}

/// `mmkv watch`, validated.
#[derive(Debug)]
pub struct WatchSettings {
    /// The data file.
    pub path: PathBuf,
    /// Decryption and recovery.
    pub crypt: CryptOpts,
    /// Polling interval (at least 1 ms).
    pub interval: Duration,
    /// Stop after this long (default: until interrupted).
    pub duration: Option<Duration>,
}

/// `mmkv scan`, validated.
#[derive(Debug)]
pub struct ScanSettings {
    /// The directory to walk.
    pub dir: PathBuf,
    /// What to print.
    pub output: Output,
    /// A key to try on stores that look encrypted.
    pub crypt: CryptOpts,
    /// Key expiration is evaluated at this time (epoch seconds).
    pub now: u32,
}

impl Settings {
    /// Validates the parsed command line.
    pub fn from_cli(cli: &Cli) -> Result<Settings> {
        Ok(match &cli.command {
            Command::Dump(a) => Settings::Dump(dump(a)?),
            Command::Get(a) => Settings::Get(get(a)?),
            Command::Meta(a) => Settings::Meta(meta(a)?),
            Command::Watch(a) => Settings::Watch(watch(a)?),
            Command::Scan(a) => Settings::Scan(scan(a)?),
        })
    }
}

fn dump(a: &DumpArgs) -> Result<DumpSettings> {
    Ok(DumpSettings {
        path: a.path.clone(),
        crypt: crypt_opts(&a.crypt, &a.page)?,
        output: Output::of(a.json, a.format),
        history: a.history,
        carve: a.carve,
        pins: parse_pins(&a.types)?.into_iter().collect(),
        now: a.now.unwrap_or_else(now_secs),
    })
}

fn get(a: &GetArgs) -> Result<GetSettings> {
    let key = if a.key_hex {
        parse_hex(&a.key).map_err(|e| Error::BadArgument(format!("KEY: {e}")))?
    } else {
        a.key.as_bytes().to_vec()
    };
    Ok(GetSettings {
        path: a.path.clone(),
        key,
        ty: a.ty,
        json: a.json,
        now: a.now.unwrap_or_else(now_secs),
        crypt: crypt_opts(&a.crypt, &a.page)?,
    })
}

fn meta(a: &MetaArgs) -> Result<MetaSettings> {
    let (meta, data) = if a.path.extension().is_some_and(|e| e == "crc") {
        (a.path.clone(), a.path.with_extension(""))
    } else {
        (mmkv_reader::meta_path(&a.path), a.path.clone())
    };
    Ok(MetaSettings {
        meta,
        data,
        json: a.json,
        page: page_choice(&a.page)?,
    })
}

fn watch(a: &WatchArgs) -> Result<WatchSettings> {
    if a.interval_ms == 0 {
        return Err(Error::BadArgument(
            "--interval-ms must be at least 1".into(),
        ));
    }
    Ok(WatchSettings {
        path: a.path.clone(),
        crypt: crypt_opts(&a.crypt, &a.page)?,
        interval: Duration::from_millis(a.interval_ms),
        duration: a.duration_ms.map(Duration::from_millis),
    })
}

fn scan(a: &ScanArgs) -> Result<ScanSettings> {
    Ok(ScanSettings {
        dir: a.dir.clone(),
        output: Output::of(a.json, a.format),
        crypt: crypt_opts(&a.crypt, &a.page)?,
        now: now_secs(),
    })
}

/// `--page-size`: `auto` infers the writer's page, `host` is this machine's, a size is checked
/// now (a power of two from 4 to 64 KiB).
pub fn page_choice(a: &PageArgs) -> Result<PageSizeChoice> {
    Ok(match a.page_size {
        PageArg::Auto => PageSizeChoice::Inferred,
        PageArg::Host => PageSizeChoice::Host,
        PageArg::Size(n) => PageSizeChoice::Given(
            mmkv_reader::page::validate_page_size(n)
                .map_err(|e| Error::BadArgument(format!("--page-size: {e}")))?,
        ),
    })
}

/// The key bytes, AES flag, strategy and page size of the reading options.
pub fn crypt_opts(a: &CryptArgs, page: &PageArgs) -> Result<CryptOpts> {
    let key = match (&a.crypt_key, &a.crypt_key_hex) {
        (Some(s), _) => Some(s.as_bytes().to_vec()),
        (None, Some(h)) => {
            Some(parse_hex(h).map_err(|e| Error::BadArgument(format!("--crypt-key-hex: {e}")))?)
        }
        (None, None) => None,
    };
    if key.as_ref().is_some_and(|k| k.is_empty()) {
        return Err(Error::BadArgument(
            "the crypt key is empty (MMKV treats an empty key as no encryption: omit it)".into(),
        ));
    }
    if a.aes256 && key.is_none() {
        return Err(Error::BadArgument(
            "--aes256 needs --crypt-key or --crypt-key-hex".into(),
        ));
    }
    Ok(CryptOpts {
        key,
        aes256: a.aes256,
        recover: a.recover,
        page: page_choice(page)?,
    })
}

/// Parses `--type KEY=TYPE` pins (the key is text; `hex:ABCD=TYPE` gives it as hex).
pub fn parse_pins(pins: &[String]) -> Result<Vec<(Vec<u8>, Decoding)>> {
    pins.iter()
        .map(|p| {
            let (k, t) = p
                .rsplit_once('=')
                .ok_or_else(|| Error::BadArgument(format!("--type {p:?}: expected KEY=TYPE")))?;
            let ty: Decoding = t
                .parse()
                .map_err(|e| Error::BadArgument(format!("--type {p:?}: {e}")))?;
            let key = match k.strip_prefix("hex:") {
                Some(h) => {
                    parse_hex(h).map_err(|e| Error::BadArgument(format!("--type {p:?}: {e}")))?
                }
                None => k.as_bytes().to_vec(),
            };
            Ok((key, ty))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::infer::ValueType;
    use clap::Parser;

    fn settings(args: &[&str]) -> Result<Settings> {
        let cli = Cli::try_parse_from(std::iter::once("mmkv").chain(args.iter().copied()))
            .expect("clap accepts these arguments");
        Settings::from_cli(&cli)
    }

    #[test]
    fn pins() {
        let p = parse_pins(&["a=b=i32".into(), "hex:6b31=string".into()]).unwrap();
        assert_eq!(p[0], (b"a=b".to_vec(), Decoding::Getter(ValueType::I32)));
        assert_eq!(p[1], (b"k1".to_vec(), Decoding::Getter(ValueType::String)));
        assert!(parse_pins(&["nokey".into()]).is_err());
        assert!(parse_pins(&["k=nosuchtype".into()]).is_err());
    }

    #[test]
    fn crypt_args() {
        let a = CryptArgs {
            crypt_key: None,
            crypt_key_hex: Some("ff00".into()),
            aes256: true,
            recover: false,
        };
        assert_eq!(
            crypt_opts(&a, &PageArgs::default()).unwrap(),
            CryptOpts {
                key: Some(vec![0xff, 0]),
                aes256: true,
                recover: false,
                page: PageSizeChoice::Inferred,
            }
        );
        let b = CryptArgs {
            aes256: true,
            ..CryptArgs::default()
        };
        assert!(crypt_opts(&b, &PageArgs::default()).is_err());
    }

    #[test]
    fn every_command_validates_before_running() {
        for bad in [
            &["dump", "--crypt-key-hex", "zz", "s"][..],
            &["dump", "--type", "k=nosuch", "s"],
            &["dump", "--aes256", "s"],
            &["get", "--key-hex", "s", "xyz", "--type", "i32"],
            &["watch", "--interval-ms", "0", "s"],
            &["scan", "--crypt-key", "", "d"],
            &["dump", "--page-size", "12288", "s"],
            &["get", "--page-size", "131072", "s", "k", "--type", "i32"],
            &["meta", "--page-size", "0", "s"],
            &["watch", "--page-size", "2048", "s"],
            &["scan", "--page-size", "4097", "d"],
        ] {
            let e = settings(bad).expect_err(&format!("{bad:?} is rejected"));
            assert!(matches!(e, Error::BadArgument(_)), "{bad:?}: {e:?}");
        }
    }

    #[test]
    fn page_sizes() {
        let page = |args: &[&str]| match settings(args).unwrap() {
            Settings::Dump(d) => d.crypt.page,
            Settings::Meta(m) => m.page,
            Settings::Scan(s) => s.crypt.page,
            other => panic!("{other:?}"),
        };
        assert_eq!(page(&["dump", "s"]), PageSizeChoice::Inferred);
        assert_eq!(
            page(&["dump", "--page-size", "auto", "s"]),
            PageSizeChoice::Inferred
        );
        assert_eq!(
            page(&["meta", "--page-size", "host", "s"]),
            PageSizeChoice::Host
        );
        assert_eq!(
            page(&["scan", "--page-size", "65536", "d"]),
            PageSizeChoice::Given(65536)
        );
        let cli = Cli::try_parse_from(["mmkv", "dump", "--page-size", "16k", "s"]);
        assert!(cli.is_err(), "a size is a number of bytes");
    }

    #[test]
    fn outputs_and_values() {
        let Settings::Dump(d) = settings(&["dump", "--format", "csv", "--now", "7", "s"]).unwrap()
        else {
            panic!("dump")
        };
        assert_eq!(d.output, Output::Delimited(Delimited::Csv));
        assert_eq!(d.now, 7);
        let Settings::Scan(s) = settings(&["scan", "--json", "d"]).unwrap() else {
            panic!("scan")
        };
        assert_eq!(s.output, Output::Json);
        let Settings::Get(g) =
            settings(&["get", "--key-hex", "s", "6b31", "--type", "i32"]).unwrap()
        else {
            panic!("get")
        };
        assert_eq!(g.key, b"k1");
        let Settings::Meta(m) = settings(&["meta", "dir/s.crc"]).unwrap() else {
            panic!("meta")
        };
        assert_eq!(
            (m.meta, m.data),
            (PathBuf::from("dir/s.crc"), PathBuf::from("dir/s"))
        );
        let Settings::Meta(m) = settings(&["meta", "dir/s"]).unwrap() else {
            panic!("meta")
        };
        assert_eq!(m.meta, PathBuf::from("dir/s.crc"));
    }
}
