"""Word-vector extraction speed: contextlens vs the loops people write with transformers.

The first N sentences of the Brown corpus; every word's last-layer vector,

(a) with contextlens (``TransformerEncoder(layers=-1, attention=False)``: word-aligned,
    pooled vectors);
(b) the straightforward loop: one sentence at a time,
    ``model(**tokenizer(s, return_tensors="pt"), output_hidden_states=True)``, unsorted;
(c) length-sorted batches of 64 through plain transformers (what sentence-transformers
    does), keeping ``last_hidden_state``;

same model, same process, same threads. (b) and (c) stop at piece vectors (no word
alignment or pooling), so they are lower bounds of what their users pay. Reports
words/s (median of ``--repeats`` passes over the whole set), the ratios (median over
repeats of the paired ratio: the machine may be shared, so each repeat runs the three
methods back to back, in rotating order), the peak resident memory each method adds
(contextlens keeps every word's vectors; the baselines drop theirs), and
``fraction_of_matmul_peak``: the weight FLOPs contextlens achieves (2 × transformer-layer
parameters × pieces / s) over a float32 ``torch.mm`` of 2048² matrices measured right
before and after that pass (median over repeats).

Then (issue 15) every layer of every word, pooled to words, by the engine candidates and
their peers (see ``extraction_engines.py``), each section its own paired, rotating
repeats:

- ``idle``: contextlens (``TransformerEncoder(layers=None, attention=False)`` with its
  default engine, ``auto``: onnxruntime where installed) against ONNX Runtime used
  directly, plain transformers sorted batches pooled to words, sentence-transformers
  token embeddings (every layer) pooled to words, the torch engine
  (``engine="torch"``) and the torch candidate on one thread;
  ``fraction_of_matmul_peak`` against a ``torch.mm`` measured after each pass. The
  contenders run on torch's own default threads (as their users get them), contextlens
  and its torch engine on the torch threads contextlens chooses (``contextlens.threads``:
  fewer on a busy machine; ``engine_settings.contextlens_threads`` in the JSON). The
  machine is shared: "idle" means no competitor of ours, not an idle machine (the load
  average at the start and the end of each section is in the JSON);
- ``contended``: the same while two CPU-bound competitor processes (single-threaded
  float32 matmul loops, like another model job) run for the whole section;
- ``sweep``: piece cap, batch size, sorting, threads and spinning, one at a time from
  the current settings, for both engines, idle and contended (``--sweep-sentences``);
- ``bf16``: ``TransformerEncoder(engine="torch", precision="bf16")`` against fp32 (speed
  and per-layer cosine of every word vector); ONNX Runtime's CPU provider is checked for
  a bf16 MatMul.

    python benchmarks/extraction.py [--model minilm] [--sentences 2000] [--repeats 3] [--json]
        [--sections base,idle,contended,sweep,bf16]
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import extraction_engines as ee

ROOT = Path(__file__).resolve().parent.parent


def brown_sentences(n: int) -> list[str]:
    data = Path(os.environ.get("CONTEXTLENS_DATA") or ROOT.parent / "shared" / "data")
    path = data / "corpora" / "brown_plain.txt"
    if not path.is_file():
        sys.exit(f"{path} is missing: set CONTEXTLENS_DATA to the shared data folder")
    with open(path, encoding="utf-8") as f:
        lines = [line.strip() for line in f if line.strip()]
    return lines[:n]


class PeakRSS:
    """The highest resident set size (bytes) seen while the block runs, sampled every 5 ms."""

    def __init__(self):
        self.page = os.sysconf("SC_PAGE_SIZE")

    def rss(self) -> int:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * self.page

    def __enter__(self):
        self.base = self.peak = self.rss()
        self.running = True
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()
        return self

    def _sample(self):
        while self.running:
            self.peak = max(self.peak, self.rss())
            time.sleep(0.005)

    def __exit__(self, *exc):
        self.running = False
        self.thread.join()
        self.peak = max(self.peak, self.rss())

    @property
    def added_mb(self) -> float:
        return (self.peak - self.base) / 2**20


def matmul_gflops(torch, n: int = 2048, repeats: int = 5) -> float:
    a, b = torch.randn(n, n), torch.randn(n, n)
    torch.mm(a, b)  # warm up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        torch.mm(a, b)
        times.append(time.perf_counter() - start)
    return 2 * n**3 / statistics.median(times) / 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--sentences", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32, help="contextlens batch size (its default: 32)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--sections", default="base,idle,contended,sweep,bf16",
                        help="comma-separated: base (last layer, issue 3), idle, contended, sweep, bf16")
    parser.add_argument("--sweep-sentences", type=int, default=500)
    parser.add_argument("--cap", type=int, default=1024, help="candidates' padded pieces per batch (0: none)")
    parser.add_argument("--candidate-batch", type=int, default=32, help="candidates' sequences per batch")
    parser.add_argument("--spinning", action="store_true", help="ONNX Runtime threads spin for work")
    args = parser.parse_args()
    sections = set(args.sections.split(","))

    import torch
    import transformers

    sentences = brown_sentences(args.sentences)
    load_start = round(os.getloadavg()[0], 2)
    result = (base_section(args, torch, transformers, sentences) if "base" in sections
              else {"model": args.model})
    result.update(sentences=len(sentences), load_average_start=load_start)
    result.update(engine_sections(args, sections, sentences))
    if args.json:
        print(json.dumps(result))
        return
    print(json.dumps(result, indent=1))


def base_section(args, torch, transformers, sentences) -> dict:
    """Issue 3's comparison: the last layer of every word (the keys kept from then)."""
    from contextlens.encoders import hooks
    from contextlens.encoders.transformer import TransformerEncoder
    from contextlens.text import tokenize

    n_words = sum(len(tokenize(s)) for s in sentences)
    encoder = TransformerEncoder(args.model, layers=-1, attention=False, batch_size=args.batch_size)
    tokenizer = encoder.tokenizer
    model = transformers.AutoModel.from_pretrained(encoder.path, dtype=torch.float32).eval()
    n_pieces = sum(len(ids) for ids in tokenizer(sentences)["input_ids"])
    blocks = hooks.layer_list(encoder.hf_model, encoder.n_model_layers)[1]
    layer_params = sum(p.numel() for p in blocks.parameters())

    def contextlens_run():
        encs = encoder.encode(sentences)
        assert sum(len(e.words) for e in encs) == n_words

    def naive_run():
        with torch.no_grad():
            for s in sentences:
                out = model(**tokenizer(s, return_tensors="pt"), output_hidden_states=True)
                out.hidden_states[-1].numpy()

    def sorted_batches_run():
        order = sorted(sentences, key=len)
        with torch.no_grad():
            for i in range(0, len(order), 64):
                batch = tokenizer(order[i : i + 64], padding=True, return_tensors="pt")
                model(**batch).last_hidden_state.numpy()

    encoder.encode(sentences[:64])  # warm up every path once
    with torch.no_grad():
        model(**tokenizer(sentences[:64], padding=True, return_tensors="pt"))
    runs = {"contextlens": contextlens_run, "naive_loop": naive_run, "sorted_batches": sorted_batches_run}
    names = list(runs)
    seconds = {name: [] for name in runs}
    memory = {name: 0.0 for name in runs}
    fractions, peaks = [], []
    load_before = os.getloadavg()[0]
    for r in range(args.repeats):
        # the machine may be shared: rotate the order, and pair each contextlens pass with
        # the matmul peak measured just before and after it (the better of the two)
        for name in names[r % 3 :] + names[: r % 3]:
            before = matmul_gflops(torch) if name == "contextlens" else 0.0
            with PeakRSS() as peak:
                start = time.perf_counter()
                runs[name]()
                seconds[name].append(time.perf_counter() - start)
            memory[name] = max(memory[name], peak.added_mb)
            if name == "contextlens":
                peaks.append(max(before, matmul_gflops(torch)))
                fractions.append(2 * layer_params * n_pieces / seconds[name][-1] / 1e9 / peaks[-1])
    median = {name: statistics.median(t) for name, t in seconds.items()}
    words_s = {name: n_words / t for name, t in median.items()}
    paired = {other: statistics.median(o / c for o, c in zip(seconds[other], seconds["contextlens"]))
              for other in ("naive_loop", "sorted_batches")}
    peak_gflops = statistics.median(peaks)
    achieved = 2 * layer_params * n_pieces / median["contextlens"] / 1e9
    import platform

    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")),
               platform.processor())
    result = {
        "model": args.model, "sentences": len(sentences), "words": n_words, "pieces": n_pieces,
        "threads": torch.get_num_threads(), "cpu": cpu, "repeats": args.repeats,
        "seconds": {k: round(v, 3) for k, v in median.items()},
        "words_per_s": {k: round(v, 1) for k, v in words_s.items()},
        "ratio_vs_naive": round(paired["naive_loop"], 2),
        "ratio_vs_sorted_batch": round(paired["sorted_batches"], 2),
        "peak_memory_mb": {k: round(v, 1) for k, v in memory.items()},
        "matmul_gflops": round(peak_gflops, 1), "achieved_weight_gflops": round(achieved, 1),
        "fraction_of_matmul_peak": round(statistics.median(fractions), 3),
        "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)],
    }
    log = sys.stderr
    print(f"{args.model}: {len(sentences)} Brown sentences, {n_words:,} words, {n_pieces:,} pieces, "
          f"{result['threads']} threads ({cpu})", file=log)
    for name in runs:
        print(f"  {name:15s} {words_s[name]:9.1f} words/s  {median[name]:7.2f} s  +{memory[name]:.0f} MB",
              file=log)
    print(f"  contextlens vs naive loop: {result['ratio_vs_naive']}x, vs sorted batches: "
          f"{result['ratio_vs_sorted_batch']}x; {result['fraction_of_matmul_peak']:.2f} of matmul peak",
          file=log)
    return result


