/* contextlens lab, 1. the toy lab: bank and its neighbours on a finance/nature plane.
 *
 * The maths mirrors the library (contextlens.analysis.toy over encoders.mixing) step by step:
 * the table stores float32 (Math.fround), mixing runs in float64, the encoding stores
 * float32 again, and cosines are computed in float64; the API test and the browser test
 * check that every number equals the library's.
 */
"use strict";
window.ToyMath = (() => {
  const f32 = Math.fround;
  const AXES = { finance: [1, 0], nature: [0, 1] };

  /** cosine as contextlens.vectors.cosine: identical vectors give exactly 1, zero is an error. */
  function cosine(a, b) {
    const na = Math.sqrt(a[0] * a[0] + a[1] * a[1]), nb = Math.sqrt(b[0] * b[0] + b[1] * b[1]);
    if (na === 0 || nb === 0) throw new Error("cosine of a zero vector is undefined: move the vector off the origin");
    if (a[0] === b[0] && a[1] === b[1]) return 1.0;
    return Math.min(1, Math.max(-1, (a[0] * b[0] + a[1] * b[1]) / (na * nb)));
  }

  /** weights bank (word 0) gives each word of [bank, ...neighbours] (float64, before storage). */
  function weights(x, opts) {
    const n = x.length;
    if (opts.method === "average") {
      const alpha = opts.alpha;
      if (n === 1 && alpha < 1) throw new Error(
        `bank has no context words, so with alpha=${alpha} < 1 its mixed vector would be an average over nothing; pick a neighbour or set alpha to 1`);
      return x.map((_, j) => (j === 0 ? alpha : (1 - alpha) / (n - 1)));
    }
    const scale = opts.scale === null || opts.scale === undefined ? 1 / Math.sqrt(2) : opts.scale;
    const allowed = x.map((_, j) => j !== 0 || opts.include_self);
    if (!allowed.some(Boolean)) throw new Error(
      "bank may attend to no word (include_self is off and there is no neighbour); pick a neighbour or let bank attend to itself");
    const scores = x.map((v) => (x[0][0] * v[0] + x[0][1] * v[1]) * scale);
    const top = Math.max(...scores.filter((_, j) => allowed[j]));
    const e = scores.map((s, j) => (allowed[j] ? Math.exp(s - top) : 0));
    const sum = e.reduce((a, b) => a + b, 0);
    return e.map((v) => v / sum);
  }

  /** bank's contextual vector in "bank + neighbours": the same dict as toy_bank(). */
  function toyBank(neighbours, vectors, opts) {
    const words = ["bank", ...neighbours];
    const x = words.map((w) => [f32(vectors[w][0]), f32(vectors[w][1])]);  // (words, 2) float32 table rows
    const w = weights(x, opts);
    const out = [0, 1].map((d) => f32(w.reduce((acc, wj, j) => acc + wj * x[j][d], 0)));
    const probe = (v) => Object.fromEntries(Object.entries(AXES).map(([k, a]) => [k, cosine(v, a)]));
    return {
      sentence: words.join(" "), words, method: opts.method,
      weights: words.map((word, j) => ({ word, position: j, weight: f32(w[j]) })),
      static: x[0], contextual: out, static_cosines: probe(x[0]), cosines: probe(out),
    };
  }

  /** toy_compare(): two selections and the cosine between the two banks. */
  function toyCompare(selections, vectors, opts) {
    const rows = selections.map((s) => toyBank(s, vectors, opts));
    return { sentences: rows, cosine: cosine(rows[0].contextual, rows[1].contextual),
      vectors: Object.fromEntries(Object.entries(vectors).map(([k, v]) => [k, [f32(v[0]), f32(v[1])]])) };
  }
  return { cosine, weights, toyBank, toyCompare, AXES };
})();

