"""Peak memory and time of each entry point AT its bound (``contextlens.bounds``).

Each case runs in a fresh process: the model (or table) is loaded and warmed up on a
small input first, then the peak resident memory is reset (``/proc/self/clear_refs``) and
the entry point runs at its bound (the largest input it accepts). Reported per case: the
seconds it took, the peak RSS it added above the loaded model (``VmHWM`` minus the RSS
before), and what it returned. The goal the bounds keep (issue 21): at most 2 GB above the
loaded model and about a minute on this 2-core machine. The load average is reported
beside the figures: on a shared machine the seconds grow with it; the memory does not.

    python benchmarks/bounds.py [--only CASE[,CASE...]] [--json]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import time

BASE = "We sat on the bank of the river and watched the boats go by while the children played. "
TRACK_WORDS = ("money water boat river city house tree dog cat friend time day year way man world life hand part "
               "child eye woman place work week case point group problem fact night home room mother father "
               "school book story music game water light door side road car street town country state war law "
               "power team family line end name word door food road bed girl boy air money head face body heart "
               "mind love idea art war king horse fire sea sun moon star rain snow wind field farm bird fish "
               "garden wall window floor table chair paper letter church army ship bank shop market office "
               "doctor teacher student price cost job plan voice song film news").split()


def _rss_mb(field: str) -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":")) / 1024


def _text_of_pieces(lm, n: int) -> str:
    """A text of ``BASE`` repeated, cut to at most ``n`` pieces of ``lm``'s tokenizer."""
    text = BASE * (n // 10 + 1)
    ids = lm.tokenizer(text, add_special_tokens=True)["input_ids"]
    while len(ids) > n:
        text = text[: int(len(text) * n / len(ids)) - 1]
        ids = lm.tokenizer(text, add_special_tokens=True)["input_ids"]
    return text.rstrip()


# -- the cases: each returns (what runs at the bound, a note on its result) -------------------
def case_lens_lab() -> tuple:
    """The lab's largest lens request: a 1,000-character sentence, 20 tracked words, k 50."""
    from contextlens.encoders.lm import LanguageModel
    from contextlens.web.limits import CAPS

    lm = LanguageModel("smollm2")
    lm.lens("We sat on the bank", k=3, track=["of"])
    text = (BASE * 12)[: CAPS.max_chars]
    track = list(dict.fromkeys(TRACK_WORDS))[: CAPS.max_probes]
    return (lambda: lm.lens(text, k=CAPS.max_neighbours, track=track),
            lambda r: f"{len(r.layers)} layers, {len(r.layers[0].tracked)} tracked, k {len(r.layers[0].top)}")


def case_lens_tracked() -> tuple:
    """``lens --track`` at its bound: MAX_TRACKED words after a short context."""
    from contextlens import bounds
    from contextlens.encoders.lm import LanguageModel

    lm = LanguageModel("smollm2")
    lm.lens("We sat on the bank", k=3, track=["of"])
    track = list(dict.fromkeys(TRACK_WORDS))
    assert len(track) >= bounds.MAX_TRACKED, len(track)
    track = track[: bounds.MAX_TRACKED]
    return (lambda: lm.lens("We sat on the bank of the", k=5, track=track),
            lambda r: f"{len(r.layers[0].tracked)} tracked over {len(r.layers)} layers")


def case_predict_pieces() -> tuple:
    """``predict`` on a causal model at its bound: a context of MAX_LM_PIECES pieces."""
    from contextlens import bounds
    from contextlens.encoders.lm import LanguageModel

    lm = LanguageModel("smollm2")
    lm.predict("We sat on the bank of the", k=3)
    text = _text_of_pieces(lm, bounds.MAX_LM_PIECES)
    return lambda: lm.predict(text, k=10), lambda r: f"{len(r.predictions)} words, exact {r.exact}"


def case_lens_pieces() -> tuple:
    """``lens`` at its bound: a context of MAX_LM_PIECES pieces, MAX_TRACKED // 10 tracked words."""
    from contextlens import bounds
    from contextlens.encoders.lm import LanguageModel

    lm = LanguageModel("smollm2")
    lm.lens("We sat on the bank", k=3, track=["of"])
    text = _text_of_pieces(lm, bounds.MAX_LM_PIECES)
    track = list(dict.fromkeys(TRACK_WORDS))[: bounds.MAX_TRACKED // 10]
    return (lambda: lm.lens(text, k=10, track=track),
            lambda r: f"{len(r.layers)} layers, {len(r.layers[0].tracked)} tracked")


CASES = {name[len("case_"):]: fn for name, fn in globals().items() if name.startswith("case_")}


def _child(name: str, queue) -> None:
    try:
        run, describe = CASES[name]()
        base = _rss_mb("VmRSS")
        with open("/proc/self/clear_refs", "w") as f:  # reset the peak (VmHWM) to the current RSS
            f.write("5")
        start = time.perf_counter()
        result = run()
        seconds = time.perf_counter() - start
        queue.put({"case": name, "what": CASES[name].__doc__.strip(), "seconds": round(seconds, 2),
                   "rss_before_mb": round(base), "peak_rss_added_mb": round(_rss_mb("VmHWM") - base),
                   "result": describe(result)})
    except Exception as e:  # reported, not hidden: a case that fails is a finding
        queue.put({"case": name, "error": f"{type(e).__name__}: {e}"})


def run_case(name: str) -> dict:
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    p = ctx.Process(target=_child, args=(name, queue))
    p.start()
    out = queue.get()
    p.join()
    out["load_average"] = round(os.getloadavg()[0], 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated cases: " + ", ".join(CASES))
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    names = args.only.split(",") if args.only else list(CASES)
    unknown = [n for n in names if n not in CASES]
    if unknown:
        parser.error(f"unknown case(s) {', '.join(unknown)}; cases: {', '.join(CASES)}")
    from contextlens import bounds

    rows = []
    for name in names:
        rows.append(run_case(name))
        if not args.json:
            r = rows[-1]
            print(f"{name:18} " + (r["error"] if "error" in r else
                  f"{r['seconds']:8.1f} s {r['peak_rss_added_mb']:7,} MB added  (load {r['load_average']})  "
                  f"{r['result']}"), flush=True)
    if args.json:
        print(json.dumps({"goal": "at most 2 GB above the loaded model and about a minute per entry point",
                          "bounds": {k: getattr(bounds, k) for k in bounds.__all__}, "cases": rows}, indent=1))


if __name__ == "__main__":
    main()
