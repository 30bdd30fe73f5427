/* contextlens lab: helpers shared by the three labs (API calls, URL state, downloads). */
"use strict";
window.CL = (() => {
  const $ = (sel, root = document) => root.querySelector(sel);

  /** POST (or GET without a body) to the JSON API; a 4xx/5xx throws its message. */
  async function api(path, body) {
    const opts = body === undefined ? {} : {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
    };
    const resp = await fetch(path, opts);
    let data = null;
    try { data = await resp.json(); } catch (e) { data = null; }
    if (!resp.ok) {
      const msg = data && data.detail ? data.detail : `HTTP ${resp.status}`;
      const err = new Error(typeof msg === "string" ? msg : JSON.stringify(msg));
      err.status = resp.status;
      throw err;
    }
    return data;
  }

  // ---- URL state: the view lives in the query string, so it can be shared ----------------
  const params = new URLSearchParams(location.search);
  function getParam(name, fallback) { return params.has(name) ? params.get(name) : fallback; }
  function setParams(values) {
    for (const [k, v] of Object.entries(values)) {
      if (v === null || v === undefined || v === "") params.delete(k); else params.set(k, String(v));
    }
    history.replaceState(null, "", `${location.pathname}?${params.toString()}`);
  }

  // ---- status line ----------------------------------------------------------------------
  function status(text) { $("#status").textContent = text; }

  // ---- downloads ------------------------------------------------------------------------
  const saveBlob = (blob, filename) => window.CLViews.save(blob, filename);
  function saveJSON(obj, filename) {
    saveBlob(new Blob([JSON.stringify(obj, null, 2)], { type: "application/json" }), filename);
  }
  /** Save the figure card holding ``el`` (a <figure>: its caption, notes and figure; its download
   * buttons left out) as contextlens-<name>.svg or .png, drawn by the views' own snapshot
   * (CLViews.toSvg / toPng), so that a lab figure downloads as every view does: with its heading,
   * and with its controls (the chosen layer) as they stand. */
  async function saveFigure(el, name, format) {
    const card = el.closest("figure");
    const blob = format === "svg" ? new Blob([(await CLViews.toSvg(card)).svg], { type: "image/svg+xml" })
      : await CLViews.toPng(card);
    saveBlob(blob, `contextlens-${name}.${format}`);
  }
  /** PNG and SVG buttons in ``container`` for the Plotly figure ``figId`` and its card. The views'
   * snapshot leaves out a ``.clv-downloads`` box: these buttons are not part of the picture. */
  function figureButtons(container, figId) {
    const name = figId.replace("fig-", "");
    container.innerHTML = "";
    container.classList.add("clv-downloads");
    for (const fmt of ["png", "svg"]) {
      const b = document.createElement("button");
      b.type = "button"; b.textContent = fmt.toUpperCase(); b.dataset.format = fmt;
      b.setAttribute("aria-label", `Download the ${name} figure as ${fmt.toUpperCase()}`);
      b.addEventListener("click", async () => {
        if (!document.getElementById(figId).data) {
          status("Nothing to download yet: show a result first.");
          return;
        }
        try {
          await saveFigure(container, name, fmt);
        } catch (e) { status(`The ${name} figure could not be saved: ${e.message}`); }
      });
      container.appendChild(b);
    }
  }

  // ---- figures: a loading veil and a message inside a fixed-size box (no layout jumps) ---
  function busy(figId, on, text) {
    const div = document.getElementById(figId);
    let veil = div.parentElement.querySelector(".veil");
    if (!veil) { veil = document.createElement("div"); veil.className = "veil"; div.parentElement.appendChild(veil); }
    veil.textContent = text || "Working…";
    veil.hidden = !on;
  }
  function note(figId, text) {
    const div = document.getElementById(figId);
    if (div.data) Plotly.purge(div);
    div.innerHTML = `<p class="fig-note"></p>`;
    div.firstChild.textContent = text;
  }
  // the card's PNG and SVG buttons download a figure with its heading: not Plotly's camera (no title)
  const PLOT_CONFIG = { responsive: true, displaylogo: false, modeBarButtonsToRemove: ["toImage"] };
  const BASE_LAYOUT = { margin: { l: 56, r: 16, t: 16, b: 48 }, font: { family: "system-ui, sans-serif", size: 12 },
    paper_bgcolor: "#fff", plot_bgcolor: "#fff" };
  /** Draw in ``figId``; every axis makes room for its tick labels and title (automargin), as in the views. */
  function plot(figId, data, layout) {
    const div = document.getElementById(figId);
    if (!div.data) div.innerHTML = "";
    const full = Object.assign({}, BASE_LAYOUT, layout);
    for (const [k, v] of Object.entries(full)) {
      if (/^[xy]axis\d*$/.test(k)) full[k] = { automargin: true, ...v };
    }
    return Plotly.react(div, data, full, PLOT_CONFIG);
  }

  /** Draw the library's views (their data from the server) in the figure ``figId``, one after the other. */
  function drawViews(figId, views) {
    const box = document.getElementById(figId);
    box.innerHTML = "";
    for (const view of views) {
      const el = document.createElement("section");
      el.className = "lab-view";
      box.appendChild(el);
      window.CLViews.render(el, view);
    }
  }

  // ---- the latest run wins ----------------------------------------------------------------
  /** Runs that draw into named parts of a page (its figure cards): each run takes the next number and
   * claims the parts it will draw, and its answer draws in a part only while the run still owns it, so a
   * slower earlier answer never replaces a newer one, and a run that leaves a part alone leaves it to
   * the run that claimed it. E.g. after ``a = runs.start(["x", "y"]); b = runs.start(["y"])``,
   * ``runs.owns("x", a)`` and ``runs.owns("y", b)`` are true, ``runs.owns("y", a)`` false. */
  function latestRuns() {
    let last = 0;
    const owner = {};  // part -> the run it draws for
    return {
      start(parts) {
        last += 1;
        for (const part of parts) owner[part] = last;
        return last;
      },
      owns: (part, n) => owner[part] === n,
    };
  }

  // ---- model loading: ask the server to load, poll /api/status, show progress -----------
  async function ensureLoaded(name) {
    let st = await api("/api/status");
    const res = st.resources[name];
    if (!res || res.state === "ready") return;
    await api("/api/models/load", { name });
    for (;;) {
      st = await api("/api/status");
      const r = st.resources[name];
      if (r.state === "ready") { status(`${name} loaded in ${r.seconds.toFixed(1)} s.`); return; }
      if (r.state === "failed") throw new Error(`loading ${name} failed: ${r.error}`);
      status(`Loading ${name}… ${(r.seconds || 0).toFixed(1)} s (once per server)`);
      await new Promise((ok) => setTimeout(ok, 400));
    }
  }

  return { $, api, getParam, setParams, status, saveBlob, saveJSON, saveFigure, figureButtons, busy, note,
    plot, drawViews, latestRuns, ensureLoaded };
})();
