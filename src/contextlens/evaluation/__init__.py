"""Evaluation: the accuracy tasks behind ``contextlens eval`` (timing lives in the top-level
``benchmarks/``): the standard datasets (:mod:`contextlens.evaluation.datasets`), fetching them
(:mod:`contextlens.evaluation.fetch`), one module per task (:mod:`.lexical`, :mod:`.wic`,
:mod:`.wsd` with :mod:`.lmms` and :mod:`.glosses`, :mod:`.coarsewsd`, :mod:`.cosimlex`, :mod:`.scws`),
the target words' vectors and their cache (:mod:`.targets`, :mod:`.cache`), the published figures
(:mod:`.references`) and :func:`~.runner.evaluate` over them all.

Floor: imports ``errors``, ``text``, ``vectors``, ``files``, ``disk_cache``,
:mod:`contextlens.encoders` and :mod:`contextlens.analysis`; never index, views, plots, cli or web.
nltk (WordNet) is imported lazily, by the readers that need it.
"""
