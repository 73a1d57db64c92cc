"""Run the private knowledge-transfer study end to end and write its results.

Stages (each with a progress bar): load + verify data → private (DP-SGD) and non-private
teachers and their test-set votes (cached, resumable) → per m: γ_Sub, certified γ_opt and
GNMax σ (paper RDP calibration and the tightest accountant) at the same per-query budget
(mε, δ = 1 − (1−Δ)^m), and GNMax at the DaRRM rows' own TOTAL (the private teachers' (ε, Δ),
exact Gaussian composition over Q) → Q-query draws → released labels (votes only) → accuracy.
With a student (``cfg.student``): the public set is split into a query pool and a guarded
held-out half first; queries come from the pool, and a student per released label set is
scored on the held-out half.  Every record carries ``epsilon_total``/``delta_total`` and the
accountant that justifies them (:mod:`~darrm.experiments.pate.totals`).

Outputs in ``out``: ``results.json`` (list of records), ``teachers.json``, ``mechanisms.json``
(γ tables, σ), ``tables.md`` (next to the paper's numbers) and ``accuracy_vs_m.png``.
"""

from __future__ import annotations

import io
import platform
import time
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
from tqdm.auto import tqdm

import darrm
from darrm.accounting import calibrate_sigma, gnmax_epsilon, kairouz_general, optimal_homogeneous_epsilon
from darrm.atomic import atomic_write_bytes, atomic_write_json
from darrm.experiments.cache import default_cache_dir
from darrm.experiments.data.loader import binary_task, load_dataset
from darrm.experiments.pate.ensemble import get_ensemble
from darrm.experiments.pate.multiclass_aggregators import gnmax_sigma
from darrm.experiments.pate.public_split import HeldOutSet, PublicSplit, split_public
from darrm.experiments.pate.report import accuracy_plot, markdown_report
from darrm.experiments.pate.student_report import student_plot, student_table
from darrm.experiments.pate.student_study import student_accuracies
from darrm.experiments.pate.study import METHODS, StudyConfig, query_indices
from darrm.experiments.pate.teachers import pick_device
from darrm.experiments.pate.totals import total_budget
from darrm.experiments.releases import mechanism_rng, release
from darrm.paths import check_output_dir

__all__ = ["Mechanisms", "build_mechanisms", "load_releases", "mechanism_at", "released_labels", "run_study",
           "save_releases", "score"]

TIGHT_METHODS: tuple[Literal["rdp", "pld"], ...] = ("rdp", "pld")


class Mechanisms(dict):
    """Per-m mechanism parameters: ``{m: {"gamma_sub", "gamma_opt", "sigma_paper", "sigma_tight", ...}}``."""


def build_mechanisms(cfg: StudyConfig, eps_teacher: float, progress: bool = True) -> Mechanisms:
    """γ_Sub, γ_opt and GNMax σ for every m at the per-query budget (m·ε_teacher, 1 − (1−Δ)^m).

    Args:
        cfg: the study's settings (K, the m values, Δ, the Q values).
        eps_teacher: each teacher's DP-SGD ε (the largest over the teachers).
        progress: show a progress bar.

    Returns:
        The :class:`Mechanisms`: per m, the per-query budget, γ_Sub, the certified γ_opt table and its
        certificate, and the GNMax σ by each calibration.

    Raises:
        ParameterError: a bad ``eps_teacher`` or setting (naming it).
        SolveError: the γ_opt LP failed or its table could not be certified.
    """
    mech = Mechanisms()
    for m in tqdm(cfg.ms, desc="γ_opt LP + GNMax σ per m", disable=not progress, leave=False):
        params = darrm.PrivacyParams(K=cfg.K, m=m, eps=eps_teacher, member_delta=cfg.member_delta)
        eps_q, delta_q = m * eps_teacher, float(params.delta)
        table = darrm.solve(params, progress=False)
        tight = {meth: calibrate_sigma(eps_q, delta_q, meth) for meth in TIGHT_METHODS}
        best = min(tight, key=tight.__getitem__)
        mech[m] = {
            "eps_query": eps_q,
            "delta_query": delta_q,
            "gamma_sub": darrm.family_gamma("sub", params),
            # the certified tables themselves, for the tight fresh-member accountant (not written out)
            "table_darrm-sub": darrm.solve(params, family="sub", progress=False),
            "table_darrm-opt": table,
            "gamma_opt": np.asarray(table.gamma, dtype=np.float64),
            "gamma_opt_violation": float(table.violation),
            "gamma_opt_info": {k: v for k, v in table.info.items()},
            "sigma_paper": calibrate_sigma(eps_q, delta_q, "paper-rdp"),
            "sigma_tight": tight[best],
            "sigma_tight_method": best,
            "sigma_all": tight,
            # GNMax whose Q answers are exactly (ε_teacher, Δ)-DP: the total of every DaRRM row
            "sigma_equal_total_by_Q": {str(Q): gnmax_sigma(eps_teacher, cfg.member_delta, Q) for Q in cfg.queries},
        }
    return mech


