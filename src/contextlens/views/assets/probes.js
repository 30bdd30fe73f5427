/* contextlens views of what layers know, drawn with Plotly (inlined in the page, with figures.js,
   whose layer axis they share): probes per layer (accuracy, control accuracy, selectivity, the expected layer) and the CKA heatmap of
   layers × layers. Every number is the library's (contextlens.views.probes); this script only
   draws them. User text (a model's name, a task) reaches Plotly through CLViews.plotText and
   the page through text nodes. */
"use strict";
(function () {
  const CLV = window.CLViews, h = CLV.h, fmt = CLV.fmt, text = CLV.plotText;
  const CONFIG = { responsive: true, displaylogo: false, modeBarButtonsToRemove: ["toImage"] };
  const LAYOUT = { margin: { l: 64, r: 16, t: 24, b: 48 }, font: { family: "system-ui, sans-serif", size: 12 },
    paper_bgcolor: "#fff", plot_bgcolor: "#fff", hovermode: "closest" };
  const plot = (div, data, layout) => Plotly.react(div, data, Object.assign({}, LAYOUT, layout), CONFIG);

  // ---- probes ------------------------------------------------------------------------------
  CLV.register("probes", (el, d) => {
    const R = d.results, name = (r) => `${r.task} — ${r.model}`;
    el.append(h("p", { class: "clv-info" }, "Solid: the accuracy of a probe fitted on each layer's vectors; " +
      "dashed: the same probe on the control task (each word type gets a random label, Hewitt & Liang 2019). " +
      "Below: selectivity = accuracy − control, how much of the accuracy the layer rather than the probe " +
      "supplies. Dotted: the expected layer (Tenney et al. 2019), where the gains in accuracy centre."));
    const div = h("div", { class: "clv-plot clv-probes-plot" });
    el.append(div);
    const traces = [], shapes = [], notes = [];
    R.forEach((r, i) => {
      const x = r.rows.map((row) => row.layer), colour = CLV.colour(i), label = text(name(r));
      const hover = (key, what) => r.rows.map((row) => `<b>${label}</b>, layer ${row.layer}: ${what} ` +
        `${fmt(row[key])}<br>${row.n_train} train, ${row.n_test} test words${row.missing ? `, ${row.missing} ` +
        "without a vector" : ""}`);
      const line = (key, what, extra) => ({ type: "scatter", mode: "lines+markers", x, y: r.rows.map((row) => row[key]),
        hoverinfo: "text", hovertext: hover(key, what), legendgroup: String(i), ...extra });
      traces.push(line("accuracy", "accuracy", { name: `${label}: accuracy`, line: { color: colour } }),
        line("control_accuracy", "control accuracy", { name: `${label}: control`,
          line: { color: colour, dash: "dash" }, marker: { symbol: "circle-open" } }),
        line("selectivity", "selectivity", { name: `${label}: selectivity`, yaxis: "y2",
          line: { color: colour, width: 3 }, showlegend: false }));
      if (r.expected_layer !== null && r.expected_layer !== undefined) {
        shapes.push({ type: "line", xref: "x", yref: "paper", x0: r.expected_layer, x1: r.expected_layer, y0: 0,
          y1: 1, line: { color: colour, dash: "dot", width: 2 } });
        notes.push({ xref: "x", yref: "paper", x: r.expected_layer, y: 1, yanchor: "top", xanchor: "left",
          showarrow: false, text: `E[layer] ${fmt(r.expected_layer, 2)}`, font: { color: colour, size: 11 },
          bgcolor: "rgba(255,255,255,0.8)", yshift: -15 * notes.length });
      }
    });
    const layers = [...new Set(R.flatMap((r) => r.rows.map((row) => row.layer)))];
    const sel = R.flatMap((r) => r.rows.map((row) => row.selectivity));
    // the legend above the plot (the layers' axis and its title get the figure's whole width below), the
    // expected layers' labels inside the top of the accuracy plot
    plot(div, traces, { height: 600, shapes, annotations: notes, showlegend: true,
      legend: { orientation: "h", x: 0, y: 1.02, yanchor: "bottom" },
      xaxis: { title: { text: "layer (0: the static row)" }, dtick: layers.length <= 16 ? 1 : undefined,
        zeroline: false, anchor: "y2", automargin: true },
      yaxis: { domain: [0.42, 1], title: { text: "accuracy" }, range: [0, 1.02], automargin: true },
      yaxis2: { domain: [0, 0.34], title: { text: "selectivity" }, automargin: true, zeroline: true,
        range: [Math.min(0, ...sel) - 0.02, Math.max(0, ...sel) + 0.02] } });
    div.dataset.traces = String(traces.length);
    div.dataset.expected = String(shapes.length);
    // the same numbers, as tables (one per result, side by side where they fit): readable and copyable
    const tables = h("div", { class: "clv-probes-tables" });
    el.append(tables);
    for (const r of R) {
      const where = r.expected_layer === null || r.expected_layer === undefined ? "–" : fmt(r.expected_layer, 2);
      const caption = `${name(r)}${r.probe ? ` (${r.probe} probe)` : ""}` +
        `${r.labels ? `, ${r.labels} labels` : ""}${r.lemmas ? ` over ${r.lemmas} lemmas` : ""}: ` +
        `expected layer ${where}`;
      const head = h("tr", {}, ...["layer", "accuracy", "control", "selectivity", "train", "test", "missing"]
        .map((c) => h("th", { scope: "col" }, c)));
      const body = r.rows.map((row) => h("tr", { "data-layer": String(row.layer) }, h("th", { scope: "row" },
        String(row.layer)), ...[row.accuracy, row.control_accuracy, row.selectivity].map((v) =>
        h("td", { "data-value": String(v) }, fmt(v))), ...[row.n_train, row.n_test, row.missing].map((v) =>
        h("td", {}, String(v)))));
      tables.append(h("table", { class: "clv-probes" }, h("caption", {}, caption), h("thead", {}, head),
        h("tbody", {}, ...body)));
    }
  });

  // ---- CKA ---------------------------------------------------------------------------------
  CLV.register("cka", (el, d) => {
    const [a, b] = d.models, [rows, cols] = d.layers, M = d.matrix, one = a === b;
    el.append(h("p", { class: "clv-info" }, `${d.debiased ? "Debiased linear" : "Linear"} CKA (Kornblith et al. ` +
      `2019) between the layers of ${one ? a : `${a} (rows) and ${b} (columns)`}, over ${d.n_words} word usages ` +
      `in ${d.n_sentences} sentences${d.sentences ? ` (${d.sentences})` : ""}` +
      `${d.missing ? `; ${d.missing} tokens without a vector left out` : ""}. 1: the two layers' usages are ` +
      "laid out alike up to a rotation and a scale; near 0: unrelated."));
    const div = h("div", { class: "clv-plot clv-cka-plot" });
    el.append(div);
    // a tick per layer, every second or third one labelled beyond 16 layers (figures.js's layerAxis)
    const axis = (ids, model) => {
      const s = CLV.layerAxis(ids, ids.map(String));
      s.axis.title = { text: `layer of ${text(model)}` };
      return s;
    };
    const x = axis(cols, b), y = axis(rows, a);
    const low = Math.min(0, ...M.flat());
    const hover = M.map((r, i) => r.map((v, j) => `${text(a)} layer ${rows[i]} × ${text(b)} layer ${cols[j]}: ` +
      `CKA ${fmt(v)}`));
    plot(div, [{ type: "heatmap", z: M, x: x.keys, y: y.keys, colorscale: "Viridis", zmin: low, zmax: 1,
      text: M.map((r) => r.map((v) => fmt(v, 2))), texttemplate: rows.length <= 16 && cols.length <= 16 ? "%{text}" : "",
      customdata: hover, hovertemplate: "%{customdata}<extra></extra>", colorbar: { title: { text: "CKA" } } }],
    { height: 560, margin: { l: 72, r: 16, t: 16, b: 56 },
      xaxis: { ...x.axis, constrain: "domain" }, yaxis: { ...y.axis, scaleanchor: "x" } });
    div.dataset.cells = String(M.length * (M[0] || []).length);
  });
})();
