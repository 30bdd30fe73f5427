/* contextlens lab: tabs, 2. the sentence lab and 3. senses (4. your corpus: corpus.js). Every number comes from /api/. */
"use strict";
(() => {
  const { $, api, getParam, setParams, status, saveJSON, figureButtons, busy, note, plot, ensureLoaded } = window.CL;
  const DEFAULT_SENTENCES = "The bank approved my loan.\nWe sat on the bank of the river.\nShe deposited the money at the bank.";
  const DEFAULT_SENSES = [
    "The bank approved my loan.", "She opened an account at the bank.", "The bank raised its interest rates.",
    "He works as a teller at the bank.", "We sat on the bank of the river.", "Reeds grew along the bank of the stream.",
    "The boat drifted to the far bank.", "Fish hid under the muddy bank.",
  ].join("\n");
  const COLORS = ["#1f6feb", "#d9480f", "#2f9e44", "#9c36b5", "#e8590c", "#0c8599", "#c2255c", "#5c940d"];
  const lines = (text) => text.split("\n").map((s) => s.trim()).filter(Boolean);
  const lab = { result: {}, status: null };

  // ---- tabs (arrow keys move between them) -------------------------------------------------
  const TABS = ["toy", "sentences", "senses"];  // + "index" when the lab has a usage index
  function showTab(name, focus) {
    for (const t of TABS) {
      const on = t === name;
      $(`#tab-${t}`).setAttribute("aria-selected", String(on));
      $(`#tab-${t}`).tabIndex = on ? 0 : -1;
      $(`#panel-${t}`).hidden = !on;
    }
    if (focus) $(`#tab-${name}`).focus();
    setParams({ tab: name });
    window.dispatchEvent(new Event("resize"));  // Plotly figures drawn while hidden take their size now
  }
  function initTabs() {
    TABS.forEach((t, i) => {
      const b = $(`#tab-${t}`);
      b.addEventListener("click", () => showTab(t));
      b.addEventListener("keydown", (ev) => {
        const k = { ArrowRight: 1, ArrowLeft: -1 }[ev.key];
        if (ev.key === "Home") showTab(TABS[0], true);
        else if (ev.key === "End") showTab(TABS[TABS.length - 1], true);
        else if (k) showTab(TABS[(i + k + TABS.length) % TABS.length], true);
      });
    });
    showTab(TABS.includes(getParam("tab")) ? getParam("tab") : "toy");
  }

  function fillEncoders(select, chosen) {
    select.innerHTML = "";
    for (const name of lab.status.encoders) {
      const o = document.createElement("option");
      o.value = name;
      o.textContent = ["static", "average", "attention"].includes(name) ? `${name} (${lab.status.vectors})` : name;
      select.appendChild(o);
    }
    select.value = lab.status.encoders.includes(chosen) ? chosen : lab.status.default_model;
  }
  async function prepare(encoder) {
    await ensureLoaded(["static", "average", "attention"].includes(encoder) ? lab.status.vectors : encoder);
  }

  // ---- 2. sentence lab ---------------------------------------------------------------------
  let tokenTimer = null;
  async function showTokens() {
    const sentences = lines($("#lab-sentences").value);
    const box = $("#lab-tokens");
    try {
      const r = await api("/api/tokens", { sentences });
      box.innerHTML = "";
      const word = $("#lab-word").value.toLowerCase();
      r.sentences.forEach((words, i) => {
        const row = document.createElement("div");
        row.className = "token-row";
        row.innerHTML = `<span class="sent-no">${i + 1}</span>`;
        for (const w of words) {
          const b = document.createElement("button");
          b.type = "button"; b.className = "token"; b.textContent = w.text;
          b.setAttribute("aria-pressed", String(w.text.toLowerCase() === word));
          b.addEventListener("click", () => { $("#lab-word").value = w.text; markTokens(); runLab(); });
          row.appendChild(b);
        }
        box.appendChild(row);
      });
      $("#lab-error").textContent = "";
    } catch (e) { $("#lab-error").textContent = e.message; }
  }
  function markTokens() {
    const word = $("#lab-word").value.toLowerCase();
    document.querySelectorAll("#lab-tokens .token").forEach((b) => b.setAttribute("aria-pressed", String(b.textContent.toLowerCase() === word)));
  }

  function labRequest() {
    const req = { sentences: lines($("#lab-sentences").value), word: $("#lab-word").value.trim(), encoder: $("#lab-encoder").value };
    if (req.encoder === "average") req.alpha = Number($("#lab-alpha").value);
    if (req.encoder === "attention") req.include_self = $("#lab-self").checked;
    return req;
  }
  function mixerOptions() {
    const enc = $("#lab-encoder").value;
    $("#lab-alpha-wrap").hidden = enc !== "average";
    $("#lab-self-wrap").hidden = enc !== "attention";
  }
  function saveLabURL() {
    const r = labRequest();
    setParams({ s: r.sentences.join("\n"), w: r.word, m: r.encoder, a: r.alpha, si: r.include_self === false ? 0 : null,
      l: $("#lab-layer").value, as: $("#lab-att-sentence").value || null });
  }

  const FIGS = ["fig-layers", "fig-matrix", "fig-attention", "fig-occlusion", "fig-lens", "fig-projection", "fig-neighbours"];
  /** Say why there is nothing to show, in the form and in every figure (no stale figure stays). */
  function clearFigures(message) {
    $("#lab-error").textContent = message;
    lab.result = {};
    FIGS.forEach((f) => note(f, message));
  }
  /** The sentences (1-based) the word is not a word of, by the server's tokenizer. */
  async function sentencesWithout(req) {
    const r = await api("/api/tokens", { sentences: req.sentences });
    const w = req.word.toLowerCase();
    return r.sentences.map((ws, i) => (ws.some((t) => t.text.toLowerCase() === w) ? null : i + 1)).filter((i) => i !== null);
  }

  /** Each run of the figures (Show, a token click, a new layer or sentence) has a number; only the
   * latest draws, so a slower earlier answer never replaces a newer one (nor another encoder's). */
  let labRun = 0;
  async function runLab() {
    const n = ++labRun;
    const req = labRequest();
    saveLabURL();
    $("#lab-error").textContent = "";
    if (req.sentences.length < 2) { $("#lab-error").textContent = "Give two or more sentences, one per line."; return; }
    if (!req.word) { $("#lab-error").textContent = "Pick a word: click it in a sentence above."; return; }
    const figs = FIGS.filter((f) => f !== "fig-neighbours" && f !== "fig-lens");  // these keep their own veils
    figs.forEach((f) => busy(f, true));
    try {
      const without = await sentencesWithout(req);
      if (n !== labRun) return;
      if (without.length) {
        const which = without.length === 1 ? `sentence ${without[0]}` : `sentences ${without.join(", ")}`;
        clearFigures(`'${req.word}' is not in ${which}: these figures compare its usages across every sentence. ` +
          "Pick a word that each sentence has, or remove those sentences.");
        return;
      }
      await prepare(req.encoder);
      if (n !== labRun) return;
      figs.forEach((f) => busy(f, true, "Computing…"));
      const layers = await api("/api/layers", req);
      if (n !== labRun) return;
      lab.result.layers = layers;
      drawLayers(layers);
      fillLayerSelect(layers.layer_ids, layers.layer_names);
      fillSentenceSelect(req.sentences);
      await Promise.all([runExplore(req, n), runAttention(req, n), runOcclusion(req, n)]);
      if (n !== labRun) return;
      status(`'${req.word}' in ${req.sentences.length} sentences with ${req.encoder}.`);
      neighboursLater(req);  // the first time per encoder it builds the reference: the other figures do not wait
      runLens(req, n);  // it may load the model's language-model head: not awaited either
    } catch (e) {
      if (n === labRun) clearFigures(e.message);
    } finally {
      if (n === labRun) figs.forEach((f) => busy(f, false));
    }
  }
  function fillLayerSelect(ids, names) {  // option values are layer numbers (0 = static row)
    const sel = $("#lab-layer");
    const want = Number(sel.value || getParam("l", "-1"));
    sel.innerHTML = ids.map((id, i) => `<option value="${id}">${id}: ${names[i]}</option>`).join("");
    sel.value = String(ids.includes(want) ? want : ids[ids.length - 1]);
  }
  function fillSentenceSelect(sentences) {
    const sel = $("#lab-att-sentence");
    const want = sel.value || getParam("as", "0");
    sel.innerHTML = sentences.map((_, i) => `<option value="${i}">${i + 1}</option>`).join("");
    sel.value = Number(want) < sentences.length ? want : "0";
  }

  function drawLayers(r) {
    const data = r.pairs.map((p, k) => ({ x: r.layer_names, y: p.cosine_by_layer, name: `sentences ${p.label}`,
      mode: "lines+markers", type: "scatter", line: { color: COLORS[k % COLORS.length] } }));
    const low = Math.min(...r.pairs.flatMap((p) => p.cosine_by_layer));
    plot("fig-layers", data, { yaxis: { title: { text: "cosine" }, range: [Math.max(-1.02, low - 0.05), 1.02] },
      xaxis: { type: "category", title: { text: "layer" } }, legend: { orientation: "h", y: -0.25 }, showlegend: true });
  }
  async function runExplore(req, n) {
    const layer = Number($("#lab-layer").value);
    try {
      const r = await api("/api/explore", { ...req, layer });
      if (n !== labRun) return;
      lab.result.explore = r;
      const m = r.words[0];
      const labels = m.positions.map((p) => `S${p + 1}`);
      plot("fig-matrix", [{ type: "heatmap", z: m.matrix, x: labels, y: labels, zmin: Math.floor(Math.min(...m.matrix.flat()) * 10) / 10, zmax: 1, colorscale: "Viridis",
        text: m.matrix.map((row) => row.map((v) => v.toFixed(3))), texttemplate: "%{text}", hovertemplate: "%{y} · %{x}: %{z:.3f}<extra></extra>" }],
      { yaxis: { autorange: "reversed" }, title: { text: r.layer_name, font: { size: 12 } }, margin: { l: 48, r: 16, t: 32, b: 40 } });
      const pts = r.projection.points;
      plot("fig-projection", [{ type: "scatter", mode: "markers+text", x: pts.map((p) => p[0]), y: pts.map((p) => p[1]),
        text: labels, textposition: "top center", hovertext: r.projection.sentence, hoverinfo: "text",
        marker: { size: 12, color: m.positions.map((p) => COLORS[p % COLORS.length]) } }],
      { xaxis: { title: { text: "PC 1" }, zeroline: false }, yaxis: { title: { text: "PC 2" }, zeroline: false } });
    } catch (e) { if (n === labRun) { note("fig-matrix", e.message); note("fig-projection", e.message); } }
  }
  async function runAttention(req, n) {  // the library's views (contextlens.views), drawn by its own script
    const i = Number($("#lab-att-sentence").value || 0);
    const layerIds = lab.result.layers ? lab.result.layers.layer_ids : [];
    const chosen = Number($("#lab-layer").value);  // attention needs a contextual layer: layer 0 shows the first
    const layer = chosen > 0 ? chosen : (layerIds.length > 1 ? layerIds[1] : -1);
    try {
      const r = await api("/api/views/attention", { encoder: req.encoder, alpha: req.alpha, include_self: req.include_self,
        sentence: req.sentences[i], word: req.word, layer });
      if (n !== labRun) return;
      lab.result.attention = r;
      const box = $("#fig-attention");
      box.innerHTML = "";
      for (const data of r.views) {
        const el = document.createElement("section");
        el.className = "lab-view";
        box.appendChild(el);
        window.CLViews.render(el, data);
      }
    } catch (e) { if (n === labRun) note("fig-attention", e.message); }
  }
  /** Draw one of the library's views (its data from the server) in a figure card. */
  function drawView(figId, view) {
    const box = $(`#${figId}`);
    box.innerHTML = "";
    const el = document.createElement("section");
    el.className = "lab-view";
    box.appendChild(el);
    window.CLViews.render(el, view);
  }
  /** The library's occlusion view of the word in the chosen sentence (every layer at once). */
  async function runOcclusion(req, n) {
    const i = Number($("#lab-att-sentence").value || 0);
    try {
      const r = await api("/api/views/occlusion", { encoder: req.encoder, alpha: req.alpha,
        include_self: req.include_self, sentence: req.sentences[i], word: req.word });
      if (n !== labRun) return;
      lab.result.occlusion = r.view;
      drawView("fig-occlusion", r.view);
    } catch (e) { if (n === labRun) note("fig-occlusion", e.message); }
  }
  /** The logit lens of a causal model after the word in the chosen sentence, following the
   * sentence's own next word; any other encoder gets the server's word on what to pick. */
  async function runLens(req, n) {
    const sentence = req.sentences[Number($("#lab-att-sentence").value || 0)];
    busy("fig-lens", true, "Reading the predictions of every layer… (the first time it loads the model's head)");
    try {
      const words = (await api("/api/tokens", { sentences: [sentence] })).sentences[0].map((w) => w.text);
      const position = words.findIndex((w) => w.toLowerCase() === req.word.toLowerCase());
      const next = words[position + 1];
      const r = await api("/api/views/lens", { model: req.encoder, sentence, position, k: 5, track: next ? [next] : [] });
      if (n !== labRun) return;
      lab.result.lens = r.view;
      drawView("fig-lens", r.view);
    } catch (e) {
      if (n === labRun) note("fig-lens", e.message);
    } finally {
      if (n === labRun) busy("fig-lens", false);
    }
  }
  /** The library's neighbours view of the word in the chosen sentence at the chosen layer. */
  let neighboursRun = 0;  // only the latest request draws: an earlier, slower one is dropped
  async function runNeighbours(req) {
    const n = ++neighboursRun;
    const i = Number($("#lab-att-sentence").value || 0);
    const layer = Number($("#lab-layer").value);
    const body = { encoder: req.encoder, alpha: req.alpha, include_self: req.include_self, sentence: req.sentences[i],
      word: req.word, layer, k: 10 };
    busy("fig-neighbours", true, "Finding the nearest reference words… The first time for an encoder it encodes " +
      "20,000 reference words alone: seconds over the table, a few minutes for a transformer (cached on disk after).");
    try {
      const r = await api("/api/views/neighbours", body);
      if (n !== neighboursRun) return;
      lab.result.neighbours = r.view;
      drawView("fig-neighbours", r.view);
    } catch (e) {
      if (n === neighboursRun) note("fig-neighbours", e.message);
    } finally {
      if (n === neighboursRun) busy("fig-neighbours", false);
    }
  }
  const neighboursLater = (req) => { runNeighbours(req); };  // not awaited: the other figures do not wait for it
  function initLab() {
    $("#lab-sentences").value = getParam("s", DEFAULT_SENTENCES);
    $("#lab-word").value = getParam("w", "bank");
    fillEncoders($("#lab-encoder"), getParam("m", lab.status.default_model));
    $("#lab-alpha").value = getParam("a", "0");
    $("#lab-self").checked = getParam("si") !== "0";
    $("#lab-encoder").addEventListener("change", mixerOptions);
    mixerOptions();
    $("#lab-form").addEventListener("submit", (ev) => { ev.preventDefault(); runLab(); });
    $("#lab-sentences").addEventListener("input", () => { clearTimeout(tokenTimer); tokenTimer = setTimeout(showTokens, 250); });
    $("#lab-word").addEventListener("input", markTokens);
    const again = (fn) => async () => {
      const n = ++labRun;
      saveLabURL(); const req = labRequest(); busy("fig-matrix", true); busy("fig-attention", true);
      try { await fn(req, n); } finally {
        if (n === labRun) { busy("fig-matrix", false); busy("fig-attention", false); busy("fig-projection", false); }
      } };
    $("#lab-layer").addEventListener("change", again((req, n) => { neighboursLater(req); return Promise.all([runExplore(req, n), runAttention(req, n)]); }));
    $("#lab-att-sentence").addEventListener("change", again((req, n) => {
      neighboursLater(req); runLens(req, n); return Promise.all([runAttention(req, n), runOcclusion(req, n)]); }));
    $("#lab-json").addEventListener("click", () => saveJSON({ request: labRequest(), ...lab.result }, "contextlens-sentence-lab.json"));
    document.querySelectorAll("#panel-sentences .downloads[data-fig]").forEach((d) => figureButtons(d, d.dataset.fig));
    FIGS.forEach((f) => note(f, "Press Show to compute."));
    showTokens();
  }

  // ---- 3. senses ---------------------------------------------------------------------------
  async function runSenses() {
    const req = { sentences: lines($("#senses-sentences").value), word: $("#senses-word").value.trim(),
      encoder: $("#senses-encoder").value, k: $("#senses-k").value === "auto" ? "auto" : Number($("#senses-k").value) };
    setParams({ ss: req.sentences.join("\n"), sw: req.word, sm: req.encoder, k: req.k === "auto" ? null : req.k });
    $("#senses-error").textContent = "";
    busy("fig-senses", true);
    try {
      await prepare(req.encoder);
      busy("fig-senses", true, "Clustering…");
      const r = await api("/api/senses", req);
      lab.result.senses = r;
      $("#senses-summary").textContent = `${r.n_usages} usages of '${r.word}' at ${r.layer_name}: k = ${r.k} (${r.k_chosen_by}), silhouette ${r.silhouette === null ? "undefined" : r.silhouette.toFixed(3)}.`;
      const box = $("#senses-clusters");
      box.innerHTML = "";
      for (const c of r.clusters) {
        const d = document.createElement("div");
        d.className = "cluster";
        d.innerHTML = `<h3><span class="dot" style="background:${COLORS[c.id % COLORS.length]}"></span>cluster ${c.id + 1} (${c.size})</h3><ul></ul>`;
        for (const s of c.sentences) { const li = document.createElement("li"); li.textContent = s; d.querySelector("ul").appendChild(li); }
        box.appendChild(d);
      }
      const pos = r.projection.positions, pts = r.projection.points;
      const traces = r.clusters.map((c) => {
        const k = pos.map((p, j) => [p, j]).filter(([p]) => r.labels[p] === c.id);
        return { type: "scatter", mode: "markers", name: `cluster ${c.id + 1}`, x: k.map(([, j]) => pts[j][0]), y: k.map(([, j]) => pts[j][1]),
          text: k.map(([p]) => req.sentences[p]), hoverinfo: "text", marker: { size: 12, color: COLORS[c.id % COLORS.length] } };
      });
      plot("fig-senses", traces, { xaxis: { title: { text: "PC 1" }, zeroline: false }, yaxis: { title: { text: "PC 2" }, zeroline: false },
        legend: { orientation: "h", y: -0.2 } });
    } catch (e) {  // nothing stale stays: the summary, the clusters and the figure say why instead
      $("#senses-error").textContent = e.message;
      $("#senses-summary").textContent = e.message;
      $("#senses-clusters").innerHTML = "";
      lab.result.senses = null;
      note("fig-senses", e.message);
    } finally { busy("fig-senses", false); }
  }
  function initSenses() {
    $("#senses-sentences").value = getParam("ss", DEFAULT_SENSES);
    $("#senses-word").value = getParam("sw", "bank");
    fillEncoders($("#senses-encoder"), getParam("sm", lab.status.default_model));
    const k = $("#senses-k");
    for (let i = 2; i <= 8; i++) k.insertAdjacentHTML("beforeend", `<option value="${i}">${i}</option>`);
    k.value = getParam("k", "auto");
    $("#senses-file").addEventListener("change", async (ev) => {
      const f = ev.target.files[0];
      if (f) $("#senses-sentences").value = (await f.text()).replace(/\r\n?/g, "\n");
    });
    $("#senses-form").addEventListener("submit", (ev) => { ev.preventDefault(); runSenses(); });
    $("#senses-json").addEventListener("click", () => saveJSON(lab.result.senses || {}, "contextlens-senses.json"));
    document.querySelectorAll("#panel-senses .downloads[data-fig]").forEach((d) => figureButtons(d, d.dataset.fig));
    note("fig-senses", "Press Cluster to compute.");
  }

  async function init() {
    try {
      lab.status = await api("/api/status");
      lab.index = await api("/api/index");
      if (lab.index.loaded) {
        TABS.push("index");
        $("#tab-index").hidden = false;
        window.CorpusLab.init(lab.index);
      }
      initTabs();
      await window.ToyLab.init();
      initLab();
      initSenses();
      document.body.dataset.ready = "1";
      if (getParam("tab") === "sentences" && getParam("s")) runLab();
      if (getParam("tab") === "senses" && getParam("ss")) runSenses();
      if (getParam("tab") === "index" && lab.index.loaded) window.CorpusLab.restore();
    } catch (e) {
      status(`The lab could not start: ${e.message}`);
    }
  }
  init();
})();
