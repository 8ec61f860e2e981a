"""Whole histories: history files (CSV / JSON Lines), replay, and the numba batch kernel.

Builds on :mod:`sedma_elo.core`; never imports the storage, service or web layers.
"""
