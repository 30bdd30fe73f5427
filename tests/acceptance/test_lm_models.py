"""Predictions and the logit lens on the packaged models: SmolLM2 knows the capital of
France, and the lens shows the answer forming in the last layers; the sentence encoders
say they have no head and what to use instead."""

from __future__ import annotations

import pytest

from tests.missing import need, need_model

need("torch")
need("transformers")

from contextlens.encoders.lm import LanguageModel, NoLMHeadError  # noqa: E402

_require = need_model


def test_minilm_has_no_head_and_says_what_to_use():
    _require("minilm")
    with pytest.raises(NoLMHeadError, match=r"minilm is a sentence encoder .*smollm2.*contextual neighbours"):
        LanguageModel("minilm")


@pytest.fixture(scope="module")
def smollm2():
    _require("smollm2")
    return LanguageModel("smollm2")


@pytest.mark.slow
def test_smollm2_knows_the_capital_of_france(smollm2):
    result = smollm2.predict("The capital of France is", k=3)
    assert "Paris" in [p.word for p in result.predictions]
    assert result.predictions[0].word == "Paris" and result.predictions[0].probability > 0.5
    assert result.exact
    river = smollm2.predict("We sat on the bank of the", k=5)
    assert "river" in [p.word for p in river.predictions]


@pytest.mark.slow
def test_smollm2_logit_lens_shows_paris_forming_late(smollm2):
    lens = smollm2.lens("The capital of France is", track=["Paris"])
    ranks = [layer.tracked[0].rank for layer in lens.layers]  # layer 0 .. 30
    assert len(ranks) == 31 and ranks[-1] == 1
    quarter = len(ranks) // 4
    last, first_half = ranks[-quarter:], ranks[: len(ranks) // 2]
    assert max(last) < min(first_half)  # every late layer ranks Paris above every early one
    assert sum(last) / len(last) < sum(first_half) / len(first_half) / 10
    assert lens.layers[-1].top[0].word == "Paris"


@pytest.mark.slow
def test_the_commands_on_smollm2():
    import json

    from typer.testing import CliRunner

    from contextlens.cli import app

    _require("smollm2")
    _require("minilm")
    runner = CliRunner()
    result = runner.invoke(app, ["predict", "The capital of France is", "--model", "smollm2", "-k", "3",
                                 "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert "Paris" in [p["word"] for p in out["predictions"]] and out["model"] == "smollm2"
    result = runner.invoke(app, ["lens", "The capital of France is", "--model", "smollm2", "--track", "Paris",
                                 "--json"])
    assert result.exit_code == 0, result.output
    ranks = [layer["tracked"][0]["rank"] for layer in json.loads(result.stdout)["layers"]]
    assert ranks[-1] == 1 and ranks[-1] < min(ranks[: len(ranks) // 2])
    result = runner.invoke(app, ["predict", "The [MASK] approved my loan.", "--model", "minilm"])
    assert result.exit_code == 2 and "sentence encoder" in result.output
