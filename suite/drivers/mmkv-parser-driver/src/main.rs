//! `mmkv-parser-driver CASE_DIR`: reads a suite case with the published crate `mmkv-parser`
//! 0.1.2 as its documentation and its own `mmkv` binary use it, and prints the suite protocol's
//! JSON (suite/README.md). Encrypted stores: the `.crc` header, the data cut to the header's
//! size, `cipher::decrypt` with the key bytes as given, then `parse_mmkv`. The crate has no
//! AES-256 and no expiry handling; what it returns is printed as it is, and its panics are
//! left to the grader (a crash). With `MMKV_SUITE_BATCH=1` and no argument it answers many
//! cases in one process (batch mode, suite/README.md).

use std::path::Path;

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// `(key, value)` pairs as the crate returns them.
type Pairs = Vec<(Vec<u8>, Vec<u8>)>;

fn read(dir: &Path) -> Result<Pairs, String> {
    let text = std::fs::read_to_string(dir.join("case.json")).map_err(|e| e.to_string())?;
    let case: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let open = &case["open"];
    let key = open["crypt_key_hex"].as_str().and_then(unhex);
    let mut data = std::fs::read(dir.join("store")).map_err(|e| e.to_string())?;
    if let Some(key) = key {
        if open["aes256"].as_bool() == Some(true) {
            return Err("mmkv-parser 0.1.2 has no AES-256".into());
        }
        let crc = std::fs::read(dir.join("store.crc")).map_err(|e| e.to_string())?;
        let header =
            mmkv_parser::cipher::MmkvCrcHeader::from_bytes(&crc).map_err(|e| e.to_string())?;
        data.resize(header.real_size + 4, 0);
        mmkv_parser::cipher::decrypt(&header, &key, &mut data).map_err(|e| e.to_string())?;
    }
    let map = mmkv_parser::parse_mmkv(&data).map_err(|e| e.to_string())?;
    Ok(map
        .into_iter()
        .map(|(k, v)| (k.to_vec(), v.to_vec()))
        .collect())
}

/// The protocol's object for one case.
fn answer(dir: &Path) -> serde_json::Value {
    match read(dir) {
        Ok(entries) => {
            let items: Vec<serde_json::Value> = entries
                .iter()
                .map(|(k, v)| serde_json::json!({"key": hex(k), "value": hex(v)}))
                .collect();
            serde_json::json!({ "entries": items })
        }
        Err(e) => serde_json::json!({ "error": e }),
    }
}

/// Batch mode: greets, then answers each case folder read from stdin with one line holding
/// the folder as `"case"`. A panic ends the process, as in single mode.
fn batch() {
    use std::io::{BufRead as _, Write as _};
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", serde_json::json!({"batch": 1}));
    let _ = out.flush();
    for line in std::io::stdin().lock().lines() {
        let Ok(dir) = line else { break };
        let mut v = answer(Path::new(&dir));
        v["case"] = serde_json::Value::String(dir);
        if writeln!(out, "{v}").and_then(|()| out.flush()).is_err() {
            break;
        }
    }
}

fn main() {
    let dir = std::env::args_os().nth(1);
    if dir.is_none() && std::env::var_os("MMKV_SUITE_BATCH").is_some_and(|v| v == "1") {
        return batch();
    }
    let Some(dir) = dir else {
        eprintln!("usage: mmkv-parser-driver CASE_DIR (or MMKV_SUITE_BATCH=1 mmkv-parser-driver)");
        std::process::exit(2);
    };
    println!("{}", answer(Path::new(&dir)));
}
