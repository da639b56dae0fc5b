//! The simulation's only source of randomness: one seed, split into independent named streams.

/// A small, fast, seedable generator (SplitMix64). Each component draws from its own stream so
/// that adding a node or a controller does not reshuffle every other decision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator seeded directly.
    pub fn new(seed: u64) -> Rng {
        Rng {
            state: seed ^ 0x9E37_79B9_7F4A_7C15,
        }
    }

    /// An independent stream derived from a root seed and a stable name (FNV-1a of the name).
    pub fn stream(seed: u64, name: &str) -> Rng {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in name.bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        let mut r = Rng::new(seed ^ h.rotate_left(17));
        r.next_u64();
        r
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Skips `n` draws of [`Rng::next_u64`] in O(1): SplitMix64's state only ever adds a
    /// constant, so a caller that knows how many draws it would throw away (the world's watch
    /// latencies for components that will not hear of an event) can jump over them.
    pub fn skip(&mut self, n: u64) {
        self.state = self
            .state
            .wrapping_add(n.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    }

    /// A uniform integer in `lo..=hi`. Draws exactly one value when `hi > lo`, none otherwise
    /// (the world relies on this to skip draws with [`Rng::skip`]).
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        lo + self.next_u64() % (hi - lo + 1)
    }

    /// A uniform float in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// `n` characters from Kubernetes' safe alphabet (no vowels, no look-alikes), as
    /// `generateName` suffixes and pod-template hashes use.
    pub fn safe_string(&mut self, n: usize) -> String {
        const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
        (0..n)
            .map(|_| ALPHABET[(self.next_u64() % ALPHABET.len() as u64) as usize] as char)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_and_name_give_the_same_stream() {
        let a: Vec<u64> = (0..5)
            .map({
                let mut r = Rng::stream(7, "scheduler");
                move |_| r.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..5)
            .map({
                let mut r = Rng::stream(7, "scheduler");
                move |_| r.next_u64()
            })
            .collect();
        assert_eq!(a, b);
    }

    #[test]
    fn different_names_give_different_streams() {
        assert_ne!(
            Rng::stream(7, "a").next_u64(),
            Rng::stream(7, "b").next_u64()
        );
    }

    #[test]
    fn skipping_n_draws_lands_where_n_draws_would() {
        let mut a = Rng::stream(3, "latency");
        let mut b = a.clone();
        for _ in 0..1000 {
            a.range(5, 20);
        }
        b.skip(1000);
        assert_eq!(a, b);
        assert_eq!(a.range(5, 20), b.range(5, 20));
    }

    #[test]
    fn safe_strings_use_only_the_safe_alphabet() {
        let s = Rng::new(1).safe_string(100);
        assert!(s.chars().all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c)));
    }
}
