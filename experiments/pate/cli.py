"""``darrm-experiments pate``: the private knowledge-transfer study (paper Section 6.2).

Trains (or loads cached) DP-SGD and non-private teachers on a two-class MNIST / Fashion-MNIST
task and compares GNMax with DaRRM releases of their votes (docs/experiments.md).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from darrm.cli_conventions import LazyChoices, comma_list_type, progress_setting, progress_shown
from darrm.errors import require
from darrm.experiments.data.locations import check_locations

__all__ = ["register", "run_command"]

DATASET_CHOICES = LazyChoices("darrm.experiments.data.loader:DATASETS")


_ints = comma_list_type(int, "integers")
_floats = comma_list_type(float, "numbers")
_names = comma_list_type(str.strip, "names")


def _class_count(text: str) -> int:
    if text not in ("2", "10"):
        raise argparse.ArgumentTypeError(f"must be 2 (the paper's 5-vs-8 task) or 10, got {text!r}")
    return int(text)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``pate`` subcommand and its options to ``darrm-experiments``.

    Args:
        subparsers: the ``add_subparsers()`` action of the ``darrm-experiments`` parser.

    Raises:
        argparse.ArgumentError: a subcommand named ``pate`` is already registered there.
    """
    p = subparsers.add_parser("pate", help="private knowledge transfer: GNMax vs DaRRM on MNIST / Fashion-MNIST",
                              description=__doc__.split("\n\n")[1].replace("\n", " "))
    p.add_argument("--dataset", required=True, choices=DATASET_CHOICES, metavar="DATASET",
                   help="mnist or fashion-mnist (the paper's two-class tasks)")
    p.add_argument("--out", required=True, help="output folder (results.json, tables.md, plot)")
    p.add_argument("--quick", action="store_true",
                   help="smoke test (CI preset): 1 epoch, Q=20, 2 draws, m=3; its tables say so and show no paper "
                        "columns (default: off)")
    p.add_argument("--data-dir", default=None,
                   help="folder holding the IDX .gz files (default: searched, then downloaded)")
    p.add_argument("--cache-dir", default=None, help="teacher/vote cache (default: data/cache)")
    p.add_argument("--device", default=None, help="torch device (default: cuda if available, else cpu)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the training split and shards, the teachers' training, the query draws and the "
                        "mechanisms' randomness")
    p.add_argument("--ms", type=_ints, default=None, help="comma-separated m values (default: 1,3,5,7)")
    p.add_argument("--queries", type=_ints, default=None, help="comma-separated Q values (default: 20,50,100)")
    p.add_argument("--draws", type=int, default=None, help="repeated draws of the Q queries (default: 10)")
    p.add_argument("--epochs", type=int, default=None, help="teacher epochs (default: 5)")
    p.add_argument("--train-size", type=int, default=None,
                   help="use a seeded random subset of this many two-class training images "
                        "(default: all; the paper's Fashion-MNIST figure is 10000)")
    p.add_argument("--student", action="store_true",
                   help="PATE end to end: split the public set into a query pool and a held-out half, train a "
                        "student on every released label set and score it on the held-out half (defaults "
                        "become m=3, Q=20,50,100,200,500, 5 draws; --quick: Q=20, 2 draws; default: off)")
    p.add_argument("--no-self-training", action="store_true",
                   help="with --student: train on the Q released labels only (default: one round of "
                        "pseudo-labels on the rest of the pool)")
    p.add_argument("--held-out-fraction", type=float, default=0.5,
                   help="with --student: share of the public set held out as the student's test set (default: 0.5)")
    p.add_argument("--classes", type=_class_count, default=2,
                   help="2: the paper's 5-vs-8 study; 10: PATE 2018's ten-class setting (K non-private teachers, "
                        "GNMax, Confident-GNMax and the DaRRM plurality aggregator calibrated to equal total "
                        "budgets, a student per release; results.json, multiclass.md, "
                        "multiclass_student_vs_epsilon.png) (default: 2)")
    p.add_argument("--teachers", type=int, default=None,
                   help="with --classes 10: number of teachers on disjoint shards (default: 250; --quick: 25)")
    p.add_argument("--total-eps", type=_floats, default=None,
                   help="with --classes 10: comma-separated total ε budgets (default: 0.5,1,2; --quick: 2)")
    p.add_argument("--total-delta", type=float, default=None,
                   help="with --classes 10: the total δ of every budget (default: 1e-5)")
    p.add_argument("--methods", type=_names, default=None,
                   help="with --classes 10: comma-separated methods to run (default: all of gnmax, confident-gnmax, "
                        "darrm-plurality, darrm-duel, plurality-nonprivate, true-labels)")
    p.set_defaults(func=run_command)


_TEN_CLASS_ONLY = ("teachers", "total_eps", "total_delta", "methods")
_TWO_CLASS_ONLY = ("ms", "epochs", "device")


