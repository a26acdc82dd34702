//! Command-line structure (clap derive). What the arguments mean once validated is
//! [`crate::settings`].

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::infer::Decoding;
use crate::tabular::Format;

/// `mmkv`: read-only inspection of Tencent MMKV stores (data file + `.crc` meta file).
///
/// Never writes to a store. Exit status 0 on success, 1 on any error (message on stderr).
#[derive(Debug, Parser)]
#[command(name = "mmkv", version, about, long_about = None)]
pub struct Cli {
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the live entries (or, with --history, every record) of a store.
    Dump(DumpArgs),
    /// Print one value decoded as a type.
    Get(GetArgs),
    /// Print the meta file's fields.
    Meta(MetaArgs),
    /// Follow a store that a writer is changing: one JSON line per observed change.
    Watch(WatchArgs),
    /// Find every store below a directory and summarise each.
    Scan(ScanArgs),
}

/// Decryption options shared by the commands that read values.
#[derive(Debug, Clone, Default, Args)]
pub struct CryptArgs {
    /// Crypt key as text (its UTF-8 bytes).
    #[arg(long, value_name = "STR", conflicts_with = "crypt_key_hex")]
    pub crypt_key: Option<String>,
    /// Crypt key as hex (for keys with bytes >= 0x80, e.g. Java byte arrays).
    #[arg(long, value_name = "HEX")]
    pub crypt_key_hex: Option<String>,
    /// The store uses AES-256 (MMKV v2.3.0+); the key is zero-padded/truncated to 32 bytes.
    #[arg(long)]
    pub aes256: bool,
    /// Read what the official library reads with `OnErrorRecover` where no region passes the
    /// CRC check (default: the official default, `OnErrorDiscard`); a missing or short `.crc`
    /// then reads the data file by its header size, unverified. Output says so.
    #[arg(long)]
    pub recover: bool,
}

/// The page size of the machine whose official loader is followed (`--page-size`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PageArg {
    /// `auto`: the writer's page inferred from the `.crc` length, else this machine's.
    #[default]
    Auto,
    /// `host`: this machine's page.
    Host,
    /// `N`: this page size in bytes.
    Size(u64),
}

impl std::str::FromStr for PageArg {
    type Err = String;

    fn from_str(s: &str) -> Result<PageArg, String> {
        match s {
            "auto" => Ok(PageArg::Auto),
            "host" => Ok(PageArg::Host),
            n => n
                .parse()
                .map(PageArg::Size)
                .map_err(|_| format!("expected a size in bytes, `auto` or `host`, not {n:?}")),
        }
    }
}

/// The page-size option of every command that opens a store.
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct PageArgs {
    /// Read as the official library does on a machine with this page size: N bytes (a power of
    /// two from 4096 to 65536), `host` (this machine's), or `auto` (the writer's, inferred from
    /// the `.crc` length, which is one page of the machine that wrote it; else this machine's).
    /// A note on stderr says which size was used and why.
    #[arg(long, value_name = "N|auto|host", default_value = "auto")]
    pub page_size: PageArg,
}

/// `mmkv dump`.
#[derive(Debug, Args)]
pub struct DumpArgs {
    /// Decryption options.
    #[command(flatten)]
    pub crypt: CryptArgs,
    /// Page size.
    #[command(flatten)]
    pub page: PageArgs,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Output format: table (default), json (as --json), tsv or csv (a header row, then one row
    /// per entry or record).
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    pub format: Option<Format>,
    /// Every record in file order with its status (live, superseded, removed, expired).
    #[arg(long)]
    pub history: bool,
    /// With --history: also report records carved from the bytes after the data region (stale).
    #[arg(long, requires = "history")]
    pub carve: bool,
    /// Pin a key's type for display: KEY=TYPE (repeatable). Types: bool i32 u32 i64 u64 f32 f64
    /// string bytes strings vec_i32 vec_u32 vec_i64 vec_u64 vec_f32 vec_f64 vec_bool raw.
    #[arg(long = "type", value_name = "KEY=TYPE")]
    pub types: Vec<String>,
    /// Evaluate key expiration at this time (epoch seconds) instead of now.
    #[arg(long, value_name = "EPOCH_SECS")]
    pub now: Option<u32>,
    /// The data file (its meta is PATH.crc).
    pub path: PathBuf,
}

/// `mmkv get`.
#[derive(Debug, Args)]
pub struct GetArgs {
    /// The data file (its meta is PATH.crc).
    pub path: PathBuf,
    /// The key (text; with --key-hex, hex).
    pub key: String,
    /// The type to decode the value as (official getter semantics).
    #[arg(long = "type", value_name = "TYPE")]
    pub ty: Decoding,
    /// KEY is given as hex.
    #[arg(long)]
    pub key_hex: bool,
    /// Print {"key", "key_hex", "type", "value", "expire_at"} as JSON.
    #[arg(long)]
    pub json: bool,
    /// Evaluate key expiration at this time (epoch seconds) instead of now.
    #[arg(long, value_name = "EPOCH_SECS")]
    pub now: Option<u32>,
    /// Decryption options.
    #[command(flatten)]
    pub crypt: CryptArgs,
    /// Page size.
    #[command(flatten)]
    pub page: PageArgs,
}

/// `mmkv meta`.
#[derive(Debug, Args)]
pub struct MetaArgs {
    /// The data file (its meta is PATH.crc), or the `.crc` file itself.
    pub path: PathBuf,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Page size.
    #[command(flatten)]
    pub page: PageArgs,
}

/// `mmkv watch`.
#[derive(Debug, Args)]
pub struct WatchArgs {
    /// Decryption options.
    #[command(flatten)]
    pub crypt: CryptArgs,
    /// Page size.
    #[command(flatten)]
    pub page: PageArgs,
    /// Polling interval in milliseconds.
    #[arg(long, default_value_t = 200, value_name = "N")]
    pub interval_ms: u64,
    /// Stop after this many milliseconds (default: until Ctrl-C or SIGTERM).
    #[arg(long, value_name = "N")]
    pub duration_ms: Option<u64>,
    /// The data file (its meta is PATH.crc).
    pub path: PathBuf,
}

/// `mmkv scan`.
#[derive(Debug, Args)]
pub struct ScanArgs {
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Output format: table (default), json (as --json), tsv or csv (a header row, then one row
    /// per store).
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    pub format: Option<Format>,
    /// Also try this key on stores that look encrypted (the row then reports their counts).
    #[command(flatten)]
    pub crypt: CryptArgs,
    /// Page size.
    #[command(flatten)]
    pub page: PageArgs,
    /// The directory to walk (symbolic links are not followed).
    pub dir: PathBuf,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }
}
