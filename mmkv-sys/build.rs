//! Builds one shared library per selected official MMKV version (see README "Official
//! versions" and vendor/README.md), plus the cxx bridge.
//!
//! Environment:
//! - `MMKV_VERSIONS=v2.0.0,v1.3.9` restricts the build to these tags (`none`: build no version).
//! - `MMKV_GIT_URL=/path/or/url` fetches every tag from there instead of its versions.yaml URL
//!   (a mirror, a local clone, or a git bundle file).
//! - `MMKV_CORE_<TAG>=/path/to/Core` uses that Core directory for the tag.
//! - `MMKV_EXTRA_TAGS=v2.4.3,...` adds tags that are not in versions.yaml (each needs its override).
//! - `MMKV_VENDOR_DIR` replaces `<workspace>/vendor` as the source cache.
//! - `MMKV_REQUIRE_ALL=1` makes a tag whose sources cannot be fetched a build error (default:
//!   it is left unbuilt, with its reason, see `mmkv_sys::unbuilt()`).
//! - `MMKV_SYS_JOBS` how many versions to build at once (default: the available cores).
//! - `MMKV_GIT_TIMEOUT` seconds a `git fetch` may take (default 300).
//! - `MMKV_SYS_CACHE` where built libraries are kept (default `<target dir>/mmkv-sys-cache`).
//! - `MMKV_SYS_COVERAGE=1` builds every Core with gcc `--coverage` (a build variant, see
//!   [`Variant`]); `mmkv_sys::BuiltVersion::coverage` then names the directory of its `.gcno`
//!   and `.gcda` files (`conformance coverage` reads them).
//!
//! Built libraries live outside OUT_DIR, in one directory per (tag, pinned `Core/` tree, flags,
//! compiler, cmake, the build recipe), so every cargo profile (debug for `cargo test`, release for
//! the report) links the same build: a version's Core is compiled once, and nothing is rebuilt
//! when nothing changed. The key names everything that changes the build, so one cache can serve
//! many checkouts and commits (`.ci/run` keeps it across runs); every use of an entry refreshes
//! the modification time of its `.lock` and of its library's `.fingerprint` (what `.ci/run`
//! prunes by).

#[path = "src/caps.rs"]
mod caps;
#[path = "build_support/fetch.rs"]
mod fetch;

use mmkv_versions as versions;
use std::collections::hash_map::DefaultHasher;
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;
use versions::{override_var, tag_number, FeatureSet, Tag, VersionEntry};

struct Job {
    /// The build's name: the tag, or an extra tag's full name (`v2.4.3-dev`).
    name: String,
    entry: VersionEntry,
    override_dir: Option<String>,
}

struct Built {
    tag: String,
    library: PathBuf,
    origin: String,
    core: PathBuf,
    features: FeatureSet,
    /// The Core build directory holding the `.gcno`/`.gcda` files (coverage builds only).
    coverage: Option<PathBuf>,
}

/// The build variants of the official libraries: what a build is asked for besides the
/// version, each part of the cache key (so libraries of two variants never mix) and none of
/// it in the key of a normal build (whose entries stay where they were). Not variants: the
/// page size (a run-time choice, `getpagesize` is wrapped at link, src/page_size.rs) and the
/// target (in the key through the compiler, which names it).
#[derive(Clone, Copy)]
struct Variant {
    /// `MMKV_SYS_COVERAGE=1`: Core compiled with `--coverage`, the shim linked with `-lgcov`
    /// (the shim itself is not instrumented).
    coverage: bool,
}

/// Core's file calls that every shim library wraps at link (`-Wl,--wrap=NAME`, shim/io_faults.cpp,
/// src/io_faults.rs): the ones Core calls on Linux in any tag. The order is the shim's
/// `MMKV_IO_*` numbering and `mmkv_sys::io_faults::IoCall`'s.
const IO_FAULT_WRAPS: &[&str] = &["ftruncate", "mmap", "msync", "write", "rename"];

