"""One way to say it on the command line: the shared options (``cli/options.py``) mean the
same in every command, options that do not apply are rejected naming the method, numbers
are bounded, output paths are checked, help shows real metavars and plain text."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from contextlens.cli import app
from contextlens.cli import options as o
from contextlens.cli._common import print_json
from contextlens.vectors import EmbeddingTable

runner = CliRunner()

WORDS = {"bank": [1, 1, 0], "money": [1, 0, 0.1], "river": [0, 1, 0.1], "the": [0.1, 0.1, 1],
         "sat": [0.5, 0.2, 0]}


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    path = tmp_path_factory.mktemp("options") / "toy.npz"
    EmbeddingTable(list(WORDS), list(WORDS.values()), name="toy").save(path)
    return str(path)


def fails(*args: str) -> str:
    """Run a command that must fail cleanly: exit 2, one line on stderr, nothing on stdout."""
    result = runner.invoke(app, list(args))
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert result.stdout == ""
    return lines[0]


def test_short_m_is_the_model_in_every_command(toy):
    # `layers` takes any number of sentences: -m must still be --model, not a third sentence
    for command in (["layers", "a bank", "the bank"], ["compare", "a bank", "the bank"],
                    ["contextualize", "a bank"], ["explore", "bank", "-s", "a bank"]):
        line = fails(*command, "-w", "bank", "--vectors", toy, "-m",
                     "minilm") if command[0] != "explore" else \
            fails(*command, "--vectors", toy, "-m", "minilm")
        assert "give --vectors (a static table) or --model (a transformer), not both" in line


@pytest.mark.parametrize("args, message", [
    (["--method", "average", "--heads", "2"],
     "heads does not apply to method 'average' (it takes: alpha, window)"),
    (["--method", "static", "--window", "2"], "window does not apply to method 'static' (it takes no mixing"),
    (["--method", "attention", "--alpha", "0.5"], "alpha does not apply to method 'attention'"),
])
def test_options_of_another_method_are_rejected_naming_it(toy, args, message):
    assert message in fails("compare", "the bank", "sat bank", "-w", "bank", "--vectors", toy, *args)


def test_mixing_options_and_method_are_rejected_with_a_model():
    # rejected before any model is loaded: these run in milliseconds
    assert "--alpha mixes a static table (--vectors); --model minilm is a transformer: drop --alpha" in \
        fails("compare", "a bank", "the bank", "-w", "bank", "-m", "minilm", "--alpha", "0.5")
    assert "drop --method" in fails("explore", "bank", "-s", "a bank", "-m", "minilm", "--method", "average")


def test_attention_over_a_table_excludes_the_word_itself_by_default(toy):
    def weights(*extra):
        result = runner.invoke(app, ["contextualize", "sat bank river", "-w", "bank", "--vectors", toy,
                                     *extra, "--json"])
        assert result.exit_code == 0, result.output
        return {w["word"]: w["weight"] for w in json.loads(result.stdout)["weights"]}

    default, included = weights(), weights("--include-self")
    assert default["bank"] == 0.0 and default == weights("--exclude-self")
    assert included["bank"] > 0.3  # bank·bank = 2 is the largest score: the word mostly keeps itself


@pytest.mark.parametrize("args, message", [
    (["neighbours", "bank", "-k", "0"], "-k must be a whole number from 1 to 10,000, got 0"),
    (["compare", "a bank", "the bank", "-w", "bank", "--alpha", "nan", "--method", "average"],
     "--alpha must be a finite number from 0 to 1, got nan"),
    (["compare", "a bank", "the bank", "-w", "bank", "--window", "-1"],
     "--window must be a whole number from 0"),
    (["compare", "a bank", "the bank", "-w", "bank", "--heads", "0"],
     "--heads must be a whole number from 1"),
    (["compare", "a bank", "the bank", "-w", "bank", "--n-layers", "65"],
     "--n-layers must be a whole number"),
    (["contextualize", "the bank", "-w", "bank", "--layer", "99"],
     "layer 99 is not available: the layers are 0, 1"),
    (["contextualize", "the bank", "-w", "bank", "--occurrence", "x"], "--occurrence must be a whole number"),
    (["geometry", "-s", "a bank", "--pairs", "0"], "--pairs must be a whole number from 1"),
    (["senses", "bank", "-s", "a bank", "--k", "0"], "--k must be a whole number from 1"),
    (["analogy", "bank", "money", "river", "-k", str(10**30)], "-k must be a whole number from 1 to 10,000"),
])
def test_numbers_out_of_range_are_one_line(toy, args, message):
    assert message in fails(*args, "--vectors", toy)


def test_one_comma_list_parser_whose_errors_name_the_option(toy):
    assert "--layers must be whole numbers separated by commas (e.g. 4,6), got 'a,b'" in \
        fails("eval", "wic", "--vectors", toy, "--layers", "a,b")
    assert "--words must be words separated by commas" in fails("geometry", "-s", "a bank", "--vectors", toy,
                                                                  "--words", ",")


@pytest.mark.parametrize("path", ["/dev/null/x.npz", "/proc/x.npz"])
def test_an_unwritable_output_path_is_one_line(toy, tmp_path, path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("the bank of the river\n" * 3)
    line = fails("static", "build", str(corpus), "--method", "counts", "--min-count", "1", "-o", path)
    assert path in line
    line = fails("contextualize", "the bank", "-w", "bank", "--vectors", toy, "--plot",
                 path.replace("npz", "png"))
    assert path.replace("npz", "png") in line


def test_static_build_checks_the_output_suffix_before_building(tmp_path):
    (tmp_path / "c.txt").write_text("the bank of the river\n")
    assert "cannot tell the vector file format from the name 'out.xyz'" in fails(
        "static", "build", str(tmp_path / "c.txt"), "--method", "counts", "-o", str(tmp_path / "out.xyz"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.txt"]


def test_index_build_into_an_existing_file_is_one_line(tmp_path):
    (tmp_path / "c.txt").write_text("the bank\n")
    (tmp_path / "db").write_text("not a folder")
    line = fails("index", "build", str(tmp_path / "c.txt"), "--db", str(tmp_path / "db"), "--words", "bank")
    assert "cannot write" in line and "it is a file" in line


def test_text_that_is_not_utf8_is_one_line(toy, tmp_path):
    # undecodable bytes in argv arrive as lone surrogates; NUL cannot be in a path
    assert "--word: 'ba\\udcffnk' is not valid UTF-8 text" in fails("compare", "a bank", "the bank", "-w",
                                                                    "ba\udcffnk",
                                                                     "--vectors", toy)
    result = runner.invoke(app, ["contextualize", "a bank", "-w", "bank", "--vectors", toy, "--plot",
                                 # the option parser itself refuses it: a usage error
                                 str(tmp_path / "a\x00.png")])
    assert result.exit_code == 2 and "null byte" in result.stderr and not list(tmp_path.iterdir())


def test_markup_in_user_text_is_shown_not_read(toy):
    assert "'[/]' is not in" in fails("neighbours", "[/]", "--vectors", toy)
    result = runner.invoke(app, ["explore", "bank", "-s", "the [bold]bank[/bold]", "-s", "sat [/] bank",
                                 "--vectors", toy, "--method", "average"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "the [bold]bank[/bold]" in result.stdout and "sat [/] bank" in result.stdout


def test_json_is_strict_and_undefined_numbers_are_null(capsys):
    print_json({"spearman": float("nan"), "x": [float("inf"), 1.0]})
    assert json.loads(capsys.readouterr().out) == {"spearman": None, "x": [None, 1.0]}


def test_help_shows_metavars_and_plain_text():
    for command in (["compare"], ["rank"], ["explore"], ["static", "build"], ["index", "build"], ["eval"]):
        result = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0, result.output
        assert (
            "<bool>" not in result.stdout
            and "<str>" not in result.stdout
            and "{" not in result.stdout.split("\n")[0]
        ), result.stdout
    rank = runner.invoke(app, ["rank", "--help"], env={"COLUMNS": "200"}).stdout
    assert ("Usage: contextlens rank [OPTIONS] PAIRS" in " ".join(rank.split())
            or "rank [OPTIONS] PAIRS" in rank)
    assert "'word1 word2 [score]' per line" in rank
    compare = runner.invoke(app, ["compare", "--help"], env={"COLUMNS": "200"}).stdout
    assert ("-m, --model NAME" in compare and "--vectors FILE|NAME" in compare
            and "(default: --exclude-self)" in compare)


def test_help_lists_the_library_choices():
    """The choices spelled out in help texts (so that --help needs no numpy) are the library's."""
    from contextlens.analysis.projection import PROJECTIONS
    from contextlens.analysis.ranking import DEFAULT_TEMPLATE
    from contextlens.cli import evaluate, experiments, index, static
    from contextlens.encoders.mixing import MAX_LAYERS
    from contextlens.encoders.registry import STATIC_METHODS
    from contextlens.encoders.transformer import MAX_BATCH
    from contextlens.evaluation.runner import TASKS
    from contextlens.static.build import METHODS
    from contextlens.vectors import ANALOGY_METHODS

    assert o.STATIC_METHODS_HELP == " | ".join(STATIC_METHODS)
    assert o.PROJECTIONS_HELP == " | ".join(PROJECTIONS)
    assert static.ANALOGY_METHODS_HELP == " | ".join(ANALOGY_METHODS)
    assert static.BUILD_METHODS_HELP == " | ".join(METHODS)
    assert experiments.DEFAULT_TEMPLATE == DEFAULT_TEMPLATE
    assert evaluate.TASK_CHOICES == (*TASKS, "all")
    assert (o.MAX_LAYERS, index.MAX_BATCH) == (MAX_LAYERS, MAX_BATCH)


