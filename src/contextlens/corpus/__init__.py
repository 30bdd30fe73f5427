"""A corpus read at scale: the text of a file, a folder or lines, as lines, sentences, text
blocks, and the usages of target words.

- :mod:`.reading`: stream files, ``.gz``, folders or in-memory lines as lines, sentences or
  text blocks, without holding the corpus in memory;
- :mod:`.targets`: a corpus as numbered sentences of documents, and the usages of target
  words in them (:class:`~.targets.WordMatcher`, :class:`~.targets.Occurrence`, stable usage ids).

Floor 2 (ARCHITECTURE.md): imports only ``errors``, ``files`` and ``text``; the passes over a
corpus (encoding it, the usage index, distillation) are :mod:`contextlens.passes`, above the
encoders. Nothing is imported here: ``contextlens.corpus.reading`` stays light (no numpy).
"""
