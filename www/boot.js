// Starts the Kubeloop app. This is the loader trunk would otherwise inline into index.html, kept
// as a file (Trunk.toml's pattern_script points here) so the page runs under a Content-Security-
// Policy without 'unsafe-inline' or per-build hashes: script-src 'self' 'wasm-unsafe-eval'.
// The script tag carries the hashed file names trunk chose for this build.
//
// The crash screen (www/crash.js) is loaded first, so it is there before any Rust code runs: the
// panic hook (src/ui/crash.rs) hands it every panic, and a start that fails (the wasm did not
// download, the browser cannot run it) shows a message here instead of a blank page.

/** Last resort when even crash.js is missing: one line of text, built without HTML parsing. */
function plainFailure(error) {
  const p = document.createElement('p');
  p.setAttribute('role', 'alert');
  p.className = 'kl-boot-plain';
  p.textContent = `Kubeloop could not start: ${error && error.message ? error.message : String(error)}. Reload the page to try again.`;
  document.body.append(p);
}

// The crash screen and the bindings load at once (one round trip, not two, before the wasm can
// start compiling); Rust runs only once both are in.
const tag = document.querySelector('script[data-kubeloop-js]');
const crashLoad = import('./crash.js').catch((e) => {
  console.error('kubeloop: the crash screen (www/crash.js) could not be loaded', e);
  return null;
});
const bindingsLoad = tag
  ? import(tag.dataset.kubeloopJs)
  : Promise.reject(new Error('the page has no script tag naming the app (see Trunk.toml, pattern_script)'));
// Awaited below, after the crash screen: no "unhandled rejection" in the meantime.
bindingsLoad.catch(() => {});
const crash = await crashLoad;

// The engine of learners' controllers, fetched only when the app first needs it
// (src/ui/engine.rs); a promise, so two callers share one download.
let engineLoad = null;
window.kubeloopLoadEngine = () => {
  engineLoad ??= import('./engine-loader.js').then((m) => m.load());
  return engineLoad;
};
// The checker of learners' controllers, fetched on the first "Check my controller".
let labLoad = null;
window.kubeloopLoadLab = () => {
  labLoad ??= import('./engine-loader.js').then((m) => m.loadLab());
  return labLoad;
};

try {
  const bindings = await bindingsLoad;
  const wasm = await bindings.default({ module_or_path: tag.dataset.kubeloopWasm });
  window.wasmBindings = bindings;
  dispatchEvent(new CustomEvent('TrunkApplicationStarted', { detail: { wasm } }));
} catch (e) {
  if (crash) crash.bootFailed(e);
  else {
    console.error('kubeloop: the app could not start', e);
    plainFailure(e);
  }
}