def mechanism_at(mech_m: dict, Q: int) -> dict:
    """The per-m mechanism dict with the entries that depend on Q resolved (``sigma_equal_total``).

    Args:
        mech_m: one value of :class:`Mechanisms`.
        Q: number of queries.

    Returns:
        A copy of ``mech_m`` with ``sigma_equal_total`` set for ``Q``.

    Raises:
        KeyError: ``Q`` is not one of the study's query counts.
    """
    return {**mech_m, "sigma_equal_total": mech_m["sigma_equal_total_by_Q"][str(Q)]}


def released_labels(cfg: StudyConfig, votes_private: np.ndarray, votes_nonprivate: np.ndarray,
                    mech: Mechanisms) -> dict[tuple[str, int, int, int], tuple[np.ndarray, np.ndarray]]:
    """Every released label of the study: ``{(method, m, Q, draw): (query indices, labels)}``.

    Only the votes enter; the true labels are never passed in.

    Args:
        cfg: the study's settings (methods' m values, Q values, draws, seed, classes).
        votes_private: the DP-SGD teachers' votes ``(n_test, K)``.
        votes_nonprivate: the non-private teachers' votes ``(n_test, K)``.
        mech: the mechanisms of :func:`build_mechanisms`.

    Returns:
        For each (method, m, Q, draw): the Q query indices and the released labels.

    Raises:
        KeyError: ``mech`` lacks one of the study's m values.
    """
    n_test = votes_private.shape[0]
    out = {}
    for Q in cfg.queries:
        for r in range(cfg.draws):
            idx = query_indices(cfg.seed, n_test, Q, r)
            for m in cfg.ms:
                mech_mq = mechanism_at(mech[m], Q)
                for method in METHODS:
                    rng = mechanism_rng(METHODS, cfg.seed, method, m, Q, r)
                    out[(method, m, Q, r)] = (idx, release(METHODS, method, votes_private[idx],
                                                          votes_nonprivate[idx], mech_mq, rng, cfg.classes))
    return out


def score(released: dict, labels: np.ndarray) -> dict[tuple[str, int, int], np.ndarray]:
    """Per (method, m, Q): the array of per-draw accuracies against ``labels``.

    Args:
        released: the output of :func:`released_labels`.
        labels: the true labels of the queried set.

    Returns:
        ``{(method, m, Q): accuracies}``, one accuracy per draw, in draw order.

    Raises:
        IndexError: a query index lies outside ``labels``.
    """
    acc: dict[tuple[str, int, int], list[float]] = {}
    for (method, m, Q, _draw), (idx, lab) in sorted(released.items()):
        acc.setdefault((method, m, Q), []).append(float(np.mean(lab == labels[idx])))
    return {k: np.asarray(v) for k, v in acc.items()}


