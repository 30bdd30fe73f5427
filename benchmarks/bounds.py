"""Peak memory and time of each entry point AT its bound (``contextlens.bounds``).

Each case runs in a fresh process: the model (or table) is loaded and warmed up on a
small input first, then the peak resident memory is reset (``/proc/self/clear_refs``) and
the entry point runs at its bound (the largest input it accepts). Reported per case: the
seconds it took and the CPU seconds of its process (every thread; with one torch thread
what it would take on an idle machine, whatever the load), the peak RSS it added above the
loaded model (``VmHWM`` minus the RSS before), and what it returned. The goal the bounds keep
(issue 21): at most 2 GB above the loaded model and about a minute on this 2-core machine. The
load average is reported beside the figures: on a shared machine the seconds grow with it; the
memory does not.
Run it with ``CONTEXTLENS_THREADS=1`` on a busy machine: two torch threads fighting over
busy cores made SEAT's sentence vectors 7x slower than one (load 14: 48 s against 7.4 s for
1,000 sentences), and the lens 5x; the threads used are reported.

    python benchmarks/bounds.py [--only CASE[,CASE...]] [--json]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import time

BASE = "We sat on the bank of the river and watched the boats go by while the children played. "
TRACK_WORDS = ("money water boat river city house tree dog cat friend time day year way man world life hand "
               "part child eye woman place work week case point group problem fact night home room mother "
               "father school book story music game water light door side road car street town country state "
               "war law power team family line end name word door food road bed girl boy air money head face "
               "body heart mind love idea art war king horse fire sea sun moon star rain snow wind field "
               "farm bird fish garden wall window floor table chair paper letter church army ship bank shop "
               "market office doctor teacher student price cost job plan voice song film news").split()


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


def _lab():
    """A lab app (its defaults: minilm, glove-6b-50d, one torch thread) and a client."""
    from fastapi.testclient import TestClient

    from contextlens.web import create_app

    client = TestClient(create_app(), base_url="http://127.0.0.1")
    client.__enter__()  # runs the app's start-up; the process ends with the case
    return client


def _post(client, route: str, body: dict) -> dict:
    r = client.post(route, json=body)
    if r.status_code != 200:
        raise RuntimeError(f"{route}: {r.status_code} {r.text[:300]}")
    return r.json()


FILLER = "and watched the boats go by while the children played in the warm evening light "


def _lab_sentences(n: int, chars: int) -> list[str]:
    """``n`` different sentences of at most ``chars`` characters, each holding 'bank' once."""
    return [(f"Sentence {i}: we sat on the bank " + FILLER * 20)[:chars].rsplit(" ", 1)[0] for i in range(n)]


def case_lab_lens() -> tuple:
    """POST /api/views/lens at the lab's limits: 1,000 characters, 20 tracked words, k 50 (smollm2)."""
    from contextlens.web.limits import CAPS

    client = _lab()
    _post(client, "/api/views/lens", {"model": "smollm2", "sentence": "We sat on the bank", "track": ["of"]})
    body = {"model": "smollm2", "sentence": (BASE * 12)[: CAPS.max_chars], "k": CAPS.max_neighbours,
            "track": list(dict.fromkeys(TRACK_WORDS))[: CAPS.max_probes]}
    return lambda: _post(client, "/api/views/lens", body), lambda r: f"view {r['view'].get('kind', '')}"


def case_lab_layers() -> tuple:
    """POST /api/layers at the lab's limits: 64 sentences of 1,000 characters (2,016 pairs), minilm."""
    from contextlens.web.limits import CAPS

    client = _lab()
    _post(client, "/api/layers", {"encoder": "minilm", "sentences": ["a bank", "the bank"], "word": "bank"})
    body = {"encoder": "minilm",
            "sentences": _lab_sentences(CAPS.max_sentences, CAPS.max_chars), "word": "bank"}
    return lambda: _post(client, "/api/layers", body), lambda r: f"{len(r['pairs'])} pairs"


def case_lab_encode() -> tuple:
    """POST /api/encode at the lab's limits: 64 sentences of 1,000 characters, minilm (whole encodings, kept)."""  # noqa: E501 (the case's "what" in the output)
    from contextlens.web.limits import CAPS

    client = _lab()
    _post(client, "/api/encode", {"encoder": "minilm", "sentences": ["a bank"]})
    body = {"encoder": "minilm", "sentences": _lab_sentences(CAPS.max_sentences, CAPS.max_chars)}
    return lambda: _post(client, "/api/encode", body), lambda r: f"{len(r['sentences'])} sentences"


def case_lab_explore() -> tuple:
    """POST /api/explore at the lab's limits: 64 sentences of 1,000 characters, minilm, t-SNE."""
    from contextlens.web.limits import CAPS

    client = _lab()
    _post(client, "/api/explore", {"encoder": "minilm", "sentences": ["a bank", "the bank"], "word": "bank"})
    body = {"encoder": "minilm", "sentences": _lab_sentences(CAPS.max_sentences, CAPS.max_chars),
            "word": "bank", "projection": "tsne"}
    return lambda: _post(client, "/api/explore", body), lambda r: f"{r['words'][0]['n_usages']} usages"