/// The coverage variant's cmake definitions: `-O0` in place of Release's `-O3` (still
/// `NDEBUG`, as the shim's inline headers are compiled): at `-O3` a function whose every call
/// inside Core's unity translation units was inlined counts as never executed, and the
/// counters of folded code are lost.
const COVERAGE_DEFINES: &[(&str, &str)] = &[("CMAKE_CXX_FLAGS_RELEASE", "-O0 -DNDEBUG")];
/// The coverage variant's compiler flags (the shim is linked with `-lgcov` instead).
const COVERAGE_CXX_FLAGS: &[&str] = &["--coverage"];

impl Variant {
    fn from_env() -> Variant {
        Variant {
            coverage: env("MMKV_SYS_COVERAGE").is_some_and(|v| v.trim() != "0"),
        }
    }

    /// The cmake definitions the variant adds (none for a normal build).
    fn defines(self) -> &'static [(&'static str, &'static str)] {
        if self.coverage {
            COVERAGE_DEFINES
        } else {
            &[]
        }
    }

    /// The compiler flags the variant adds to Core's (none for a normal build).
    fn cxx_flags(self) -> &'static [&'static str] {
        if self.coverage {
            COVERAGE_CXX_FLAGS
        } else {
            &[]
        }
    }

    /// What the variant adds to a build key: its flags and definitions (nothing for a normal
    /// build, so normal keys are those of before variants existed).
    fn key(self) -> String {
        if self.coverage {
            format!(";coverage;{:?};{:?}", self.cxx_flags(), self.defines())
        } else {
            String::new()
        }
    }

    /// What it adds to the cache entry's directory name (`<tag><suffix>-<hash>`).
    fn dir_suffix(self) -> &'static str {
        if self.coverage {
            "-coverage"
        } else {
            ""
        }
    }
}

fn env(name: &str) -> Option<String> {
    println!("cargo:rerun-if-env-changed={name}");
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

fn fail(msg: &str) -> ! {
    eprintln!("\nerror: mmkv-sys: {msg}\n");
    std::process::exit(1);
}

/// Holds an exclusive `flock` on `vendor/.lock` while sources are resolved, so concurrent
/// builds sharing one vendor directory never fetch into it at the same time.
fn lock_vendor(vendor: &Path) -> Option<std::fs::File> {
    std::fs::create_dir_all(vendor).ok()?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(vendor.join(".lock"))
        .ok()?;
    rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive).ok()?;
    Some(file)
}

