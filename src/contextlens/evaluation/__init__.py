"""Evaluation: the accuracy tasks behind ``contextlens eval`` (timing lives in the top-level
``benchmarks/``): the standard datasets (:mod:`contextlens.datasets`), fetching them
(:mod:`contextlens.evaluation.fetch`), one module per task (:mod:`.lexical`, :mod:`.wic`,
:mod:`.wsd` with :mod:`.lmms` and :mod:`.glosses`, :mod:`.coarsewsd`, :mod:`.cosimlex`, :mod:`.scws`),
the published figures
(:mod:`.references`) and :func:`~.runner.evaluate` over them all.

Floor 6 (ARCHITECTURE.md): imports :mod:`contextlens.analysis`, :mod:`contextlens.encoders`,
:mod:`contextlens.datasets` and the floors below; never ``passes``, ``index``, views, plots, cli or
web. :mod:`.wordnet_map` names senses by WordNet (LMMS sense embeddings), for
``senses --wordnet`` and ``index senses --wordnet``. nltk (WordNet) is imported lazily.
"""
