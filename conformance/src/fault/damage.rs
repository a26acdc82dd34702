//! Damage applied to a written store: truncations at random lengths, bit flips, a missing
//! meta file. Chosen from a seed and the store's own layout, so a state is reproducible from
//! (base state, seed) and its description.

use std::fmt;
use std::path::Path;

use crate::error::{Error, Result};
use crate::vocab::SplitMix;

/// Which of the two files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Which {
    /// The data file (`<id>`).
    Data,
    /// The meta file (`<id>.crc`).
    Meta,
}

/// One change to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutation {
    /// Cut the file to `len` bytes.
    Truncate(Which, u64),
    /// Flip bit `bit` of the byte at `offset` (ignored past the end).
    Flip(Which, u64, u8),
    /// Delete the file.
    Remove(Which),
}

impl fmt::Display for Mutation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let w = |w: &Which| match w {
            Which::Data => "data",
            Which::Meta => "meta",
        };
        match self {
            Mutation::Truncate(which, len) => write!(f, "truncate {} to {len}", w(which)),
            Mutation::Flip(which, off, bit) => write!(f, "flip {} byte {off} bit {bit}", w(which)),
            Mutation::Remove(which) => write!(f, "remove {}", w(which)),
        }
    }
}

/// A list of mutations, applied in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Damage(pub Vec<Mutation>);

impl fmt::Display for Damage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("none");
        }
        let parts: Vec<String> = self.0.iter().map(|m| m.to_string()).collect();
        f.write_str(&parts.join(", "))
    }
}

fn path_of(dir: &Path, id: &str, which: Which) -> std::path::PathBuf {
    match which {
        Which::Data => dir.join(id),
        Which::Meta => mmkv_reader::meta_path(&dir.join(id)),
    }
}

impl Damage {
    /// Applies the mutations to store `id` in `dir`.
    pub fn apply(&self, dir: &Path, id: &str) -> Result<()> {
        for m in &self.0 {
            match *m {
                Mutation::Truncate(which, len) => {
                    let p = path_of(dir, id, which);
                    let f = std::fs::OpenOptions::new()
                        .write(true)
                        .open(&p)
                        .map_err(|e| Error::io(&p, e))?;
                    let cur = f.metadata().map_err(|e| Error::io(&p, e))?.len();
                    f.set_len(len.min(cur)).map_err(|e| Error::io(&p, e))?;
                }
                Mutation::Flip(which, off, bit) => {
                    let p = path_of(dir, id, which);
                    let mut b = std::fs::read(&p).map_err(|e| Error::io(&p, e))?;
                    if let Some(x) = usize::try_from(off).ok().and_then(|o| b.get_mut(o)) {
                        *x ^= 1 << (bit & 7);
                        std::fs::write(&p, b).map_err(|e| Error::io(&p, e))?;
                    }
                }
                Mutation::Remove(which) => {
                    let p = path_of(dir, id, which);
                    std::fs::remove_file(&p).map_err(|e| Error::io(&p, e))?;
                }
            }
        }
        Ok(())
    }

    /// A seeded damage for a store whose data file is `data_len` bytes with a region of
    /// `region_len` bytes after the 4-byte header (mutations aim at the region, the header
    /// and the meta fields, and sometimes anywhere).
    pub fn choose(rng: &mut SplitMix, data_len: u64, region_len: u64) -> Damage {
        let end = (4 + region_len).min(data_len).max(1);
        let mut muts = Vec::new();
        let n = 1 + rng.below(3) as usize;
        for _ in 0..n {
            let r = rng.below(100);
            let m = if r < 30 {
                // truncate the data file: inside the region mostly, sometimes in the tail
                let len = if rng.below(4) == 0 {
                    rng.below(data_len + 1)
                } else {
                    rng.below(end + 1)
                };
                Mutation::Truncate(Which::Data, len)
            } else if r < 65 {
                let off = match rng.below(10) {
                    0 => rng.below(4),
                    1 => rng.below(data_len.max(1)),
                    _ => rng.below(end),
                };
                Mutation::Flip(Which::Data, off, rng.below(8) as u8)
            } else if r < 90 {
                // meta fields: crc, version, sequence, IV, actual size, last confirmed, flags
                Mutation::Flip(Which::Meta, rng.below(112), rng.below(8) as u8)
            } else if r < 97 {
                Mutation::Truncate(Which::Meta, rng.below(112))
            } else {
                Mutation::Remove(Which::Meta)
            };
            muts.push(m);
            if matches!(m, Mutation::Remove(_)) {
                break;
            }
        }
        Damage(muts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apply_truncates_flips_and_removes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("s"), [0u8; 16]).unwrap();
        std::fs::write(dir.path().join("s.crc"), [0u8; 8]).unwrap();
        Damage(vec![
            Mutation::Flip(Which::Data, 3, 1),
            Mutation::Truncate(Which::Data, 5),
            Mutation::Flip(Which::Data, 99, 0),
        ])
        .apply(dir.path(), "s")
        .unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("s")).unwrap(),
            [0, 0, 0, 2, 0]
        );
        Damage(vec![Mutation::Remove(Which::Meta)])
            .apply(dir.path(), "s")
            .unwrap();
        assert!(!dir.path().join("s.crc").exists());
        let mut rng = SplitMix::new(3);
        let a = Damage::choose(&mut rng, 4096, 300);
        let mut rng = SplitMix::new(3);
        assert_eq!(a, Damage::choose(&mut rng, 4096, 300));
        assert!(!a.0.is_empty());
    }
}
