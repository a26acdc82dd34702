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

/// The smallest page a writer has (the 4 KiB pages of x86-64 and most phones).
const SMALL_PAGE: u64 = 4096;

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
    /// and the meta fields, and sometimes anywhere), written with pages of `page` bytes.
    ///
    /// A writer page larger than 4 KiB adds cuts at page boundaries: of its own page, and of
    /// 4 KiB inside one (where a loader rounding up to 4 KiB and one rounding up to the
    /// writer's page part ways). At 4 KiB the choices are those of every earlier run.
    pub fn choose(rng: &mut SplitMix, data_len: u64, region_len: u64, page: u64) -> Damage {
        let end = (4 + region_len).min(data_len).max(1);
        let mut muts = Vec::new();
        let n = 1 + rng.below(3) as usize;
        for _ in 0..n {
            let r = rng.below(100);
            let m = if r < 30 {
                // truncate the data file: inside the region mostly, sometimes in the tail
                let len = if rng.below(4) == 0 {
                    if page > SMALL_PAGE && rng.below(2) == 0 {
                        let step = if rng.below(2) == 0 { page } else { SMALL_PAGE };
                        rng.below(data_len / step + 1) * step
                    } else {
                        rng.below(data_len + 1)
                    }
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
        let a = Damage::choose(&mut rng, 4096, 300, 4096);
        let mut rng = SplitMix::new(3);
        assert_eq!(a, Damage::choose(&mut rng, 4096, 300, 4096));
        assert!(!a.0.is_empty());
    }

    /// A 16 KiB writer's stores are also cut at its page boundaries and at 4 KiB ones inside
    /// its pages; at 4 KiB the choices stay those of the seed alone.
    #[test]
    fn a_larger_writer_page_adds_cuts_at_page_boundaries() {
        let cuts = |page: u64| -> Vec<u64> {
            (0..400)
                .flat_map(|seed| Damage::choose(&mut SplitMix::new(seed), 65536, 30_000, page).0)
                .filter_map(|m| match m {
                    Mutation::Truncate(Which::Data, len) => Some(len),
                    _ => None,
                })
                .collect()
        };
        let big = cuts(16384);
        let at = |step: u64, not: u64| {
            big.iter()
                .filter(|&&l| l > 0 && l % step == 0 && l % not != 0)
                .count()
        };
        assert!(at(16384, 65536) >= 3, "cuts at 16 KiB boundaries: {big:?}");
        assert!(
            at(4096, 16384) >= 3,
            "cuts at 4 KiB inside 16 KiB pages: {big:?}"
        );
        let small = cuts(4096);
        assert!(
            small.iter().filter(|&&l| l > 0 && l % 4096 == 0).count() < at(4096, 16384),
            "4 KiB pages draw no page-boundary cuts"
        );
    }
}
