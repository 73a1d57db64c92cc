"""Disjoint members on real data: the K = 11 MNIST / Fashion-MNIST teachers of the PATE study.

The teachers and their test-set votes are those of :mod:`darrm.experiments.pate` (same cache,
same shards, same draws of Q test queries: :func:`darrm.experiments.pate.study.query_indices`).
For every per-query budget (ε, δ) = (m·ε_T, 1 − (1−Δ)^m) of the PATE study (ε_T, Δ: the
DP-SGD teachers' budget), the released labels of:

* ``gnmax``             — GNMax over the **non-private** teachers, σ = calibrate_sigma(ε, δ, "pld");
* ``darrm-partition``   — partition-aware γ_opt (:func:`darrm.solve`, ``DisjointParams`` + ``NonPrivate``) over
                          the non-private teachers' bits;
* ``shuffled-majority`` — each non-private teacher's bit through ε0-RR (fresh per query), the
                          shuffled count's majority; ε0 = largest with exact per-query ε ≤ ε;
* ``shuffled-darrm``    — DaRRM γ(L) over shuffled ε0′-RR bits (``LocalRR(ε0′)`` model);
                          ε0′ = the multiple of ε0 best on the *synthetic* agreement
                          distribution of :mod:`darrm.experiments.disjoint.synthetic` (never the test labels);
* ``darrm-paper``       — the paper's γ_opt (all members may change, :func:`darrm.solve`)
                          over the DP-SGD teachers: the PATE study's row, for reference;
* ``private-majority``  — plain majority of the DP-SGD teachers: parallel composition, the
                          teachers' (ε_T, Δ) once for all Q queries;
* ``nonprivate-majority`` — plain majority of the non-private teachers: no guarantee (ceiling).

Privacy reported per row: per query, and over the Q queries at δ_total = 1 − (1−δ)^Q(1−δ′)
(δ′ = the study's 1e-4): Gaussian PLD composition for GNMax, the composed dominating PLD of the
shuffled count (:func:`darrm.accounting.tight_total_epsilon`) for the shuffled rows (γ(L) is
post-processing of the counts; the smaller of that and the generic bound is reported), exact
optimal composition of the per-query (ε, δ) for the DaRRM rows.

**At equal total budget** (:func:`run_equal_total`, the non-private teachers only): for every
(ε_total, δ_total, Q), each method calibrated by its tightest valid data-independent accountant:

* ``darrm-designed``  — :func:`darrm.design_for_budget` with ``DisjointParams(K, NonPrivate())``: γ whose
                        certified Q-fold composition meets the total (its search contains binary GNMax,
                        the Gaussian threshold γ, so its expected error under its prior is never larger);
* ``gnmax``           — σ = √Q·σ₁(ε_total, δ_total), the exact composition of Q Gaussian mechanisms;
* ``confident-gnmax`` — (σ1, σ2) at PATE 2018's ratio, threshold 0.8·K, every query charged
                        (:func:`darrm.experiments.pate.multiclass_aggregators.confident_sigmas`); its
                        accuracy is over the answered queries.

Release functions (:mod:`darrm.experiments.releases`) see only votes and their own randomness;
the true labels enter only the accuracies of :func:`run_real`.  Usage::

    darrm-experiments disjoint real --dataset mnist --out DIR
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import darrm
from darrm import DisjointParams, NonPrivate, PrivacyParams
from darrm.accounting import (
    calibrate_sigma,
    gnmax_epsilon,
    largest_eps0,
    optimal_homogeneous_epsilon,
    tight_total_epsilon,
)
from darrm.errors import ParameterError, require
from darrm.experiments.cache import default_cache_dir
from darrm.experiments.data.loader import DatasetError, binary_task, load_dataset
from darrm.experiments.disjoint.synthetic import agreement_grid, best_shuffled_darrm
from darrm.experiments.pate.study import StudyConfig, query_indices
from darrm.experiments.releases import Method, mechanism_rng, release
from darrm.numerics.delta import composed_delta
from darrm.validation import count, epsilon, instance, open_unit

__all__ = ["EQUAL_TOTAL_METHODS", "METHODS", "build_mechanisms", "cached_votes", "check_equal_total_settings",
           "load_votes", "markdown", "markdown_all", "markdown_equal_total", "nonprivate_votes", "privacy",
           "run_equal_total", "run_real"]

#: rows of the study: release, votes, arguments from :func:`build_mechanisms`' dict, stream id
METHODS: dict[str, Method] = {
    "gnmax": Method("gnmax", "nonprivate", 101, (("sigma", "sigma"),)),
    "darrm-partition": Method("darrm", "nonprivate", 102, (("gamma", "gamma_partition"),)),
    "shuffled-majority": Method("shuffled-rr", "nonprivate", 103, (("eps0", "eps0"),)),
    "shuffled-darrm": Method("shuffled-rr", "nonprivate", 104, (("eps0", "eps0_darrm"), ("gamma", "gamma_shuffled"))),
    "darrm-paper": Method("darrm", "private", 105, (("gamma", "gamma_paper"),)),
    "private-majority": Method("majority", "private", 106),
    "nonprivate-majority": Method("majority", "nonprivate", 107),
}


def build_mechanisms(K: int, m: int, eps_teacher: float, Delta: float) -> dict:
    """Parameters of every method at the per-query budget (m·ε_T, 1 − (1−Δ)^m)."""
    params = PrivacyParams(K=K, m=m, eps=eps_teacher, member_delta=Delta)
    eps, delta = m * eps_teacher, float(params.delta)
    e0 = largest_eps0(K, eps, delta, rel_tol=1e-6)
    # synthetic agreement grid: chooses ε0′ without test labels
    _, eps0_darrm, gamma_shuffled = best_shuffled_darrm(K, eps, delta, e0, agreement_grid())
    return {
        "m": m, "eps": eps, "delta": delta,
        "sigma": calibrate_sigma(eps, delta, "pld"),
        "gamma_partition": np.asarray(darrm.solve(DisjointParams(K, NonPrivate(), eps, delta)).gamma),
        "eps0": e0,
        "eps0_darrm": eps0_darrm, "gamma_shuffled": gamma_shuffled,
        "gamma_paper": np.asarray(darrm.solve(params, progress=False).gamma),
    }


def privacy(method: str, mech: dict, K: int, Q: int, eps_teacher: float, Delta: float, delta_prime: float) -> dict:
    """Per-query and total (ε, δ) of ``method`` over Q queries (None: no guarantee)."""
    if method == "nonprivate-majority":
        return {"eps_query": None, "delta_query": None, "eps_total": None, "delta_total": None}
    if method == "private-majority":
        return {"eps_query": eps_teacher, "delta_query": Delta, "eps_total": eps_teacher, "delta_total": Delta}
    eq, dq = mech["eps"], mech["delta"]
    dt = composed_delta(dq, Q, delta_prime)
    generic = optimal_homogeneous_epsilon(eq, dq, Q, dt)
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
            for method, spec in METHODS.items():
                acc = []
                for r in range(draws):
                    idx = query_indices(seed, vp.shape[0], Q, r)
                    rng = mechanism_rng(METHODS, seed, method, m, Q, r)
                    lab = release(METHODS, method, vp[idx], vn[idx], mech, rng, classes)
                    acc.append(float(np.mean(lab == labels[idx])))
                rec = {"dataset": dataset, "method": method, "m": m, "Q": Q, "K": K,
                       "accuracy_mean": float(np.mean(acc)), "accuracy_std": float(np.std(acc)), "draws": draws}
                rec.update(privacy(method, mech, K, Q, eps_teacher, Delta, delta_prime))
                args = spec.argument_values(mech)  # the release's ε0 and σ go into its row
                rec.update({k: args[k] for k in ("eps0", "sigma") if k in args})
                rows.append(rec)
    return rows


#: the rows of :func:`run_equal_total`, with their mechanism stream ids
EQUAL_TOTAL_METHODS = {"darrm-designed": 111, "gnmax": 112, "confident-gnmax": 113}


def run_equal_total(dataset: str, votes: np.ndarray, labels: np.ndarray, *, total_eps=(0.5, 2.0, 4.0),
                    queries=(20, 100, 500), delta_total: float = 1e-5, draws: int = 10, seed: int = 0,
                    prior_mean: float = 0.9, classes=(5, 8)) -> list[dict]:
    """Label accuracy of the non-private teachers' releases at equal TOTAL budgets (module docstring).

    Args:
        dataset: the data set's name (recorded).
        votes: ``(N, K)`` predicted labels of the K non-private teachers on the N test images (K odd).
        labels: the N true labels.
        total_eps: the total ε budgets.
        queries: the Q values.
        delta_total: the total δ of every budget.
        draws: draws of the Q test queries (:func:`darrm.experiments.pate.study.query_indices`).
        seed: the study's seed.
        prior_mean: the i.i.d. prior of the designed γ (data-independent).
        classes: the binary task ``(a, b)``.

    Returns:
        One row per (method, ε_total, Q): accuracy mean / std over the draws (over the answered
        queries for Confident-GNMax), answered count, the calibration and the charged total.

    Raises:
        ParameterError: a bad argument (naming it), or no γ meets a budget.
    """
    from darrm.budget.spec import TotalBudget
    from darrm.experiments.pate.multiclass_aggregators import (
        CONFIDENT_THRESHOLD_FRACTION,
        confident_release,
        confident_sigmas,
        confident_total_epsilon,
        gnmax_sigma,
    )
    from darrm.experiments.releases import darrm_release, gnmax_release

    instance("dataset", dataset, str, "the data set's name (a string)")
    total_eps, queries, delta_total, draws, prior_mean = check_equal_total_settings(
        total_eps, queries, delta_total, draws, prior_mean)
    v, labels = _equal_total_votes(votes, labels, queries, classes)
    seed = count("seed", seed, minimum=0)
    K = v.shape[1]
    a, b = classes
    rows = []
    for e in total_eps:
        for Q in queries:
            budget = TotalBudget(e, delta_total, Q)
            design = darrm.design_for_budget(DisjointParams(K, NonPrivate(), 1.0), budget, darrm.IIDPrior(prior_mean))
            sigma = gnmax_sigma(e, delta_total, Q)
            s1, s2 = confident_sigmas(e, delta_total, Q)
            calib = {
                "darrm-designed": {"family": design.winner.family, "epsilon_charged": design.winner.epsilon_total,
                                   "prior_error": design.winner.error, "accountant": "certified Q-fold composition "
                                   "of the table's own profile (the smaller of GDP and PLD)"},
                "gnmax": {"sigma": sigma, "epsilon_charged": float(gnmax_epsilon(sigma, delta_total, Q, "pld")),
                          "accountant": "exact composition of Q Gaussian mechanisms (PLD)"},
                "confident-gnmax": {"sigma1": s1, "sigma2": s2, "threshold": CONFIDENT_THRESHOLD_FRACTION * K,
                                    "epsilon_charged": confident_total_epsilon(s1, s2, delta_total, Q),
                                    "accountant": "exact, data-independent: every query charged (one Gaussian)"},
            }
            for method, stream in EQUAL_TOTAL_METHODS.items():
                acc, answered = [], []
                for r in range(draws):
                    idx = query_indices(seed, v.shape[0], Q, r)
                    rng = np.random.default_rng([seed, stream, Q, r, int(round(e * 1e6))])
                    ok = np.ones(Q, dtype=bool)
                    if method == "darrm-designed":
                        lab = darrm_release(v[idx], np.asarray(design.table.gamma), rng, classes)
                    elif method == "gnmax":
                        lab = gnmax_release(v[idx], sigma, rng, classes)
                    else:
                        hist = np.stack([(v[idx] == a).sum(axis=1), (v[idx] == b).sum(axis=1)], axis=1)
                        ok, pick = confident_release(hist, CONFIDENT_THRESHOLD_FRACTION * K, s1, s2, rng)
                        lab = np.where(pick == 1, b, a)
                    answered.append(int(ok.sum()))
                    if ok.any():
                        acc.append(float(np.mean(lab[ok] == labels[idx][ok])))
                rows.append({"dataset": dataset, "method": method, "K": K, "Q": Q, "epsilon_total": e,
                             "delta_total": delta_total, "draws": draws,
                             "accuracy_mean": float(np.mean(acc)) if acc else None,
                             "accuracy_std": float(np.std(acc)) if acc else None,
                             "answered_mean": float(np.mean(answered)), **calib[method]})
    return rows


def check_equal_total_settings(total_eps: object, queries: object, delta_total: object, draws: object,
                               prior_mean: object) -> tuple[tuple[float, ...], tuple[int, ...], float, int, float]:
    """The data-independent settings of :func:`run_equal_total`, validated (each refusal names its parameter).

    Returns:
        (total ε values, Q values, δ_total, draws, prior mean).

    Raises:
        ParameterError: naming the first bad setting."""
    if not isinstance(total_eps, (tuple, list)) or not total_eps:
        raise ParameterError("total_eps", f"must be a non-empty sequence of total ε, got {total_eps!r}")
    if not isinstance(queries, (tuple, list)) or not queries:
        raise ParameterError("queries", f"must be a non-empty sequence of query counts, got {queries!r}")
    return (tuple(epsilon("total_eps", e) for e in total_eps), tuple(count("queries", q) for q in queries),
            open_unit("delta_total", delta_total), count("draws", draws), open_unit("prior_mean", prior_mean))


def _equal_total_votes(votes: object, labels: object, queries: tuple[int, ...],
                       classes: object) -> tuple[np.ndarray, np.ndarray]:
    """(votes, labels) of :func:`run_equal_total`, validated (each refusal names its parameter): ``(N, K)``
    votes in the two classes with K odd, N labels in them, each Q at most N."""
    if not (isinstance(classes, tuple) and len(classes) == 2 and all(isinstance(c, int) and not isinstance(c, bool)
                                                                     for c in classes) and classes[0] != classes[1]):
        raise ParameterError("classes", f"must be two distinct integer classes (a, b), got {classes!r}")
    try:
        v, y = np.asarray(votes), np.asarray(labels)
    except (TypeError, ValueError) as exc:
        raise ParameterError("votes", f"must be an (N, K) array of class labels: {exc}") from None
    if v.ndim != 2 or v.shape[0] == 0 or v.shape[1] % 2 == 0 or not np.isin(v, classes).all():
        raise ParameterError("votes", f"must be an (N, K) array of the classes {classes}, K odd, got shape {v.shape}")
    if y.shape != (v.shape[0],) or not np.isin(y, classes).all():
        raise ParameterError("labels", f"must be {v.shape[0]} labels in {classes}, got shape {y.shape}")
    for q in queries:
        count("queries", q, maximum=v.shape[0])
    return v, y


def markdown_equal_total(rows: list[dict]) -> str:
    """The rows of :func:`run_equal_total` as one table per data set: accuracy (std) [answered], charged ε."""
    out = []
    for ds in sorted({r["dataset"] for r in rows}):
        sel = [r for r in rows if r["dataset"] == ds]
        out += [f"**{ds}**, K = {sel[0]['K']}, δ_total = {sel[0]['delta_total']:g}, {sel[0]['draws']} draws", "",
                "| method | ε_total | Q | accuracy (std) [answered] | ε charged | accountant |",
                "|---|---|---|---|---|---|"]
        for r in sel:
            acc = "–" if r["accuracy_mean"] is None else f"{r['accuracy_mean']:.3f} ({r['accuracy_std']:.3f})"
            out.append(f"| {r['method']}{' (' + r['family'] + ')' if 'family' in r else ''} | {r['epsilon_total']:g} | "
                       f"{r['Q']} | {acc} [{r['answered_mean']:g}] | {r['epsilon_charged']:.4f} | {r['accountant']} |")
        out.append("")
    return "\n".join(out)


def nonprivate_votes(dataset: str, data_dir: str | None = None,
                     cache_dir: Path | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(votes, test labels) of the PATE study's K = 11 non-private teachers (cached; trained when absent:
    about a minute on CPU, no DP-SGD).

    Args:
        dataset: ``mnist`` or ``fashion-mnist``.
        data_dir: folder holding the IDX files (default: searched, then downloaded).
        cache_dir: the teacher cache (default: :func:`~darrm.experiments.cache.default_cache_dir`).

    Returns:
        ``(votes, labels)``.

    Raises:
        DatasetError: the data set is missing or corrupt.
    """
    get_ensemble = _ensembles().get_ensemble
    cfg, task = _task(dataset, data_dir)
    cache = Path(cache_dir) if cache_dir else default_cache_dir()
    return get_ensemble(task, cfg.teacher_config(False), cache, progress=False).votes, task.test_labels


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