/// `MMKV_GIT_URL`; a relative path is taken relative to the workspace root.
fn git_url(root: &Path) -> Option<String> {
    let url = env("MMKV_GIT_URL")?;
    let as_path = Path::new(&url);
    if !url.contains("://") && as_path.is_relative() && root.join(as_path).exists() {
        return Some(root.join(as_path).display().to_string());
    }
    Some(url)
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    let root = manifest.parent().expect("workspace root").to_path_buf();
    let yaml = root.join("versions.yaml");
    for p in [
        "build.rs",
        "build_support/fetch.rs",
        "src/caps.rs",
        "shim",
        "src/bridge.rs",
    ] {
        println!("cargo:rerun-if-changed={}", manifest.join(p).display());
    }
    println!("cargo:rerun-if-changed={}", yaml.display());
    println!("cargo:rerun-if-env-changed=CXX");

    // The capability bits shared by the shim and the crate (one definition: src/caps.rs).
    let caps_h = out.join("shim_caps.h");
    std::fs::write(&caps_h, caps::c_header())
        .unwrap_or_else(|e| fail(&format!("write {}: {e}", caps_h.display())));

    // The cxx bridge (loads the per-version libraries at run time).
    cxx_build::bridge("src/bridge.rs")
        .file("shim/bridge.cc")
        .include(manifest.join("shim"))
        .include(&out)
        .std("c++17")
        .flag_if_supported("-Wno-unused-parameter")
        .compile("mmkv_sys_bridge");
    println!("cargo:rustc-link-lib=dl");

    let file = versions::load_versions(&yaml).unwrap_or_else(|e| fail(&e.to_string()));
    let vendor = env("MMKV_VENDOR_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("vendor"));
    let require_all = env("MMKV_REQUIRE_ALL").is_some_and(|v| v.trim() != "0");
    let jobs = select(&file).unwrap_or_else(|e| fail(&e));
    let fetcher = fetch::Fetcher {
        vendor: vendor.clone(),
        git_url: git_url(&root),
        timeout: Duration::from_secs(
            env("MMKV_GIT_TIMEOUT")
                .and_then(|t| t.parse().ok())
                .unwrap_or(300),
        ),
    };

    // Resolve sources first (sequentially, under the vendor lock: fetches and errors in order).
    let mut resolved = Vec::new();
    let mut unbuilt: Vec<(String, String)> = Vec::new();
    {
        let _lock = lock_vendor(&vendor);
        // One `git fetch` per URL for every tag that is not cached yet.
        let mut by_url: Vec<(String, Vec<&versions::GitSource>)> = Vec::new();
        for job in jobs.iter().filter(|j| j.override_dir.is_none()) {
            if let Some(git) = &job.entry.source.git {
                let url = fetcher.url_of(git).to_string();
                match by_url.iter_mut().find(|(u, _)| *u == url) {
                    Some((_, list)) => list.push(git),
                    None => by_url.push((url, vec![git])),
                }
            }
        }
        for (url, sources) in &by_url {
            fetcher.prefetch(url, sources);
        }
        for job in &jobs {
            match fetcher.resolve_named(&job.name, &job.entry, job.override_dir.as_deref()) {
                Ok(core) => {
                    if job.override_dir.is_some() {
                        println!("cargo:rerun-if-changed={}", core.path.display());
                    }
                    eprintln!("mmkv-sys: {} from {}", job.name, core.origin.describe());
                    resolved.push((job, core));
                }
                Err(fetch::FetchError::Unavailable(reason)) if !require_all => {
                    println!(
                        "cargo:warning=mmkv-sys: {} left unbuilt: {reason}",
                        job.name
                    );
                    unbuilt.push((job.name.clone(), reason));
                }
                Err(e) => fail(e.message()),
            }
        }
    }

    let compiler = core_build().get_compiler();
    let cache = env("MMKV_SYS_CACHE").map(PathBuf::from).unwrap_or_else(|| {
        // OUT_DIR = <target dir>[/<triple>]/<profile>/build/mmkv-sys-<hash>/out
        out.ancestors()
            .nth(4)
            .unwrap_or(&out)
            .join("mmkv-sys-cache")
    });
    let cxx = Compiler::identify(&compiler);
    let recipe = Recipe::detect();
    let variant = Variant::from_env();
    let parallel: usize = env("MMKV_SYS_JOBS")
        .and_then(|j| j.parse().ok())
        .filter(|&j| j > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
    // Each cmake build runs one compiler at a time; `parallel` versions build at once.
    std::env::set_var("NUM_JOBS", "1");
    let queue = Mutex::new(resolved.iter().collect::<Vec<_>>());
    let results = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..parallel {
            s.spawn(|| loop {
                let Some((job, core)) = queue.lock().expect("queue").pop() else {
                    break;
                };
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    build_version(
                        job,
                        &core.path,
                        &cache,
                        &manifest.join("shim"),
                        &cxx,
                        &recipe,
                        variant,
                    )
                }))
                .unwrap_or_else(|_| Err("the cmake build panicked (see the output above)".into()));
                let r = r.map(|(library, build_dir)| Built {
                    tag: job.name.clone(),
                    library,
                    origin: core.origin.describe(),
                    core: core.path.clone(),
                    features: job.entry.features,
                    coverage: variant.coverage.then_some(build_dir),
                });
                results.lock().expect("results").push((job.name.clone(), r));
            });
        }
    });
    let mut built = Vec::new();
    let mut failed = Vec::new();
    for (tag, r) in results.into_inner().expect("results") {
        match r {
            Ok(b) => built.push(b),
            Err(e) => failed.push((tag, e)),
        }
    }
    if !failed.is_empty() {
        failed.sort_by_key(|(t, _)| (tag_number(t), t.clone()));
        let names: Vec<&str> = failed.iter().map(|(t, _)| t.as_str()).collect();
        let details: Vec<String> = failed
            .iter()
            .map(|(t, e)| format!("building {t} failed: {e}"))
            .collect();
        fail(&format!(
            "{} version(s) failed to build: {}\n\n{}",
            failed.len(),
            names.join(", "),
            details.join("\n\n")
        ));
    }
    built.sort_by_key(|b| (tag_number(&b.tag), b.tag.clone()));
    unbuilt.sort_by_key(|(t, _)| (tag_number(t), t.clone()));
    write_built(&out, &built, &unbuilt);
}

