"""The README's command lines as a reader types them, and the small data they run on where
the real run is long: read by ``tests/acceptance/test_readme.py`` (which runs them and
compares what they print) and by ``benchmarks/readme_commands.py`` (which times them).

- :func:`commands`: every command line of the README's ``text`` and ``sh`` blocks, in order;
- :func:`make_recipe`: the command lines ``make TARGET`` runs;
- :func:`reader_folder`: the folder the lines run in (``corpus/``) and the small data copy
  (``CONTEXTLENS_DATA``) they read, and the environment they run with (:func:`reader_env`).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.small_data import small_corpus, small_data_dir

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
CORPUS_WORDS = ["bank", "spring"]  # the words the README's index commands ask about (and weat6's, below)
CORPUS_PER_WORD = 5  # lines per word in the reader's corpus/
DATA_PER_WORD = 2  # lines per weat6 word in the small data folder's corpora


@dataclass(frozen=True)
class Block:
    """A fenced block of the README: its language, first line number and text."""

    language: str
    line: int
    text: str


@dataclass(frozen=True)
class Command:
    """One command line of a code block (continuations joined): where it is, what kind of
    block holds it, the line as written and, in a ``text`` block, the output shown under it."""

    line: int
    block: str  # text | sh
    text: str
    shown: str = ""

    @property
    def args(self) -> tuple[str, ...]:
        return tuple(shlex.split(self.text, comments=True))

    @property
    def id(self) -> str:
        return f"line{self.line}-{'-'.join(a for a in self.args[:3] if not a.startswith('-'))[:40]}"


def blocks(text: str) -> list[Block]:
    found, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        if lines[i].startswith("```") and len(lines[i]) > 3:
            start, body = i, []
            i += 1
            while not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            found.append(Block(lines[start][3:].strip(), start + 2, "\n".join(body)))
        i += 1
    return found


def _complete(command: str) -> bool:
    """Whether a shell command is whole: no continuation backslash, no open quote."""
    if command.endswith("\\"):
        return False
    try:
        shlex.split(command, comments=True)
    except ValueError:  # "No closing quotation"
        return False
    return True


def commands(text: str) -> list[Command]:
    r"""Every command line of the README's ``text`` and ``sh`` blocks, in order.

    >>> commands("```text\n$ contextlens compare a \\\n    b\n0.5\n```\n")
    [Command(line=2, block='text', text='contextlens compare a  b', shown='0.5')]
    >>> [c.text for c in commands("```sh\n# a comment\necho 'a\n  b' > f   # two lines\nmake demo\n```")]
    ["echo 'a\n  b' > f   # two lines", 'make demo']
    """
    found = []
    for block in blocks(text):
        if block.language not in ("text", "sh"):
            continue
        lines = block.text.splitlines()
        i = 0
        while i < len(lines):
            line = lines[i]
            if block.language == "text" and not line.startswith("$ "):
                i += 1
                continue
            if block.language == "sh" and (not line.strip() or line.lstrip().startswith("#")):
                i += 1
                continue
            start, command = i, line[2:] if block.language == "text" else line
            while not _complete(command):
                i += 1
                command = (
                    command[:-1] + " " + lines[i].strip()
                    if command.endswith("\\")
                    else command + "\n" + lines[i]
                )
            i += 1
            shown = []
            while block.language == "text" and i < len(lines) and not lines[i].startswith("$ "):
                shown.append(lines[i])
                i += 1
            found.append(Command(block.line + start, block.language, command, "\n".join(shown)))
    return found


def make_recipe(target: str) -> list[str]:
    """The command lines ``make TARGET`` runs, its set-up (the virtual environment) left out
    (``make`` must be installed)."""
    proc = subprocess.run(["make", "-n", "-o", ".venv/.installed", target], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return [line for line in proc.stdout.splitlines() if line.strip()]


def from_root(args: list[str]) -> list[str]:
    """The arguments with a file of the repository (``src/contextlens/data/...``) given from
    its root, since the reader's folder is not the repository.

    >>> from_root(["static", "build", "README.md", "-o", "x.npz"])[2] == str(ROOT / "README.md")
    True
    """
    return [str(ROOT / a) if (ROOT / a).is_file() else a for a in args]


def reader_folder(folder: Path, data: Path, small: Path) -> Path:
    """Make ``folder`` the reader's folder (its ``corpus/`` holds only the lines of the shared
    corpora in ``data`` with weat6's and :data:`CORPUS_WORDS`, :data:`CORPUS_PER_WORD` each)
    and ``small`` a small copy of ``data`` (WiC's first lines, the corpora cut to weat6's
    words, :data:`DATA_PER_WORD` lines each: :func:`tests.small_data.small_data_dir`);
    return ``small``, the ``CONTEXTLENS_DATA`` the lines run with."""
    from contextlens.bias import SET_KEYS, get_test

    weat6 = [w for key in SET_KEYS for w in getattr(get_test("weat6").sets, key)]
    small = small_data_dir(small, data, corpus_words=weat6, per_word=DATA_PER_WORD)
    (folder / "corpus").mkdir(parents=True)
    lines = small_corpus(data / "corpora", [*weat6, *CORPUS_WORDS], per_word=CORPUS_PER_WORD)
    (folder / "corpus" / "sentences.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return small


def reader_env(small: Path) -> dict[str, str]:
    """The environment the README's lines run in: this one, at the width the README was
    printed at, on the small data copy, with this Python's ``bin`` first on the path."""
    return {**os.environ, "COLUMNS": "80", "CONTEXTLENS_DATA": str(small),
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
