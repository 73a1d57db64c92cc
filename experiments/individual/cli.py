"""``darrm-experiments individual``: records with their own budgets (Individualized PATE's MNIST setting).

    darrm-experiments individual --out DIR [--quick] [--teachers 101] [--queries 100] [--copies 1,2,3]
"""

from __future__ import annotations

import argparse

from darrm.cli_conventions import comma_list_type
from darrm.errors import ParameterError
from darrm.experiments.data.locations import check_locations

__all__ = ["register"]


#: argparse type: comma-separated integers (argparse names the option in its one-line error)
_integers = comma_list_type(int, "integers")


#: config field → the option that sets it (errors name the option)
_OPTION = {"K": "teachers", "queries": "queries", "copies": "copies", "draws": "draws", "budgets": "copies"}


def config_from_args(args: argparse.Namespace):
    """The :class:`~darrm.experiments.individual.config.IndividualConfig` the flags ask for (validated)."""
    from darrm.experiments.individual.config import IndividualConfig, quick_config

    given = {k: v for k, v in (("K", args.teachers), ("queries", args.queries), ("copies", args.copies),
                               ("draws", args.draws), ("dataset", args.dataset)) if v is not None}
    try:
        return quick_config(**given) if args.quick else IndividualConfig(**given)
    except ParameterError as exc:
        raise ParameterError(_OPTION.get(exc.parameter, exc.parameter), str(exc).split(": ", 1)[-1]) from None


def _run(args: argparse.Namespace) -> int:
    cfg = config_from_args(args)  # every option refused before any work
    check_locations(args.out, args.cache_dir, args.data_dir)
    from darrm.cli_conventions import progress_setting
    from darrm.experiments.individual.report import markdown, write_results
    from darrm.experiments.individual.run import run_individual

    result = run_individual(cfg, data_dir=args.data_dir, cache_dir=args.cache_dir,
                            progress=bool(progress_setting(args)))
    paths = write_results(result, args.out)
    print(markdown(result))
    print("wrote " + " ".join(map(str, paths)))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "individual", help="records with their own budgets: individualised DaRRM vs GNMax upsample/weight",
        description="Individualized PATE's MNIST setting (budgets 1/2/3 for 34/43/23 %% of the records) on the "
                    "two-class task: label accuracy of DaRRM designed for each group's total (upsampled and "
                    "weighting teachers), DaRRM with per-query per-group targets (records copied into r_g "
                    "shards, or weighting teachers) and at the worst budget, GNMax upsampling, weighting and at "
                    "the worst budget; plus the shared-data simulation (members with their own budgets) at "
                    "several splits.")
    p.add_argument("--out", required=True, help="output folder (results.json, individual.md, individual.png)")
    p.add_argument("--quick", action="store_true", help="smoke test: 21 teachers, Q = 20, 2 draws (default: off)")
    p.add_argument("--teachers", type=int, default=None, help="number of teachers K, odd (default: 101; quick 21)")
    p.add_argument("--queries", type=_integers, default=None,
                   help="numbers of queries Q, comma-separated (default: 100; quick 20)")
    p.add_argument("--copies", type=_integers, default=None,
                   help="copies r_g of each group's records, one per budget group (three) (default: 1,2,3)")
    p.add_argument("--draws", type=int, default=None, help="draws of queries and noise per Q (default: 5; quick 2)")
    p.add_argument("--dataset", choices=("mnist", "fashion-mnist"), default=None, help="(default: mnist)")
    p.add_argument("--data-dir", default=None,
                   help="folder holding the IDX .gz files (default: searched, then downloaded)")
    p.add_argument("--cache-dir", default=None, help="teacher vote cache (default: data/cache)")
    p.set_defaults(func=_run)
