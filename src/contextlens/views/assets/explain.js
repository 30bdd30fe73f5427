/* contextlens views of the explanations inside a layer, drawn with our own SVG and HTML tables (no
   Plotly: a page stays a few tens of kB): the two blocks of every layer (sublayers), attributions
   beside occlusion, and patching. Every number is the library's (contextlens.views.explain); this
   script only lays them out. */
"use strict";
(function () {
  const CLV = window.CLViews, h = CLV.h, esc = CLV.esc, fmt = CLV.fmt, short = CLV.short;
  const SVGNS = "http://www.w3.org/2000/svg";
  const STAGE = { attention: "attention", ffn: "feed-forward" };

  /** An <svg> of the given size holding `parts` (SVG markup whose user text went through esc). */
  function svg(width, height, parts, cls) {
    const s = document.createElementNS(SVGNS, "svg");
    s.setAttribute("width", width); s.setAttribute("height", height);
    s.setAttribute("viewBox", `0 0 ${width} ${height}`);
    s.setAttribute("class", `clv-explain-svg ${cls || ""}`);
    s.innerHTML = parts.join("");
    return s;
  }
  const n2 = (x) => x.toFixed(1);
  /** A y scale from [lo, hi] to [bottom, top] pixels. */
  const scale = (lo, hi, bottom, top) => (v) => bottom - ((v - lo) / (hi - lo || 1)) * (bottom - top);
  /** Horizontal grid lines and their labels at `ticks`, and the axis title `label` turned upright. */
  function yAxis(ticks, y, left, right, label) {
    const out = ticks.map((t) => `<line x1="${left}" x2="${right}" y1="${n2(y(t))}" y2="${n2(y(t))}" ` +
      `class="clv-grid"/><text x="${left - 6}" y="${n2(y(t) + 4)}" text-anchor="end" class="clv-tick">` +
      `${fmt(t, 2)}</text>`);
    if (label) {
      const mid = n2((y(ticks[0]) + y(ticks[ticks.length - 1])) / 2);
      out.push(`<text x="12" y="${mid}" class="clv-axis" transform="rotate(-90 12 ${mid})" ` +
        `text-anchor="middle">${esc(label)}</text>`);
    }
    return out;
  }
  const ticksOf = (lo, hi, n = 4) => [...Array(n + 1).keys()].map((k) => lo + ((hi - lo) * k) / n);
  /** A polyline with a dot (a hover title, its value) at each point; `points`: [[x, y, title, value]]. */
  function line(points, colour, cls) {
    const d = points.map(([x, y]) => `${n2(x)},${n2(y)}`).join(" ");
    return [`<polyline points="${d}" fill="none" stroke="${colour}" stroke-width="2" class="${cls}"/>`,
      ...points.map(([x, y, t, v]) => `<circle cx="${n2(x)}" cy="${n2(y)}" r="3.5" fill="${colour}" ` +
        `class="${cls}-dot" data-value="${v}"><title>${esc(t)}</title></circle>`)];
  }
  const swatch = (colour, text) => h("span", { class: "clv-key" },
    h("span", { class: "clv-dot", style: `background:${colour}` }), text);

  // ---- the two blocks of every layer ---------------------------------------------------------
  CLV.register("sublayers", (el, d) => {
    const two = d.sentences.length === 2, rows = d.rows, stages = d.stages;
    const layers = [...new Set(rows.map((r) => r.layer))];
    const also = two ? "; above, the cosine between the two usages after each block" : "";
    const named = stages.length === 2 ? "attention: the attention block's output (after its residual add, " +
      "and its LayerNorm in post-LN models); feed-forward: the layer's output." : d.note || "";
    el.append(h("p", { class: "clv-info" }, `How far each block moves '${d.word}': the cosine distance ` +
      `(1 − cos) between its vector before the block and after it${also}. ${named}`));
    const keys = h("p", { class: "clv-info clv-keys" });
    const label = (u) => (d.labels ? d.labels[u] : `S${u}`);  // the usages as the page numbers them
    d.sentences.forEach((s, u) => keys.append(swatch(CLV.colour(u), `${label(u)}: ${short(s, 90)}`)));
    el.append(keys);
    const colW = Math.max(34, Math.min(70, Math.floor(900 / layers.length))), left = 118;
    const width = Math.max(left + layers.length * colW + 20, 560);  // room for the axis title
    const cx = (layer) => left + layers.indexOf(layer) * colW + colW / 2;
    const half = (r) => (stages.length === 2 ? (r.after === "attention" ? -colW / 4 : colW / 4) : 0);
    const stageX = (r) => cx(r.layer) + half(r);
    if (two) {
      const cos = [d.start.cosine, ...rows.map((r) => r.cosine)];
      const lo = Math.max(-1, Math.floor((Math.min(...cos) - 0.02) * 20) / 20), H = 200;
      const y = scale(lo, 1, H - 22, 12);
      const pts = [[left - 10, y(d.start.cosine), `before layer ${layers[0]} (${d.start.name}): cosine ` +
        `${fmt(d.start.cosine)}`, d.start.cosine],
      ...rows.map((r) => [stageX(r), y(r.cosine), `layer ${r.layer}, after the ` +
        `${STAGE[r.after] || r.after} block: cosine ${fmt(r.cosine)}`, r.cosine])];
      const parts = yAxis(ticksOf(lo, 1), y, left - 14, width - 10, "cosine");
      if (d.largest_drop) {
        const r = rows.find((x) => x.layer === d.largest_drop.layer && x.after === d.largest_drop.after);
        const title = `the two usages separate most here: −${fmt(d.largest_drop.drop)}`;
        parts.push(`<rect x="${n2(stageX(r) - colW / 4)}" y="8" width="${n2(colW / 2)}" height="${H - 26}" ` +
          `class="clv-drop"><title>${title}</title></rect>`);
      }
      parts.push(...line(pts, "#1d2733", "clv-cos"));
      el.append(h("div", { class: "clv-stage" }, svg(width, H, parts, "clv-sub-cos")));
    }
    const laneH = 110, top = 10, H = top + stages.length * laneH + 34;
    const most = Math.max(1e-9, ...rows.flatMap((r) => r.moved));
    const parts = [];
    stages.forEach((s, k) => {
      const y0 = top + k * laneH, base = y0 + laneH - 8;
      parts.push(`<text x="${left - 10}" y="${y0 + laneH / 2}" text-anchor="end" class="clv-lane">` +
        `${STAGE[s] || s}</text>`,
      `<line x1="${left}" x2="${width - 10}" y1="${base}" y2="${base}" class="clv-grid"/>`);
    });
    const bw = Math.max(4, (colW - 10) / d.sentences.length / (stages.length === 2 ? 1 : 2));
    for (const r of rows) {
      const base = top + stages.indexOf(r.after) * laneH + laneH - 8;
      r.moved.forEach((m, u) => {
        const hgt = ((laneH - 24) * m) / most, x = cx(r.layer) - (d.sentences.length * bw) / 2 + u * bw;
        const title = `layer ${r.layer}, ${STAGE[r.after] || r.after} block, ${label(u)}: moved ` +
          `${fmt(m, 4)} (1 − cos), change of norm ${fmt(r.update_norm[u], 2)}`;
        parts.push(`<rect x="${n2(x)}" y="${n2(base - hgt)}" width="${n2(bw - 1)}" height="${n2(hgt)}" ` +
          `fill="${CLV.colour(u)}" class="clv-moved" data-layer="${r.layer}" data-after="${r.after}" ` +
          `data-value="${m}"><title>${esc(title)}</title></rect>`);
      });
    }
    layers.forEach((L) => parts.push(`<text x="${n2(cx(L))}" y="${H - 14}" text-anchor="middle" ` +
      `class="clv-tick">${L}</text>`));
    parts.push(`<text x="${n2(left + (width - left) / 2)}" y="${H - 1}" text-anchor="middle" ` +
      "class=\"clv-axis\">layer (bar height: 1 − cos before / after the block; tallest " +
      `${fmt(most, 3)})</text>`);
    el.append(h("div", { class: "clv-stage" }, svg(width, H, parts, "clv-sub-lanes")));
  });

  // ---- attributions beside occlusion ---------------------------------------------------------
  /** A cell's blue: the value's share of its row's largest (`top`), from pale to strong. */
  const shade = (v, top) => {
    const alpha = top > 0 ? (0.08 + (0.72 * Math.max(0, v)) / top).toFixed(3) : 0;
    return `rgba(31, 119, 180, ${alpha})`;
  };
  const rhoCell = (v) => {
    if (v === null || v === undefined) {
      return h("td", { class: "clv-rho", title: "undefined (a constant column)" }, "–");
    }
    const [r, g, b] = CLV.diverging(v);
    return h("td", { class: "clv-rho", style: `background:rgb(${r},${g},${b})`, "data-value": String(v) },
      fmt(v, 2));
  };
  CLV.register("attributions", (el, d) => {
    const L = d.layers, st = { layer: L.length - 1 };
    const words = CLV.slots(d.context.map((c) => c.word), (i) => `(${d.context[i].position})`).shown;
    const controls = h("div", { class: "clv-controls" }), table = h("div", { class: "clv-stage" });
    const seen = d.causal ? " before it (a causal model sees only those)" : "";
    el.append(h("p", { class: "clv-info" }, `What shaped '${d.word}' in “${short(d.sentence, 120)}”: each ` +
      `method's score for every other word${seen}, each row shaded by its own largest value, and its ` +
      "Spearman correlation with occlusion (leaving the word out) across the words."), controls, table);
    const notes = [];
    const missing = Object.entries(d.unavailable || {});
    if (missing.length) {
      notes.push(`Not available here: ${missing.map(([m, why]) => `${m} (${why})`).join("; ")}.`);
    }
    const gap = (d.ig_completeness || []).filter((c) =>
      Math.abs(c.sum - c.difference) > 0.05 * Math.abs(c.difference) + 1e-6);
    if (gap.length) {
      notes.push(`Integrated gradients (${d.steps} steps) do not add up to f(x) − f(baseline) within 5% at ` +
        `layer${gap.length > 1 ? "s" : ""} ${gap.map((c) => c.layer).join(", ")}: more steps would resolve ` +
        "the integral better.");
    }
    if (d.next_word) {
      const nw = d.next_word;
      notes.push(`Next piece after '${d.word}': ${nw.piece} (log p ${fmt(nw.log_probability, 2)}); ` +
        "“next-word drop”: how much its log-probability falls when the word is left out.");
    }
    for (const n of notes) el.append(h("p", { class: "clv-info clv-note" }, n));
    const defs = h("details", { class: "clv-defs" }, h("summary", {}, "what each method is"),
      h("dl", {}, ...Object.entries(d.definitions).flatMap(([m, t]) => [h("dt", {}, m), h("dd", {}, t)])));
    function draw() {
      const at = L[st.layer];
      controls.innerHTML = "";
      controls.append(CLV.select("layer", L.map((x, i) => [i, `${x.layer}: ${x.layer_name}`]), st.layer,
        (v) => { st.layer = Number(v); draw(); }, "clv-attr-layer"));
      const nextHead = d.next_word ? [h("th", { title: "Spearman correlation with the next-word drop" },
        "ρ next word")] : [];
      const head = h("tr", {}, h("th", {}, "method"), ...words.map((w) => h("th", { class: "clv-word" }, w)),
        h("th", { title: "Spearman correlation with occlusion across the words" }, "ρ occlusion"),
        ...nextHead);
      const refs = [["occlusion", at.occlusion, null]];
      if (d.next_word) refs.push(["next-word drop", d.next_word.drop, null]);
      const rows = [...refs, ...d.methods.map((m) => [m, at.scores[m], m])];
      const body = rows.map(([name, values, m]) => {
        const top = Math.max(...values.map(Math.abs)), ref = m === null;
        const cells = values.map((v, j) => {
          const c = d.context[j];
          return h("td", { style: `background:${shade(v, top)}`, "data-value": String(v),
            title: `${name}, '${c.word}' (word ${c.position}): ${v}` }, fmt(v, 3));
        });
        const rho = ref ? h("td", {}, "") : rhoCell(at.spearman[m]);
        const nextRho = d.next_word ? [ref ? h("td", {}, "") : rhoCell(at.next_word_spearman[m])] : [];
        return h("tr", { class: ref ? "clv-ref" : "", "data-method": name },
          h("th", { title: d.definitions[m || name] || "" }, name), ...cells, rho, ...nextRho);
      });
      const tab = h("table", { class: "clv-attr" }, h("thead", {}, head), h("tbody", {}, ...body));
      const faith = h("table", { class: "clv-faith" },
        h("caption", {}, "Spearman with occlusion, every layer (the faithfulness table)"),
        h("thead", {}, h("tr", {}, h("th", {}, "layer"), ...d.methods.map((m) => h("th", {}, m)))),
        h("tbody", {}, ...L.map((x, i) => h("tr", { class: i === st.layer ? "clv-on-row" : "" },
          h("th", {}, `${x.layer}: ${x.layer_name}`), ...d.methods.map((m) => rhoCell(x.spearman[m]))))));
      table.innerHTML = "";
      table.append(tab, faith, defs);
      table.dataset.layer = String(at.layer);
    }
    draw();
  });

  // ---- patching ------------------------------------------------------------------------------
  const WHERE = { layer: "the layer's output", attention: "what the attention block writes",
    ffn: "what the feed-forward block writes" };
  CLV.register("patch", (el, d) => {
    const R = d.rows, left = 64, width = Math.max(420, left + R.length * 34 + 30), H = 260;
    el.append(h("p", { class: "clv-info" }, `'${d.word}' in the recipient “${short(d.recipient, 90)}” ` +
      `given, at one layer at a time (${WHERE[d.at] || d.at}), the donor's state from ` +
      `“${short(d.donor, 90)}”; the rest of the recipient runs as usual. The lines: the patched word's ` +
      "last-layer cosine to the donor's word and to the unpatched recipient's; dashed: the two unpatched " +
      "words."));
    const all = [d.unpatched, ...R.flatMap((r) => [r.cosine_to_donor, r.cosine_to_recipient])];
    const lo = Math.max(-1, Math.floor((Math.min(...all) - 0.02) * 20) / 20), y = scale(lo, 1, H - 34, 12);
    const x = (i) => left + 10 + (i * (width - left - 30)) / Math.max(1, R.length - 1);
    const parts = yAxis(ticksOf(lo, 1), y, left, width - 10, "cosine at the last layer");
    const yu = n2(y(d.unpatched));
    parts.push(`<line x1="${left}" x2="${width - 10}" y1="${yu}" y2="${yu}" class="clv-unpatched">` +
      `<title>unpatched: cosine ${fmt(d.unpatched)}</title></line>`);
    const lines = [["cosine_to_donor", "donor", 1], ["cosine_to_recipient", "recipient", 0]];
    for (const [key, to, colour] of lines) {
      const pts = R.map((r, i) => [x(i), y(r[key]), `patched at layer ${r.layer}: cosine to the ${to}'s ` +
        `word ${fmt(r[key])}`, r[key]]);
      parts.push(...line(pts, CLV.colour(colour), `clv-to-${to}`));
    }
    const step = Math.ceil(R.length / 16);
    R.forEach((r, i) => {
      if (i % step === 0) {
        parts.push(`<text x="${n2(x(i))}" y="${H - 18}" text-anchor="middle" class="clv-tick">` +
          `${r.layer}</text>`);
      }
    });
    parts.push(`<text x="${n2(left + (width - left) / 2)}" y="${H - 2}" text-anchor="middle" ` +
      'class="clv-axis">layer patched</text>');
    el.append(h("p", { class: "clv-info clv-keys" }, swatch(CLV.colour(1), "to the donor's word"),
      swatch(CLV.colour(0), "to the recipient's word")),
    h("div", { class: "clv-stage" }, svg(width, H, parts, "clv-patch-lines")));
    const p = d.predictions;
    if (!p) {
      if (d.unavailable) {
        const why = Object.values(d.unavailable).join("; ");
        el.append(h("p", { class: "clv-info clv-note" }, `No next words: ${why}`));
      }
      return;
    }
    const words = (list) => list.map((w) => `${w.word} ${fmt(w.probability, 3)}`).join(", ");
    el.append(h("p", { class: "clv-info" }, `Next words (${p.rule}): recipient — ${words(p.recipient)}; ` +
      `donor — ${words(p.donor)}.`));
    const head = h("tr", {}, h("th", {}, "donor's next word"), h("th", {}, "in recipient"),
      ...R.map((r, i) => h("th", {}, i % step === 0 ? `L${r.layer}` : "")), h("th", {}, "in donor"));
    const top = Math.max(1e-12, ...p.donor_words.flatMap((w) => [w.in_donor, w.in_recipient, ...w.patched]));
    const cell = (v) => h("td", { style: `background:${shade(v, top)}`, "data-value": String(v),
      title: String(v) }, fmt(v, 3));
    const body = p.donor_words.map((w) => h("tr", {}, h("th", {}, w.word), cell(w.in_recipient),
      ...w.patched.map(cell), cell(w.in_donor)));
    const next = h("table", { class: "clv-attr clv-next" },
      h("caption", {}, "the recipient's best next words after each patch"),
      h("tbody", {}, ...R.map((r) => h("tr", {}, h("th", {}, `patched at layer ${r.layer}`),
        h("td", { class: "clv-left" }, words(r.next))))));
    el.append(h("div", { class: "clv-stage" }, h("table", { class: "clv-attr" },
      h("caption", {}, "the donor's best next words: probability in the recipient, after the patch at each " +
        "layer, in the donor"),
      h("thead", {}, head), h("tbody", {}, ...body)), next));
  });
})();