def _privacy(method: str, m: int, Q: int, mech_m: dict, eps_t: float, cfg: StudyConfig) -> dict:
    if method == "majority-nonprivate":
        return {"eps_query": None, "delta_query": None, "eps_total_paper": None, "delta_total_paper": None,
                "eps_total_optimal": None, "privacy_note": "teachers trained without DP: no guarantee"}
    if method == "majority-private-parallel":
        return {"eps_query": eps_t, "delta_query": cfg.member_delta,
                "eps_total_paper": eps_t, "delta_total_paper": cfg.member_delta, "eps_total_optimal": eps_t,
                "privacy_note": "post-processing of the teachers: parallel composition, the teachers' "
                                "(eps, Delta) once for all Q queries"}
    if method == "gnmax-equal-total":
        sigma = mech_m["sigma_equal_total_by_Q"][str(Q)]
        return {"eps_query": None, "delta_query": None, "eps_total_paper": None, "delta_total_paper": None,
                "eps_total_optimal": None, "sigma": sigma,
                "eps_total_gaussian_pld": gnmax_epsilon(sigma, cfg.member_delta, Q, "pld"),
                "privacy_note": "GNMax on the non-private teachers calibrated so that its Q answers cost exactly "
                                "the private teachers' (eps, Delta): the total of every DaRRM row"}
    eq, dq = mech_m["eps_query"], mech_m["delta_query"]
    et, dt = kairouz_general(eq, dq, Q, cfg.delta_prime)
    rec = {"eps_query": eq, "delta_query": dq, "eps_total_paper": et, "delta_total_paper": dt,
           "eps_total_optimal": optimal_homogeneous_epsilon(eq, dq, Q, dt)}
    if method.startswith("gnmax"):
        sigma = mech_m["sigma_paper" if method == "gnmax-paper" else "sigma_tight"]
        rec["sigma"] = sigma
        rec["eps_total_gaussian_pld"] = gnmax_epsilon(sigma, dt, Q, "pld")
    return rec


def build_records(cfg: StudyConfig, accs: dict, mech: Mechanisms, eps_t: float,
                  students: dict | None = None) -> list[dict]:
    """One record per (m, Q, method): label accuracy, privacy (per query, paper totals, and the
    tightest valid ``epsilon_total``/``delta_total`` with its accountant), and with ``students``
    the held-out accuracy of the students (mean, std over draws)."""
    records = []
    for m in cfg.ms:
        for Q in cfg.queries:
            for method in METHODS:
                a = accs[(method, m, Q)]
                rec: dict[str, Any] = {"dataset": cfg.dataset, "method": method, "m": m, "Q": Q,
                                       "accuracy_mean": float(np.mean(a)), "accuracy_std": float(np.std(a, ddof=0)),
                                       "draws": int(len(a))}
                rec.update(_privacy(method, m, Q, mech[m], eps_t, cfg))
                spec = METHODS[method]
                fresh = rec["delta_total_paper"] or cfg.member_delta
                rec.update(total_budget(spec.kind, spec.ensemble, Q, mech[m], eps_t, cfg.member_delta,
                                        delta_fresh=fresh, sigma=rec.get("sigma"),
                                        table=mech[m].get(f"table_{method}")))
                if students is not None:
                    s = students[(method, m, Q)]
                    rec.update(student_accuracy_mean=float(np.mean(s)), student_accuracy_std=float(np.std(s, ddof=0)))
                records.append(rec)
    return records


def _teacher_record(dataset: str, method: str, infos: tuple[dict, ...], eps: float | None, delta: float | None) -> dict:
    acc = np.array([t["test_accuracy"] for t in infos])
    return {"dataset": dataset, "method": method, "m": None, "Q": None,
            "accuracy_mean": float(acc.mean()), "accuracy_std": float(acc.std(ddof=0)),
            "eps_query": eps, "delta_query": delta, "eps": eps, "delta": delta,
            "note": "accuracy = mean (std) over the K teachers of test-set accuracy on the two-class task; "
                    "eps = max over teachers (PRV accountant)" if eps is not None else
                    "accuracy = mean (std) over the K teachers; no privacy"}


