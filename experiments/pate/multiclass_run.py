"""Ten-class PATE end to end at equal TOTAL budgets: teachers → five aggregators → students.

Stages: load + verify data → split the public (test) set into a query pool and a guarded held-out
half (:func:`~.public_split.split_public`) → K non-private teachers on disjoint shards vote on the
pool (:func:`~.multiclass_teachers.multiclass_votes`, cached) → for every (ε_total, Q): GNMax and
Confident-GNMax calibrated to (ε_total, δ_total) exactly, the DaRRM plurality aggregator at the
per-query budget whose own profile composes to it (:mod:`~.plurality_profile`), the duel family
designed for the total (:mod:`~.plurality_duel`, never worse than GNMax under its prior) and the
non-private plurality → the same query indices for every method (:func:`~.study.query_indices`) → a student per
release trained on the pool and scored once on the held-out half.

Outputs in ``out``: ``results.json`` (one record per (method, ε_total, Q)), ``multiclass.md`` and
``multiclass_student_vs_epsilon.png``.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from darrm.accounting import confident_gnmax_epsilon
from darrm.atomic import atomic_write_bytes, atomic_write_json
from darrm.budget.spec import TotalBudget
from darrm.budget.targets import gdp_epsilon
from darrm.errors import CertificationError, ParameterError, SolveError
from darrm.experiments.cache import compute_shared, default_cache_dir, settings_key
from darrm.experiments.data.loader import load_dataset
from darrm.experiments.pate.multiclass_aggregators import (
    CONFIDENT_RATIO,
    CONFIDENT_THRESHOLD_FRACTION,
    confident_release,
    confident_sigmas,
    confident_total_epsilon,
    gnmax_release,
    gnmax_sigma,
    histograms_of,
    plurality_budget,
)
from darrm.experiments.pate.multiclass_config import MulticlassConfig
from darrm.experiments.pate.multiclass_report import multiclass_plot, multiclass_table
from darrm.experiments.pate.multiclass_teachers import multiclass_votes
from darrm.experiments.pate.plurality_duel import (
    ACCOUNTANT,
    DuelCandidate,
    certified_duel_mu,
    design_duel,
    release_duel,
)
from darrm.experiments.pate.plurality_profile import plurality_tight_budget
from darrm.experiments.pate.plurality_top_two import ROUNDING_MARGIN, TopTwoTable, max_divergence, release_plurality
from darrm.experiments.pate.public_split import HeldOutSet, split_public
from darrm.experiments.pate.smooth_sensitivity import fixed_parameters, publish_epsilon
from darrm.experiments.pate.student import train_student
from darrm.experiments.pate.student_study import student_seed
from darrm.experiments.pate.study import query_indices
from darrm.experiments.pate.teachers import warn_weak_teachers
from darrm.paths import check_output_dir

__all__ = ["MULTICLASS_METHODS", "public_subset", "run_multiclass"]

#: methods in table order, with their mechanism stream ids
MULTICLASS_METHODS = {"gnmax": 21, "confident-gnmax": 22, "darrm-plurality": 23, "darrm-duel": 29,
                      "plurality-nonprivate": 24, "true-labels": 26}
#: the query protocol of every row: Q pool positions drawn uniformly without replacement, blind to labels
QUERY_PROTOCOL = ("queries drawn blind: Q pool images uniformly without replacement, the same for every method "
                  "(PATE 2017's student instead takes a class-balanced labelled subset chosen with the true labels)")
#: a teacher below this accuracy on the query pool is reported by a warning (chance is 0.1 for ten classes)
TEACHER_WARN_ACCURACY = 0.5
C = 10
#: bisection steps of the DaRRM plurality aggregator's tight per-query budget (one LP each)
TIGHT_SEARCH_STEPS = 4

ACCOUNTANTS = {
    "gnmax": "exact: Q Gaussian mechanisms of sensitivity sqrt(2) = one Gaussian of sensitivity sqrt(2Q) (PLD)",
    "confident-gnmax": "exact, data-independent: post-processing of Q x (threshold Gaussian sigma1, sensitivity 1 "
                       "+ GNMax sigma2), one Gaussian (PLD); the data-dependent epsilon is analysis only",
    "darrm-plurality": "TIGHT: PLD of the table's own per-query dominating pair (every move, both directions) "
                       "composed over Q queries (darrm.accounting.queries.fresh_bound, pessimistic); "
                       "delta_q = delta_total/(2Q), "
                       "the largest eps_q found by bisection; valid (fresh coins per query)",
    "darrm-duel": ACCOUNTANT,
    "plurality-nonprivate": "none: the noiseless plurality of the teachers (ceiling, no DP)",
    "true-labels": "none: the pool's true labels of the queried images (the student's ceiling, no teachers)",
}


#: the modules whose code decides a shared design: a change to any of them keys new cache files
_DESIGN_MODULES = ("plurality_top_two.py", "plurality_profile.py", "plurality_duel.py", "multiclass_aggregators.py")


def _design_code() -> str:
    here = Path(__file__).parent
    return settings_key({name: (here / name).read_text() for name in _DESIGN_MODULES})


def _plurality_design(K: int, C: int, e: float, delta: float, Q: int, prior: float) -> dict:
    """The DaRRM plurality table for one total budget (the tight per-query search), as JSON."""
    t0 = time.perf_counter()
    pq = plurality_budget(e, delta, Q)  # generic: the search's feasible start
    tight = plurality_tight_budget(K, C, e, delta, Q, p_correct=prior, start=pq.eps_query, steps=TIGHT_SEARCH_STEPS)
    table = tight.table
    return {"eps_query": tight.eps_query, "delta_query": tight.delta_query,
            "epsilon_total_check": tight.composition.epsilon, "pld_discretization": tight.composition.interval,
            "eps_query_generic": pq.eps_query, "lp_solves": tight.solves, "gamma": table.gamma.tolist(),
            "certified_divergence": table.max_divergence, "prior_agreement": table.expected_agreement,
            "lp": table.info, "seconds_calibration": time.perf_counter() - t0}


def _plurality_entry(K: int, C: int, design: dict) -> dict:
    """The mechanism entry of a (possibly cached) plurality design: its table, certified again here
    (:func:`~.plurality_top_two.max_divergence` + the rounding margin ≤ δ_q), so a cache file is
    never trusted for privacy."""
    gamma = np.asarray(design["gamma"], dtype=np.float64)
    worst = max_divergence(gamma, K, C, design["eps_query"])
    if not worst + ROUNDING_MARGIN <= design["delta_query"]:
        raise CertificationError(f"cached plurality table (eps_q={design['eps_query']}) fails its certificate: "
                                 f"divergence {worst} > delta_q {design['delta_query']}")
    table = TopTwoTable(K, C, design["eps_query"], design["delta_query"], gamma, worst, design["prior_agreement"],
                        design["lp"])
    return {k: v for k, v in design.items() if k != "gamma"} | {"table": table, "certified_divergence": worst}


def _duel_design(K: int, C: int, e: float, delta: float, Q: int, prior: float) -> dict:
    """The duel family's design for one total budget (:func:`~.plurality_duel.design_duel`), as JSON."""
    t0 = time.perf_counter()
    duel = design_duel(K, C, TotalBudget(e, delta, Q), prior)

    def member(c: DuelCandidate) -> dict:
        return {"name": c.name, "split": c.split, "sigma1": c.sigma1, "mu2_certified": c.mu2,
                "prior_agreement": c.agreement, "epsilon_total_check": c.epsilon}

    best = duel.best
    return {"design": best.name, "split": best.split, "sigma1": best.sigma1, "mu2_certified": best.mu2,
            "epsilon_total_check": best.epsilon, "prior_agreement": best.agreement,
            "prior_agreement_gnmax": duel.gnmax.agreement, "h": best.h.tolist(),
            "candidates": [member(c) for c in duel.candidates], "seconds_calibration": time.perf_counter() - t0}


