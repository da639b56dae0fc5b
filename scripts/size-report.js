#!/usr/bin/env node
// Prints what a browser downloads for the first paint of the playground, raw and compressed as a
// server would send it, and fails (exit 1) when the compressed total is past the budget in
// scripts/size-budget.json, so `make build` (and with it `make test`) stops a download that grew.
//
// The first-paint files are found, not listed by hand: every local file dist/index.html names
// (stylesheets, the loader script, the preloaded JS glue and .wasm, data-kubeloop-js/-wasm), plus
// every module those scripts import with a literal relative path (www/boot.js imports
// www/crash.js). Everything else in dist/ (the embed SDK, the course page, the descriptions
// `kubectl explain` fetches on first use) is published beside the app but not fetched for the
// first paint, and is listed separately without counting.
//
// Two figures are printed: the ratchet budget (what the build enforces: the size when the budget
// was last set plus a small margin; lower it whenever the download shrinks) and the goal from
// issue #10 (300 kB compressed), with how far the build is from it.
// Usage: node scripts/size-report.js [dist] [--budget FILE]
'use strict';
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');

const args = process.argv.slice(2);
const budgetArg = args.indexOf('--budget');
const budgetFile = budgetArg >= 0 ? args[budgetArg + 1] : path.join(__dirname, 'size-budget.json');
const dist = args.find((a, i) => !a.startsWith('--') && (budgetArg < 0 || i !== budgetArg + 1)) || 'dist';

// kB = 1000 bytes, as in the issue's "300 KB".
const kb = (n) => (n / 1000).toFixed(1).padStart(9) + ' kB';

function sizes(file) {
  const buf = fs.readFileSync(file);
  return {
    raw: buf.length,
    gzip: zlib.gzipSync(buf, { level: 9 }).length,
    brotli: zlib.brotliCompressSync(buf, {
      params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: buf.length },
    }).length,
  };
}

function table(title, files) {
  const total = { raw: 0, gzip: 0, brotli: 0 };
  console.log(`\n${title}`);
  console.log(`  ${'file'.padEnd(44)}${'raw'.padStart(12)}${'gzip'.padStart(12)}${'brotli'.padStart(12)}`);
  for (const f of files) {
    const s = sizes(f);
    for (const k of Object.keys(total)) total[k] += s[k];
    console.log(`  ${path.relative(dist, f).padEnd(44)}${kb(s.raw)}${kb(s.gzip)}${kb(s.brotli)}`);
  }
  console.log(`  ${'TOTAL'.padEnd(44)}${kb(total.raw)}${kb(total.gzip)}${kb(total.brotli)}`);
  return total;
}

// The file in dist/ a URL path from index.html names. The page may be built for a sub-path
// (`make build PUBLIC_URL=/kubeloop/`), so the longest suffix of the path that exists wins.
function resolve(ref, from) {
  if (!ref || /^(data:|[a-z]+:\/\/|\/\/|#)/i.test(ref)) return null;
  const clean = ref.split(/[?#]/)[0];
  if (!clean.startsWith('/')) {
    const f = path.join(path.dirname(from), clean);
    return fs.existsSync(f) && fs.statSync(f).isFile() ? f : null;
  }
  const parts = clean.split('/').filter(Boolean);
  for (let i = 0; i < parts.length; i++) {
    const f = path.join(dist, ...parts.slice(i));
    if (fs.existsSync(f) && fs.statSync(f).isFile()) return f;
  }
  return null;
}

function firstPaintFiles() {
  const index = path.join(dist, 'index.html');
  const found = new Set([index]);
  const html = fs.readFileSync(index, 'utf8');
  const queue = [];
  for (const m of html.matchAll(/\s(?:href|src|data-kubeloop-js|data-kubeloop-wasm)="([^"]+)"/g)) {
    const f = resolve(m[1], index);
    if (f && !found.has(f)) { found.add(f); queue.push(f); }
  }
  // Modules a fetched script imports with a literal relative path.
  while (queue.length) {
    const f = queue.shift();
    if (!/\.m?js$/.test(f)) continue;
    const js = fs.readFileSync(f, 'utf8');
    for (const m of js.matchAll(/(?:\bimport\s*\(\s*|\bfrom\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g)) {
      const g = resolve(m[1], f);
      if (g && !found.has(g)) { found.add(g); queue.push(g); }
    }
  }
  return [...found].sort();
}

function walk(d) {
  return fs.readdirSync(d, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)]));
}

if (!fs.existsSync(path.join(dist, 'index.html'))) {
  console.error(`size-report: ${dist}/index.html not found (run make build)`);
  process.exit(2);
}
let budget;
try {
  budget = JSON.parse(fs.readFileSync(budgetFile, 'utf8'));
} catch (e) {
  console.error(`size-report: cannot read the budget ${budgetFile}: ${e.message}`);
  process.exit(2);
}
const compression = budget.compression || 'gzip';
if (!['gzip', 'brotli'].includes(compression) || !(budget.budgetKB > 0) || !(budget.goalKB > 0)) {
  console.error(`size-report: ${budgetFile} needs "compression" (gzip|brotli), "budgetKB" and "goalKB" > 0`);
  process.exit(2);
}

const first = firstPaintFiles();
const total = table('First paint (what the browser fetches before the playground is interactive):', first);
const rest = walk(dist).filter((f) => !first.includes(f) && !/(^|\/)_headers$/.test(f)
  && /\.(html|js|mjs|wasm|css|json)$/.test(f)).sort();
if (rest.length) table('Published beside the app (not fetched for the first paint):', rest);

const size = total[compression];
const over = size - budget.budgetKB * 1000;
const rel = path.relative(process.cwd(), budgetFile);
console.log(`\nFirst-paint download, ${compression}: ${(size / 1000).toFixed(1)} kB`);
console.log(`  goal (issue #10):        ${budget.goalKB} kB  ${size <= budget.goalKB * 1000 ? 'met' : `not met: ${((size - budget.goalKB * 1000) / 1000).toFixed(1)} kB over`}`);
console.log(`  budget (${rel}): ${budget.budgetKB} kB  ${over <= 0 ? `ok, ${(-over / 1000).toFixed(1)} kB to spare` : `EXCEEDED by ${(over / 1000).toFixed(1)} kB`}`);
if (over > 0) {
  console.error(`size-report: the first-paint download (${(size / 1000).toFixed(1)} kB ${compression}) is over its budget of ` +
    `${budget.budgetKB} kB in ${rel}. Make it smaller, or raise the budget there with a reason.`);
  process.exit(1);
}
if (size < (budget.budgetKB - 2 * (budget.marginKB || 0)) * 1000) {
  console.log(`  the download shrank well below the budget: lower budgetKB in ${rel} to keep the gain`);
}
