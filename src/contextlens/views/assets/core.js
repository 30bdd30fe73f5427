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
    const button = (format) => h("button", { type: "button", class: "clv-download", "data-format": format,
      title: `Download this view as ${format.toUpperCase()}`, onclick: () => CLV.download(el, format) },
    format.toUpperCase());
    const title = data.title ? h("h2", { class: "clv-title" }, data.title) : h("span", {});
    el.appendChild(h("div", { class: "clv-header" }, title,
      h("span", { class: "clv-downloads" }, button("svg"), button("png"))));
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

  // ---- user text --------------------------------------------------------------------------
  /** `t` cut to `n` characters (code points: an emoji is one, never half of one), with "…". */
  CLV.short = (t, n = 60) => {
    const chars = Array.from(String(t));
    return chars.length > n ? `${chars.slice(0, n - 1).join("")}…` : String(t);
  };
  /** The parts of `text` before, inside and after the span [start, end) given in the library's
      character offsets (Python counts code points; a JS string counts UTF-16 units, so an emoji
      before the span would shift it by one unit each). */
  CLV.spanParts = (text, start, end) => {
    const chars = Array.from(text);
    return [chars.slice(0, start).join(""), chars.slice(start, end).join(""), chars.slice(end).join("")];
  };
  function wrapLines(text, width) {
    const lines = [];
    let line = "";
    for (const word of text.split(/\s+/).filter(Boolean)) {
      const long = Array.from(line).length + 1 + Array.from(word).length > width;
      if (line && long) { lines.push(line); line = word; } else line = line ? `${line} ${word}` : word;
    }
    return [...lines, line];
  }
  /** User text (a sentence, a word, a piece) as Plotly must be given it, whole and inert: Plotly
      reads <b>, <a href>, <span style>, <br> and entities in every text, hover label, tick, legend
      and title, so & < > become the entities it decodes back. With `wrap`, a long text is broken
      at spaces into lines of about that many characters (<br>) instead of being cut. */
  CLV.plotText = (text, wrap = 0) => {
    const s = String(text ?? "");
    return (wrap > 0 ? wrapLines(s, wrap) : [s]).map((l) => l.replace(/[&<>]/g, (c) => ESC[c])).join("<br>");
  };
  /** A Plotly axis whose items are keyed by position: Plotly puts equal category strings in one
      slot (the two "the" of a sentence would share a bar), so item i sits at i and its tick shows
      its label (plotText), followed by `tag(i)` where that label occurs more than once.
      → {keys: [0..n-1], shown: the tick texts (plain), axis: the layout of the axis}. */
  CLV.slots = (labels, tag = (i) => `(${i})`) => {
    const count = new Map();
    for (const l of labels) count.set(String(l), (count.get(String(l)) || 0) + 1);
    const shown = labels.map((l, i) => (count.get(String(l)) > 1 ? `${l} ${tag(i)}` : String(l)));
    const keys = labels.map((_, i) => i);
    const ticktext = shown.map((t) => CLV.plotText(t));
    const axis = { type: "linear", tickmode: "array", tickvals: keys, ticktext,
      range: [-0.5, labels.length - 0.5], automargin: true, autotickangles: [0, 30, 60, 90], zeroline: false,
      showgrid: false };
    return { keys, shown, axis };
  };

  // ---- downloads: the view as drawn, with its title, as SVG or PNG --------------------------
  const SVGNS = "http://www.w3.org/2000/svg", XLINK = "http://www.w3.org/1999/xlink";
  const XML = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" };
  const xml = (s) => String(s).replace(/[&<>"]/g, (c) => XML[c]);
  const LEAVE_OUT = ".clv-downloads, .modebar-container, script, style, template, option, datalist";
  const SVG_STYLE = ["fill", "fill-opacity", "stroke", "stroke-width", "stroke-opacity", "stroke-dasharray",
    "opacity", "font-family", "font-size", "font-weight", "font-style", "text-anchor", "dominant-baseline",
    "shape-rendering"];
  const PAD = 10;
  const paint = (c) => (c && c !== "transparent" && !/^rgba\(.*,\s*0\)$/.test(c) ? c : null);
  const n1 = (x) => Math.round(x * 10) / 10;
  const at = (b) => `x="${b.x}" y="${b.y}" width="${b.w}" height="${b.h}"`;

  /** Everything `el` shows (its title included, its download buttons left out), copied into SVG
      where it is laid out: text as <text>, backgrounds and borders as shapes, our SVG figures with
      their computed styles, canvases as images, Plotly figures as Plotly exports them, and each
      control as the state it is in (a list's chosen entry, a box ☑ or ☐), so that the figure says
      which layer, head or word it shows. → {svg (text), width, height} */
  async function snapshot(el) {
    const o = el.getBoundingClientRect(), out = [];
    const clips = [];  // the boxes of the scrolling parents being walked: what lies outside is not seen
    let right = 0, bottom = 0, clipId = 0;
    const place = (r) => {
      const b = { x: n1(r.left - o.left + PAD), y: n1(r.top - o.top + PAD), w: n1(r.width), h: n1(r.height) };
      let x2 = b.x + b.w, y2 = b.y + b.h;
      for (const c of clips) { x2 = Math.min(x2, c.x + c.w); y2 = Math.min(y2, c.y + c.h); }
      right = Math.max(right, x2); bottom = Math.max(bottom, y2);
      return b;
    };
    function label(s, cs, b) {  // one line of text in the box b, in the style cs
      const size = parseFloat(cs.fontSize), y = n1(b.y + b.h / 2 + 0.35 * size);
      out.push(`<text x="${b.x}" y="${y}" font-family="${xml(cs.fontFamily)}" font-size="${size}" ` +
        `font-weight="${cs.fontWeight}" font-style="${cs.fontStyle}" fill="${cs.color}" ` +
        `xml:space="preserve">${xml(s)}</text>`);
    }
    function text(node) {  // one <text> per line the browser laid the text out on
      const s = node.textContent;
      if (!s.trim()) return;
      const cs = getComputedStyle(node.parentElement), range = document.createRange();
      let line = null;
      const flush = () => { if (line) label(line.words.join(" "), cs, place(line.rect)); line = null; };
      for (const m of s.matchAll(/\S+/g)) {
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const r = range.getClientRects()[0];
        if (!r) continue;
        if (line && Math.abs(r.top - line.rect.top) < 2) {
          line.words.push(m[0]);
          line.rect.width = r.right - line.rect.left;
        } else {
          flush();
          line = { words: [m[0]], rect: { left: r.left, top: r.top, width: r.width, height: r.height } };
        }
      }
      flush();
    }
    function svgCopy(svg, b) {
      const copy = svg.cloneNode(true);
      const from = [svg, ...svg.querySelectorAll("*")], to = [copy, ...copy.querySelectorAll("*")];
      from.forEach((e, i) => {
        const cs = getComputedStyle(e);
        to[i].setAttribute("style", SVG_STYLE.map((p) => `${p}:${cs.getPropertyValue(p)}`).join(";"));
        to[i].removeAttribute("class");
      });
      const box = { x: b.x, y: b.y, width: b.w, height: b.h };
      for (const [k, v] of Object.entries(box)) copy.setAttribute(k, v);
      return new XMLSerializer().serializeToString(copy);
    }
    async function plotly(div, b) {
      const size = { format: "svg", width: Math.round(b.w), height: Math.round(b.h) };
      const url = await Plotly.toImage(div, size), body = url.slice(url.indexOf(",") + 1);
      const svgText = url.includes(";base64,")
        ? new TextDecoder().decode(Uint8Array.from(atob(body), (c) => c.charCodeAt(0)))
        : decodeURIComponent(body);
      const svg = new DOMParser().parseFromString(svgText, "image/svg+xml").documentElement;
      svg.setAttribute("x", b.x);
      svg.setAttribute("y", b.y);
      return new XMLSerializer().serializeToString(svg);
    }
    function edges(cs, b) {  // the background and borders of an element
      const bg = paint(cs.backgroundColor);
      if (bg) out.push(`<rect ${at(b)} rx="${parseFloat(cs.borderTopLeftRadius) || 0}" fill="${bg}"/>`);
      const sides = { Top: [b.x, b.y, b.x + b.w, b.y], Bottom: [b.x, b.y + b.h, b.x + b.w, b.y + b.h],
        Left: [b.x, b.y, b.x, b.y + b.h], Right: [b.x + b.w, b.y, b.x + b.w, b.y + b.h] };
      for (const [side, [x1, y1, x2, y2]] of Object.entries(sides)) {
        const w = parseFloat(cs[`border${side}Width`]), c = paint(cs[`border${side}Color`]);
        if (w > 0 && c && cs[`border${side}Style`] !== "none") {
          out.push(`<line x1="${x1}" y1="${y1}" x2="${x2}" y2="${y2}" stroke="${c}" stroke-width="${w}"/>`);
        }
      }
    }
    async function walk(node) {
      if (node.nodeType === Node.TEXT_NODE) { text(node); return; }
      if (node.nodeType !== Node.ELEMENT_NODE || node.matches(LEAVE_OUT)) return;
      const cs = getComputedStyle(node);
      if (cs.display === "none" || cs.visibility === "hidden") return;
      const b = place(node.getBoundingClientRect());
      if (node.classList.contains("js-plotly-plot")) { out.push(await plotly(node, b)); return; }
      if (node instanceof SVGSVGElement) { out.push(svgCopy(node, b)); return; }
      if (node instanceof HTMLSelectElement) {  // the chosen entry, as text
        const chosen = node.options[node.selectedIndex];
        if (chosen) label(chosen.text, cs, { ...b, x: b.x + 4 });
        return;
      }
      if (node instanceof HTMLInputElement) {
        if (node.type === "checkbox" || node.type === "radio") label(node.checked ? "☑" : "☐", cs, b);
        else if (node.value) label(node.value, cs, { ...b, x: b.x + 4 });
        return;
      }
      if (node instanceof HTMLButtonElement) {  // a toggle: its face, a thin edge (not the browser's 3-D one)
        out.push(`<rect ${at(b)} rx="3" fill="${paint(cs.backgroundColor) || "#fff"}" stroke="#9aa5b1"/>`);
        for (const child of node.childNodes) await walk(child);
        return;
      }
      edges(cs, b);
      if (node instanceof HTMLCanvasElement) {
        out.push(`<image ${at(b)} preserveAspectRatio="none" image-rendering="optimizeSpeed" ` +
          `style="image-rendering:pixelated" xlink:href="${node.toDataURL("image/png")}"/>`);
        return;
      }
      const scrolls = cs.overflowX !== "visible" || cs.overflowY !== "visible";
      if (scrolls) {
        clips.push(b);
        clipId += 1;
        out.push(`<clipPath id="clv-clip-${clipId}"><rect ${at(b)}/></clipPath>`,
          `<g clip-path="url(#clv-clip-${clipId})">`);
      }
      for (const child of node.childNodes) await walk(child);
      if (scrolls) { out.push("</g>"); clips.pop(); }
    }
    for (const child of el.childNodes) await walk(child);
    const width = Math.ceil(Math.max(right, o.width) + PAD);
    const height = Math.ceil(Math.max(bottom, o.height) + PAD);
    const svg = `<svg xmlns="${SVGNS}" xmlns:xlink="${XLINK}" width="${width}" height="${height}" ` +
      `viewBox="0 0 ${width} ${height}"><rect width="${width}" height="${height}" fill="#fff"/>` +
      `${out.join("")}</svg>`;
    return { width, height, svg };
  }
  /** The view drawn in `el` as one SVG, its title on top → {svg (text), width, height}. */
  CLV.toSvg = snapshot;
  /** The view drawn in `el` as a PNG Blob at twice its size (the SVG of toSvg, rasterised). */
  CLV.toPng = async (el) => {
    const { svg, width, height } = await snapshot(el);
    const img = new Image();
    await new Promise((ok, fail) => {
      img.onload = ok;
      img.onerror = () => fail(new Error("the view's SVG could not be drawn as an image"));
      img.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
    });
    const c = h("canvas", { width: 2 * width, height: 2 * height }), ctx = c.getContext("2d");
    ctx.fillStyle = "#fff";
    ctx.fillRect(0, 0, c.width, c.height);
    ctx.scale(2, 2);
    ctx.drawImage(img, 0, 0, width, height);
    return new Promise((ok) => c.toBlob(ok, "image/png"));
  };
  /** Save `blob` as the file `name`. Its URL lives a minute: a busy browser may start reading it
      seconds after the click, and a URL revoked before that saves nothing. */
  function save(blob, name) {
    const url = URL.createObjectURL(blob);
    const a = h("a", { href: url, download: name });
    document.body.append(a); a.click(); a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
  }
  CLV.save = save;
  /** Save the view drawn in `el` as `contextlens-<kind>.svg` or `.png`. */
  CLV.download = async (el, format) => {
    const name = `contextlens-${el.dataset.kind || "view"}.${format}`;
    try {
      const blob = format === "svg" ? new Blob([(await snapshot(el)).svg], { type: "image/svg+xml" })
        : await CLV.toPng(el);
      save(blob, name);
      el.dataset.downloaded = name;
    } catch (e) {
      el.dataset.downloaded = `failed: ${e.message}`;
      throw e;
    }
  };
})();
