/*! Kubeloop embed SDK (protocol 1). One script tag, no build step, plain ES2017.
 *
 *   <script src="https://your.host/kubeloop/www/kubeloop-embed.js" defer></script>
 *   <pre data-kubeloop id="lab">apiVersion: apps/v1 ...</pre>       inline YAML
 *   <div data-kubeloop data-example="node-dies"></div>                a built-in lesson
 *   <div data-kubeloop data-src="scenarios/web.yaml"></div>           a scenario file (same origin or CORS)
 *
 * Options (data-*): view="editor,cluster,events", readonly, autoplay, speed="10", theme="dark",
 * load="click", faults="0", seed="7", height="560" (before the first resize), title,
 * playground-url (default: ../index.html next to this script).
 *
 *   const pg = Kubeloop.get('lab');        // element, wrapper or id
 *   await pg.apply(yaml); await pg.inject({type: 'DeletePod', pod: 'web-…'});
 *   pg.on('converged', (data) => …);       // ready, loaded, applied, event, fault, converged,
 *                                          // diverged, checkPassed, checkFailed, resize, error
 *   pg.text                                // the inline or data-src scenario text
 *
 * Security: messages go to the playground's exact origin, never '*'; replies are accepted only
 * from that iframe's window and origin; the iframe URL pins this page's origin (origins=).
 */
