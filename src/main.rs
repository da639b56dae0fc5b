//! One binary, two faces: the playground in the browser (wasm32) and the `kubeloop` CLI natively.

#[cfg(target_arch = "wasm32")]
fn main() {
    kubeloop::ui::start();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = kubeloop::cli::main(&args, &mut std::io::stdout(), &mut std::io::stderr());
    std::process::exit(code);
}
