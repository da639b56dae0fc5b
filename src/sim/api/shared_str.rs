//! `Str`: an immutable string field that copies as a pointer, for the values objects repeat.
//!
//! A 10,000-pod cluster holds each pod several times over (the store, the watch history's older
//! versions, requests in flight), and most of a pod's fifty-odd strings are the same few values:
//! "True", "Ready", "default", "apps/v1", the template's image. As `String`s each is its own
//! allocation, copied again on every write, and the page's allocator adds a header and rounding
//! to each. A `Str` is one pointer (an `arcstr::ArcStr`: a `String` is three words) to either one
//! of the well-known words below, kept in the binary (no allocation, no count), or a
//! reference-counted text: copying an object copies pointers, and the strings a template gives
//! its pods are held once. It reads, compares, orders, hashes and serialises exactly as the text
//! it holds, so nothing observable changes.

use std::borrow::Borrow;
use std::fmt;

use arcstr::{literal, ArcStr};

use serde::de::{Deserialize, Deserializer, Visitor};
use serde::{Serialize, Serializer};

use super::string_map::cmp_bytes;

/// Declares the well-known words once: as the shared strings [`WELL_KNOWN`], and as the texts
/// [`WELL_KNOWN_TABLE`] is built from when the program is compiled.
macro_rules! well_known_words {
    ($(#[$doc:meta])* $($word:literal),* $(,)?) => {
        $(#[$doc])*
        static WELL_KNOWN: &[ArcStr] = &[$(literal!($word)),*];
        const WELL_KNOWN_TEXT: &[&str] = &[$($word),*];
    };
}

well_known_words![
    /// The values that recur across objects, in byte order ([`well_known`] finds them). A value
    /// here costs no allocation wherever it is written, decoded or copied; any other is shared
    /// once copied. Condition types, statuses and reasons, phases, QoS classes, the namespaces,
    /// the API versions and kinds owner references name, the defaults every pod spec gets, and
    /// the sources and reasons of the Events every pod gets.
    "",
    "Always",
    "Available",
    "BestEffort",
    "Burstable",
    "ClusterFirst",
    "Complete",
    "ContainerCreating",
    "ContainersReady",
    "Created",
    "CronJob",
    "DaemonSet",
    "Deployment",
    "DiskPressure",
    "DisruptionTarget",
    "Exists",
    "Failed",
    "False",
    "File",
    "Guaranteed",
    "IfNotPresent",
    "Initialized",
    "Job",
    "Killing",
    "KubeletHasNoDiskPressure",
    "KubeletHasSufficientMemory",
    "KubeletHasSufficientPID",
    "KubeletNotReady",
    "KubeletReady",
    "MemoryPressure",
    "MinimumReplicasAvailable",
    "NewReplicaSetAvailable",
    "NoExecute",
    "NoSchedule",
    "Node",
    "NodeStatusUnknown",
    "Normal",
    "PIDPressure",
    "Pending",
    "Pod",
    "PodCompleted",
    "PodReadyToStartContainers",
    "PodScheduled",
    "Progressing",
    "Pulled",
    "Pulling",
    "Ready",
    "ReplicaFailure",
    "ReplicaSet",
    "ReplicaSetUpdated",
    "Running",
    "ScalingReplicaSet",
    "Scheduled",
    "Started",
    "StatefulSet",
    "Succeeded",
    "SuccessfulCreate",
    "SuccessfulDelete",
    "TCP",
    "True",
    "Unknown",
    "Unschedulable",
    "Warning",
    "apps/v1",
    "batch/v1",
    "default",
    "default-scheduler",
    "deployment-controller",
    "kube-node-lease",
    "kube-public",
    "kube-system",
    "kubelet",
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
    "replicaset-controller",
    "v1",
];

/// An immutable string: a well-known word or a shared one (see the module docs).
#[derive(Clone)]
pub struct Str(ArcStr);

impl Str {
    /// The empty string (allocates nothing).
    pub const EMPTY: Str = Str(ArcStr::new());

    /// The text.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// Whether `a` and `b` are the same allocation (or the same well-known word).
    pub fn ptr_eq(a: &Str, b: &Str) -> bool {
        ArcStr::ptr_eq(&a.0, &b.0)
    }

    /// `text`, as `prior` when that holds the same text: a status written again shares the
    /// strings of the one it replaces instead of allocating its own copies.
    pub fn reuse(prior: Option<&Str>, text: &str) -> Str {
        match prior {
            Some(p) if p.as_str() == text => p.clone(),
            _ => Str::from(text),
        }
    }

    /// `n` in decimal (a resourceVersion), formatted without an intermediate `String`.
    pub fn decimal(n: u64) -> Str {
        Str(ArcStr::from(crate::sim::text::decimal_into(
            &mut [0; 20],
            n,
        )))
    }

    /// `parts` joined: the well-known word they spell, or a shared text allocated once, where
    /// `Str::from(concat(..))` allocated the joined `String`, copied it and dropped it (every
    /// Event's name and a kubelet's reporting instance were two allocations each).
    pub fn concat(parts: &[&str]) -> Str {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let fill = |buf: &mut [u8]| {
            let mut at = 0;
            for p in parts {
                buf[at..at + p.len()].copy_from_slice(p.as_bytes());
                at += p.len();
            }
        };
        if len <= WELL_KNOWN_MAX_LEN {
            let mut buf = [0u8; WELL_KNOWN_MAX_LEN];
            fill(&mut buf[..len]);
            // Whole `str`s joined are UTF-8; the fallback only keeps a panic out of the path.
            return std::str::from_utf8(&buf[..len]).map_or_else(|_| Str::EMPTY, Str::new);
        }
        Str(ArcStr::init_with(len, fill).unwrap_or_default())
    }

    /// `s` as the well-known word, or a new shared text.
    fn new(s: &str) -> Str {
        Str(well_known(s.as_bytes()).map_or_else(|| ArcStr::from(s), |i| WELL_KNOWN[i].clone()))
    }
}

/// No well-known word is longer (checked where the table is laid out).
const WELL_KNOWN_MAX_LEN: usize = 32;

/// Slots of the table that finds a well-known word: a power of two, well over twice as many as
/// there are words, so a text that is none of them mostly meets an empty slot at once.
const WELL_KNOWN_SLOTS: usize = 256;

/// Where a text's search in the table starts: a mix of its length and first and last bytes, which
/// tell the well-known words apart well enough that few share a start.
const fn well_known_slot(s: &[u8]) -> usize {
    let n = s.len();
    let (first, last) = if n == 0 { (0, 0) } else { (s[0], s[n - 1]) };
    let mixed = (n as u32) << 16 | (first as u32) << 8 | last as u32;
    (mixed.wrapping_mul(0x9E37_79B1) >> 24) as usize % WELL_KNOWN_SLOTS
}

/// Each slot holds the index in [`WELL_KNOWN`] of the word placed there, or `u8::MAX`: open
/// addressing with linear probing, laid out when the program is compiled.
static WELL_KNOWN_TABLE: [u8; WELL_KNOWN_SLOTS] = {
    assert!(WELL_KNOWN_TEXT.len() < u8::MAX as usize);
    let mut table = [u8::MAX; WELL_KNOWN_SLOTS];
    let mut i = 0;
    while i < WELL_KNOWN_TEXT.len() {
        assert!(WELL_KNOWN_TEXT[i].len() <= WELL_KNOWN_MAX_LEN);
        let mut at = well_known_slot(WELL_KNOWN_TEXT[i].as_bytes());
        while table[at] != u8::MAX {
            at = (at + 1) % WELL_KNOWN_SLOTS;
        }
        table[at] = i as u8;
        i += 1;
    }
    table
};

/// The index in [`WELL_KNOWN`] of `s`, if it is one. Strings are made from text hundreds of times
/// per pod (decoded objects, statuses, Events): a binary search over the words was 7% of the
/// instructions converging 1,000 replicas; the table finds a word, or that there is none, in one
/// or two probes.
fn well_known(s: &[u8]) -> Option<usize> {
    // Only short strings can be one; names and uids skip the search.
    if s.len() > WELL_KNOWN_MAX_LEN {
        return None;
    }
    let mut at = well_known_slot(s);
    loop {
        let i = usize::from(WELL_KNOWN_TABLE[at]);
        if i == usize::from(u8::MAX) {
            return None;
        }
        if WELL_KNOWN[i].as_bytes() == s {
            return Some(i);
        }
        at = (at + 1) % WELL_KNOWN_SLOTS;
    }
}

impl Default for Str {
    fn default() -> Str {
        Str::EMPTY
    }
}

impl std::ops::Deref for Str {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Str {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for Str {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl From<&str> for Str {
    fn from(s: &str) -> Str {
        Str::new(s)
    }
}

impl From<String> for Str {
    fn from(s: String) -> Str {
        Str::new(&s)
    }
}

impl From<&String> for Str {
    fn from(s: &String) -> Str {
        Str::from(s.as_str())
    }
}

impl From<Str> for String {
    fn from(s: Str) -> String {
        s.as_str().to_owned()
    }
}

impl PartialEq for Str {
    fn eq(&self, other: &Str) -> bool {
        Str::ptr_eq(self, other) || self.as_str() == other.as_str()
    }
}

impl Eq for Str {}

impl PartialEq<str> for Str {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Str {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for Str {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other.as_str()
    }
}

impl PartialEq<Str> for str {
    fn eq(&self, other: &Str) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<Str> for &str {
    fn eq(&self, other: &Str) -> bool {
        *self == other.as_str()
    }
}

impl PartialEq<Str> for String {
    fn eq(&self, other: &Str) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Ord for Str {
    fn cmp(&self, other: &Str) -> std::cmp::Ordering {
        // One allocation is one text: keys that share their namespace ("default" is a
        // well-known word) settle that part of a comparison without reading it.
        if Str::ptr_eq(self, other) {
            return std::cmp::Ordering::Equal;
        }
        cmp_bytes(self.as_bytes(), other.as_bytes())
    }
}

impl PartialOrd for Str {
    fn partial_cmp(&self, other: &Str) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl std::hash::Hash for Str {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

impl fmt::Display for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

impl fmt::Debug for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl Serialize for Str {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Str {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Str, D::Error> {
        struct StrVisitor;
        impl Visitor<'_> for StrVisitor {
            type Value = Str;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Str, E> {
                Ok(Str::from(v))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Str, E> {
                Ok(Str::from(v))
            }
        }
        d.deserialize_str(StrVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_well_known_words_are_in_byte_order_and_each_is_found() {
        for pair in WELL_KNOWN.windows(2) {
            assert!(pair[0].as_bytes() < pair[1].as_bytes(), "{pair:?}");
        }
        for w in WELL_KNOWN {
            assert!(ArcStr::is_static(&Str::from(w.as_str()).0), "{w}");
        }
    }

    #[test]
    fn texts_that_are_no_well_known_word_are_not_taken_for_one() {
        for text in [
            "Tru",
            "True ",
            "true",
            "Truf",
            "Ready2",
            "v2",
            "defaults",
            "kube-system2",
            "web-8b4ddd895-22vg4",
            "10.244.0.7",
            "node-1",
            "x",
            "ContainersReadx",
        ] {
            assert_eq!(well_known(text.as_bytes()), None, "{text}");
        }
    }

    #[test]
    fn a_well_known_word_allocates_nothing_and_any_other_text_is_shared_by_its_copies() {
        assert!(ArcStr::is_static(&Str::from(String::from("True")).0));
        let name = Str::from("web-8b4ddd895-22vg4");
        let copy = name.clone();
        assert!(!ArcStr::is_static(&name.0));
        assert!(Str::ptr_eq(&name, &copy));
    }

    #[test]
    fn joined_parts_read_as_their_concatenation_and_a_well_known_result_is_the_word() {
        let long = "web-8b4ddd895-22vg4.187a3c1f00000000-and-more-than-thirty-two-bytes";
        for parts in [
            &[][..],
            &["", ""][..],
            &["web-8b4ddd895-22vg4", ".", "187a3c1f00000000"][..],
            &[long, "-", "kind-worker"][..],
            &["é", "ü-", "ñ"][..],
        ] {
            let joined = Str::concat(parts);
            assert_eq!(
                joined,
                crate::sim::text::concat(parts).as_str(),
                "{parts:?}"
            );
        }
        let word = Str::concat(&["apps", "/v1"]);
        assert!(
            ArcStr::is_static(&word.0),
            "no allocation for a well-known word"
        );
        assert!(Str::ptr_eq(&word, &Str::from("apps/v1")));
        assert!(!ArcStr::is_static(
            &Str::concat(&["kubelet", "-", "kind-worker"]).0
        ));
    }

    #[test]
    fn reusing_keeps_the_prior_text_only_when_it_is_the_same() {
        let prior = Str::from(String::from("10.244.7.19"));
        let same = Str::reuse(Some(&prior), "10.244.7.19");
        assert!(Str::ptr_eq(&same, &prior), "the prior copy, shared");
        let other = Str::reuse(Some(&prior), "10.244.7.20");
        assert_eq!(other, "10.244.7.20");
        assert!(!Str::ptr_eq(&other, &prior));
        assert_eq!(Str::reuse(None, "10.244.7.19"), prior);
    }

    #[test]
    fn a_str_and_an_absent_one_take_one_pointer() {
        assert_eq!(std::mem::size_of::<Str>(), std::mem::size_of::<usize>());
        assert_eq!(
            std::mem::size_of::<Option<Str>>(),
            std::mem::size_of::<usize>()
        );
    }

    #[test]
    fn a_str_compares_orders_prints_and_serialises_as_its_text() {
        let a = Str::from("Ready");
        let b = Str::from("ready-b");
        assert_eq!(a, "Ready");
        assert_eq!("Ready", a);
        assert_eq!(a, String::from("Ready"));
        assert_eq!(a.cmp(&b), "Ready".cmp("ready-b"));
        assert_eq!(format!("{a} {a:?}"), "Ready \"Ready\"");
        for n in [0, 7, 10, 10_599, u64::MAX] {
            assert_eq!(Str::decimal(n), n.to_string());
        }
        assert_eq!(serde_json::to_string(&b).unwrap(), "\"ready-b\"");
        let back: Str = serde_json::from_str("\"ready-b\"").unwrap();
        assert_eq!(back, b);
        let mut set = std::collections::BTreeSet::new();
        set.insert(b.clone());
        assert!(set.contains("ready-b"));
    }
}
