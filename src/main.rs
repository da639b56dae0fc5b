//! One binary, two faces: the playground in the browser (wasm32) and the `kubeloop` CLI natively.

#[cfg(target_arch = "wasm32")]
fn main() {
    kubeloop::ui::start();
}

/// The native CLI's allocator: faster than the system's for the simulation's many small
/// allocations (see Cargo.toml). `--features alloc-stats` counts bytes through it instead
/// (`kubeloop::heap_bytes`).
#[cfg(all(not(target_arch = "wasm32"), not(feature = "alloc-stats")))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = kubeloop::cli::main(&args, &mut std::io::stdout(), &mut std::io::stderr());
    std::process::exit(code);
}