def _portable_data(source_dir: str, files: list[dict]) -> dict:
    """The data set's provenance without machine-specific paths: the folder's name and each
    file's name (the files are identified by their SHA-256, not by where they lay)."""
    return {"source_dir": Path(source_dir).name,
            "files": [{**f, "path": Path(f["path"]).name} if "path" in f else dict(f) for f in files]}


def _cache_key(directory: Path, cache_dir: Path) -> str:
    """An ensemble's cache folder relative to the cache root (its key): results written into the
    repository then carry no absolute path of the machine or worktree that ran them."""
    return Path(directory).relative_to(cache_dir).as_posix()


def _run_info(cfg: StudyConfig, dev: torch.device, ds, task, priv, nonpriv, t_teachers: float,
              t_total: float, cache_dir: Path) -> dict:
    """Where and how long the study ran, and on which data (``teachers.json``'s ``run``); every
    path is relative (the data files by name, the ensembles by cache key under ``cache_dir``)."""
    return {
        "config": cfg.as_dict(),
        "device": str(dev),
        "device_name": torch.cuda.get_device_name(dev) if dev.type == "cuda" else platform.processor() or "cpu",
        "torch_threads": torch.get_num_threads(),
        "seconds_teachers_stage": t_teachers,
        "seconds_total": t_total,
        "data": {**_portable_data(ds.source_dir, list(ds.files)),
                 "n_train": int(len(task.train_labels)), "n_test": int(len(task.test_labels)),
                 "train_class_counts": {int(c): int((task.train_labels == c).sum()) for c in cfg.classes},
                 "test_class_counts": {int(c): int((task.test_labels == c).sum()) for c in cfg.classes}},
        "cache": {"private": _cache_key(priv.directory, cache_dir),
                  "nonprivate": _cache_key(nonpriv.directory, cache_dir)},
    }


