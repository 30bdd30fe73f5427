"""`contextlens compare/contextualize --model` with the packaged default model."""

import json

import pytest
from typer.testing import CliRunner

from contextlens import cosine, make_encoder
from contextlens.cli import app

runner = CliRunner()


def test_compare_with_a_model_reports_every_layer():
    result = runner.invoke(app, ["compare", "The bank approved my loan.", "We sat on the bank of the river.",
                                 "-w", "bank", "--model", "minilm", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert len(out["cosine_by_layer"]) == 7 == len(out["layer_names"])
    assert out["cosine_by_layer"][0] == 1.0  # same token id, same embedding row
    assert all(c < 0.95 for c in out["cosine_by_layer"][1:])


def test_contextualize_with_a_model_gives_weights_that_sum_with_the_special_share():
    result = runner.invoke(app, ["contextualize", "We sat on the bank of the river.", "-w", "bank",
                                 "--model", "minilm", "--layer", "3", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["layer"] == 3 and out["layer_name"] == "layer 3"
    total = sum(w["weight"] for w in out["weights"])
    assert 0.0 < total <= 1.0 + 1e-6


def test_probes_are_compared_with_the_models_embedding_rows():
    result = runner.invoke(app, ["contextualize", "the bank", "-w", "bank", "--model", "minilm", "-p",
                                 "money", "--json"])
    assert result.exit_code == 0, result.output
    probe = json.loads(result.stdout)["probes"][0]
    rows = make_encoder(model="minilm").static_vectors(["bank", "money"])  # the embedding-matrix rows
    assert probe["probe"] == "money"
    assert probe["static_cosine"] == pytest.approx(cosine(rows[0], rows[1]), abs=1e-6)
    assert probe["contextual_cosine"] != pytest.approx(probe["static_cosine"], abs=1e-3)


@pytest.mark.parametrize("name", ["no-such-model-xyz"])
def test_unknown_model_lists_the_available_ones(name):
    result = runner.invoke(app, ["compare", "a bank", "the bank", "-w", "bank", "--model", name])
    assert result.exit_code == 2
    assert "minilm" in result.stderr


# -- every command that takes --model runs with one, through the command line --------------------------------
S1, S2 = "The bank approved my loan.", "We sat on the bank of the river."
RECIPES = {  # a command with --model that the README does not run with one: how it runs here (setup first)
    "contextualize": [["contextualize", S2, "-w", "bank", "--model", "minilm", "--json"]],
    "explore": [["explore", "bank", "-s", S1, "-s", S2, "--model", "minilm", "--json"]],
    "layers": [["layers", S1, S2, "-w", "bank", "--model", "minilm", "--json"]],
    "attention": [["attention", S2, "-w", "bank", "--model", "minilm", "--json"]],
    "rank": [["rank", "PAIRS", "--model", "minilm", "--json"]],
    "geometry": [["geometry", "-s", S1, "-s", S2, "--words", "bank", "--model", "minilm", "--json"]],
    "static distill": [["static", "distill", "CORPUS", "--model", "minilm", "--min-count", "1", "-o",
                        "OUT/t.npz", "--json"]],
    "index build": [["index", "build", "CORPUS", "--db", "OUT/a.lance", "--words", "bank", "--model",
                     "minilm", "--json"]],
    "index search": [["index", "build", "CORPUS", "--db", "OUT/b.lance", "--words", "bank", "--json"],
                     ["index", "search", "--db", "OUT/b.lance", S2, "--word", "bank", "--model", "minilm",
                      "--json"]],
    "demo": [["demo", "--model", "minilm", "--out", "OUT/demo"]],
    "probe": [["probe", "sense", "--model", "minilm", "--data-dir", "SEMCOR", "--json"]],
    "cka": [["cka", "--model", "minilm", "--sentences", "CORPUS", "--json"]],
    "sublayers": [["sublayers", S1, S2, "-w", "bank", "--model", "minilm", "--json"]],
    "patch": [["patch", S1, S2, "-w", "bank", "--model", "minilm", "--json"]],
}


def command_of(args):
    """``(name, click command, whether --model is given)`` for the words after ``contextlens``."""
    import typer

    cmd, path = typer.main.get_command(app), []
    while args and hasattr(cmd, "commands") and args[0] in cmd.commands:
        cmd, path, args = cmd.commands[args[0]], [*path, args[0]], args[1:]
    ctx = cmd.make_context(" ".join(path), list(args), resilient_parsing=True)
    source = ctx.get_parameter_source("model")
    return " ".join(path), cmd, source is not None and source.name == "COMMANDLINE"


def model_commands() -> list[str]:
    """Every command of the app that declares --model."""
    import typer

    def walk(cmd, path):
        if hasattr(cmd, "commands"):
            for name, sub in cmd.commands.items():
                yield from walk(sub, (*path, name))
        elif any("--model" in getattr(p, "opts", ()) for p in cmd.params):
            yield " ".join(path)

    return sorted(walk(typer.main.get_command(app), ()))


def readme_model_commands() -> set[str]:
    """The commands the README runs with --model (tests/acceptance/test_readme.py runs each)."""
    from tests.acceptance.test_readme import COMMANDS

    ran = set()
    for c in COMMANDS:
        if c.args[0] == "contextlens":
            name, _, given = command_of(list(c.args[1:]))
            if given:
                ran.add(name)
    return ran


def test_every_command_with_model_runs_with_one_in_a_test():
    """A command that takes --model is run with one through the command line, by the README
    test or here: a new command is listed below (it fails until it is given a way to run)."""
    covered = readme_model_commands() | set(RECIPES)
    missing = [name for name in model_commands() if name not in covered]
    assert not missing, f"commands with --model that no test runs with one: {missing}; add them to RECIPES"
    assert {"eval", "bias ceat", "lab"} <= readme_model_commands()
    assert set(RECIPES) <= set(model_commands())


@pytest.fixture(scope="module")
def recipe_files(tmp_path_factory, data_dir):
    from tests.small_data import pick_lines, read_lines
    from tests.tiny_semcor import tiny_docs, write_semcor

    root = tmp_path_factory.mktemp("with-model")
    pairs = root / "pairs.txt"
    pairs.write_text("bank money 8\nbank river 6\nriver water 9\n")
    corpus = root / "corpus.txt"
    corpus.write_text("\n".join(pick_lines(read_lines(data_dir / "corpora" / "brown_plain.txt"), ["bank"],
                                           per_word=6)) + "\n")
    return {"PAIRS": str(pairs), "CORPUS": str(corpus), "OUT": str(root / "out"),
            "SEMCOR": str(write_semcor(root / "semcor", tiny_docs()))}


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_a_command_runs_with_a_model(name, recipe_files):
    for args in RECIPES[name]:
        args = [recipe_files.get(a, a.replace("OUT", recipe_files["OUT"]) if a.startswith("OUT") else a)
                for a in args]
        result = runner.invoke(app, args)
        assert result.exit_code == 0, f"{args}\n{result.output}"
    assert command_of(args)[2], "the recipe gives --model"
    if "--json" in args:
        json.loads(result.stdout)
