//! Crash states of a [`Recording`]: at a crash point between two sync points, each file as it
//! was last made durable plus any subset of the pages written since (each page in any of the
//! versions it had at a call boundary), torn pages (512-byte sectors partly old, partly new),
//! and the file's size either side of a pending `ftruncate`. The two files are independent:
//! the kernel writes their pages back in any order.

use std::fmt;

use crate::powerloss::record::{page_of, Recording, SECTOR};
use crate::vocab::SplitMix;

/// Parts of a page a torn page is made of (bit `s` of its mask: part `s`): at 4 KiB pages each
/// is one 512-byte sector; a larger page tears in eighths (runs of whole sectors).
const PARTS: usize = 8;

/// What one written-since-sync page of a state holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageSrc {
    /// The page as it was after step `.0`.
    Step(usize),
    /// Torn: sector `s` from step `.0` when bit `s` of `.1` is set, else as last synced.
    Torn(usize, u8),
}

/// One file of a crash state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileState {
    /// The step after which the file was last durable.
    pub base: usize,
    /// The file has the size of the crash point (else the size it had when durable).
    pub new_size: bool,
    /// Pages that reached the disk since (page index, content); every other page is as synced.
    pub pages: Vec<(usize, PageSrc)>,
    /// Pages written since the sync that are left as synced (for the report and the shrinker).
    pub dropped: usize,
}

/// One crash state: a crash right after step `point` (before that step's own sync, if any).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrashState {
    /// The crash point (a step index >= 1).
    pub point: usize,
    /// The data file (`[0]`) and the meta file (`[1]`).
    pub files: [FileState; 2],
}

/// A file's image as last synced at step `s`: its contents then, and when that step cut the
/// file (trim, clearAll cut it after the sync), the old tail (the cut is pending).
pub fn base_image(rec: &Recording, f: usize, s: usize) -> Vec<u8> {
    let cur = rec.steps[s].file(f);
    let mut img = cur.to_vec();
    if s > 0 {
        let prev = rec.steps[s - 1].file(f);
        if prev.len() > cur.len() {
            img.extend_from_slice(&prev[cur.len()..]);
        }
    }
    img
}

/// The last step before `point` after which file `f` was durable.
pub fn last_sync(rec: &Recording, f: usize, point: usize) -> usize {
    (0..point)
        .rev()
        .find(|&s| rec.steps[s].synced(f))
        .unwrap_or(0)
}

/// Pages of file `f` written between its last sync before `point` and `point`, each with
/// the steps at which it took a new content (oldest first, the crash point's content last).
pub fn dirty_pages(rec: &Recording, f: usize, point: usize) -> (usize, Vec<(usize, Vec<usize>)>) {
    let base = last_sync(rec, f, point);
    let img = base_image(rec, f, base);
    let max_len = (base..=point)
        .map(|s| rec.steps[s].file(f).len())
        .chain([img.len()])
        .max()
        .unwrap_or(0);
    let mut out = Vec::new();
    let page = rec.page;
    for p in 0..max_len.div_ceil(page) {
        let mut last = page_of(&img, p, page);
        let mut versions = Vec::new();
        for s in base + 1..=point {
            let cur = page_of(rec.steps[s].file(f), p, page);
            if cur != last {
                versions.push(s);
                last = cur;
            }
        }
        // A page back to its synced content at the crash point still had other versions.
        if !versions.is_empty() {
            if page_of(rec.steps[point].file(f), p, page) == page_of(&img, p, page) {
                versions.push(point);
                versions.dedup();
            }
            out.push((p, versions));
        }
    }
    (base, out)
}

