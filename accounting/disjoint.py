"""Members trained on disjoint shards: parallel composition + post-processing.

If each of K teachers is (ε_i, Δ_i)-DP with respect to its own shard of a partition
(fixed independently of the records' values, e.g. by index), neighbouring data sets
change one shard, so the tuple of all teachers is (max ε_i, max Δ_i)-DP
(:func:`darrm.accounting.composition.parallel`).  Every release computed from the teachers
alone — the un-noised majority, DaRRM with any γ, for *any number of queries* — is a
post-processing of that tuple: it costs the teachers' ε **once**.

The DaRRM paper instead composes its per-query (mε, mΔ) over Q queries (Table 2:
(15.044, 0.030) for MNIST at Q = 100); :func:`paper_parallel_rows` puts the parallel-
composition row beside it.  (Released labels that are then used to train a student
are post-processing as well.)  Caveat from :func:`~darrm.accounting.composition.parallel`:
a value-dependent partition under replace-one adjacency can change two shards.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from darrm import validation as v
from darrm.accounting import composition, paper

Budget = tuple[float, float]


def teacher_majority_budget(teacher_budgets: Sequence[Budget], queries: int) -> Budget:
    """(ε, δ) of ``queries`` un-noised majorities (or any function) of teachers on disjoint
    shards: parallel composition of the teachers, independent of ``queries``.

    Args:
        teacher_budgets: each teacher's (ε_i, δ_i) with respect to its own shard.
        queries: the number of queries answered (does not change the result).

    Returns:
        (max ε_i, max δ_i).

    Raises:
        ParameterError: ``teacher_budgets`` is empty or invalid, or ``queries`` is not a count.
    """
    v.count("queries", queries)
    return composition.parallel(composition.budget_list("teacher_budgets", teacher_budgets))


@dataclass(frozen=True)
class ParallelRow:
    dataset: str
    queries: int
    eps_parallel: float  # un-noised majority of K DP-SGD teachers, all queries
    delta_parallel: float
    eps_paper: float  # DaRRM m = 3, Kairouz general composition over Q queries (Table 2)
    delta_paper: float


def paper_parallel_rows(K: int = 11, m: int = 3, queries: tuple[int, ...] = paper.QUERIES) -> list[ParallelRow]:
    """Parallel-composition totals beside the paper's composed totals (Table 2 for m = 3)."""
    K = v.count("K", K)
    composed = {(r.dataset, r.queries): r for r in paper.total_budget_rows(m, queries)}
    rows = []
    for name, eps_t in paper.TEACHER_EPS.items():
        for q in queries:
            e, d = teacher_majority_budget([(eps_t, paper.TEACHER_DELTA)] * K, q)
            c = composed[(name, q)]
            rows.append(ParallelRow(name, q, e, d, c.eps_total, c.delta_total))
    return rows
