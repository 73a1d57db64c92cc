"""The individualised-budgets study end to end: data, groups, teachers (cached), releases, records."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from darrm.experiments.data.loader import binary_task, load_dataset
from darrm.experiments.data.locations import cache_dir as default_cache_dir
from darrm.experiments.individual.config import IndividualConfig
from darrm.experiments.individual.mechanisms import (
    calibrate,
    darrm_labels,
    gnmax_labels,
    majority_labels,
)
from darrm.experiments.individual.shards import assign_groups, group_shards, upsampled_shards
from darrm.experiments.individual.simulation import simulate_splits
from darrm.experiments.individual.votes import shard_votes
from darrm.experiments.pate.public_split import split_public
from darrm.experiments.pate.teachers import shard_indices

__all__ = ["METHODS", "run_individual"]

#: the released label sets, in table order
METHODS = ("darrm-designed-individual", "darrm-designed-per-group", "darrm-individual", "darrm-per-group",
           "darrm-weighted", "darrm-worst", "gnmax-upsample", "gnmax-weight", "gnmax-worst", "majority")


def run_individual(cfg: IndividualConfig, *, data_dir: str | None = None, cache_dir: Path | None = None,
                   progress: bool = True) -> dict:
    """Run the study; returns ``{"config", "run", "calibration", "rows", "simulation"}`` (JSON-ready).

    Each row is one (method, Q): the label accuracy (mean and std over the draws) of the Q released
    labels, all of which are released (the analyses are data-independent).
    """
    t0 = time.perf_counter()
    task = binary_task(load_dataset(cfg.dataset, data_dir), cfg.classes)
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    split = split_public(len(task.test_labels), cfg.seed)
    pool, truth = task.test_images[split.pool], task.test_labels[split.pool]
    groups = assign_groups(len(task.train_labels), cfg.shares, cfg.seed)
    args = (task.train_images, task.train_labels, pool)

    def votes(tag: str, shards: list[np.ndarray]) -> np.ndarray:
        return shard_votes(f"{cfg.dataset}-{tag}", *args, shards, cfg.classes, cfg.teacher, cfg.seed, cache,
                           progress)

    up = votes("upsample", upsampled_shards(groups, cfg.copies, cfg.K, cfg.seed))
    disjoint = votes("disjoint", shard_indices(len(task.train_labels), cfg.K, cfg.seed))
    gshards, owner = group_shards(groups, cfg.K, cfg.shares, cfg.seed)
    weighted = votes("weight", gshards)
    t_teachers = time.perf_counter() - t0

    rows, cals = [], []
    for Q in cfg.queries:
        cal = calibrate(cfg, Q)
        cals.append(cal.record())
        w = np.asarray(cal.weights)[owner]
        acc: dict[str, list[float]] = {m: [] for m in METHODS}
        for draw in range(cfg.draws):
            rng = np.random.default_rng([cfg.seed, 47, Q, draw])
            q = rng.choice(len(truth), size=min(Q, len(truth)), replace=False)
            released = {
                "darrm-individual": darrm_labels(up[q], cal.individual, cfg.classes, rng),
                "darrm-worst": darrm_labels(disjoint[q], cal.worst, cfg.classes, rng),
                "gnmax-upsample": gnmax_labels(up[q], cal.sigma_upsample, cfg.classes, rng),
                "gnmax-weight": gnmax_labels(weighted[q], cal.sigma_weight, cfg.classes, rng, w),
                "gnmax-worst": gnmax_labels(disjoint[q], cal.sigma_worst, cfg.classes, rng),
                "majority": majority_labels(disjoint[q], cfg.classes),
            }
            # DaRRM on the weighting teachers, whose columns are in group order (group_shards): γ reads
            # each group's count.  Their own coins, so that the rows above keep their draws.
            rng_w = np.random.default_rng([cfg.seed, 53, Q, draw])
            released["darrm-per-group"] = darrm_labels(weighted[q], cal.per_group, cfg.classes, rng_w)
            released["darrm-weighted"] = darrm_labels(weighted[q], cal.weighted, cfg.classes, rng_w)
            # the tables designed for each group's total: their own coins too
            rng_d = np.random.default_rng([cfg.seed, 59, Q, draw])
            released["darrm-designed-individual"] = darrm_labels(up[q], cal.designed_individual, cfg.classes, rng_d)
            released["darrm-designed-per-group"] = darrm_labels(weighted[q], cal.designed_per_group, cfg.classes,
                                                                rng_d)
            for m, lab in released.items():
                acc[m].append(float(np.mean(lab == truth[q])))
        for m in METHODS:
            rows.append({"method": m, "Q": Q, "released": min(Q, len(truth)), "accuracy_mean": float(np.mean(acc[m])),
                         "accuracy_std": float(np.std(acc[m])), "draws": cfg.draws})
    teacher_acc = {tag: float(np.mean(v == truth[:, None])) for tag, v in
                   (("upsample", up), ("disjoint", disjoint), ("weight", weighted))}
    t_sim = time.perf_counter()
    simulation = simulate_splits(cfg.splits)
    return {"config": cfg.as_dict(), "calibration": cals, "rows": rows, "simulation": simulation,
            "run": {"seconds_teachers": t_teachers, "seconds_simulation": time.perf_counter() - t_sim,
                    "seconds_total": time.perf_counter() - t0, "teacher_accuracy_on_pool": teacher_acc,
                    "records": int(len(groups)), "records_per_group": np.bincount(groups).tolist(),
                    "pool": int(len(truth))}}
