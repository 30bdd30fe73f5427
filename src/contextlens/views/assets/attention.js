/* contextlens views of attention, drawn with our own SVG and canvas: the head view, the
   model view, the neuron view, the mask view and the input stage. The numbers come from
   the library (contextlens.views); what this script computes (a dot product, a softmax)
   it computes in float64 as the library does. */
"use strict";
(function () {
  const CLV = window.CLViews, h = CLV.h, esc = CLV.esc, fmt = CLV.fmt;
  const SVGNS = "http://www.w3.org/2000/svg";
  const ROW = 18, TOP = 30, LABEL = 150, GAP = 220;
  const CRISP = 600;  // more lines than this are drawn without anti-aliasing: 2-3 times faster to paint

  function decode(level) {
    if (!level._d) level._d = { w: CLV.sparse(level.weights), share: CLV.unpack(level.special_share),
      roll: CLV.unpack(level.rollout) };
    return level._d;
  }
  const short = (t, n = 18) => CLV.short(t, n);

  /** The series of lines a head view draws: one per selected head (or the mean), each giving
      row(i) → [[j, w], ...] (stored weights) and share(i) → what token i gave the special tokens. */
  function headSeries(A, level, layer, heads) {
    const d = decode(level), n = level.tokens.length, H = A.heads;
    const keys = heads === "mean" ? [H] : heads === "all" ? [...Array(H).keys()] : heads;
    return keys.map((k) => {
      const base = (layer * (H + 1) + k) * n;
      return { key: k, colour: k === H ? "#222" : CLV.colour(k), label: k === H ? "mean of heads" : `head ${k}`,
        threshold: level.weights.thresholds[layer * (H + 1) + k],
        row: (i) => d.w.row(base + i), share: (i) => (d.share ? d.share.get(base + i) : null) };
    });
  }
  function rolloutSeries(level, layer, threshold) {
    const d = decode(level), n = level.tokens.length, m = d.roll.shape[2];
    return [{ key: "rollout", colour: "#6a3d9a", label: "rollout", threshold, row: (i) => {
      const out = [];
      for (let j = 0; j < n; j++) { const w = d.roll.get((layer * n + i) * m + j); if (w >= threshold) out.push([j, w]); }
      return out;
    }, share: (i) => (level.rollout_special ? d.roll.get((layer * n + i) * m + n) : null) }];
  }

  /** Two columns of tokens and a line from each token to each token it attends to (opacity =
      weight); hovering a token keeps its lines and prints the weights. */
  function linesPanel(opts) {
    // opts: {tokens, titles, special, specialNode, showSpecials, series (each with its threshold)}
    const n = opts.tokens.length;
    const visible = [...Array(n).keys()].filter((i) => opts.showSpecials || !opts.special[i]);
    const at = new Map(visible.map((i, r) => [i, r]));
    const node = opts.specialNode && opts.showSpecials;  // word level: the special tokens as one extra column
    const rows = visible.length + (node ? 1 : 0);
    const width = 2 * LABEL + GAP + 130, height = TOP + rows * ROW + 10;
    const xl = LABEL, xr = LABEL + GAP, y = (r) => TOP + r * ROW + ROW / 2;
    const svg = document.createElementNS(SVGNS, "svg");
    svg.setAttribute("width", width); svg.setAttribute("height", height);
    svg.setAttribute("class", "clv-lines-svg");
    const parts = [`<text x="${xl}" y="14" text-anchor="end" class="clv-colhead">attends…</text>`,
      `<text x="${xr}" y="14" class="clv-colhead">…to</text>`];
    const single = opts.series.length === 1;
    for (const i of visible) {
      const r = at.get(i), t = esc(opts.titles[i] || opts.tokens[i]);
      const share = single && !opts.showSpecials && opts.series[0].share(i);
      if (share !== null && share !== false && share !== undefined) {
        parts.push(`<rect x="2" y="${y(r) - 4}" width="${(share * 40).toFixed(2)}" height="8" class="clv-share" data-i="${i}" data-value="${share}"><title>${esc(opts.tokens[i])} gives the special tokens ${fmt(share)}</title></rect>`);
      }
      parts.push(`<text x="${xl - 6}" y="${y(r) + 4}" text-anchor="end" class="clv-tok clv-left${opts.special[i] ? " clv-special" : ""}" data-i="${i}"><title>${t}</title>${esc(short(opts.tokens[i]))}</text>`);
      parts.push(`<text x="${xr + 6}" y="${y(r) + 4}" class="clv-tok clv-right${opts.special[i] ? " clv-special" : ""}" data-j="${i}"><title>${t}</title>${esc(short(opts.tokens[i]))}</text>`);
      parts.push(`<text x="${xr + 6 + LABEL - 20}" y="${y(r) + 4}" class="clv-num clv-num-right" data-j="${i}"></text>`);
      parts.push(`<text x="44" y="${y(r) + 4}" class="clv-num clv-num-left" data-i="${i}"></text>`);
    }
    if (node) {
      const r = visible.length;
      parts.push(`<text x="${xr + 6}" y="${y(r) + 4}" class="clv-tok clv-right clv-special" data-j="${n}"><title>[CLS], [SEP], BOS…: the special tokens together (an Encoding keeps their share as one)</title>[special tokens]</text>`);
      parts.push(`<text x="${xr + 6 + LABEL - 20}" y="${y(r) + 4}" class="clv-num clv-num-right" data-j="${n}"></text>`);
    }
    parts.push(`<g class="clv-lines"></g>`);
    svg.innerHTML = parts.join("");
    const g = svg.querySelector(".clv-lines");

    function draw(hover) {
      const out = [];
      let count = 0;
      opts.series.forEach((s, k) => {
        for (const i of visible) {
          if (hover && hover.side === "left" && hover.i !== i) continue;
          const entries = s.row(i);
          if (node) { const w = s.share(i); if (w !== null && w >= s.threshold) entries.push([n, w]); }
          for (const [j, w] of entries) {
            const r = j === n ? visible.length : at.get(j);
            if (r === undefined || (hover && hover.side === "right" && hover.i !== j)) continue;
            out.push(`<line x1="${xl}" y1="${y(at.get(i))}" x2="${xr}" y2="${y(r)}" stroke="${s.colour}" stroke-opacity="${w.toFixed(4)}" data-i="${i}" data-j="${j}" data-s="${k}" data-w="${w}"/>`);
            count++;
          }
        }
      });
      g.setAttribute("shape-rendering", count > CRISP ? "optimizeSpeed" : "auto");
      g.innerHTML = out.join("");
      svg.dataset.lines = String(count);
      numbers(hover);
    }
    function numbers(hover) {
      svg.querySelectorAll(".clv-num").forEach((t) => { t.textContent = ""; t.removeAttribute("data-value"); });
      if (!hover || !single) return;
      const s = opts.series[0];
      if (hover.side === "left") {
        const got = new Map(s.row(hover.i));
        if (node) got.set(n, s.share(hover.i));
        svg.querySelectorAll(".clv-num-right").forEach((t) => {
          const j = Number(t.dataset.j), w = got.get(j);
          t.textContent = w === undefined ? `<${+s.threshold.toPrecision(2)}` : fmt(w);
          if (w !== undefined) t.dataset.value = String(w);
        });
      } else {
        for (const i of visible) {
          const hit = hover.i === n ? [n, s.share(i)] : s.row(i).find(([j]) => j === hover.i);
          const t = svg.querySelector(`.clv-num-left[data-i="${i}"]`);
          t.textContent = hit ? fmt(hit[1]) : `<${+s.threshold.toPrecision(2)}`;
          if (hit) t.dataset.value = String(hit[1]);
        }
      }
    }
    svg.addEventListener("mouseover", (e) => {
      const t = e.target.closest(".clv-tok");
      if (!t) return;
      const hover = t.classList.contains("clv-left") ? { side: "left", i: Number(t.dataset.i) } : { side: "right", i: Number(t.dataset.j) };
      svg.dataset.hover = `${hover.side}:${hover.i}`;
      draw(hover);
    });
    svg.addEventListener("mouseleave", () => { delete svg.dataset.hover; draw(null); });
    draw(null);
    return svg;
  }

  function specialNote(A, level, layer, heads) {
    const s = headSeries(A, level, layer, heads === "all" || Array.isArray(heads) && heads.length !== 1 ? "mean" : heads)[0];
    const idx = level.tokens.map((_, i) => i).filter((i) => !level.special[i]);
    const vals = idx.map((i) => s.share(i)).filter((v) => v !== null);
    if (!vals.length) return "";
    const mean = vals.reduce((a, b) => a + b, 0) / vals.length;
    return `The special tokens ([CLS], [SEP], BOS…) get ${fmt(mean)} of each token's attention on average (${s.label}, this layer).`;
  }

  // ---- head view ---------------------------------------------------------------------------
  function headView(el, data) {
    const A = data.attention, init = data.initial || {};
    const st = { layer: init.layer ?? A.layer_ids.length - 1, heads: init.heads ?? "mean",
      level: init.level || "words", specials: !!init.specials };
    const controls = h("div", { class: "clv-controls" });
    const info = h("p", { class: "clv-info" });
    const stage = h("div", { class: "clv-stage" });
    el.append(controls, info, stage);

    function headBoxes() {
      const box = h("span", { class: "clv-heads", role: "group", "aria-label": "heads" });
      box.append(h("button", { type: "button", class: `clv-mean${st.heads === "mean" ? " clv-on" : ""}`, onclick: () => { st.heads = "mean"; redraw(); } }, "mean"));
      box.append(h("button", { type: "button", class: `clv-all${st.heads === "all" ? " clv-on" : ""}`, onclick: () => { st.heads = "all"; redraw(); } }, "all"));
      const chosen = st.heads === "all" ? [...Array(A.heads).keys()] : st.heads === "mean" ? [] : st.heads;
      for (let k = 0; k < A.heads; k++) {
        const cb = h("input", { type: "checkbox", class: "clv-head", "data-head": k, checked: chosen.includes(k),
          onchange: (e) => {
            const set = new Set(st.heads === "all" ? [...Array(A.heads).keys()] : st.heads === "mean" ? [] : st.heads);
            if (e.target.checked) set.add(k); else set.delete(k);
            st.heads = set.size ? [...set].sort((a, b) => a - b) : "mean";
            redraw();
          } });
        box.append(h("label", { class: "clv-headbox", style: `border-color:${CLV.colour(k)}` }, cb, String(k)));
      }
      return box;
    }
    function redraw() {
      controls.innerHTML = "";
      controls.append(CLV.select("layer", A.layer_ids.map((id, p) => [p, `${id}: ${A.layer_names[p]}`]), st.layer,
        (v) => { st.layer = Number(v); redraw(); }, "clv-layer"));
      controls.append(headBoxes());
      if (A.pieces) controls.append(CLV.select("tokens", [["words", "words"], ["pieces", "sub-word pieces"]], st.level,
        (v) => { st.level = v; redraw(); }, "clv-level"));
      controls.append(CLV.checkbox("special tokens as columns", st.specials, (v) => { st.specials = v; redraw(); }, "clv-specials"));
      const level = A[st.level];
      const series = headSeries(A, level, st.layer, st.heads);
      const svg = linesPanel({ tokens: level.tokens, titles: level.titles, special: level.special,
        specialNode: st.level === "words" && level.special_share !== null, showSpecials: st.specials, series });
      stage.innerHTML = "";
      stage.append(svg);
      const used = Math.max(...series.map((s) => s.threshold));
      const raised = used > A.threshold ? ` (${series.length > 1 ? "up to " : ""}${+used.toPrecision(3)} here: each head keeps its strongest weights, to keep the page small)` : "";
      info.textContent = `${A.layer_names[st.layer]} · lines for weights ≥ ${A.threshold}${raised}, stored to 1/65535 (` +
        `they hold ${(100 * level.weights.stored).toFixed(1)}% of all the attention among ${st.level}). ` +
        `${specialNote(A, level, st.layer, st.heads)} ${A.note || ""}`;
    }
    redraw();
  }
  CLV.register("head", (el, data) => headView(el, data));

  // ---- model view --------------------------------------------------------------------------
  function thumbMatrix(canvas, rowOf, n, colour) {
    canvas.width = n; canvas.height = n;
    const ctx = canvas.getContext("2d"), img = ctx.createImageData(n, n);
    const [r, g, b] = colour;
    for (let i = 0; i < n; i++) {
      for (const [j, w] of rowOf(i)) {
        if (j >= n) continue;
        const p = 4 * (i * n + j);
        img.data[p] = r; img.data[p + 1] = g; img.data[p + 2] = b; img.data[p + 3] = Math.round(255 * Math.sqrt(w));
      }
    }
    ctx.putImageData(img, 0, 0);
  }
  function thumbLines(canvas, rowOf, n, from, colour) {
    const S = 72;
    canvas.width = S; canvas.height = S;
    const ctx = canvas.getContext("2d"), y = (i) => 4 + (i + 0.5) * ((S - 8) / n);
    ctx.strokeStyle = colour; ctx.lineWidth = 1.2;
    for (const [j, w] of rowOf(from)) {
      if (j >= n) continue;
      ctx.globalAlpha = Math.sqrt(w); ctx.beginPath(); ctx.moveTo(8, y(from)); ctx.lineTo(S - 8, y(j)); ctx.stroke();
    }
  }
  CLV.register("model", (el, data) => {
    const A = data.attention, init = data.initial || {};
    const st = { level: init.level || "words", word: init.word ?? null };
    const controls = h("div", { class: "clv-controls" });
    const grid = h("div", { class: "clv-grid" });
    const detail = h("div", { class: "clv-detail" });
    el.append(controls, h("p", { class: "clv-info" }, "Each thumbnail is one head of one layer (colour intensity = √weight), " +
      "the last column the mean of the heads, the last row attention rollout (it ignores heads). Click one to open it."), grid, detail);

    function tokenOf(level) {  // the chosen word's first token at this level
      if (st.word === null) return null;
      const t = level.token_words.findIndex((ws) => ws.includes(st.word));
      return t < 0 ? null : t;
    }
    function open(layer, head) {
      detail.innerHTML = "";
      detail.append(h("h3", {}, head === "rollout" ? `rollout after ${A.layer_names[layer]}` :
        `${A.layer_names[layer]}, ${head === A.heads ? "mean of heads" : `head ${head}`}`));
      const box = h("div", { class: "clv-open", "data-layer": layer, "data-head": head });
      detail.append(box);
      if (head === "rollout") {
        const level = A[st.level];
        box.append(linesPanel({ tokens: level.tokens, titles: level.titles, special: level.special,
          specialNode: level.rollout_special, showSpecials: true, series: rolloutSeries(level, layer, A.threshold) }));
      } else {
        const heads = head === A.heads ? "mean" : [head];
        headView(box, { attention: A, initial: { layer, heads, level: st.level, specials: false } });
      }
    }
    function draw() {
      controls.innerHTML = "";
      const words = A.words.tokens.map((t, i) => [i, `lines from '${t}' (${i})`]);
      controls.append(CLV.select("thumbnails", [["", "whole matrix"], ...words], st.word ?? "",
        (v) => { st.word = v === "" ? null : Number(v); draw(); }, "clv-thumbs"));
      if (A.pieces) controls.append(CLV.select("tokens", [["words", "words"], ["pieces", "sub-word pieces"]], st.level,
        (v) => { st.level = v; draw(); }, "clv-level"));
      const level = A[st.level], n = level.tokens.length, from = tokenOf(level);
      grid.innerHTML = "";
      const table = h("table", { class: "clv-thumbgrid" });
      const head = h("tr", {}, h("th", {}, ""));
      for (let k = 0; k <= A.heads; k++) head.append(h("th", {}, k === A.heads ? "mean" : String(k)));
      table.append(head);
      A.layer_ids.forEach((id, layer) => {
        const tr = h("tr", {}, h("th", { title: A.layer_names[layer] }, String(id)));
        for (const s of headSeries(A, level, layer, "all").concat(headSeries(A, level, layer, "mean"))) {
          const c = h("canvas", { class: "clv-thumb", "data-layer": layer, "data-head": s.key, title: `${A.layer_names[layer]}, ${s.label}`,
            onclick: () => open(layer, s.key) });
          if (from === null) thumbMatrix(c, s.row, n, s.key === A.heads ? [34, 34, 34] : [31, 119, 180]);
          else thumbLines(c, s.row, n, from, s.colour);
          tr.append(h("td", {}, c));
        }
        table.append(tr);
      });
      table.append(h("tr", {}, h("th", {}, ""), ...A.layer_ids.map((id) => h("th", {}, `after ${id}`))));
      const roll = h("tr", { class: "clv-rollout-row" }, h("th", { title: "attention rollout (Abnar & Zuidema 2020)" }, "rollout"));
      A.layer_ids.forEach((id, layer) => {
        const s = rolloutSeries(level, layer, 0)[0];
        const c = h("canvas", { class: "clv-thumb clv-rollout", "data-layer": layer, "data-head": "rollout",
          title: `rollout after ${A.layer_names[layer]}`, onclick: () => open(layer, "rollout") });
        if (from === null) thumbMatrix(c, s.row, n, [106, 61, 154]); else thumbLines(c, s.row, n, from, s.colour);
        roll.append(h("td", {}, c));
      });
      table.append(roll);
      grid.append(table);
      grid.dataset.thumbs = String(table.querySelectorAll("canvas").length);
    }
    draw();
  });

  // ---- neuron view -------------------------------------------------------------------------
  function vectorCell(values, cls) {
    if (values.length <= 8) return h("td", { class: `clv-vec ${cls}`, "data-value": JSON.stringify(values) }, values.map((v) => fmt(v)).join("  "));
    const c = h("canvas", { width: values.length, height: 1, class: "clv-strip", title: `${values.length} dims` });
    const ctx = c.getContext("2d"), img = ctx.createImageData(values.length, 1);
    const m = Math.max(...values.map(Math.abs)) || 1;
    values.forEach((v, k) => { const [r, g, b] = CLV.diverging(v / m); img.data.set([r, g, b, 255], 4 * k); });
    ctx.putImageData(img, 0, 0);
    return h("td", { class: `clv-vec ${cls}` }, c);
  }
  function sliceVec(arr, head, t, T, d) { const o = (head * T + t) * d; return Array.from(arr.data.subarray(o, o + d)); }
  function softmaxRow(scores, allowed, fill) {  // fill: -Infinity or 0 for the masked scores
    const s = scores.map((v, j) => (allowed[j] ? v : fill));
    const max = Math.max(...s.filter((v, j) => allowed[j]));
    const e = s.map((v) => (v === -Infinity ? 0 : Math.exp(v - max)));
    const z = e.reduce((a, b) => a + b, 0);
    return e.map((v) => v / z);
  }
  function allowedRows(d) { const a = CLV.unpack(d.allowed).data, T = d.tokens.length; return (i) => Array.from(a.subarray(i * T, (i + 1) * T), Boolean); }

  CLV.register("neuron", (el, d) => {
    const T = d.tokens.length, D = d.d_head, q = CLV.unpack(d.queries), k = CLV.unpack(d.keys), W = CLV.unpack(d.weights);
    const bias = CLV.unpack(d.bias), allowedOf = allowedRows(d);
    const st = { head: d.initial.head, token: d.initial.token };
    const controls = h("div", { class: "clv-controls" }), summary = h("p", { class: "clv-info" }), body = h("div", { class: "clv-stage" });
    el.append(controls, summary, body);
    const label = (t) => `${d.tokens[t]} (${t})`;
    function draw() {
      controls.innerHTML = "";
      controls.append(CLV.select("head", [...Array(d.heads).keys()].map((x) => [x, String(x)]), st.head, (v) => { st.head = Number(v); draw(); }, "clv-head-select"));
      controls.append(CLV.select("query token", d.tokens.map((t, i) => [i, label(i)]), st.token, (v) => { st.token = Number(v); draw(); }, "clv-token"));
      const qv = sliceVec(q, st.head, st.token, T, D);
      const allowed = allowedOf(st.token);
      const raw = [], scaled = [], rows = [];
      for (let j = 0; j < T; j++) {
        const kv = sliceVec(k, st.head, j, T, D);
        const prod = qv.map((x, c) => x * kv[c]);
        const r = prod.reduce((a, b) => a + b, 0);
        const b = bias ? bias.get((st.head * T + st.token) * T + j) : 0;
        raw.push(r); scaled.push(r * d.scale + b);
        rows.push({ j, kv, prod, r, b });
      }
      const soft = softmaxRow(scaled, allowed, -Infinity);
      summary.textContent = `${d.layer_name}, head ${st.head}: the query of '${label(st.token)}' against every key. ` +
        `d = ${D}, scale = 1/√${D} = ${fmt(d.scale, 4)}${bias ? "; plus the model's relative-position bias" : ""}. ` +
        `weight = exp(score) / Σ exp(score) over the keys the mask allows; a masked key's score is −∞, so its weight is exactly 0.`;
      const table = h("table", { class: "clv-neuron" });
      const hd = ["key", "k", "q∘k", "q·k", `× ${fmt(d.scale, 4)}`].concat(bias ? ["+ bias"] : []).concat(["mask", "softmax", "encoder's weight"]);
      table.append(h("tr", {}, ...hd.map((x) => h("th", {}, x))));
      table.append(h("tr", { class: "clv-query" }, h("th", {}, `q: ${d.tokens[st.token]}`), vectorCell(qv, "clv-q"), ...Array(hd.length - 2).fill(0).map(() => h("td", {}))));
      for (const { j, kv, prod, r, b } of rows) {
        const tip = d.titles ? d.titles[j] : null;
        const key = h("th", { class: d.special[j] ? "clv-special" : "", title: tip }, label(j));
        const cells = [key, vectorCell(kv, "clv-k"), vectorCell(prod, "clv-prod"),
          h("td", { class: "clv-raw", "data-value": String(r) }, fmt(r, 4)),
          h("td", { class: "clv-scaled", "data-value": String(r * d.scale) }, fmt(r * d.scale, 4))];
        if (bias) cells.push(h("td", { class: "clv-bias", "data-value": String(b), title: `score ${fmt(scaled[j], 4)}` }, fmt(b, 4)));
        cells.push(h("td", { class: "clv-mask" }, allowed[j] ? "0" : "−∞"));
        cells.push(h("td", { class: "clv-softmax", "data-value": String(soft[j]) }, fmt(soft[j], 4)));
        const own = W.get((st.head * T + st.token) * T + j);
        cells.push(h("td", { class: "clv-model", "data-value": String(own) }, fmt(own, 4)));
        table.append(h("tr", { "data-j": j, class: allowed[j] ? "" : "clv-masked" }, ...cells));
      }
      body.innerHTML = "";
      body.append(table);
    }
    draw();
  });

  // ---- mask view ---------------------------------------------------------------------------
  function heat(matrix, T, opts) {  // opts: {masked(i,j), label(i,j), colour(v), cls}
    const C = T <= 14 ? 34 : Math.max(6, Math.floor(480 / T)), pad = 90;
    const parts = [];
    for (let i = 0; i < T; i++) {
      for (let j = 0; j < T; j++) {
        const v = matrix[i][j], m = opts.masked(i, j);
        parts.push(`<rect x="${pad + j * C}" y="${pad + i * C}" width="${C - 1}" height="${C - 1}" fill="${m ? "url(#clv-hatch)" : opts.colour(v)}" class="${opts.cls}${m ? " clv-masked" : ""}" data-i="${i}" data-j="${j}" data-value="${v}"><title>${esc(opts.tokens[i])} → ${esc(opts.tokens[j])}: ${opts.label(i, j)}</title></rect>`);
        if (C >= 30) parts.push(`<text x="${pad + j * C + C / 2}" y="${pad + i * C + C / 2 + 4}" text-anchor="middle" class="clv-cell">${opts.label(i, j)}</text>`);
      }
      parts.push(`<text x="${pad - 4}" y="${pad + i * C + C / 2 + 4}" text-anchor="end" class="clv-tok">${esc(short(opts.tokens[i], 12))}</text>`);
      parts.push(`<text transform="translate(${pad + i * C + C / 2},${pad - 4}) rotate(-60)" class="clv-tok">${esc(short(opts.tokens[i], 12))}</text>`);
    }
    const svg = document.createElementNS(SVGNS, "svg");
    svg.setAttribute("width", pad + T * C + 8); svg.setAttribute("height", pad + T * C + 8);
    svg.innerHTML = `<defs><pattern id="clv-hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#eee"/><line x1="0" y1="0" x2="0" y2="6" stroke="#bbb" stroke-width="3"/></pattern></defs>${parts.join("")}`;
    return svg;
  }
  CLV.register("mask", (el, d) => {
    const T = d.tokens.length, S = CLV.unpack(d.scores), model = allowedRows(d), pad = d.padding;
    const st = { head: d.initial.head, fill: d.initial.fill, mask: d.initial.mask };
    const controls = h("div", { class: "clv-controls" }), info = h("p", { class: "clv-info" }), body = h("div", { class: "clv-stage clv-masks" });
    el.append(controls, info, body);
    const allowed = (i) => {
      if (st.mask === "model") return model(i);
      return [...Array(T).keys()].map((j) => (st.mask === "none" ? true : j <= i && j < T - pad));
    };
    function draw() {
      controls.innerHTML = "";
      controls.append(CLV.select("head", [...Array(d.heads).keys()].map((x) => [x, String(x)]), st.head, (v) => { st.head = Number(v); draw(); }, "clv-head-select"));
      controls.append(CLV.select("mask", [["model", "as the encoder ran it"], ["causal", "causal"], ["none", "none"]], st.mask, (v) => { st.mask = v; draw(); }, "clv-mask-select"));
      controls.append(CLV.select("masked scores set to", [["-inf", "−∞"], ["0", "0"]], st.fill, (v) => { st.fill = v; draw(); }, "clv-fill"));
      const fill = st.fill === "0" ? 0 : -Infinity;
      const scores = [...Array(T).keys()].map((i) => Array.from(S.data.subarray((st.head * T + i) * T, (st.head * T + i + 1) * T)));
      const masks = [...Array(T).keys()].map(allowed);
      const weights = scores.map((row, i) => softmaxRow(row, masks[i], fill));
      const leak = weights.map((row, i) => row.reduce((a, w, j) => a + (masks[i][j] ? 0 : w), 0));
      const max = Math.max(...scores.flat().map(Math.abs)) || 1;
      body.innerHTML = "";
      const left = heat(scores, T, { tokens: d.tokens, cls: "clv-score", masked: (i, j) => !masks[i][j],
        label: (i, j) => (masks[i][j] ? fmt(scores[i][j], 2) : st.fill === "0" ? "0" : "−∞"),
        colour: (v) => { const [r, g, b] = CLV.diverging(v / max); return `rgb(${r},${g},${b})`; } });
      const right = heat(weights, T, { tokens: d.tokens, cls: "clv-weight", masked: (i, j) => !masks[i][j] && weights[i][j] === 0,
        label: (i, j) => fmt(weights[i][j], 2), colour: (v) => `rgba(31,119,180,${Math.sqrt(v).toFixed(3)})` });
      const leaks = h("table", { class: "clv-leaks" }, h("tr", {}, h("th", {}, "token"), h("th", {}, "weight on masked positions")));
      d.tokens.forEach((t, i) => leaks.append(h("tr", {}, h("th", {}, t), h("td", { class: "clv-leak", "data-i": i, "data-value": String(leak[i]) }, fmt(leak[i], 4)))));
      body.append(h("figure", {}, h("figcaption", {}, "scores q·k × scale (+ bias), masked"), left),
        h("figure", {}, h("figcaption", {}, "weights after the softmax"), right), leaks);
      const worst = leak.indexOf(Math.max(...leak));
      info.textContent = st.fill === "0"
        ? `Masked scores set to 0: exp(0) = 1, so the masked positions still get weight — up to ${fmt(leak[worst], 4)} (row '${d.tokens[worst]}'). That is why masks use −∞.`
        : `Masked scores set to −∞: exp(−∞) = 0, so the masked positions get exactly 0 weight.${pad ? ` The last ${pad} tokens are padding.` : ""}`;
      body.dataset.maxLeak = String(leak[worst]);
    }
    draw();
  });

  // ---- input stage -------------------------------------------------------------------------
  function strip(arr, row, scale) {
    const dim = arr.shape[1], c = h("canvas", { width: dim, height: 1, class: "clv-strip", title: `${dim} dims` });
    const ctx = c.getContext("2d"), img = ctx.createImageData(dim, 1);
    for (let k = 0; k < dim; k++) { const [r, g, b] = CLV.diverging(arr.data[row * dim + k] / scale); img.data.set([r, g, b, 255], 4 * k); }
    ctx.putImageData(img, 0, 0);
    return c;
  }
  function maxAbs(arrs) { let m = 0; for (const a of arrs) if (a) for (const v of a.data) m = Math.max(m, Math.abs(v)); return m || 1; }
  CLV.register("input", (el, d) => {
    const S = d.sentences.map((s) => ({ ...s, row: CLV.unpack(s.row), entered: CLV.unpack(s.entered), last: CLV.unpack(s.last) }));
    const scale = { row: maxAbs(S.map((s) => s.row)), entered: maxAbs(S.map((s) => s.entered)), last: maxAbs(S.map((s) => s.last)) };
    el.append(h("p", { class: "clv-info" }, "Each word's pieces and their token ids select rows of the embedding matrix (layer 0: " +
      "the same ids give the same row in every sentence); row + position (+ LayerNorm) is what enters layer 1; the layers then " +
      "make it contextual. Strips: one pixel per dimension, red positive, blue negative."));
    S.forEach((s, n) => {
      const table = h("table", { class: "clv-input", "data-sentence": n });
      table.append(h("caption", {}, `S${n}: ${s.text}`));
      table.append(h("tr", {}, ...["word", "pieces (token ids)", "layer 0: embedding row", "entering layer 1", `after ${s.last_name}`].map((x) => h("th", {}, x))));
      s.words.forEach((w, i) => {
        const pieces = s.pieces[i].map((p, k) => (s.piece_ids ? `${p} (${s.piece_ids[i][k]})` : p)).join(" ");
        const spelt = s.raw_pieces ? `as the tokenizer spells them: ${s.raw_pieces[i].join(" ")}` : null;
        table.append(h("tr", { "data-i": i }, h("th", {}, w),
          h("td", { class: "clv-pieces", title: spelt }, pieces),
          h("td", {}, strip(s.row, i, scale.row)), h("td", {}, s.entered ? strip(s.entered, i, scale.entered) : "–"),
          h("td", {}, s.last ? strip(s.last, i, scale.last) : "–")));
      });
      el.append(table);
    });
    if (d.comparison) {
      const table = h("table", { class: "clv-compare" }, h("caption", {}, `'${d.word}' in one sentence vs another: cosine at each stage`));
      const stages = d.comparison[0].stages.map((x) => x.name);
      table.append(h("tr", {}, h("th", {}, "usages"), h("th", {}, "same ids"), ...stages.map((x) => h("th", {}, x))));
      for (const c of d.comparison) {
        table.append(h("tr", {}, h("th", {}, `${c.labels[0]} · ${c.labels[1]}`), h("td", {}, c.same_ids === null ? "–" : c.same_ids ? "yes" : "no"),
          ...c.stages.map((x) => h("td", { class: "clv-cos", "data-value": String(x.cosine) }, fmt(x.cosine, 3)))));
      }
      el.append(table);
    }
  });
})();
