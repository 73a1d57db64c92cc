"""``darrm-experiments disjoint``: members on disjoint shards (docs/disjoint.md).

    darrm-experiments disjoint synthetic --out DIR [--eps 0.5] [--delta 1e-6] [--K 11 101 1001 10001]
    darrm-experiments disjoint real --out DIR [--dataset mnist fashion-mnist]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from darrm.experiments.data.loader import DATASETS
from darrm.experiments.disjoint.output import write_real, write_synthetic
from darrm.experiments.disjoint.real import load_votes, markdown_all, run_real
from darrm.experiments.disjoint.synthetic import KS, METHODS, run_synthetic
from darrm.paths import check_output_dir
from darrm.report import format_table
from darrm.validation import count_arg

__all__ = ["register"]


def _synthetic(args: argparse.Namespace) -> int:
    check_output_dir("out", args.out)  # before minutes of computing
    rows = run_synthetic(args.K, args.eps, args.delta, log=lambda r: print(json.dumps(r), flush=True))
    paths = write_synthetic(rows, args.eps, args.delta, args.out)
    print(format_table(["K", *METHODS], [[str(r["K"])] + [r[m] for m in METHODS] for r in rows]))
    print("wrote " + " ".join(map(str, paths)))
    return 0


def _real(args: argparse.Namespace) -> int:
    check_output_dir("out", args.out)  # before training or loading teachers
    rows = []
    for ds in args.dataset:
        vp, vn, labels, eps_t = load_votes(ds, args.data_dir, args.cache_dir)
        rows += run_real(ds, vp, vn, labels, eps_t)
    tables = markdown_all(rows)
    paths = write_real(rows, tables, args.out)
    print(tables)
    print("wrote " + " ".join(map(str, paths)))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("disjoint", help="members on disjoint shards: GNMax, partition-aware and shuffled DaRRM",
                              description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="experiment", required=True, metavar="EXPERIMENT")
    s = sub.add_parser("synthetic", help="accuracy vs K on synthetic agreement, exact (binomial pmfs)")
    s.add_argument("--out", required=True, type=Path, help="output folder (results_*.json, accuracy_*.png)")
    s.add_argument("--eps", type=float, default=0.5, help="per-query ε (default 0.5)")
    s.add_argument("--delta", type=float, default=1e-6, help="per-query δ (default 1e-6)")
    s.add_argument("--K", type=count_arg, nargs="+", default=list(KS), help="member counts (default 11 101 1001 10001)")
    s.set_defaults(func=_synthetic)
    r = sub.add_parser("real", help="the PATE study's K = 11 teachers (cached; trained when absent)")
    r.add_argument("--out", required=True, type=Path, help="output folder (results_real.json, real_tables.md)")
    r.add_argument("--dataset", nargs="+", choices=DATASETS, default=list(DATASETS))
    r.add_argument("--data-dir", default=None, help="folder holding the IDX .gz files (else searched/downloaded)")
    r.add_argument("--cache-dir", type=Path, default=None, help="teacher/vote cache (default data/cache)")
    r.set_defaults(func=_real)
