//! Kubeloop: a Kubernetes reconciliation playground. `sim` is the deterministic core; `ui` the browser app.

pub mod scratch;
pub mod sim;
/// Stable sorting and B-tree collecting with one copy of the sort in the web build (download size).
pub mod sort;
/// Ordered maps and sets of a few entries as sorted vectors (one small copy per type in the web build).
pub mod vec_map;

#[cfg(not(target_arch = "wasm32"))]
pub mod cli;

/// With the `alloc-stats` feature, every allocation is counted (one atomic add per allocation and
/// free) over the allocator the build uses otherwise: the CLI's (src/main.rs) natively, Rust's
/// default in wasm. Only measurement builds have it, so timed runs go without the counting.
#[cfg(all(feature = "alloc-stats", not(target_arch = "wasm32")))]
#[global_allocator]
static HEAP: cap::Cap<mimalloc::MiMalloc> = cap::Cap::new(mimalloc::MiMalloc, usize::MAX);
#[cfg(all(feature = "alloc-stats", target_arch = "wasm32"))]
#[global_allocator]
static HEAP: cap::Cap<std::alloc::System> = cap::Cap::new(std::alloc::System, usize::MAX);

/// Live heap bytes of the whole program, when the counting allocator is built in
/// (`kubeloop bench --memory`, one-off measurements in tests built with `--features alloc-stats`).
pub fn heap_bytes() -> Option<usize> {
    #[cfg(feature = "alloc-stats")]
    {
        Some(HEAP.allocated())
    }
    #[cfg(not(feature = "alloc-stats"))]
    {
        None
    }
}

/// The most live heap bytes seen at once, when the counting allocator is built in.
pub fn heap_peak_bytes() -> Option<usize> {
    #[cfg(feature = "alloc-stats")]
    {
        Some(HEAP.max_allocated())
    }
    #[cfg(not(feature = "alloc-stats"))]
    {
        None
    }
}

/// Pure view logic for the playground (native too, so it is unit-tested without a browser).
pub mod viewmodel;

#[cfg(target_arch = "wasm32")]
pub mod ui;
