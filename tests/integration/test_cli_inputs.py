"""Careless and hostile inputs through the command line (issue 21, items 1, 6, 8 and 9): each
is exit code 2 and one line naming what was wrong and what the command-line user can do, and
no input file is ever replaced. The generic output == input check over every command is in
``test_cli_fuzz.py``; here are the folder cases and the messages."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from contextlens.cli import app
from contextlens.vectors import EmbeddingTable
from tests.progress_lines import progress_line

runner = CliRunner()
WORDS = {"bank": [1, 1, 0], "money": [1, 0, 0.1], "river": [0, 1, 0.1], "the": [0.1, 0.1, 1],
         "sat": [0.5, 0.2, 0]}


def fails(*args: str) -> str:
    """Run a command that must fail cleanly: exit 2, one line on stderr, nothing on stdout."""
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exc_info
    lines = result.stderr.strip().splitlines()
    # before it, in a pipe, only the progress lines of what it loaded ("loading … with torch...",
    # "…: done in 0.1 s")
    assert (lines and lines[-1].startswith("error: ")
            and all(progress_line(x) for x in lines[:-1])), result.stderr
    assert result.stdout == "" and "Aborted" not in result.output
    return lines[-1].removeprefix("error: ")


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    path = tmp_path_factory.mktemp("inputs") / "toy.npz"
    EmbeddingTable(list(WORDS), list(WORDS.values()), name="toy").save(path)
    return str(path)


@pytest.fixture
def corpus_dir(tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "a.txt").write_text("the bank sat by the river\nthe bank lends money\n" * 5)
    return folder


def test_an_output_among_the_text_files_of_a_corpus_folder_is_refused(corpus_dir):
    says = fails("static", "build", corpus_dir, "--method", "counts", "--min-count", "1", "-o",
                 corpus_dir / "a.txt")
    assert says == (f"--out {corpus_dir / 'a.txt'} is a file of the input folder CORPUS {corpus_dir}: "
                    "writing it "
                    "would destroy that input; choose another output path")
    assert (corpus_dir / "a.txt").read_text().startswith("the bank sat")
    table = corpus_dir / "t.npz"  # not a text file: not read as the corpus, so a second run may replace it
    for _ in range(2):
        result = runner.invoke(app, ["static", "build", str(corpus_dir), "--method", "counts", "--min-count",
                                     "1", "-o", str(table), "--json"])
        assert result.exit_code == 0, result.output
    assert EmbeddingTable.load(table).keys[0] == "the"


def test_an_output_folder_that_is_an_input_folder_is_refused(corpus_dir):
    says = fails("index", "build", corpus_dir, "--words", "bank", "--db", corpus_dir)
    assert says.startswith(f"--db {corpus_dir} is the input CORPUS {corpus_dir} (the same folder): writing "
                           "into it")
    assert sorted(p.name for p in corpus_dir.iterdir()) == ["a.txt"]


@pytest.mark.parametrize(("path", "says"), [
    ("/dev/null",
     "/dev/null is not a regular file (a device, a pipe or a socket), so not a sets file; give a JSON "
                  'file {"X": [...], "Y": [...], "A": [...], "B": [...]}'),
    ("/",
     '/ is a folder, not a sets file; give a JSON file {"X": [...], "Y": [...], "A": [...], "B": [...]}'),
    ("/proc/self/mem", '/proc/self/mem: cannot be read (Input/output error); give a JSON file {"X": [...], '
                       '"Y": [...], "A": [...], "B": [...]}'),
])
def test_sets_that_are_not_a_file_say_what_they_are(toy, path, says):
    assert fails("bias", "weat", "--sets", path, "--vectors", toy) == says


@pytest.mark.parametrize("body", ["[" * 100_000 + "]" * 100_000, '{"X": [' + "9" * 5000 + "]}",
                                  '{"X": ["\\ud800", "b"], "Y": ["c", "d"], "A": ["e"], "B": ["f"]}',
                                  '{"name": "\\udfff", "X": ["a", "b"], "Y": ["c", "d"], "A": ["e"], "B": '
                                  '["f"]}'])
def test_sets_files_that_used_to_traceback(toy, tmp_path, body):
    (tmp_path / "s.json").write_text(body)
    assert fails("bias", "weat", "--sets", tmp_path / "s.json", "--vectors",
                 toy).startswith(f"{tmp_path}/s.json:")


@pytest.mark.parametrize("option", ["--sentences", "--labels"])
def test_an_unreadable_input_names_its_path(toy, option):
    extra = ["-s", "the bank", "-s", "a bank"] if option == "--labels" else []
    says = fails("senses", "bank", option, "/proc/self/mem", *extra, "--vectors", toy)
    assert says.startswith("/proc/self/mem: cannot be read (Input/output error)")


def test_sentences_with_line_separators_and_cr_line_ends(toy, tmp_path):
    path = tmp_path / "s.txt"
    path.write_bytes("the bank\u2028sat by the river\rthe bank lends money\r".encode())
    result = runner.invoke(app, ["explore", "bank", "--sentences", str(path), "--vectors", toy, "--method",
                                 "average", "--json"])
    assert result.exit_code == 0, result.output
    import json

    assert json.loads(result.stdout)["words"][0]["sentences"] == ["the bank\u2028sat by the river",
                                                                   "the bank lends money"]


# -- with a tiny random-weight BERT ------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from tests.integration.tiny_models import tiny_bert

    return str(tiny_bert(tmp_path_factory.mktemp("tiny")))


LONG = " ".join(["the bank sat by the river and"] * 900)  # 6,300 words: dense attention over the bound
# the texts given, numbered from 0 as the JSON numbers them, the text quoted (cut at 60 characters)
TOO_LONG = ("text 0 ('the bank sat by the river and the bank sat by the river and…') has 6,300 words: its "
            "attention")


@pytest.mark.parametrize(("command", "starts"), [
    (["compare-sentences", LONG, "the bank lends money"], TOO_LONG),
    (["compare-sentences", LONG[:1400], "the bank lends money"],
     "this text has no sentence vector (not computed: "
                                                                 "the text ran in 5 windows of at most 128 "
                                                                 "pieces)"),
    (["attention", LONG, "-w", "river", "--occurrence", "0"], TOO_LONG),
])
def test_a_text_too_long_says_what_the_cli_user_can_do(tiny, command, starts):
    says = fails(*command, "-m", tiny)
    assert says.startswith(starts) and says.endswith("; give a shorter text")
    assert "=" not in says  # no library keyword (attention=False, targets=) that no command takes


@pytest.mark.parametrize("damage", [b"", b"PK\x03\x04 truncated", b"not a checkpoint"])
def test_a_bad_distill_checkpoint_is_one_line_naming_it(tiny, tmp_path, damage):
    corpus = tmp_path / "c.txt"
    corpus.write_text("the bank sat by the river\nthe bank lends money\n" * 3)
    (tmp_path / "t.npz.distill.npz").write_bytes(damage)
    says = fails("static", "distill", corpus, "-m", tiny, "-o", tmp_path / "t.npz", "--min-count", "1")
    checkpoint = tmp_path / "t.npz.distill.npz"
    assert says.startswith(f"{checkpoint}: not a readable distillation checkpoint (")
    assert says.endswith(f"; delete it to start over from the first sentence (rm {checkpoint})")
