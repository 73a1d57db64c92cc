"""Accuracy of released labels at matched per-query privacy vs the number of members K.

Synthetic members with controlled agreement: for each query the fraction a of members
that vote for the true label is drawn from a grid on [A_LO, A_HI] (uniform), votes are
i.i.d. Bernoulli(a).  Accuracies are computed *exactly* from binomial pmfs (no sampling).

Methods, all (ε, δ)-DP per query for the same (ε, δ) against an adversary who changes
one member's shard:

* gnmax            — Gaussian noise on the 2-class vote histogram, tightest σ
                     (darrm.accounting.gnmax.calibrate_sigma(ε, δ, "pld"), sensitivity √2);
* darrm-nonprivate — partition-aware γ_opt over non-private members (darrm.solve, DisjointParams + NonPrivate);
* shuffled-majority— members report through ε0-RR, the shuffler reveals only the count,
                     plain majority; ε0 = largest with exact ε(δ) ≤ ε (darrm.accounting.largest_eps0);
* shuffled-darrm   — DaRRM γ_opt over shuffled ε0-RR votes (LocalRR model), best ε0 on a
                     grid of multiples of the previous ε0 (tuned on the same agreement
                     distribution: an optimistic choice, stated in RESULTS.md);
* private-majority — members that are themselves (ε, 0)-DP per query (modelled as ε-RR on
                     their vote), un-noised majority: parallel composition + post-processing.

Usage: ``darrm-experiments disjoint synthetic --out DIR [--eps 0.5] [--delta 1e-6] [--K 11 101 ...]``
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable

import numpy as np
from scipy.special import expit
from scipy.stats import norm

import darrm
from darrm import DisjointParams, IIDPrior, LocalRR, NonPrivate
from darrm.accounting import calibrate_sigma, largest_eps0
from darrm.mechanism import output_weights
from darrm.numerics.binomial import binomial_pmf
from darrm.validation import epsilon, odd_count, open_unit

A_LO, A_HI, GRID = 0.55, 0.95, 41
KS = (11, 101, 1001, 10001)
EPS0_MULTIPLES = (1.0, 1.5, 2.0, 3.0, 5.0)


def agreement_grid() -> np.ndarray:
    """The synthetic agreement fractions a: GRID points on [A_LO, A_HI]."""
    return np.linspace(A_LO, A_HI, GRID)


def vote_pmfs(K: int, a: np.ndarray, eps0: float | None = None) -> np.ndarray:
    """Rows Bin(K, p)(L) per agreement a, p = a (or a through ε0-RR)."""
    p = a if eps0 is None else a * expit(eps0) + (1 - a) * expit(-eps0)
    return binomial_pmf(K, p)


def mean_accuracy(alpha: np.ndarray, w: np.ndarray) -> float:
    """Mean over the agreement grid of Pr[correct] = Σ_L α(L) w(L) (w: output weights in [0, 1]).

    Each pmf row is divided by its own sum: the log-space pmf's relative rounding adds up to a
    total mass of 1 ± ~1e-11 at K = 10001, which made accuracies of 1 + 8e-12.  A
    weighted mean of weights in [0, 1] is then in [0, 1] up to a few ulps, which the final clip
    removes (rounding only; it never moves a value by more than ~1e-15)."""
    acc = (alpha @ w) / alpha.sum(axis=-1)
    return float(np.clip(np.mean(acc), 0.0, 1.0))


def best_shuffled_darrm(K: int, eps: float, delta: float, e0: float, a: np.ndarray,
                        prior: darrm.Prior | None = None) -> tuple[float, float, np.ndarray]:
    """(accuracy on ``a``, ε0′, γ) of DaRRM over shuffled ε0′-RR votes, the best ε0′ among
    :data:`EPS0_MULTIPLES` × ``e0`` (the first best on ties)."""
    candidates = []
    for mult in EPS0_MULTIPLES:
        e = e0 * mult
        g = np.asarray(darrm.solve(DisjointParams(K, LocalRR(e), eps, delta), prior).gamma)
        candidates.append((mean_accuracy(vote_pmfs(K, a, e), output_weights(g)), e, g))
    return max(candidates, key=lambda c: c[0])  # max keeps the first of equal accuracies


def _majority_w(K: int) -> np.ndarray:
    return (np.arange(K + 1) >= (K + 1) // 2).astype(float)


def evaluate(K: int, eps: float, delta: float, a: np.ndarray) -> dict:
    """Accuracy of every method (:data:`METHODS`) at K members on the agreement grid ``a``."""
    prior = IIDPrior(float(a.mean()))
    out: dict = {"K": K}
    alpha = vote_pmfs(K, a)
    sigma = calibrate_sigma(eps, delta, "pld")
    L = np.arange(K + 1)
    out["gnmax"] = mean_accuracy(alpha, norm.cdf((2 * L - K) / (sigma * math.sqrt(2))))
    out["gnmax_sigma"] = sigma
    t = darrm.solve(DisjointParams(K, NonPrivate(), eps, delta), prior)
    out["darrm-nonprivate"] = mean_accuracy(alpha, output_weights(t.gamma))
    e0 = largest_eps0(K, eps, delta, rel_tol=1e-4)
    out["shuffled-majority"] = mean_accuracy(vote_pmfs(K, a, e0), _majority_w(K))
    out["shuffled_eps0"] = e0
    best, best_e0, _ = best_shuffled_darrm(K, eps, delta, e0, a, prior)
    out["shuffled-darrm"], out["shuffled_darrm_eps0"] = best, best_e0
    out["private-majority"] = mean_accuracy(vote_pmfs(K, a, eps), _majority_w(K))
    return out


METHODS = ("gnmax", "darrm-nonprivate", "shuffled-majority", "shuffled-darrm", "private-majority")


def run_synthetic(Ks: Iterable[int], eps: float, delta: float,
                  log: Callable[[dict], None] | None = None) -> list[dict]:
    """:func:`evaluate` for every K on :func:`agreement_grid`, each row with its ``seconds``
    (every argument is checked before the first K is computed)."""
    Ks = [odd_count("K", K) for K in Ks]
    eps, delta = epsilon("eps", eps), open_unit("delta", delta)  # GNMax needs δ > 0
    a = agreement_grid()
    rows = []
    for K in Ks:
        t0 = time.perf_counter()
        r = evaluate(K, eps, delta, a)
        r["seconds"] = time.perf_counter() - t0
        rows.append(r)
        if log:
            log(r)
    return rows