def test_sentence_pairs_reject_an_unknown_short_option():
    with pytest.raises(Exception, match="unknown option '-x'"):
        o.sentence_pairs(["a bank", "the bank", "-x"])
    assert o.sentence_pairs(["-5 degrees by the bank", "the bank"]) == [
        ("-5 degrees by the bank", "the bank")
    ]


def commands():
    """Every command of the app, as ``(name, click command)``: ``bias ceat``..."""
    import typer

    def walk(cmd, path):
        if hasattr(cmd, "commands"):
            for name, sub in cmd.commands.items():
                yield from walk(sub, (*path, name))
        else:
            yield " ".join(path), cmd

    return list(walk(typer.main.get_command(app), ()))


# what a --model refuses beside it when given (options.check_source, EncoderChoice.encoder's mixing)
REFUSED_WITH_A_MODEL = ("vectors", "method", "alpha", "window", "include_self", "causal", "positions",
                        "heads", "n_layers", "projections", "scale")
BESIDE_A_MODEL = {"lab": {"vectors"}, "demo": {"vectors"}}  # these use a table and the models, side by side


def test_what_a_model_refuses_is_not_given_unless_the_user_gives_it():
    """An option a --model refuses must default to None wherever --model is: a default value
    reads as given, and refuses every --model (eval's --method static did, issue 20)."""
    checked = 0
    for name, cmd in commands():
        params = {p.name: p for p in cmd.params}
        if "model" not in params:
            continue
        for option in REFUSED_WITH_A_MODEL:
            if option in params and option not in BESIDE_A_MODEL.get(name, ()):
                checked += 1
                assert params[option].default is None, (
                    f"{name}: {option} defaults to {params[option].default!r}"
                )
    assert checked > 50