/// The versions to build: MMKV_VERSIONS if set, else every entry of versions.yaml, plus
/// MMKV_EXTRA_TAGS.
fn select(file: &versions::VersionsFile) -> Result<Vec<Job>, String> {
    let extra: Vec<String> = env("MMKV_EXTRA_TAGS")
        .map(|v| {
            v.split(',')
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let mut candidates: Vec<(String, VersionEntry)> = file
        .versions
        .iter()
        .map(|e| (e.tag.to_string(), e.clone()))
        .collect();
    for name in &extra {
        let Some(release) = Tag::release_of(name) else {
            return Err(format!(
                "MMKV_EXTRA_TAGS: bad tag `{name}` (expected vMAJOR.MINOR.PATCH[-suffix])"
            ));
        };
        if !candidates.iter().any(|(n, _)| n == name) {
            candidates.push((
                name.clone(),
                VersionEntry {
                    tag: release,
                    features: file.features_of(release),
                    source: versions::Source::default(),
                    build: file.entry(release).and_then(|e| e.build.clone()),
                    note: Some("extra tag given through MMKV_EXTRA_TAGS".into()),
                },
            ));
        }
    }
    let chosen: Vec<usize> = match env("MMKV_VERSIONS") {
        Some(list) if list.trim() == "none" => Vec::new(),
        Some(list) => {
            let mut idx = Vec::new();
            for tag in list.split(',').map(str::trim).filter(|t| !t.is_empty()) {
                let i = candidates.iter().position(|(n, _)| n == tag).ok_or_else(|| {
                    format!("MMKV_VERSIONS names `{tag}`, which is neither in versions.yaml nor in MMKV_EXTRA_TAGS")
                })?;
                if !idx.contains(&i) {
                    idx.push(i);
                }
            }
            idx
        }
        None => (0..candidates.len()).collect(),
    };
    Ok(chosen
        .into_iter()
        .map(|i| {
            let (name, entry) = candidates[i].clone();
            let override_dir = env(&override_var(&name));
            Job {
                name,
                entry,
                override_dir,
            }
        })
        .collect())
}

fn hash_of<T: Hash>(t: T) -> u64 {
    let mut h = DefaultHasher::new();
    t.hash(&mut h);
    h.finish()
}

/// The C++ build of every official Core and its shim: cc's compiler for the target (`CXX`,
/// `CXX_<target>`), except for aarch64 targets, whose Core clang compiles (`clang++`), as
/// Android's NDK does on upstream's main arm64 platform (GCC also refuses v1.1.0-v1.2.1's
/// Core/crc32/crc32_armv8.cpp, written for clang's builtins; those versions have no Linux
/// aarch64 build at all, ci/arm64-report.sh). One compiler for every aarch64 version (the cxx
/// bridge keeps cc's; both use the target's libstdc++). Cross-compiling, clang targets the
/// triple of cc's cross g++ (`aarch64-linux-gnu-g++`: `--target=aarch64-linux-gnu`, after cc's
/// own, so it wins), whose binutils and libraries it then uses.
fn core_build() -> cc::Build {
    let mut build = cc::Build::new();
    build.cpp(true);
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("aarch64") {
        let gnu = build.get_compiler();
        let cross = gnu
            .path()
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix("-g++"))
            .map(str::to_string);
        build.compiler("clang++");
        if let Some(triple) = cross {
            build.flag(format!("--target={triple}"));
        }
    }
    build
}

/// The C++ compiler: its path, its `--target` arguments (clang's, [`core_build`]) and what it
/// says it is (all part of every build key).
struct Compiler {
    path: PathBuf,
    target_args: Vec<String>,
    id: String,
}

impl Compiler {
    fn identify(tool: &cc::Tool) -> Compiler {
        let path = tool.path();
        // The last `--target` is the one clang uses.
        let target_args = tool
            .args()
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .rfind(|a| a.starts_with("--target="))
            .into_iter()
            .collect();
        let id = Command::new(path)
            .arg("--version")
            .output()
            .map(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .next()
                    .unwrap_or("")
                    .to_string()
            })
            .unwrap_or_default();
        Compiler {
            path: path.to_path_buf(),
            target_args,
            id,
        }
    }
}

