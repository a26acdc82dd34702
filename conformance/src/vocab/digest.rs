//! Plan digests: SHA-256 over what a seed drew (workloads, writer runs, damage, crash states),
//! hex-printed, so two runs can show in one line that they drew the same cases. Items go in
//! as their JSON text (the serde forms of the saved workloads and states), each prefixed by
//! its length so that no two item lists hash alike; each digest starts with a domain name so
//! that the digests of different things never collide.

use serde::Serialize;
use sha2::{Digest as _, Sha256};

/// A digest being built: [`PlanHasher::add`] the items in their order, then [`PlanHasher::hex`].
#[derive(Debug, Clone)]
pub struct PlanHasher(Sha256);

impl PlanHasher {
    /// An empty digest of `domain` (what is digested: `faults`, `cell` ...).
    pub fn new(domain: &str) -> PlanHasher {
        let mut h = PlanHasher(Sha256::new());
        h.add_bytes(domain.as_bytes());
        h
    }

    /// Adds one item: its JSON text.
    pub fn add(&mut self, item: &impl Serialize) -> &mut PlanHasher {
        // Our plan types serialize without fail (no map has non-string keys); should one
        // not, its error text still goes in, so the digest shows the item changed.
        let bytes = serde_json::to_vec(item).unwrap_or_else(|e| e.to_string().into_bytes());
        self.add_bytes(&bytes)
    }

    fn add_bytes(&mut self, bytes: &[u8]) -> &mut PlanHasher {
        self.0.update((bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
        self
    }

    /// The digest as 64 lowercase hex digits.
    pub fn hex(&self) -> String {
        self.0
            .clone()
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

/// The digests of several runs (page sizes of one report, shards of a merged one) as one: the
/// digest itself when there is one, else the digest of them sorted, so the order the runs
/// came in does not matter; `None` when there is none.
pub fn combine(parts: &[String]) -> Option<String> {
    match parts {
        [] => None,
        [one] => Some(one.clone()),
        many => {
            let mut sorted = many.to_vec();
            sorted.sort();
            let mut h = PlanHasher::new("combined");
            for p in &sorted {
                h.add(p);
            }
            Some(h.hex())
        }
    }
}

/// The first 16 hex digits of a digest (the summary line's short form; the JSON has all 64).
pub fn short(hex: &str) -> &str {
    hex.get(..16).unwrap_or(hex)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_domains_and_boundaries_count() {
        let of = |domain: &str, items: &[&str]| {
            let mut h = PlanHasher::new(domain);
            for i in items {
                h.add(i);
            }
            h.hex()
        };
        let a = of("x", &["ab", "c"]);
        assert_eq!(a.len(), 64);
        assert!(a.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(a, of("x", &["ab", "c"]));
        assert_ne!(a, of("x", &["a", "bc"]), "item boundaries");
        assert_ne!(a, of("x", &["c", "ab"]), "item order");
        assert_ne!(a, of("y", &["ab", "c"]), "domain");
        // SHA-256 of the 8-byte length 0 alone: the hash is the standard one
        let mut empty = PlanHasher(Sha256::new());
        empty.add_bytes(b"");
        assert_eq!(
            empty.hex(),
            "af5570f5a1810b7af78caf4bc70a660f0df51e42baf91d4de5b2328de0e83dfc"
        );
    }

    #[test]
    fn combining_ignores_the_order_and_keeps_a_single_digest() {
        let (a, b, c) = ("aa".to_string(), "bb".to_string(), "cc".to_string());
        assert_eq!(combine(&[]), None);
        assert_eq!(combine(std::slice::from_ref(&a)), Some(a.clone()));
        let abc = combine(&[a.clone(), b.clone(), c.clone()]);
        assert_eq!(abc, combine(&[c.clone(), a.clone(), b.clone()]));
        assert_ne!(abc, combine(&[a.clone(), b.clone()]));
        assert_ne!(
            combine(&[a.clone(), a.clone()]),
            combine(std::slice::from_ref(&a)),
            "a run merged twice is not the run once"
        );
        assert_eq!(short("0123456789abcdef0123"), "0123456789abcdef");
    }
}
