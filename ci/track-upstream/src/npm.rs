//! The npm side: listing package versions, packing tarballs and probing them for an
//! embedded `MMKV/Core`. Everything that touches the registry sits behind traits so that
//! tests run offline with fakes or fixtures.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::tarball::{find_embedded_core, EmbeddedCore};

/// npm packages known to embed `MMKV/Core` in (some of) their versions.
pub const DEFAULT_PACKAGES: &[&str] = &["react-native-mmkv", "react-native-mmkv-storage"];

/// Registry operations the tools need.
pub trait NpmClient {
    /// Every published version of `package`.
    fn versions(&self, package: &str) -> Result<Vec<String>>;
    /// Downloads `package@version` into `dest` and returns the tarball's path.
    fn pack(&self, package: &str, version: &str, dest: &Path) -> Result<PathBuf>;
    /// The integrity the registry records for `package@version` (`sha512-...`).
    fn dist_integrity(&self, package: &str, version: &str) -> Result<String>;
}

/// [`NpmClient`] that runs the `npm` command line client.
#[derive(Debug, Clone)]
pub struct NpmCli {
    /// The program to run (normally `npm`).
    pub program: String,
}

impl Default for NpmCli {
    fn default() -> Self {
        NpmCli {
            program: "npm".to_string(),
        }
    }
}

impl NpmCli {
    fn run(&self, args: &[&str], cwd: Option<&Path>) -> Result<String> {
        crate::command::run(&self.program, args, cwd)
    }
}

impl NpmClient for NpmCli {
    fn versions(&self, package: &str) -> Result<Vec<String>> {
        let args = ["view", package, "versions", "--json"];
        let out = self.run(&args, None)?;
        parse_versions_json(&out).map_err(|message| Error::Output {
            command: format!("{} {}", self.program, args.join(" ")),
            message,
        })
    }

    fn pack(&self, package: &str, version: &str, dest: &Path) -> Result<PathBuf> {
        let spec = format!("{package}@{version}");
        let dest_str = dest.to_string_lossy();
        let args = [
            "pack",
            spec.as_str(),
            "--json",
            "--pack-destination",
            &dest_str,
        ];
        let out = self.run(&args, Some(dest))?;
        let filename = parse_pack_json(&out).map_err(|message| Error::Output {
            command: format!("{} {}", self.program, args.join(" ")),
            message,
        })?;
        Ok(dest.join(filename))
    }

    fn dist_integrity(&self, package: &str, version: &str) -> Result<String> {
        let spec = format!("{package}@{version}");
        let args = ["view", spec.as_str(), "dist.integrity"];
        let out = self.run(&args, None)?;
        let value = out.trim();
        if !value.starts_with("sha512-") {
            return Err(Error::Output {
                command: format!("{} {}", self.program, args.join(" ")),
                message: format!("expected a sha512 integrity, got {value:?}"),
            });
        }
        Ok(value.to_string())
    }
}

/// Parses `npm view PKG versions --json` (an array, or a single string for one version).
pub fn parse_versions_json(out: &str) -> std::result::Result<Vec<String>, String> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Versions {
        Many(Vec<String>),
        One(String),
    }
    match serde_json::from_str::<Versions>(out.trim()).map_err(|e| e.to_string())? {
        Versions::Many(v) => Ok(v),
        Versions::One(v) => Ok(vec![v]),
    }
}

/// Parses `npm pack --json` output and returns the tarball's file name.
pub fn parse_pack_json(out: &str) -> std::result::Result<String, String> {
    #[derive(Deserialize)]
    struct Packed {
        filename: String,
    }
    // npm may print lifecycle noise before the JSON array.
    let start = out.find('[').ok_or("no JSON array in output")?;
    let packed: Vec<Packed> = serde_json::from_str(&out[start..]).map_err(|e| e.to_string())?;
    let first = packed.into_iter().next().ok_or("empty pack result")?;
    // npm names scoped tarballs `scope-name-1.0.0.tgz`; never accept a path.
    if first.filename.contains('/') || first.filename.contains("..") {
        return Err(format!("suspicious tarball name {:?}", first.filename));
    }
    Ok(first.filename)
}

/// Fetches `package@version` with `client` and returns the tarball bytes.
pub fn fetch_tarball(client: &dyn NpmClient, package: &str, version: &str) -> Result<Vec<u8>> {
    let dir = tempfile::tempdir().map_err(|e| Error::io(std::env::temp_dir(), e))?;
    let path = client.pack(package, version, dir.path())?;
    std::fs::read(&path).map_err(|e| Error::io(path, e))
}

/// What the tracker asks about npm packages.
pub trait CoreProbe {
    /// Every published version of `package`.
    fn versions(&self, package: &str) -> Result<Vec<String>>;
    /// The Core embedded in `package@version`, if any.
    fn embedded_core(&self, package: &str, version: &str) -> Result<Option<EmbeddedCore>>;
}

