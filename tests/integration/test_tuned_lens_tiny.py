"""The tuned lens on a tiny random-weight Llama causal LM (a byte-level BPE; no download): the zero
translator is the logit lens, the start is the weighted least-squares map, the KL steps lower the
loss they descend, the KL per layer is the definition's, a fitted lens is cached and read back,
and ``lens --tuned`` shows both lenses."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from tests.missing import need

torch = need("torch")
need("transformers")

from contextlens.cli import app  # noqa: E402
from contextlens.encoders.lm import LanguageModel  # noqa: E402
from contextlens.encoders.tuned_lens import (  # noqa: E402
    LensSettings,
    TunedLens,
    corpus_texts,
    kl_per_layer,
    tuned_lens_for,
)
from contextlens.errors import InputError  # noqa: E402
from tests.integration.test_transformer_tiny import CORPUS  # noqa: E402
from tests.integration.tiny_models import tiny_lms  # noqa: E402

SMALL = LensSettings(tokens=512, eval_tokens=64, context=32, steps=3, batch=16, lr=1e-3)


@pytest.fixture(scope="module")
def lm(tmp_path_factory):
    return LanguageModel(str(tiny_lms(tmp_path_factory.mktemp("lens")) / "causal"))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpora")
    (folder / "tiny_plain.txt").write_text("\n".join(CORPUS * 60) + "\n", encoding="utf-8")
    (folder / "notes.md").write_text("not a corpus\n")
    return folder


def test_the_zero_translator_is_the_logit_lens(lm):
    lens = TunedLens(SMALL)
    dim = lm.hf_model.config.hidden_size
    lens.weight_ = np.zeros((lm.n_layers, dim, dim), np.float32)
    lens.bias_ = np.zeros((lm.n_layers, dim), np.float32)
    logit = lm.lens("the bank of the river", k=3, track=["water"]).as_dict()
    tuned = lm.lens("the bank of the river", k=3, track=["water"], tuned=lens).as_dict()
    assert tuned["lens"] == "tuned" and logit["lens"] == "logit"
    assert tuned["layers"] == logit["layers"]


def test_the_start_is_the_weighted_least_squares_map(lm, corpus):
    states = TunedLens._states(lm, corpus_texts(corpus), SMALL, lambda *a: None)  # (N, L + 1, dim)
    w, b = TunedLens._least_squares(states, 0.0, lambda *a: None)
    x, y = states[:, 1].double().numpy(), states[:, -1].double().numpy()
    weight = 1 / (y**2).mean(1)
    a = np.hstack([x, np.ones((len(x), 1))]) * np.sqrt(weight)[:, None]
    beta, *_ = np.linalg.lstsq(a, y * np.sqrt(weight)[:, None], rcond=None)
    np.testing.assert_allclose(w[1].numpy() + np.eye(x.shape[1]), beta[:-1].T, atol=1e-3)
    np.testing.assert_allclose(b[1].numpy(), beta[-1], atol=1e-3)


def test_kl_steps_lower_the_kl_and_the_measure_is_the_definition(lm, corpus):
    states = TunedLens._states(lm, corpus_texts(corpus), SMALL, lambda *a: None)
    norm, head = lm._final_norm(), lm.hf_model.get_output_embeddings()
    w, b = TunedLens._least_squares(states, SMALL.ridge, lambda *a: None)
    lens = TunedLens(SMALL)
    lens.weight_, lens.bias_ = w.numpy(), b.numpy()
    before = kl_per_layer(states, norm, head, lens)
    steps = LensSettings(**{**vars(SMALL), "steps": 30, "batch": len(states)})
    w2, b2 = TunedLens._kl_steps(states, w, b, norm, head, steps, lambda *a: None)
    lens.weight_, lens.bias_ = w2.numpy(), b2.numpy()
    after = kl_per_layer(states, norm, head, lens)
    assert sum(after["tuned"]) < sum(before["tuned"])  # the loss the steps descend, on the same positions
    assert after["logit"] == before["logit"] and after["tuned"][-1] == pytest.approx(0.0, abs=1e-9)
    with torch.inference_mode():  # the logit lens's KL at layer 1 by hand
        p = torch.softmax(head(norm(states[:, -1])).double(), -1)
        q = torch.softmax(head(norm(states[:, 1])).double(), -1)
        want = float((p * (p.log() - q.log())).sum(-1).mean())
    assert before["logit"][1] == pytest.approx(want, rel=1e-6)


def test_a_fitted_lens_is_cached_and_read_back(lm, corpus, tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path / "cache"))
    fitted = tuned_lens_for(lm, corpus, settings=SMALL)
    assert len(fitted.kl_["tuned"]) == lm.n_layers + 1 and fitted.model_ == lm.name
    monkeypatch.setattr(TunedLens, "fit", lambda *a, **k: pytest.fail("read from the cache, not trained"))
    again = tuned_lens_for(lm, corpus, settings=SMALL)
    np.testing.assert_array_equal(again.weight_, fitted.weight_)
    assert again.kl_ == fitted.kl_
    entries = list((tmp_path / "cache" / "lenses").iterdir())
    assert [e.name for e in entries if not e.name.startswith(".")][0].startswith("causal-")


def test_bad_corpora_and_settings(lm, tmp_path):
    with pytest.raises(InputError, match="holds no \\*_plain.txt"):
        corpus_texts(tmp_path)
    (tmp_path / "a_plain.txt").write_text("the bank\n")
    with pytest.raises(InputError, match="a tuned lens needs"):
        TunedLens(SMALL).fit(lm, corpus_texts(tmp_path))
    with pytest.raises(InputError, match="tokens must be a whole number"):
        TunedLens(LensSettings(tokens=1)).fit(lm, ["x"])


def test_lens_tuned_on_the_command_line(lm, corpus, tmp_path, monkeypatch):
    import contextlens.encoders.tuned_lens as tl

    data = tmp_path / "data"
    (data / "corpora").mkdir(parents=True)
    (data / "corpora" / "tiny_plain.txt").write_text((corpus / "tiny_plain.txt").read_text())
    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(tl, "DEFAULTS", SMALL)  # the command trains with the library's defaults: small here
    result = CliRunner().invoke(app, ["lens", "the bank of the river", "-m", str(lm.path), "--track", "water",
                                      "--tuned", "--data-dir", str(data), "--json", "--html",
                                      str(tmp_path / "lens.html"), "--plot", str(tmp_path / "lens.png")])
    assert result.exit_code == 0, result.output
    r = json.loads(result.stdout)
    assert r["lens"] == "logit" and r["tuned"]["lens"] == "tuned"
    assert len(r["tuned"]["layers"]) == len(r["layers"]) == lm.n_layers + 1
    assert r["tuned"]["layers"][-1] == r["layers"][-1]  # the last layer needs no translator
    assert set(r["tuned"]["kl"]) == {"layers", "logit", "tuned"} and r["tuned"]["settings"]["tokens"] == 512
    # the training's stages, reported the library's one way (contextlens.progress): plain lines off a terminal
    said = result.stderr
    assert f"training the tuned lens of {lm.name}" in said and "once, then cached in" in said
    for stage in ("reading the corpus", "fitting the translators", "measuring the KL divergence"):
        assert f"tuned lens of {lm.name}: {stage}" in said, said
    from tests.view_pages import page_views

    (view,) = page_views((tmp_path / "lens.html").read_text())
    assert view["kind"] == "lens" and view["tuned"]["kl"] == r["tuned"]["kl"]
    assert (tmp_path / "lens.png").stat().st_size > 0