def _duel_entry(K: int, budget: TotalBudget, design: dict) -> dict:
    """The mechanism entry of a (possibly cached) duel design, its candidate rebuilt and certified again:
    stage 2's μ2 recomputed from h (:func:`~.plurality_duel.certified_duel_mu`) and the Q-fold charge
    √Q·√(μ1² + μ2²)-GDP, μ1 = √2/σ1, within the budget (:func:`darrm.budget.targets.gdp_epsilon`, mpmath)."""
    h = np.asarray(design["h"], dtype=np.float64)
    mu2 = certified_duel_mu(h, K)
    charged = gdp_epsilon(math.sqrt(budget.queries) * math.hypot(math.sqrt(2.0) / design["sigma1"], mu2),
                          budget.delta)
    if not charged <= budget.epsilon:
        raise CertificationError(f"cached duel design ({design['design']}, split {design['split']}) fails its "
                                 f"certificate: charged epsilon {charged} > {budget.epsilon}")
    candidate = DuelCandidate(design["design"], design["split"], design["sigma1"], mu2, h, design["prior_agreement"],
                              charged)
    return {k: v for k, v in design.items() if k != "h"} | {"candidate": candidate, "mu2_certified": mu2,
                                                             "epsilon_total_check": charged}


def _mechanisms(cfg: MulticlassConfig, progress: bool, cache_dir: Path) -> dict[tuple[str, float, int], dict]:
    """Calibrated parameters per (method, ε_total, Q), each with the seconds its calibration took.

    The DaRRM designs (the plurality table's tight search, the duel family) depend only on (K, C,
    ε_total, δ_total, Q, prior) and the code that computes them, not on the data: they are shared
    through ``cache_dir`` (:func:`~darrm.experiments.cache.compute_shared`), so a second data set, or a
    run beside this one, reads them instead of solving them again; a cached plurality table is
    certified again when read. ``seconds_calibration`` is the time of the solve that made the design.
    """
    K = cfg.teachers
    out: dict[tuple[str, float, int], dict] = {}
    cells = [(e, Q) for e in cfg.total_eps for Q in cfg.queries]
    for e, Q in cells:
        t0 = time.perf_counter()
        s = gnmax_sigma(e, cfg.total_delta, Q)
        out[("gnmax", e, Q)] = {"sigma": s, "seconds_calibration": time.perf_counter() - t0}
        t0 = time.perf_counter()
        s1, s2 = confident_sigmas(e, cfg.total_delta, Q)
        out[("confident-gnmax", e, Q)] = {"sigma1": s1, "sigma2": s2, "threshold": CONFIDENT_THRESHOLD_FRACTION * K,
                                          "sigma_ratio": CONFIDENT_RATIO,
                                          "epsilon_total_check": confident_total_epsilon(s1, s2, cfg.total_delta, Q),
                                          "seconds_calibration": time.perf_counter() - t0}
    designs = {"darrm-duel": _duel_design, "darrm-plurality": _plurality_design}
    code = _design_code()
    jobs: dict[tuple[str, float, int], tuple[Path, Callable[[], dict]]] = {}
    for method, design in designs.items():
        if method not in cfg.methods:
            continue
        for e, Q in cells:
            settings = {"method": method, "K": K, "C": C, "eps_total": e, "delta_total": cfg.total_delta, "Q": Q,
                        "prior": cfg.prior_accuracy, "tight_steps": TIGHT_SEARCH_STEPS, "code": code}
            path = Path(cache_dir) / f"pate-design-{method}-{settings_key(settings)}.json"
            jobs[(method, e, Q)] = (path, functools.partial(design, K, C, e, cfg.total_delta, Q, cfg.prior_accuracy))
    Path(cache_dir).mkdir(parents=True, exist_ok=True)
    if jobs and progress:
        print(f"DaRRM designs: {len(jobs)} (shared through {cache_dir})", flush=True)
    for (method, e, Q), made in compute_shared(jobs).items():
        out[(method, e, Q)] = (_plurality_entry(K, C, made) if method == "darrm-plurality"
                               else _duel_entry(K, TotalBudget(e, cfg.total_delta, Q), made))
    return out


