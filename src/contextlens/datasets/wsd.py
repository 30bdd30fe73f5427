"""The WSD unified evaluation framework (Raganato, Camacho-Collados & Navigli, EACL 2017).

``wsd/eval/<name>/<name>.data.xml``::

    <corpus><text id="d000"><sentence id="d000.s000">
      <wf lemma="you" pos="PRON">Your</wf>
      <instance id="d000.s000.t000" lemma="refer" pos="VERB">referred</instance> ...

and ``<name>.gold.key.txt`` lines ``instance_id key [key ...]`` (WordNet 3.0 sense keys).
Every ``wf`` and ``instance`` is one token, in document order; an instance's ``index`` is
its token position in the sentence. A multiword instance (``lemma="point_out"``, text
``pointed out``) stays one token, as in the file.

>>> import tempfile, pathlib
>>> root = pathlib.Path(tempfile.mkdtemp())
>>> d = root / "wsd/eval/semeval2007"
>>> d.mkdir(parents=True)
>>> _ = (d / "semeval2007.data.xml").write_text('''<corpus><text id="d0"><sentence id="d0.s0">
... <wf lemma="the" pos="DET">The</wf>
... <instance id="d0.s0.t0" lemma="bank" pos="NOUN">bank</instance>
... </sentence></text></corpus>''')
>>> _ = (d / "semeval2007.gold.key.txt").write_text("d0.s0.t0 bank%1:14:00::\\n")
>>> sentences, gold = load_wsd_eval(root, "semeval2007")
>>> sentences[0].tokens, sentences[0].instances[0].index, gold["d0.s0.t0"]
(('The', 'bank'), 1, ('bank%1:14:00::',))
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from ..errors import EmptyInputError, FileFormatError, check_choice
from ._io import numbered
from .registry import WSD_EVAL_NAMES, require

__all__ = ["WsdInstance", "WsdSentence", "load_wsd_eval", "load_gold_keys", "WSD_EVAL_NAMES", "WSD_POS"]

WSD_POS = ("NOUN", "VERB", "ADJ", "ADV")


@dataclass(frozen=True)
class WsdInstance:
    """A word to disambiguate: ``tokens[index]`` of its sentence. ``keys`` holds its gold
    sense keys where the corpus carries them (SemCor); evaluation sets keep their gold
    in a separate file, so their instances have ``keys == ()``."""

    id: str
    lemma: str
    pos: str
    index: int
    keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class WsdSentence:
    """A sentence: its tokens with their lemmas and POS tags, and the instances in it."""

    id: str
    tokens: tuple[str, ...]
    lemmas: tuple[str, ...]
    pos: tuple[str, ...]
    instances: tuple[WsdInstance, ...]


def _attr(path: Path, line_no: int, elem: ET.Element, name: str) -> str:
    value = elem.get(name)
    if value is None:
        raise FileFormatError(path, line_no, f"<{elem.tag}> has no {name!r} attribute")
    return value


def _sentences(path: Path) -> list[WsdSentence]:
    parser = ET.XMLPullParser(events=("start", "end"))
    out: list[WsdSentence] = []
    current = None  # (id, tokens, lemmas, pos, instances) of the open sentence
    with open(path, "rb") as f:
        for line_no, line in enumerate(f, 1):
            try:
                parser.feed(line)
                events = list(parser.read_events())
            except ET.ParseError as e:
                raise FileFormatError(path, e.position[0], f"not well-formed XML: {e}") from None
            for event, elem in events:
                if elem.tag == "sentence":
                    if event == "start":
                        current = (_attr(path, line_no, elem, "id"), [], [], [], [])
                    else:
                        sid, tokens, lemmas, pos, instances = current
                        out.append(WsdSentence(sid, tuple(tokens), tuple(lemmas), tuple(pos),
                                               tuple(instances)))
                        current = None
                        elem.clear()
                elif event == "end" and elem.tag in ("wf", "instance"):
                    if current is None:
                        raise FileFormatError(path, line_no, f"<{elem.tag}> outside a <sentence>")
                    _, tokens, lemmas, pos, instances = current
                    text = (elem.text or "").strip()
                    if not text:
                        raise FileFormatError(path, line_no, f"<{elem.tag}> holds no word")
                    lemma, tag = _attr(path, line_no, elem, "lemma"), _attr(path, line_no, elem, "pos")
                    if elem.tag == "instance":
                        instances.append(WsdInstance(_attr(path, line_no, elem, "id"), lemma, tag,
                                                     len(tokens)))
                    tokens.append(text)
                    lemmas.append(lemma)
                    pos.append(tag)
    try:
        parser.close()
    except ET.ParseError as e:
        raise FileFormatError(path, e.position[0], f"not well-formed XML (truncated file?): {e}") from None
    return out


def load_gold_keys(path: str | Path) -> dict[str, tuple[str, ...]]:
    """``instance id → sense keys`` from a framework key file (``id key [key ...]`` lines)."""
    path = Path(path)
    gold: dict[str, tuple[str, ...]] = {}
    for line_no, line in numbered(path, what="gold keys"):
        fields = line.split()
        if len(fields) < 2:
            raise FileFormatError(path, line_no, "expected 'instance_id sense_key [sense_key ...]'")
        if fields[0] in gold:
            raise FileFormatError(path, line_no, f"instance {fields[0]!r} has a second gold line")
        gold[fields[0]] = tuple(fields[1:])
    return gold


def load_wsd_eval(root: str | Path, name: str) -> tuple[list[WsdSentence], dict[str, tuple[str, ...]]]:
    """``(sentences, gold)`` of evaluation set ``name`` (senseval2, senseval3, semeval2007,
    semeval2013, semeval2015 or ALL) under data directory ``root``.

    The gold file must give keys for exactly the instances of the data file; otherwise a
    FileFormatError says how many differ and shows a few ids.
    """
    root = Path(root)
    check_choice("WSD evaluation set", name, WSD_EVAL_NAMES)
    data_path, gold_path = require(root, "wsd", f"wsd/eval/{name}/{name}.data.xml",
                                   f"wsd/eval/{name}/{name}.gold.key.txt")
    sentences = _sentences(data_path)
    ids = [inst.id for s in sentences for inst in s.instances]
    if not ids:
        raise EmptyInputError(f"{data_path} holds no <instance>; check that it is a framework data file")
    gold = load_gold_keys(gold_path)
    no_gold = [i for i in ids if i not in gold]
    extra = sorted(set(gold) - set(ids))
    if no_gold or extra:
        raise FileFormatError(gold_path, None, f"the gold keys do not match {data_path.name}: {len(no_gold)} "
                                               f"instance(s) without a key (e.g. {no_gold[:3]}), "
                                               f"{len(extra)} key line(s) for unknown instances (e.g. "
                                               f"{extra[:3]})")
    return sentences, gold
