"""Every bound of work and memory (``contextlens.bounds``), run just over it under a memory cap.

Each case runs in a fresh process: what it needs is loaded first, then the address space is
capped at 2 GiB above what the process holds (``RLIMIT_AS``: the goal of issue 21 is no entry
point taking more than 2 GB above the loaded model) and the entry point runs just over its
bound. A bound read before the work answers with one LimitError line naming it; a bound kept
by working in pieces lets the call finish under the cap (where it once asked for 13.7 GiB or
23 GB), with the size of any sample it chose stated in the result.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from contextlens import bounds
from tests.missing import need

CAP = 2 << 30

PRELUDE = textwrap.dedent('''
    import json, resource, sys
    from contextlens.errors import ContextLensError

    def cap():
        """Cap the address space at 2 GiB above what this process holds now."""
        with open("/proc/self/status") as f:
            size = next(int(line.split()[1]) for line in f if line.startswith("VmSize:")) * 1024
        resource.setrlimit(resource.RLIMIT_AS, ({cap} + size, resource.RLIM_INFINITY))

    def report(fn):
        try:
            out = fn()
        except ContextLensError as e:
            print(json.dumps({{"error": type(e).__name__, "message": str(e)}}))
        except MemoryError as e:
            print(json.dumps({{"memory_error": str(e)}}))
        else:
            print(json.dumps({{"result": out}}))
''').format(cap=CAP)


def capped(setup: str, *calls: str, timeout: float = 900) -> dict | list[dict]:
    """Run ``setup``, cap the memory, then each of ``calls`` (expressions) in turn, in one
    process; the JSON report of each (one call: its report)."""
    code = PRELUDE + textwrap.dedent(setup) + "\ncap()\n" + "".join(f"report(lambda: {c})\n" for c in calls)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    reports = [json.loads(line) for line in done.stdout.strip().splitlines()[-len(calls):]]
    return reports[0] if len(calls) == 1 else reports


def one_line_limit(report: dict, *parts: str) -> str:
    assert "error" in report, report
    message = report["message"]
    assert report["error"] == "LimitError" and "\n" not in message, report
    for part in parts:
        assert part in message, (part, message)
    return message


# ---- language models: predict and the logit lens ----------------------------------------------
@pytest.fixture(scope="module")
def long_causal(tmp_path_factory):
    """A tiny Llama causal LM that holds 8,192 positions (as SmolLM2 does), byte-level BPE."""
    torch = need("torch")
    transformers = need("transformers")
    from tests.integration.test_transformer_tiny import bpe_tokenizer

    torch.manual_seed(0)
    tok = bpe_tokenizer(bos=True)
    tok.model_max_length = 8192
    config = transformers.LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=37,
                                      num_hidden_layers=3, num_attention_heads=2, num_key_value_heads=1,
                                      max_position_embeddings=8192, bos_token_id=0, pad_token_id=1,
                                      initializer_range=0.5, tie_word_embeddings=False)
    path = tmp_path_factory.mktemp("long-causal") / "causal"
    transformers.LlamaForCausalLM(config).save_pretrained(path)
    tok.save_pretrained(path)
    return path


LM_SETUP = '''
from contextlens.encoders.lm import LanguageModel
from contextlens import bounds
lm = LanguageModel({path!r})
lm.lens("We sat on the bank", k=3, track=["of"])
words = "money water boat river city house tree dog cat friend".split()
track = [w + str(i) for i in range(bounds.MAX_TRACKED + 1) for w in words][: bounds.MAX_TRACKED + 1]
base = "We sat on the bank of the river and watched the boats go by. "
stream = (base * 2000).split()
def pieces(n):
    """The longest text of whole words of at most n pieces (n - 3 at least)."""
    lo, hi = 1, len(stream)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if len(lm.tokenizer(" ".join(stream[:mid]))["input_ids"]) <= n else (lo, mid - 1)
    return " ".join(stream[:lo])
def lens(text, track):
    r = lm.lens(text, k=5, track=track)
    return {{"layers": len(r.layers), "tracked": len(r.layers[-1].tracked)}}
'''


def test_lens_tracks_at_most_max_tracked_words(long_causal):
    # before: the lens ran one sequence per tracked word and kept every layer's full
    # distribution at every position of each (1,000 words with SmolLM2: 23 GB, killed)
    setup = LM_SETUP.format(path=str(long_causal))
    over, at = capped(setup, "lens('We sat on the bank of the', track)",
                      "lens('We sat on the bank of the', track[:-1])")
    one_line_limit(over, f"{bounds.MAX_TRACKED + 1:,} words", f"limit of {bounds.MAX_TRACKED:,} words",
                   "run the lens again")
    assert at == {"result": {"layers": 4, "tracked": bounds.MAX_TRACKED}}


def test_predict_and_lens_read_at_most_max_lm_pieces(long_causal):
    # before: a 20,000-word text allocated 10 GB and ended in a traceback; 1,000 words took 162 s
    setup = LM_SETUP.format(path=str(long_causal))
    n = bounds.MAX_LM_PIECES
    *over, predicted, lens = capped(setup, f"lm.predict(pieces({n + 4}), k=3).position",
                                    f"lens(pieces({n + 4}), ['money'])",
                                    f"lm.predict(pieces({n}), k=3).position", f"lens(pieces({n}), words)")
    for report in over:
        one_line_limit(report, f"limit of {n:,} pieces", "shorter text")
    assert "result" in predicted and lens == {"result": {"layers": 4, "tracked": 10}}


def test_a_models_own_maximum_is_the_bound_below_max_lm_pieces(tmp_path_factory):
    from tests.integration.tiny_models import tiny_lms

    root = tiny_lms(tmp_path_factory.mktemp("tiny-lm"))  # 64 positions
    setup = LM_SETUP.format(path=str(root / "causal"))
    one_line_limit(capped(setup, "lm.predict(pieces(68), k=3).position"), "limit of 64 pieces",
                   "reads at most 64")


def test_the_lens_cli_names_the_tracked_bound(long_causal):
    from typer.testing import CliRunner

    from contextlens.cli import app

    args = ["lens", "We sat on the bank of the", "-m", str(long_causal)]
    for i in range(bounds.MAX_TRACKED + 1):
        args += ["--track", f"money{i}"]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 2
    assert f"limit of {bounds.MAX_TRACKED:,} words" in r.output and len(r.output.strip().splitlines()) == 1


# ---- association tests ------------------------------------------------------------------------
WEAT_SETUP = '''
import numpy as np
from contextlens import bounds
from contextlens.bias import WordSets, weat_table, ceat
from contextlens.bias.stats import default_permutations
from contextlens.bias.ceat import default_samples
from contextlens.vectors import EmbeddingTable
rng = np.random.default_rng(0)
n = 10_000
words = [f"w{i}" for i in range(4 * n)]
table = EmbeddingTable(words, rng.normal(size=(4 * n, 50)).astype(np.float32), name="random")
sets = WordSets("big", *(tuple(words[k * n:(k + 1) * n]) for k in range(4)))
def weat():
    r = weat_table(table, sets)
    return {"permutations": r.permutations, "exact": r.exact, "default": default_permutations(2 * n)}
contexts = {w: rng.normal(size=(2, 64)) for w in words[: 4 * 2000]}
small = WordSets("ceat", *(tuple(words[k * 2000:(k + 1) * 2000]) for k in range(4)))
def ceat_run():
    r = ceat(contexts, small, model="random", layer=1)
    return {"samples": r.samples, "default": default_samples(8000, 64)}
'''


def test_weat_and_ceat_on_large_sets_run_in_blocks_under_the_cap():
    # before: WEAT's sampled p-value drew one (100,000, |X ∪ Y|) array of keys (14.9 GiB here)
    # and its mean cosines one (|X ∪ Y|, |A|) matrix; CEAT drew 10,000 x 8,000 context indices
    # in a Python loop, and each block of 500 draws gathered (500, 8,000, 64) float64 vectors
    weat, ceat = capped(WEAT_SETUP, "weat()", "ceat_run()")
    assert (
        weat["result"]["permutations"] == weat["result"]["default"] == bounds.MAX_PERMUTATION_CELLS // 20_000
    )
    assert weat["result"]["permutations"] < 100_000 and not weat["result"]["exact"]
    assert ceat["result"]["samples"] == ceat["result"]["default"] == bounds.MAX_CEAT_CELLS // (8000 * 64)


def test_the_weat_cli_states_how_many_partitions_it_drew(tmp_path):
    from typer.testing import CliRunner

    from contextlens.cli import app

    sets = tmp_path / "sets.json"
    n = 3000  # |X ∪ Y| = 6,000 > MAX_PERMUTATION_CELLS / 100,000
    words = [f"w{i}" for i in range(4 * n)]
    sets.write_text(json.dumps({"name": "big", **{k: words[j * n:(j + 1) * n] for j,
                                                  k in enumerate("XYAB")}}))
    import numpy as np

    from contextlens.vectors import EmbeddingTable

    table = tmp_path / "t.npz"
    EmbeddingTable(words, np.random.default_rng(0).normal(size=(4 * n, 8))).save(table)
    r = CliRunner().invoke(app, ["bias", "weat", "--sets", str(sets), "--vectors", str(table), "--json"])
    assert r.exit_code == 0, r.output
    row = json.loads(r.output)["rows"][0]
    assert row["permutations"] == bounds.MAX_PERMUTATION_CELLS // (2 * n) and row["exact"] is False


# ---- encoding many sentences ------------------------------------------------------------------
ENCODING_SETUP = '''
import numpy as np
from contextlens import bounds
from contextlens.analysis.explore import explore
from contextlens.analysis.geometry import geometry
from contextlens.analysis.layers import layer_divergence, usage_divergence
from contextlens.encoders.static import StaticEncoder
from contextlens.vectors import EmbeddingTable
limit = bounds.encoding_word_limit(1, 4096)  # 32,768 words of 4,096 float32 numbers
vocab = ["bank", "river", "money", "the", "of", "a", "sat"] + [f"w{i}" for i in range(limit // 4 + 1)]
table = EmbeddingTable(vocab, np.random.default_rng(0).normal(size=(len(vocab), 4096)).astype(np.float32),
                       name="wide")
enc = StaticEncoder(table)
def sentences(words, every=1):
    """Sentences of 5 words, each other than the others, bank in one in ``every``: ``words`` in all."""
    out = [f"w{i} sat of the {'river' if i % every else 'bank'}" for i in range(words // 5)]
    if words % 5:
        out.append(" ".join("w0 river of the bank".split()[-(words % 5):]))
    return out
def run_explore(words, every=1):
    r = explore(enc, sentences(words, every), "bank", missing="skip")
    return {"usages": r["words"][0]["n_usages"]}
'''


def test_explore_encodes_at_most_max_encoding_bytes_of_words():
    over, at = capped(ENCODING_SETUP, "run_explore(limit + 1)", "run_explore(limit, every=10)")
    one_line_limit(over, "32,769 words", "limit of 32,768 words", "static: 1 layer x 4096 numbers",
                   "give fewer or shorter sentences")
    limit = bounds.encoding_word_limit(1, 4096)
    usages = len(range(0, limit // 5, 10)) + (limit % 5 > 0)  # bank in one sentence in 10, and in the last
    assert at == {"result": {"usages": usages}}


def test_explore_holds_the_cosine_matrix_of_at_most_max_matrix_usages():
    n = bounds.MAX_MATRIX_USAGES
    over, at = capped(ENCODING_SETUP, f"run_explore({5 * n + 5})", f"run_explore({5 * n})")
    one_line_limit(over, f"'bank' has {n + 1:,} usages", f"limit of {n:,} usages", "square of the usages")
    assert at == {"result": {"usages": n}}


def test_geometry_and_layer_divergence_read_the_same_bound():
    pairs = "list(zip(sentences(limit + 1)[0::2], sentences(limit + 1)[1::2]))"  # every sentence in a pair
    for report in capped(ENCODING_SETUP, "geometry(enc, sentences(limit + 1), 'bank')",
                         f"layer_divergence(enc, {pairs}, 'bank')",
                         "usage_divergence(enc, sentences(limit + 1, every=5000), 'bank', missing='skip')"):
        one_line_limit(report, "32,769 words", "limit of 32,768 words")


def test_usage_divergence_compares_at_most_max_usage_pairs():
    """/api/layers (the lab's layers card) compares every two usages: their number grows as
    the square of the usages, each pair a line of the chart with its two sentences."""
    n = 1 + int((2 * bounds.MAX_USAGE_PAIRS) ** 0.5)  # usages whose pairs are just over the bound
    while n * (n - 1) // 2 <= bounds.MAX_USAGE_PAIRS:
        n += 1
    over, at = capped(ENCODING_SETUP, f"usage_divergence(enc, sentences({5 * n}), 'bank')",
                      f"len(usage_divergence(enc, sentences({5 * (n - 1)}), 'bank')['pairs'])")
    one_line_limit(over, f"'bank' has {n:,} usages here, {n * (n - 1) // 2:,} pairs",
                   f"limit of {bounds.MAX_USAGE_PAIRS:,} pairs", "occurrence=0")
    assert at == {"result": (n - 1) * (n - 2) // 2}


def test_every_other_reader_of_many_words_reads_the_encoding_bound():
    """Each entry point that encodes texts given to it refuses just over MAX_ENCODING_BYTES,
    before encoding: contextualize, attention, compare-sentences, rank, SEAT, CEAT's corpus
    contexts, the usages of senses."""
    setup = ENCODING_SETUP + '''
from contextlens.analysis.attribution import attribute
from contextlens.analysis.incontext import contextualize
from contextlens.analysis.ranking import rank_pairs
from contextlens.analysis.sentences import compare_sentences
from contextlens.analysis.usages import collect_usages
from contextlens.bias import WordSets, seat
from contextlens.bias.contexts import contexts_from_corpus
from contextlens.bias.seat import sentences_for
from contextlens.text import tokenize
long = " ".join(["the"] * limit + ["bank"])  # limit + 1 words
half = " ".join(["the"] * (limit // 2) + ["bank"])  # two of them: limit + 2 words
template = "the " * 1000 + "{word}"  # 80 words of 40 pairs: 80,080 words
pairs = [(f"w{2 * i}", f"w{2 * i + 1}") for i in range(40)]
per_word = sum(len(tokenize(s)) for s in sentences_for("w0"))
m = limit // per_word // 4 + 1  # words a set whose template sentences come to just over the bound
sets = WordSets("wide", *(tuple(f"w{k * m + i}" for i in range(m)) for k in range(4)))
lines = [f"w{i} " + "the " * 1000 + "bank" for i in range(40)]  # 40 contexts of 1,002 words
'''
    reports = capped(setup, "contextualize(enc, long, 'bank')", "attribute(enc, long, 'bank')",
                     "compare_sentences(enc, half, half)", "rank_pairs(enc, pairs, template=template)",
                     "seat(enc, sets)", "contexts_from_corpus(enc, lines, ['bank'], per_word=40)",
                     "collect_usages(enc, [long], 'bank')")
    for report in reports:
        one_line_limit(report, "limit of 32,768 words", "static: 1 layer x 4096 numbers")


def test_occlusion_counts_the_text_once_per_word():
    setup = ENCODING_SETUP + '''
from contextlens.analysis.occlusion import occlusion_vs_attention
from contextlens.encoders.mixing import SelfAttention
att = SelfAttention(table)
side = int((bounds.encoding_word_limit(2, 4096)) ** 0.5) + 1  # words whose square is over the bound
text = " ".join(["the"] * (side - 1) + ["bank"])
'''
    one_line_limit(capped(setup, "occlusion_vs_attention(att, text, 'bank')"),
                   "-word text (encoded once per word)",
                   "limit of 16,384 words", "grows as the square of the words")


# ---- every layer of many words held at once: probes and CKA ------------------------------------
@pytest.fixture(scope="module")
def wide_semcor(tmp_path_factory):
    """A SemCor of 1,200 train and 320 test words (four tagged words a sentence)."""
    from tests.tiny_semcor import sentence, write_semcor

    four = sentence("the", "bank", "ran", "red", "fast")
    return write_semcor(tmp_path_factory.mktemp("semcor"), {"brown1/br-a01": [four] * 300,
                                                            "brown2/br-e01": [four] * 80})


STACK_SETUP = '''
import numpy as np
from contextlens import bounds
from contextlens.analysis.cka import layer_cka
from contextlens.analysis.probing import probe
from contextlens.analysis.probing.run import PROBE_WORK
from contextlens.encoders.static import StaticEncoder
from contextlens.vectors import EmbeddingTable
def wide(dim):
    words = ["the", "bank", "ran", "red", "fast", "river", "sat", "of"]
    rng = np.random.default_rng(0)
    return StaticEncoder(EmbeddingTable(words, rng.normal(size=(len(words), dim)).astype(np.float32),
                                        name="wide"))
probed = wide(65_536)
limit = bounds.MAX_STACK_BYTES // (65_536 * (4 + PROBE_WORK))  # float32 table rows and one layer's work
def run_probe(train_rows):
    r = probe(probed, "pos", data_dir={data!r}, train_rows=train_rows, use_cache=False)
    return [r.rows[0].n_train, r.rows[0].n_test]
compared = wide(2048)
np.ones((512, 2048)).T @ np.ones((512, 2048))  # BLAS allocates its buffers before the cap
tokens = bounds.MAX_STACK_BYTES // (2048 * 4)
def sentences(n):
    """Sentences of 8 tokens, ``n`` tokens in all."""
    words = "the bank ran by the red river fast".split() * (n // 8 + 1)
    return [" ".join(words[i:i + 8]) for i in range(0, n, 8)]
def run_cka(n):
    r = layer_cka(compared, sentences(n), use_cache=False)
    return [r.n_words, r.matrix[0][0]]
'''


def test_probe_holds_at_most_max_stack_bytes(wide_semcor):
    # before: nothing bounded the words x layers x dim a probe holds (SmolLM2's 40,000 words:
    # 1.4 GB of float16, then a float32 and two float64 copies of each layer); the words of a
    # 65,536-wide table just over the bound ran out of memory under the cap
    setup = STACK_SETUP.format(data=str(wide_semcor))
    over, at = capped(setup, "run_probe(1200)", "run_probe(limit - 320)")
    limit = bounds.MAX_STACK_BYTES // (65_536 * 22)
    one_line_limit(over, "the probe's train and test words has 1,520 words", f"limit of {limit:,} words",
                   "static: 1 layer x 65536 numbers x 4 bytes a word", "--train-words N --test-words N")
    assert at == {"result": [limit - 320, 320]}


def test_cka_holds_at_most_max_stack_bytes():
    # before: CKA kept every layer's tokens, a copy of them without the dropped tokens and a
    # float64 centred copy of each (the bound's 229,376 tokens of a 2,048-wide table: 1.75 GiB,
    # then 1.5 and 3 more); now one copy, the dropped tokens squeezed out in place and the rest
    # centred PAIR_BLOCK numbers at a time
    over, at = capped(STACK_SETUP.format(data=""), "run_cka(tokens + 8)", "run_cka(tokens)")
    one_line_limit(over, f"the sentences has {bounds.MAX_STACK_BYTES // 8192 + 8:,} tokens",
                   f"limit of {bounds.MAX_STACK_BYTES // 8192:,} tokens", "2048 numbers x 4 bytes a token",
                   "cka --sample N")
    assert at == {"result": [bounds.MAX_STACK_BYTES // 8192 * 7 // 8, 1.0]}  # "by" has no vector


# ---- all pairs compared, in blocks ------------------------------------------------------------
def test_anisotropy_pairs_and_rank_inversions_are_compared_in_blocks():
    # before: 10 million anisotropy pairs gathered two (pairs, dim) float64 arrays at once
    # (10 GB at 64 dims) and 20,000 ranked pairs three (n, n) float64 matrices (9.6 GB)
    setup = '''
import numpy as np
from contextlens.analysis.geometry import mean_pair_cosine
from contextlens.analysis.ranking import count_inversions
rng = np.random.default_rng(0)
x = rng.normal(size=(5000, 64))
pairs = rng.integers(0, 5000, size=(10_000_000, 2))
a, b = rng.normal(size=20_000), rng.normal(size=20_000)
'''
    r = capped(setup, "[mean_pair_cosine(x, pairs), count_inversions(a, b)]")
    mean, inversions = r["result"]
    assert abs(mean) < 0.01  # random directions
    # two independent orders disagree on half the pairs
    assert 0.45 < inversions / (20_000 * 19_999 / 2) < 0.55


def test_count_inversions_in_blocks_is_the_square_matrix_count():
    import numpy as np

    from contextlens.analysis.ranking import count_inversions

    rng = np.random.default_rng(3)
    for n in (1, 2, 7, 300, 2500):
        a, b = rng.integers(0, 5, n).astype(float), rng.normal(size=n)  # ties in a
        da, db = np.sign(a[:, None] - a[None, :]), np.sign(b[:, None] - b[None, :])
        assert count_inversions(a, b) == int(np.triu(da * db < 0, k=1).sum())


# ---- bounds read before any work, without a cap ------------------------------------------------
def test_ceat_reads_at_most_ceat_context_bytes_from_an_index():
    """The usages to read are counted from the index's word counts first: nothing is read."""
    from contextlens.bias.contexts import contexts_from_index
    from contextlens.errors import LimitError

    class Store:  # what contexts_from_index asks of a usage index before reading
        layers = list(range(13))
        params = {"dim": 768}

        def word_counts(self):
            return {"the": 10_000_000, "of": 5_000, "bank": 300}

        def vectors_of(self, *args, **kwargs):
            raise AssertionError("nothing is read past the bound")

    most = bounds.CEAT_CONTEXT_BYTES // (13 * 768 * 4)  # usages read at 13 layers of 768 numbers
    with pytest.raises(LimitError) as e:
        contexts_from_index(Store(), ["the", "of", "bank"])
    assert str(e.value) == (f"CEAT's contexts in the index has 10,005,300 usages, over the limit of {most:,} "
                            f"usages (each is read at 13 layers x 768 numbers); read fewer usages per word: "
                            f"limit={most // 3:,} (--limit {most // 3}) fits")
    with pytest.raises(AssertionError, match="nothing is read"):  # under the bound it reads
        contexts_from_index(Store(), ["of", "bank"])


def test_t_sne_and_umap_place_at_most_max_embed_points():
    import numpy as np

    from contextlens.analysis.projection import project
    from contextlens.errors import LimitError

    x = np.random.default_rng(0).normal(size=(bounds.MAX_EMBED_POINTS + 1, 8))
    for method in ("tsne", "umap"):
        with pytest.raises(LimitError, match=f"{bounds.MAX_EMBED_POINTS + 1:,} points, over the limit of "
                                             f"{bounds.MAX_EMBED_POINTS:,} points .* use pca"):
            project(x, method)
    assert project(x, "pca").shape == (len(x), 2)


def test_layer_divergence_encodes_each_sentence_once():
    """The lab pairs each of its 64 sentences with the 63 others: 64 encodings, not 4,032."""
    import itertools

    import numpy as np

    from contextlens.analysis.layers import layer_divergence
    from contextlens.encoders.static import StaticEncoder
    from contextlens.vectors import EmbeddingTable

    table = EmbeddingTable(["bank", "river", "money", "the"], np.eye(4), name="toy")
    seen = []

    class Counting(StaticEncoder):
        def encode(self, texts, *, targets=None):
            seen.extend(texts)
            return super().encode(texts, targets=targets)

    sentences = [f"the {'river ' * i}bank" for i in range(64)]
    r = layer_divergence(Counting(table), list(itertools.combinations(sentences, 2)), "bank")
    assert len(r["pairs"]) == 2016 and sorted(seen) == sorted(sentences)


def test_distillation_state_is_bounded_by_distill_state_bytes():
    from contextlens.passes import distill as d

    assert d.MEMORY_LIMIT == bounds.DISTILL_STATE_BYTES < 2 << 30


def test_each_bound_is_set_in_one_place():
    """A bound of bounds.py is set there only: the library, the command line and the lab import
    it (``results listed`` was set three times: cli.options, index.search, analysis.neighbours)."""
    import ast
    from pathlib import Path

    root = Path(bounds.__file__).parent
    names = set(bounds.__all__) - {"encoding_word_limit", "check_encoding"}
    other = {"analysis/senses.py": {"MAX_K"}}  # the clusters k='auto' tries: another bound of that name
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel == "bounds.py":
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and isinstance(node.value,
                                                           ast.Constant | ast.BinOp | ast.UnaryOp):
                for target in node.targets:
                    if isinstance(target, ast.Name) and target.id in names - other.get(rel, set()):
                        found.append(f"{rel}: {target.id}")
    assert found == []
