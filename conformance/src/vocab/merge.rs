//! Counters that add up: runs into a cell, cells into a row, report shards into one report.

use std::collections::BTreeMap;

/// Adds another value of the same kind into this one (numbers add, maps add per key, lists
/// append).
pub trait Merge: Sized {
    /// Adds `other` into `self`.
    fn absorb(&mut self, other: Self);

    /// All of `items` added into the first; `None` when there is none.
    fn merged(items: impl IntoIterator<Item = Self>) -> Option<Self> {
        items.into_iter().reduce(|mut a, b| {
            a.absorb(b);
            a
        })
    }
}

impl Merge for u64 {
    fn absorb(&mut self, other: Self) {
        *self += other;
    }
}

impl Merge for f64 {
    fn absorb(&mut self, other: Self) {
        *self += other;
    }
}

impl<T: Merge, const N: usize> Merge for [T; N] {
    fn absorb(&mut self, other: Self) {
        for (a, b) in self.iter_mut().zip(other) {
            a.absorb(b);
        }
    }
}

impl<T> Merge for Vec<T> {
    fn absorb(&mut self, other: Self) {
        self.extend(other);
    }
}

impl<K: Ord, V: Merge + Default> Merge for BTreeMap<K, V> {
    fn absorb(&mut self, other: Self) {
        for (k, v) in other {
            self.entry(k).or_default().absorb(v);
        }
    }
}

/// `impl Merge for $t` that merges the listed fields (the others keep the first value's).
macro_rules! merge_fields {
    ($t:ty: $($f:ident),+ $(,)?) => {
        impl $crate::vocab::merge::Merge for $t {
            fn absorb(&mut self, other: Self) {
                $($crate::vocab::merge::Merge::absorb(&mut self.$f, other.$f);)+
            }
        }
    };
}
pub(crate) use merge_fields;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_add_maps_add_per_key_lists_append() {
        let mut m: BTreeMap<&str, [u64; 2]> = [("a", [1, 2])].into_iter().collect();
        m.absorb([("a", [10, 20]), ("b", [3, 4])].into_iter().collect());
        assert_eq!(m, [("a", [11, 22]), ("b", [3, 4])].into_iter().collect());
        assert_eq!(Vec::merged([vec![1], vec![2, 3]]), Some(vec![1, 2, 3]));
        assert_eq!(<u64 as Merge>::merged([]), None);
    }
}
