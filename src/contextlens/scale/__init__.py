"""Distributed engines for corpus-scale work (Ray Data): ``contextlens[scale]``."""
