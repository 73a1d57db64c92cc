"""The release mechanisms of the study at equal per-group total budgets, and their calibration.

Every group g is owed (ε_g, δ_total) in total over Q queries.

* **GNMax** (:func:`~darrm.experiments.pate.multiclass_aggregators.gnmax_sigma`: the σ whose Q answers
  are exactly (ε, δ)-DP when one teacher's vote changes).  A record of group g moves the vote
  histogram by the votes of r_g teachers (upsampling) or by one vote of weight w_g (weighting): the
  sensitivity is r_g (resp. w_g) times one vote's, and a Gaussian mechanism's guarantee depends only
  on sensitivity / σ, so group g is (ε_g, δ)-DP iff σ ≥ r_g·σ(ε_g) (resp. w_g·σ(ε_g)).
  Upsampling takes σ = max_g r_g·σ(ε_g); weighting takes w_g = σ(ε_min)/σ(ε_g) and σ = σ(ε_min)
  (every group exactly at its budget; the worst group's weight is 1).
* **DaRRM**: each query is (ε_q,g, δ_q)-DP for group g, ε_q,g from the generic optimal
  composition of Q queries (:func:`~darrm.experiments.pate.multiclass_aggregators.plurality_budget`,
  δ_q = δ_total/(2Q)); γ_opt certified for records copied into r_g shards
  (:class:`darrm.ShardGroupParams`), or, at the worst budget, for disjoint shards
  (:class:`darrm.DisjointParams`).  The teachers are non-private (PATE's teachers): γ alone gives
  the privacy.
* **DaRRM on the weighting teachers** (:class:`darrm.WeightedShardParams`): the same teachers as
  GNMax's weighting (K_g trained on group-g records only, one copy of each record), so a record of
  group g changes one teacher of group g; γ reads each group's vote count ("per-group"), or only the
  weighted count Σ_g w_g·l_g with the fixed weights w_g = ε_g / min_h ε_h (the totals' ratios: 1, 2,
  3 in the paper's setting; "weighted").  Either releases the majority of all K votes with
  probability γ, else a fair coin, and each is certified for every group's (ε_q,g, δ_q).
* **DaRRM designed for each group's total** (the model's designer, as :func:`darrm.design_for_budget`, with one
  :class:`~darrm.TotalBudget` (ε_g, δ_total, Q) per group, a :class:`~darrm.GroupBudgets`): instead of
  splitting each total into Q generic per-query budgets, γ is designed so that the certified Q-fold
  composition of *its own* group-g privacy profile meets (ε_g, δ_total) for every g
  (:mod:`darrm.accounting.budget.shard_groups` for the upsampled teachers,
  :mod:`darrm.accounting.budget.weighted_shards`, γ per group count, for the weighting teachers).  The
  designer's search contains the per-query rows above (its ``per-query`` shape is that design at the
  same generic composition) and the Gaussian threshold on the count (upsampling GNMax's γ), so its
  expected error under the prior is never larger than theirs.  Each group's charged total is
  re-checked from γ alone by the model's verifier (:func:`darrm.verify_charged_total`) before the
  table is used.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np

import darrm
from darrm.accounting.budget import designer_for
from darrm.accounting.budget.parts import SHAPES
from darrm.experiments.individual.config import IndividualConfig
from darrm.experiments.individual.shards import teachers_per_group
from darrm.experiments.pate.multiclass_aggregators import gnmax_release, gnmax_sigma, plurality_budget

__all__ = ["Calibration", "calibrate", "darrm_labels", "design_for_totals", "gnmax_labels", "majority_labels"]


@dataclass(frozen=True)
class Calibration:
    """Every mechanism's parameters for one Q (all groups exactly within their totals)."""

    Q: int
    eps_query: tuple[float, ...]       # DaRRM's per-query ε per group
    delta_query: float                 # DaRRM's per-query δ
    sigma_worst: float                 # GNMax at the worst budget, disjoint shards
    sigma_upsample: float              # GNMax, records copied r_g times
    sigma_weight: float                # GNMax, weighted votes
    weights: tuple[float, ...]         # the weighting's w_g
    individual: darrm.GammaTable       # DaRRM, ShardGroupParams
    worst: darrm.GammaTable            # DaRRM, DisjointParams at the worst budget
    per_group: darrm.GammaTable        # DaRRM, WeightedShardParams: γ per group count (weighting teachers)
    weighted: darrm.GammaTable         # DaRRM, WeightedShardParams: γ of the weighted count
    designed_individual: darrm.GammaTable  # DaRRM, ShardGroupParams designed for every group's total
    designed_per_group: darrm.GammaTable   # DaRRM, WeightedShardParams designed for every group's total

    def record(self) -> dict:
        """A JSON-ready record (no γ tables: their errors and status only)."""
        return {"Q": self.Q, "eps_query": list(self.eps_query), "delta_query": self.delta_query,
                "sigma_worst": self.sigma_worst, "sigma_upsample": self.sigma_upsample,
                "sigma_weight": self.sigma_weight, "weights": list(self.weights),
                "darrm_individual": {"expected_error": self.individual.objective, "status": self.individual.status,
                                     "gamma_mid": float(self.individual.gamma[(self.individual.params.K + 1) // 2])},
                "darrm_worst": {"expected_error": self.worst.objective, "status": self.worst.status,
                                "gamma_mid": float(self.worst.gamma[(self.worst.params.K + 1) // 2])},
                "darrm_per_group": _solve_record(self.per_group), "darrm_weighted": _solve_record(self.weighted),
                "darrm_designed_individual": _design_record(self.designed_individual),
                "darrm_designed_per_group": _design_record(self.designed_per_group)}


def _solve_record(table: darrm.GammaTable) -> dict:
    """A budget-groups table's record: its error, status, γ form, weights, group sizes and solve effort."""
    p = cast(darrm.WeightedShardParams, table.params)
    return {"expected_error": table.objective, "status": table.status, "gamma_form": p.gamma_form,
            "vote_weights": None if p.weights is None else list(p.weights), "sizes": [g.size for g in p.groups],
            "rounds": table.info.get("rounds"), "lp_rows": table.info.get("lp_rows"),
            "seconds": table.info.get("seconds_solve")}


def _design_record(table: darrm.GammaTable) -> dict:
    """A designed table's record: its error, the winning shape, and per group the budget, the certified
    total charged and its accountant (``info["group_budgets"]``), and the design's seconds."""
    design = table.info["design"]
    return {"expected_error": table.objective, "winner": design["winner"]["family"],
            "baseline_error": design["baseline_error"], "seconds": design["seconds"],
            "groups": [{k: g[k] for k in ("epsilon", "delta", "queries", "composed_epsilon", "accountant")}
                       for g in table.info["group_budgets"]["groups"]]}


def design_for_totals(params: darrm.ShardGroupParams | darrm.WeightedShardParams, cfg: IndividualConfig, Q: int,
                      prior: darrm.Prior, shapes: tuple[str, ...] = SHAPES) -> darrm.GammaTable:
    """γ designed for every group's total (ε_g, δ_total) over Q queries (module docstring), its charged
    totals re-checked from γ alone by the model's verifier.

    Args:
        params: the teachers' member model (its per-query targets are replaced by the totals).
        cfg: the study (budgets, δ_total).
        Q: the number of queries.
        prior: the objective's prior.
        shapes: the shapes the model's designer searches (default: all of them).

    Raises:
        CertificationError: no γ meets every group's total, or the verifier refuses the design's record.
    """
    budgets = darrm.GroupBudgets(tuple(darrm.TotalBudget(e, cfg.delta_total, Q) for e in cfg.budgets))
    # the model's designer (what darrm.design_for_budget calls), which also takes the shapes
    table = designer_for(params).design(params, budgets, prior, shapes=shapes).table
    darrm.verify_charged_total(table)
    return table


def calibrate(cfg: IndividualConfig, Q: int, prior: darrm.Prior | None = None) -> Calibration:
    """Every mechanism's parameters for Q queries (data-independent: budgets, copies, K only)."""
    prior = darrm.IIDPrior(0.9) if prior is None else prior
    per = [plurality_budget(e, cfg.delta_total, Q) for e in cfg.budgets]
    dq = per[0].delta_query
    sig = [gnmax_sigma(e, cfg.delta_total, Q) for e in cfg.budgets]
    w = cfg.worst
    upsampled = darrm.ShardGroupParams(cfg.K, darrm.NonPrivate(),
                                       [(r, p.eps_query, dq) for r, p in zip(cfg.copies, per, strict=True)])
    individual = darrm.solve(upsampled, prior)
    worst = darrm.solve(darrm.DisjointParams(cfg.K, darrm.NonPrivate(), per[w].eps_query, dq), prior)
    budget_groups = [(k, p.eps_query, dq) for k, p in zip(teachers_per_group(cfg.K, cfg.shares), per, strict=True)]
    weighting = darrm.WeightedShardParams(darrm.NonPrivate(), budget_groups)
    per_group = darrm.solve(weighting, prior)
    ratios = tuple(b / cfg.budgets[w] for b in cfg.budgets)
    weighted = darrm.solve(darrm.WeightedShardParams(darrm.NonPrivate(), budget_groups, ratios), prior)
    designed_individual = design_for_totals(upsampled, cfg, Q, prior)
    designed_per_group = design_for_totals(weighting, cfg, Q, prior, cfg.budget_group_shapes)
    return Calibration(Q, tuple(p.eps_query for p in per), dq, sig[w],
                       max(r * s for r, s in zip(cfg.copies, sig, strict=True)), sig[w],
                       tuple(sig[w] / s for s in sig), individual, worst, per_group, weighted,
                       designed_individual, designed_per_group)


def _binary(votes: np.ndarray, classes: tuple[int, int]) -> np.ndarray:
    return (np.asarray(votes) == classes[1]).astype(np.int64)


def darrm_labels(votes: np.ndarray, table: darrm.GammaTable, classes: tuple[int, int],
                 rng: np.random.Generator) -> np.ndarray:
    """DaRRM's released labels (Algorithm 1 through :func:`darrm.aggregate`)."""
    out = darrm.aggregate(_binary(votes, classes), table, rng=rng)
    return np.where(out == 1, classes[1], classes[0])


def gnmax_labels(votes: np.ndarray, sigma: float, classes: tuple[int, int], rng: np.random.Generator,
                 weights: np.ndarray | None = None) -> np.ndarray:
    """GNMax's released labels on the (weighted) two-class vote histogram."""
    b = _binary(votes, classes)
    w = np.ones(b.shape[1]) if weights is None else np.asarray(weights, dtype=np.float64)
    hist = np.stack([(1 - b) @ w, b @ w], axis=1)
    return np.asarray(classes)[gnmax_release(hist, sigma, rng)]


def majority_labels(votes: np.ndarray, classes: tuple[int, int]) -> np.ndarray:
    """The non-private majority (a reference, no privacy)."""
    b = _binary(votes, classes)
    return np.where(2 * b.sum(axis=1) > b.shape[1], classes[1], classes[0])