def _lab_longest_sentence(route: str, said) -> tuple:
    """POST ``route`` with smollm2 on the longest sentence the lab takes (warmed up on a short one
    first); ``said`` tells what the answer holds."""
    from contextlens.web.limits import CAPS

    client = _lab()
    _post(client, route, {"encoder": "smollm2", "sentence": "We sat on the bank", "word": "bank"})
    sentence = " ".join((FILLER * 8).split()[: CAPS.max_attention_words - 1] + ["bank"])
    body = {"encoder": "smollm2", "sentence": sentence, "word": "bank"}
    return lambda: _post(client, route, body), said


def case_lab_occlusion() -> tuple:
    """POST /api/views/occlusion at the lab's limits: an 80-word sentence, smollm2."""
    return _lab_longest_sentence("/api/views/occlusion", lambda r: f"{len(r['view']['others']) + 1} words")


def case_lab_attention_views() -> tuple:
    """POST /api/views/attention at the lab's limits: an 80-word sentence, smollm2 (head, model, neuron views)."""  # noqa: E501 (the case's "what" in the output)
    return _lab_longest_sentence("/api/views/attention", lambda r: f"{len(r['views'])} views")


def case_explore_bound() -> tuple:
    """explore at MAX_ENCODING_BYTES with minilm: sentences of 49,932 words in all, 'bank' in 1 in 25."""
    from contextlens import bounds
    from contextlens.analysis.explore import explore
    from contextlens.encoders.registry import make_encoder

    enc = make_encoder(model="minilm")
    explore(enc, ["a bank", "the bank"], "bank")
    limit = bounds.encoding_word_limit(len(enc.layer_ids), enc.dim)
    sentences = [f"in {i} we sat by the {'bank' if i % 25 == 0 else 'shore'} of the river and watched the "
                 "boats go"
                 for i in range(limit // 16)]
    return (lambda: explore(enc, sentences, "bank", missing="skip"),
            lambda r: f"{len(sentences)} sentences, {r['words'][0]['n_usages']} usages")


def case_geometry_bound() -> tuple:
    """geometry at MAX_ENCODING_BYTES with minilm: 49,932 words of Brown sentences, 1,000,000 pairs."""
    from contextlens import bounds
    from contextlens.analysis.geometry import geometry
    from contextlens.corpus.reading import iter_lines
    from contextlens.encoders.registry import make_encoder
    from contextlens.text import tokenize

    enc = make_encoder(model="minilm")
    limit = bounds.encoding_word_limit(len(enc.layer_ids), enc.dim)
    sentences, n = [], 0
    for line in iter_lines(os.path.join(os.environ.get("CONTEXTLENS_DATA", ""),
                                        "corpora", "brown_plain.txt")):
        k = len(tokenize(line))
        if n + k > limit:
            break
        sentences.append(line)
        n += k
    return (lambda: geometry(enc, sentences, ["the", "of", "bank"], n_pairs=1_000_000),
            lambda r: f"{r['n_sentences']} sentences, {n} words, {r['anisotropy_pairs']} pairs")


def case_occlusion_bound() -> tuple:
    """occlusion at MAX_ENCODING_BYTES with minilm: the largest text (its words squared under the bound)."""
    from contextlens import bounds
    from contextlens.analysis.occlusion import occlusion_vs_attention
    from contextlens.encoders.registry import make_encoder

    enc = make_encoder(model="minilm")
    occlusion_vs_attention(enc, "We sat on the bank", "bank")
    n = int(bounds.encoding_word_limit(len(enc.layer_ids), enc.dim) ** 0.5)
    text = " ".join((FILLER * 30).split()[: n - 1] + ["bank"])
    return lambda: occlusion_vs_attention(enc, text, "bank"), lambda r: f"{len(r['others']) + 1} words"


def _big_sets(n: int, dim: int = 300):
    import numpy as np

    from contextlens.bias import WordSets
    from contextlens.vectors import EmbeddingTable

    words = [f"w{i}" for i in range(4 * n)]
    table = EmbeddingTable(words,
                           np.random.default_rng(0).normal(size=(4 * n, dim)).astype(np.float32), name="r")
    return table, WordSets("big", *(tuple(words[k * n:(k + 1) * n]) for k in range(4)))


def case_weat_sets() -> tuple:
    """WEAT with 10,000 words a set (the audit's input): the default partitions fitted to MAX_PERMUTATION_CELLS."""  # noqa: E501 (the case's "what" in the output)
    from contextlens.bias import weat_table

    table, sets = _big_sets(10_000)
    return lambda: weat_table(table, sets), lambda r: f"{r.permutations:,} partitions, p = {r.p_value:.3g}"


def case_ceat_sets() -> tuple:
    """CEAT with 2,000 words a set, 5 contexts of 768 numbers each: default draws fitted to MAX_CEAT_CELLS."""
    import numpy as np

    from contextlens.bias import ceat

    _, sets = _big_sets(2000, dim=2)
    rng = np.random.default_rng(0)
    contexts = {w: rng.normal(size=(5, 768)) for key in "XYAB" for w in getattr(sets, key)}
    return lambda: ceat(contexts, sets, model="r", layer=1), lambda r: f"{r.samples:,} draws"


def case_seat_bound() -> tuple:
    """SEAT with minilm at MAX_ENCODING_BYTES: sets of nouns whose template sentences come to the bound."""
    from contextlens import bounds
    from contextlens.bias import WordSets, seat
    from contextlens.bias.seat import sentences_for
    from contextlens.encoders.registry import make_encoder
    from contextlens.text import tokenize

    enc = make_encoder(model="minilm")
    limit = bounds.encoding_word_limit(len(enc.layer_ids), enc.dim)
    per_word = sum(len(tokenize(s)) for s in sentences_for("rose"))  # every noun of this form alike
    n = limit // per_word // 4
    sets = WordSets("nouns", *(tuple(f"thing{k}x{i}" for i in range(n)) for k in range(4)))
    return (lambda: seat(enc, sets),
            lambda r: f"{r.n_x + r.n_y + r.n_a + r.n_b:,} sentences, d = {r.effect_size:.3f}")


def case_tsne_bound() -> tuple:
    """A t-SNE projection at MAX_EMBED_POINTS points of 384 numbers."""
    import numpy as np

    from contextlens import bounds
    from contextlens.analysis.projection import project

    x = np.random.default_rng(0).normal(size=(bounds.MAX_EMBED_POINTS, 384))
    project(x[:20], "tsne")
    return lambda: project(x, "tsne"), lambda r: f"{len(r)} points"


def case_probe_stack() -> tuple:
    """probe pos with SmolLM2 over SemCor's 40,000 words (98 % of MAX_STACK_BYTES), read from the cache."""
    from contextlens import bounds
    from contextlens.analysis.probing import TEST_ROWS, TRAIN_ROWS, probe
    from contextlens.analysis.probing.run import PROBE_WORK
    from contextlens.evaluation.runner import make_task_encoder

    enc = make_task_encoder("smollm2")
    limit = bounds.stack_word_limit([len(enc.layer_ids) * enc.dim * 2 + enc.dim * PROBE_WORK])
    return (lambda: probe(enc, "pos"),
            lambda r: f"{TRAIN_ROWS + TEST_ROWS:,} words of {limit:,}; {len(r.rows)} layers, "
                      f"best {max(x.accuracy for x in r.rows):.3f}")


def case_cka_lab() -> tuple:
    """The lab's largest CKA request: SmolLM2 x MPNet over 500 corpus sentences, read from the cache."""
    from contextlens.analysis.cka import DEFAULT_SENTENCES, corpus_sample, layer_cka
    from contextlens.datasets import resolve_data_dir
    from contextlens.evaluation.runner import make_task_encoder

    a, b = make_task_encoder("smollm2"), make_task_encoder("mpnet")
    texts = corpus_sample(resolve_data_dir(None), DEFAULT_SENTENCES, seed=0)
    return (lambda: layer_cka(a, texts, other=b),
            lambda r: f"{r.n_words:,} tokens, {len(r.matrix)} x {len(r.matrix[0])} layers")


CASES = {name[len("case_"):]: fn for name, fn in globals().items() if name.startswith("case_")}


def _child(name: str, queue) -> None:
    try:
        run, describe = CASES[name]()
        base = _rss_mb("VmRSS")
        with open("/proc/self/clear_refs", "w") as f:  # reset the peak (VmHWM) to the current RSS
            f.write("5")
        start, cpu = time.perf_counter(), time.process_time()
        result = run()
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        queue.put({"case": name, "what": CASES[name].__doc__.strip(), "seconds": round(seconds, 2),
                   "cpu_seconds": round(cpu, 2),
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
    out["threads"] = os.environ.get("CONTEXTLENS_THREADS", "all cores")
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
        r = rows[-1]
        line = f"{name:18} " + (r["error"] if "error" in r else
                                f"{r['seconds']:8.1f} s ({r['cpu_seconds']:.1f} s of CPU) "
                                f"{r['peak_rss_added_mb']:7,} MB added  "
                                f"(load {r['load_average']})  {r['result']}")
        print(line, file=sys.stderr if args.json else sys.stdout, flush=True)  # each case as it ends
    if args.json:
        values = {k: getattr(bounds, k) for k in bounds.__all__ if isinstance(getattr(bounds, k), int)}
        print(json.dumps({"goal": "at most 2 GB above the loaded model and about a minute per entry point",
                          "bounds": values, "cases": rows}, indent=1))


if __name__ == "__main__":
    main()
