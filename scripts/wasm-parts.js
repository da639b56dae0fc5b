#!/usr/bin/env node
// What each part of the page's wasm costs (`make wasm-parts`): reads `twiggy top -f csv` of a
// wasm built with v0 symbol mangling (which names the types of generic instantiations) on
// standard input, and prints the code and data bytes by part: the simulation's modules, the UI,
// the page model, and the libraries and generic std code they instantiate. Sizes are before
// wasm-bindgen and wasm-opt (the download is that after wasm-opt -Oz, gzip'd: the shares carry
// over roughly, the bytes do not).
'use strict';
const fs = require('fs');

// One CSV field list per line; twiggy quotes names that hold commas or quotes.
function parseCsvLine(line) {
  const out = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') { field += '"'; i++; }
      else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') { out.push(field); field = ''; }
    else field += ch;
  }
  out.push(field);
  return out;
}

// The part a function or data segment belongs to, or null for sections the build strips (the
// name section, wasm-bindgen's descriptors). First the libraries by name, anywhere in it (their
// generic code instantiated for our types is theirs: it goes when they go), then our modules by
// the self type or function path the name starts with.
const SIM = [
  [/^controllers/, 'sim: controllers'],
  [/^kubectl/, 'sim: kubectl'],
  [/^api/, 'sim: API server, types, validation, defaults'],
  [/^(input|scenario|examples)/, 'sim: manifest input, scenarios, lessons'],
  [/^(kro|cel)/, 'sim: kro and CEL'],
  [/^script/, 'sim: the script engine (its bridge)'],
  [/^/, 'sim: world, machinery, faults, sessions, runs'],
];
function classify(raw) {
  const name = raw.replace(/\[[0-9a-f]{16}\]/g, '');
  if (name.startsWith('"function names"') || name.startsWith('function names') ||
      name.startsWith('custom section')) return null;
  if (name.startsWith('data segment')) return 'read-only data (tables, strings, schemas, lesson texts)';
  const head = name.replace(/^[<&]+/, '').replace(/^mut /, '');
  if (/saphyr|granit/.test(name)) return 'YAML parser (serde-saphyr, granit-parser)';
  if (name.includes('annotate_snippets')) return 'annotate-snippets (the YAML parser\'s error rendering)';
  if (name.includes('serde_json') && !head.startsWith('kubeloop')) return 'serde_json';
  if (/\bserde(_core)?::/.test(name)) {
    return name.includes('StrictDe') ? 'serde: the strict decoder and what it decodes'
      : 'serde: other (de)serialize impls';
  }
  if (/^(yew|implicit_clone|indexmap)/.test(head) || (name.includes('yew::') && !head.startsWith('kubeloop'))) {
    return 'yew (the framework)';
  }
  if (/^(web_sys|wasm_bindgen|js_sys|gloo|console_error_panic_hook)/.test(head)) {
    return 'web bindings (web-sys, js-sys, wasm-bindgen, gloo)';
  }
  if (name.includes('alloc::collections::btree')) return 'std: B-tree maps';
  if (name.includes('hashbrown')) return 'std: hash maps';
  if (name.includes('miniz_oxide')) return 'miniz_oxide (share links\' deflate)';
  const m = /^kubeloop::(\w+)(?:::(.*))?/.exec(head);
  if (m) {
    if (m[1] === 'sim') return SIM.find(([re]) => re.test(m[2] || ''))[1];
    if (m[1] === 'ui') return 'ui: the Yew components';
    if (m[1] === 'viewmodel') return 'viewmodel: the page model';
    return `kubeloop: ${m[1]}`;
  }
  if (name.includes('drop_in_place')) return 'std: drop glue';
  return 'std, core and the rest (generic code for our types, the allocator)';
}

const lines = fs.readFileSync(0, 'utf8').split('\n').filter((l) => l.trim());
const header = parseCsvLine(lines.shift());
const nameAt = header.indexOf('Name');
const sizeAt = header.indexOf('ShallowSize');
if (nameAt < 0 || sizeAt < 0) {
  console.error('wasm-parts: expected `twiggy top -f csv` on standard input (Name, ShallowSize columns)');
  process.exit(2);
}
const parts = new Map();
let total = 0;
for (const line of lines) {
  const fields = parseCsvLine(line);
  const part = classify(fields[nameAt]);
  if (part === null) continue;
  const bytes = Number(fields[sizeAt]);
  const p = parts.get(part) || { bytes: 0, items: 0 };
  p.bytes += bytes;
  p.items += 1;
  parts.set(part, p);
  total += bytes;
}
console.log(`${'kB'.padStart(8)} ${'share'.padStart(6)} ${'items'.padStart(6)}  part`);
for (const [part, p] of [...parts].sort((a, b) => b[1].bytes - a[1].bytes)) {
  console.log(`${(p.bytes / 1024).toFixed(1).padStart(8)} ${(100 * p.bytes / total).toFixed(1).padStart(5)}% ${String(p.items).padStart(6)}  ${part}`);
}
console.log(`${(total / 1024).toFixed(1).padStart(8)}               in all (code and data, before wasm-bindgen and wasm-opt)`);
