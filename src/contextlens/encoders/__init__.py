"""Encoders: everything that turns sentences into vectors, and the one thing they all return.

:mod:`.base` holds :class:`~.base.Encoding` (per sentence: its words, a stack of layers of word vectors,
attention where there is some) and :class:`~.base.Encoder` (``encode``, ``dim``, ``layer_ids``,
``params``). The kinds: :mod:`.static` (a table lookup: layer 0 only), :mod:`.mixing` (neighbour
averaging and toy self-attention over a table), :mod:`.transformer` (a real model's layers, with
:mod:`.alignment` turning sub-word pieces into words); :mod:`.registry` builds one from a method name.
Around the transformer: its engines (:mod:`.engines`, :mod:`.onnx_engine`, :mod:`.standalone`,
:mod:`.prepare`), the models known by name and their cache (:mod:`.models`, :mod:`.model_cache`),
queries and keys (:mod:`.qk`; :mod:`.qk_numpy` without torch), the blocks inside a layer
(:mod:`.blocks`), gradients (:mod:`.gradients`) and the language-model readings (:mod:`.lm`,
:mod:`.lm_lens`, :mod:`.wordprob`, :mod:`.tuned_lens`).

Floor 4 (ARCHITECTURE.md): imports the floors below it (the single modules, ``vectors``,
``corpus`` for the tuned lens's training text, ``static`` for a packaged table, ``context`` for the
attention arithmetic); never analysis or anything above. The only part of contextlens that
imports torch and transformers: lazily, inside the functions that run a model, and torch not at
all when an ONNX export serves it. Also here: :mod:`.tokenized` (vectors of target words in
pre-tokenised sentences) and :mod:`.encoding_cache` (those vectors cached on disk), which the
evaluation tasks, probes and CKA read.
"""
