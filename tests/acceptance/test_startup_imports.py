"""The README's model commands import neither torch nor transformers once the model's ONNX
export is cached (issue 23 §1): each runs twice in a fresh interpreter, the first run
preparing what it needs, the second under ``python -X importtime``, whose list must hold
neither. The numbers are the torch engine's within 1e-5 on minilm and smollm2."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tests.missing import need, need_model

need("onnxruntime")
need("tokenizers")

HEAVY = {"torch", "transformers"}
LOAN, RIVER = "The bank approved my loan.", "We sat on the bank of the river."
MINILM = [
    ["compare", LOAN, RIVER, "--word", "bank", "--model", "minilm", "--json"],
    ["senses", "bank", "--model", "minilm", "-s", LOAN, "-s", "She opened an account at the bank.",
     "-s", RIVER, "--json"],
    ["neighbours", "bank", "--in", RIVER, "--model", "minilm", "-k", "10", "--json"],
    ["compare-sentences", LOAN, "She got a mortgage from the bank.", "--model", "minilm", "--json"],
    ["attention", LOAN, "--word", "bank", "--model", "minilm", "--json"],
    ["bias", "seat", "career_family", "--model", "minilm", "--json"],
]
SMOLLM2 = [
    ["predict", "The capital of France is", "--model", "smollm2", "-k", "5", "--json"],
    ["lens", "The capital of France is", "--model", "smollm2", "--track", "Paris", "-k", "1", "--json"],
]


def run(args: list[str], importtime: bool = False) -> tuple[str, set[str]]:
    """(stdout, the modules and packages imported) of ``contextlens args`` in a fresh interpreter."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    flags = ["-X", "importtime"] if importtime else []
    done = subprocess.run([sys.executable, *flags, "-m", "contextlens", *args], capture_output=True,
                          text=True, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stderr.splitlines()
    modules = {line.split("|")[-1].strip() for line in lines if line.startswith("import time:")}
    return done.stdout, {m.split(".")[0] for m in modules} | modules  # a package's own line may be missing


@pytest.mark.parametrize("args", MINILM + SMOLLM2, ids=lambda a: f"{a[0]}-{a[a.index('--model') + 1]}")
def test_a_model_command_with_its_export_cached_imports_neither_torch_nor_transformers(args):
    model = args[args.index("--model") + 1]
    need_model(model)
    if model == "smollm2":
        pytest.importorskip("gguf")
    first, _ = run(args)  # prepares the export (imports torch the first time only)
    second, modules = run(args, importtime=True)
    assert "contextlens.cli" in modules  # the measurement sees our modules
    assert sorted(HEAVY & modules) == []
    if args[0] in ("compare", "predict", "lens"):  # nor SciPy (0.5 s of CPU) where nothing needs it
        assert "scipy" not in modules
    assert without_threads(json.loads(second)) == without_threads(json.loads(first))


def test_the_neuron_view_with_its_export_cached_imports_neither_torch_nor_transformers(tmp_path):
    """``attention --html``: the head, model and neuron views; queries and keys computed by numpy
    from the export's states and the model's safetensors weights (``encoders.qk_numpy``)."""
    need_model("minilm")
    page = tmp_path / "attention.html"
    args = ["attention", LOAN, "--word", "bank", "--model", "minilm", "--html", str(page)]
    run(args)  # prepares the export with attention (imports torch the first time only)
    first = page.read_text()
    page.unlink()
    _, modules = run(args, importtime=True)
    assert "contextlens.cli" in modules and "contextlens.encoders.qk_numpy" in modules
    assert sorted(HEAVY & modules) == []
    assert '"neuron"' in page.read_text() and page.read_text() == first


def without_threads(data):
    """``data`` without its ``threads`` entries (chosen from the machine's load at each run)."""
    if isinstance(data, dict):
        return {k: without_threads(v) for k, v in data.items() if k != "threads"}
    return [without_threads(v) for v in data] if isinstance(data, list) else data


def test_the_torch_engine_gives_the_same_numbers_minilm():
    need_model("minilm")
    from contextlens.encoders.transformer import TransformerEncoder

    texts = [LOAN, RIVER, "Reeds grew along the riverbank of the stream."]
    onnx = TransformerEncoder("minilm", engine="onnx")
    torch_enc = TransformerEncoder("minilm", engine="torch")
    for a, b in zip(onnx.encode(texts), torch_enc.encode(texts), strict=True):
        np.testing.assert_allclose(a.layers, b.layers, atol=1e-5)
        np.testing.assert_allclose(a.attention, b.attention, atol=1e-5)
    np.testing.assert_allclose(onnx.sentence_vectors(texts), torch_enc.sentence_vectors(texts), atol=1e-5)


@pytest.mark.slow
def test_the_torch_engine_gives_the_same_numbers_smollm2():
    need_model("smollm2")
    from contextlens.encoders.lm import LanguageModel

    onnx, torch_lm = LanguageModel("smollm2", engine="onnx"), LanguageModel("smollm2", engine="torch")
    assert onnx._onnx is not None and torch_lm._onnx is None
    text = "The capital of France is"
    np.testing.assert_allclose(onnx.lens_probabilities(text), torch_lm.lens_probabilities(text), atol=1e-5)
    a, b = onnx.predict(text, k=5), torch_lm.predict(text, k=5)
    assert [p.word for p in a.predictions] == [p.word for p in b.predictions]
    np.testing.assert_allclose([p.probability for p in a.predictions], [p.probability for p in b.predictions],
                               rtol=1e-5)