impl FileState {
    /// The file's bytes in this state.
    pub fn build(&self, rec: &Recording, f: usize, point: usize) -> Vec<u8> {
        let mut img = base_image(rec, f, self.base);
        let len = if self.new_size {
            rec.steps[point].file(f).len()
        } else {
            img.len()
        };
        let size = rec.page;
        let part = (size / PARTS).max(SECTOR);
        let full = len.max(img.len()).div_ceil(size) * size;
        img.resize(full.max(img.len()), 0);
        for &(p, src) in &self.pages {
            let at = p * size;
            if at >= img.len() {
                img.resize(at + size, 0);
            }
            let (step, mask) = match src {
                PageSrc::Step(s) => (s, 0xff),
                PageSrc::Torn(s, m) => (s, m),
            };
            let page = page_of(rec.steps[step].file(f), p, size);
            for s in 0..PARTS {
                if mask & (1 << s) != 0 {
                    img[at + s * part..at + (s + 1) * part]
                        .copy_from_slice(&page[s * part..(s + 1) * part]);
                }
            }
        }
        img.truncate(len);
        img
    }

    fn torn(&self) -> bool {
        self.pages
            .iter()
            .any(|(_, s)| matches!(s, PageSrc::Torn(..)))
    }
}

impl CrashState {
    /// The data file's and the meta file's bytes.
    pub fn build(&self, rec: &Recording) -> [Vec<u8>; 2] {
        [
            self.files[0].build(rec, 0, self.point),
            self.files[1].build(rec, 1, self.point),
        ]
    }

    /// Some meta page reached the disk while some data page written before the crash did
    /// not: the `.crc` is newer than the data (a state no SIGKILL leaves).
    pub fn crc_ahead(&self) -> bool {
        !self.files[1].pages.is_empty() && self.files[0].dropped > 0
    }

    /// Some data page reached the disk while a meta page written before the crash did not.
    pub fn data_ahead(&self) -> bool {
        !self.files[0].pages.is_empty() && self.files[1].dropped > 0
    }

    /// Some page is torn.
    pub fn torn(&self) -> bool {
        self.files.iter().any(FileState::torn)
    }

    /// Some file has the size it had when last durable while the crash point's differs.
    pub fn old_size(&self, rec: &Recording) -> bool {
        (0..2).any(|f| {
            !self.files[f].new_size
                && base_image(rec, f, self.files[f].base).len()
                    != rec.steps[self.point].file(f).len()
        })
    }
}

impl fmt::Display for CrashState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "crash after step {}", self.point)?;
        for (name, fs) in ["data", "meta"].iter().zip(&self.files) {
            let pages: Vec<String> = fs
                .pages
                .iter()
                .map(|(p, s)| match s {
                    PageSrc::Step(st) => format!("{p}@{st}"),
                    PageSrc::Torn(st, m) => format!("{p}@{st}~{m:02x}"),
                })
                .collect();
            write!(
                f,
                "; {name} synced@{} size {} pages [{}] dropped {}",
                fs.base,
                if fs.new_size { "new" } else { "old" },
                pages.join(" "),
                fs.dropped
            )?;
        }
        Ok(())
    }
}

/// Options of one file at one crash point.
struct FileOptions {
    base: usize,
    dirty: Vec<(usize, Vec<usize>)>,
    sizes: Vec<bool>,
}

impl FileOptions {
    fn of(rec: &Recording, f: usize, point: usize) -> FileOptions {
        let (base, dirty) = dirty_pages(rec, f, point);
        let old = base_image(rec, f, base).len();
        let sizes = if old == rec.steps[point].file(f).len() {
            vec![true]
        } else {
            vec![false, true]
        };
        FileOptions { base, dirty, sizes }
    }

    /// Number of combinations without tearing (old or any version per page, each size).
    fn combinations(&self) -> u64 {
        self.dirty
            .iter()
            .fold(self.sizes.len() as u64, |n, (_, v)| {
                n.saturating_mul(1 + v.len() as u64)
            })
    }

    /// The combination number `i` (mixed radix over sizes and pages).
    fn nth(&self, mut i: u64) -> FileState {
        let new_size = self.sizes[(i % self.sizes.len() as u64) as usize];
        i /= self.sizes.len() as u64;
        let mut pages = Vec::new();
        let mut dropped = 0;
        for (p, versions) in &self.dirty {
            let r = 1 + versions.len() as u64;
            let c = (i % r) as usize;
            i /= r;
            if c == 0 {
                dropped += 1;
            } else {
                pages.push((*p, PageSrc::Step(versions[c - 1])));
            }
        }
        FileState {
            base: self.base,
            new_size,
            pages,
            dropped,
        }
    }

