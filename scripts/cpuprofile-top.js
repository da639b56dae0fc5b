#!/usr/bin/env node
// Sums a DevTools CPU profile (.cpuprofile, e.g. from `browser-bench.js --cpuprofile DIR`) by
// function: self time (the function on top of the stack) and inclusive time (anywhere on it, once
// per sample), the wasm's functions by the names wasm-opt -g kept. A perf-report for the page.
// Usage: node scripts/cpuprofile-top.js FILE [--top N] [--grep TEXT] [--callers NAME | --callees NAME]
//   --grep TEXT     only rows whose function name contains TEXT
//   --callers NAME  the time under each direct caller of the functions named exactly NAME
//   --callees NAME  the time under each function NAME calls directly (`(self)`: NAME's own)
'use strict';
const fs = require('fs');

const args = process.argv.slice(2);
const opt = (flag, fallback) => { const i = args.indexOf(flag); return i >= 0 ? args[i + 1] : fallback; };
const file = args.find((a, i) => !a.startsWith('--') && (i === 0 || !args[i - 1].startsWith('--')));
if (!file) { console.error('usage: cpuprofile-top.js FILE [--top N] [--grep TEXT] [--callers NAME | --callees NAME]'); process.exit(2); }
const top = Number(opt('--top', 40));
const grep = opt('--grep', '');
const callersOf = opt('--callers', '');
const calleesOf = opt('--callees', '');

const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
// Rust's legacy mangling leaves a `::h<16 hex>` hash on every name: one row per function, not per
// instantiation hash.
const name = (frame) => (frame.functionName || `(anonymous ${frame.url.split('/').pop()}:${frame.lineNumber})`)
  .replace(/::h[0-9a-f]{16}$/, '');
const byId = new Map();
const parent = new Map();
for (const n of profile.nodes) {
  byId.set(n.id, n);
  for (const c of n.children || []) parent.set(c, n.id);
}

const self = new Map();
const incl = new Map();
const callers = new Map();
const callees = new Map();
let total = 0;
profile.samples.forEach((id, i) => {
  // A sample stands for the time until the next one.
  const dt = (profile.timeDeltas[i + 1] ?? 0) / 1000;
  total += dt;
  const leaf = name(byId.get(id).callFrame);
  self.set(leaf, (self.get(leaf) || 0) + dt);
  // Each row once per sample, however often recursion puts it on the stack.
  const seen = new Map([[incl, new Set()], [callers, new Set()], [callees, new Set()]]);
  const add = (map, key) => {
    if (seen.get(map).has(key)) return;
    seen.get(map).add(key);
    map.set(key, (map.get(key) || 0) + dt);
  };
  if (leaf === calleesOf) add(callees, '(self)');
  for (let at = id; at !== undefined; at = parent.get(at)) {
    const fn = name(byId.get(at).callFrame);
    const caller = parent.has(at) ? name(byId.get(parent.get(at)).callFrame) : null;
    if (fn === callersOf && caller !== null) add(callers, caller);
    if (caller === calleesOf && fn !== calleesOf) add(callees, fn);
    add(incl, fn);
  }
});

const table = (title, map) => {
  console.log(`\n${title} (of ${total.toFixed(0)} ms)`);
  [...map].filter(([fn]) => fn.includes(grep)).sort((a, b) => b[1] - a[1]).slice(0, top)
    .forEach(([fn, ms]) => console.log(`${ms.toFixed(0).padStart(8)} ms ${(100 * ms / total).toFixed(1).padStart(5)}%  ${fn}`));
};
if (callersOf) table(`callers of ${callersOf}`, callers);
else if (calleesOf) table(`callees of ${calleesOf}`, callees);
else { table('self', self); table('inclusive', incl); }