def multiclass_config_from_args(args: argparse.Namespace):
    """The :class:`~darrm.experiments.pate.multiclass_config.MulticlassConfig` of ``--classes 10``."""
    from dataclasses import replace

    from darrm.errors import ParameterError
    from darrm.experiments.pate.multiclass_config import MulticlassConfig
    from darrm.experiments.pate.student_config import StudentConfig

    for name in _TWO_CLASS_ONLY:
        if getattr(args, name) is not None:
            raise ParameterError(name, f"--{name} applies to --classes 2 only")
    over: dict = {"seed": args.seed, "held_out_fraction": args.held_out_fraction}
    for flag, key in (("teachers", "teachers"), ("queries", "queries"), ("draws", "draws"),
                      ("total_eps", "total_eps"), ("total_delta", "total_delta"), ("train_size", "train_size"),
                      ("methods", "methods")):
        if getattr(args, flag) is not None:
            over[key] = getattr(args, flag)
    cfg = MulticlassConfig.quick(args.dataset, **over) if args.quick else MulticlassConfig(args.dataset, **over)
    if args.no_self_training:  # the supervised MLP on the released labels only, no baseline beside it
        cfg = replace(cfg, student=StudentConfig(self_training=False), baseline_student=None)
    return cfg


def config_from_args(args: argparse.Namespace):
    """The :class:`~darrm.experiments.pate.study.StudyConfig` the flags ask for."""
    from darrm.experiments.pate.study import StudyConfig

    over = {k: getattr(args, k) for k in ("ms", "queries", "draws", "epochs") if getattr(args, k) is not None}
    over["seed"] = args.seed
    over["train_size"] = args.train_size
    if args.student or args.no_self_training or args.held_out_fraction != 0.5:
        if not args.student:
            from darrm.errors import ParameterError

            raise ParameterError("student", "--no-self-training and --held-out-fraction need --student")
        from dataclasses import replace

        cfg = StudyConfig.with_student(args.dataset, quick=args.quick, held_out_fraction=args.held_out_fraction,
                                       **over)
        if args.no_self_training and cfg.student is not None:
            cfg = replace(cfg, student=replace(cfg.student, self_training=False))
        return cfg
    return StudyConfig.quick(args.dataset, **over) if args.quick else StudyConfig(args.dataset, **over)


def run_command(args: argparse.Namespace) -> int:
    """Run ``darrm-experiments pate`` for parsed ``args``: the two-class study
    (:func:`~darrm.experiments.pate.run.run_study`) or, with ``--classes 10``, the ten-class one
    (:func:`~darrm.experiments.pate.multiclass_run.run_multiclass`).

    Every path is checked and the ``experiments`` extra is required before any work; a ``--device`` is
    checked before a teacher is trained.

    Args:
        args: the namespace parsed by the parser :func:`register` extended.

    Returns:
        0 once the outputs are written (the CLI's exit status).

    Raises:
        ParameterError: a bad path, device or option (one naming the option), e.g. a ten-class-only
            option without ``--classes 10``.
        MissingDependencyError: torch or opacus is not installed (the message names the extra).
    """
    # every path first, before the extra is loaded or anything is computed
    check_locations(args.out, args.cache_dir, args.data_dir)
    multiclass = multiclass_config_from_args(args) if args.classes == 10 else None  # its values too
    for module in ("torch", "opacus"):  # one line naming the extra, before any work
        require(module, "experiments", "darrm-experiments pate")
    if multiclass is not None:
        return _run_multiclass(args, multiclass)
    from darrm.errors import ParameterError
    for name in _TEN_CLASS_ONLY:
        if getattr(args, name) is not None:
            raise ParameterError(name, f"--{name.replace('_', '-')} applies to --classes 10 only")
    from darrm.backends.devices import TorchDevice
    from darrm.experiments.pate.run import run_study

    if args.device is not None:
        TorchDevice(args.device, parameter="device")  # a one-line error before any work
    cfg = config_from_args(args)
    records = run_study(cfg, args.out, data_dir=args.data_dir, cache_dir=args.cache_dir, device=args.device,
                        progress=progress_shown(progress_setting(args)))
    if cfg.smoke_test:
        from darrm.experiments.pate.report import SMOKE_TEST_NOTE

        print(SMOKE_TEST_NOTE)
    extra = ", students.md, student_vs_epsilon.png, split.json" if cfg.student is not None else ""
    print(f"wrote {len(records)} records to {Path(args.out) / 'results.json'} (tables.md, accuracy_vs_m.png{extra})")
    return 0


def _run_multiclass(args: argparse.Namespace, cfg) -> int:
    from darrm.experiments.pate.multiclass_report import MULTICLASS_SMOKE_NOTE
    from darrm.experiments.pate.multiclass_run import run_multiclass

    records = run_multiclass(cfg, args.out, data_dir=args.data_dir, cache_dir=args.cache_dir,
                             progress=progress_shown(progress_setting(args)))
    if cfg.smoke_test:
        print(MULTICLASS_SMOKE_NOTE)
    print(f"wrote {len(records)} records to {Path(args.out) / 'results.json'} (multiclass.md, "
          "multiclass_student_vs_epsilon.png, multiclass_run.json)")
    return 0