    /// A random choice: each page old, newest, an older version or torn.
    fn sample(&self, rng: &mut SplitMix, tear: bool) -> FileState {
        let new_size = self.sizes[rng.below(self.sizes.len() as u64) as usize];
        let mut pages = Vec::new();
        let mut dropped = 0;
        for (p, versions) in &self.dirty {
            let newest = *versions.last().unwrap_or(&0);
            let any = versions[rng.below(versions.len() as u64) as usize];
            match rng.below(10) {
                0..=3 => dropped += 1,
                4..=7 => pages.push((*p, PageSrc::Step(newest))),
                8 => pages.push((*p, PageSrc::Step(any))),
                _ if tear => pages.push((*p, PageSrc::Torn(any, torn_mask(rng)))),
                _ => pages.push((*p, PageSrc::Step(newest))),
            }
        }
        FileState {
            base: self.base,
            new_size,
            pages,
            dropped,
        }
    }

    /// Every page at its newest content, one of them torn.
    fn torn_newest(&self, rng: &mut SplitMix) -> Option<FileState> {
        if self.dirty.is_empty() {
            return None;
        }
        let which = rng.below(self.dirty.len() as u64) as usize;
        let pages = self
            .dirty
            .iter()
            .enumerate()
            .map(|(i, (p, v))| {
                let newest = *v.last().unwrap_or(&0);
                if i == which {
                    (*p, PageSrc::Torn(newest, torn_mask(rng)))
                } else {
                    (*p, PageSrc::Step(newest))
                }
            })
            .collect();
        Some(FileState {
            base: self.base,
            new_size: true,
            pages,
            dropped: 0,
        })
    }
}

/// A sector mask with at least one old and one new sector.
fn torn_mask(rng: &mut SplitMix) -> u8 {
    1 + rng.below(254) as u8
}

