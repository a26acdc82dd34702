//! Builds one shared library per selected official MMKV version (see README "Official
//! versions" and vendor/README.md), plus the cxx bridge.
//!
//! Environment:
//! - `MMKV_VERSIONS=v2.0.0,v1.3.9` restricts the build to these tags (`none`: build no version).
//! - `MMKV_CORE_<TAG>=/path/to/Core` uses that Core directory for the tag (any tag, `source: none` too).
//! - `MMKV_EXTRA_TAGS=v2.4.3,...` adds tags that are not in versions.yaml (each needs its override).
//! - `MMKV_VENDOR_DIR` replaces `<workspace>/vendor` as the download cache.
//! - `MMKV_SYS_JOBS` how many versions to build at once (default 2).

#[path = "build_support/fetch.rs"]
mod fetch;

use mmkv_versions as versions;
use std::collections::hash_map::DefaultHasher;
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use versions::{override_var, tag_number, VersionEntry};

struct Job {
    entry: VersionEntry,
    override_dir: Option<String>,
}

struct Built {
    tag: String,
    library: PathBuf,
    origin: String,
    core: PathBuf,
}

fn env(name: &str) -> Option<String> {
    println!("cargo:rerun-if-env-changed={name}");
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

fn fail(msg: &str) -> ! {
    eprintln!("\nerror: mmkv-sys: {msg}\n");
    std::process::exit(1);
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    let root = manifest.parent().expect("workspace root").to_path_buf();
    let yaml = root.join("versions.yaml");
    for p in [
        "build.rs",
        "build_support/fetch.rs",
        "shim",
        "src/bridge.rs",
    ] {
        println!("cargo:rerun-if-changed={}", manifest.join(p).display());
    }
    println!("cargo:rerun-if-changed={}", yaml.display());
    println!("cargo:rerun-if-env-changed=CXX");

    // The cxx bridge (loads the per-version libraries at run time).
    cxx_build::bridge("src/bridge.rs")
        .file("shim/bridge.cc")
        .include(manifest.join("shim"))
        .std("c++17")
        .flag_if_supported("-Wno-unused-parameter")
        .compile("mmkv_sys_bridge");
    println!("cargo:rustc-link-lib=dl");

    let file = versions::load_versions(&yaml).unwrap_or_else(|e| fail(&e.to_string()));
    let vendor = env("MMKV_VENDOR_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("vendor"));
    let jobs = select(&file).unwrap_or_else(|e| fail(&e));

    // Resolve sources first (sequentially: downloads and their errors in order).
    let mut resolved = Vec::new();
    for job in jobs {
        let core = fetch::resolve(&job.entry, job.override_dir.as_deref(), &vendor)
            .unwrap_or_else(|e| fail(&e));
        if job.override_dir.is_some() {
            println!("cargo:rerun-if-changed={}", core.path.display());
        }
        eprintln!(
            "mmkv-sys: {} from {}",
            job.entry.tag,
            core.origin.describe()
        );
        resolved.push((job.entry, core));
    }

    let compiler = cc::Build::new().cpp(true).get_compiler();
    let parallel: usize = env("MMKV_SYS_JOBS")
        .and_then(|j| j.parse().ok())
        .filter(|&j| j > 0)
        .unwrap_or(2);
    // Each cmake build runs one compiler at a time; `parallel` versions build at once.
    std::env::set_var("NUM_JOBS", "1");
    let queue = Mutex::new(resolved.iter().collect::<Vec<_>>());
    let results = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..parallel {
            s.spawn(|| loop {
                let Some((entry, core)) = queue.lock().expect("queue").pop() else {
                    break;
                };
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    build_version(
                        entry,
                        &core.path,
                        &out,
                        &manifest.join("shim"),
                        compiler.path(),
                    )
                }))
                .unwrap_or_else(|_| Err("the cmake build panicked (see the output above)".into()));
                let r = r.map(|library| Built {
                    tag: entry.tag.clone(),
                    library,
                    origin: core.origin.describe(),
                    core: core.path.clone(),
                });
                results
                    .lock()
                    .expect("results")
                    .push((entry.tag.clone(), r));
            });
        }
    });
    let mut built = Vec::new();
    for (tag, r) in results.into_inner().expect("results") {
        match r {
            Ok(b) => built.push(b),
            Err(e) => fail(&format!("building {tag} failed: {e}")),
        }
    }
    built.sort_by_key(|b| tag_number(&b.tag));
    write_built(&out, &built);
}

