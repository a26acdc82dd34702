//! The one seeded generator (SplitMix64): a writer child and the parent that judges it derive
//! the same sequence from a seed without sharing state.

/// SplitMix64.
#[derive(Debug, Clone)]
pub struct SplitMix(u64);

impl SplitMix {
    /// A generator from a seed.
    pub fn new(seed: u64) -> SplitMix {
        SplitMix(seed)
    }

    /// Generator number `n` of a family seeded with `seed`: each member's sequence depends on
    /// `(seed, n)` alone, so members can run in any order or at once (the fault suites give
    /// every writer run its own). Both are mixed, so nearby `n` start far apart.
    pub fn stream(seed: u64, n: u64) -> SplitMix {
        let family = SplitMix::new(seed).next_u64();
        SplitMix::new(SplitMix::new(family ^ n).next_u64())
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`0..1` when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// `n` lowercase ASCII letters.
    pub fn letters(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| char::from(b'a' + self.below(26) as u8))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_sequence() {
        // The first outputs of SplitMix64 seeded with 0 (Vigna's reference implementation).
        let mut r = SplitMix::new(0);
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        let s = SplitMix::new(9).letters(50);
        assert_eq!(s.len(), 50);
        assert!(s.bytes().all(|b| b.is_ascii_lowercase()));
        // Streams depend on (seed, n) only and differ between neighbours.
        let first = |seed, n| SplitMix::stream(seed, n).next_u64();
        assert_eq!(first(1, 5), first(1, 5));
        assert_ne!(first(1, 5), first(1, 6));
        assert_ne!(first(1, 5), first(2, 5));
    }
}
