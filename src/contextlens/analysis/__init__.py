"""Analyses: functions of Encodings (or of an encoder and sentences) that return plain data.

Usages of a word (:mod:`.usages`) and their cosines (:mod:`.similarity`, :mod:`.explore`,
:mod:`.layers`, :mod:`.incontext`, :mod:`.sentences`), senses (:mod:`.senses`, :mod:`.spectral`),
projections (:mod:`.projection`), pair rankings and geometry (:mod:`.ranking`, :mod:`.geometry`),
neighbours (:mod:`.neighbours`), attention and what explains a vector (:mod:`.attribution`,
:mod:`.flow`, :mod:`.occlusion`, :mod:`.faithfulness`, :mod:`.sublayers`, :mod:`.patching`), what
layers know (:mod:`.probing`, :mod:`.cka`, :mod:`.layerstack`), the toy lab's plane (:mod:`.toy`) and
how to read a causal model's figures (:mod:`.reading`).

Floor: imports ``errors``, ``text``, ``vectors``, ``files``, ``bounds``, ``progress``, ``quiet``,
``disk_cache``, ``corpus``, ``static`` (a reference table) and :mod:`contextlens.encoders`; never
views, plots, cli or web. Lazily, inside a function: :mod:`contextlens.evaluation`'s encoding cache
and dataset readers (probes, CKA, the layer stack), ``index.wordnet_map`` (naming senses by WordNet)
and torch (patching and gradient faithfulness run the model's own hooks). numpy, SciPy and
scikit-learn otherwise.
"""