/// How every Core is configured: the cmake definitions (the same for every version), cmake's
/// version, and the compiler flags the cmake crate passes on as `CMAKE_CXX_FLAGS` (from cc: the
/// target's flags and `CXXFLAGS` and its variants; without `-O`/`-g`, which cmake's Release
/// build type decides, as the cmake crate does). Part of every build key.
struct Recipe {
    cmake: String,
    cxx_flags: Vec<String>,
}

/// The cmake definitions of every Core build (besides the compiler and the unity exclusions).
const CORE_DEFINES: &[(&str, &str)] = &[
    ("CMAKE_POSITION_INDEPENDENT_CODE", "ON"),
    // One translation unit per batch of sources: Core's headers are parsed once per batch
    // instead of once per file (half the compile time).
    ("CMAKE_UNITY_BUILD", "ON"),
    ("CMAKE_UNITY_BUILD_BATCH_SIZE", "32"),
];

/// The cmake build type and target of every Core build.
const CORE_PROFILE: &str = "Release";
const CORE_TARGET: &str = "core";

impl Recipe {
    fn detect() -> Recipe {
        let cmake = Command::new(env("CMAKE").unwrap_or_else(|| "cmake".into()))
            .arg("--version")
            .output()
            .map(|o| {
                let out = String::from_utf8_lossy(&o.stdout);
                out.lines().next().unwrap_or("").to_string()
            })
            .unwrap_or_default();
        // As the cmake crate configures its C++ compiler (cmake 0.1: opt_level 0, no debug
        // info, no warnings; -O and -g left out).
        let tool = core_build()
            .opt_level(0)
            .debug(false)
            .warnings(false)
            .get_compiler();
        let cxx_flags = tool
            .args()
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .filter(|a| !a.starts_with("-O") && a != "-g")
            .collect();
        Recipe { cmake, cxx_flags }
    }
}

/// Holds an exclusive `flock` on `<dir>/.lock`: one build of a cache entry at a time, across
/// concurrent cargo processes (a debug and a release build of the same tag wait for each other).
fn lock_dir(dir: &Path) -> Result<std::fs::File, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(".lock"))
        .map_err(|e| format!("lock {}: {e}", dir.display()))?;
    rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)
        .map_err(|e| format!("lock {}: {e}", dir.display()))?;
    // The entry's last use (a cache kept across runs is pruned by it).
    let _ = file.set_modified(std::time::SystemTime::now());
    Ok(file)
}

