"""Benchmarks: the standard datasets (:mod:`contextlens.bench.datasets`), fetching them
(:mod:`contextlens.bench.fetch`), and one module per evaluation task."""
