#!/usr/bin/env node
// Post-build step of `make build`: makes dist/ carry the security headers of
// scripts/security-headers.json, for hosts that cannot set headers and for those that can.
//   1. Fails if dist/index.html has an inline <script> (the policy forbids them; trunk's loader is
//      the file www/boot.js, see pattern_script in Trunk.toml).
//   2. Puts the Content-Security-Policy into dist/index.html as a <meta> (first thing in <head>),
//      without frame-ancestors, which browsers ignore (and warn about) in a <meta>.
//   3. Writes dist/_headers (Netlify / Cloudflare Pages format) with every header.
// Usage: node scripts/csp.js [dist]
'use strict';
const fs = require('fs');
const path = require('path');

const dist = path.resolve(process.argv[2] || 'dist');
const headers = require('./security-headers.json');
const csp = headers['Content-Security-Policy'];
const index = path.join(dist, 'index.html');
let html = fs.readFileSync(index, 'utf8');

const inline = [...html.matchAll(/<script\b([^>]*)>/gi)].filter((m) => !/\bsrc\s*=/i.test(m[1]));
if (inline.length > 0) {
  console.error(`error: ${index} has ${inline.length} inline <script> element(s), which the Content-Security-Policy blocks: ${inline.map((m) => m[0]).join(' ')}`);
  process.exit(1);
}

const metaPolicy = csp.split(';').map((d) => d.trim()).filter((d) => d && !/^(frame-ancestors|report-uri|report-to|sandbox)\b/.test(d)).join('; ');
const meta = `<meta http-equiv="Content-Security-Policy" content="${metaPolicy}" />`;
html = html.replace(/\s*<meta http-equiv="Content-Security-Policy"[^>]*>/i, '');
if (!/<head[^>]*>/i.test(html)) {
  console.error(`error: ${index} has no <head>`);
  process.exit(1);
}
html = html.replace(/<head([^>]*)>/i, (m) => `${m}\n    ${meta}`);
fs.writeFileSync(index, html);

const lines = ['/*'];
for (const [name, value] of Object.entries(headers)) if (!name.startsWith('//')) lines.push(`  ${name}: ${value}`);
fs.writeFileSync(path.join(dist, '_headers'), lines.join('\n') + '\n');
console.log(`security headers: CSP <meta> in ${path.relative(process.cwd(), index)}, all headers in ${path.relative(process.cwd(), path.join(dist, '_headers'))}`);
