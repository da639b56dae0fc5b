// Loads the JavaScript engine for learners' controllers (src/engine.rs, built by trunk as the
// second wasm file beside the app's) and sets window.kubeloopEngine, the object the app's bridge
// (src/ui/engine.rs) calls synchronously; and, on the first "Check my controller", the checker
// (src/lab.rs, a third file) as window.kubeloopLab. www/boot.js imports this module only when the
// app asks (window.kubeloopLoadEngine, window.kubeloopLoadLab): neither is in the first paint.
//
// Each call is wrapped: if the engine module traps (a bug in it, or the browser runs out of
// memory), the call answers undefined and the app reports "the engine module stopped working"
// at the controller, instead of the exception unwinding through the app's own wasm.

const PROTOCOL = 1;

function guarded(f) {
  return (...args) => {
    try {
      return f(...args);
    } catch (e) {
      console.error('kubeloop: the JavaScript engine module failed', e);
      return undefined;
    }
  };
}

/** Imports and starts one of trunk's extra wasm builds, which sit at the site root, one directory
 *  above this file (dist/www/). */
async function start(name) {
  const base = new URL('../', import.meta.url);
  const bindings = await import(new URL(`${name}.js`, base).href);
  await bindings.default({ module_or_path: new URL(`${name}_bg.wasm`, base) });
  if (bindings.protocol() !== PROTOCOL) {
    throw new Error(`${name} speaks protocol ${bindings.protocol()}, the page ${PROTOCOL}: reload the page`);
  }
  return bindings;
}

/** The checker (src/lab.rs): sets window.kubeloopLab. */
export async function loadLab() {
  const bindings = await start('kubeloop-lab');
  window.kubeloopLab = { check: guarded(bindings.check) };
}

export async function load() {
  const bindings = await start('kubeloop-engine');
  window.kubeloopEngine = {
    check: guarded(bindings.check),
    start: guarded(bindings.start),
    call: guarded(bindings.call),
    drop_instance: guarded(bindings.drop_instance),
  };
}
