/* contextlens lab: tabs, 2. the sentence lab and 3. senses (4. what layers know: know.js; 5. your corpus:
   corpus.js). Every number comes from /api/. */
"use strict";
(() => {
  const { $, api, getParam, setParams, status, saveJSON, figureButtons, busy, note, plot, drawViews, latestRuns,
    ensureLoaded } = window.CL;
  const DEFAULT_SENTENCES = "The bank approved my loan.\nWe sat on the bank of the river.\nShe deposited the money at the bank.";
  const DEFAULT_SENSES = [
    "The bank approved my loan.", "She opened an account at the bank.", "The bank raised its interest rates.",
    "He works as a teller at the bank.", "We sat on the bank of the river.", "Reeds grew along the bank of the stream.",
    "The boat drifted to the far bank.", "Fish hid under the muddy bank.",
  ].join("\n");
  const COLORS = ["#1f6feb", "#d9480f", "#2f9e44", "#9c36b5", "#e8590c", "#0c8599", "#c2255c", "#5c940d"];
  const lines = (text) => text.split("\n").map((s) => s.trim()).filter(Boolean);
  const V = window.CLViews, text = V.plotText;  // user text reaches a Plotly figure through plotText only
  const WRAP = 60;  // a sentence in a hover label: lines of about this many characters
  const lab = { result: {}, status: null };

  // ---- tabs (arrow keys move between them) -------------------------------------------------
  const TABS = ["toy", "sentences", "senses", "know"];  // + "index" when the lab has a usage index
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
        row.innerHTML = `<span class="sent-no" title="sentence ${i} (numbered from 0, as in the JSON)">${i}</span>`;
        words.forEach((w, j) => {
          const b = document.createElement("button");
          b.type = "button"; b.className = "token"; b.textContent = w.text;
          b.setAttribute("aria-pressed", String(w.text.toLowerCase() === word));
          // the word, and its sentence and occurrence there for the cards that read one sentence
          const same = words.slice(0, j).filter((x) => x.text.toLowerCase() === w.text.toLowerCase()).length;
          b.addEventListener("click", () => {
            $("#lab-word").value = w.text;
            lab.sentence = i;
            lab.picked = { sentence: i, word: w.text.toLowerCase(), occurrence: same };
            markTokens();
            runLab();
          });
          row.appendChild(b);
        });
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
  /** ``body`` with the encoder and its options of ``req`` (what every figure's request carries). */
  const withEncoder = (req, body) => ({ encoder: req.encoder, alpha: req.alpha, include_self: req.include_self, ...body });
  /** The chosen sentence's index (0-based) and text, for the cards that read one sentence. */
  const chosenIndex = () => (lab.sentence !== undefined ? lab.sentence  // a word just clicked in it
    : Number($("#lab-att-sentence").value || lab.urlSentence || 0));
  const chosenSentence = (req) => req.sentences[chosenIndex()];
  /** The second sentence (0-based index) of the cards that compare two: the blocks and patching (donor). */
  const otherIndex = () => Number($("#lab-other-sentence").value || lab.urlOther || 0);
  /** Which occurrence of the word (0-based) the cards reading one sentence take: the one clicked, when
   * the word was clicked in the chosen sentence; else null (a word there twice: the card says so). */
  const occurrenceIn = (req) => {
    const p = lab.picked;
    return p && p.word === req.word.toLowerCase() && p.sentence === chosenIndex() ? p.occurrence : null;
  };
  function mixerOptions() {
    const enc = $("#lab-encoder").value;
    $("#lab-alpha-wrap").hidden = enc !== "average";
    $("#lab-self-wrap").hidden = enc !== "attention";
  }
  function saveLabURL() {
    const r = labRequest();
    setParams({ s: r.sentences.join("\n"), w: r.word, m: r.encoder, a: r.alpha, si: r.include_self === false ? 0 : null,
      l: lab.layerEncoder === undefined ? lab.urlLayer : $("#lab-layer").value, as: chosenIndex(),
      o: occurrenceIn(r), ao: lab.otherFilled ? otherIndex() : lab.urlOther,
      am: $("#lab-methods").value === "all" ? null : $("#lab-methods").value,
      nc: contrast() === 0 ? null : contrast(),
      pa: $("#lab-patch-at").value === "layer" ? null : $("#lab-patch-at").value });
  }

  /** The cards of the sentence lab and their figures. */
  const CARDS = { layers: ["fig-layers"], explore: ["fig-matrix", "fig-projection"], attention: ["fig-attention"],
    occlusion: ["fig-occlusion"], lens: ["fig-lens"], neighbours: ["fig-neighbours"],
    sublayers: ["fig-sublayers"], attributions: ["fig-attributions"], patch: ["fig-patch"] };
  const FIGS = Object.values(CARDS).flat();
  /** What the server says this encoder's figures mean (causal models), on each card. */
  function showNotes(notes) {
    document.querySelectorAll("#panel-sentences .card-note").forEach((p) => {
      p.textContent = notes[p.dataset.note] || "";
      p.hidden = !notes[p.dataset.note];
    });
  }
  /** Under a card comparing sentences: the sentences (0-based) it left out, lacking the word. */
  function showSkipped(figId, positions, word) {
    document.querySelectorAll(`#panel-sentences .card-skipped${figId ? `[data-fig="${figId}"]` : ""}`).forEach((p) => {
      const n = positions ? positions.length : 0;
      p.textContent = n ? `Left out: sentence${n > 1 ? "s" : ""} ${positions.join(", ")} (no '${word}' in ${n > 1 ? "them" : "it"}).` : "";
      p.hidden = !n;
    });
  }

  /** Each run of the figures (Show, a token click, a new layer or sentence) claims the cards it draws
   * (latestRuns): only the answer of the run that last claimed a card draws in it (a slower earlier
   * answer never replaces a newer one, nor another encoder's), and a run that leaves a card alone (a
   * new layer does not change the lens) leaves it to the run that claimed it. A full run (Show) also
   * claims SHOW: the lab's status and error lines. */
  const runs = latestRuns(), SHOW = "show";
  const mine = runs.owns;
  /** Card ``name`` cannot draw: no result of it kept, each of its figures says why. */
  function fail(name, message) {
    delete lab.result[name];
    CARDS[name].forEach((f) => { note(f, message); showSkipped(f); });
  }
  /** Card ``name`` for run ``n``: its veil, then ``compute()``'s result kept and drawn (or the reason it
   * cannot be, in the card), if the card still draws for ``n``. */
  async function card(name, n, veil, compute, draw) {
    CARDS[name].forEach((f) => busy(f, true, veil));
    try {
      const r = await compute();
      if (!mine(name, n)) return;
      lab.result[name] = r;
      draw(r);
    } catch (e) {
      if (mine(name, n)) fail(name, e.message);
    } finally {
      if (mine(name, n)) CARDS[name].forEach((f) => busy(f, false));
    }
  }

  /** Every card draws what it can: one that needs the word in two sentences compares those that
   * have it (and says which it left out), one that reads one sentence reads the chosen one; a card
   * that cannot draw says why, and the others still draw. */
  async function runLab() {
    const req = labRequest();
    saveLabURL();
    $("#lab-error").textContent = "";
    if (req.sentences.length < 2) { $("#lab-error").textContent = "Give two or more sentences, one per line."; return; }
    if (!req.word) { $("#lab-error").textContent = "Pick a word: click it in a sentence above."; return; }
    const n = runs.start([SHOW, ...Object.keys(CARDS)]);
    FIGS.forEach((f) => busy(f, true));
    try {
      await prepare(req.encoder);
      if (!mine(SHOW, n)) return;
      const info = await api("/api/encode", withEncoder(req, { sentences: req.sentences }));
      if (!mine(SHOW, n)) return;
      lab.result = { encoder: { causal: info.causal, default_layer: info.default_layer, notes: info.notes } };
      fillLayerSelect(info.layer_ids, info.layer_names, info.default_layer, req.encoder);
      fillSentenceSelect(req.sentences);
      showNotes(info.notes);
      await Promise.all([runLayers(req, n), runExplore(req, n), runAttention(req, n), runOcclusion(req, n)]);
      if (mine(SHOW, n)) status(`'${req.word}' in ${req.sentences.length} sentences with ${req.encoder}.`);
      // after the others: the first time per encoder the neighbours build their reference (minutes for a
      // transformer) and the lens loads the model's head; nothing waits for them
      if (mine("neighbours", n)) runNeighbours(req, n);
      insideLayers(req, n);
      if (mine("lens", n)) runLens(req, n);
    } catch (e) {  // the encoder could not load or encode: every card it still owns says why
      const cards = Object.keys(CARDS).filter((c) => mine(c, n));
      if (mine(SHOW, n)) $("#lab-error").textContent = e.message;
      for (const c of cards) {
        fail(c, e.message);
        CARDS[c].forEach((f) => busy(f, false));
      }
    }
  }
  /** The layer options (values: layer numbers, 0 = static row). The encoder's default layer (the
   * server's: the last, or a third of the way up for a causal model) is chosen when the encoder changes;
   * otherwise the user's choice (or the shared URL's) stays. */
  function fillLayerSelect(ids, names, defaultLayer, encoder) {
    const sel = $("#lab-layer");
    let want = lab.layerEncoder === encoder ? Number(sel.value) : (lab.urlLayer != null ? Number(lab.urlLayer) : null);
    lab.urlLayer = null;  // a shared URL's layer holds for its first run only
    if (want === -1) want = ids[ids.length - 1];
    const label = (id, i) => `${id}: ${names[i]}${id === defaultLayer ? " (default)" : ""}`;
    sel.replaceChildren(...ids.map((id, i) => new Option(label(id, i), id)));
    sel.value = String(ids.includes(want) ? want : defaultLayer);
    lab.layerEncoder = encoder;
  }
  function fillSentenceSelect(sentences) {  // numbered from 0, as the JSON numbers them
    const sel = $("#lab-att-sentence");
    const want = lab.sentence !== undefined ? String(lab.sentence) : (sel.value || lab.urlSentence || "0");
    lab.sentence = undefined;
    lab.urlSentence = null;
    sel.innerHTML = sentences.map((_, i) => `<option value="${i}">${i}</option>`).join("");
    sel.value = Number(want) < sentences.length ? want : "0";
    // the second sentence: the one chosen before (or the shared URL's), else the first other one
    const other = $("#lab-other-sentence");
    const keep = lab.otherFilled ? other.value : lab.urlOther;
    other.innerHTML = sel.innerHTML;
    other.value = keep != null && Number(keep) < sentences.length ? String(keep)
      : String(sel.value === "0" && sentences.length > 1 ? 1 : 0);
    lab.otherFilled = true;
  }

  /** The cosine of the word's usages layer by layer, every two usages: each pair of the sentences that
   * have it, and the two occurrences of a sentence that has it twice (as the matrix shows every one). */
  const runLayers = (req, n) => card("layers", n, "Computing…",
    () => api("/api/layers", { ...req, missing: "skip", occurrence: "all" }),
    (r) => { drawLayers(r); showSkipped("fig-layers", r.skipped.map((s) => s.position), req.word); });
  /** One line per two usages over the layers, keyed by layer number (a tick per layer, every second
   * or third beyond 16: the views' layer axis), named as the library names them (S0–S2; S1 #0–S1 #1:
   * the word's occurrences 0 and 1 in sentence 1), the layer names and the sentences in the hovers. */
  function drawLayers(r) {
    const x = V.layerAxis(r.layer_ids, r.layer_names);
    const data = r.pairs.map((p, k) => {
      const said = p.labels.map((l, j) => `${text(l)}: ${text(p.sentences[j], WRAP)}`).join("<br>");
      const hover = (c, i) => `<b>${text(p.label)}</b>, layer ${r.layer_ids[i]} ` +
        `(${text(r.layer_names[i])}): cosine ${V.fmt(c)}<br>${said}`;
      return { type: "scatter", mode: "lines+markers", name: text(p.label), x: x.keys,
        y: p.cosine_by_layer, line: { color: COLORS[k % COLORS.length] }, hoverinfo: "text",
        hovertext: p.cosine_by_layer.map(hover) };
    });
    const low = Math.min(...r.pairs.flatMap((p) => p.cosine_by_layer));
    // the legend above the plot: the layer numbers below it get the card's whole width
    plot("fig-layers", data, { yaxis: { title: { text: "cosine" }, range: [Math.max(-1.02, low - 0.05), 1.02] },
      xaxis: x.axis, legend: { orientation: "h", x: 0, y: 1.02, yanchor: "bottom" },
      margin: { l: 56, r: 16, t: 40, b: 16 }, showlegend: true });
  }
  /** The cosine matrix of the usages at the chosen layer, and their projection. Every occurrence of
   * the word is a usage (a sentence holding it twice gives two), keyed by its index: the ticks are the
   * library's names, its sentence (S0, numbered as in the JSON) and, where a sentence has two, which
   * occurrence in it (S1 #0, S1 #1). */
  const runExplore = (req, n) => card("explore", n, "Computing…",
    () => api("/api/explore", { ...req, layer: Number($("#lab-layer").value), missing: "skip",
      occurrence: "all" }),
    (r) => {
      const m = r.words[0], count = m.positions.length;
      for (const f of CARDS.explore) showSkipped(f, m.skipped, req.word);
      const ax = V.slots(m.labels);
      const usage = (a) => `<b>usage ${a}</b> (${text(m.labels[a])}):<br>${text(m.sentences[a], WRAP)}`;
      const pair = (v, a, b) => `${usage(a)}<br>${usage(b)}<br>cosine ${V.fmt(v)}`;
      plot("fig-matrix", [{ type: "heatmap", z: m.matrix, x: ax.keys, y: ax.keys, colorscale: "Viridis",
        zmin: Math.floor(Math.min(...m.matrix.flat()) * 10) / 10, zmax: 1,
        text: m.matrix.map((row) => row.map((v) => V.fmt(v))), texttemplate: count <= 14 ? "%{text}" : "",
        customdata: m.matrix.map((row, a) => row.map((v, b) => pair(v, a, b))),
        hovertemplate: "%{customdata}<extra></extra>" }],
      { xaxis: ax.axis, yaxis: { ...ax.axis, range: [count - 0.5, -0.5] },
        title: { text: text(r.layer_name), font: { size: 12 } }, margin: { l: 48, r: 16, t: 32, b: 40 } });
      const pts = r.projection.points;
      plot("fig-projection", [{ type: "scatter", mode: "markers+text", x: pts.map((p) => p[0]), y: pts.map((p) => p[1]),
        text: ax.shown.map((t) => text(t)), textposition: "top center", hoverinfo: "text",
        hovertext: m.positions.map((_, a) => usage(a)),
        marker: { size: 12, color: m.positions.map((p) => COLORS[p % COLORS.length]) } }],
      { xaxis: { title: { text: "PC 1" }, zeroline: false }, yaxis: { title: { text: "PC 2" }, zeroline: false } });
    });
  /** The library's head, model and neuron views (contextlens.views) at the chosen layer, in the chosen sentence. */
  function runAttention(req, n) {
    const sel = $("#lab-layer");
    const chosen = Number(sel.value);  // attention needs a contextual layer: layer 0 shows the first
    const layer = chosen > 0 ? chosen : (sel.options.length > 1 ? Number(sel.options[1].value) : -1);
    return card("attention", n, "Computing…",
      () => api("/api/views/attention", withEncoder(req, { sentence: chosenSentence(req), word: req.word,
        occurrence: occurrenceIn(req), layer })),
      (r) => drawViews("fig-attention", r.views));
  }
  /** The library's occlusion view of the word in the chosen sentence (every layer at once). */
  const runOcclusion = (req, n) => card("occlusion", n, "Computing…", async () =>
    (await api("/api/views/occlusion", withEncoder(req, { sentence: chosenSentence(req), word: req.word,
      occurrence: occurrenceIn(req) }))).view,
  (view) => drawViews("fig-occlusion", [view]));
  /** The logit lens of a causal model after the word in the chosen sentence, following the
   * sentence's own next word; any other encoder gets the server's word on what to pick. */
  function runLens(req, n) {
    const sentence = chosenSentence(req), occurrence = occurrenceIn(req);
    return card("lens", n, "Reading the predictions of every layer… (the first time it loads the model's head)", async () => {
      const words = (await api("/api/tokens", { sentences: [sentence] })).sentences[0].map((w) => w.text);
      const hits = words.flatMap((w, i) => (w.toLowerCase() === req.word.toLowerCase() ? [i] : []));
      const next = words[hits[occurrence ?? 0] + 1];  // (a word not in the sentence: the server says so)
      return (await api("/api/views/lens", { model: req.encoder, sentence, word: req.word, occurrence, k: 5,
        track: next ? [next] : [] })).view;
    }, (view) => drawViews("fig-lens", [view]));
  }
  /** The contrast λ the neighbours are ranked with (0: by cosine); a value out of 0..1 is the server's to refuse. */
  const contrast = () => Number($("#lab-contrast").value || 0);
  /** The library's neighbours view of the word in the chosen sentence at the chosen layer, with the contrast. */
  function runNeighbours(req, n) {
    const body = withEncoder(req, { sentence: chosenSentence(req), word: req.word,
      occurrence: occurrenceIn(req), layer: Number($("#lab-layer").value), k: 10, contrast: contrast() });
    return card("neighbours", n, "Finding the nearest reference words… The first time for an encoder it encodes " +
      "20,000 reference words alone: seconds over the table, a few minutes for a transformer (cached on disk after).",
    async () => (await api("/api/views/neighbours", body)).view, (view) => drawViews("fig-neighbours", [view]));
  }
  // ---- inside the layers (issue 24): the library's sublayers, attributions and patch views ------------
  /** The word's two blocks in every layer, in the chosen sentence and the second one. */
  const runSublayers = (req, n) => card("sublayers", n, "Following the word through every block…",
    async () => (await api("/api/views/sublayers", withEncoder(req, { word: req.word,
      sentences: [chosenSentence(req), req.sentences[otherIndex()]],
      occurrences: [occurrenceIn(req), null], labels: [`S${chosenIndex()}`, `S${otherIndex()}`] }))).view,
    (view) => drawViews("fig-sublayers", [view]));
  /** Every chosen attribution method beside occlusion, in the chosen sentence. */
  const runAttributions = (req, n) => card("attributions", n, "Scoring the other words by every method…",
    async () => (await api("/api/views/attributions", withEncoder(req, { sentence: chosenSentence(req),
      word: req.word, occurrence: occurrenceIn(req), methods: $("#lab-methods").value.split(",") }))).view,
    (view) => drawViews("fig-attributions", [view]));
  /** The second sentence's state of the word patched into the chosen sentence, layer by layer. */
  const runPatch = (req, n) => card("patch", n, "Patching every layer…", async () =>
    (await api("/api/views/patch", withEncoder(req, { recipient: chosenSentence(req),
      donor: req.sentences[otherIndex()], word: req.word, occurrences: [occurrenceIn(req), null],
      at: $("#lab-patch-at").value }))).view,
  (view) => drawViews("fig-patch", [view]));

  /** The three cards inside the layers, one request after the other: the server runs them one at a
   * time on the encoder anyway (each hooks its modules), and one waiting request, not three, takes a
   * connection of the browser's six to the lab from the next run's cards. A card a newer run has
   * claimed is left to it. */
  async function insideLayers(req, n) {
    for (const [name, run] of [["sublayers", runSublayers], ["attributions", runAttributions], ["patch", runPatch]]) {
      if (mine(name, n)) await run(req, n);
    }
  }

  function initLab() {
    $("#lab-sentences").value = getParam("s", DEFAULT_SENTENCES);
    $("#lab-word").value = getParam("w", "bank");
    lab.urlLayer = getParam("l", null);  // a shared URL's layer and sentence, before the page rewrites the URL
    lab.urlSentence = getParam("as", null);
    lab.urlOther = getParam("ao", null);  // the second sentence of the blocks and patching cards
    for (const [id, key] of [["#lab-methods", "am"], ["#lab-patch-at", "pa"]]) {  // a shared URL's choices
      if ([...$(id).options].some((o) => o.value === getParam(key))) $(id).value = getParam(key);
    }
    $("#lab-contrast").value = getParam("nc", "0");  // a shared URL's contrast (the server checks it)
    const o = Number(getParam("o", null) ?? NaN);  // the occurrence clicked, in that sentence
    if (Number.isInteger(o) && o >= 0) {
      const word = $("#lab-word").value.trim().toLowerCase();
      lab.picked = { sentence: Number(lab.urlSentence || 0), word, occurrence: o };
    }
    fillEncoders($("#lab-encoder"), getParam("m", lab.status.default_model));
    $("#lab-alpha").value = getParam("a", "0");
    $("#lab-self").checked = getParam("si") !== "0";
    $("#lab-encoder").addEventListener("change", mixerOptions);
    mixerOptions();
    $("#lab-form").addEventListener("submit", (ev) => { ev.preventDefault(); runLab(); });
    $("#lab-sentences").addEventListener("input", () => {
      lab.picked = null;  // the clicked occurrence was in sentences that changed
      clearTimeout(tokenTimer);
      tokenTimer = setTimeout(showTokens, 250);
    });
    $("#lab-word").addEventListener("input", markTokens);
    /** A new layer or sentence redraws the cards that read it (as a run of its own). */
    const again = (cards) => () => {
      const n = runs.start(Object.keys(cards));
      saveLabURL();
      const req = labRequest();
      for (const run of Object.values(cards)) run(req, n);
    };
    $("#lab-layer").addEventListener("change", again({ explore: runExplore, attention: runAttention, neighbours: runNeighbours }));
    $("#lab-att-sentence").addEventListener("change",
      again({ attention: runAttention, occlusion: runOcclusion, lens: runLens, neighbours: runNeighbours,
        sublayers: runSublayers, attributions: runAttributions, patch: runPatch }));
    $("#lab-other-sentence").addEventListener("change", again({ sublayers: runSublayers, patch: runPatch }));
    $("#lab-methods").addEventListener("change", again({ attributions: runAttributions }));
    $("#lab-patch-at").addEventListener("change", again({ patch: runPatch }));
    $("#lab-contrast").addEventListener("change", again({ neighbours: runNeighbours }));
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
        d.innerHTML = `<h3><span class="dot" style="background:${COLORS[c.id % COLORS.length]}"></span>cluster ${c.id} (${c.size})</h3><ul></ul>`;
        for (const s of c.sentences) { const li = document.createElement("li"); li.textContent = s; d.querySelector("ul").appendChild(li); }
        box.appendChild(d);
      }
      const pos = r.projection.positions, pts = r.projection.points;
      const traces = r.clusters.map((c) => {
        const k = pos.map((p, j) => [p, j]).filter(([p]) => r.labels[p] === c.id);
        return { type: "scatter", mode: "markers", name: `cluster ${c.id}`, x: k.map(([, j]) => pts[j][0]), y: k.map(([, j]) => pts[j][1]),
          hovertext: k.map(([p]) => `sentence ${p}, cluster ${c.id}<br>${text(req.sentences[p], WRAP)}`),
          hoverinfo: "text", marker: { size: 12, color: COLORS[c.id % COLORS.length] } };
      });
      // the legend above the plot (below, it met the axis title)
      plot("fig-senses", traces, { xaxis: { title: { text: "PC 1" }, zeroline: false },
        yaxis: { title: { text: "PC 2" }, zeroline: false }, margin: { l: 56, r: 16, t: 40, b: 48 },
        legend: { orientation: "h", x: 0, y: 1.02, yanchor: "bottom" } });
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
      window.KnowLab.init(lab.status, fillEncoders, prepare);
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
