"""Long texts through a transformer: word attention per window, and the cost of length.

(a) **aggregation**: the word attention of one 512-piece window of a 600-word text
    (all-MiniLM-L6-v2's alignment of the text, random attention rows of its shape: 6
    layers x 12 heads), the words the window yields as rows:

    - contextlens: ``window_attention`` (sparse products, one layer-head at a time,
      float32, rows and columns of the window's own words);
    - previous contextlens: dense float64 ``query @ attention @ key`` over every word of
      the text (what a 10,000-word text turned into a 54 GiB array);
    - dense window: the same product in float32 BLAS, restricted to the window's words
      (the strongest plain-numpy peer);
    - Clark et al. (2019) loop: per word, the mean of its pieces' rows, then per word the
      sum of its pieces' columns (``get_word_word_attention`` of "What Does BERT Look
      At?"), over the window's words;

    each repeat runs the four back to back in rotating order; medians of the per-repeat
    ratios to contextlens.
(b) **encode**: ``TransformerEncoder("minilm")`` on a 600-word text with attention and
    without (paired, rotating), so the ratio is what word attention adds to the model;
(c) **10,000 words**: in a fresh process each (model loaded and warmed up first), the time
    and the peak RSS added (``VmHWM`` reset through ``/proc/self/clear_refs``) of
    ``compare`` (two usages: only their windows run), of the refusal of word attention
    (before the model runs), and of every word's vectors (``attention=False``) for 2,500,
    5,000 and 10,000 words (time and memory should grow linearly).

    python benchmarks/long_text.py [--repeats 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import statistics
import time

WORDS = "the bank of the river was steep and muddy after the long rain so we sat on its edge".split()


def text_of(n: int) -> str:
    return " ".join(WORDS[i % len(WORDS)] for i in range(n))


def window_case(n_words: int = 600, seed: int = 0):
    """The alignment of a minilm-tokenised text, its first window, and random attention."""
    import numpy as np
    import transformers

    from contextlens.encoders import models
    from contextlens.encoders.alignment import align_pieces, assign_windows, plan_windows
    from contextlens.text import tokenize

    tok = transformers.AutoTokenizer.from_pretrained(models.resolve("minilm"))
    text = text_of(n_words)
    enc = tok(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
    al = align_pieces(text, tokenize(text), enc["offset_mapping"])
    windows = plan_windows(al, 510)
    owner = assign_windows(windows, al)
    a, b = windows[0]
    window = al.restrict(a, b, before=1, after=1)
    rows = [w for w, k in enumerate(owner) if k == 0]
    rng = np.random.default_rng(seed)
    t = b - a + 2
    att = rng.random((6, 12, t, t), dtype=np.float32)
    att /= att.sum(-1, keepdims=True)  # (layers, heads, pieces, pieces)
    return al, window, rows, att


def clark_loop(att, window, rows, cols):
    """Clark et al. (2019): rows averaged over a word's pieces, columns summed."""
    import numpy as np

    by_row = np.stack([att[..., list(window.word_pieces[w]), :].mean(-2) for w in rows], -2)
    return np.stack([by_row[..., list(window.word_pieces[w])].sum(-1) for w in cols], -1)


