"""The stand-alone ONNX path (issue 23 §1) on tiny random-weight models: an encoder whose
export is cached runs with neither torch nor transformers importable, and gives the torch
engine's numbers within 1e-5 (every layer, attention, sentence and static vectors); the
stand-alone tokenizer gives transformers' pieces; a changed model file is exported again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.integration.tiny_models import tiny_model
from tests.missing import need

need("torch")
need("onnxruntime")
need("tokenizers")

from contextlens.encoders import standalone  # noqa: E402
from contextlens.encoders.transformer import TransformerEncoder  # noqa: E402

TEXTS = ["The bank approved my loan.", "We sat on the bank of the river, naïvely!",
         "riverbank's 1,200 bank-notes"]
KINDS = ("bert", "mpnet", "llama", "gpt2")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("standalone")
    return {kind: tiny_model(root, kind, init=0.2) for kind in KINDS}


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _env(cache: Path) -> dict:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "CONTEXTLENS_CACHE": str(cache)}


@pytest.mark.parametrize("kind", KINDS)
def test_the_cached_export_gives_the_torch_numbers(tiny, kind):
    torch_enc = TransformerEncoder(str(tiny[kind]), engine="torch")
    TransformerEncoder(str(tiny[kind]), engine="onnx")  # exports, writes the stand-alone files
    enc = TransformerEncoder(str(tiny[kind]), engine="onnx")  # found through the pointer
    assert enc._hf is None  # the model itself was not loaded
    assert isinstance(enc._tok, standalone.PieceTokenizer)
    for a, b in zip(torch_enc.encode(TEXTS), enc.encode(TEXTS), strict=True):
        assert [w.text for w in a.words] == [w.text for w in b.words]
        assert a.pieces == b.pieces
        np.testing.assert_allclose(b.layers, a.layers, atol=1e-5)
        np.testing.assert_allclose(b.embeddings_output, a.embeddings_output, atol=1e-5)
        np.testing.assert_allclose(b.attention, a.attention, atol=1e-5)
        np.testing.assert_allclose(b.special_attention, a.special_attention, atol=1e-5)
        for pooling in a.sentence_vectors:
            np.testing.assert_allclose(b.sentence_vectors[pooling], a.sentence_vectors[pooling], atol=1e-5)
        same = {"engine", "params", "threads"}  # each engine's own batch size and threads
        assert {k: v for k, v in a.meta.items() if k not in same} == \
            {k: v for k, v in b.meta.items() if k not in same}
    np.testing.assert_allclose(enc.sentence_vectors(TEXTS), torch_enc.sentence_vectors(TEXTS), atol=1e-5)
    np.testing.assert_allclose(enc.static_vectors(["bank", "riverbank"]),
                               torch_enc.static_vectors(["bank", "riverbank"]), atol=1e-7)
    assert {**enc.params(), "batch_size": 0} == {**torch_enc.params(), "batch_size": 0}
    assert enc.layer_ids == torch_enc.layer_ids and enc.dim == torch_enc.dim


def test_the_stand_alone_tokenizer_gives_transformers_pieces(tiny, cache):
    enc = TransformerEncoder(str(tiny["gpt2"]), engine="onnx")
    hf = enc.tokenizer  # transformers' own, loaded on demand
    texts = [*TEXTS, *standalone.SAMPLES, " leading and trailing  ", "[CLS] a [SEP] [MASK]"]
    assert standalone.tokenizer_problem(hf, enc._tok, texts) is None
    assert enc._tok.convert_ids_to_tokens(list(range(40))) == hf.convert_ids_to_tokens(list(range(40)))
    assert len(enc._tok) == len(hf) and enc._tok.all_special_ids == hf.all_special_ids
    assert enc._tok.decode([5, 6, 7]) == hf.decode([5, 6, 7], clean_up_tokenization_spaces=False)
    long = " ".join(["bank"] * 300)
    assert enc._tok([long], truncation=True, max_length=20)["input_ids"] == \
        hf([long], truncation=True, max_length=20)["input_ids"]


def test_a_fresh_process_runs_without_torch_or_transformers(tiny, cache):
    TransformerEncoder(str(tiny["bert"]), engine="onnx").encode(["a"])  # both exports cached (attention too)
    code = (
        "import sys; sys.modules['torch'] = None; sys.modules['transformers'] = None\n"
        "from contextlens.encoders.transformer import TransformerEncoder\n"
        f"e = TransformerEncoder({str(tiny['bert'])!r})\n"
        "enc = e.encode(['The bank approved my loan.'])[0]\n"
        "import json; print(json.dumps([enc.layers.shape[0], e.engine, enc.attention is not None, "
        "sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'transformers') and sys.modules[m])]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(cache))
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == [3, "onnx", True, []]


def test_a_changed_model_file_is_exported_again(tiny, cache, tmp_path):
    import shutil

    path = tmp_path / "copy"
    shutil.copytree(tiny["bert"], path)
    TransformerEncoder(str(path), engine="onnx")
    settings = {"attention": False, "exporter": "torchscript", "opset": 17}
    assert standalone.find(path, settings) is not None
    config = path / "config.json"
    config.write_text(config.read_text().replace('"hidden_act": "gelu"', '"hidden_act": "relu"'))
    assert standalone.find(path, settings) is None  # another key: the old export is not reused
    enc = TransformerEncoder(str(path), engine="onnx")
    assert enc._hf is not None  # loaded to export again
    again = TransformerEncoder(str(path), engine="onnx")
    assert again._hf is None
    ref = TransformerEncoder(str(path), engine="torch")
    np.testing.assert_allclose(again.encode(TEXTS[:1])[0].layers, ref.encode(TEXTS[:1])[0].layers, atol=1e-5)


def test_a_damaged_stand_alone_file_is_rebuilt(tiny, cache):
    TransformerEncoder(str(tiny["bert"]), engine="onnx")
    settings = {"attention": False, "exporter": "torchscript", "opset": 17}
    folder = standalone.find(tiny["bert"], settings)
    rows = np.load(folder / standalone.EMBEDDING)
    rows[5] += 1.0
    np.save(folder / standalone.EMBEDDING, rows)  # same size, other content
    assert standalone.find(tiny["bert"], settings) is None
    enc = TransformerEncoder(str(tiny["bert"]), engine="onnx")
    ref = TransformerEncoder(str(tiny["bert"]), engine="torch")
    np.testing.assert_allclose(enc.static_vectors(["bank"]), ref.static_vectors(["bank"]), atol=1e-7)


def test_preparing_at_install_exports_and_checks_against_torch(tiny, cache):
    from contextlens.encoders.prepare import TOLERANCE, prepare_onnx

    done = prepare_onnx(str(tiny["llama"]))
    assert done.standalone and done.max_difference <= TOLERANCE and done.lm_max_difference is None
    assert done.qk_max_difference <= TOLERANCE  # the neuron view's queries and keys, without torch
    with_attention = {"attention": True, "exporter": "torchscript", "opset": 17}
    assert standalone.find(tiny["llama"], with_attention) is not None
    assert TransformerEncoder(str(tiny["llama"]))._hf is None  # the next command needs no torch


def test_a_causal_lm_on_its_cached_export_gives_the_torch_numbers(tmp_path_factory, cache):
    from contextlens.encoders.lm import LanguageModel
    from tests.integration.tiny_models import tiny_lms

    path = str(tiny_lms(tmp_path_factory.mktemp("lm")) / "causal")
    LanguageModel(path, engine="onnx")  # the first run exports the model and keeps its head
    onnx, ref = LanguageModel(path, engine="onnx"), LanguageModel(path, engine="torch")
    assert onnx._onnx is not None and onnx._hf is None
    text = "We sat on the river bank and watched"
    np.testing.assert_allclose(onnx.lens_probabilities(text), ref.lens_probabilities(text), rtol=1e-5,
                               atol=1e-9)
    a, b = onnx.lens(text, k=3, track=["water", "the"]), ref.lens(text, k=3, track=["water", "the"])
    for x, y in zip(a.layers, b.layers, strict=True):
        assert [w.word for w in x.top] == [w.word for w in y.top]
        assert [t.rank for t in x.tracked] == [t.rank for t in y.tracked]
        np.testing.assert_allclose([t.probability for t in x.tracked], [t.probability for t in y.tracked],
                                   rtol=1e-5, atol=1e-12)
    p, q = onnx.predict("I deposited money at the", k=4), ref.predict("I deposited money at the", k=4)
    assert [w.word for w in p.predictions] == [w.word for w in q.predictions]
    np.testing.assert_allclose([w.probability for w in p.predictions], [w.probability for w in q.predictions],
                               rtol=1e-5)
    assert onnx._hf is None  # torch was never needed


def test_a_random_twin_never_takes_the_directory_pointer(tiny, cache):
    twin = TransformerEncoder(str(tiny["bert"]), engine="onnx", random_weights=3)
    trained = TransformerEncoder(str(tiny["bert"]), engine="onnx")
    ref = TransformerEncoder(str(tiny["bert"]), engine="torch")
    np.testing.assert_allclose(trained.encode(TEXTS[:1])[0].layers, ref.encode(TEXTS[:1])[0].layers,
                               atol=1e-5)
    assert not np.allclose(twin.encode(TEXTS[:1])[0].layers[1:], ref.encode(TEXTS[:1])[0].layers[1:],
                           atol=1e-3)
    again = TransformerEncoder(str(tiny["bert"]), engine="onnx")
    assert again._hf is None and again._runner.paths[False] != twin._runner.paths[False]
