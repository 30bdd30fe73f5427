"""A small copy of the shared data folder, for tests that run a command as a user writes it
(the README's, every command with --model) where the real run would take minutes: the
same layout, every dataset linked to the shared one except WiC (its first lines) and the
corpora (only lines holding some chosen words, a few per word)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

WIC_LINES = {"train": 60, "dev": 30}  # pairs kept per split: enough for both classes and a fit


def pick_lines(lines: Iterable[str], words: Iterable[str], per_word: int) -> list[str]:
    """The lines (in order) that hold one of ``words`` while that word has fewer than
    ``per_word`` lines: a lower-case word matches a token in any case, another (a name)
    only as written, as CEAT's corpus reader matches them.

    >>> pick_lines(["the Bank", "a bank", "Bill paid", "no"], ["bank", "Bill"], per_word=1)
    ['the Bank', 'Bill paid']
    """
    wanted = list(dict.fromkeys(words))
    any_case = {w for w in wanted if w.islower()}
    as_written = set(wanted) - any_case
    left = dict.fromkeys(wanted, per_word)
    kept = []
    for line in lines:
        tokens = line.split()
        hits = {t.lower() for t in tokens if t.lower() in any_case} | {t for t in tokens if t in as_written}
        if any(left[w] > 0 for w in hits):
            kept.append(line)
            for w in hits:
                left[w] -= 1
    return kept


def read_lines(path: Path) -> list[str]:
    """The UTF-8 lines of a corpus file (a line that is not UTF-8 is left out)."""
    lines = []
    for raw in path.read_bytes().splitlines():
        try:
            lines.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            continue
    return lines


def small_corpus(source: Path, words: Iterable[str], per_word: int) -> list[str]:
    """Lines of every ``*_plain.txt`` corpus in ``source`` holding ``words`` (see :func:`pick_lines`)."""
    words = list(words)
    return [line for path in sorted(source.glob("*_plain.txt"))
            for line in pick_lines(read_lines(path), words, per_word)]


def small_data_dir(root: Path, source: Path, *, corpus_words: Iterable[str] | None = None,
                   per_word: int = 2) -> Path:
    """A data folder in ``root``: ``source``'s datasets linked, WiC cut to its first lines
    (:data:`WIC_LINES`), and ``corpora/`` holding, per corpus, only lines with
    ``corpus_words`` (at most ``per_word`` lines each; None: the corpora linked whole)."""
    root.mkdir(parents=True, exist_ok=True)
    for item in source.iterdir():
        if item.name != "wic" and (item.name != "corpora" or corpus_words is None):
            os.symlink(item, root / item.name)
    for split, n in WIC_LINES.items():
        folder = root / "wic" / split
        folder.mkdir(parents=True)
        for kind in ("data", "gold"):
            lines = (source / "wic" / split / f"{split}.{kind}.txt").read_text(encoding="utf-8").splitlines()
            (folder / f"{split}.{kind}.txt").write_text("\n".join(lines[:n]) + "\n", encoding="utf-8")
    if corpus_words is None:
        return root
    corpora = root / "corpora"
    corpora.mkdir()
    words = list(corpus_words)
    for path in sorted((source / "corpora").glob("*_plain.txt")):
        kept = pick_lines(read_lines(path), words, per_word)
        (corpora / path.name).write_text("\n".join(kept) + "\n", encoding="utf-8")
    return root
