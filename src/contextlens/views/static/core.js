/* contextlens views: what every view shares — mounting, packed arrays, small DOM and SVG
   helpers, colours, downloads. Plain JS, no build step, no network. */
"use strict";
(function () {
  const CLV = (window.CLViews = window.CLViews || { renderers: {} });

  /** A renderer draws one kind of view: fn(element, data). */
  CLV.register = (kind, fn) => { CLV.renderers[kind] = fn; };

  /** Draw `data` (a view's JSON, as View.data gives it) into `el`; times itself. */
  CLV.render = function (el, data) {
    const fn = CLV.renderers[data.kind];
    if (!fn) throw new Error(`no renderer for view kind '${data.kind}': include its script`);
    const t0 = performance.now();
    el.innerHTML = "";
    el.classList.add("clv");
    el.dataset.kind = data.kind;
    if (data.title) el.appendChild(h("h2", { class: "clv-title" }, data.title));
    fn(el, data);
    el.dataset.renderMs = (performance.now() - t0).toFixed(1);
    el.dataset.rendered = "1";
    fit();
  };

  /** Mount every view of a saved page: shared blobs first, then each view's data. */
  CLV.mountAll = function (root) {
    const blobs = {};
    root.querySelectorAll("script.clv-blob").forEach((s) => { blobs[s.dataset.key] = JSON.parse(s.textContent); });
    root.querySelectorAll("script.clv-data").forEach((s) => {
      const data = JSON.parse(s.textContent);
      for (const [k, v] of Object.entries(data)) if (v && typeof v === "object" && v.$blob) data[k] = blobs[v.$blob];
      const el = document.getElementById(s.dataset.target);
      try { CLV.render(el, data); } catch (e) { el.textContent = `This view could not be drawn: ${e.message}`; throw e; }
    });
    document.body.dataset.ready = "1";
    if (window.ResizeObserver) new ResizeObserver(fit).observe(document.body);
  };

  /** The height of the page's content (not of the window, so a frame can shrink too). */
  CLV.contentHeight = () => {
    const b = document.body, cs = getComputedStyle(b);
    return Math.ceil(b.getBoundingClientRect().height + parseFloat(cs.marginTop) + parseFloat(cs.marginBottom));
  };
  /** In a notebook the page lives in an <iframe srcdoc>: make the frame as tall as the page. */
  function fit() {
    try {
      const f = window.frameElement;
      if (f) f.style.height = `${CLV.contentHeight()}px`;
    } catch (e) { /* another origin: keep the frame's own height */ }
  }

  // ---- packed arrays (contextlens.views.packing) ------------------------------------------
  const TYPES = { float32: Float32Array, float64: Float64Array, uint8: Uint8Array, uint16: Uint16Array,
    uint32: Uint32Array };
  function bytes(b64) {
    const s = atob(b64);
    const out = new Uint8Array(s.length);
    for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
    return out;
  }
  /** {dtype, shape, data (base64), scale?} → {shape, data (typed array), get(flatIndex)}. */
  CLV.unpack = function (p) {
    if (!p) return null;
    const T = TYPES[p.dtype];
    const raw = bytes(p.data);
    const data = new T(raw.buffer, 0, raw.byteLength / T.BYTES_PER_ELEMENT);
    const scale = p.scale || 1;
    return { shape: p.shape, data, get: scale === 1 ? (i) => data[i] : (i) => data[i] / scale };
  };
  /** SparseWeights → {shape, threshold, stored, row(r): [[col, weight], ...]} (r counts rows over
      the leading dimensions). */
  CLV.sparse = function (s) {
    const counts = CLV.unpack(s.counts).data, cols = CLV.unpack(s.cols).data, vals = CLV.unpack(s.values);
    const start = new Uint32Array(counts.length + 1);
    for (let r = 0; r < counts.length; r++) start[r + 1] = start[r] + counts[r];
    return {
      shape: s.shape, threshold: s.threshold, stored: s.stored,
      row(r) { const out = []; for (let e = start[r]; e < start[r + 1]; e++) out.push([cols[e], vals.get(e)]); return out; },
    };
  };

  // ---- DOM and SVG -------------------------------------------------------------------------
  /** An element: h("label", {class: "x", onclick: fn}, "text", child...). */
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else if (k === "dataset") Object.assign(el.dataset, v);
      else el.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children) if (c !== null && c !== undefined) el.append(c);
    return el;
  }
  CLV.h = h;
  const ESC = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
  CLV.esc = (s) => String(s).replace(/[&<>"']/g, (c) => ESC[c]);
  CLV.fmt = (x, d = 3) => (x === null || x === undefined ? "–" : Number.isFinite(x) ? x.toFixed(d) : x > 0 ? "∞" : "−∞");
  /** A <select> of [value, label] pairs. */
  CLV.select = (label, options, value, onchange, cls) => {
    const sel = h("select", { class: cls, "aria-label": label, onchange: (e) => onchange(e.target.value) });
    for (const [v, text] of options) sel.append(h("option", { value: String(v) }, text));
    sel.value = String(value);
    return h("label", { class: "clv-control" }, `${label} `, sel);
  };
  CLV.checkbox = (label, checked, onchange, cls) => {
    const box = h("input", { type: "checkbox", class: cls, checked, onchange: (e) => onchange(e.target.checked) });
    return h("label", { class: "clv-control" }, box, ` ${label}`);
  };

  // ---- colours -----------------------------------------------------------------------------
  const PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf", "#393b79", "#ad494a"];
  CLV.colour = (k) => (k < PALETTE.length ? PALETTE[k] : `hsl(${(k * 137.5) % 360}, 60%, 45%)`);
  /** Blue (negative) — white — red (positive), for a value in [-1, 1]. */
  CLV.diverging = (v) => {
    const t = Math.max(-1, Math.min(1, v));
    const a = Math.round(255 * (1 - Math.abs(t)));
    return t >= 0 ? [255, a, a] : [a, a, 255];
  };

  // ---- downloads ---------------------------------------------------------------------------
  function save(blob, name) {
    const url = URL.createObjectURL(blob);
    const a = h("a", { href: url, download: name });
    document.body.append(a); a.click(); a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }
  function svgText(svg) {
    const copy = svg.cloneNode(true);
    copy.setAttribute("xmlns", "http://www.w3.org/2000/svg");
    const style = document.createElementNS("http://www.w3.org/2000/svg", "style");
    style.textContent = "text{font:12px system-ui,sans-serif}";
    copy.prepend(style);
    return new XMLSerializer().serializeToString(copy);
  }
  /** SVG and PNG buttons that save what `getSvg()` returns. */
  CLV.downloads = (getSvg, name) => h("span", { class: "clv-downloads" },
    h("button", { type: "button", onclick: () => save(new Blob([svgText(getSvg())], { type: "image/svg+xml" }), `${name}.svg`) }, "SVG"),
    h("button", { type: "button", onclick: () => {
      const svg = getSvg(), w = svg.width.baseVal.value, ht = svg.height.baseVal.value;
      const img = new Image();
      img.onload = () => {
        const c = h("canvas", { width: 2 * w, height: 2 * ht });
        const ctx = c.getContext("2d");
        ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, c.width, c.height); ctx.scale(2, 2); ctx.drawImage(img, 0, 0);
        c.toBlob((b) => save(b, `${name}.png`));
      };
      img.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svgText(svg))}`;
    } }, "PNG"));
})();