/// The crash states at crash point `point`: exhaustive (every subset of pages in every
/// version, each size) when there are at most `per_point` of them, else `per_point`
/// samples; plus, where pages were written, two states with a torn page.
pub fn states_at(
    rec: &Recording,
    point: usize,
    per_point: usize,
    rng: &mut SplitMix,
) -> Vec<CrashState> {
    let opts = [
        FileOptions::of(rec, 0, point),
        FileOptions::of(rec, 1, point),
    ];
    let n0 = opts[0].combinations();
    let total = n0.saturating_mul(opts[1].combinations());
    let mut out = Vec::new();
    if total <= per_point as u64 {
        for i in 0..total {
            out.push(CrashState {
                point,
                files: [opts[0].nth(i % n0), opts[1].nth(i / n0)],
            });
        }
        for _ in 0..2 {
            let f = rng.below(2) as usize;
            if let Some(t) = opts[f].torn_newest(rng) {
                let other = opts[1 - f].sample(rng, false);
                let files = if f == 0 { [t, other] } else { [other, t] };
                out.push(CrashState { point, files });
            }
        }
    } else {
        // The crash point's own files (what a SIGKILL leaves) and the synced ones first.
        out.push(CrashState {
            point,
            files: [opts[0].nth(n0 - 1), opts[1].nth(opts[1].combinations() - 1)],
        });
        for _ in 1..per_point {
            out.push(CrashState {
                point,
                files: [opts[0].sample(rng, true), opts[1].sample(rng, true)],
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::powerloss::record::{Step, SyncKind, PAGE};
    use crate::StoreKind;

    fn step(data: Vec<u8>, meta: Vec<u8>, sync: bool) -> Step {
        let s = sync.then_some(SyncKind::Explicit);
        Step {
            label: String::new(),
            data,
            meta,
            data_sync: s,
            meta_sync: s,
        }
    }

    fn rec() -> Recording {
        let mut d1 = vec![0u8; 2 * PAGE];
        d1[0] = 1;
        let mut d2 = d1.clone();
        d2[PAGE] = 2;
        d2.resize(3 * PAGE, 0);
        d2[2 * PAGE] = 3;
        Recording {
            tag: "v2.4.2".into(),
            kind: StoreKind::Plain,
            seed: 0,
            page: PAGE,
            steps: vec![
                step(vec![0u8; 2 * PAGE], vec![0u8; PAGE], true),
                step(d1, vec![1u8; PAGE], false),
                step(d2, vec![2u8; PAGE], false),
            ],
        }
    }

    /// A 16 KiB writer's page holds four 4 KiB pages: one dirty page where 4 KiB has two,
    /// and a torn page mixes eighths of it (whole sectors).
    #[test]
    fn pages_are_the_writer_s_page_size() {
        let mut r = rec();
        r.page = 4 * PAGE;
        let (_, dirty) = dirty_pages(&r, 0, 2);
        assert_eq!(dirty, vec![(0, vec![1, 2])], "{dirty:?}");
        let fs = FileState {
            base: 0,
            new_size: true,
            pages: vec![(0, PageSrc::Torn(2, 0b0000_0101))],
            dropped: 0,
        };
        let d = fs.build(&r, 0, 2);
        assert_eq!(d.len(), 3 * PAGE);
        assert_eq!(d[0], 1, "part 0 is new");
        assert_eq!(d[PAGE], 2, "part 2 (bytes 4096..6144) is new");
        assert_eq!(d[2 * PAGE], 0, "part 4 is old");
    }

    #[test]
    fn every_subset_of_every_version_and_both_sizes() {
        let r = rec();
        let (base, dirty) = dirty_pages(&r, 0, 2);
        assert_eq!(base, 0);
        assert_eq!(dirty, vec![(0, vec![1]), (1, vec![2]), (2, vec![2])]);
        let (_, meta) = dirty_pages(&r, 1, 2);
        assert_eq!(meta, vec![(0, vec![1, 2])]);
        let mut rng = SplitMix::new(1);
        let states = states_at(&r, 2, 1000, &mut rng);
        // data: 2 sizes x 2^3 subsets; meta: old, step 1, step 2; plus 2 torn states
        assert_eq!(states.len(), 16 * 3 + 2);
        let built: std::collections::BTreeSet<[Vec<u8>; 2]> =
            states[..48].iter().map(|s| s.build(&r)).collect();
        assert_eq!(
            built.len(),
            12 * 3,
            "the old size drops page 2: its 2 choices coincide"
        );
        // the .crc of the crash point over data as last synced: a state SIGKILL cannot leave
        let ahead = states
            .iter()
            .find(|s| s.crc_ahead() && s.files[0].pages.is_empty())
            .unwrap();
        let [d, m] = ahead.build(&r);
        let v = if ahead.files[1].pages[0].1 == PageSrc::Step(2) {
            2
        } else {
            1
        };
        assert!(m == vec![v; PAGE]);
        assert!(d.iter().all(|&b| b == 0));
        assert!(states.iter().any(|s| s.torn()));
        assert!(states.iter().any(|s| s.data_ahead()));
        assert!(states.iter().any(|s| s.old_size(&r)));
    }

    #[test]
    fn a_torn_page_mixes_sectors() {
        let r = rec();
        let fs = FileState {
            base: 0,
            new_size: true,
            pages: vec![(1, PageSrc::Torn(2, 0b0000_0001))],
            dropped: 2,
        };
        let d = fs.build(&r, 0, 2);
        assert_eq!(d.len(), 3 * PAGE);
        assert_eq!(d[PAGE], 2, "sector 0 of page 1 is new");
        assert_eq!(d[0], 0, "page 0 dropped");
        let mut r2 = r.clone();
        r2.steps[2].data[PAGE + SECTOR] = 7;
        assert_eq!(fs.build(&r2, 0, 2)[PAGE + SECTOR], 0, "sector 1 is old");
        let sampled = states_at(&r, 2, 4, &mut SplitMix::new(3));
        assert_eq!(sampled.len(), 4);
        assert!(
            sampled[0].build(&r) == [r.steps[2].data.clone(), r.steps[2].meta.clone()],
            "the first sample is the crash point's own files"
        );
    }
}
