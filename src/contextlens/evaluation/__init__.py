"""Benchmarks: the standard datasets (:mod:`contextlens.evaluation.datasets`), fetching them
(:mod:`contextlens.evaluation.fetch`), and one module per evaluation task."""
