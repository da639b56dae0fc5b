// Starts the Kubeloop app. This is the loader trunk would otherwise inline into index.html, kept
// as a file (Trunk.toml's pattern_script points here) so the page runs under a Content-Security-
// Policy without 'unsafe-inline' or per-build hashes: script-src 'self' 'wasm-unsafe-eval'.
// The script tag carries the hashed file names trunk chose for this build.
const tag = document.querySelector('script[data-kubeloop-js]');
const bindings = await import(tag.dataset.kubeloopJs);
const wasm = await bindings.default({ module_or_path: tag.dataset.kubeloopWasm });
window.wasmBindings = bindings;
dispatchEvent(new CustomEvent('TrunkApplicationStarted', { detail: { wasm } }));
