// The crash screen: what the page shows when the app stops, instead of a dead page.
//
// Three ways in:
//   - report() then link(), called by the Rust panic hook (src/ui/crash.rs) from inside the
//     panic, right before the WebAssembly instance traps;
//   - an uncaught WebAssembly trap that came without a panic report (out of memory, a stack
//     overflow): the 'error' / 'unhandledrejection' listeners below;
//   - bootFailed(), called by www/boot.js when the app could not even start.
//
// Plain JavaScript on purpose: after a trap nothing of the Rust app can run again (every closure
// is dead and its RefCells may be borrowed), so this module never calls into it. Every node is
// built with createElement and textContent, never parsed from a string: a panic message may quote
// the reader's scenario. The Content-Security-Policy allows it because it is a file from the site.
//
// Restart writes a one-shot restore record to sessionStorage (read and removed by
// src/ui/storage.rs when the editor mounts) and reloads the page without its fragment: the editor
// comes back with the same text and the simulation starts fresh, with nothing applied, so a
// scenario that crashes the app when applied cannot crash it again by itself on reload. Where
// sessionStorage is refused, the scenario's link fragment carries the text instead.

const RESTORE_KEY = 'kubeloop.restore.v1'; // src/ui/storage.rs spells it the same
const SVG = 'http://www.w3.org/2000/svg';

/** The one crash screen on the page, once shown. */
let shown = null;

/** `document.createElement(tag)` with attributes (`text` sets textContent) and children. */
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'text') e.textContent = v;
    else if (k === 'class') e.className = v;
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c); // strings become Text nodes
  return e;
}

/** A warning-triangle icon (SVG built node by node, like everything else here). */
function icon() {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('width', '22');
  svg.setAttribute('height', '22');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('focusable', 'false');
  svg.setAttribute('class', 'kl-crash-icon');
  const path = document.createElementNS(SVG, 'path');
  path.setAttribute('fill', 'currentColor');
  path.setAttribute('d', 'M12 3 1.5 21h21L12 3zm-1 6h2v6h-2V9zm0 8h2v2h-2v-2z');
  svg.append(path);
  return svg;
}

function isEmbed() {
  const v = new URLSearchParams(location.search).get('embed');
  return v === '1' || v === 'true';
}

function editorText() {
  const area = document.querySelector('textarea[data-testid="editor"]');
  return area ? area.value : null;
}

function restoreKey() {
  return `${RESTORE_KEY}:${location.pathname}${location.search}`;
}

/** The page without its fragment. */
function base() {
  return location.href.split('#')[0];
}

/**
 * The app is dead but its timers, animation frames and listeners still call into the trapped
 * instance (each call fails again and fills the console). Stop what can be stopped: no new
 * animation frames, and every pending timer of this page cleared (timer ids are small
 * increasing integers, so clearing up to a fresh id clears them all). The crash screen sets its
 * own timers only after this.
 */
function stopTheDeadApp() {
  try {
    window.requestAnimationFrame = () => 0;
    const last = setTimeout(() => {}, 0);
    for (let id = 1; id <= last; id++) {
      clearTimeout(id);
      clearInterval(id);
    }
  } catch (e) {
    console.warn('kubeloop: could not stop the app\'s timers', e);
  }
}

/** Keeps focus, clicks and keys inside the dialog and away from the dead app underneath. */
function isolate(root, dialog) {
  const focusable = () =>
    [...dialog.querySelectorAll('button, input, textarea, [href], [tabindex]:not([tabindex="-1"])')].filter(
      (e) => !e.disabled && !e.hidden && e.offsetParent !== null,
    );
  root.addEventListener('keydown', (e) => {
    if (e.key !== 'Tab') return;
    const items = focusable();
    if (items.length === 0) return;
    const first = items[0];
    const last = items[items.length - 1];
    if (e.shiftKey && (document.activeElement === first || document.activeElement === dialog)) {
      e.preventDefault();
      last.focus();
    } else if (!e.shiftKey && document.activeElement === last) {
      e.preventDefault();
      first.focus();
    }
  });
  // The app's listeners sit on window and body; an event from the dialog must not reach them.
  for (const type of ['click', 'dblclick', 'mousedown', 'mouseup', 'pointerdown', 'pointerup', 'keydown',
    'keyup', 'keypress', 'input', 'change', 'focusin', 'focusout', 'wheel', 'contextmenu', 'copy', 'paste']) {
    root.addEventListener(type, (e) => e.stopPropagation());
  }
  // Everything else on the page is the dead app: out of the tab order and the accessibility tree.
  for (const child of document.body.children) {
    if (child !== root) {
      child.inert = true;
      child.setAttribute('aria-hidden', 'true');
    }
  }
  // If focus ever escapes to the inert page, bring it back.
  document.addEventListener('focusin', (e) => {
    if (!root.contains(e.target)) dialog.focus();
  });
}

