"""Simulations of the DaRRM paper (Section 6.1, Appendix D.1): Figures 2, 6, 7, 8, 9 and Table 3.

Pure computation in :mod:`.compute` / :mod:`.expected_error` / :mod:`.table3`, settings in
:mod:`.figures`, files in :mod:`.output` and :mod:`.plots`; :func:`run_all` does everything
(imported on first use, :mod:`darrm._lazy`, so ``darrm-experiments --help`` stays light).
"""

from typing import TYPE_CHECKING

from darrm._lazy import lazy_exports

if TYPE_CHECKING:
    from .runner import run_all as run_all

__all__ = ["run_all"]

__getattr__, __dir__ = lazy_exports(__name__, globals(), {"run_all": ".runner"}, __all__)