/// The versions to build: MMKV_VERSIONS if set, else every reachable entry plus every entry
/// with an override set, plus MMKV_EXTRA_TAGS.
fn select(file: &versions::VersionsFile) -> Result<Vec<Job>, String> {
    let extra: Vec<String> = env("MMKV_EXTRA_TAGS")
        .map(|v| {
            v.split(',')
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let mut entries: Vec<VersionEntry> = file.versions.clone();
    for tag in &extra {
        if tag_number(tag).is_none() {
            return Err(format!(
                "MMKV_EXTRA_TAGS: bad tag `{tag}` (expected vMAJOR.MINOR.PATCH[-suffix])"
            ));
        }
        if file.get(tag).is_none() {
            entries.push(VersionEntry {
                tag: tag.clone(),
                features: Vec::new(),
                source: versions::Source::None,
                build: None,
                note: Some("extra tag given through MMKV_EXTRA_TAGS".into()),
            });
        }
    }
    let overrides: Vec<Option<String>> =
        entries.iter().map(|e| env(&override_var(&e.tag))).collect();
    let chosen: Vec<usize> = match env("MMKV_VERSIONS") {
        Some(list) if list.trim() == "none" => Vec::new(),
        Some(list) => {
            let mut idx = Vec::new();
            for tag in list.split(',').map(str::trim).filter(|t| !t.is_empty()) {
                let i = entries.iter().position(|e| e.tag == tag).ok_or_else(|| {
                    format!("MMKV_VERSIONS names `{tag}`, which is neither in versions.yaml nor in MMKV_EXTRA_TAGS")
                })?;
                if !idx.contains(&i) {
                    idx.push(i);
                }
            }
            idx
        }
        None => (0..entries.len())
            .filter(|&i| entries[i].is_reachable() || overrides[i].is_some())
            .collect(),
    };
    let mut jobs = Vec::new();
    for i in chosen {
        let entry = entries[i].clone();
        let override_dir = overrides[i].clone();
        if override_dir.is_none() && !entry.is_reachable() {
            return Err(format!(
                "{} has no reachable source (`source: none`); set {} to its Core directory or leave it out of MMKV_VERSIONS",
                entry.tag,
                override_var(&entry.tag)
            ));
        }
        jobs.push(Job {
            entry,
            override_dir,
        });
    }
    Ok(jobs)
}

fn hash_of<T: Hash>(t: T) -> u64 {
    let mut h = DefaultHasher::new();
    t.hash(&mut h);
    h.finish()
}

/// cmake-builds Core (static, PIC, Release) and links shim + Core into libmmkv_shim_<tag>.so.
fn build_version(
    entry: &VersionEntry,
    core: &Path,
    out: &Path,
    shim: &Path,
    cxx: &Path,
) -> Result<PathBuf, String> {
    let tag = &entry.tag;
    let number = tag_number(tag).ok_or_else(|| format!("bad tag {tag}"))?;
    let flags = entry.cxxflags();
    let build_root = out
        .join("cores")
        .join(format!("{tag}-{:016x}", hash_of((core, flags))));
    let mut cfg = cmake::Config::new(core);
    cfg.out_dir(&build_root)
        .profile("Release")
        .build_target("core")
        .define("CMAKE_POSITION_INDEPENDENT_CODE", "ON")
        .define("CMAKE_CXX_COMPILER", cxx);
    if !flags.is_empty() {
        cfg.cxxflag(flags.join(" "));
    }
    let dst = cfg.build();
    let libcore = dst.join("build").join("libcore.a");
    if !libcore.is_file() {
        return Err(format!("cmake produced no {}", libcore.display()));
    }
    // Core links the system zlib when its CMakeLists finds one (else it embeds its own).
    let cache =
        std::fs::read_to_string(dst.join("build").join("CMakeCache.txt")).unwrap_or_default();
    let zlib = cache
        .lines()
        .find_map(|l| l.strip_prefix("zlib:FILEPATH="))
        .filter(|p| !p.ends_with("NOTFOUND"))
        .map(str::to_string);

    let so = out.join(format!("libmmkv_shim_{tag}.so"));
    let mut args: Vec<String> = vec![
        "-std=c++20".into(),
        "-O2".into(),
        "-fPIC".into(),
        "-shared".into(),
        "-Wall".into(),
        // Core is a CMake Release build (NDEBUG): inline header code must match it.
        "-DNDEBUG".into(),
        format!("-DMMKV_SHIM_VERSION={number}"),
    ];
    args.extend(flags.iter().cloned());
    args.extend([
        format!("-I{}", shim.display()),
        format!("-I{}", core.display()),
        shim.join("shim.cpp").display().to_string(),
        libcore.display().to_string(),
    ]);
    args.extend(zlib.iter().cloned());
    args.extend([
        "-lpthread".into(),
        format!("-Wl,--version-script={}", shim.join("shim.map").display()),
        "-Wl,-Bsymbolic".into(),
        "-Wl,--no-undefined".into(),
        "-o".into(),
        so.display().to_string(),
    ]);
    let meta = std::fs::metadata(&libcore).map_err(|e| e.to_string())?;
    let mut fp = String::new();
    for f in ["shim.cpp", "shim_api.h", "shim.map"] {
        let _ = write!(
            fp,
            "{:x};",
            hash_of(std::fs::read(shim.join(f)).unwrap_or_default())
        );
    }
    let _ = write!(
        fp,
        "{:?};{};{:?};{:?}",
        args,
        meta.len(),
        meta.modified().ok(),
        cxx
    );
    let fp_file = so.with_extension("so.fingerprint");
    if so.is_file() && std::fs::read_to_string(&fp_file).ok().as_deref() == Some(fp.as_str()) {
        return Ok(so);
    }
    let output = Command::new(cxx)
        .args(&args)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", cxx.display()))?;
    if !output.status.success() {
        return Err(format!(
            "compiling/linking the shim failed:\n{} {}\n{}",
            cxx.display(),
            args.join(" "),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    std::fs::write(&fp_file, fp).map_err(|e| e.to_string())?;
    Ok(so)
}

fn write_built(out: &Path, built: &[Built]) {
    let mut s =
        String::from("// Generated by mmkv-sys/build.rs: the versions this build produced.\n");
    s.push_str("pub(crate) static BUILT_TAGS: &[&str] = &[");
    for b in built {
        let _ = write!(s, "{:?}, ", b.tag);
    }
    s.push_str("];\npub(crate) static BUILT: &[crate::BuiltVersion] = &[\n");
    for b in built {
        let _ = writeln!(
            s,
            "    crate::BuiltVersion {{ tag: {:?}, library: {:?}, origin: {:?}, core: {:?} }},",
            b.tag,
            b.library.display().to_string(),
            b.origin,
            b.core.display().to_string()
        );
    }
    s.push_str("];\n");
    std::fs::write(out.join("built_versions.rs"), s)
        .unwrap_or_else(|e| fail(&format!("write built_versions.rs: {e}")));
}
