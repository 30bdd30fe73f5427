/* contextlens views drawn with Plotly (inlined in the page): the projection of usages,
   layer divergence, the cosine matrix of a word's usages, and its senses; the logit lens,
   occlusion beside attention, and contextual neighbours. Every number is the library's
   (contextlens.views.figures, contextlens.views.inside); this script only draws them. */
"use strict";
(function () {
  const CLV = window.CLViews, h = CLV.h, fmt = CLV.fmt;
  const CONFIG = { responsive: true, displaylogo: false, toImageButtonOptions: { format: "png", width: 1000, height: 650 } };
  const LAYOUT = { margin: { l: 56, r: 16, t: 24, b: 48 }, font: { family: "system-ui, sans-serif", size: 12 },
    paper_bgcolor: "#fff", plot_bgcolor: "#fff", hovermode: "closest" };
  const plot = (div, data, layout) => Plotly.react(div, data, Object.assign({}, LAYOUT, layout), CONFIG);
  const short = (t, n = 60) => (t.length > n ? `${t.slice(0, n - 1)}…` : t);
  const AXES = { pca: "PC", tsne: "t-SNE", umap: "UMAP" };

  // ---- projection --------------------------------------------------------------------------
  CLV.register("projection", (el, d) => {
    const P = d.points, n = P.word.length;
    const coords = {};
    for (const [m, byDim] of Object.entries(d.coords)) coords[m] = { 2: CLV.unpack(byDim["2"]), 3: CLV.unpack(byDim["3"]) };
    const nbIndex = CLV.unpack(d.neighbours.index), nbCos = CLV.unpack(d.neighbours.cosine), k = nbIndex.shape[1];
    const st = { method: d.initial.method, dims: d.initial.dims, colour: d.initial.colour, query: "", picked: null };
    const controls = h("div", { class: "clv-controls" });
    const div = h("div", { class: "clv-plot" }), list = h("div", { class: "clv-list" });
    el.append(controls, h("p", { class: "clv-info" }, `${n} usages at ${d.layer_name}; ${d.k} clusters (agglomerative, cosine, ` +
      "k by silhouette). Click a point to list its nearest usages by cosine (in the full space, not the projection)."),
    h("div", { class: "clv-side" }, div, list));
    const group = (i) => (st.colour === "sentence" ? `sentence ${P.sentence[i] + 1}` : st.colour === "word" ? P.word[i] : `cluster ${d.clusters[i] + 1}`);
    const label = (i) => `${P.word[i]} — ${short(d.sentences[P.sentence[i]])}`;

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
        const t = { type: D === 3 ? "scatter3d" : "scatter", mode: "markers", name: g, customdata: idx,
          x: idx.map((i) => xy.data[i * D]), y: idx.map((i) => xy.data[i * D + 1]), text: idx.map(label), hoverinfo: "text",
          marker: { size: D === 3 ? 5 : 10, color: faded ? "#c7ccd1" : CLV.colour(c++), opacity: faded ? 0.35 : 0.9 } };
        if (D === 3) t.z = idx.map((i) => xy.data[i * 3 + 2]);
        return t;
      });
      const ax = AXES[st.method];
      const layout = D === 3
        ? { scene: { xaxis: { title: { text: `${ax} 1` } }, yaxis: { title: { text: `${ax} 2` } }, zaxis: { title: { text: `${ax} 3` } } }, margin: { l: 0, r: 0, t: 10, b: 0 } }
        : { xaxis: { title: { text: `${ax} 1` }, zeroline: false }, yaxis: { title: { text: `${ax} 2` }, zeroline: false } };
      plot(div, traces, { ...layout, legend: { orientation: "h", y: -0.15 }, showlegend: true }).then(() => {
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
    const x = d.layer_ids.map((id, i) => `${id}: ${d.layer_names[i]}`);
    const data = d.pairs.map((p, k) => ({ type: "scatter", mode: "lines+markers", name: p.label, x, y: p.cosine_by_layer,
      line: { color: CLV.colour(k) }, hovertemplate: `%{x}: %{y:.3f}<extra>${p.sentences.map((s) => short(s, 40)).join(" · ")}</extra>` }));
    const low = Math.min(...d.pairs.flatMap((p) => p.cosine_by_layer));
    plot(div, data, { yaxis: { title: { text: "cosine" }, range: [Math.max(-1.02, low - 0.05), 1.02] },
      xaxis: { type: "category", title: { text: "layer" } }, legend: { orientation: "h", y: -0.3 }, showlegend: true });
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
      const labels = w.positions.map((p) => `S${p + 1}`);
      plot(div, [{ type: "heatmap", z: w.matrix, x: labels, y: labels, colorscale: "Viridis", zmax: 1,
        zmin: Math.floor(Math.min(...w.matrix.flat()) * 10) / 10, text: w.matrix.map((r) => r.map((v) => v.toFixed(3))),
        texttemplate: w.matrix.length <= 14 ? "%{text}" : "", customdata: w.matrix.map((r, a) => r.map((_, b) => [short(w.sentences[a], 50), short(w.sentences[b], 50)])),
        hovertemplate: "%{customdata[0]}<br>%{customdata[1]}<br>cosine %{z:.3f}<extra></extra>" }],
      { yaxis: { autorange: "reversed" }, margin: { l: 48, r: 16, t: 16, b: 40 } });
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
      list.append(h("div", { class: "clv-cluster", "data-cluster": c.id }, h("h4", {}, h("span", { class: "clv-dot", style: `background:${CLV.colour(c.id)}` }), `cluster ${c.id + 1} (${c.size})`), ul));
    }
    if (d.projection) {
      const div = h("div", { class: "clv-plot" });
      side.append(div);
      const pos = d.projection.positions, pts = d.projection.points;
      const traces = d.clusters.map((c) => {
        const idx = pos.map((p, j) => [p, j]).filter(([p]) => d.labels[p] === c.id);
        return { type: "scatter", mode: "markers", name: `cluster ${c.id + 1}`, x: idx.map(([, j]) => pts[j][0]), y: idx.map(([, j]) => pts[j][1]),
          text: idx.map(([p]) => short(d.sentences[p], 80)), hoverinfo: "text", marker: { size: 11, color: CLV.colour(c.id) } };
      });
      const ax = AXES[d.projection.method] || "PC";
      plot(div, traces, { xaxis: { title: { text: `${ax} 1` }, zeroline: false }, yaxis: { title: { text: `${ax} 2` }, zeroline: false },
        legend: { orientation: "h", y: -0.2 } });
    }
    side.append(list);
    el.append(side);
  });

  // ---- the logit lens ----------------------------------------------------------------------
  CLV.register("lens", (el, d) => {
    const L = d.layers, k = Math.max(...L.map((x) => x.top.length));
    const names = L.map((x) => `${x.layer}: ${x.layer_name}`);
    const grid = h("div", { class: "clv-plot clv-lens-grid" });
    el.append(h("p", { class: "clv-info" }, `After word ${d.position} ('${d.word}') of “${short(d.text, 120)}”: each layer's ` +
      `hidden state read through the model's final norm and output head. Rows: layers (bottom: embedding output; top: ` +
      `the model's own prediction); columns: the ${k} most probable next words, darker = more probable.`), grid);
    const z = L.map((x) => [...Array(k).keys()].map((j) => (x.top[j] ? x.top[j].probability : null)));
    const text = L.map((x) => [...Array(k).keys()].map((j) => (x.top[j] ? `${x.top[j].word}<br>${fmt(x.top[j].probability)}` : "")));
    plot(grid, [{ type: "heatmap", z, x: [...Array(k).keys()].map((j) => `#${j + 1}`), y: names, text, texttemplate: "%{text}",
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
      const traces = tracked.map((w, i) => ({ type: "scatter", mode: "lines+markers", name: w, x: names,
        y: L.map((x) => x.tracked[i][st.y]), customdata: L.map((x) => [x.tracked[i].rank, x.tracked[i].probability]),
        line: { color: CLV.colour(i) }, hovertemplate: `${CLV.esc(w)} at %{x}: rank %{customdata[0]}, p %{customdata[1]:.3g}<extra></extra>` }));
      const yaxis = st.y === "rank" ? { type: "log", autorange: "reversed", title: { text: "rank of the first piece (log)" } }
        : { type: "log", title: { text: "probability (log)" } };
      plot(lines, traces, { yaxis, xaxis: { type: "category", title: { text: "layer" } }, legend: { orientation: "h", y: -0.3 }, showlegend: true });
    }
    draw();
  });

  // ---- occlusion beside attention ----------------------------------------------------------
  CLV.register("occlusion", (el, d) => {
    const L = d.layers, words = d.others.map((o) => o.word);
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
      const x = L[st.layer];
      controls.innerHTML = "";
      controls.append(CLV.select("layer", L.map((y, i) => [i, `${y.layer}: ${y.layer_name}`]), st.layer,
        (v) => { st.layer = Number(v); draw(); }, "clv-occ-layer"));
      const rows = [["occlusion", "occlusion (1 − cos)", "y"], ["attention", "attention (mean of heads)", "y2"], ["rollout", "rollout", "y3"]];
      const traces = rows.map(([key, name, ax], i) => ({ type: "bar", name, x: words, y: x[key], yaxis: ax, xaxis: "x",
        marker: { color: CLV.colour(i) }, hovertemplate: `%{x}: ${name} %{y:.4f}<extra></extra>` }));
      plot(bars, traces, { height: 520, showlegend: true, legend: { orientation: "h", y: -0.12 }, bargap: 0.3,
        xaxis: { type: "category", anchor: "y3" },
        yaxis: { domain: [0.70, 1], title: { text: "occlusion" }, rangemode: "tozero" },
        yaxis2: { domain: [0.36, 0.64], title: { text: "attention" }, rangemode: "tozero" },
        yaxis3: { domain: [0, 0.30], title: { text: "rollout" }, rangemode: "tozero" } });
      bars.dataset.layer = String(x.layer);
    }
    draw();
    const names = L.map((y) => `${y.layer}: ${y.layer_name}`);
    plot(corr, [["spearman_attention", "attention"], ["spearman_rollout", "rollout"]].map(([key, name], i) => ({
      type: "scatter", mode: "lines+markers", name: `occlusion vs ${name}`, x: names, y: L.map((y) => y[key]),
      line: { color: CLV.colour(i + 1) }, connectgaps: false, hovertemplate: `%{x}: Spearman %{y:.3f}<extra>${name}</extra>` })),
    { height: 320, yaxis: { range: [-1.05, 1.05], title: { text: "Spearman" }, zeroline: true },
      xaxis: { type: "category", title: { text: "layer" } }, legend: { orientation: "h", y: -0.35 }, showlegend: true });
  });

  // ---- contextual neighbours ---------------------------------------------------------------
  CLV.register("neighbours", (el, d) => {
    const s = d.sentence, sp = d.span;
    const sentence = sp ? h("p", { class: "clv-usage" }, s.slice(0, sp[0]), h("mark", {}, s.slice(sp[0], sp[1])), s.slice(sp[1]))
      : h("p", { class: "clv-usage" }, s);
    el.append(sentence, h("p", { class: "clv-info" }, `The ${d.neighbours.length} reference words nearest this '${d.word}' at ` +
      `${d.layer} (${d.layer_name})${d.model ? ` of ${d.model}` : ""}, by cosine after taking the reference mean off both sides` +
      `${d.reference ? `; reference: ${d.reference}` : ""}.`));
    const top = Math.max(1e-9, ...d.neighbours.map((n) => Math.abs(n.cosine)));
    const ol = h("ol", { class: "clv-bars" });
    for (const n of d.neighbours) {
      const width = `${(100 * Math.max(0, n.cosine)) / top}%`;
      ol.append(h("li", { "data-value": String(n.cosine) }, h("span", { class: "clv-bar-word" }, n.word),
        h("span", { class: "clv-bar-track" }, h("span", { class: "clv-bar", style: `width:${width}` })),
        h("span", { class: "clv-bar-num" }, fmt(n.cosine))));
    }
    el.append(ol);
  });
})();
