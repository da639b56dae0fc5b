#!/usr/bin/env node
// Minimal static file server for the built site, used by the Playwright e2e suite (and handy to
// check a release build as deployed). Serves DIR on 127.0.0.1:PORT with the right MIME types
// (application/wasm matters for streaming compilation) and no caching.
//
// With a PREFIX (e.g. /kubeloop/) the site is served only under that path, as a static host
// serves a sub-path deployment: /kubeloop/index.html is DIR/index.html, and every URL outside the
// prefix is a 404, so a root-relative URL left in a sub-path build fails loudly in the tests.
// Usage: node scripts/serve-dist.js [dir=dist] [port=8080] [prefix=/]
'use strict';
const http = require('http');
const fs = require('fs');
const path = require('path');

const root = path.resolve(process.argv[2] || 'dist');
// Served with the headers hosts are told to send (docs/hosting.md), so the e2e tests run under them.
const security = Object.fromEntries(
  Object.entries(require('./security-headers.json')).filter(([k]) => !k.startsWith('//')));
const port = Number(process.argv[3] || 8080);
// Always of the form /…/ so that a plain startsWith check is exact (/kubeloopx is outside /kubeloop/).
const prefix = `/${(process.argv[4] || '/').replace(/^\/+|\/+$/g, '')}/`.replace(/^\/\/$/, '/');
const types = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm', '.css': 'text/css; charset=utf-8', '.json': 'application/json',
  '.svg': 'image/svg+xml', '.png': 'image/png', '.ico': 'image/x-icon', '.txt': 'text/plain; charset=utf-8',
  '.yaml': 'text/yaml; charset=utf-8', '.yml': 'text/yaml; charset=utf-8',
};

const notFound = (res) => res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');

http.createServer((req, res) => {
  let urlPath;
  try { urlPath = decodeURIComponent(new URL(req.url, 'http://x').pathname); } catch { urlPath = '/'; }
  if (!urlPath.startsWith(prefix)) { notFound(res); return; }
  let file = path.join(root, path.normalize(`/${urlPath.slice(prefix.length)}`));
  if (file !== root && !file.startsWith(root + path.sep)) { res.writeHead(403).end(); return; }
  if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, 'index.html');
  fs.readFile(file, (err, body) => {
    if (err) { notFound(res); return; }
    res.writeHead(200, {
      ...security,
      'Content-Type': types[path.extname(file)] || 'application/octet-stream',
      'Cache-Control': 'no-store',
    }).end(body);
  });
}).listen(port, '127.0.0.1', () => console.log(`serving ${root} on http://127.0.0.1:${port}${prefix}`));