/** Copies `text`; falls back to selecting it in `field`. Resolves to true when copied. */
async function copy(text, field) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch (_) {
    field.hidden = false;
    field.focus();
    field.select();
    try {
      if (document.execCommand('copy')) return true;
    } catch (_) {
      /* selecting is the fallback */
    }
    return false;
  }
}

const NO_COPY = 'Your browser did not let the page copy, so the text is selected: press Ctrl+C (⌘C on a Mac).';

/** Builds the dialog for a crash report; returns the parts that change later. */
function buildDialog(r) {
  const lines = r.text === null ? 0 : r.text.split('\n').length;
  const copyLink = el('button', { class: 'btn btn-primary', type: 'button', 'data-testid': 'crash-copy-link', disabled: true },
    'Copy a link to this scenario');
  const restart = el('button', { class: 'btn', type: 'button', 'data-testid': 'crash-restart' }, 'Restart the simulation');
  const status = el('p', { class: 'kl-crash-status', 'data-testid': 'crash-link-status', 'aria-live': 'polite' },
    r.text === null ? '' : 'Making a link to your scenario…');
  const url = el('input', { class: 'kl-crash-url mono', readonly: true, 'aria-label': 'Link to this scenario', 'data-testid': 'crash-link', hidden: true });
  const text = el('textarea', { id: 'kl-crash-text', class: 'kl-crash-text mono', readonly: true, rows: 8, spellcheck: 'false', 'data-testid': 'crash-text' });
  text.value = r.text === null ? '' : r.text;
  const copyText = el('button', { class: 'btn btn-small', type: 'button', 'data-testid': 'crash-copy-text' }, 'Copy the text');
  const copyDetails = el('button', { class: 'btn btn-small', type: 'button', 'data-testid': 'crash-copy-details' }, 'Copy the details');
  const detailsField = el('textarea', { class: 'kl-crash-text mono', readonly: true, rows: 4, hidden: true, 'aria-label': 'Details of the crash' });

  const safe = r.text === null
    ? 'The editor had not opened yet, so there was nothing of yours to lose.'
    : 'Nothing you wrote is lost: your scenario is below' +
      (r.autosaved ? ' (and saved in this browser)' : '') +
      ', and restarting brings the page back with it in the editor.';
  const dialog = el('div', {
    class: 'kl-crash-dialog', role: 'alertdialog', 'aria-modal': 'true', tabindex: '-1',
    'aria-labelledby': 'kl-crash-title', 'aria-describedby': 'kl-crash-desc',
  },
  el('div', { class: 'kl-crash-head' }, icon(), el('h2', { id: 'kl-crash-title', text: 'Kubeloop stopped working' })),
  el('p', { id: 'kl-crash-desc', class: 'kl-crash-lead' },
    'A bug in the playground stopped the simulation, so this page no longer responds. ', safe),
  el('div', { class: 'kl-crash-actions' }, copyLink, restart),
  status,
  url,
  el('section', { class: 'kl-crash-section', 'aria-labelledby': 'kl-crash-what' },
    el('h3', { id: 'kl-crash-what', text: 'What happened' }),
    el('p', { class: 'kl-crash-note', text: 'The program reported this error. It is not something you did wrong: please report it, with the link above, so it can be fixed.' }),
    el('pre', { class: 'kl-crash-message mono', 'data-testid': 'crash-message', text: r.message }),
    r.location
      ? el('p', { class: 'kl-crash-where' }, 'Where: ', el('code', { class: 'mono', 'data-testid': 'crash-location', text: r.location }))
      : null,
    el('div', { class: 'kl-crash-row' }, copyDetails),
    detailsField),
  r.text === null ? null : el('section', { class: 'kl-crash-section' },
    el('div', { class: 'kl-crash-row' },
      el('h3', { class: 'kl-crash-label' },
        el('label', { for: 'kl-crash-text', text: 'Your scenario' }), ' ',
        el('span', { class: 'kl-crash-count', text: `${lines} line${lines === 1 ? '' : 's'}` })),
      copyText),
    text));
  const root = el('div', { class: 'kl-crash', 'data-testid': 'crash' }, dialog);
  return { root, dialog, copyLink, restart, status, url, text, copyText, copyDetails, detailsField };
}

function setStatus(parts, msg, tone) {
  parts.status.textContent = msg;
  parts.status.classList.toggle('is-ok', tone === 'ok');
  parts.status.classList.toggle('is-error', tone === 'error');
}