def _release(method: str, hist: np.ndarray, votes: np.ndarray, mech: dict | None,
             rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(answered flags, labels; −1 where unanswered) of one method on one query set."""
    if method == "plurality-nonprivate":
        return np.ones(len(hist), dtype=bool), hist.argmax(axis=1)
    if method == "true-labels":
        raise AssertionError("true labels are not a release of the votes")
    assert mech is not None
    if method == "gnmax":
        return np.ones(len(hist), dtype=bool), gnmax_release(hist, mech["sigma"], rng)
    if method == "confident-gnmax":
        return confident_release(hist, mech["threshold"], mech["sigma1"], mech["sigma2"], rng)
    if method == "darrm-duel":
        return np.ones(len(hist), dtype=bool), release_duel(votes, votes.shape[1], C, mech["candidate"], rng)
    return np.ones(len(hist), dtype=bool), release_plurality(votes, mech["table"], rng)


NONPRIVATE = ("plurality-nonprivate", "true-labels")


def _cells(cfg: MulticlassConfig) -> list[tuple[str, float | None, int]]:
    cells: list[tuple[str, float | None, int]] = []
    for Q in cfg.queries:
        for e in cfg.total_eps:
            cells += [(m, e, Q) for m in cfg.methods if m not in NONPRIVATE]
        cells += [(m, None, Q) for m in NONPRIVATE if m in cfg.methods]
    return cells


def public_subset(images: np.ndarray, labels: np.ndarray, size: int | None, seed: int) -> tuple[np.ndarray,
                                                                                             np.ndarray]:
    """The public set the study splits: all of it (``size`` None) or a seeded subset (stream 27), in order.

    Args:
        images: the public (test) images.
        labels: their labels.
        size: the subset's size, or None.
        seed: the study's seed.

    Returns:
        ``(images, labels)`` of the subset.

    Raises:
        ParameterError: ``size`` larger than the public set.
    """
    if size is None:
        return images, labels
    if size > len(labels):
        raise ParameterError("public_size", f"at most the public set's {len(labels)} images, got {size}")
    keep = np.sort(np.random.default_rng([seed, 27]).permutation(len(labels))[:size])
    return images[keep], labels[keep]


def run_multiclass(cfg: MulticlassConfig, out: Path, *, data_dir: str | None = None, cache_dir: Path | None = None,
                   progress: bool = True) -> list[dict]:
    """Run the ten-class study for ``cfg``, write its outputs into ``out`` and return the records.

    Trains (or reloads) K teachers on disjoint shards of the ten-class training set, releases their
    pool votes with each method at each (total ε, Q) and draw, trains a student on each release and
    scores it on the held-out half of the public set.  Writes ``results.json``,
    ``multiclass_run.json``, ``multiclass.md`` and ``multiclass_student_vs_epsilon.png``.

    Args:
        cfg: the study's settings.
        out: the output folder (created).
        data_dir: folder holding the IDX files (default: searched, then downloaded).
        cache_dir: the teacher cache root (default: :func:`~darrm.experiments.cache.default_cache_dir`).
        progress: show progress bars.

    Returns:
        The records written to ``results.json``, one per (method, ε_total, Q).

    Raises:
        ParameterError: ``out`` is not a usable output folder.
        DatasetError: the data set's files are missing, corrupt or fail their checksum.
        CacheError: a cached teacher or vote file is not what the cache writes.
    """
    t_start = time.perf_counter()
    out = check_output_dir("out", out)
    out.mkdir(parents=True, exist_ok=True)
    cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    ds = load_dataset(cfg.dataset, data_dir)
    train_x, train_y = ds.train_images, ds.train_labels
    if cfg.train_size is not None:
        keep = np.sort(np.random.default_rng([cfg.seed, 19]).permutation(len(train_y))[:cfg.train_size])
        train_x, train_y = train_x[keep], train_y[keep]
    public_x, public_y = public_subset(ds.test_images, ds.test_labels, cfg.public_size, cfg.seed)
    split = split_public(len(public_y), cfg.seed, cfg.held_out_fraction)
    pool_x, pool_y = public_x[split.pool], public_y[split.pool].astype(np.int64)
    held = HeldOutSet(public_x[split.held_out], public_y[split.held_out])
    votes, teacher_run = multiclass_votes(cfg.dataset, train_x, train_y, pool_x, cfg.teachers, cfg.teacher, cfg.seed,
                                          cache_dir, progress)
    hist = histograms_of(votes, C)
    teacher_acc = [float(np.mean(votes[:, i] == pool_y)) for i in range(votes.shape[1])]
    weak = warn_weak_teachers(teacher_acc, TEACHER_WARN_ACCURACY, "the query pool")
    mech = _mechanisms(cfg, progress, cache_dir)
    classes = tuple(range(C))
    acc: dict[tuple[str, float | None, int], dict[str, list]] = {}
    cells = _cells(cfg)
    t_students = 0.0
    trained: dict[tuple[bytes, bytes, int], tuple[float, float, float]] = {}
    shared_students = 0
    everything = np.arange(len(pool_x))
    for method, e, Q in tqdm(cells, desc="releases + students", disable=not progress, leave=False):
        m = mech.get((method, e, Q)) if e is not None else None
        cell = acc.setdefault((method, e, Q), {"label": [], "student": [], "baseline": [], "answered": [],
                                               "seconds": [], "seconds_student": [], "eps_dd": []})
        for r in range(cfg.draws):
            idx = query_indices(cfg.seed, len(pool_x), Q, r)
            rng = np.random.default_rng([cfg.seed, MULTICLASS_METHODS[method], Q, r, int(round((e or 0) * 1e6))])
            t0 = time.perf_counter()
            if method == "true-labels":
                answered, labels = np.ones(len(idx), dtype=bool), pool_y[idx]
            else:
                answered, labels = _release(method, hist[idx], votes[idx], m, rng)
            cell["seconds"].append(time.perf_counter() - t0)
            n_ans = int(answered.sum())
            cell["answered"].append(n_ans)
            cell["label"].append(float(np.mean(labels[answered] == pool_y[idx][answered])) if n_ans else np.nan)
            if method == "confident-gnmax" and m is not None:
                account = confident_gnmax_epsilon([h.tolist() for h in hist[idx]], answered.tolist(), m["threshold"],
                                                  m["sigma1"], m["sigma2"], cfg.total_delta)
                cell["eps_dd"].append(account.epsilon_data_dependent)
                cell.setdefault("eps_pub", []).append(_published(hist[idx], answered, m, cfg, Q, e, r))
            t1 = time.perf_counter()
            if n_ans:
                q = idx[answered]
                # a student is a function of (queried images, released labels, seed): two releases that agree
                # label for label (e.g. the noiseless plurality and a low-noise GNMax) share one student
                key = (q.tobytes(), labels[answered].astype(np.int64).tobytes(), student_seed(cfg.seed, Q, r))
                if key not in trained:
                    rest = np.setdiff1d(everything, q, assume_unique=True)
                    student = train_student(pool_x[q], labels[answered], pool_x[rest], classes, cfg.student,
                                            student_seed(cfg.seed, Q, r))
                    student_acc, seconds = held.accuracy(student.predict), time.perf_counter() - t1
                    base_acc = np.nan
                    if cfg.baseline_student is not None:
                        base = train_student(pool_x[q], labels[answered], pool_x[rest], classes,
                                             cfg.baseline_student, student_seed(cfg.seed, Q, r))
                        base_acc = held.accuracy(base.predict)
                    trained[key] = (student_acc, base_acc, seconds)
                else:
                    shared_students += 1
                acc_student, acc_base, seconds_student = trained[key]
                cell["student"].append(acc_student)
                cell["seconds_student"].append(seconds_student)
                if cfg.baseline_student is not None:
                    cell["baseline"].append(acc_base)
            else:
                cell["student"].append(np.nan)  # nothing answered: no student
                cell["baseline"].append(np.nan)
            t_students += time.perf_counter() - t1
    records = _records(cfg, acc, mech)
    run = {"config": cfg.as_dict(), "device": "cpu", "cpu": platform.processor() or platform.machine(),
           "teachers": teacher_run, "seconds_students": t_students,
           "students_trained": len(trained), "students_shared": shared_students,
           "seconds_total": time.perf_counter() - t_start,
           "teacher_accuracy_on_pool": teacher_acc, "teachers_below_warning": weak,
           "teacher_warning_accuracy": TEACHER_WARN_ACCURACY, "query_protocol": QUERY_PROTOCOL,
           "plurality_accuracy_on_pool": float(np.mean(hist.argmax(axis=1) == pool_y)),
           "split": {"pool": int(len(split.pool)), "held_out": int(len(split.held_out))}}
    atomic_write_json(out / "results.json", records)
    atomic_write_json(out / "multiclass_run.json", run)
    atomic_write_bytes(out / "multiclass.md", multiclass_table(records, run).encode())
    multiclass_plot(records, out / "multiclass_student_vs_epsilon.png")
    return records


def _published(hist: np.ndarray, answered: np.ndarray, m: dict, cfg: MulticlassConfig, Q: int, e: float | None,
               r: int) -> dict | None:
    """Confident-GNMax's data-dependent ε released by GNSS (:mod:`.smooth_sensitivity`), or None when
    conditions C5–C6 fail; its own random stream (25)."""
    order, beta, sigma_ss = fixed_parameters(m["sigma1"], m["sigma2"], Q, cfg.total_delta, e or 1.0)
    rng = np.random.default_rng([cfg.seed, 25, Q, r, int(round((e or 0) * 1e6))])
    try:
        rel = publish_epsilon(hist, answered, m["threshold"], m["sigma1"], m["sigma2"], cfg.total_delta, order, beta,
                              sigma_ss, rng)
    except SolveError:
        return None
    return dataclasses.asdict(rel)


def _stats(values: list) -> tuple[float | None, float | None]:
    a = np.asarray(values, dtype=np.float64)
    a = a[np.isfinite(a)]
    return (float(a.mean()), float(a.std(ddof=0))) if a.size else (None, None)


def _records(cfg: MulticlassConfig, acc: dict, mech: dict) -> list[dict]:
    records = []
    for (method, e, Q), cell in acc.items():
        lab, stu, base = _stats(cell["label"]), _stats(cell["student"]), _stats(cell["baseline"])
        rec: dict[str, Any] = {
            "dataset": cfg.dataset, "classes": C, "teachers": cfg.teachers, "method": method, "Q": Q,
            "epsilon_total": e, "delta_total": None if e is None else cfg.total_delta,
            "accountant": ACCOUNTANTS[method],
            "accuracy_mean": lab[0], "accuracy_std": lab[1],
            "student": cfg.student.as_dict(),
            "student_accuracy_mean": stu[0], "student_accuracy_std": stu[1],
            "baseline_student_accuracy_mean": base[0], "baseline_student_accuracy_std": base[1],
            "seconds_student_mean": float(np.mean(cell["seconds_student"])) if cell["seconds_student"] else None,
            "query_protocol": QUERY_PROTOCOL,
            "answered_mean": float(np.mean(cell["answered"])), "draws": cfg.draws,
            "seconds_release_mean": float(np.mean(cell["seconds"])),
            "smoke_test": cfg.smoke_test,
        }
        if e is not None:
            params = {k: v for k, v in mech[(method, e, Q)].items() if k not in ("table", "candidate")}
            rec.update(params)
        if cell["eps_dd"]:
            rec["epsilon_data_dependent_mean"] = float(np.mean(cell["eps_dd"]))
            rec["epsilon_data_dependent_note"] = ("analysis only: a function of the private histograms; its "
                                                  "publishable version is epsilon_published (smooth sensitivity)")
            pub = [p for p in cell.get("eps_pub", []) if p is not None]
            rec["epsilon_published"] = [p["epsilon_published"] for p in pub]
            rec["epsilon_published_note"] = (
                "GNSS release of the data-dependent RDP at a fixed order (Papernot et al. 2018, App. B, Thm 23), "
                "parameters chosen without the data; a noisy number, one per draw; not the calibrated total, "
                "which stays epsilon_total" if pub else "not publishable: conditions C5-C6 fail")
            if pub:
                rec.update(smooth_order=pub[0]["order"], smooth_beta=pub[0]["beta"], smooth_sigma=pub[0]["sigma_ss"],
                           smooth_gnss_rdp=pub[0]["gnss_rdp"],
                           smooth_sensitivity_mean=float(np.mean([p["smooth_sensitivity"] for p in pub])))
        records.append(rec)
    return records
