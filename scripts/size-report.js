#!/usr/bin/env node
// Prints what a browser downloads for the app (the top-level files trunk writes into dist/:
// index.html, the JS glue, the .wasm and the CSS), raw and compressed as a server would send them.
// dist/www/ (embed SDK, course page) is published beside the app but not loaded by it, so it is
// listed separately. Usage: node scripts/size-report.js [dist]
'use strict';
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');

const dist = process.argv[2] || 'dist';
const appExt = new Set(['.html', '.js', '.wasm', '.css']);
const kib = (n) => (n / 1024).toFixed(1).padStart(9) + ' KiB';

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
  console.log(`  ${'file'.padEnd(44)}${'raw'.padStart(13)}${'gzip'.padStart(13)}${'brotli'.padStart(13)}`);
  for (const f of files) {
    const s = sizes(f);
    for (const k of Object.keys(total)) total[k] += s[k];
    console.log(`  ${path.relative(dist, f).padEnd(44)}${kib(s.raw)}${kib(s.gzip)}${kib(s.brotli)}`);
  }
  console.log(`  ${'TOTAL'.padEnd(44)}${kib(total.raw)}${kib(total.gzip)}${kib(total.brotli)}`);
}

if (!fs.existsSync(path.join(dist, 'index.html'))) {
  console.error(`size-report: ${dist}/index.html not found (run make build)`);
  process.exit(1);
}
const top = fs.readdirSync(dist).map((f) => path.join(dist, f))
  .filter((f) => fs.statSync(f).isFile() && appExt.has(path.extname(f))).sort();
table('App download size (what the browser fetches for the playground):', top);

const www = path.join(dist, 'www');
if (fs.existsSync(www)) {
  const walk = (d) => fs.readdirSync(d, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)]));
  table('Published beside the app (dist/www/, not loaded by the app):', walk(www).sort());
}
