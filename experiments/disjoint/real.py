"""Disjoint members on real data: the K = 11 MNIST / Fashion-MNIST teachers of the PATE study.

The teachers and their test-set votes are those of :mod:`darrm.experiments.pate` (same cache,
same shards, same draws of Q test queries: :func:`darrm.experiments.pate.study.query_indices`).
For every per-query budget (ε, δ) = (m·ε_T, 1 − (1−Δ)^m) of the PATE study (ε_T, Δ: the
DP-SGD teachers' budget), the released labels of:

* ``gnmax``             — GNMax over the **non-private** teachers, σ = calibrate_sigma(ε, δ, "pld");
* ``darrm-partition``   — partition-aware γ_opt (:mod:`darrm.disjoint`, ``NonPrivate``) over
                          the non-private teachers' bits;
* ``shuffled-majority`` — each non-private teacher's bit through ε0-RR (fresh per query), the
                          shuffled count's majority; ε0 = largest with exact per-query ε ≤ ε;
* ``shuffled-darrm``    — DaRRM γ(L) over shuffled ε0′-RR bits (``LocalRR(ε0′)`` model);
                          ε0′ = the multiple of ε0 best on the *synthetic* agreement
                          distribution of :mod:`darrm.experiments.disjoint.run` (never the test labels);
* ``darrm-paper``       — the paper's γ_opt (all members may change, :func:`darrm.solver.gamma_opt.solve_gamma_opt`)
                          over the DP-SGD teachers: the PATE study's row, for reference;
* ``private-majority``  — plain majority of the DP-SGD teachers: parallel composition, the
                          teachers' (ε_T, Δ) once for all Q queries;
* ``nonprivate-majority`` — plain majority of the non-private teachers: no guarantee (ceiling).

Privacy reported per row: per query, and over the Q queries at δ_total = 1 − (1−δ)^Q(1−δ′)
(δ′ = the study's 1e-4): Gaussian PLD composition for GNMax, the composed dominating PLD of the
shuffled count (:mod:`darrm.accounting.shuffled_votes_pld`) for the shuffled rows (γ(L) is
post-processing of the counts; the smaller of that and the generic bound is reported), exact
optimal composition of the per-query (ε, δ) for the DaRRM rows.

Release functions see only votes and their own randomness; the true labels enter only
:func:`score`.  Usage::

    PYTHONPATH=$PWD python -m darrm.experiments.disjoint.real --dataset mnist
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np
from darrm.accounting import composition
from darrm.accounting.gnmax import calibrate_sigma
from darrm.accounting.gnmax import epsilon as gnmax_epsilon
from darrm.accounting.votes import largest_eps0, tight_total_epsilon
from darrm.experiments.disjoint.run import (
    A_HI,
    A_LO,
    EPS0_MULTIPLES,
    GRID,
    _acc_weights,
    _pmfs,
)
from darrm.experiments.pate.aggregators import (
    binary_votes,
    darrm_release,
    gnmax_release,
    majority_release,
)
from darrm.experiments.pate.study import query_indices
from scipy.special import expit

from darrm.disjoint import DisjointParams, LocalRR, NonPrivate, solve_gamma_opt_disjoint
from darrm.mechanism import aggregate, output_weights
from darrm.params import PrivacyParams
from darrm.solver.gamma_opt import solve_gamma_opt

METHODS: dict[str, int] = {  # name → stream id of the mechanism's randomness
    "gnmax": 101, "darrm-partition": 102, "shuffled-majority": 103, "shuffled-darrm": 104,
    "darrm-paper": 105, "private-majority": 106, "nonprivate-majority": 107,
}


def build_mechanisms(K: int, m: int, eps_teacher: float, Delta: float) -> dict:
    """Parameters of every method at the per-query budget (m·ε_T, 1 − (1−Δ)^m)."""
    params = PrivacyParams(K=K, m=m, eps=eps_teacher, Delta=Delta)
    eps, delta = m * eps_teacher, float(params.delta)
    e0 = largest_eps0(K, eps, delta, rel_tol=1e-6)
    a = np.linspace(A_LO, A_HI, GRID)  # synthetic agreement grid: chooses ε0′ without test labels
    best = None
    for mult in EPS0_MULTIPLES:
        g = solve_gamma_opt_disjoint(DisjointParams(K, LocalRR(e0 * mult), eps, delta)).gamma
        acc = _acc_weights(_pmfs(K, a, e0 * mult), output_weights(g))
        if best is None or acc > best[0]:
            best = (acc, e0 * mult, np.asarray(g))
    return {
        "m": m, "eps": eps, "delta": delta,
        "sigma": calibrate_sigma(eps, delta, "pld"),
        "gamma_partition": np.asarray(solve_gamma_opt_disjoint(DisjointParams(K, NonPrivate(), eps, delta)).gamma),
        "eps0": e0,
        "eps0_darrm": best[1], "gamma_shuffled": best[2],
        "gamma_paper": np.asarray(solve_gamma_opt(params, progress=False).gamma),
    }


def shuffled_rr_release(votes: np.ndarray, eps0: float, gamma: np.ndarray | None, rng: np.random.Generator,
                        classes: tuple[int, int]) -> np.ndarray:
    """Each member's bit through ε0-RR; from the count L only: majority (γ ≡ 1) or DaRRM γ(L)."""
    bits = binary_votes(votes, classes)
    flip = rng.random(bits.shape) < expit(-eps0)
    reports = np.where(flip, 1 - bits, bits)
    K = bits.shape[1]
    g = np.ones(K + 1) if gamma is None else gamma
    out = aggregate(reports.sum(axis=1), g, rng)
    return np.where(out == 1, classes[1], classes[0])


