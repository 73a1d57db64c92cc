"""``darrm-experiments disjoint``: members on disjoint shards (docs/disjoint.md).

    darrm-experiments disjoint synthetic --out DIR [--eps 0.5] [--delta 1e-6] [--K 11 101 1001 10001]
    darrm-experiments disjoint real --out DIR [--dataset mnist fashion-mnist]

Each finished row of ``synthetic`` is logged as JSON to the ``darrm`` logger (stderr; hidden by
``--quiet``); the result table and the written files go to stdout.
"""

from __future__ import annotations

import argparse
import json

from darrm.cli_conventions import LazyChoices
from darrm.experiments.data.locations import check_locations
from darrm.logs import get_logger
from darrm.paths import check_output_dirs
from darrm.validation import count_arg

__all__ = ["register"]


def _synthetic(args: argparse.Namespace) -> int:
    check_output_dirs({"out": args.out})
    from darrm.experiments.disjoint.output import write_synthetic
    from darrm.experiments.disjoint.synthetic import KS, METHODS, run_synthetic
    from darrm.report import format_table

    log = get_logger("experiments.disjoint")
    rows = run_synthetic(args.K if args.K is not None else list(KS), args.eps, args.delta,
                         log=lambda r: log.info(json.dumps(r)))
    paths = write_synthetic(rows, args.eps, args.delta, args.out)
    print(format_table(["K", *METHODS], [[str(r["K"])] + [r[m] for m in METHODS] for r in rows]))
    print("wrote " + " ".join(map(str, paths)))
    return 0


def _real(args: argparse.Namespace) -> int:
    check_locations(args.out, args.cache_dir, args.data_dir)
    from darrm.experiments.data.loader import DATASETS
    from darrm.experiments.disjoint import real
    from darrm.experiments.disjoint.output import write_real

    rows = []
    for ds in args.dataset if args.dataset is not None else DATASETS:
        vp, vn, labels, eps_t = real.load_votes(ds, args.data_dir, args.cache_dir)
        rows += real.run_real(ds, vp, vn, labels, eps_t)
    tables = real.markdown_all(rows)
    paths = write_real(rows, tables, args.out)
    print(tables)
    print("wrote " + " ".join(map(str, paths)))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("disjoint", help="members on disjoint shards: GNMax, partition-aware and shuffled DaRRM",
                              description=__doc__.splitlines()[0].replace("``", ""))
    sub = p.add_subparsers(dest="experiment", required=True, metavar="EXPERIMENT")
    s = sub.add_parser("synthetic", help="accuracy vs K on synthetic agreement, exact (binomial pmfs)",
                       description="Accuracy of every release method against the number K of members on "
                                   "disjoint shards, for synthetic agreement levels, computed exactly.")
    s.add_argument("--out", required=True, help="output folder (results_*.json, accuracy_*.png)")
    s.add_argument("--eps", type=float, default=0.5, help="per-query ε")
    s.add_argument("--delta", type=float, default=1e-6, help="per-query δ")
    s.add_argument("--K", type=count_arg, nargs="+", default=None, help="member counts (default: 11 101 1001 10001)")
    s.set_defaults(func=_synthetic)
    r = sub.add_parser("real", help="the PATE study's K = 11 teachers (cached; trained when absent)",
                       description="Release methods for disjoint members evaluated on the PATE study's "
                                   "K = 11 teachers' votes (cached; the teachers are trained when absent).")
    r.add_argument("--out", required=True, help="output folder (results_real.json, real_tables.md)")
    r.add_argument("--dataset", nargs="+", choices=LazyChoices("darrm.experiments.data.loader:DATASETS"),
                   metavar="DATASET", default=None, help="mnist and/or fashion-mnist (default: both)")
    r.add_argument("--data-dir", default=None,
                   help="folder holding the IDX .gz files (default: searched, then downloaded)")
    r.add_argument("--cache-dir", default=None, help="teacher/vote cache (default: data/cache)")
    r.set_defaults(func=_real)
