/* contextlens views drawn with Plotly (inlined in the page): the projection of usages,
   layer divergence, the cosine matrix of a word's usages, and its senses; the logit lens,
   occlusion beside attention, and contextual neighbours. Every number is the library's
   (contextlens.views.usages, contextlens.views.predict); this script only draws them.
   Sentences, usages and clusters are numbered as the JSON numbers them, from 0 (as the lab
   does): sentence 0, usage 0, cluster 0, S0 (S0 #1: the word's occurrence 1 in sentence 0). */
"use strict";
(function () {
  const CLV = window.CLViews, h = CLV.h, fmt = CLV.fmt, text = CLV.plotText, short = CLV.short;
  // the view's own SVG and PNG buttons (core.js) download it with its title: not Plotly's camera
  const CONFIG = { responsive: true, displaylogo: false, modeBarButtonsToRemove: ["toImage"] };
  const LAYOUT = { margin: { l: 56, r: 16, t: 24, b: 48 }, font: { family: "system-ui, sans-serif", size: 12 },
    paper_bgcolor: "#fff", plot_bgcolor: "#fff", hovermode: "closest" };
  /** Draw; every axis makes room for its tick labels and title (automargin), and a legend stands
      to the right of the plot (Plotly's default, which it makes room for) rather than under an axis. */
  const plot = (div, data, layout) => {
    const full = Object.assign({}, LAYOUT, layout);
    for (const [k, v] of Object.entries(full)) {
      if (/^[xy]axis\d*$/.test(k)) full[k] = { automargin: true, ...v };
    }
    return Plotly.react(div, data, full, CONFIG);
  };
  const WRAP = 60;  // a sentence in a hover label: lines of about this many characters
  const AXES = { pca: "PC", tsne: "t-SNE", umap: "UMAP" };
  /** An x axis of layers: a tick per layer, labelled with its number (every second or third one
      beyond 16 layers, so that 31 fit a narrow card), the names in the hovers, and layer 0's in
      the axis title. */
  const layerAxis = (ids, names) => {
    const s = CLV.slots(ids.map(String)), step = Math.ceil(ids.length / 16);
    s.axis.ticktext = s.axis.ticktext.map((t, i) => (i % step === 0 ? t : ""));
    s.axis.title = { text: ids[0] === 0 ? `layer (0: ${text(names[0])})` : "layer" };
    return s;
  };
  CLV.layerAxis = layerAxis;  // the lab's own layer charts take it too

  // ---- projection --------------------------------------------------------------------------
  CLV.register("projection", (el, d) => {
    const P = d.points, n = P.word.length;
    const coords = {};
    for (const [m, byDim] of Object.entries(d.coords)) coords[m] = { 2: CLV.unpack(byDim["2"]), 3: CLV.unpack(byDim["3"]) };
    const nbIndex = CLV.unpack(d.neighbours.index), nbCos = CLV.unpack(d.neighbours.cosine), k = nbIndex.shape[1];
    const st = { method: d.initial.method, dims: d.initial.dims, colour: d.initial.colour, query: "", picked: null };
    const controls = h("div", { class: "clv-controls" });
    const div = h("div", { class: "clv-plot" }), list = h("div", { class: "clv-list" });
    el.append(controls, h("p", { class: "clv-info" },
      `${n} usages at ${d.layer_name}; ${d.k} clusters (${d.cluster_method}, k by ${d.k_chosen_by}). ` +
      "Click a point to list its nearest usages by cosine (in the full space, not the projection)."),
    h("div", { class: "clv-side" }, div, list));
    const group = (i) => (st.colour === "sentence" ? `sentence ${P.sentence[i]}` : st.colour === "word" ? P.word[i] : `cluster ${d.clusters[i]}`);
    const label = (i) => `${P.word[i]} — ${short(d.sentences[P.sentence[i]])}`;  // for the list (DOM text)
    const hover = (i) => `<b>${text(P.word[i])}</b> (sentence ${P.sentence[i]}, word ${P.position[i]})` +
      `<br>${text(d.sentences[P.sentence[i]], WRAP)}`;

    function showNeighbours(i) {
      st.picked = i;
      list.innerHTML = "";
      list.dataset.point = String(i);
      const ol = h("ol", {});
      for (let r = 0; r < k; r++) {
        const j = nbIndex.data[i * k + r], c = nbCos.data[i * k + r];
        ol.append(h("li", { "data-j": j, "data-value": String(c) }, h("b", {}, fmt(c, 3)), ` ${label(j)}`));
      }
      list.append(h("h4", {}, `nearest to: ${label(i)}`), ol);
    }
    function draw() {
      controls.innerHTML = "";
      controls.append(CLV.select("projection", Object.keys(coords).map((m) => [m, { pca: "PCA", tsne: "t-SNE", umap: "UMAP" }[m]]), st.method,
        (v) => { st.method = v; draw(); }, "clv-method"));
      controls.append(CLV.select("dimensions", [[2, "2-D"], [3, "3-D"]], st.dims, (v) => { st.dims = Number(v); draw(); }, "clv-dims"));
      controls.append(CLV.select("colour by", [["sentence", "sentence"], ["word", "word"], ["cluster", "cluster"]], st.colour,
        (v) => { st.colour = v; draw(); }, "clv-colour"));
      const search = h("input", { type: "search", placeholder: "find a word", value: st.query, class: "clv-search", "aria-label": "find points by word" });
      search.addEventListener("change", () => { st.query = search.value.trim().toLowerCase(); draw(); });
      controls.append(search);
      const xy = coords[st.method][st.dims], D = st.dims;
      const hits = (i) => !st.query || P.word[i].toLowerCase().includes(st.query);
      const groups = new Map();
      for (let i = 0; i < n; i++) {
        const g = hits(i) ? group(i) : "other points";
        if (!groups.has(g)) groups.set(g, []);
        groups.get(g).push(i);
      }
      let c = 0;
      const traces = [...groups.entries()].map(([g, idx]) => {
        const faded = g === "other points";
        const t = { type: D === 3 ? "scatter3d" : "scatter", mode: "markers", name: text(g), customdata: idx,
          x: idx.map((i) => xy.data[i * D]), y: idx.map((i) => xy.data[i * D + 1]),
          hovertext: idx.map(hover), hoverinfo: "text",
          marker: { size: D === 3 ? 5 : 10, color: faded ? "#c7ccd1" : CLV.colour(c++), opacity: faded ? 0.35 : 0.9 } };
        if (D === 3) t.z = idx.map((i) => xy.data[i * 3 + 2]);
        return t;
      });
      const ax = AXES[st.method];
      const layout = D === 3
        ? { scene: { xaxis: { title: { text: `${ax} 1` } }, yaxis: { title: { text: `${ax} 2` } }, zaxis: { title: { text: `${ax} 3` } } }, margin: { l: 0, r: 0, t: 10, b: 0 } }
        : { xaxis: { title: { text: `${ax} 1` }, zeroline: false }, yaxis: { title: { text: `${ax} 2` }, zeroline: false } };
      plot(div, traces, { ...layout, showlegend: true }).then(() => {
        div.removeAllListeners && div.removeAllListeners("plotly_click");
        div.on("plotly_click", (e) => showNeighbours(e.points[0].customdata));
      });
      div.dataset.found = String([...Array(n).keys()].filter(hits).length);
      div.dataset.traces = String(traces.length);
    }
    draw();
    el.clvPick = showNeighbours;  // the lab (and the tests) select a point by its index
  });

  // ---- layer divergence --------------------------------------------------------------------
  CLV.register("layers", (el, d) => {
    const div = h("div", { class: "clv-plot" });
    el.append(h("p", { class: "clv-info" }, `Cosine between '${d.word}' in two sentences at every layer (layer 0: the static row).`), div);
    const x = layerAxis(d.layer_ids, d.layer_names);
    const data = d.pairs.map((p, k) => {
      const said = p.sentences.map((s, j) => `${text(p.labels[j])}: ${text(s, WRAP)}`).join("<br>");
      const hover = (c, i) => `<b>${text(p.label)}</b>, layer ${d.layer_ids[i]} ` +
        `(${text(d.layer_names[i])}): cosine ${fmt(c)}${said ? `<br>${said}` : ""}`;
      return { type: "scatter", mode: "lines+markers", name: text(p.label), x: x.keys, y: p.cosine_by_layer,
        line: { color: CLV.colour(k) }, hoverinfo: "text", hovertext: p.cosine_by_layer.map(hover) };
    });
    const low = Math.min(...d.pairs.flatMap((p) => p.cosine_by_layer));
    plot(div, data, { yaxis: { title: { text: "cosine" }, range: [Math.max(-1.02, low - 0.05), 1.02] },
      xaxis: x.axis, showlegend: true });
  });

  // ---- cosine matrix -----------------------------------------------------------------------
  CLV.register("cosine", (el, d) => {
    const st = { word: 0 };
    const controls = h("div", { class: "clv-controls" }), info = h("p", { class: "clv-info" }), div = h("div", { class: "clv-plot" });
    el.append(controls, info, div);
    function draw() {
      const w = d.words[st.word];
      controls.innerHTML = "";
      if (d.words.length > 1) controls.append(CLV.select("word", d.words.map((x, i) => [i, x.word]), st.word, (v) => { st.word = Number(v); draw(); }, "clv-word"));
      info.textContent = `'${w.word}' at ${d.layer_name}: spread ${fmt(w.spread)} (1 − mean cosine), cosines from ${fmt(w.min_cosine)} to ${fmt(w.max_cosine)}.`;
      // one row and column per usage, named by the library (a sentence holding the word twice: S3 #0, S3 #1)
      const ax = CLV.slots(w.labels);
      const usage = (a) => `usage ${a} (${text(w.labels[a])}): ${text(w.sentences[a], WRAP)}`;
      plot(div, [{ type: "heatmap", z: w.matrix, x: ax.keys, y: ax.keys, colorscale: "Viridis", zmax: 1,
        zmin: Math.floor(Math.min(...w.matrix.flat()) * 10) / 10, text: w.matrix.map((r) => r.map((v) => v.toFixed(3))),
        texttemplate: w.matrix.length <= 14 ? "%{text}" : "",
        customdata: w.matrix.map((r, a) => r.map((v, b) => `${usage(a)}<br>${usage(b)}<br>cosine ${fmt(v)}`)),
        hovertemplate: "%{customdata}<extra></extra>" }],
      { xaxis: ax.axis, yaxis: { ...ax.axis, range: [w.positions.length - 0.5, -0.5] },
        margin: { l: 48, r: 16, t: 16, b: 40 } });
    }
    draw();
  });

  // ---- senses ------------------------------------------------------------------------------
  CLV.register("senses", (el, d) => {
    const sil = d.silhouette === null || d.silhouette === undefined ? "undefined" : fmt(d.silhouette);
    el.append(h("p", { class: "clv-info" }, `${d.n_usages} usages of '${d.word}' at ${d.layer_name}: k = ${d.k} (${d.k_chosen_by}), silhouette ${sil}` +
      (d.purity !== undefined ? `, purity ${fmt(d.purity)}, ARI ${fmt(d.ari)}` : "") + "."));
    const side = h("div", { class: "clv-side" }), list = h("div", { class: "clv-list" });
    for (const c of d.clusters) {
      const ul = h("ul", {}, ...c.sentences.map((s) => h("li", {}, s)));
      list.append(h("div", { class: "clv-cluster", "data-cluster": c.id }, h("h4", {}, h("span", { class: "clv-dot", style: `background:${CLV.colour(c.id)}` }), `cluster ${c.id} (${c.size})`), ul));
    }
    if (d.projection) {
      const div = h("div", { class: "clv-plot" });
      side.append(div);
      const pos = d.projection.positions, pts = d.projection.points;
      const traces = d.clusters.map((c) => {
        const idx = pos.map((p, j) => [p, j]).filter(([p]) => d.labels[p] === c.id);
        return { type: "scatter", mode: "markers", name: `cluster ${c.id}`, x: idx.map(([, j]) => pts[j][0]), y: idx.map(([, j]) => pts[j][1]),
          hovertext: idx.map(([p]) => `sentence ${p}, cluster ${c.id}<br>` +
            text(d.sentences[p], WRAP)),
          hoverinfo: "text",
          marker: { size: 11, color: CLV.colour(c.id) } };
      });
      const ax = AXES[d.projection.method] || "PC";
      plot(div, traces, { xaxis: { title: { text: `${ax} 1` }, zeroline: false }, yaxis: { title: { text: `${ax} 2` }, zeroline: false },
        showlegend: true });
    }
    side.append(list);
    el.append(side);
  });

  // ---- the logit lens ----------------------------------------------------------------------
  /** One lens's grid of best next words and its tracked words' lines, drawn into `el`. */
  function lensBody(el, d) {
    const L = d.layers, k = Math.max(...L.map((x) => x.top.length));
    const names = L.map((x) => `${x.layer}: ${text(x.layer_name)}`);
    const grid = h("div", { class: "clv-plot clv-lens-grid" });
    el.append(h("p", { class: "clv-info" }, `After word ${d.position} ('${d.word}') of “${short(d.text, 120)}”: each layer's ` +
      `hidden state read through the model's final norm and output head. Rows: layers (bottom: embedding output; top: ` +
      `the model's own prediction); columns: the ${k} most probable next words, darker = more probable.`), grid);
    const z = L.map((x) => [...Array(k).keys()].map((j) => (x.top[j] ? x.top[j].probability : null)));
    const cell = (t) => (t ? `${text(t.word)}<br>${fmt(t.probability)}` : "");
    const cells = L.map((x) => [...Array(k).keys()].map((j) => cell(x.top[j])));
    plot(grid, [{ type: "heatmap", z, x: [...Array(k).keys()].map((j) => `#${j + 1}`), y: names, text: cells,
      texttemplate: "%{text}",
      zmin: 0, zmax: Math.max(1e-9, ...z.flat().filter((v) => v !== null)), colorscale: [[0, "#f7fbff"], [0.5, "#6baed6"], [1, "#08306b"]],
      colorbar: { title: { text: "p" } }, hovertemplate: "%{y}, %{x}: %{text}<extra></extra>", xgap: 2, ygap: 2 }],
    { xaxis: { side: "top" }, margin: { l: 150, r: 16, t: 32, b: 16 }, height: Math.max(260, 46 * L.length + 60) });
    const tracked = L[0].tracked.map((t) => t.word);
    if (!tracked.length) {
      el.append(h("p", { class: "clv-info clv-lens-untracked" }, "No word tracked: give words to track (--track) to follow their rank layer by layer."));
      return;
    }
    const st = { y: "rank" };
    const controls = h("div", { class: "clv-controls" }), lines = h("div", { class: "clv-plot clv-lens-lines" });
    el.append(controls, lines);
    function draw() {
      controls.innerHTML = "";
      controls.append(CLV.select("show", [["rank", "rank (1 = the top)"], ["probability", "probability"]], st.y,
        (v) => { st.y = v; draw(); }, "clv-lens-y"));
      const x = layerAxis(L.map((y) => y.layer), L.map((y) => y.layer_name));
      const traces = tracked.map((w, i) => ({ type: "scatter", mode: "lines+markers", name: text(w),
        x: x.keys,
        y: L.map((y) => y.tracked[i][st.y]), hoverinfo: "text", line: { color: CLV.colour(i) },
        hovertext: L.map((y, j) => `<b>${text(w)}</b> at ${names[j]}: rank ${y.tracked[i].rank}, ` +
          `p ${Number(y.tracked[i].probability).toPrecision(3)}`) }));
      // whole decades, a tick each: Plotly's own log ticks crowd (5 6 7 8 9 10) when the values hardly change
      const values = traces.flatMap((t) => t.y).filter((v) => v > 0);
      if (!values.length) values.push(1);
      let lo = Math.floor(Math.log10(Math.min(...values))), hi = Math.ceil(Math.log10(Math.max(...values)));
      if (hi <= lo) hi = lo + 1;
      const rank = st.y === "rank";
      const range = rank ? [hi + 0.05, lo - 0.05] : [lo - 0.05, hi + 0.05];
      const yaxis = { type: "log", dtick: hi - lo > 8 ? 2 : 1, range,
        title: { text: rank ? "rank of the first piece (log; 1 = the top)" : "probability (log)" } };
      plot(lines, traces, { yaxis, xaxis: x.axis, showlegend: true });
    }
    draw();
  }
  CLV.register("lens", (el, d) => {
    if (!d.tuned) { lensBody(el, d); return; }
    // with the tuned lens: a choice of lens for the grid and lines, and both lenses' KL per layer
    const st = { lens: "tuned" };
    const controls = h("div", { class: "clv-controls" }), body = h("div", { class: "clv-lens-body" });
    const kl = h("div", { class: "clv-plot clv-lens-kl" });
    el.append(h("p", { class: "clv-info" }, "The tuned lens (Belrose et al. 2023) first moves each layer's " +
      "hidden state by an affine translator trained for that layer, so that it reads as the last layer's; " +
      "the logit lens reads it as it is. Below the words: each lens's KL divergence from the model's final " +
      "distribution per layer, on held-out corpus text."),
    controls, body, kl);
    function draw() {
      controls.innerHTML = "";
      controls.append(CLV.select("lens", [["tuned", "tuned lens"], ["logit", "logit lens"]], st.lens,
        (v) => { st.lens = v; draw(); }, "clv-lens-which"));
      body.innerHTML = "";
      lensBody(body, { ...d, layers: st.lens === "tuned" ? d.tuned.layers : d.layers });
      body.dataset.lens = st.lens;
    }
    draw();
    const K = d.tuned.kl;
    const x = layerAxis(K.layers, K.layers.map((k) => (k === 0 ? "embedding output" : `layer ${k}`)));
    plot(kl, [["logit", "logit lens"], ["tuned", "tuned lens"]].map(([key, name], i) => ({ type: "scatter",
      mode: "lines+markers", name, x: x.keys, y: K[key], line: { color: CLV.colour(i) }, hoverinfo: "text",
      hovertext: K[key].map((v, j) => `${name}, layer ${K.layers[j]}: KL ${fmt(v, 3)} nats`) })),
    { height: 300, xaxis: x.axis,
      yaxis: { title: { text: "KL from the final distribution (nats)" }, rangemode: "tozero" },
      showlegend: true, legend: { orientation: "h", x: 0, y: 1.02, yanchor: "bottom" } });
  });

  // ---- occlusion beside attention ----------------------------------------------------------
  CLV.register("occlusion", (el, d) => {
    const L = d.layers;
    // one bar per other word, keyed by its position: the two "the" of a sentence are two bars
    const x = CLV.slots(d.others.map((o) => o.word), (i) => `(${d.others[i].position})`);
    const st = { layer: L.length - 1 };
    const controls = h("div", { class: "clv-controls" }), bars = h("div", { class: "clv-plot clv-occ-bars" });
    const corr = h("div", { class: "clv-plot clv-occ-spearman" });
    el.append(h("p", { class: "clv-info" }, `Each other word of “${short(d.sentence, 120)}” left out in turn: how far ` +
      `'${d.word}' moves (cosine distance) beside the attention '${d.word}' gave that word (mean over heads) and ` +
      "attention rollout."), controls, bars,
    h("p", { class: "clv-info" }, "Spearman correlation between the occlusion effect and attention, across the words, per layer. " +
      "High (near 1): attention ranks the words as leaving them out does — the words attended to most are the ones that " +
      "move the vector most. Low, or negative: it does not, and the weights are no measure of a word's influence there. " +
      "A gap means undefined (a constant column, or fewer than two words)."), corr);
    function draw() {
      const at = L[st.layer];
      controls.innerHTML = "";
      controls.append(CLV.select("layer", L.map((y, i) => [i, `${y.layer}: ${y.layer_name}`]), st.layer,
        (v) => { st.layer = Number(v); draw(); }, "clv-occ-layer"));
      const rows = [["occlusion", "occlusion (1 − cos)", "y"], ["attention", "attention (mean of heads)", "y2"], ["rollout", "rollout", "y3"]];
      const traces = rows.map(([key, name, ax], i) => ({ type: "bar", name, x: x.keys, y: at[key], yaxis: ax,
        xaxis: "x", marker: { color: CLV.colour(i) }, hoverinfo: "text", hovertext: d.others.map((o, j) =>
          `<b>${text(o.word)}</b> (word ${o.position}): ${name} ${fmt(at[key][j], 4)}`) }));
      // the legend above the bars: the words below them get the figure's whole width
      plot(bars, traces, { height: 520, showlegend: true, bargap: 0.3,
        legend: { orientation: "h", x: 0, y: 1.02, yanchor: "bottom" },
        xaxis: { ...x.axis, anchor: "y3" },
        yaxis: { domain: [0.70, 1], title: { text: "occlusion" }, rangemode: "tozero" },
        yaxis2: { domain: [0.36, 0.64], title: { text: "attention" }, rangemode: "tozero" },
        yaxis3: { domain: [0, 0.30], title: { text: "rollout" }, rangemode: "tozero" } });
      bars.dataset.layer = String(at.layer);
    }
    draw();
    const lx = layerAxis(L.map((y) => y.layer), L.map((y) => y.layer_name));
    plot(corr, [["spearman_attention", "attention"], ["spearman_rollout", "rollout"]].map(([key, name], i) => ({
      type: "scatter", mode: "lines+markers", name: `occlusion vs ${name}`, x: lx.keys,
      y: L.map((y) => y[key]),
      line: { color: CLV.colour(i + 1) }, connectgaps: false, hoverinfo: "text",
      hovertext: L.map((y) => `layer ${y.layer} (${text(y.layer_name)}): Spearman ${fmt(y[key])}, ` +
        `occlusion vs ${name}`) })),
    { height: 320, yaxis: { range: [-1.05, 1.05], title: { text: "Spearman" }, zeroline: true },
      xaxis: lx.axis, showlegend: true, legend: { orientation: "h", x: 0, y: 1.02, yanchor: "bottom" } });
  });

  // ---- contextual neighbours ---------------------------------------------------------------
  /** A usage's nearest reference words as bars. Ranked with contrast λ > 0 (the library's score:
      cosine − λ × the cosine to the word's own reference row), the bars are the scores, each
      neighbour's two cosines beside, under a legend saying so; with λ = 0 the bars are the cosines. */
  CLV.register("neighbours", (el, d) => {
    const s = d.sentence, sp = d.span, lambda = d.contrast || 0, own = `cosine to '${d.word}'`;
    const [before, inside, after] = sp ? CLV.spanParts(s, sp[0], sp[1]) : [s, "", ""];  // in code points
    const sentence = sp ? h("p", { class: "clv-usage" }, before, h("mark", {}, inside), after)
      : h("p", { class: "clv-usage" }, s);
    el.append(sentence, h("p", { class: "clv-info" }, `The ${d.neighbours.length} reference words nearest this '${d.word}' at ` +
      `${d.layer} (${d.layer_name})${d.model ? ` of ${d.model}` : ""}, by ${lambda ? "score, from cosines" : "cosine"} ` +
      "after taking the reference mean off both sides" +
      `${d.reference ? `; reference: ${d.reference}` : ""}.`));
    const value = (n) => (lambda ? n.score : n.cosine);
    const top = Math.max(1e-9, ...d.neighbours.map((n) => Math.abs(value(n))));
    const ol = h("ol", { class: lambda ? "clv-bars clv-bars-contrast" : "clv-bars" });
    if (lambda) {
      el.append(h("p", { class: "clv-legend" }, `score = cosine − λ × ${own}, λ = ${lambda}: what the context ` +
        `adds to '${d.word}' (a word near '${d.word}' in any sentence ranks lower)`),
      h("div", { class: "clv-bars-head", "aria-hidden": "true" }, h("span", {}, "word"), h("span", {}, ""),
        h("span", {}, "score"), h("span", {}, "cosine"), h("span", {}, own)));
    }
    for (const n of d.neighbours) {
      const width = `${(100 * Math.max(0, value(n))) / top}%`;
      const li = h("li", { "data-value": String(value(n)) }, h("span", { class: "clv-bar-word" }, n.word),
        h("span", { class: "clv-bar-track" }, h("span", { class: "clv-bar", style: `width:${width}` })),
        h("span", { class: "clv-bar-num" }, fmt(value(n))));
      if (lambda) {
        li.dataset.cosine = String(n.cosine);
        li.dataset.ownCosine = String(n.own_cosine);
        li.title = `${n.word}: score ${fmt(n.score)} = cosine ${fmt(n.cosine)} − ${lambda} × ${own} ` +
          `${fmt(n.own_cosine)}`;
        li.append(h("span", { class: "clv-bar-num clv-bar-cos" }, fmt(n.cosine)),
          h("span", { class: "clv-bar-num clv-bar-own" }, fmt(n.own_cosine)));
      }
      ol.append(li);
    }
    el.append(ol);
  });
})();
