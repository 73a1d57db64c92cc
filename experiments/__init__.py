"""Reproductions of the DaRRM paper's experiments and extensions."""
