"""Simulations of the DaRRM paper (Section 6.1, Appendix D.1): Figures 2, 6, 7, 8, 9 and Table 3.

Pure computation in :mod:`.compute` / :mod:`.expected_error` / :mod:`.table3`, settings in
:mod:`.figures`, files in :mod:`.output` and :mod:`.plots`; :func:`run_all` does everything.
"""

from .runner import run_all

__all__ = ["run_all"]
