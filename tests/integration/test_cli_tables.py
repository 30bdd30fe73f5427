"""Tables never cut a number (issue 20 item 6): every table-printing command, printed into a
pipe at 80 columns, shows the same numbers, whole, as at a width where nothing has to give,
every line fits the 80 columns, and the numbers of its --json output that the table shows
are all there, whole. A narrow table wraps its text or goes on in a second table that
repeats the row labels (``cli/tables.py``)."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest
from typer.testing import CliRunner

from contextlens.cli import app
from contextlens.cli._common import fmt
from tests.missing import need, need_model
from tests.small_data import pick_lines, read_lines

NUMBER = re.compile(r"(?<![\w.])[-+]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?(?![\w])")
CUT = re.compile(r"\d…|…\d")
# a split's note
PART = re.compile(r"\((?:continued:\s+)?columns?\s+[\d–]+\s+of\s+\d+(?:;\s+the\s+rest\s+below)?\)")
BOX = re.compile(r"[│┃┏┗┡└]")  # a line of a table (free text lines wrap as the terminal does)
DURATION = re.compile(r"\d+(?:\.\d+)? s\b")  # how long a run took: not the same twice
BANK = ["The bank approved my loan.", "She opened an account at the bank.", "The bank raised its rates.",
        "We sat on the bank of the river.", "Reeds grew along the bank of the stream.",
        "The boat drifted to the far bank."]
LONG = "We sat on the grassy bank of the wide river and watched the boats go by."


def sentences(*texts: str) -> list[str]:
    return [a for t in texts for a in ("-s", t)]


@dataclass(frozen=True)
class Case:
    """A command, its arguments and, by JSON key, how its table prints the values it shows."""

    name: str
    args: tuple[str, ...]
    shown: dict[str, Callable[[float], str]] = field(default_factory=dict)
    model: str | None = None  # a packaged model it needs
    json: bool = True  # it has --json


F3 = fmt
F2 = "{:.2f}".format


CASES = [
    Case("contextualize", ("contextualize", LONG, "-w", "bank", "-p", "money", "-p", "river"),
         {"weight": F3, "static_cosine": F3, "contextual_cosine": F3}),
    Case("compare", ("compare", BANK[0], BANK[3], "-w", "bank"), {"cosine_by_layer": F3}),
    Case("compare-sentences", ("compare-sentences", BANK[0], BANK[3]), {"cosine_by_layer": F3}),
    Case("explore", ("explore", "bank", *sentences(*BANK)), {"matrix": F3, "spread": F3, "mean_cosine": F3}),
    Case("senses", ("senses", "bank", *sentences(*BANK)), {"score_by_k": F3}),
    Case("layers", ("layers", BANK[0], BANK[3], "--pair", BANK[1], BANK[4], "--pair", BANK[2], BANK[5],
                    "-w", "bank"), {"cosine_by_layer": F3}),
    Case("attention", ("attention", LONG, "-w", "bank", "--model", "minilm"), {"per_head": F3, "mean": F3},
         model="minilm"),
    Case("attention --occlusion", ("attention", LONG, "-w", "bank", "--model", "minilm", "--occlusion"),
         {"occlusion": F3, "attention": F3, "spearman_attention": F3}, model="minilm"),
    Case("rank", ("rank", "PAIRS"), {"spearman": F3, "kendall_tau": F3}),
    Case("geometry", ("geometry", *sentences(*BANK), "--words", "bank,the"),
         {"anisotropy": F3, "self_similarity": F3, "intra_sentence": F3}),
    Case("neighbours", ("neighbours", "bank", "-k", "12"), {"cosine": F3}),
    Case("neighbours --in", ("neighbours", "bank", "--in", BANK[3], "--vectors", "glove-6b-50d",
                             "--method", "average", "-k", "12"), {"cosine": F3}),
    Case("analogy", ("analogy", "man", "king", "woman", "-k", "8"), {"score": F3}),
    Case("predict", ("predict", "The capital of France is", "--model", "smollm2", "-k", "10"),
         {"probability": "{:.4g}".format}, model="smollm2"),
    Case("lens", ("lens", "The capital of France is", "--model", "smollm2", "-k", "4", "--track", "Paris",
                  "--track", "London"), {"rank": str, "probability": F3}, model="smollm2"),
    Case("eval", ("eval", "scws", "--vectors", "glove-6b-50d", "--method", "average", "--split", "sample"),
         {"spearman": F3}),
    Case("static distill", ("static", "distill", "CORPUS", "--model", "minilm", "--layers", "all",
                            "--min-count", "1", "-o", "OUT/table.npz"), {"words": str}, model="minilm"),
    Case("models list", ("models", "list")),
    Case("data list", ("data", "list")),
    Case("cache info", ("cache", "info")),
    Case("index search", ("index", "search", "--db", "DB", BANK[3], "--word", "bank", "-k", "5"),
         {"similarity": F3}, model="minilm"),
    Case("index stats", ("index", "stats", "--db", "DB"), model="minilm"),
    Case("bias list", ("bias", "list")),
    Case("bias weat", ("bias", "weat", "all", "--permutations", "1000"), {"effect_size": "{:.3f}".format}),
    Case("bias seat", ("bias", "seat", "career_family", "--model", "minilm", "--permutations", "1000"),
         {"effect_size": "{:.3f}".format}, model="minilm"),
    Case("bias ceat", ("bias", "ceat", "weat6", "--model", "minilm", "--corpus", "CEAT", "--samples", "200"),
         {"effect_size": F2, "ci": F2, "q": "{:.0f}".format, "i2": F2}, model="minilm"),
    Case("probe", ("probe", "pos", "--model", "minilm", "--data-dir", "SEMCOR"),
         {"accuracy": F3, "control_accuracy": F3, "selectivity": F3, "n_train": str}, model="minilm"),
    Case("cka", ("cka", "--model", "minilm", "--sentences", "CORPUS"), {"matrix": F3}, model="minilm"),
    Case("demo", ("demo", "--model", "none", "--out", "OUT/demo"), json=False),
]


@pytest.fixture(scope="module")
def files(tmp_path_factory, data_dir) -> dict[str, str]:
    """The files the cases name in capitals: word pairs, a corpus, an index, CEAT's corpus."""
    root = tmp_path_factory.mktemp("tables")
    pairs = root / "pairs.txt"
    pairs.write_text("bank money 8\nbank river 6\nriver water 9\nmoney cash 9\nbank loan 7\nriver loan 1\n")
    corpus = root / "corpus.txt"
    corpus.write_text("\n".join(pick_lines(read_lines(data_dir / "corpora" / "brown_plain.txt"),
                                           ["bank", "river", "money"], per_word=8)) + "\n")
    from contextlens.bias import SET_KEYS, get_test
    from tests.tiny_semcor import tiny_docs, write_semcor

    weat6 = [w for key in SET_KEYS for w in getattr(get_test("weat6").sets, key)]
    ceat = root / "ceat.txt"
    ceat.write_text("\n".join(pick_lines(read_lines(data_dir / "corpora" / "brown_plain.txt"), weat6,
                                         per_word=2)) + "\n")
    return {"PAIRS": str(pairs), "CORPUS": str(corpus), "CEAT": str(ceat), "DB": str(root / "usages.lance"),
            "OUT": str(root / "out"), "SEMCOR": str(write_semcor(root / "semcor", tiny_docs()))}