(function () {
  'use strict';
  if (window.Kubeloop && window.Kubeloop.version) return;

  var PROTOCOL = 1;
  var RETRY_MS = 500;
  var RETRIES = 20;
  var CALL_TIMEOUT_MS = 60000;
  var script = document.currentScript;
  var DEFAULT_URL = new URL('../index.html', (script && script.src) || location.href).href;
  var FLAGS = ['view', 'readonly', 'autoplay', 'speed', 'theme', 'faults', 'seed', 'load', 'ctl'];
  var all = [];
  var counter = 0;

  function warn(m) { if (window.console) console.warn('Kubeloop: ' + m); }

  /** base64url without padding, as the share-link format wants. */
  function b64url(bytes) {
    var s = '';
    for (var i = 0; i < bytes.length; i += 0x8000) {
      s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
    }
    return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }

  /** The `k1:` link fragment for a scenario, or null when this browser cannot deflate. */
  async function encode(text, opts) {
    opts = opts || {};
    var shared = { y: String(text) };
    if (opts.seed != null && opts.seed !== '') shared.s = Number(opts.seed);
    if (opts.view) shared.v = String(opts.view);
    if (opts.speed != null && opts.speed !== '') shared.x = Number(opts.speed);
    try {
      var input = new Blob([new TextEncoder().encode(JSON.stringify(shared))]);
      var stream = input.stream().pipeThrough(new CompressionStream('deflate-raw'));
      var out = new Uint8Array(await new Response(stream).arrayBuffer());
      return 'k1:' + b64url(out);
    } catch (e) {
      return null;
    }
  }

  /** Authors indent YAML inside HTML: remove the common indentation and blank edges. */
  function dedent(text) {
    var lines = String(text).replace(/\r\n?/g, '\n').split('\n');
    while (lines.length && !lines[0].trim()) lines.shift();
    while (lines.length && !lines[lines.length - 1].trim()) lines.pop();
    var indent = Infinity;
    lines.forEach(function (l) {
      if (l.trim()) indent = Math.min(indent, l.match(/^[ \t]*/)[0].length);
    });
    if (!isFinite(indent)) indent = 0;
    return lines.map(function (l) { return l.slice(indent); }).join('\n') + '\n';
  }

  function Playground(el, options) {
    var self = this;
    options = Object.assign({}, el.dataset || {}, options || {});
    this.id = 'kl-' + (++counter) + '-' + Math.random().toString(36).slice(2, 8);
    this.source = el;
    this.handlers = {};
    this.pending = new Map();
    this.callId = 0;
    this.readyInfo = null;
    this.tries = 0;
    this.timer = null;
    this.ready = new Promise(function (resolve) { self._resolveReady = resolve; });

    var url = new URL(options.playgroundUrl || DEFAULT_URL, document.baseURI);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new Error('Kubeloop: the playground URL must be http(s): ' + url.href);
    }
    url.searchParams.set('embed', '1');
    FLAGS.forEach(function (f) {
      var v = options[f];
      if (v === undefined) return;
      url.searchParams.set(f, v === '' || v === true ? '1' : String(v));
    });
    if (/^https?:$/.test(location.protocol) && !options.origins) {
      url.searchParams.set('origins', location.origin);
    } else if (options.origins) {
      url.searchParams.set('origins', options.origins);
    }
    this.origin = url.origin;

    var wrap = document.createElement('div');
    wrap.className = 'kubeloop-embed';
    if (el.id) { wrap.id = el.id; el.removeAttribute('id'); }
    var frame = document.createElement('iframe');
    frame.title = options.title || (options.example ? 'Kubeloop playground: ' + options.example : 'Kubeloop playground');
    frame.setAttribute('allow', 'clipboard-write');
    frame.style.cssText = 'display:block;width:100%;border:0;border-radius:12px;background:transparent;' +
      'height:' + (parseInt(options.height, 10) || 560) + 'px;transition:height .15s ease-out';
    wrap.appendChild(frame);
    this.element = wrap;
    this.iframe = frame;
    wrap.__kubeloop = this;
    el.__kubeloop = this;
    if (el.parentNode) el.parentNode.replaceChild(wrap, el);
    all.push(this);

    frame.addEventListener('load', function () { self._handshake(); });
    this._start(url, options).catch(function (e) { warn(e.message); self._emit('error', { message: e.message }); });
  }

  Playground.prototype._start = async function (url, options) {
    var text = null;
    if (options.example) {
      url.hash = 'example/' + encodeURIComponent(options.example);
    } else {
      if (options.src) {
        var res = await fetch(new URL(options.src, document.baseURI).href);
        if (!res.ok) throw new Error('could not fetch ' + options.src + ' (' + res.status + ')');
        text = await res.text();
      } else {
        var holder = this.source.querySelector('script[type="text/yaml"],template');
        // html-ok: reads the page author's own markup as scenario text; nothing is inserted.
        text = dedent(holder ? (holder.content ? holder.content.textContent || holder.innerHTML : holder.textContent) : this.source.textContent);
      }
      this.text = text;
      var frag = await encode(text, options);
      if (frag) { url.hash = frag; text = null; }
    }
    this.iframe.src = url.href;
    if (text !== null) {
      // No CompressionStream: hand the scenario over after the handshake instead.
      await this.call('load', [text, options.seed ? Number(options.seed) : null]);
    }
  };

  Playground.prototype._handshake = function () {
    var self = this;
    if (this.readyInfo) return;
    clearInterval(this.timer);
    this.tries = 0;
    var send = function () {
      if (self.readyInfo || ++self.tries > RETRIES) { clearInterval(self.timer); return; }
      self._post({ type: 'kubeloop:init', id: self.id, protocol: PROTOCOL });
    };
    send();
    this.timer = setInterval(send, RETRY_MS);
  };

  Playground.prototype._post = function (msg) {
    if (this.iframe.contentWindow) this.iframe.contentWindow.postMessage(msg, this.origin);
  };

  Playground.prototype._emit = function (name, data) {
    (this.handlers[name] || []).slice().forEach(function (h) {
      try { h(data); } catch (e) { setTimeout(function () { throw e; }); }
    });
  };

  Playground.prototype._receive = function (msg) {
    if (msg.type === 'kubeloop:hello') {
      if (this.readyInfo) {
        // The playground started again (a reload): shake hands with the new instance.
        var self = this;
        this.readyInfo = null;
        this.loaded = false;
        this.ready = new Promise(function (resolve) { self._resolveReady = resolve; });
      }
      this._handshake();
      return;
    }
    if (msg.id !== this.id) return;
    if (msg.type === 'kubeloop:ready') {
      var first = !this.readyInfo;
      this.readyInfo = msg;
      clearInterval(this.timer);
      if (first) {
        this._resolveReady(msg);
        this._emit('ready', msg);
        if (msg.loaded) { this.loaded = true; this._emit('loaded', {}); }
      }
    } else if (msg.type === 'kubeloop:result') {
      var p = this.pending.get(msg.callId);
      if (!p) return;
      this.pending.delete(msg.callId);
      clearTimeout(p.timer);
      if (msg.ok) p.resolve(msg.value); else p.reject(new Error(String(msg.error)));
    } else if (msg.type === 'kubeloop:event' && typeof msg.event === 'string') {
      if (msg.event === 'resize' && msg.data && isFinite(msg.data.height)) {
        var h = Math.max(120, Math.min(20000, Math.ceil(msg.data.height)));
        this.iframe.style.height = h + 'px';
      }
      if (msg.event === 'loaded') { if (this.loaded) return; this.loaded = true; }
      this._emit(msg.event, msg.data);
    }
  };

  /** Calls a method of the embedded playground; resolves with its value. */
  Playground.prototype.call = async function (method, args) {
    var self = this;
    var waited = await Promise.race([
      this.ready,
      new Promise(function (r) { setTimeout(r, RETRY_MS * RETRIES + 5000); }),
    ]);
    if (!waited) throw new Error('the playground at ' + this.origin + ' did not answer; check data-playground-url');
    var callId = ++this.callId;
    return new Promise(function (resolve, reject) {
      var timer = setTimeout(function () {
        self.pending.delete(callId);
        reject(new Error(method + ': no answer from the playground'));
      }, CALL_TIMEOUT_MS);
      self.pending.set(callId, { resolve: resolve, reject: reject, timer: timer });
      self._post({ type: 'kubeloop:call', id: self.id, callId: callId, method: method, args: args || [] });
    });
  };

  ['apply', 'load', 'inject', 'kubectl', 'play', 'pause', 'step', 'setSpeed', 'advance', 'seek',
    'getState', 'getShareUrl', 'runChecks', 'lessonSteps', 'stepHandOff', 'setPauseOnCheck',
    'setSlowMotion'].forEach(function (m) {
    Playground.prototype[m] = function () { return this.call(m, Array.prototype.slice.call(arguments)); };
  });

  /** Subscribes to an event; returns a function that unsubscribes. */
  Playground.prototype.on = function (name, handler) {
    var self = this;
    (this.handlers[name] = this.handlers[name] || []).push(handler);
    // Late subscribers still hear that the playground is ready / loaded.
    if (name === 'ready' && this.readyInfo) handler(this.readyInfo);
    if (name === 'loaded' && this.loaded) handler({});
    return function () { self.off(name, handler); };
  };

  Playground.prototype.off = function (name, handler) {
    this.handlers[name] = (this.handlers[name] || []).filter(function (h) { return h !== handler; });
  };

  /** Removes the iframe and forgets the playground. */
  Playground.prototype.destroy = function () {
    clearInterval(this.timer);
    this.pending.forEach(function (p) { clearTimeout(p.timer); p.reject(new Error('destroyed')); });
    this.pending.clear();
    all = all.filter(function (p) { return p !== this; }, this);
    if (this.element.parentNode) this.element.parentNode.removeChild(this.element);
  };

  window.addEventListener('message', function (e) {
    var msg = e.data;
    if (!msg || typeof msg !== 'object' || typeof msg.type !== 'string' || msg.type.indexOf('kubeloop:') !== 0) return;
    for (var i = 0; i < all.length; i++) {
      var pg = all[i];
      if (pg.iframe.contentWindow !== e.source) continue;
      if (e.origin !== pg.origin) { warn('ignored a message from ' + e.origin + ' (expected ' + pg.origin + ')'); return; }
      pg._receive(msg);
      return;
    }
  });

  function mount(el, options) {
    if (el.__kubeloop) return el.__kubeloop;
    return new Playground(el, options);
  }

  function scan(root) {
    var found = (root || document).querySelectorAll('[data-kubeloop]');
    return Array.prototype.map.call(found, function (el) { return mount(el); });
  }

  /** The playground for an element, its wrapper, its iframe or an id (mounting it if needed). */
  function get(ref) {
    var el = typeof ref === 'string' ? document.getElementById(ref) : ref;
    if (!el) return null;
    if (el.__kubeloop) return el.__kubeloop;
    for (var i = 0; i < all.length; i++) if (all[i].iframe === el) return all[i];
    return el.hasAttribute && el.hasAttribute('data-kubeloop') ? mount(el) : null;
  }

  window.Kubeloop = { version: '1.0.0', protocol: PROTOCOL, get: get, mount: mount, scan: scan, encode: encode, all: function () { return all.slice(); } };

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', function () { scan(); });
  } else {
    scan();
  }
})();
