/* contextlens lab, 4. your corpus: the usages of a word in the lab's usage index
 * (contextlens lab --index PATH) nearest its usage in a sentence, or nearest a stored usage.
 * Every row comes from /api/index/search or /api/index/like. */
"use strict";
window.CorpusLab = (() => {
  const { $, api, getParam, setParams, status, saveJSON, ensureLoaded, latestRuns } = window.CL;
  const st = { info: null, result: null, pending: 0 };
  const runs = latestRuns();  // a slower earlier search never replaces the answer of a later one

  const basename = (path) => String(path).split(/[\\/]/).filter(Boolean).pop() || String(path);
  function size(bytes) {
    if (bytes >= 2 ** 30) return `${(bytes / 2 ** 30).toFixed(1)} GiB`;
    if (bytes >= 2 ** 20) return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
    return `${Math.max(1, Math.round(bytes / 1024))} KiB`;
  }

  /** The sentence as text nodes, its [start, end) span in a <mark> (the library's offsets, in code
   * points: CLViews.spanParts maps them, as for every view). */
  function marked(sentence, start, end) {
    const [before, inside, after] = window.CLViews.spanParts(sentence, start, end);
    const frag = document.createDocumentFragment();
    const mark = document.createElement("mark");
    mark.textContent = inside;
    frag.append(before, mark, after);
    return frag;
  }

  function request() {
    const occ = $("#index-occurrence").value.trim();
    return { sentence: $("#index-sentence").value.trim(), word: $("#index-word").value,
      k: Number($("#index-k").value), layer: Number($("#index-layer").value),
      occurrence: occ === "" ? null : Number(occ) };
  }
  function saveURL(extra) {
    const r = request();
    setParams({ is: r.sentence, iw: r.word, ik: r.k, il: r.layer, io: r.occurrence, ...extra });
  }

  async function run(path, body, describe) {
    $("#index-error").textContent = "";
    const button = $("#index-run"), n = runs.start(["results"]);
    st.pending += 1;
    button.disabled = true;
    try {
      if (st.info.encoder) await ensureLoaded(st.info.encoder);
      else status(`Encoding with ${st.info.stats.model} (loaded once, on the first search)…`);
      const r = await api(path, body);
      if (!runs.owns("results", n)) return;
      st.result = r;
      show(r, describe(r));
      status(`${r.results.length} usages of '${r.word}' at layer ${r.layer} (${r.model}).`);
    } catch (e) {
      if (runs.owns("results", n)) $("#index-error").textContent = e.message;
    } finally {
      st.pending -= 1;
      button.disabled = st.pending > 0;
    }
  }
  function search() {
    const req = request();
    saveURL({ iu: null });
    if (!req.sentence) { $("#index-error").textContent = "Type a sentence that uses the word."; return null; }
    return run("/api/index/search", req, (r) => ["Usages nearest ", `'${r.query.form}'`, " in: "]);
  }
  function like(uid) {
    const req = request();
    saveURL({ iu: uid });
    return run("/api/index/like", { usage_id: uid, k: req.k, layer: req.layer },
      (r) => ["Usages like ", `'${r.query.form}'`, ` (usage ${r.query.usage_id}, ${basename(r.query.doc)}) in: `]);
  }

  function show(r, intro) {
    const q = $("#index-query");
    q.textContent = "";
    const [a, form, b] = intro;
    const strong = document.createElement("b");
    strong.textContent = form;
    q.append(a, strong, b, marked(r.query.sentence, r.query.start, r.query.end));
    const body = $("#index-results tbody");
    body.textContent = "";
    r.results.forEach((u, i) => {
      const tr = document.createElement("tr");
      const cell = (cls, content) => {
        const td = document.createElement("td");
        td.className = cls;
        if (typeof content === "string") td.textContent = content; else td.append(content);
        tr.appendChild(td);
        return td;
      };
      cell("rank", String(i + 1));
      const sim = document.createElement("span");
      sim.className = "sim";
      const val = document.createElement("span");
      val.className = "bar-val"; val.textContent = u.similarity.toFixed(3);
      const bar = document.createElement("span");
      bar.className = "bar"; bar.setAttribute("aria-hidden", "true");
      const fill = document.createElement("span");
      fill.className = "fill a"; fill.style.width = `${(Math.max(0, Math.min(1, u.similarity)) * 100).toFixed(1)}%`;
      bar.appendChild(fill);
      sim.append(val, bar);
      cell("similarity", sim).dataset.value = String(u.similarity);
      cell("sentence", marked(u.sentence, u.start, u.end));
      cell("doc", `${basename(u.doc)}, sentence ${u.sentence_no}`).title = u.doc;
      const code = document.createElement("code");
      code.textContent = u.usage_id;
      cell("uid", code);
      const more = document.createElement("button");
      more.type = "button"; more.className = "more"; more.textContent = "More like this";
      more.setAttribute("aria-label", `More usages like the one ranked ${i + 1}`);
      more.addEventListener("click", async () => { await like(u.usage_id); $("#index-query").focus(); });
      cell("actions", more);
      tr.dataset.usageId = u.usage_id;
      body.appendChild(tr);
    });
    if (!r.results.length) {
      const tr = document.createElement("tr");
      tr.innerHTML = `<td colspan="6" class="none">No other usage of this word in the index.</td>`;
      body.appendChild(tr);
    }
  }

  function init(info) {
    st.info = info;
    const s = info.stats;
    const words = Object.entries(s.words);
    const about = `${basename(s.db)}: ${s.usages} usages of ${words.length} words, ${s.model}, ` +
      `layer${s.layers.length > 1 ? "s" : ""} ${s.layers.join(", ")}, ${size(s.size_bytes)} on disk` +
      (s.complete ? "." : ` (the build is not complete: ${s.sentences_done} sentences so far).`);
    $("#index-about").textContent = about;
    const sel = $("#index-word");
    sel.textContent = "";
    for (const [w, n] of words) {
      const o = document.createElement("option");
      o.value = w; o.textContent = `${w} (${n})`;
      sel.appendChild(o);
    }
    if (words.some(([w]) => w === getParam("iw"))) sel.value = getParam("iw");
    const layers = $("#index-layer");
    layers.textContent = "";
    for (const k of s.layers) {
      const o = document.createElement("option");
      o.value = String(k); o.textContent = k === 0 ? "0 (embedding row)" : String(k);
      layers.appendChild(o);
    }
    layers.value = s.layers.map(String).includes(getParam("il")) ? getParam("il") : String(s.layers[s.layers.length - 1]);
    $("#index-k").max = String(info.max_results);
    $("#index-k").value = getParam("ik", "10");
    $("#index-occurrence").value = getParam("io", "");
    $("#index-sentence").value = getParam("is", "");
    $("#index-sentence").placeholder = words.length ? `A sentence using '${words[0][0]}'…` : "";
    $("#index-form").addEventListener("submit", (ev) => { ev.preventDefault(); search(); });
    $("#index-sentence").addEventListener("keydown", (ev) => {  // Enter searches, Shift+Enter breaks the line
      if (ev.key === "Enter" && !ev.shiftKey) { ev.preventDefault(); search(); }
    });
    $("#index-json").addEventListener("click", () => saveJSON(st.result || {}, "contextlens-usages.json"));
  }
  /** Re-run the view the URL describes (a search or a "more like this"). */
  function restore() {
    if (getParam("iu")) return like(getParam("iu"));
    if (getParam("is")) return search();
    return null;
  }

  return { init, restore, search, like, state: st };
})();
