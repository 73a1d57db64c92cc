"""accounting: privacy accounting for private majority ensembles.

Composition theorems, DP-SGD accounting of teachers, GNMax calibration and
privacy amplification by shuffling.
"""
