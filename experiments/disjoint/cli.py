"""``darrm-experiments disjoint``: members on disjoint shards (docs/disjoint.md).

    darrm-experiments disjoint synthetic --out DIR [--eps 0.5] [--delta 1e-6] [--K 11 101 1001 10001]
    darrm-experiments disjoint real --out DIR [--dataset mnist fashion-mnist]
    darrm-experiments disjoint equal-total --out DIR [--dataset mnist] [--total-eps 0.5,2,4] [--queries 20,100,500]

Each finished row of ``synthetic`` is logged as JSON to the ``darrm`` logger (stderr; hidden by
``--quiet``); the result table and the written files go to stdout.
"""

from __future__ import annotations

import argparse
import json

from darrm.cli_conventions import LazyChoices, comma_list_type
from darrm.errors import ParameterError
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


#: run_equal_total's parameter → the option that sets it (errors name the option)
_EQUAL_TOTAL_OPTION = {"total_eps": "total-eps", "delta_total": "delta-total", "prior_mean": "prior-mean"}


def _equal_total(args: argparse.Namespace) -> int:
    from darrm.experiments.disjoint import real
    from darrm.experiments.disjoint.output import write_equal_total

    settings = {"total_eps": args.total_eps, "queries": args.queries, "delta_total": args.delta_total,
                "draws": args.draws, "prior_mean": args.prior_mean}
    try:  # every option refused before any work (the votes need trained teachers)
        real.check_equal_total_settings(**settings)
    except ParameterError as exc:
        raise ParameterError(_EQUAL_TOTAL_OPTION.get(exc.parameter, exc.parameter),
                             str(exc).split(": ", 1)[-1]) from None
    check_locations(args.out, args.cache_dir, args.data_dir)
    rows = []
    for ds in args.dataset:
        votes, labels = real.nonprivate_votes(ds, args.data_dir, args.cache_dir)
        try:
            rows += real.run_equal_total(ds, votes, labels, **settings)
        except ParameterError as exc:  # Q above the number of test images
            raise ParameterError(_EQUAL_TOTAL_OPTION.get(exc.parameter, exc.parameter),
                                 str(exc).split(": ", 1)[-1]) from None
    tables = real.markdown_equal_total(rows)
    paths = write_equal_total(rows, tables, args.out)
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
    e = sub.add_parser("equal-total", help="the K = 11 non-private teachers at equal TOTAL budgets: designed DaRRM, "
                                          "GNMax, Confident-GNMax",
                       description="Label accuracy of the PATE study's K = 11 non-private teachers' releases at equal "
                                   "total (ε, δ) over Q queries, each method charged its tightest valid "
                                   "data-independent accountant: DaRRM designed for the total "
                                   "(darrm.design_for_budget), GNMax (exact Gaussian composition) and "
                                   "Confident-GNMax (every query charged).  Teachers cached; trained when absent.")
    e.add_argument("--out", required=True, help="output folder (results_equal_total.json, equal_total.md)")
    e.add_argument("--dataset", nargs="+", choices=LazyChoices("darrm.experiments.data.loader:DATASETS"),
                   metavar="DATASET", default=["mnist"], help="mnist and/or fashion-mnist")
    e.add_argument("--total-eps", type=comma_list_type(float, "numbers"), default=(0.5, 2.0, 4.0),
                   help="total ε budgets, comma-separated")
    e.add_argument("--queries", type=comma_list_type(int, "integers"), default=(20, 100, 500),
                   help="numbers of queries Q, comma-separated")
    e.add_argument("--delta-total", type=float, default=1e-5, help="total δ of every budget")
    e.add_argument("--draws", type=int, default=10, help="draws of the Q test queries")
    e.add_argument("--prior-mean", type=float, default=0.9,
                   help="the designed γ's i.i.d. prior mean (data-independent)")
    e.add_argument("--data-dir", default=None,
                   help="folder holding the IDX .gz files (default: searched, then downloaded)")
    e.add_argument("--cache-dir", default=None, help="teacher/vote cache (default: data/cache)")
    e.set_defaults(func=_equal_total)
