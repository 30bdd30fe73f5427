"""WordNet 3.0 from the data directory's ``wordnet/`` folder, and the sense-key helpers WSD needs.

:func:`wordnet` gives an ``nltk.corpus.reader.WordNetCorpusReader`` over ``root/wordnet``
(the standard ``dict`` files: ``data.*``, ``index.*``, ``index.sense``, ``*.exc``,
``cntlist.rev``, ``lexnames``), one per folder, cached. Nothing is downloaded. Two nltk
details are handled here: nltk >= 3.9 only opens corpus folders listed in
``nltk.data.path`` (the folder is appended to it), and its reader's constructor maps
synsets to the default ``wordnet`` corpus package when the version differs from it,
which would need that package downloaded; that mapping only serves the multilingual
(OMW) functions, which a reader without an OMW reader cannot use, so it is skipped.

POS tags are the framework's: NOUN, VERB, ADJ, ADV.
"""

from __future__ import annotations

import functools
import logging
import warnings
from collections.abc import Iterable
from pathlib import Path

from ...errors import FileFormatError, MissingDependencyError, check_choice
from .registry import DATASETS, require
from .wsd import WSD_POS

__all__ = ["wordnet", "candidate_keys", "most_frequent_key", "key_synset", "unknown_keys", "WORDNET_POS"]

log = logging.getLogger(__name__)
WORDNET_POS = {"NOUN": "n", "VERB": "v", "ADJ": "a", "ADV": "r"}


@functools.lru_cache(maxsize=1)
def _reader_class():
    try:
        from nltk.corpus.reader.wordnet import WordNetCorpusReader
    except ImportError:
        raise MissingDependencyError("nltk", "bench", "Reading WordNet") from None

    class LocalWordNet(WordNetCorpusReader):
        """A WordNetCorpusReader that never reaches for the downloadable ``wordnet`` package."""

        def map_wn(self, version="wordnet"):
            return None

    return LocalWordNet


@functools.lru_cache(maxsize=8)
def _open(directory: str):
    import nltk

    if directory not in [str(p) for p in nltk.data.path]:
        nltk.data.path.append(directory)
    cls = _reader_class()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The multilingual functions are not available")
        try:
            reader = cls(directory, None)
        except (OSError, ValueError, AssertionError, IndexError) as e:
            raise FileFormatError(directory, None, f"not a WordNet dict folder nltk can read ({e}); it should "
                                                   "hold the WordNet 3.0 database files") from None
    log.info("WordNet %s read from %s", reader.get_version(), directory)
    return reader


def wordnet(root: str | Path):
    """The WordNet reader over ``root/wordnet`` (cached per folder).

    Raises DatasetMissingError naming any missing database file.
    """
    require(root, "wordnet", *DATASETS["wordnet"].files)
    return _open(str((Path(root) / "wordnet").resolve()))


def candidate_keys(wn, lemma: str, pos: str) -> list[str]:
    """The sense keys of ``lemma`` as a ``pos`` (NOUN, VERB, ADJ, ADV), in WordNet order.

    WordNet lists a lemma's senses by decreasing frequency in its sense-tagged corpora,
    so the first key is the most frequent sense. A multiword lemma may use ``_`` or
    spaces. A lemma WordNet does not have gives ``[]`` and a logged warning (the caller
    decides whether that is an error).
    """
    wn_pos = WORDNET_POS[check_choice("WordNet POS", pos, WSD_POS)]
    name = "_".join(lemma.split())
    keys: list[str] = []
    for lem in wn.lemmas(name, pos=wn_pos):
        key = lem.key()
        if key not in keys:
            keys.append(key)
    if not keys:
        log.warning("%r is not a %s in WordNet %s: it has no candidate sense", lemma, pos, wn.get_version())
    return keys


def most_frequent_key(wn, lemma: str, pos: str) -> str | None:
    """WordNet's first sense of ``lemma`` as a ``pos``: the most-frequent-sense baseline.

    This is the "WordNet first sense" baseline of the WSD literature: WordNet numbers a
    lemma's senses by their tag counts in its sense-tagged corpora (``cntlist``, mostly
    SemCor), so sense 1 is the most frequent one there, and lemmas SemCor never tagged
    still get an answer. (An MFS counted on SemCor 3.0 itself can differ for a few
    lemmas.) None, with the warning of :func:`candidate_keys`, when WordNet lacks the
    lemma.
    """
    keys = candidate_keys(wn, lemma, pos)
    return keys[0] if keys else None


def key_synset(wn, key: str):
    """The synset of sense key ``key``, or None with a logged warning when this WordNet
    does not know the key (e.g. a WordNet 1.6 key, or a typo)."""
    from nltk.corpus.reader.wordnet import WordNetError

    try:
        return wn.lemma_from_key(key).synset()
    except (WordNetError, ValueError, KeyError, AttributeError):
        log.warning("sense key %r is unknown to WordNet %s", key, wn.get_version())
        return None


@functools.lru_cache(maxsize=8)
def _sense_index(directory: str) -> frozenset[str]:
    path = Path(directory) / "index.sense"
    keys = set()
    with open(path, encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            fields = line.split()
            if len(fields) != 4 or "%" not in fields[0]:
                raise FileFormatError(path, line_no, "expected 'sense_key offset sense_number tag_count'")
            keys.add(fields[0])
    return frozenset(keys)


def unknown_keys(wn, keys: Iterable[str]) -> list[str]:
    """The keys of ``keys`` that this WordNet's ``index.sense`` does not list, in order
    (fast: one set look-up per key; nothing is logged)."""
    known = _sense_index(str(Path(wn.root.path)))
    return [k for k in keys if k.lower() not in known]
