//! `StringMap`: labels, annotations, selectors and resource lists, as a sorted vector.
//!
//! Kubernetes' `map[string]string` fields hold a handful of entries. A `BTreeMap` allocates a
//! whole node for the first one (eleven slots: over 500 bytes natively for two labels), and a
//! pod carries several such maps in the store, in the watch history and in every rollout's
//! copies. A sorted `Vec` holds exactly what is there, iterates in the same key order, compares
//! and orders the same way, and reads and writes as the same JSON/YAML map. Lookups are binary
//! searches; the maps are small enough that inserts shifting a few entries cost nothing.

use std::fmt;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::shared_str::Str;
use crate::sort::StableSort;

/// Lexicographic byte order, the order of `<[u8]>::cmp` and so of `str`, found a word at a time:
/// the first differing word holds the first differing byte, which decides. The last word is read
/// where it ends, overlapping bytes already found equal, so a tail costs one read, not a loop.
pub fn cmp_bytes(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    let n = a.len().min(b.len());
    // Little-endian: the lowest differing bit of two words is in their first differing byte.
    let first_difference = |x: u64, y: u64, at: usize| {
        let k = at + ((x ^ y).trailing_zeros() / 8) as usize;
        a[k].cmp(&b[k])
    };
    if n >= 8 {
        let word =
            |s: &[u8], i: usize| u64::from_le_bytes(s[i..i + 8].try_into().expect("eight bytes"));
        let mut i = 0;
        while i + 8 <= n {
            let (x, y) = (word(a, i), word(b, i));
            if x != y {
                return first_difference(x, y, i);
            }
            i += 8;
        }
        if i < n {
            let (x, y) = (word(a, n - 8), word(b, n - 8));
            if x != y {
                return first_difference(x, y, n - 8);
            }
        }
    } else if n >= 4 {
        let half = |s: &[u8], i: usize| {
            u64::from(u32::from_le_bytes(
                s[i..i + 4].try_into().expect("four bytes"),
            ))
        };
        for i in [0, n - 4] {
            let (x, y) = (half(a, i), half(b, i));
            if x != y {
                return first_difference(x, y, i);
            }
        }
    } else if let Some(k) = (0..n).find(|&k| a[k] != b[k]) {
        return a[k].cmp(&b[k]);
    }
    a.len().cmp(&b.len())
}

/// A string-to-string map in key order (see the module docs for why not a `BTreeMap`).
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StringMap(Vec<(Str, Str)>);

/// Iterator over `(&key, &value)` pairs in key order, as `BTreeMap::iter` yields them.
pub type Iter<'a> =
    std::iter::Map<std::slice::Iter<'a, (Str, Str)>, fn(&'a (Str, Str)) -> (&'a Str, &'a Str)>;

fn pair_refs(p: &(Str, Str)) -> (&Str, &Str) {
    (&p.0, &p.1)
}

impl StringMap {
    /// An empty map (allocates nothing).
    pub const fn new() -> StringMap {
        StringMap(Vec::new())
    }

    fn find(&self, key: &str) -> Result<usize, usize> {
        // Labels are read on every selector match; see `cmp_bytes` for why not `str::cmp`.
        self.0
            .binary_search_by(|(k, _)| cmp_bytes(k.as_bytes(), key.as_bytes()))
    }

    /// The value under `key`.
    pub fn get(&self, key: &str) -> Option<&Str> {
        self.find(key).ok().map(|i| &self.0[i].1)
    }

    /// The value under `key`, to change in place.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Str> {
        self.find(key).ok().map(|i| &mut self.0[i].1)
    }

    /// Whether `key` is set.
    pub fn contains_key(&self, key: &str) -> bool {
        self.find(key).is_ok()
    }

    /// Sets `key`, returning the value it replaced.
    pub fn insert(&mut self, key: impl Into<Str>, value: impl Into<Str>) -> Option<Str> {
        self.insert_str(key.into(), value.into())
    }

    fn insert_str(&mut self, key: Str, value: Str) -> Option<Str> {
        match self.find(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, value)),
            Err(i) => {
                self.0.insert(i, (key, value));
                None
            }
        }
    }

    /// Unsets `key`, returning its value.
    pub fn remove(&mut self, key: &str) -> Option<Str> {
        self.find(key).ok().map(|i| self.0.remove(i).1)
    }

    /// How many keys are set.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when no key is set.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Entries in key order.
    pub fn iter(&self) -> Iter<'_> {
        self.0
            .iter()
            .map(pair_refs as fn(&(Str, Str)) -> (&Str, &Str))
    }
}

/// `map[key]`, for keys known to be there (a missing key panics, as with a `BTreeMap`).
impl std::ops::Index<&str> for StringMap {
    type Output = Str;
    fn index(&self, key: &str) -> &Str {
        match self.get(key) {
            Some(v) => v,
            None => panic!("no entry found for key {key:?}"),
        }
    }
}