/** The details a bug report needs, as plain text. */
function details() {
  const r = shown.report;
  return [
    `Kubeloop stopped working: ${r.message}`,
    r.location ? `Where: ${r.location}` : '',
    shown.link && shown.link.url ? `Scenario: ${shown.link.url}` : '',
    `Page: ${base()}`,
    `Browser: ${navigator.userAgent}`,
  ].filter(Boolean).join('\n');
}

/** Reloads the page with the editor text kept; see the module comment. */
function restart() {
  const r = shown.report;
  let target = location.href; // nothing of the reader's to keep: reload as it is
  if (r.text !== null) {
    let kept = false;
    try {
      sessionStorage.setItem(restoreKey(), JSON.stringify({ text: r.text, at: Date.now() }));
      kept = sessionStorage.getItem(restoreKey()) !== null;
    } catch (_) {
      kept = false;
    }
    if (kept) {
      target = base();
    } else if (shown.link && shown.link.fragment) {
      target = `${base()}#${shown.link.fragment}`;
    } else if (!shown.confirmRestart) {
      shown.confirmRestart = true;
      shown.parts.restart.textContent = 'Restart anyway';
      setStatus(shown.parts, 'This browser refuses to keep your text across a reload, and it is too large for a link: copy it from the box below before restarting.', 'error');
      shown.parts.text.focus();
      shown.parts.text.select();
      return;
    }
  }
  try {
    history.replaceState(null, '', target);
  } catch (_) {
    /* a sandboxed frame: reload as it is */
  }
  location.reload();
}

/**
 * Shows the crash screen for a panic. `r`: {message, location, text (null when the editor was
 * not on the page), embed, autosaved}. Called from inside the panic hook, so it only builds and
 * inserts nodes; focus moves once the trapped call has unwound.
 */
function report(r, linkComesLater = false) {
  if (shown) return;
  stopTheDeadApp();
  const rep = {
    message: String(r && r.message != null ? r.message : 'unknown error'),
    location: r && r.location ? String(r.location) : '',
    text: r && typeof r.text === 'string' ? r.text : null,
    embed: !!(r && r.embed),
    autosaved: !!(r && r.autosaved),
  };
  const parts = buildDialog(rep);
  shown = { report: rep, parts, link: null, confirmRestart: false };
  document.body.append(parts.root);

  parts.copyLink.addEventListener('click', async () => {
    if (!shown.link || !shown.link.url) return;
    const ok = await copy(shown.link.url, parts.url);
    setStatus(parts, ok
      ? 'Link copied. Paste it into your bug report, or open it in a new tab to carry on from the same text.'
      : NO_COPY, ok ? 'ok' : null);
  });
  parts.copyText.addEventListener('click', async () => {
    const ok = await copy(parts.text.value, parts.text);
    setStatus(parts, ok ? 'Your scenario\'s text is copied.' : NO_COPY, ok ? 'ok' : null);
  });
  parts.copyDetails.addEventListener('click', async () => {
    parts.detailsField.value = details();
    const ok = await copy(parts.detailsField.value, parts.detailsField);
    setStatus(parts, ok ? 'The details are copied: the message, where it happened, the link and your browser.' : NO_COPY, ok ? 'ok' : null);
  });
  parts.restart.addEventListener('click', restart);

  queueMicrotask(() => {
    isolate(parts.root, parts.dialog);
    if (rep.text !== null && !shown.link && !linkComesLater) {
      // The hook stopped before it could make the link.
      link({ error: 'A link could not be made (the app stopped while making it). Copy the text below instead.' });
    }
    (parts.copyLink.disabled ? parts.restart : parts.copyLink).focus();
  });
}

/** The link for the report: {url, fragment, long} or {error}. */
function link(l) {
  if (!shown || shown.link) return;
  const parts = shown.parts;
  if (l && typeof l.url === 'string' && l.url) {
    shown.link = { url: l.url, fragment: typeof l.fragment === 'string' ? l.fragment : '' };
    parts.url.value = l.url;
    parts.url.hidden = false;
    parts.copyLink.disabled = false;
    setStatus(parts, l.long
      ? `This link holds your whole scenario (${l.url.length.toLocaleString('en-US')} characters; chat tools and some servers cut links longer than 8 KB).`
      : 'This link holds your whole scenario: opening it shows the same text.');
  } else {
    shown.link = { url: '', fragment: '' };
    parts.copyLink.disabled = true;
    setStatus(parts, l && l.error ? String(l.error) : 'A link could not be made. Copy the text below instead.', 'error');
  }
}