@pytest.fixture(scope="module")
def index(files) -> str:
    need("lancedb")
    need_model("minilm")
    result = CliRunner().invoke(app, ["index", "build", files["CORPUS"], "--db", files["DB"], "--words",
                                      "bank"])
    assert result.exit_code == 0, result.output
    return files["DB"]


def run(args: list[str], columns: int, monkeypatch) -> str:
    monkeypatch.setenv("COLUMNS", str(columns))
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return result.stdout


def printed_numbers(text: str) -> Counter:
    """The numbers of a command's output, each as often as it is printed, a split table's
    notes and the row labels its continued parts repeat left out."""
    counted, continued = Counter(), False
    text = DURATION.sub("", PART.sub(lambda m: "CONTINUED" if "continued" in m.group(0) else "", text))
    for line in text.splitlines():
        if "CONTINUED" in line:
            continued = True
            continue
        if continued and line[:1] in "│┃":
            line = line[1:].split(line[0], 1)[-1]  # the repeated first column
        if line.startswith("└"):
            continued = False
        counted.update(NUMBER.findall(line))
    return counted


def leaves(obj, keys: set[str], key: str | None = None) -> Iterator[tuple[str, float]]:
    """The numbers under ``keys`` anywhere in a JSON object, with their key."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from leaves(v, keys, k if k in keys else key)
    elif isinstance(obj, list):
        for v in obj:
            yield from leaves(v, keys, key)
    elif isinstance(obj, int | float) and not isinstance(obj, bool) and key is not None:
        yield key, obj


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_table_at_80_columns_in_a_pipe_shows_every_number_whole(case, files, request, monkeypatch):
    if case.model:
        need("torch")
        need_model(case.model)
    if case.name.startswith("index"):
        request.getfixturevalue("index")
    if case.name == "cache info":  # a cache root of its own: the real one may change between the two runs
        root = request.getfixturevalue("tmp_path") / "cache"  # (the other test worker writes to it)
        (root / "onnx" / "an-export").mkdir(parents=True)
        (root / "onnx" / "an-export" / "model.onnx").write_bytes(b"x" * 123_456)
        monkeypatch.setenv("CONTEXTLENS_CACHE", str(root))
    args = [files.get(a, a) for a in case.args]
    args = [a.replace("OUT", files["OUT"]) if a.startswith("OUT/") else a for a in args]
    narrow, wide = run(args, 80, monkeypatch), run(args, 1000, monkeypatch)
    assert BOX.search(narrow)
    long_lines = [line for line in narrow.splitlines() if len(line) > 80 and BOX.search(line)]
    assert not long_lines, long_lines
    assert not CUT.search(narrow), narrow
    assert printed_numbers(narrow) == printed_numbers(wide), f"at 80 columns:\n{narrow}\nwide:\n{wide}"
    if not case.shown:
        return
    data = json.loads(run([*args, "--json"], 80, monkeypatch))
    printed = printed_numbers(narrow)
    found = list(leaves(data, set(case.shown)))
    assert found, f"no number under {sorted(case.shown)} in the --json output"
    for key, value in found:
        text = case.shown[key](value)
        assert printed[text] > 0, f"{key} = {value} is not shown whole as {text!r} at 80 columns:\n{narrow}"