COMPETITOR = """import os, sys
import numpy as np
a = np.random.default_rng(0).random((384, 384), dtype=np.float32)
while os.getppid() == int(sys.argv[1]):  # ends with the benchmark, however that ends
    a = a @ a
    a /= np.abs(a).max()
"""


@contextlib.contextmanager
def competitors(n: int):
    """``n`` CPU-bound processes (single-threaded float32 matmul loops) while the block runs."""
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    procs = [subprocess.Popen([sys.executable, "-c", COMPETITOR, str(os.getpid())], env=env)
             for _ in range(n)]
    try:
        time.sleep(1.0)
        yield
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(10)


def ort_bf16_matmul() -> str:
    """Whether onnxruntime's CPU provider runs a bf16 MatMul ("yes", or its error)."""
    import onnxruntime as ort
    from onnx import TensorProto, helper

    info = [helper.make_tensor_value_info(n, TensorProto.BFLOAT16, [2, 2]) for n in "abc"]
    graph = helper.make_graph([helper.make_node("MatMul", ["a", "b"], ["c"])], "g", info[:2], info[2:])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    try:
        ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        return "yes"
    except Exception as e:  # NOT_IMPLEMENTED
        return str(e).split(":")[-1].strip()


def engine_sections(args, sections: set[str], sentences: list[str]) -> dict:
    """Every layer of every word pooled to words: contextlens (default engine), its peers,
    the torch engine; idle, contended, the settings sweep and bf16."""
    import onnxruntime as ort
    import torch
    from sentence_transformers import SentenceTransformer

    from contextlens.encoders import hooks
    from contextlens.encoders.onnx_engine import OnnxRunner
    from contextlens.encoders.transformer import TransformerEncoder

    wanted = sections & {"idle", "contended", "sweep", "bf16"}
    if not wanted:
        return {}
    threads = torch.get_num_threads()  # torch's own default: the contenders run as their users get them
    encoder = TransformerEncoder(args.model, layers=None, attention=False, engine="torch")
    default = TransformerEncoder(args.model, layers=None, attention=False)  # engine "auto"
    chosen = torch.get_num_threads()  # contextlens's torch threads (contextlens.threads: fewer when busy)
    torch.set_num_threads(threads)
    model, tokenizer, pad = encoder.hf_model, encoder.tokenizer, encoder._pad
    runners = {(t, spin): OnnxRunner(model, threads=t, spinning=spin)
               for t, spin in {(threads, args.spinning), (threads, not args.spinning), (1, args.spinning)}}
    runner = runners[(threads, args.spinning)]
    session = runner.session()
    direct = ort.InferenceSession(str(runner.paths[False] / "model.onnx"), providers=["CPUExecutionProvider"])
    st = SentenceTransformer(str(encoder.path), device="cpu")
    st[0].auto_model.config.output_hidden_states = True
    n_pieces = sum(len(ids) for ids in tokenizer(sentences)["input_ids"])
    blocks = hooks.layer_list(encoder.hf_model, encoder.n_model_layers)[1]
    layer_params = sum(p.numel() for p in blocks.parameters())
    batching = ee.Batching(cap=args.cap or None, batch_size=args.candidate_batch)

    def torch_forward(ids, mask):
        return model(input_ids=ids, attention_mask=mask, output_hidden_states=True).hidden_states

    def onnx_forward(r):
        return lambda ids, mask: [torch.from_numpy(a) for a in r.run(ids, mask).hidden_states]

    def candidate(forward, texts, how=batching):
        return lambda: ee.run_candidate(torch, forward, tokenizer, texts, how, pad)

    def with_threads(n, fn):
        def run():
            torch.set_num_threads(n)
            try:
                return fn()
            finally:
                torch.set_num_threads(threads)
        return run

    out = {"engine_settings": {"default_engine": default.engine, "threads": threads,
                               "spinning": args.spinning,
                               "contextlens_threads": {"torch": chosen, "onnxruntime": default._runner.threads
                                                       if default._runner else None},
                               "candidate_batching": batching.label(),
                               "graph": str(runner.paths[False]),
                               "session_threads": session.get_session_options().intra_op_num_threads}}

    def compare(label: str) -> dict:
        load_start = round(os.getloadavg()[0], 2)
        make = {
            "contextlens": lambda texts: with_threads(chosen, lambda: default.encode(texts))(),
            "torch_engine": lambda texts: with_threads(chosen, lambda: encoder.encode(texts))(),
            # contextlens as it ran before it chose its torch threads (torch's default: every core)
            "contextlens_default_threads": lambda texts: default.encode(texts),
            "ort_direct": lambda texts: ee.run_ort_direct(torch, direct, tokenizer, texts),
            "hf_sorted_pooled": lambda texts: ee.run_hf_sorted_pooled(torch, model, tokenizer, texts),
            "st_tokens": lambda texts: ee.run_st_tokens(torch, st, texts),
            "torch_candidate_1_thread": lambda texts: with_threads(1, candidate(torch_forward, texts))(),
        }
        for run in make.values():  # warm up: first calls allocate arenas, load kernels
            run(sentences[:64])
        runs = {name: functools.partial(run, sentences) for name, run in make.items()}
        peaks = {}
        seconds = ee.paired(runs, args.repeats,
                            between=lambda name: peaks.setdefault(name, []).append(matmul_gflops(torch)))

        def fraction(name):
            return round(statistics.median(2 * layer_params * n_pieces / s / 1e9 / p
                                           for s, p in zip(seconds[name], peaks[name])), 3)

        load = round(os.getloadavg()[0], 2)
        res = {"ratio_vs_ort_direct": ee.ratio(seconds, "ort_direct", "contextlens"),
               "ratio_vs_hf_sorted_pooled": ee.ratio(seconds, "hf_sorted_pooled", "contextlens"),
               "ratio_vs_st_tokens": ee.ratio(seconds, "st_tokens", "contextlens"),
               "ratio_vs_torch_engine": ee.ratio(seconds, "torch_engine", "contextlens"),
               "ratio_vs_torch_candidate_1_thread": ee.ratio(seconds,
                                                             "torch_candidate_1_thread", "contextlens"),
               "ratio_vs_default_threads": ee.ratio(seconds, "contextlens_default_threads", "contextlens"),
               "fraction_of_matmul_peak": fraction("contextlens"),
               "matmul_gflops": round(statistics.median(peaks["contextlens"]), 1),
               "seconds": {k: round(statistics.median(v), 2) for k, v in seconds.items()},
               "torch_engine": {"ratio_vs_ort_direct": ee.ratio(seconds, "ort_direct", "torch_engine"),
                                "ratio_vs_hf_sorted_pooled": ee.ratio(seconds,
                                                                      "hf_sorted_pooled", "torch_engine"),
                                "ratio_vs_st_tokens": ee.ratio(seconds, "st_tokens", "torch_engine"),
                                "fraction_of_matmul_peak": fraction("torch_engine")},
               "load_average_start": load_start, "load_average_end": load}
        print(f"  {label}: {res}", file=sys.stderr)
        return res

    def sweep(label: str) -> dict:
        texts = sentences[: args.sweep_sentences]
        variants = {
            "base": batching,
            "cap=none": ee.Batching(None, batching.batch_size),
            "cap=4096 batch=64": ee.Batching(4096, 64),
            "cap=none batch=128": ee.Batching(None, 128),
            "unsorted": ee.Batching(batching.cap, batching.batch_size, sort=False),
        }
        runs = {}
        for name, how in variants.items():
            runs[f"onnx {name}"] = candidate(onnx_forward(runner), texts, how)
            runs[f"torch {name}"] = candidate(torch_forward, texts, how)
        runs["onnx threads=1"] = candidate(onnx_forward(runners[(1, args.spinning)]), texts)
        runs["onnx spinning=" + ("off" if args.spinning else "on")] = candidate(
            onnx_forward(runners[(threads, not args.spinning)]), texts)
        runs["torch threads=1"] = with_threads(1, candidate(torch_forward, texts))
        for warm in ("onnx base", "torch base", "onnx threads=1", "onnx spinning=on", "onnx spinning=off"):
            if warm in runs:
                runs[warm]()
        seconds = ee.paired(runs, max(2, args.repeats - 1))
        res = {name: ee.ratio(seconds, name.split()[0] + " base", name) for name in runs}
        res["onnx_base_vs_torch_base"] = ee.ratio(seconds, "torch base", "onnx base")
        res["load_average_end"] = round(os.getloadavg()[0], 2)
        print(f"  sweep {label}: {res}", file=sys.stderr)
        return res

    if "idle" in sections:
        out["idle"] = compare("idle")
    if "contended" in sections:
        with competitors(2):
            out["contended"] = compare("contended")
    if "sweep" in sections:
        out["sweep"] = {"idle": sweep("idle")}
        with competitors(2):
            out["sweep"]["contended"] = sweep("contended")
    if "bf16" in sections:
        half = TransformerEncoder(args.model, layers=None, attention=False, engine="torch", precision="bf16")
        fp32, bf16 = [], []

        def run_fp32():
            fp32[:] = [e.layers for e in encoder.encode(sentences)]  # each (layers + 1, words, dim)

        def run_bf16():
            bf16[:] = [e.layers for e in half.encode(sentences)]

        run_fp32(), run_bf16()  # warm up (bf16: measures its fidelity on the first texts)
        load_start = round(os.getloadavg()[0], 2)
        seconds = ee.paired({"fp32": run_fp32, "bf16": run_bf16}, args.repeats)
        mean, low = ee.layer_cosines(fp32, bf16)
        flags = open("/proc/cpuinfo").read()
        out["bf16"] = {"ratio_vs_fp32": ee.ratio(seconds, "fp32", "bf16"), "min_layer_mean_cosine": min(mean),
                       "layer_mean_cosine": mean, "layer_min_cosine": low,
                       "engine": "TransformerEncoder(engine='torch', precision='bf16'): torch autocast",
                       "encoder_fidelity": [f._asdict() for f in half.fidelity],
                       "load_average": [load_start, round(os.getloadavg()[0], 2)],
                       "cpu_flags": sorted({f for f in ("avx512_bf16", "amx_bf16", "avx512f") if f in flags}),
                       "torch_mkldnn_bf16": bool(torch.ops.mkldnn._is_mkldnn_bf16_supported()),
                       "onnxruntime_cpu_bf16_matmul": ort_bf16_matmul()}
        print(f"  bf16: {out['bf16']}", file=sys.stderr)
    return out


if __name__ == "__main__":
    main()