impl fmt::Debug for StringMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<K: Into<Str>, V: Into<Str>> Extend<(K, V)> for StringMap {
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert_str(k.into(), v.into());
        }
    }
}

impl<K: Into<Str>, V: Into<Str>> FromIterator<(K, V)> for StringMap {
    /// Later duplicates win, as collecting into a `BTreeMap` does.
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> StringMap {
        from_pairs(
            iter.into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }
}

/// [`StringMap`]'s `from_iter` apart from its generic iterator, so the sort is compiled once.
fn from_pairs(mut pairs: Vec<(Str, Str)>) -> StringMap {
    // Stable: among equal keys the last one collected stays last, and is kept below.
    pairs.stable_sort_by(|a, b| a.0.cmp(&b.0));
    let mut out: Vec<(Str, Str)> = Vec::with_capacity(pairs.len());
    for p in pairs {
        match out.last_mut() {
            Some(last) if last.0 == p.0 => *last = p,
            _ => out.push(p),
        }
    }
    out.shrink_to_fit();
    StringMap(out)
}

impl<K: Into<Str>, V: Into<Str>, const N: usize> From<[(K, V); N]> for StringMap {
    fn from(pairs: [(K, V); N]) -> StringMap {
        pairs.into_iter().collect()
    }
}

impl IntoIterator for StringMap {
    type Item = (Str, Str);
    type IntoIter = std::vec::IntoIter<(Str, Str)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a StringMap {
    type Item = (&'a Str, &'a Str);
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl Serialize for StringMap {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for StringMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<StringMap, D::Error> {
        struct MapVisitor;
        impl<'de> Visitor<'de> for MapVisitor {
            type Value = StringMap;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map of strings to strings")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<StringMap, A::Error> {
                let mut pairs = Vec::with_capacity(access.size_hint().unwrap_or(0).min(64));
                while let Some((k, v)) = access.next_entry::<Str, Str>()? {
                    pairs.push((k, v));
                }
                Ok(from_pairs(pairs))
            }
        }
        d.deserialize_map(MapVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn it_behaves_like_a_btreemap_for_inserts_removals_order_and_duplicates() {
        let input = pairs(&[("b", "1"), ("a", "2"), ("c", "3"), ("a", "4")]);
        let ours: StringMap = input.clone().into_iter().collect();
        let theirs: BTreeMap<String, String> = input.into_iter().collect();
        let as_vec = |m: &StringMap| -> Vec<(String, String)> {
            m.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let want: Vec<(String, String)> = theirs.clone().into_iter().collect();
        assert_eq!(as_vec(&ours), want, "sorted, the last duplicate wins");
        let mut ours = ours;
        let mut theirs = theirs;
        assert_eq!(
            ours.insert("b", "9").map(String::from),
            theirs.insert("b".into(), "9".into())
        );
        assert_eq!(ours.insert("0", "x"), None);
        theirs.insert("0".into(), "x".into());
        assert_eq!(ours.remove("c").map(String::from), theirs.remove("c"));
        assert_eq!(ours.remove("zz"), None);
        assert_eq!(
            as_vec(&ours),
            theirs.into_iter().collect::<Vec<_>>(),
            "same entries in the same order"
        );
        assert_eq!(ours.get("a").map(|v| v.as_str()), Some("4"));
        assert!(ours.contains_key("0") && !ours.contains_key("c"));
    }

    #[test]
    fn it_orders_and_compares_as_a_btreemap_of_the_same_entries() {
        let maps = [
            pairs(&[]),
            pairs(&[("a", "1")]),
            pairs(&[("a", "1"), ("b", "1")]),
            pairs(&[("a", "2")]),
            pairs(&[("b", "0")]),
        ];
        for x in &maps {
            for y in &maps {
                let (ox, oy): (StringMap, StringMap) = (
                    x.clone().into_iter().collect(),
                    y.clone().into_iter().collect(),
                );
                let (tx, ty): (BTreeMap<_, _>, BTreeMap<_, _>) = (
                    x.clone().into_iter().collect(),
                    y.clone().into_iter().collect(),
                );
                assert_eq!(ox.cmp(&oy), tx.cmp(&ty), "{x:?} vs {y:?}");
            }
        }
    }

    #[test]
    fn it_reads_and_writes_the_same_json_as_a_btreemap() {
        let m: StringMap = serde_json::from_str(r#"{"z": "1", "a": "2"}"#).expect("a map");
        assert_eq!(
            serde_json::to_string(&m).expect("json"),
            r#"{"a":"2","z":"1"}"#
        );
        let err = serde_json::from_str::<StringMap>(r#"{"a": 1}"#).expect_err("not a string");
        assert!(err.to_string().contains("expected a string"), "{err}");
        assert_eq!(format!("{m:?}"), r#"{"a": "2", "z": "1"}"#);
    }
}