window.ToyLab = (() => {
  const { $, getParam, setParams, saveFigure, saveJSON } = window.CL;
  const SVGNS = "http://www.w3.org/2000/svg";
  const SIZE = 400, LO = -0.25, HI = 1.25;  // the plane shows [LO, HI] on both axes
  const px = (x) => ((x - LO) / (HI - LO)) * SIZE;
  const py = (y) => SIZE - ((y - LO) / (HI - LO)) * SIZE;
  const st = { defaults: null, vectors: null, sel: { A: [], B: [] }, result: null, course: null, scaleExact: null };

  function el(name, attrs, parent) {
    const e = document.createElementNS(SVGNS, name);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (parent) parent.appendChild(e);
    return e;
  }
  // ---- labels that never overlap: each tries places around its point, the first free one wins ----
  const FONTS = { "word-label": "13px system-ui, sans-serif", "ctx-label": "600 12px system-ui, sans-serif",
    "axis-label": "12px system-ui, sans-serif" };  // as lab.css draws them
  let measure = null;
  /** A label's box [x0, y0, x1, y1] in plane units at (x, y) with its text-anchor (the canvas measures
   * the text, so the plane is laid out right even while its tab is hidden). */
  function labelBox(text, cls, x, y, anchor) {
    measure = measure || document.createElement("canvas").getContext("2d");
    measure.font = FONTS[cls];
    const w = measure.measureText(text).width, size = parseFloat(FONTS[cls].match(/(\d+)px/)[1]);
    const x0 = anchor === "start" ? x : anchor === "end" ? x - w : x - w / 2;
    return [x0 - 1, y - 0.8 * size - 1, x0 + w + 1, y + 0.25 * size + 1];
  }
  const overlap = (a, b) => Math.max(0, Math.min(a[2], b[2]) - Math.max(a[0], b[0])) *
    Math.max(0, Math.min(a[3], b[3]) - Math.max(a[1], b[1]));
  /** The places tried around a point of radius r, nearest first: right, left, above, below, then further out. */
  function spots(r) {
    const out = [];
    for (let ring = 0; ring < 4; ring++) {
      const d = r + 2 + 12 * ring;
      out.push([d, 4, "start"], [-d, 4, "end"], [0, -d - 2, "middle"], [0, d + 11, "middle"],
        [d, -d + 2, "start"], [d, d + 8, "start"], [-d, -d + 2, "end"], [-d, d + 8, "end"]);
    }
    return out;
  }
  /** Small boxes along an arrow from the origin to v (a label may cross one, at a small cost). */
  function along(v) {
    const [x0, y0, x1, y1] = [px(0), py(0), px(v[0]), py(v[1])];
    const n = Math.ceil(Math.hypot(x1 - x0, y1 - y0) / 6);
    return Array.from({ length: n + 1 }, (_, i) => {
      const x = x0 + ((x1 - x0) * i) / n, y = y0 + ((y1 - y0) * i) / n;
      return { box: [x - 2, y - 2, x + 2, y + 2], cost: 1 };
    });
  }
  /** Place each label {el, cls, x, y, r} (its point at x, y, radius r) at the first spot whose box
   * stays on the plane and meets nothing in ``taken`` ({box, cost}: other labels and the points
   * cost a million a pixel, arrows 1); else where it costs least. */
  function placeLabels(labels, taken) {
    for (const lab of labels) {
      let best = null;
      for (const [dx, dy, anchor] of spots(lab.r)) {
        const box = labelBox(lab.el.textContent, lab.cls, lab.x + dx, lab.y + dy, anchor);
        const off = box[0] < 0 || box[1] < 0 || box[2] > SIZE || box[3] > SIZE;
        const hit = taken.reduce((sum, t) => sum + t.cost * overlap(box, t.box), 0) + (off ? 1e12 : 0);
        if (best === null || hit < best.hit) best = { hit, box, x: lab.x + dx, y: lab.y + dy, anchor };
        if (hit === 0) break;
      }
      lab.el.setAttribute("x", best.x); lab.el.setAttribute("y", best.y); lab.el.setAttribute("text-anchor", best.anchor);
      taken.push({ box: best.box, cost: 1e6 });
    }
  }

  function opts() {
    const method = document.querySelector('input[name="toy-method"]:checked').value;
    return { method, alpha: Number($("#toy-alpha").value), include_self: $("#toy-self").checked,
      scale: st.scaleExact !== null ? st.scaleExact : Number($("#toy-scale").value) };
  }
  const neighbours = () => Object.keys(st.defaults.vectors).filter((w) => w !== "bank");

  function buildControls() {
    for (const side of ["A", "B"]) {
      const fs = $(`#toy-${side}`);
      for (const w of neighbours()) {
        const lab = document.createElement("label");
        lab.className = "chip";
        lab.innerHTML = `<input type="checkbox" id="toy-${side}-${w}" value="${w}"> ${w}`;
        fs.appendChild(lab);
        const box = lab.querySelector("input");
        box.checked = st.sel[side].includes(w);
        box.addEventListener("change", () => {
          st.sel[side] = neighbours().filter((n) => $(`#toy-${side}-${n}`).checked);
          update();
        });
      }
    }
    $("#toy-scale").addEventListener("input", () => { st.scaleExact = null; });  // the slider's own value again
    for (const id of ["toy-alpha", "toy-self", "toy-scale"]) $(`#${id}`).addEventListener("input", update);
    document.querySelectorAll('input[name="toy-method"]').forEach((r) => r.addEventListener("change", update));
    $("#toy-reset").addEventListener("click", () => { st.vectors = structuredClone(st.defaults.vectors); hideSteps(); update(); });
    $("#toy-course").addEventListener("click", courseExample);
    $("#toy-json").addEventListener("click", () => saveJSON({ options: opts(), result: st.result }, "contextlens-toy.json"));
    document.querySelectorAll('[data-download="plane"]').forEach((b) => b.addEventListener("click",
      () => saveFigure(b, "toy-plane", b.dataset.format)));  // the card as drawn, with its caption
  }

  function drawPlane(result) {
    const svg = $("#plane");
    svg.innerHTML = "";
    const defs = el("defs", {}, svg);
    for (const [id, color] of [["arrow", "#777"], ["arrowA", "#1f6feb"], ["arrowB", "#d9480f"], ["arrowS", "#222"]]) {
      const m = el("marker", { id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" }, defs);
      el("path", { d: "M0,0 L10,5 L0,10 z", fill: color }, m);
    }
    el("rect", { x: 0, y: 0, width: SIZE, height: SIZE, fill: "#fcfcfd" }, svg);
    for (let t = 0; t <= 1.0001; t += 0.25) {
      el("line", { x1: px(t), y1: py(LO), x2: px(t), y2: py(HI), class: "grid" }, svg);
      el("line", { x1: px(LO), y1: py(t), x2: px(HI), y2: py(t), class: "grid" }, svg);
    }
    el("line", { x1: px(LO), y1: py(0), x2: px(HI), y2: py(0), class: "axis" }, svg);
    el("line", { x1: px(0), y1: py(LO), x2: px(0), y2: py(HI), class: "axis" }, svg);
    const taken = [];  // boxes labels must not meet: the axis labels and every point
    for (const [text, x, y, anchor] of [["finance →", px(HI) - 6, py(0) - 6, "end"], ["nature ↑", px(0) + 6, py(HI) + 14, "start"]]) {
      el("text", { x, y, "text-anchor": anchor, class: "axis-label" }, svg).textContent = text;
      taken.push({ box: labelBox(text, "axis-label", x, y, anchor), cost: 1e6 });
    }
    const words = [], banks = [];  // the labels to place: the words first, then bank (A) and bank (B)
    const arrow = (v, cls, marker) => el("line", { x1: px(0), y1: py(0), x2: px(v[0]), y2: py(v[1]), class: cls, "marker-end": `url(#${marker})` }, svg);
    for (const [w, v] of Object.entries(st.vectors)) {
      const inA = st.sel.A.includes(w), inB = st.sel.B.includes(w);
      arrow(v, `vec ${w === "bank" ? "bank" : ""} ${inA ? "inA" : ""} ${inB ? "inB" : ""}`, w === "bank" ? "arrowS" : "arrow");
    }
    if (result) {
      for (const side of ["A", "B"]) {
        const r = result.sentences[side === "A" ? 0 : 1];
        arrow(r.contextual, `ctx ctx${side}`, `arrow${side}`);
        const c = el("circle", { id: `ctx-${side}`, cx: px(r.contextual[0]), cy: py(r.contextual[1]), r: 5, class: `ctx-dot ctx${side}`,
          "data-x": r.contextual[0], "data-y": r.contextual[1] }, svg);
        el("title", {}, c).textContent = `bank in ${side}: (${r.contextual[0].toFixed(3)}, ${r.contextual[1].toFixed(3)})`;
        const t = el("text", { class: `ctx-label ctx${side}` }, svg);
        t.textContent = `bank (${side})`;
        banks.push({ el: t, cls: "ctx-label", x: px(r.contextual[0]), y: py(r.contextual[1]), r: 5 });
      }
    }
    for (const [w, v] of Object.entries(st.vectors)) {
      const g = el("g", { class: "handle", tabindex: 0, role: "button", id: `pt-${w}`, "data-word": w,
        "data-x": Math.fround(v[0]), "data-y": Math.fround(v[1]),
        "aria-label": `${w} at finance ${v[0].toFixed(2)}, nature ${v[1].toFixed(2)}; arrow keys move it` }, svg);
      el("circle", { cx: px(v[0]), cy: py(v[1]), r: 9 }, g);
      const t = el("text", { class: "word-label" }, g);
      t.textContent = w;
      words.push({ el: t, cls: "word-label", x: px(v[0]), y: py(v[1]), r: 9 });
      g.addEventListener("pointerdown", (ev) => startDrag(ev, w));
      g.addEventListener("keydown", (ev) => keyMove(ev, w));
    }
    const labels = [...words, ...banks];
    for (const p of labels) taken.push({ box: [p.x - p.r, p.y - p.r, p.x + p.r, p.y + p.r], cost: 1e6 });  // no label over a point
    for (const v of [...Object.values(st.vectors), ...(result ? result.sentences.map((r) => r.contextual) : [])]) {
      taken.push(...along(v));
    }
    placeLabels(labels, taken);
  }

  function clamp(v) { return Math.min(HI - 0.02, Math.max(LO + 0.02, Math.round(v * 100) / 100)); }
  function startDrag(ev, word) {
    ev.preventDefault();
    const svg = $("#plane");
    const move = (e) => {
      const pt = svg.createSVGPoint();
      pt.x = e.clientX; pt.y = e.clientY;
      const p = pt.matrixTransform(svg.getScreenCTM().inverse());
      st.vectors[word] = [clamp(LO + (p.x / SIZE) * (HI - LO)), clamp(LO + ((SIZE - p.y) / SIZE) * (HI - LO))];
      update();
    };
    const up = () => { window.removeEventListener("pointermove", move); window.removeEventListener("pointerup", up); $(`#pt-${word}`)?.focus(); };
    window.addEventListener("pointermove", move);
    window.addEventListener("pointerup", up);
  }
  function keyMove(ev, word) {
    const step = ev.shiftKey ? 0.1 : 0.01;
    const d = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, step], ArrowDown: [0, -step] }[ev.key];
    if (!d) return;
    ev.preventDefault();
    const v = st.vectors[word];
    st.vectors[word] = [clamp(v[0] + d[0]), clamp(v[1] + d[1])];
    update();
    $(`#pt-${word}`).focus();
  }

  const fmt = (x) => x.toFixed(3);
  function setNum(id, x) { const c = $(`#${id}`); c.textContent = fmt(x); c.dataset.value = String(x); }

  function showResults(r) {
    const box = $("#toy-weights");
    box.innerHTML = "";
    r.sentences.forEach((s, k) => {
      const side = k === 0 ? "A" : "B";
      const h = document.createElement("h3");
      h.innerHTML = `<span class="swatch ${side.toLowerCase()}"></span>${side}: <i></i>`;
      h.querySelector("i").textContent = s.sentence;
      box.appendChild(h);
      for (const w of s.weights) {
        const row = document.createElement("div");
        row.className = "bar-row";
        row.innerHTML = `<span class="bar-word"></span><span class="bar"><span class="fill ${side.toLowerCase()}"></span></span><span class="bar-val" id="w-${side}-${w.position}"></span>`;
        row.querySelector(".bar-word").textContent = w.word;
        row.querySelector(".fill").style.width = `${(100 * w.weight).toFixed(1)}%`;
        const v = row.querySelector(".bar-val");
        v.textContent = fmt(w.weight); v.dataset.value = String(w.weight);
        box.appendChild(row);
      }
    });
    for (const axis of ["finance", "nature"]) {
      setNum(`cos-S-${axis}`, r.sentences[0].static_cosines[axis]);
      setNum(`cos-A-${axis}`, r.sentences[0].cosines[axis]);
      setNum(`cos-B-${axis}`, r.sentences[1].cosines[axis]);
    }
    setNum("cos-AB", r.cosine);
  }

  function update() {
    const o = opts();
    $("#toy-alpha-out").textContent = o.alpha.toFixed(2);
    $("#toy-scale-out").textContent = o.scale.toFixed(2);
    // the options of the other method stay in place, greyed out (no layout jump)
    for (const [id, on] of [["alpha", o.method === "average"], ["self", o.method === "attention"], ["scale", o.method === "attention"]]) {
      $(`#${id}-row`).classList.toggle("off", !on);
      $(`#toy-${id}`).disabled = !on;
    }
    if (st.course && !stillCourse(o)) hideSteps();
    let result = null;
    try {
      result = window.ToyMath.toyCompare([st.sel.A, st.sel.B], st.vectors, o);
      $("#toy-error").textContent = "";
    } catch (e) {
      $("#toy-error").textContent = e.message;
    }
    st.result = result;
    drawPlane(result);
    if (result) showResults(result);
    const moved = Object.entries(st.vectors).filter(([w, v]) => v[0] !== st.defaults.vectors[w][0] || v[1] !== st.defaults.vectors[w][1]);
    setParams({ ta: st.sel.A.join(","), tb: st.sel.B.join(","), tm: o.method, alpha: o.method === "average" ? o.alpha : null,
      self: o.method === "attention" ? Number(o.include_self) : null, scale: o.method === "attention" ? o.scale : null,
      tv: moved.length ? moved.map(([w, v]) => `${w}:${v[0]}:${v[1]}`).join(",") : null });
  }

  /** The course text's example, as the library computes it (/api/toy/course): its vectors,
      "bank loan" vs "bank river" with attention at scale 1/√2, and each weight step by step. */
  async function courseExample() {
    try {
      const ex = await window.CL.api("/api/toy/course");
      for (const [w, v] of Object.entries(ex.vectors)) st.vectors[w] = [v[0], v[1]];
      const [a, b] = ex.comparison.sentences.map((s) => s.words.slice(1));
      st.sel.A = a; st.sel.B = b;
      for (const side of ["A", "B"]) for (const n of neighbours()) $(`#toy-${side}-${n}`).checked = st.sel[side].includes(n);
      document.querySelector('input[name="toy-method"][value="attention"]').checked = true;
      $("#toy-self").checked = true;
      $("#toy-scale").value = String(ex.scale);  // the slider shows it; the exact 1/√2 is kept beside it
      st.scaleExact = ex.scale;
      st.course = ex;
      showSteps(ex.steps);
      update();
    } catch (e) { $("#toy-error").textContent = e.message; }
  }
  function showSteps(steps) {
    const body = $("#toy-steps tbody");
    body.innerHTML = "";
    steps.forEach((s, k) => {
      const tr = document.createElement("tr");
      tr.id = `step-${k}`;
      for (const [cls, v] of [["sentence", s.sentence], ["key", s.key], ["raw", s.raw], ["scaled", s.scaled], ["weight", s.weight]]) {
        const td = document.createElement("td");
        td.className = `step-${cls}`;
        if (typeof v === "number") { td.textContent = v.toFixed(4); td.dataset.value = String(v); } else td.textContent = v;
        tr.appendChild(td);
      }
      body.appendChild(tr);
    });
    $("#toy-steps").hidden = false;
  }
  function hideSteps() { $("#toy-steps").hidden = true; st.course = null; }
  /** The steps hold only while the plane is the course's: hide them once anything moves. */
  function stillCourse(o) {
    const ex = st.course;
    if (!ex) return false;
    const [a, b] = ex.comparison.sentences.map((s) => s.words.slice(1).join(","));
    return o.method === "attention" && o.include_self && o.scale === ex.scale && st.sel.A.join(",") === a &&
      st.sel.B.join(",") === b && Object.entries(ex.vectors).every(([w, v]) => st.vectors[w][0] === v[0] && st.vectors[w][1] === v[1]);
  }

  async function init() {
    st.defaults = await window.CL.api("/api/toy/defaults");
    st.vectors = structuredClone(st.defaults.vectors);
    for (const item of (getParam("tv", "") || "").split(",").filter(Boolean)) {
      const [w, x, y] = item.split(":");
      if (w in st.vectors && Number.isFinite(+x) && Number.isFinite(+y)) st.vectors[w] = [clamp(+x), clamp(+y)];
    }
    const pick = (s, dflt) => (getParam(s, dflt) || "").split(",").filter((w) => neighbours().includes(w));
    st.sel.A = pick("ta", "loan,money");
    st.sel.B = pick("tb", "river,water");
    const m = getParam("tm", "average");
    const radio = document.querySelector(`input[name="toy-method"][value="${m === "attention" ? "attention" : "average"}"]`);
    radio.checked = true;
    $("#toy-alpha").value = getParam("alpha", "0");
    $("#toy-self").checked = getParam("self", "1") !== "0";
    $("#toy-scale").value = getParam("scale", String(Math.round(100 / Math.sqrt(2)) / 100));
    buildControls();
    update();
  }
  return { init, update, state: st };
})();
