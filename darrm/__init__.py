"""darrm: Data-dependent Randomized Response Majority (Jiang, Zhang, Joshi).

K private mechanisms vote 0/1; the vote count L selects a probability γ(L) of
releasing the true majority, else a fair coin.  This package provides the γ
families of the paper, the optimal γ from a linear program over the corners of
the privacy region, an independent certificate, γ table files and the mechanism.
"""

from __future__ import annotations

__version__ = "0.1.0"
