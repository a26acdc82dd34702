//! `robust-writer`: the writer process of the robustness tests (`conformance/tests/shrink.rs`,
//! `conformance/tests/stress.rs`). It opens store [`workload::STORE_ID`] in `--dir` with the
//! official library (`--tag`, MULTI_PROCESS mode, no encryption), prints `ready`, waits for a
//! line on stdin, runs the workload, and prints one line
//! `final <count> <digest> <ops> <max file size> <shrinks> <seq start> <seq end> <ms>`
//! where count and digest are read back through the official getters.
//!
//! ```text
//! robust-writer stress --tag v2.4.2 --dir DIR [--ops 100000] [--seed 1] [--keys 64]
//! robust-writer shrink --tag v2.4.2 --dir DIR [--cycles 20] [--keys 64]
//! ```

mod workload;

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use mmkv_sys::{Mode, Official};
use workload::{key_name, make_value, shrink_ops, state_digest, stress_ops, Op, STORE_ID};

struct Args {
    workload: String,
    tag: String,
    dir: PathBuf,
    ops: usize,
    seed: u64,
    keys: usize,
    cycles: usize,
}

fn parse_args() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let workload = it.next().ok_or("missing workload (stress | shrink)")?;
    let mut a = Args {
        workload,
        tag: String::new(),
        dir: PathBuf::new(),
        ops: 100_000,
        seed: 1,
        keys: 64,
        cycles: 20,
    };
    while let Some(flag) = it.next() {
        let v = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let num = || v.parse::<u64>().map_err(|e| format!("{flag} {v}: {e}"));
        match flag.as_str() {
            "--tag" => a.tag = v.clone(),
            "--dir" => a.dir = PathBuf::from(&v),
            "--ops" => a.ops = num()? as usize,
            "--seed" => a.seed = num()?,
            "--keys" => a.keys = num()? as usize,
            "--cycles" => a.cycles = num()? as usize,
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    if a.tag.is_empty() || a.dir.as_os_str().is_empty() || a.keys == 0 {
        return Err("--tag, --dir and a non-zero --keys are required".into());
    }
    Ok(a)
}

fn sequence(meta: &Path) -> u32 {
    std::fs::read(meta)
        .ok()
        .and_then(|b| {
            b.get(8..12)
                .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
        })
        .unwrap_or(0)
}

fn run(a: &Args) -> Result<String, String> {
    let ops = match a.workload.as_str() {
        "stress" => stress_ops(a.seed, a.ops, a.keys),
        "shrink" => shrink_ops(a.cycles, a.keys),
        w => return Err(format!("unknown workload {w}")),
    };
    let lib = Official::load(&a.tag).map_err(|e| e.to_string())?;
    let store = lib
        .open(&a.dir, STORE_ID, Mode::Multi, None, false)
        .map_err(|e| e.to_string())?;
    let data = a.dir.join(STORE_ID);
    let meta = mmkv_reader::meta_path(&a.dir.join(STORE_ID));
    let seq_start = sequence(&meta);
    println!("ready");
    std::io::stdout().flush().map_err(|e| e.to_string())?;
    let mut go = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut go)
        .map_err(|e| e.to_string())?;

    let started = Instant::now();
    let size = || std::fs::metadata(&data).map(|m| m.len()).unwrap_or(0);
    let (mut max_size, mut last_size, mut shrinks) = (size(), size(), 0u64);
    let keys: Vec<Vec<u8>> = (0..a.keys).map(|k| key_name(k).into_bytes()).collect();
    for (i, op) in ops.iter().enumerate() {
        let r = match *op {
            Op::Set { key, len } => store
                .set_bytes(&keys[key], &make_value(key, i as u64, len), None)
                .and_then(|ok| {
                    if ok {
                        Ok(())
                    } else {
                        Err(mmkv_sys::Error::InvalidArgument(format!(
                            "set refused at op {i}"
                        )))
                    }
                }),
            Op::Remove { key } => store.remove(&keys[key]).map(drop),
            Op::Trim => store.trim(),
            Op::ClearAll => store.clear_all(),
        };
        r.map_err(|e| format!("op {i} {op:?}: {e}"))?;
        let s = size();
        max_size = max_size.max(s);
        if s < last_size {
            shrinks += 1;
        }
        last_size = s;
    }
    store.sync().map_err(|e| e.to_string())?;
    let mut entries = Vec::new();
    for (k, key) in keys.iter().enumerate() {
        if let Some(v) = store.get_bytes(key).map_err(|e| e.to_string())? {
            entries.push((k, v));
        }
    }
    let count = store.count().map_err(|e| e.to_string())?;
    let digest = state_digest(entries.iter().map(|(k, v)| (*k, &v[..])));
    let ms = started.elapsed().as_millis();
    store.close().map_err(|e| e.to_string())?;
    Ok(format!(
        "final {count} {digest:016x} {} {max_size} {shrinks} {seq_start} {} {ms}",
        ops.len(),
        sequence(&meta)
    ))
}

fn main() {
    let result = parse_args().and_then(|a| run(&a));
    match result {
        Ok(line) => println!("{line}"),
        Err(e) => {
            eprintln!("robust-writer: {e}");
            std::process::exit(1);
        }
    }
}