def release(method: str, votes_private: np.ndarray, votes_nonprivate: np.ndarray, mech: dict,
            rng: np.random.Generator, classes: tuple[int, int]) -> np.ndarray:
    """Released labels of ``method`` for the query rows of the two ensembles' votes (no labels)."""
    if method == "gnmax":
        return gnmax_release(votes_nonprivate, mech["sigma"], rng, classes)
    if method == "darrm-partition":
        return darrm_release(votes_nonprivate, mech["gamma_partition"], rng, classes)
    if method == "shuffled-majority":
        return shuffled_rr_release(votes_nonprivate, mech["eps0"], None, rng, classes)
    if method == "shuffled-darrm":
        return shuffled_rr_release(votes_nonprivate, mech["eps0_darrm"], mech["gamma_shuffled"], rng, classes)
    if method == "darrm-paper":
        return darrm_release(votes_private, mech["gamma_paper"], rng, classes)
    if method == "private-majority":
        return majority_release(votes_private, classes)
    if method == "nonprivate-majority":
        return majority_release(votes_nonprivate, classes)
    raise KeyError(method)


def privacy(method: str, mech: dict, K: int, Q: int, eps_teacher: float, Delta: float, delta_prime: float) -> dict:
    """Per-query and total (ε, δ) of ``method`` over Q queries (None: no guarantee)."""
    if method == "nonprivate-majority":
        return {"eps_query": None, "delta_query": None, "eps_total": None, "delta_total": None}
    if method == "private-majority":
        return {"eps_query": eps_teacher, "delta_query": Delta, "eps_total": eps_teacher, "delta_total": Delta}
    eq, dq = mech["eps"], mech["delta"]
    dt = -math.expm1(Q * math.log1p(-dq) + math.log1p(-delta_prime))
    generic = composition.optimal_homogeneous_epsilon(eq, dq, Q, dt)
    if method == "gnmax":
        et = gnmax_epsilon(mech["sigma"], dt, Q, "pld")
    elif method == "shuffled-majority":
        et = min(generic, tight_total_epsilon(K, mech["eps0"], Q, dt))
    elif method == "shuffled-darrm":
        et = min(generic, tight_total_epsilon(K, mech["eps0_darrm"], Q, dt))
    else:
        et = generic
    return {"eps_query": eq, "delta_query": dq, "eps_total": float(et), "delta_total": dt}


def run_real(dataset: str, votes_private: np.ndarray, votes_nonprivate: np.ndarray, labels: np.ndarray,
             eps_teacher: float, *, Delta: float = 1e-4, delta_prime: float = 1e-4, ms=(1, 3, 5, 7),
             queries=(20, 50, 100), draws: int = 10, seed: int = 0, classes=(5, 8)) -> list[dict]:
    """Every (method, m, Q) row: mean (std) accuracy over ``draws`` draws of Q test queries, privacy."""
    vp, vn = np.asarray(votes_private), np.asarray(votes_nonprivate)
    if vp.shape != vn.shape or vp.ndim != 2 or vp.shape[0] != len(labels):
        raise ValueError(f"votes {vp.shape}/{vn.shape} and labels {np.shape(labels)} do not match")
    K = vp.shape[1]
    rows = []
    for m in ms:
        mech = build_mechanisms(K, m, eps_teacher, Delta)
        for Q in queries:
            for method, sid in METHODS.items():
                acc = []
                for r in range(draws):
                    idx = query_indices(seed, vp.shape[0], Q, r)
                    rng = np.random.default_rng([seed, sid, m, Q, r])
                    lab = release(method, vp[idx], vn[idx], mech, rng, classes)
                    acc.append(float(np.mean(lab == labels[idx])))
                rec = {"dataset": dataset, "method": method, "m": m, "Q": Q, "K": K,
                       "accuracy_mean": float(np.mean(acc)), "accuracy_std": float(np.std(acc)), "draws": draws}
                rec.update(privacy(method, mech, K, Q, eps_teacher, Delta, delta_prime))
                if method.startswith("shuffled"):
                    rec["eps0"] = mech["eps0" if method == "shuffled-majority" else "eps0_darrm"]
                if method == "gnmax":
                    rec["sigma"] = mech["sigma"]
                rows.append(rec)
    return rows


