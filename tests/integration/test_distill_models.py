"""Distillation through real transformers: on 200 Brown sentences, minilm's pooled vector of
a word is the mean of its usages' vectors computed directly; a run killed (SIGKILL) mid-way
with a tiny random-weight BERT resumes to exactly the clean run's tables."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tests.missing import need, need_model

torch = need("torch")
need("transformers")

from contextlens.encoders.transformer import TransformerEncoder  # noqa: E402
from contextlens.passes.distill import distill  # noqa: E402
from contextlens.vectors import EmbeddingTable  # noqa: E402
from tests.integration.tiny_models import tiny_bert  # noqa: E402


@pytest.fixture(scope="module")
def brown200(brown, tmp_path_factory):
    path = tmp_path_factory.mktemp("brown") / "brown200.txt"
    with open(brown, encoding="utf-8") as f:
        path.write_text("".join(next(f) for _ in range(200)), encoding="utf-8")
    return path


def test_minilm_pooled_vector_is_the_mean_of_its_usages(brown200):
    need_model("minilm")
    encoder = TransformerEncoder("minilm", layers=[3, 6], attention=False)
    result = distill(brown200, encoder, words=["jury", "county"], layers="all", min_count=1)
    assert result.usages == {"jury": 19, "county": 20} and result.sentences == 200
    lines = brown200.read_text(encoding="utf-8").splitlines()
    for word in ("jury", "county"):
        with_word = [t for t in lines if word in t.lower().split()]
        direct = [e.layers[:, j] for e in encoder.encode(with_word) for j, w in enumerate(e.words)
                  if w.text.lower() == word]  # each (layers, dim), sentences encoded whole
        assert len(direct) == result.usages[word]
        mean = np.mean(direct, axis=0)  # (layers, dim)
        for pos, layer in enumerate(encoder.layer_ids):
            np.testing.assert_allclose(result.tables[(layer, "mean")].vector(word), mean[pos], atol=2e-5)


CHILD = textwrap.dedent("""
    import os, signal, sys
    from contextlens.passes import distill as d
    from contextlens.encoders.transformer import TransformerEncoder
    corpus, out, model = sys.argv[1:4]
    save, calls = d._save, []
    def dying_save(*a, **k):  # die right after the third checkpoint
        save(*a, **k)
        calls.append(1)
        if len(calls) == 3:
            os.kill(os.getpid(), signal.SIGKILL)
    d._save = dying_save
    d.distill(corpus, TransformerEncoder(model, attention=False), out, layers="all", pools=["mean", "max"],
              min_count=2, max_usages=15, chunk_size=25)
""")


def test_killed_distillation_resumes_to_the_clean_tables(tmp_path):
    model = tiny_bert(tmp_path)
    rng = np.random.default_rng(1)
    fill = (
        "the a of money loan water mud we sat on it by far near old new green cold bank river spring".split()
    )
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(" ".join(rng.choice(fill, size=int(rng.integers(3, 15))))
                                for _ in range(200)))
    kw = {"layers": "all", "pools": ["mean", "max"], "min_count": 2, "max_usages": 15, "chunk_size": 25}
    clean = distill(corpus, TransformerEncoder(str(model), attention=False), tmp_path / "clean.npz", **kw)
    out = tmp_path / "t.npz"
    child = subprocess.run([sys.executable, "-c", CHILD, str(corpus), str(out), str(model)],
                           env=dict(os.environ), capture_output=True, timeout=300)
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()[-2000:]
    assert (tmp_path / "t.npz.distill.npz").is_file() and not (tmp_path / "t.layer2.mean.npz").exists()
    resumed = distill(corpus, TransformerEncoder(str(model), attention=False), out, **kw)
    assert resumed.resumed_at == 75 and resumed.usages == clean.usages
    assert sorted(resumed.paths) == sorted(clean.paths) == [(k, p) for k in (0, 1, 2)
                                                            for p in ("max", "mean")]
    for key in clean.paths:
        np.testing.assert_array_equal(EmbeddingTable.load(resumed.paths[key]).vectors,
                                      EmbeddingTable.load(clean.paths[key]).vectors)
        assert EmbeddingTable.load(resumed.paths[key]).keys == clean.tables[key].keys
