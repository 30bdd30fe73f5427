"""The one corpus pass, and what runs on it.

- :mod:`.run`: :func:`~.run.corpus_pass` (stream → plan → runner → ``on_chunk`` → checkpoint and
  progress), which the usage index (:mod:`contextlens.index`) and distillation both run;
- :mod:`.rows`: the typed rows a pass hands on (planned sentences, usage rows, encoded chunks);
- :mod:`.encoding` (planning sentences, the local runner, the index's encoder) and
  :mod:`.ray_engine` (the Ray Data runner: ``contextlens[scale]``, several nodes, a lost node's
  chunk encoded again);
- :mod:`.distill`: static vectors distilled from every usage of a word in context.

Floor 6 (ARCHITECTURE.md): imports :mod:`contextlens.encoders`, :mod:`contextlens.corpus` and the
floors below; never analysis, evaluation or the index (the index imports it).
"""