def run_study(cfg: StudyConfig, out: Path, *, data_dir: str | None = None, cache_dir: Path | None = None,
              device: str | None = None, progress: bool = True) -> list[dict]:
    """Run the whole study for ``cfg`` and write the outputs into ``out``; return the records.

    Writes ``results.json``, ``teachers.json`` (its paths relative: the ensembles by cache key, the
    data files by name), ``mechanisms.json``, ``releases.npz``, ``tables.md`` and
    ``accuracy_vs_m.png``; with a student also ``split.json``, ``students.md`` and
    ``student_vs_epsilon.png``.

    Args:
        cfg: the study's settings.
        out: the output folder (created).
        data_dir: folder holding the IDX files (default: searched, then downloaded).
        cache_dir: the teacher cache root (default: :func:`~darrm.experiments.cache.default_cache_dir`).
        device: torch device name (default: CUDA when present, else CPU).
        progress: show progress bars.

    Returns:
        The records written to ``results.json``.

    Raises:
        ParameterError: ``out`` is not a usable output folder, or a bad device.
        DatasetError: the data set's files are missing, corrupt or fail their checksum.
        CacheError: a cached teacher or vote file is not what the cache writes.
        SolveError: a γ_opt LP failed.
    """
    t_start = time.perf_counter()
    out = check_output_dir("out", out)
    out.mkdir(parents=True, exist_ok=True)
    cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    dev = pick_device(device)
    ds = load_dataset(cfg.dataset, data_dir)
    task = binary_task(ds, cfg.classes, cfg.train_size, cfg.seed)
    t0 = time.perf_counter()
    priv = get_ensemble(task, cfg.teacher_config(True), cache_dir, dev, progress)
    nonpriv = get_ensemble(task, cfg.teacher_config(False), cache_dir, dev, progress)
    t_teachers = time.perf_counter() - t0
    eps_t = max(float(t["eps"]) for t in priv.teachers)
    mech = build_mechanisms(cfg, eps_t, progress)
    split = split_public(len(task.test_labels), cfg.seed, cfg.held_out_fraction) if cfg.student else None
    # with a student only the pool is ever queried: every array below is restricted to it, and the
    # held-out half lives in its guard; released indices are then positions in the pool
    pool = split.pool if split is not None else np.arange(len(task.test_labels))
    released = released_labels(cfg, priv.votes[pool], nonpriv.votes[pool], mech)
    accs = score(released, task.test_labels[pool])
    students = None
    t_students = 0.0
    if split is not None and cfg.student is not None:
        t1 = time.perf_counter()
        held = HeldOutSet(task.test_images[split.held_out], task.test_labels[split.held_out])
        students = student_accuracies(released, task.test_images[pool], cfg.classes, held, cfg.student, cfg.seed,
                                      progress)
        t_students = time.perf_counter() - t1
        atomic_write_json(out / "split.json", _split_record(split))
    records = build_records(cfg, accs, mech, eps_t, students)
    records.append(_teacher_record(cfg.dataset, "teachers-dpsgd", priv.teachers, eps_t, cfg.member_delta))
    records.append(_teacher_record(cfg.dataset, "teachers-nonprivate", nonpriv.teachers, None, None))
    atomic_write_json(out / "results.json", records)
    save_releases(out / "releases.npz", released)
    run_info = _run_info(cfg, dev, ds, task, priv, nonpriv, t_teachers, time.perf_counter() - t_start,
                         cache_dir)
    run_info["seconds_students_stage"] = t_students
    atomic_write_json(out / "teachers.json", {
        "eps_teacher": eps_t, "delta_teacher": cfg.member_delta,
        "shard_sizes": [int(len(s)) for s in priv.shards],
        "split": "seeded permutation (numpy default_rng(seed)) of the two-class training set, "
                 "np.array_split into K shards; private and non-private teachers share the split",
        "private": list(priv.teachers), "nonprivate": list(nonpriv.teachers), "run": run_info})
    atomic_write_json(out / "mechanisms.json", {str(m): {k: (v.tolist() if isinstance(v, np.ndarray) else v)
                                                         for k, v in d.items() if not k.startswith("table_")}
                                                for m, d in mech.items()})
    atomic_write_bytes(out / "tables.md", markdown_report(records, run_info).encode())
    accuracy_plot(records, out / "accuracy_vs_m.png")
    if students is not None:
        atomic_write_bytes(out / "students.md", student_table(records).encode())
        student_plot(records, out / "student_vs_epsilon.png")
    return records


def _split_record(split: PublicSplit) -> dict:
    return {"note": "indices into the task's test set; releases.npz indices are positions in 'pool'; "
                    "'held_out' is the students' test set, never queried",
            **split.as_dict()}


def save_releases(path: Path, released: dict) -> None:
    """Every released label with its query indices: arrays ``"<method>|m|Q|draw|idx"`` / ``"…|labels"``.

    Args:
        path: the ``.npz`` file (written atomically).
        released: the output of :func:`released_labels`.

    Raises:
        OSError: ``path`` cannot be written.
    """
    buf = io.BytesIO()
    arrays = {}
    for (method, m, Q, r), (idx, lab) in released.items():
        arrays[f"{method}|{m}|{Q}|{r}|idx"] = idx
        arrays[f"{method}|{m}|{Q}|{r}|labels"] = lab
    np.savez_compressed(buf, **arrays)
    atomic_write_bytes(path, buf.getvalue())


def load_releases(path: Path) -> dict:
    """Inverse of :func:`save_releases`.

    Args:
        path: a ``releases.npz`` file (loaded without pickles).

    Returns:
        ``{(method, m, Q, draw): (query indices, labels)}``.

    Raises:
        OSError: ``path`` cannot be read.
        ValueError: a key not of the form :func:`save_releases` writes, or a pickled array.
    """
    with np.load(path, allow_pickle=False) as z:
        out: dict = {}
        for key in z.files:
            method, m, Q, r, what = key.split("|")
            cell = out.setdefault((method, int(m), int(Q), int(r)), {})
            cell[what] = z[key]
    return {k: (v["idx"], v["labels"]) for k, v in out.items()}