/// Writes `data` to `path` unless it already holds exactly that (via a temporary file and a
/// rename, so a reader never sees half a file).
fn write_if_changed(path: &Path, data: &[u8]) -> Result<(), String> {
    if std::fs::read(path).ok().as_deref() == Some(data) {
        return Ok(());
    }
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, data).map_err(|e| format!("write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("rename to {}: {e}", path.display()))
}

/// cmake-builds Core (static, PIC, Release, one unity translation unit per 32 sources) and
/// links shim + Core into libmmkv_shim_<tag>.so, both in the version's cache directory
/// `<cache>/<tag>-<key>`, key = (tag, pinned Core tree or override path, flags, compiler, the
/// recipe, the variant); the library in its subdirectory `shim-<hash of the shim sources, link
/// arguments and libcore>`. Returns the library and Core's cmake build directory.
fn build_version(
    job: &Job,
    core: &Path,
    cache: &Path,
    shim: &Path,
    cxx: &Compiler,
    recipe: &Recipe,
    variant: Variant,
) -> Result<(PathBuf, PathBuf), String> {
    let tag = &job.name;
    let number = job.entry.tag.number();
    let flags = job.entry.cxxflags();
    let unity_exclude = job.entry.unity_exclude();
    // A pinned tree names the sources exactly; an override directory is only named by its path
    // (cmake's own dependency tracking then sees its edits).
    let pinned = job
        .override_dir
        .is_none()
        .then(|| job.entry.source.git.as_ref().map(|g| g.core_tree.clone()))
        .flatten();
    let source_id = pinned.clone().unwrap_or_else(|| core.display().to_string());
    // The variant last ([`Variant`]: coverage; not the page size, chosen at run time, nor the
    // target, which the compiler names).
    let key = format!(
        "{tag};{source_id};{flags:?};{unity_exclude:?};{}{};{};{};{:?};{CORE_PROFILE};{CORE_TARGET};{CORE_DEFINES:?}{}",
        cxx.path.display(),
        cxx.target_args.iter().map(|a| format!(" {a}")).collect::<String>(),
        cxx.id,
        recipe.cmake,
        recipe.cxx_flags,
        variant.key(),
    );
    let dir = cache.join(format!(
        "{tag}{}-{:016x}",
        variant.dir_suffix(),
        hash_of(&key)
    ));
    let _lock = lock_dir(&dir)?;

    let build_root = dir.join("core");
    let libcore = build_root.join("build").join("libcore.a");
    let stamp = dir.join("core.stamp");
    let up_to_date = pinned.is_some()
        && libcore.is_file()
        && std::fs::read_to_string(&stamp).ok().as_deref() == Some(key.as_str());
    if !up_to_date {
        let mut cfg = cmake::Config::new(core);
        cfg.init_cxx_cfg(core_build())
            .out_dir(&build_root)
            .profile(CORE_PROFILE)
            .build_target(CORE_TARGET)
            .define("CMAKE_CXX_COMPILER", &cxx.path);
        for (name, value) in CORE_DEFINES {
            cfg.define(name, value);
        }
        if !unity_exclude.is_empty() {
            // Included right after Core's `project()`, before its sources are added.
            let script = dir.join("unity-exclude.cmake");
            let mut text = String::new();
            for f in unity_exclude {
                let _ = writeln!(
                    text,
                    "set_source_files_properties(\"{f}\" PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)"
                );
            }
            std::fs::write(&script, text)
                .map_err(|e| format!("write {}: {e}", script.display()))?;
            cfg.define("CMAKE_PROJECT_INCLUDE", &script);
        }
        if !flags.is_empty() {
            cfg.cxxflag(flags.join(" "));
        }
        for (name, value) in variant.defines() {
            cfg.define(name, value);
        }
        for flag in variant.cxx_flags() {
            cfg.cxxflag(flag);
        }
        cfg.build();
        if !libcore.is_file() {
            return Err(format!("cmake produced no {}", libcore.display()));
        }
        std::fs::write(&stamp, &key).map_err(|e| format!("write {}: {e}", stamp.display()))?;
    }
    // Core links the system zlib when its CMakeLists finds one (else it embeds its own).
    let cmake_cache = std::fs::read_to_string(build_root.join("build").join("CMakeCache.txt"))
        .unwrap_or_default();
    let zlib = cmake_cache
        .lines()
        .find_map(|l| l.strip_prefix("zlib:FILEPATH="))
        .filter(|p| !p.ends_with("NOTFOUND"))
        .map(str::to_string);

    // The capability bits header, next to the library (the same for every profile).
    let include = dir.join("include");
    std::fs::create_dir_all(&include).map_err(|e| format!("create {}: {e}", include.display()))?;
    write_if_changed(&include.join("shim_caps.h"), caps::c_header().as_bytes())?;

    let mut args: Vec<String> = cxx.target_args.clone();
    args.extend([
        "-std=c++20".into(),
        "-O2".into(),
        "-fPIC".into(),
        "-shared".into(),
        "-Wall".into(),
        // Core is a CMake Release build (NDEBUG): inline header code must match it.
        "-DNDEBUG".into(),
        format!("-DMMKV_SHIM_VERSION={number}"),
    ]);
    args.extend(flags.iter().cloned());
    args.extend([
        format!("-I{}", shim.display()),
        format!("-I{}", include.display()),
        format!("-I{}", core.display()),
        shim.join("shim.cpp").display().to_string(),
        shim.join("io_faults.cpp").display().to_string(),
        libcore.display().to_string(),
    ]);
    args.extend(zlib.iter().cloned());
    if variant.coverage {
        // libcore.a's counters and their dump at exit (libgcov, linked into this library).
        args.push("-lgcov".into());
    }
    args.extend([
        "-lpthread".into(),
        format!("-Wl,--version-script={}", shim.join("shim.map").display()),
        "-Wl,-Bsymbolic".into(),
        // The test clock (shim.cpp `__wrap_time`): Core's `time()` calls go through the shim.
        "-Wl,--wrap=time".into(),
        // The page size (shim.cpp `__wrap_getpagesize`): Core's only page-size source.
        "-Wl,--wrap=getpagesize".into(),
    ]);
    // The disk-error schedule (io_faults.cpp): Core's file calls, failed when a test asks.
    args.extend(IO_FAULT_WRAPS.iter().map(|f| format!("-Wl,--wrap={f}")));
    args.extend(["-Wl,--no-undefined".into(), "-o".into()]);
    let meta = std::fs::metadata(&libcore).map_err(|e| e.to_string())?;
    let mut fp = String::new();
    for f in [
        shim.join("shim.cpp"),
        shim.join("shim_api.h"),
        shim.join("shim.map"),
        shim.join("io_faults.cpp"),
        shim.join("io_faults_api.h"),
        include.join("shim_caps.h"),
    ] {
        let _ = write!(fp, "{:x};", hash_of(std::fs::read(f).unwrap_or_default()));
    }
    let _ = write!(
        fp,
        "{:?};{};{:?};{}",
        args,
        meta.len(),
        meta.modified().ok(),
        key
    );
    // One subdirectory per shim fingerprint: builds of different shim sources or link flags
    // (two branches sharing MMKV_SYS_CACHE) each keep their own library instead of replacing
    // each other's (a loaded library of another shim ABI fails to load), and share libcore.a.
    let shim_dir = dir.join(format!("shim-{:016x}", hash_of(&fp)));
    std::fs::create_dir_all(&shim_dir)
        .map_err(|e| format!("create {}: {e}", shim_dir.display()))?;
    let so = shim_dir.join(format!("libmmkv_shim_{tag}.so"));
    let tmp_so = shim_dir.join(format!("libmmkv_shim_{tag}.so.tmp"));
    let fp_file = so.with_extension("so.fingerprint");
    if so.is_file() && std::fs::read_to_string(&fp_file).ok().as_deref() == Some(fp.as_str()) {
        // This library's last use (a cache kept across runs is pruned by it).
        if let Ok(f) = std::fs::OpenOptions::new().write(true).open(&fp_file) {
            let _ = f.set_modified(std::time::SystemTime::now());
        }
        return Ok((so, build_root.join("build")));
    }
    let output = Command::new(&cxx.path)
        .args(&args)
        .arg(&tmp_so)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", cxx.path.display()))?;
    if !output.status.success() {
        return Err(format!(
            "compiling/linking the shim failed:\n{} {} {}\n{}",
            cxx.path.display(),
            args.join(" "),
            tmp_so.display(),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    // A rename: a process that has the previous library loaded keeps its (unlinked) copy.
    std::fs::rename(&tmp_so, &so).map_err(|e| format!("rename to {}: {e}", so.display()))?;
    std::fs::write(&fp_file, fp).map_err(|e| e.to_string())?;
    Ok((so, build_root.join("build")))
}

fn write_built(out: &Path, built: &[Built], unbuilt: &[(String, String)]) {
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
            "    crate::BuiltVersion {{ tag: {:?}, library: {:?}, origin: {:?}, core: {:?}, features: mmkv_versions::FeatureSet::from_bits({:#x}), coverage: {:?} }},",
            b.tag,
            b.library.display().to_string(),
            b.origin,
            b.core.display().to_string(),
            b.features.bits(),
            b.coverage.as_ref().map(|d| d.display().to_string()),
        );
    }
    s.push_str("];\npub(crate) static UNBUILT: &[crate::Unbuilt] = &[\n");
    for (tag, reason) in unbuilt {
        let _ = writeln!(
            s,
            "    crate::Unbuilt {{ tag: {tag:?}, reason: {reason:?} }},"
        );
    }
    s.push_str("];\n");
    std::fs::write(out.join("built_versions.rs"), s)
        .unwrap_or_else(|e| fail(&format!("write built_versions.rs: {e}")));
}
