/* contextlens lab, 4. what layers know: the library's probes view (/api/views/probes: a probe per
 * layer over SemCor, with its control task) and CKA view (/api/views/cka: layers × layers, one encoder
 * or two), drawn by the views' own script (/views/probes.js). Every number comes from /api/. */
"use strict";
window.KnowLab = (() => {
  const { $, api, getParam, setParams, status, busy, note, drawViews, latestRuns } = window.CL;
  const runs = latestRuns();  // a card draws the answer of its latest request only

  /** One card's request: its veil while it runs (what takes long, said first), its error line. */
  async function run(name, veil, body, prepare) {
    const n = runs.start([name]), fig = `fig-${name}`, error = $(`#${name}-error`);
    error.textContent = "";
    busy(fig, true, veil);
    const t0 = performance.now();
    try {
      await prepare(body.encoder);
      if (body.other) await prepare(body.other);
      const r = await api(`/api/views/${name}`, body);
      if (!runs.owns(name, n)) return;  // a newer request of this card has started
      drawViews(fig, [r.view]);
      status(`${name === "probes" ? "Probes" : "CKA"} in ${((performance.now() - t0) / 1000).toFixed(1)} s.`);
    } catch (e) {
      if (runs.owns(name, n)) { error.textContent = e.message; note(fig, "No result: see the message above."); }
    } finally {
      if (runs.owns(name, n)) busy(fig, false);
    }
  }

  const tasks = () => [...document.querySelectorAll("#probes-tasks input:checked")].map((b) => b.value);
  function probes(prepare) {
    const body = { encoder: $("#probes-encoder").value, tasks: tasks(), probe: $("#probes-kind").value };
    if (!body.tasks.length) { $("#probes-error").textContent = "Choose at least one task."; return null; }
    setParams({ pm: body.encoder, pt: body.tasks.join(","), pk: body.probe === "linear" ? null : body.probe });
    return run("probes", `Probing ${body.tasks.join(", ")} at every layer of ${body.encoder}… The first time for ` +
      "an encoder it encodes SemCor's 40,000 words (minutes for a transformer; cached on disk after), then " +
      "it fits two probes per layer and task.", body, prepare);
  }
  function cka(prepare) {
    const body = { encoder: $("#cka-encoder").value, other: $("#cka-other").value || null,
      sample: Number($("#cka-sample").value) };
    setParams({ cm: body.encoder, co: body.other, cs: body.sample });
    return run("cka", `Comparing the layers over ${body.sample} sentences… The first time for an encoder it ` +
      "encodes them (cached on disk after).", body, prepare);
  }

  function init(labStatus, fillEncoders, prepare) {
    fillEncoders($("#probes-encoder"), getParam("pm", labStatus.default_model));
    fillEncoders($("#cka-encoder"), getParam("cm", labStatus.default_model));
    const other = $("#cka-other");
    fillEncoders(other, getParam("co"));
    const own = document.createElement("option");
    own.value = ""; own.textContent = "its own layers";
    other.prepend(own);
    other.value = labStatus.encoders.includes(getParam("co")) ? getParam("co") : "";
    if (getParam("pt")) {
      const chosen = getParam("pt").split(",");
      document.querySelectorAll("#probes-tasks input").forEach((b) => { b.checked = chosen.includes(b.value); });
    }
    if (getParam("pk")) $("#probes-kind").value = getParam("pk");
    if (getParam("cs")) $("#cka-sample").value = getParam("cs");
    $("#probes-form").addEventListener("submit", (ev) => { ev.preventDefault(); probes(prepare); });
    $("#cka-form").addEventListener("submit", (ev) => { ev.preventDefault(); cka(prepare); });
    note("fig-probes", "Choose an encoder and tasks, and press Probe.");
    note("fig-cka", "Choose an encoder (and another to compare it with), and press Compare layers.");
    if (getParam("tab") === "know") {
      if (getParam("pm")) probes(prepare);
      if (getParam("cm")) cka(prepare);
    }
  }
  return { init };
})();
