//! The `mmkv` binary: parses the command line, runs the command, prints errors on stderr and exits
//! with status 1 on failure.

use clap::Parser;
use mmkv_inspect::cli::Cli;

fn main() {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 1 } else { 0 };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    if let Err(e) = mmkv_inspect::commands::run(&cli) {
        eprintln!("mmkv: {e}");
        std::process::exit(1);
    }
}
