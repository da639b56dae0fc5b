#!/usr/bin/env node
// Copies a built site to another directory as if it had been built for another site root
// (`trunk build --public-url`), without building again: the e2e suite serves dist/ under
// /kubeloop/ this way (playwright.config.js), instead of paying for a second release build.
//
// Why this is the same as building: trunk uses the public URL only as the prefix of the URLs it
// writes into index.html (stylesheets, the module preload, the wasm preload and the script tag of
// Trunk.toml's pattern_script). A `trunk build --release --public-url /kubeloop/` of the same tree
// (trunk 0.21.14) differs from the `/` build in exactly those attributes of index.html: every
// other file, the wasm included, is byte-identical. `make verify-rebase` builds for real and checks
// that this copy matches it byte for byte; run it after upgrading trunk or touching Trunk.toml.
// The copy also refuses to finish if index.html still names a root-relative URL outside the new
// root, and the sub-path server 404s everything outside it, so drift cannot pass silently.
//
// Usage: node scripts/rebase-dist.js FROM TO PUBLIC_URL        copy FROM to TO under PUBLIC_URL
//        node scripts/rebase-dist.js --verify FROM REAL PUBLIC_URL
//                                   compare that copy (made in memory) with a real build REAL
'use strict';
const fs = require('fs');
const path = require('path');

/** `/a/b/` form of a public URL (`/`, `kubeloop`, `/kubeloop` → `/`, `/kubeloop/`, `/kubeloop/`). */
function normalise(url) {
  const inner = String(url).replace(/^\/+|\/+$/g, '');
  return inner ? `/${inner}/` : '/';
}

/** The attributes trunk writes the public URL into. */
const ATTRS = /\b(href|src|data-kubeloop-js|data-kubeloop-wasm)="([^"]*)"/g;

/** The site root a built index.html was made for, read from its loader script tag. */
function baseOf(html) {
  const m = html.match(/<script\b[^>]*\bsrc="([^"]*)www\/boot\.js"/);
  if (!m || !m[1].startsWith('/')) {
    throw new Error('index.html has no <script src=".../www/boot.js"> with a root-relative URL (see pattern_script in Trunk.toml)');
  }
  return m[1];
}

/** index.html rewritten from its own site root to `to`. */
function rebaseIndex(html, to) {
  const from = baseOf(html);
  const out = html.replace(ATTRS, (all, attr, value) =>
    value.startsWith(from) && !value.startsWith('//') ? `${attr}="${to}${value.slice(from.length)}"` : all);
  // Anything still root-relative and outside the new root would 404 on the host.
  const stray = [...out.matchAll(ATTRS)].map((m) => m[2]).filter((v) => v.startsWith('/') && !v.startsWith('//') && !v.startsWith(to));
  if (stray.length) throw new Error(`index.html still names URLs outside ${to}: ${stray.join(', ')}`);
  return out;
}

/** Every file under `dir`, as paths relative to it, sorted. */
function files(dir, rel = '') {
  return fs.readdirSync(path.join(dir, rel), { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? files(dir, path.join(rel, e.name)) : [path.join(rel, e.name)]))
    .sort();
}

function copy(from, to, url) {
  const index = rebaseIndex(fs.readFileSync(path.join(from, 'index.html'), 'utf8'), url);
  fs.rmSync(to, { recursive: true, force: true });
  fs.cpSync(from, to, { recursive: true });
  fs.writeFileSync(path.join(to, 'index.html'), index);
  console.log(`${from} → ${to}, served under ${url}`);
}

function verify(from, real, url) {
  const ours = files(from);
  const theirs = files(real);
  const problems = [];
  if (ours.join('\n') !== theirs.join('\n')) problems.push(`different files:\n  ${ours.join(' ')}\n  ${theirs.join(' ')}`);
  for (const f of ours.filter((x) => theirs.includes(x))) {
    let a = fs.readFileSync(path.join(from, f));
    if (f === 'index.html') a = Buffer.from(rebaseIndex(a.toString('utf8'), url));
    if (!a.equals(fs.readFileSync(path.join(real, f)))) problems.push(`${f} differs`);
  }
  if (problems.length) {
    console.error(`rebase-dist: the copy of ${from} is NOT what trunk builds for ${url}:\n${problems.join('\n')}`);
    process.exit(1);
  }
  console.log(`rebase-dist: ${from} rebased to ${url} is byte-identical to ${real} (${ours.length} files)`);
}

const args = process.argv.slice(2);
const checking = args[0] === '--verify';
if (checking) args.shift();
if (args.length !== 3) {
  console.error('usage: node scripts/rebase-dist.js [--verify] FROM TO|REAL PUBLIC_URL');
  process.exit(2);
}
try {
  const [from, to, url] = args;
  if (checking) verify(from, to, normalise(url));
  else copy(from, to, normalise(url));
} catch (e) {
  console.error(`rebase-dist: ${e.message}`);
  process.exit(1);
}