def markdown_all(rows: list[dict]) -> str:
    """:func:`markdown` for every allowance m of ``rows``."""
    return "\n".join(markdown(rows, m) for m in sorted({r["m"] for r in rows}))


def _task(dataset: str, data_dir: str | None, allow_download: bool = True):
    cfg = StudyConfig(dataset)
    ds = load_dataset(dataset, data_dir, allow_download=allow_download)
    return cfg, binary_task(ds, cfg.classes, cfg.train_size, cfg.seed)


def _ensembles():
    """The PATE ensemble module, imported when used: it needs torch (``darrm[experiments]``)."""
    require("torch", "experiments", "the disjoint study on real data")
    from darrm.experiments.pate import ensemble

    return ensemble


def load_votes(dataset: str, data_dir: str | None = None, cache_dir: Path | None = None):
    """(private votes, non-private votes, test labels, ε_T) from the PATE study's cache; trains the
    teachers (minutes on CPU) where they are not cached."""
    get_ensemble = _ensembles().get_ensemble
    cfg, task = _task(dataset, data_dir)
    cache = Path(cache_dir) if cache_dir else default_cache_dir()
    priv = get_ensemble(task, cfg.teacher_config(True), cache, progress=False)
    nonpriv = get_ensemble(task, cfg.teacher_config(False), cache, progress=False)
    eps_t = max(float(t["eps"]) for t in priv.teachers)
    return priv.votes, nonpriv.votes, task.test_labels, eps_t


def cached_votes(dataset: str, data_dir: str | None = None, cache_dir: Path | None = None):
    """As :func:`load_votes` when both ensembles' votes are cached and the data set is present,
    else None (never trains)."""
    try:
        cfg, task = _task(dataset, data_dir, allow_download=False)
    except DatasetError:  # data set not available here
        return None
    cache = Path(cache_dir) if cache_dir else default_cache_dir()
    dirs = [_ensembles().ensemble_dir(task, cfg.teacher_config(p), cache) for p in (True, False)]
    if not all((d / "votes.npy").is_file() and (d / f"teacher_{cfg.K - 1:02d}.pt").is_file() for d in dirs):
        return None
    return load_votes(dataset, data_dir, cache)
