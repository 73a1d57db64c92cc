"""Warm starts for constraint generation: a nearby solve's multisets as the first cuts.

A solve at nearby (m, ε, Δ), or at K − 2, leaves a working set of corner multisets (its
checkpoint, :mod:`darrm.solver.checkpoint`) whose rows bind near its optimum.  Handed to the
next solve as :attr:`darrm.SolveOptions.warm_start`, they become its initial cut set, so its first
LP point already sits near the new optimum and fewer rounds are needed.

**Claim.**  A warm start can change the number of rounds, never the answer's guarantee: the
returned table is certified by the same exhaustive sweep and proven within the same ``gap_tol``
of the optimum of the full LP (Section 5, Eq. 2 folded as in :mod:`darrm.solver.rows`).

**Proof.**  A multiset is a vector of counts per corner *index* (:func:`darrm.privacy.corners.corners`
numbers the vertices of F the same way for every ε and Δ), summing to K.  For the new problem
every such vector is one of its corner multisets, and its row is derived afresh from the new
corners and e^{mε} (:func:`darrm.privacy.condition.folded_rows`): it is one of the rows of the
new full LP (Lemma 3.4 with Lemma 5.1).  A restricted LP over any subset of the full LP's rows
is a relaxation of it, so its Lagrangian bound stays a lower bound on the optimum
(:func:`darrm.solver.restricted_lp.lagrangian_bound`); upper bounds and every stop still come from
exhaustive sweeps only (:class:`darrm.solver.cutting_planes.SweepOracle`), and the returned table
is repaired and certified as without a warm start (:func:`darrm.solver.finalize.certified_gamma_opt`).
Rows that turn out useless are slack and leave the LP after ``purge_after`` rounds.  ∎

Adapting multisets to the new problem (any adaptation is valid by the proof; these aim at rows
that bind):

* another K: the counts are scaled by K/K₀ and rounded by largest remainder to sum to K (the
  binding multisets' shape, in fractions of the members, changes slowly with K);
* another number of corners: Δ > 0 → Δ = 0 merges (0, Δ), (Δ, 0) into (0, 0) and (1 − Δ, 1),
  (1, 1 − Δ) into (1, 1) (the limit Δ → 0 of those corners); Δ = 0 → Δ > 0 embeds the four
  corners as the same four of the eight.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import ParameterError
from .checkpoint import MAX_ROWS, read_working_set

if TYPE_CHECKING:
    from ..backends import Executor, TorchDevice
    from ..table import GammaTable

#: corner index of a Δ = 0 problem that each of the eight Δ > 0 corners merges into
#: ((0,0), (1,1), (0,Δ), (Δ,0), (1−Δ,1), (1,1−Δ), (hi,lo), (lo,hi) → (0,0), (1,1), (hi,lo), (lo,hi))
MERGE_8_TO_4 = (0, 1, 0, 0, 1, 1, 2, 3)

#: corner index of a Δ > 0 problem of each of the four Δ = 0 corners
EMBED_4_IN_8 = (0, 1, 6, 7)

#: a table's multisets within this much of violating (probability units) are taken by
#: :meth:`WarmStart.from_table`: a certified γ_opt's binding rows sit within ~1e-12 of 0
NEAR_BINDING = 1e-6


def rescale_counts(counts: np.ndarray, K: int) -> np.ndarray:
    """Each row's counts scaled to sum to ``K``, rounded by largest remainder (ties to the lower
    corner index).

    Args:
        counts: (n, C) non-negative integer counts, each row with a positive sum.
        K: the new number of members (≥ 1).

    Returns:
        (n, C) int64 counts ≥ 0, each row summing to K; a row already summing to K is unchanged.
    """
    c = np.asarray(counts, dtype=np.int64)
    if c.shape[0] == 0:
        return c.reshape(0, c.shape[1])
    tot = c.sum(axis=1, keepdims=True)
    exact = c * K  # integer numerators: exact scaling by K / tot
    base = exact // tot
    rem = exact - base * tot
    short = K - base.sum(axis=1)
    # the `short` corners with the largest remainders get one more (stable sort: lower index first)
    order = np.argsort(-rem, axis=1, kind="stable")
    bump = np.arange(c.shape[1])[None, :] < short[:, None]
    out = base.copy()
    np.put_along_axis(out, order, np.take_along_axis(out, order, axis=1) + bump, axis=1)
    return out


def convert_corners(counts: np.ndarray, C: int) -> np.ndarray:
    """Counts over ``C`` corners (8: Δ > 0, 4: Δ = 0) from counts over either (module docstring)."""
    c = np.asarray(counts, dtype=np.int64)
    if c.shape[1] == C:
        return c
    out = np.zeros((c.shape[0], C), dtype=np.int64)
    if C == 4:  # 8 → 4: merge
        for j, t in enumerate(MERGE_8_TO_4):
            out[:, t] += c[:, j]
    else:  # 4 → 8: embed
        out[:, list(EMBED_4_IN_8)] = c
    return out


@dataclass(frozen=True, eq=False)
class WarmStart:
    """Corner multisets to start constraint generation from (:mod:`darrm.solver.warm_start`).

    Attributes:
        multisets: (n, C) corner counts (C = 8 for Δ > 0, 4 for Δ = 0, in the order of
            :func:`darrm.privacy.corners.corners`), every row summing to the same K₀ ≥ 1; K₀ and C may
            differ from the problem solved (they are adapted, see the module docstring).
        source: where they came from (for logs and ``info["warm_start"]``).

    Raises:
        ParameterError: ("warm_start") not a 2-D integer array over 4 or 8 corners, empty, more than
            :data:`darrm.solver.checkpoint.MAX_ROWS` rows, a negative count, or rows of different sums.
    """

    multisets: np.ndarray
    source: str = "multisets"

    def __post_init__(self) -> None:
        a = self.multisets
        if not isinstance(a, np.ndarray) or a.dtype.kind not in "iu":
            raise ParameterError("warm_start", "multisets must be an integer numpy array of corner counts, got "
                                               f"{getattr(a, 'dtype', type(a).__name__)}")
        if a.ndim != 2 or a.shape[1] not in (4, 8) or not 1 <= a.shape[0] <= MAX_ROWS:
            raise ParameterError("warm_start", f"multisets must have shape (n, 4) or (n, 8) with 1 <= n <= {MAX_ROWS}, "
                                               f"got {a.shape}")
        a = a.astype(np.int64)
        sums = a.sum(axis=1)
        if a.min() < 0 or sums[0] < 1 or np.any(sums != sums[0]):
            raise ParameterError("warm_start", "multisets must be corner counts >= 0, every row summing to the same "
                                               "K >= 1")
        a.setflags(write=False)
        object.__setattr__(self, "multisets", a)
        if not isinstance(self.source, str):
            raise ParameterError("warm_start", f"source must be a string, got {self.source!r}")

    def __repr__(self) -> str:
        return f"WarmStart({self.multisets.shape[0]} multisets, K={self.K}, corners={self.multisets.shape[1]}, " \
               f"source={self.source!r})"

    @property
    def K(self) -> int:
        """K₀, the members of the problem the multisets came from."""
        return int(self.multisets[0].sum())

    def for_problem(self, K: int, C: int) -> np.ndarray:
        """The multisets adapted to K members over C corners, duplicates removed.

        Args:
            K: the members of the problem to solve.
            C: its corners (8: Δ > 0, 4: Δ = 0).

        Returns:
            (n′, C) int64 counts summing to K, n′ ≤ n.
        """
        return np.unique(rescale_counts(convert_corners(self.multisets, C), K), axis=0)

    @classmethod
    def from_checkpoint(cls, path: str | os.PathLike[str]) -> WarmStart:
        """The working set of a checkpoint written by a solve of any problem (``checkpoint=``).

        Args:
            path: the checkpoint file.

        Returns:
            Its multisets, as a warm start.

        Raises:
            ParameterError: ("warm_start") the file is missing, unreadable, not a checkpoint or
                holds no multiset.
        """
        _, w = read_working_set(Path(path), "warm_start")
        if w.shape[0] == 0:
            raise ParameterError("warm_start", f"{path}: the checkpoint holds no multiset")
        sums = w.sum(axis=1)
        if np.any(sums != sums[0]) or sums[0] < 1:
            raise ParameterError("warm_start", f"{path}: working set rows must sum to one K >= 1")
        return cls(w, source=f"checkpoint {Path(path).name}")

    @classmethod
    def from_table(cls, table: GammaTable, *, near: float = NEAR_BINDING, top: int = 1024,
                   executor: Executor | TorchDevice | None = None) -> WarmStart:
        """The multisets within ``near`` of binding at a shared-members table, by one exhaustive sweep
        under the table's own parameters (:func:`darrm.privacy.sweep.sweep`, one per sweep block).

        Costs one exhaustive sweep of the table's problem: a checkpoint
        (:meth:`from_checkpoint`) is free.

        Args:
            table: a certified table for shared members (:class:`~darrm.PrivacyParams`).
            near: take multisets whose violation exceeds −``near`` (probability units, > 0).
            top: at most this many multisets (≥ 1).
            executor: where the sweep runs (see :mod:`darrm.backends`).

        Returns:
            Those multisets, as a warm start.

        Raises:
            ParameterError: ("warm_start") the table is not for shared members, ``near`` or ``top``
                is out of range, or no multiset is that close to binding.
        """
        from ..params import PrivacyParams
        from ..privacy.sweep import sweep
        from ..validation import count, instance, real

        # the multisets of Lemma 5.1 exist for members on shared data only
        params = instance("warm_start", getattr(table, "params", table), PrivacyParams,
                          "a shared-members table's parameters (PrivacyParams) for from_table")
        near = real("near", near, 0.0, None, closed="neither")
        top = count("top", top)
        res = sweep(np.asarray(table.gamma, dtype=np.float64), params, top=top, threshold=-near,
                    executor=executor, progress=False)
        if res.candidates.shape[0] == 0:
            raise ParameterError("warm_start", f"no multiset within {near:g} of binding at this table")
        return cls(np.asarray(res.candidates, dtype=np.int64), source=f"table {table.family} K={params.K}")
