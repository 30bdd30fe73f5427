"""Analyses: functions of Encodings (or of an encoder and sentences) that return plain data.

Usages of a word (:mod:`.usages`) and their cosines (:mod:`.similarity`, :mod:`.explore`,
:mod:`.layers`, :mod:`.incontext`, :mod:`.sentences`), senses (:mod:`.senses`, :mod:`.spectral`),
projections (:mod:`.projection`), pair rankings and geometry (:mod:`.ranking`, :mod:`.geometry`),
neighbours (:mod:`.neighbours`), attention and what explains a vector (:mod:`.attribution`,
:mod:`.flow`, :mod:`.occlusion`, :mod:`.faithfulness`, :mod:`.sublayers`, :mod:`.patching`), what
layers know (:mod:`.probing`, :mod:`.cka`, :mod:`.layerstack`), the toy lab's plane (:mod:`.toy`) and
how to read a causal model's figures (:mod:`.reading`).

Floor 5 (ARCHITECTURE.md): imports the floors below it — the single modules, ``vectors``,
``corpus``, ``datasets`` (the probes' data), ``static`` (a reference table) and
:mod:`contextlens.encoders` — and never ``passes``, ``evaluation``, ``index`` or anything above
them: what it needs from above is handed to it (``senses(wordnet=...)`` takes a
:class:`~contextlens.analysis.senses.SenseNamer`). numpy, SciPy and scikit-learn; never torch.
"""