def markdown(rows: list[dict], m: int) -> str:
    """One table per dataset at allowance m: accuracy mean (std) per Q, then privacy."""
    out = []
    for ds in sorted({r["dataset"] for r in rows}):
        sel = [r for r in rows if r["dataset"] == ds and r["m"] == m]
        Qs = sorted({r["Q"] for r in sel})
        head = "| method | " + " | ".join(f"Q = {q}" for q in Qs) + " | per query (ε, δ) | " + \
            " | ".join(f"total Q = {q}" for q in Qs) + " |"
        out += [f"**{ds}**, m = {m}", "", head, "|" + "---|" * (2 * len(Qs) + 2)]
        for meth in METHODS:
            rs = {r["Q"]: r for r in sel if r["method"] == meth}
            if not rs:
                continue
            r0 = rs[Qs[0]]
            tag = meth + (f" (ε0 = {r0['eps0']:.3g})" if "eps0" in r0 else "") + \
                (f" (σ = {r0['sigma']:.2f})" if "sigma" in r0 else "")
            acc = " | ".join(f"{rs[q]['accuracy_mean']:.2f} ({rs[q]['accuracy_std']:.2f})" for q in Qs)
            pq = "–" if r0["eps_query"] is None else f"({r0['eps_query']:.4f}, {r0['delta_query']:.2g})"
            tot = " | ".join("none" if rs[q]["eps_total"] is None else
                             f"({rs[q]['eps_total']:.3f}, {rs[q]['delta_total']:.2g})" for q in Qs)
            out.append(f"| {tag} | {acc} | {pq} | {tot} |")
        out.append("")
    return "\n".join(out)


def _task(dataset: str, data_dir: str | None, allow_download: bool = True):
    from darrm.experiments.data.loader import binary_task, load_dataset
    from darrm.experiments.pate.study import StudyConfig

    cfg = StudyConfig(dataset)
    ds = load_dataset(dataset, data_dir, allow_download=allow_download)
    return cfg, binary_task(ds, cfg.classes, cfg.train_size, cfg.seed)


def load_votes(dataset: str, data_dir: str | None = None, cache_dir: Path | None = None):
    """(private votes, non-private votes, test labels, ε_T) from the PATE study's cache; trains the
    teachers (minutes on CPU) where they are not cached."""
    from darrm.experiments.cache import default_cache_dir
    from darrm.experiments.pate.ensemble import get_ensemble

    cfg, task = _task(dataset, data_dir)
    cache = Path(cache_dir) if cache_dir else default_cache_dir()
    priv = get_ensemble(task, cfg.teacher_config(True), cache, progress=False)
    nonpriv = get_ensemble(task, cfg.teacher_config(False), cache, progress=False)
    eps_t = max(float(t["eps"]) for t in priv.teachers)
    return priv.votes, nonpriv.votes, task.test_labels, eps_t


def cached_votes(dataset: str, data_dir: str | None = None, cache_dir: Path | None = None):
    """As :func:`load_votes` when both ensembles' votes are cached and the data set is present,
    else None (never trains)."""
    from darrm.experiments.cache import default_cache_dir
    from darrm.experiments.data.loader import DatasetError
    from darrm.experiments.pate.ensemble import ensemble_dir

    try:
        cfg, task = _task(dataset, data_dir, allow_download=False)
    except DatasetError:  # data set not available here
        return None
    cache = Path(cache_dir) if cache_dir else default_cache_dir()
    dirs = [ensemble_dir(task, cfg.teacher_config(p), cache) for p in (True, False)]
    if not all((d / "votes.npy").is_file() and (d / f"teacher_{cfg.K - 1:02d}.pt").is_file() for d in dirs):
        return None
    return load_votes(dataset, data_dir, cache)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", nargs="+", default=["mnist", "fashion-mnist"])
    ap.add_argument("--out", default="experiments/disjoint")
    args = ap.parse_args(argv)
    rows = []
    for ds in args.dataset:
        vp, vn, labels, eps_t = load_votes(ds)
        rows += run_real(ds, vp, vn, labels, eps_t)
    out = Path(args.out)
    (out / "results_real.json").write_text(json.dumps(rows, indent=1) + "\n")
    tables = "\n".join(markdown(rows, m) for m in sorted({r["m"] for r in rows}))
    (out / "real_tables.md").write_text("# Disjoint members, real teachers (K = 11): all tables\n\n"
                                        "Generated by `python -m darrm.experiments.disjoint.real`; accuracy mean (std) over "
                                        "10 draws of Q test queries.\n\n" + tables)
    print(tables)


if __name__ == "__main__":
    main()