/// [`CoreProbe`] that packs each version with an [`NpmClient`] and reads its tarball.
pub struct PackingProbe<'a> {
    /// The registry client.
    pub client: &'a dyn NpmClient,
}

impl CoreProbe for PackingProbe<'_> {
    fn versions(&self, package: &str) -> Result<Vec<String>> {
        self.client.versions(package)
    }

    fn embedded_core(&self, package: &str, version: &str) -> Result<Option<EmbeddedCore>> {
        let bytes = fetch_tarball(self.client, package, version)?;
        find_embedded_core(&bytes).map_err(|message| Error::Tarball {
            package: package.to_string(),
            version: version.to_string(),
            message,
        })
    }
}

/// One record of an `--npm-from` fixture.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixtureRecord {
    /// Package name.
    pub package: String,
    /// Package version.
    pub version: String,
    /// The `MMKV_VERSION` its `MMKVPredef.h` declares, or null if it embeds no Core.
    pub mmkv_version: Option<String>,
    /// Core directory inside the tarball (defaults to `package/MMKV/Core`).
    #[serde(default)]
    pub path: Option<String>,
}

/// [`CoreProbe`] answering from a fixture file (YAML or JSON list of [`FixtureRecord`]):
/// offline stand-in for the registry.
#[derive(Debug, Clone, Default)]
pub struct FixtureProbe {
    records: BTreeMap<(String, String), FixtureRecord>,
}

impl FixtureProbe {
    /// Parses fixture text.
    pub fn parse(text: &str, origin: &Path) -> Result<FixtureProbe> {
        let records: Vec<FixtureRecord> =
            serde_norway::from_str(text).map_err(|e| Error::Versions {
                path: origin.to_path_buf(),
                message: e.to_string(),
            })?;
        Ok(FixtureProbe {
            records: records
                .into_iter()
                .map(|r| ((r.package.clone(), r.version.clone()), r))
                .collect(),
        })
    }

    /// Reads and parses a fixture file.
    pub fn load(path: &Path) -> Result<FixtureProbe> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        FixtureProbe::parse(&text, path)
    }
}

impl CoreProbe for FixtureProbe {
    fn versions(&self, package: &str) -> Result<Vec<String>> {
        Ok(self
            .records
            .keys()
            .filter(|(p, _)| p == package)
            .map(|(_, v)| v.clone())
            .collect())
    }

    fn embedded_core(&self, package: &str, version: &str) -> Result<Option<EmbeddedCore>> {
        let record = self
            .records
            .get(&(package.to_string(), version.to_string()))
            .ok_or_else(|| Error::Command {
                command: format!("fixture pack {package}@{version}"),
                message: "no such package version in the fixture".to_string(),
            })?;
        Ok(record.mmkv_version.as_ref().map(|v| EmbeddedCore {
            mmkv_version: v.clone(),
            core_path: record
                .path
                .clone()
                .unwrap_or_else(|| "package/MMKV/Core".to_string()),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_npm_outputs() {
        assert_eq!(
            parse_versions_json("[\n  \"1.0.0\",\n  \"1.1.0\"\n]\n").unwrap(),
            vec!["1.0.0", "1.1.0"]
        );
        assert_eq!(parse_versions_json("\"1.0.0\"").unwrap(), vec!["1.0.0"]);
        assert!(parse_versions_json("{}").is_err());
        let pack = "> prepare\n[{\"id\":\"react-native-mmkv@3.1.0\",\"filename\":\"react-native-mmkv-3.1.0.tgz\",\"files\":[]}]";
        assert_eq!(
            parse_pack_json(pack).unwrap(),
            "react-native-mmkv-3.1.0.tgz"
        );
        assert!(parse_pack_json("[{\"filename\":\"../x.tgz\"}]").is_err());
        assert!(parse_pack_json("[]").is_err());
        assert!(parse_pack_json("nothing").is_err());
    }

    #[test]
    fn fixture_probe_answers() {
        let text = "- {package: a, version: 1.0.0, mmkv_version: v2.4.2}\n\
                    - {package: a, version: 1.1.0, mmkv_version: null}\n\
                    - {package: b, version: 2.0.0, mmkv_version: v2.4.1, path: package/x/Core}\n";
        let probe = FixtureProbe::parse(text, Path::new("f")).unwrap();
        assert_eq!(probe.versions("a").unwrap(), vec!["1.0.0", "1.1.0"]);
        assert_eq!(
            probe
                .embedded_core("a", "1.0.0")
                .unwrap()
                .unwrap()
                .mmkv_version,
            "v2.4.2"
        );
        assert_eq!(probe.embedded_core("a", "1.1.0").unwrap(), None);
        assert_eq!(
            probe
                .embedded_core("b", "2.0.0")
                .unwrap()
                .unwrap()
                .core_path,
            "package/x/Core"
        );
        assert!(probe.embedded_core("a", "9.9.9").is_err());
        assert!(probe.versions("c").unwrap().is_empty());
    }
}
