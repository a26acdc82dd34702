//! Reading packed npm tarballs: integrity and the embedded `MMKV/Core` version.

use std::io::Read;

use base64::Engine;
use sha2::{Digest, Sha512};

/// The largest `MMKVPredef.h` that is read (the real one is a few KiB).
const MAX_HEADER_BYTES: u64 = 1 << 20;

/// The Core sources found inside a package tarball.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbeddedCore {
    /// The `MMKV_VERSION` that `MMKVPredef.h` declares (e.g. `v2.0.0`).
    pub mmkv_version: String,
    /// The Core directory inside the tarball (e.g. `package/MMKV/Core`).
    pub core_path: String,
}

/// The subresource-integrity string npm records for a tarball: `sha512-<base64>`.
pub fn sha512_integrity(bytes: &[u8]) -> String {
    let digest = Sha512::digest(bytes);
    format!(
        "sha512-{}",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

/// Extracts the version string from the text of `MMKVPredef.h`.
///
/// Understands `constexpr auto MMKV_VERSION = "v2.0.0";` and `#define MMKV_VERSION "v1.2.10"`;
/// commented-out lines are skipped.
pub fn parse_mmkv_version(header: &str) -> Option<String> {
    for line in header.lines() {
        let line = line.trim();
        if line.starts_with("//") || line.starts_with("/*") || line.starts_with('*') {
            continue;
        }
        let Some(pos) = find_word(line, "MMKV_VERSION") else {
            continue;
        };
        let after = &line[pos + "MMKV_VERSION".len()..];
        let Some(open) = after.find('"') else {
            continue;
        };
        let rest = &after[open + 1..];
        let Some(close) = rest.find('"') else {
            continue;
        };
        let value = rest[..close].trim();
        if !value.is_empty() {
            return Some(value.to_string());
        }
    }
    None
}

/// Byte offset of `word` in `line` where it stands as a whole identifier.
fn find_word(line: &str, word: &str) -> Option<usize> {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut from = 0;
    while let Some(rel) = line[from..].find(word) {
        let pos = from + rel;
        let before_ok = line[..pos].chars().next_back().is_none_or(|c| !is_ident(c));
        let after_ok = line[pos + word.len()..]
            .chars()
            .next()
            .is_none_or(|c| !is_ident(c));
        if before_ok && after_ok {
            return Some(pos);
        }
        from = pos + word.len();
    }
    None
}

/// Looks for `.../Core/MMKVPredef.h` in a gzipped tarball and reads its `MMKV_VERSION`.
///
/// Returns `Ok(None)` when the tarball has no such header (the package does not embed the
/// Core sources), and an error message when the archive is unreadable or the header declares
/// no version. When several headers exist, the one with the shortest path wins.
pub fn find_embedded_core(tgz: &[u8]) -> Result<Option<EmbeddedCore>, String> {
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(tgz));
    let entries = archive.entries().map_err(|e| e.to_string())?;
    let mut best: Option<(String, String)> = None;
    for entry in entries {
        let mut entry = entry.map_err(|e| e.to_string())?;
        let path = entry.path().map_err(|e| e.to_string())?.into_owned();
        let mut components = path
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned());
        let parts: Vec<String> = components.by_ref().collect();
        let n = parts.len();
        if n < 2 || parts[n - 1] != "MMKVPredef.h" || parts[n - 2] != "Core" {
            continue;
        }
        let core_path = parts[..n - 1].join("/");
        if best
            .as_ref()
            .is_some_and(|(p, _)| p.len() <= core_path.len())
        {
            continue;
        }
        let mut text = Vec::new();
        (&mut entry)
            .take(MAX_HEADER_BYTES)
            .read_to_end(&mut text)
            .map_err(|e| e.to_string())?;
        best = Some((core_path, String::from_utf8_lossy(&text).into_owned()));
    }
    match best {
        None => Ok(None),
        Some((core_path, text)) => match parse_mmkv_version(&text) {
            Some(mmkv_version) => Ok(Some(EmbeddedCore {
                mmkv_version,
                core_path,
            })),
            None => Err(format!("{core_path}/MMKVPredef.h declares no MMKV_VERSION")),
        },
    }
}

/// Builds a gzipped tarball from `(path, contents)` pairs: used by tests and fakes.
pub fn build_tgz(files: &[(&str, &[u8])]) -> std::io::Result<Vec<u8>> {
    let encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut builder = tar::Builder::new(encoder);
    for (path, contents) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(contents.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        builder.append_data(&mut header, path, *contents)?;
    }
    builder.into_inner()?.finish()
}

/// The text of a minimal `MMKVPredef.h` declaring `version`, for tests and fakes.
pub fn fake_predef_header(version: &str) -> String {
    format!(
        "#ifndef MMKV_SRC_MMKVPREDEF_H\n#define MMKV_SRC_MMKVPREDEF_H\n\n\
         // MMKV_VERSION is the library version\n\
         constexpr auto MMKV_VERSION = \"{version}\";\n\n#endif\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_from_header_forms() {
        assert_eq!(
            parse_mmkv_version("constexpr auto MMKV_VERSION = \"v2.0.0\";").as_deref(),
            Some("v2.0.0")
        );
        assert_eq!(
            parse_mmkv_version("#define MMKV_VERSION \"v1.2.10\"\n").as_deref(),
            Some("v1.2.10")
        );
        assert_eq!(
            parse_mmkv_version("// constexpr auto MMKV_VERSION = \"v0.0.1\";\nconstexpr auto MMKV_VERSION = \"v2.4.2\";")
                .as_deref(),
            Some("v2.4.2")
        );
        assert_eq!(parse_mmkv_version("#define MMKV_VERSION_MAJOR \"3\""), None);
        assert_eq!(parse_mmkv_version("nothing here"), None);
    }

    #[test]
    fn integrity_matches_known_value() {
        // sha512 of the empty string, base64.
        assert_eq!(
            sha512_integrity(b""),
            "sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg=="
        );
    }

    #[test]
    fn finds_core_in_tarball() {
        let header = fake_predef_header("v2.4.2");
        let tgz = build_tgz(&[
            ("package/package.json", b"{}"),
            (
                "package/example/MMKV/Core/MMKVPredef.h",
                fake_predef_header("v0.0.1").as_bytes(),
            ),
            ("package/MMKV/Core/MMKVPredef.h", header.as_bytes()),
        ])
        .unwrap();
        let core = find_embedded_core(&tgz).unwrap().unwrap();
        assert_eq!(core.mmkv_version, "v2.4.2");
        assert_eq!(core.core_path, "package/MMKV/Core");

        let without = build_tgz(&[("package/cpp/HybridMMKV.cpp", b"int x;")]).unwrap();
        assert_eq!(find_embedded_core(&without).unwrap(), None);

        let no_version =
            build_tgz(&[("package/MMKV/Core/MMKVPredef.h", b"#pragma once\n")]).unwrap();
        assert!(find_embedded_core(&no_version).is_err());

        assert!(find_embedded_core(b"not a tarball").is_err());
    }
}
