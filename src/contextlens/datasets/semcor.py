"""SemCor 3.0 with WordNet 3.0 sense keys, read straight from the NAF archive.

``wsd/semcor/semcor3.0_naf.tar.gz`` holds one NAF XML file per Brown document
(``semcor3.0/brown1/br-a01.naf`` ...)::

    <text><wf id="w1" sent="1">Fulton_County_Grand_Jury</wf> ...</text>
    <terms><term id="t1" lemma="group" pos="NNP">
      <span><target id="w1"/></span>
      <externalReferences><externalRef reftype="lexical_key" reference="1:03:00::"/> ...

A term with a ``lexical_key`` reference is a tagged instance; its sense key is
``lemma%lexical_key`` (a reference that already holds ``%`` is taken as it is). Tokens are
the ``wf`` elements (multiword expressions are already one ``wf`` joined by ``_``); a
term spanning several ``wf`` becomes one instance at its first token. Sentence ids are
``<doc>.s<sent>`` and instance ids ``<doc>.<term id>`` (``brown1/br-a01.t1``), unique over
the corpus. POS tags are mapped from the Penn tags of the NAF to the framework's tags
(NOUN, VERB, ADJ, ADV, ...); an instance's POS comes from its sense key (``%1`` noun,
``%2`` verb, ``%3``/``%5`` adjective, ``%4`` adverb).

Parsing the 221 MB of XML takes 40-60 s, so a whole read is kept, once complete, as a
pickle in the ``datasets`` cache (:mod:`contextlens.disk_cache`; named by a hash of the
archive and this reader's format version; the least recently used copies go beyond the
cache's bound): later whole reads take about 7 s. A damaged or unreadable copy is parsed
again; a read of chosen ``documents`` always parses.

>>> universal_tag("NNS"), universal_tag("VBD"), universal_tag(","), universal_tag("NN|SYM")
('NOUN', 'VERB', '.', 'NOUN')
"""

from __future__ import annotations

import functools
import hashlib
import logging
import pickle
import tarfile
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..disk_cache import DiskCache
from ..errors import EmptyInputError, FileFormatError, InputError, OutputPathError
from ..files import atomic_output
from .registry import require
from .wsd import WsdInstance, WsdSentence

__all__ = ["load_semcor", "universal_tag", "SEMCOR_ARCHIVE"]

log = logging.getLogger(__name__)
SEMCOR_ARCHIVE = "wsd/semcor/semcor3.0_naf.tar.gz"
PARSED_VERSION = 1  # bump when the sentences this reader makes change

_PENN = {
    **dict.fromkeys(("NN", "NNS", "NNP", "NNPS", "NP", "NPS"), "NOUN"),
    **dict.fromkeys(("VB", "VBD", "VBG", "VBN", "VBP", "VBZ", "MD"), "VERB"),
    **dict.fromkeys(("JJ", "JJR", "JJS"), "ADJ"),
    **dict.fromkeys(("RB", "RBR", "RBS", "WRB"), "ADV"),
    **dict.fromkeys(("PRP", "PRP$", "PP", "PR", "WP", "WP$"), "PRON"),
    **dict.fromkeys(("DT", "PDT", "WDT", "EX"), "DET"),
    **dict.fromkeys(("RP", "TO", "POS"), "PRT"),
    "IN": "ADP", "CC": "CONJ", "CD": "NUM",
}
_SS_TYPE = {"1": "NOUN", "2": "VERB", "3": "ADJ", "4": "ADV", "5": "ADJ"}


@functools.lru_cache(maxsize=512)
def universal_tag(penn: str) -> str:
    """The universal tag (Petrov et al. 2012, as the framework uses) of a Penn tag;
    punctuation is ``.``, anything else unknown ``X``; for ``A|B`` the first tag counts."""
    tag = penn.split("|")[0]
    if tag in _PENN:
        return _PENN[tag]
    return "." if tag and not any(c.isalnum() for c in tag) else "X"


def _sense_keys(term: ET.Element, lemma: str) -> tuple[str, ...]:
    keys: list[str] = []
    for ref in term.iter("externalRef"):
        value = ref.get("reference") or ""
        if ref.get("reftype") == "lexical_key" or "%" in value:
            key = value if "%" in value else f"{lemma}%{value}"
            if key not in keys:
                keys.append(key)
    return tuple(keys)


