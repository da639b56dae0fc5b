//! Buffers a pass keeps for the next one, when what it puts in them borrows what it reads.
//!
//! A pass over 10,000 pods collects 10,000 references to them. Allocated fresh at each pass, such
//! a buffer comes from memory the allocator handed back to the system since the pass before, and
//! natively the kernel zeroes it again, 2 MB huge page by huge page: two fifths of a ReplicaSet's
//! scale-down pass at 10,000 pods (docs/dev/performance.md). A pass cannot keep a `Vec<&'a Pod>`
//! past its `'a`, but an empty vector borrows nothing, so its allocation can be kept.

/// The allocation of a vector of references, kept empty between passes.
pub struct Recycled<T: ?Sized + 'static> {
    empty: Vec<&'static T>,
}

impl<T: ?Sized + 'static> Recycled<T> {
    /// The kept allocation, for references of this pass (a new vector the first time).
    pub fn take<'a>(&mut self) -> Vec<&'a T> {
        relabel(std::mem::take(&mut self.empty))
    }

    /// Keeps `v`'s allocation for the next pass (its references are dropped).
    pub fn keep(&mut self, v: Vec<&T>) {
        self.empty = relabel(v);
    }
}

/// Empties `v` and returns its allocation typed for references of another lifetime: a collect
/// from a vector into a vector of the same layout reuses the allocation (std's in-place
/// iteration; a test checks that it still does).
fn relabel<'b, T: ?Sized>(mut v: Vec<&T>) -> Vec<&'b T> {
    v.clear();
    v.into_iter()
        .map(|_| unreachable!("the vector is empty"))
        .collect()
}

impl<T: ?Sized + 'static> Default for Recycled<T> {
    fn default() -> Self {
        Self { empty: Vec::new() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_vector_lends_the_same_allocation_to_the_next_pass() {
        let mut kept: Recycled<str> = Recycled::default();
        let first_pass = vec![String::from("a"), String::from("b")];
        let mut v = kept.take();
        v.extend(first_pass.iter().map(String::as_str));
        v.reserve(1000);
        let (ptr, cap) = (v.as_ptr() as usize, v.capacity());
        kept.keep(v);
        drop(first_pass);
        assert_eq!(kept.empty.capacity(), cap);
        let second_pass = [String::from("c")];
        let mut v = kept.take();
        assert!(v.is_empty());
        v.push(&second_pass[0]);
        assert_eq!((v.as_ptr() as usize, v.capacity()), (ptr, cap));
        assert_eq!(v, ["c"]);
    }
}