/** The `k1:` fragment for `text`, made here when the Rust encoder is gone; null if impossible. */
async function encodeInJs(text) {
  if (typeof CompressionStream !== 'function') return null;
  const json = new TextEncoder().encode(JSON.stringify({ y: text }));
  if (json.length > (1 << 20)) return null; // more than a link may inflate to
  const stream = new Blob([json]).stream().pipeThrough(new CompressionStream('deflate-raw'));
  const bytes = new Uint8Array(await new Response(stream).arrayBuffer());
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return 'k1:' + btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** A trap that came without a panic report: the Rust side could say nothing, so say it here. */
function trapWithoutPanic(error) {
  if (shown) return;
  const text = editorText();
  let autosaved = false;
  try {
    autosaved = !isEmbed() && text !== null && localStorage.getItem('kubeloop.editor.v1') === text;
  } catch (_) {
    /* storage refused */
  }
  report({
    message: `${error && error.name ? error.name : 'Error'}: ${error && error.message ? error.message : String(error)} ` +
      '(the program stopped without a panic message: it may have run out of memory or stack)',
    location: '',
    text,
    embed: isEmbed(),
    autosaved,
  }, true);
  if (text === null) return;
  encodeInJs(text).then(
    (frag) => link(frag
      ? { url: `${location.origin}${location.pathname}#${frag}`, fragment: frag, long: frag.length > 8 * 1024 }
      : { error: 'A link could not be made in this browser. Copy the text below instead.' }),
    () => link({ error: 'A link could not be made. Copy the text below instead.' }),
  );
}

function isTrap(error) {
  return (typeof WebAssembly === 'object' && error instanceof WebAssembly.RuntimeError) ||
    (error instanceof RangeError && /wasm/.test(String(error.stack)));
}

window.addEventListener('error', (e) => {
  if (isTrap(e.error)) trapWithoutPanic(e.error);
});
window.addEventListener('unhandledrejection', (e) => {
  if (isTrap(e.reason)) trapWithoutPanic(e.reason);
});

/** Why the app could not start, in plain words. */
function bootReason(error) {
  if (typeof WebAssembly !== 'object') {
    return 'This browser cannot run WebAssembly, which the playground is made of. Open the page in a recent Chrome, Edge, Firefox or Safari.';
  }
  if (error instanceof WebAssembly.CompileError || error instanceof WebAssembly.LinkError) {
    return 'This browser could not start the playground\'s program: it may be too old, or the site is halfway through an update. Reload the page; if it keeps happening, update your browser.';
  }
  if (/fetch|download|network|import|HTTP|40\d|50\d|Failed to load/i.test(String(error && error.message))) {
    return 'The playground\'s program could not be downloaded. Check your connection and reload the page.';
  }
  return 'The playground failed while starting. Reload the page; if it keeps happening, please report it with the details below.';
}

/** Shows why the app could not start, instead of a blank page. Called by www/boot.js. */
export function bootFailed(error) {
  console.error('kubeloop: the app could not start', error);
  if (shown) return; // a panic during start-up already explained itself
  let saved = false;
  try {
    saved = !isEmbed() && localStorage.getItem('kubeloop.editor.v1') !== null;
  } catch (_) {
    /* storage refused */
  }
  const reload = el('button', { class: 'btn btn-primary', type: 'button', 'data-testid': 'boot-reload' }, 'Reload the page');
  reload.addEventListener('click', () => location.reload());
  const keep = [
    saved ? 'Your autosaved scenario is still in this browser and comes back when the page loads.' : '',
    location.hash.length > 1 ? 'The scenario in the address bar is kept too.' : '',
  ].filter(Boolean).join(' ');
  const dialog = el('div', {
    class: 'kl-crash-dialog', role: 'alertdialog', 'aria-modal': 'true', tabindex: '-1',
    'aria-labelledby': 'kl-boot-title', 'aria-describedby': 'kl-boot-desc',
  },
  el('div', { class: 'kl-crash-head' }, icon(), el('h2', { id: 'kl-boot-title', text: 'Kubeloop could not start' })),
  el('p', { id: 'kl-boot-desc', class: 'kl-crash-lead', 'data-testid': 'boot-reason' }, bootReason(error), keep ? ` ${keep}` : ''),
  el('div', { class: 'kl-crash-actions' }, reload),
  el('section', { class: 'kl-crash-section' },
    el('h3', { text: 'Details' }),
    el('pre', { class: 'kl-crash-message mono', 'data-testid': 'boot-error-message', text: `${error && error.name ? error.name + ': ' : ''}${error && error.message ? error.message : String(error)}` })));
  const root = el('div', { class: 'kl-crash is-boot', 'data-testid': 'boot-error' }, dialog);
  shown = { report: null, parts: null, link: null };
  document.body.append(root);
  reload.focus();
}

Object.defineProperty(window, 'kubeloopCrash', {
  value: Object.freeze({ report, link, bootFailed }),
  writable: false,
  configurable: false,
});