def _document(doc: str, root: ET.Element, where: str) -> list[WsdSentence]:
    """The sentences of one parsed NAF document."""
    sentences: dict[str, list] = {}  # sent → [tokens, lemmas, pos, instances], in text order
    position: dict[str, tuple[list, int]] = {}  # wf id → (its sentence's rows, token position)
    for wf in root.iter("wf"):
        wid, sent, text = wf.get("id"), wf.get("sent"), (wf.text or "").strip()
        if wid is None or sent is None or not text:
            raise FileFormatError(where, None, f"a <wf> without id, sent or text (id={wid!r})")
        rows = sentences.get(sent)
        if rows is None:
            rows = sentences[sent] = [[], [], [], []]
        position[wid] = (rows, len(rows[0]))
        rows[0].append(text)
        rows[1].append(text)
        rows[2].append(".")
    for term in root.iter("term"):
        tid, lemma = term.get("id"), term.get("lemma")
        tag = universal_tag(term.get("pos") or "")
        spots = [position.get(t.get("id")) for t in term.iter("target")]
        if tid is None or lemma is None or not spots or None in spots:
            raise FileFormatError(where, None,
                                  f"term {tid!r}: needs an id, a lemma and a span of known <wf> ids")
        rows = spots[0][0]
        for r, k in spots:
            if r is not rows:
                raise FileFormatError(where, None, f"term {tid!r} spans several sentences")
            rows[1][k] = lemma
            rows[2][k] = tag
        keys = _sense_keys(term, lemma) if term.find("externalReferences") is not None else ()
        if keys:
            pos = _SS_TYPE.get(keys[0].split("%", 1)[1][:1], tag)
            first = spots[0][1] if len(spots) == 1 else min(k for _, k in spots)
            rows[3].append(WsdInstance(f"{doc}.{tid}", lemma, pos, first, keys))
    return [WsdSentence(f"{doc}.s{sent}", tuple(t), tuple(lem), tuple(p),
                        tuple(sorted(inst, key=lambda i: i.index)))
            for sent, (t, lem, p, inst) in sentences.items()]


def _doc_name(member: str) -> str:
    """``semcor3.0/brown1/br-a01.naf`` → ``brown1/br-a01``."""
    parts = member.removesuffix(".naf").split("/")
    return "/".join(parts[1:]) if len(parts) > 2 else "/".join(parts)


def load_semcor(root: str | Path, *, documents: Iterable[str] | None = None) -> Iterator[WsdSentence]:
    """The sentences of SemCor 3.0, document by document, in archive order.

    Instances carry their gold ``keys``. ``documents`` (names like ``brown1/br-a01``)
    restricts the read to those documents (the archive is still streamed: a sample costs
    the decompression, not the parsing). Note that 9,420 of the 234,136 keys of this
    conversion are WordNet 1.6/2.x keys that WordNet 3.0 does not know (see
    :func:`~contextlens.datasets.wordnet.unknown_keys`); they are kept as published.
    """
    (archive,) = require(root, "semcor", SEMCOR_ARCHIVE)
    if documents is not None:
        return _parse(archive, set(documents))
    return _whole(archive)


def _parsed_copy(archive: Path) -> Path:
    """The cached copy's path: named by the archive's content (a SHA-256 of 19 MB takes
    ~0.05 s; size and time alone miss a rewrite within the clock's resolution)."""
    with open(archive, "rb") as f:
        digest = hashlib.file_digest(f, "sha256").hexdigest()[:16]
    return DiskCache("datasets").folder / f"semcor-{digest}-v{PARSED_VERSION}.pickle"


def _whole(archive: Path) -> Iterator[WsdSentence]:
    """Every sentence: from the parsed copy in the cache, else parsed (and the copy written
    once the whole archive was read)."""
    try:
        copy = _parsed_copy(archive)
    except OutputPathError as e:  # no cache folder: parse every time
        log.info("SemCor is parsed without a cached copy: %s", e)
        yield from _parse(archive, None)
        return
    cache = DiskCache("datasets", copy.parent)
    sentences = None
    with cache.use(copy):  # not evicted while it is read
        if copy.is_file():
            try:
                with open(copy, "rb") as f:
                    sentences = pickle.load(f)
            except Exception as e:  # noqa: BLE001 - a damaged copy of our own: parse again
                log.warning("the parsed copy of SemCor %s is damaged (%s); parsing the archive again",
                            copy, e)
    if isinstance(sentences, list) and sentences and isinstance(sentences[0], WsdSentence):
        yield from sentences
        return
    sentences = []
    for sentence in _parse(archive, None):
        sentences.append(sentence)
        yield sentence
    try:
        with atomic_output(copy) as tmp, open(tmp, "wb") as f:
            pickle.dump(sentences, f, protocol=pickle.HIGHEST_PROTOCOL)
        cache.stored(copy)
    except OutputPathError as e:
        log.info("could not keep a parsed copy of SemCor: %s", e)


def _parse(archive: Path, wanted: set[str] | None) -> Iterator[WsdSentence]:
    seen = 0
    try:
        with tarfile.open(archive, mode="r|gz") as tar:
            for member in tar:
                if not (member.isfile() and member.name.endswith(".naf")):
                    continue
                doc = _doc_name(member.name)
                if wanted is not None and doc not in wanted:
                    continue
                where = f"{archive}:{member.name}"
                try:
                    # whole bytes: faster than parse()
                    doc_root = ET.fromstring(tar.extractfile(member).read())
                except ET.ParseError as e:
                    raise FileFormatError(where, e.position[0], f"not well-formed XML: {e}") from None
                seen += 1
                yield from _document(doc, doc_root, where)
                if wanted is not None and seen == len(wanted):
                    break
    except (tarfile.TarError, EOFError, OSError) as e:
        raise FileFormatError(archive, None, f"not a readable .tar.gz archive ({e}); fetch it again with "
                                             "`contextlens data fetch semcor`") from None
    if seen == 0:
        what = f"none of the documents {sorted(wanted)[:5]}" if wanted is not None else "no .naf document"
        raise EmptyInputError(f"{archive} holds {what}")
    if wanted is not None and seen < len(wanted):
        raise InputError(f"{archive} holds only {seen} of the {len(wanted)} documents asked for; names look "
                         "like 'brown1/br-a01'")
