"""A corpus read at scale, and the passes over it.

- :mod:`.reading`: stream files, ``.gz``, folders or in-memory lines as lines, sentences or
  text blocks, without holding the corpus in memory;
- :mod:`.targets`: a corpus as numbered sentences of documents, and the usages of target
  words in them (:class:`~.targets.WordMatcher`, stable usage ids);
- :mod:`.rows`: the typed rows a pass hands on (planned sentences, usage rows, encoded chunks);
- :mod:`.passes`: the one corpus pass (stream → plan → runner → ``on_chunk`` → progress) that
  the usage index (:mod:`contextlens.index`) and distillation both run;
- :mod:`.encoding` (the local runner) and :mod:`.ray_engine` (the Ray Data runner);
- :mod:`.distill`: static vectors distilled from every usage of a word in context.

Nothing is imported here: ``contextlens.corpus.reading`` stays light (no numpy).
"""