def aggregation(repeats: int) -> dict:
    import numpy as np

    from contextlens.encoders.alignment import attention_matrices, window_attention

    al, window, rows, att = window_case()
    cols = sorted({w for ws in window.piece_words for w in ws})

    def contextlens():
        return window_attention(att, window, rows)

    def previous():  # main before this change: every word of the text, float64
        q, k = attention_matrices(window)
        return q @ att.astype(np.float64) @ k

    def dense_window():
        q, k = attention_matrices(window, rows, cols)
        return q.astype(np.float32) @ att @ k.astype(np.float32)

    def clark():
        return clark_loop(att, window, rows, cols)

    ours = contextlens()[0]
    np.testing.assert_allclose(dense_window()[..., :-1], ours, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(clark(), ours, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(previous()[..., rows, :][..., cols], ours, rtol=1e-4, atol=1e-6)
    contenders = {"contextlens": contextlens, "previous": previous, "dense_window": dense_window,
                  "clark_loop": clark}
    times: dict[str, list[float]] = {k: [] for k in contenders}
    names = list(contenders)
    for r in range(repeats):
        for name in names[r % len(names):] + names[: r % len(names)]:
            start = time.perf_counter()
            contenders[name]()
            times[name].append(time.perf_counter() - start)
    ratios = {k: statistics.median(t / c for t, c in zip(times[k], times["contextlens"]))
              for k in names if k != "contextlens"}
    q, _ = attention_matrices(window)
    return {"words_in_text": len(al.word_pieces), "pieces_in_window": att.shape[-1], "rows": len(rows),
            "cols": len(cols), "median_seconds": {k: round(statistics.median(v), 4)
                                                  for k, v in times.items()},
            "ratio_to_contextlens": {k: round(v, 1) for k, v in ratios.items()},
            "previous_bytes_at_10000_words": 8 * 6 * 12 * 10_002 * 10_003,
            "previous_bytes_here": int(q.shape[0] ** 2 * 6 * 12 * 8)}


def encode(repeats: int) -> dict:
    from contextlens.encoders.transformer import TransformerEncoder

    text = text_of(600)
    with_att = TransformerEncoder("minilm")
    without = TransformerEncoder("minilm", attention=False)
    with_att.encode([text]), without.encode([text])  # warm up
    times = {"attention": [], "no_attention": []}
    for r in range(repeats):
        order = [("attention", with_att), ("no_attention", without)][:: 1 if r % 2 == 0 else -1]
        for name, enc in order:
            start = time.perf_counter()
            out = enc.encode([text])[0]
            times[name].append(time.perf_counter() - start)
    ratio = statistics.median(a / b for a, b in zip(times["attention"], times["no_attention"]))
    return {"words": len(out.words), "windows": len(out.meta.get("windows", [0])),
            "median_seconds": {k: round(statistics.median(v), 2) for k, v in times.items()},
            "attention_over_no_attention": round(ratio, 2)}


def _long_child(kind: str, n_words: int, queue) -> None:
    from contextlens.analysis.incontext import compare
    from contextlens.encoders.transformer import TransformerEncoder
    from contextlens.errors import InputError

    text = text_of(n_words)
    enc = TransformerEncoder("minilm", attention=kind != "vectors")
    enc.encode(["warm up the bank"])
    base = _rss_mb("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:  # reset the peak (VmHWM) to the current RSS
        f.write("5")
    start = time.perf_counter()
    note = ""
    if kind == "compare":
        r = compare(enc, text, "the bank", "bank", occurrences=(0, None))
        note = f"last-layer cosine {r['cosine_by_layer'][-1]:.3f}"
    elif kind == "vectors":
        note = f"{len(enc.encode([text])[0].words)} words"
    else:
        try:
            enc.encode([text])
        except InputError as e:
            note = str(e)
    queue.put({"seconds": round(time.perf_counter() - start, 2), "note": note,
               "rss_before_mb": round(base), "peak_rss_added_mb": round(_rss_mb("VmHWM") - base)})


def _rss_mb(field: str) -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":")) / 1024


def ten_thousand() -> dict:
    ctx = mp.get_context("spawn")
    out = {}
    for kind, n_words in (("compare", 10_000), ("refused", 10_000), ("vectors", 2_500), ("vectors", 5_000),
                          ("vectors", 10_000)):
        queue = ctx.Queue()
        p = ctx.Process(target=_long_child, args=(kind, n_words, queue))
        p.start()
        out[f"{kind}_{n_words}"] = queue.get()
        p.join()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sections", default="aggregation,encode,long")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    result: dict = {"command": f"python benchmarks/long_text.py --repeats {args.repeats}"}
    sections = args.sections.split(",")
    if "aggregation" in sections:
        result["aggregation"] = aggregation(args.repeats)
    if "encode" in sections:
        result["encode_600_words"] = encode(args.repeats)
    if "long" in sections:
        result["ten_thousand_words"] = ten_thousand()
    result["load_average"] = [round(load, 2), round(os.getloadavg()[0], 2)]
    print(json.dumps(result, indent=None if args.json else 1, ensure_ascii=False))


if __name__ == "__main__":
    main()
