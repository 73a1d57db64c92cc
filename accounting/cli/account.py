"""``darrm account ...``: privacy accounting results as tables (or JSON).

Subcommands (each prints one library function's records):

* ``compose``      — :func:`darrm.accounting.composition.compare_bounds`;
* ``dpsgd``        — :func:`darrm.accounting.dpsgd.compare_accountants` (ε, or σ for a target ε);
* ``gnmax``        — :func:`darrm.accounting.gnmax.compare_methods`;
* ``paper-tables`` — :func:`darrm.accounting.paper.tables`.
"""

from __future__ import annotations

import argparse

from darrm.errors import ParameterError
from darrm.validation import count_arg

from .. import composition, dpsgd, gnmax, paper
from . import print_json, print_table


def _cmd_compose(args: argparse.Namespace) -> int:
    res = composition.compare_bounds(args.eps, args.delta, args.compositions, args.delta_prime)
    if args.json:
        print_json({"eps": args.eps, "delta": args.delta, "compositions": args.compositions,
                    "delta_prime": args.delta_prime, "bounds": res})
    else:
        print_table(["method", "eps_total", "delta_total"],
                    [[r["method"], r["eps_total"], r["delta_total"]] for r in res],
                    f"{args.compositions}-fold composition of ({args.eps}, {args.delta})-DP, delta'={args.delta_prime}")
    return 0


def _cmd_dpsgd(args: argparse.Namespace) -> int:
    if args.n_samples is not None:
        run = dpsgd.DPSGDRun.from_loader(args.noise_multiplier if args.noise_multiplier is not None else 1.0,
                                         args.n_samples, args.batch_size, args.epochs, args.delta)
        q, steps = run.sample_rate, run.steps
    elif args.sample_rate is None or args.steps is None:
        raise ParameterError("sample_rate",
                             "give --sample-rate and --steps, or --n-samples (with --batch-size, --epochs)")
    else:
        q, steps = args.sample_rate, args.steps
    if args.target_eps is None and args.noise_multiplier is None:
        raise ParameterError("noise_multiplier", "give --noise-multiplier, or --target-eps to solve for it")
    accs = dpsgd.ACCOUNTANTS if args.accountant == "all" else (args.accountant,)
    rows = dpsgd.compare_accountants(q, steps, args.delta, noise_multiplier=args.noise_multiplier,
                                     target_eps=args.target_eps, accountants=accs, tol=args.tol)
    if args.json:
        print_json({"sample_rate": q, "steps": steps, "delta": args.delta, "results": rows})
        return 0
    cols = list(rows[0])
    title = (f"noise multiplier for target eps={args.target_eps}" if args.target_eps is not None
             else f"DP-SGD noise multiplier={args.noise_multiplier}")
    print_table(cols, [[r[c] for c in cols] for r in rows], f"{title}, q={q:.6g}, steps={steps}, delta={args.delta}")
    return 0


def _cmd_gnmax(args: argparse.Namespace) -> int:
    res = gnmax.compare_methods(args.eps, args.delta)
    if args.json:
        print_json(res)
    else:
        print_table(["method", "sigma"], [[r["method"], r["sigma"]] for r in res["sigma"]],
                    f"GNMax sigma for one ({args.eps}, {args.delta})-DP query (L2 sensitivity sqrt 2); "
                    f"paper grid minimiser lambda={res['paper_grid_order']:.4g}")
    return 0


def _cmd_paper_tables(args: argparse.Namespace) -> int:
    result = paper.tables(paper.TABLES if args.table == "all" else (args.table,), tuple(args.m))
    if args.json:
        print_json(result)
        return 0
    for key, rows in result.items():
        cols = list(rows[0])
        print_table(cols, [[r[c] for c in cols] for r in rows], paper.TABLE_TITLES[key])
        print()
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``account`` with its subcommands to the main ``darrm`` parser."""
    account = subparsers.add_parser("account", help="privacy accounting (composition, DP-SGD, GNMax, paper tables)")
    sub = account.add_subparsers(dest="account_command", required=True)

    def common(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p.add_argument("--json", action="store_true", help="print JSON instead of a table")
        return p

    p = common(sub.add_parser("compose", help="k-fold composition of (eps, delta)-DP mechanisms"))
    p.add_argument("--eps", type=float, required=True)
    p.add_argument("--delta", type=float, default=0.0)
    p.add_argument("--compositions", type=count_arg, required=True, help="number k of composed mechanisms")
    p.add_argument("--delta-prime", type=float, default=1e-4)
    p.set_defaults(func=_cmd_compose)

    p = common(sub.add_parser("dpsgd", help="DP-SGD epsilon (or noise multiplier for --target-eps)"))
    p.add_argument("--noise-multiplier", type=float, help="noise std / clipping norm (Opacus's noise_multiplier)")
    p.add_argument("--sample-rate", type=float)
    p.add_argument("--steps", type=count_arg)
    p.add_argument("--n-samples", type=count_arg, help="derive q and steps from a loader: q=1/ceil(n/batch)")
    p.add_argument("--batch-size", type=count_arg, default=32)
    p.add_argument("--epochs", type=count_arg, default=5)
    p.add_argument("--delta", type=float, required=True)
    p.add_argument("--accountant", choices=(*dpsgd.ACCOUNTANTS, "all"), default="pld",
                   help="pld (dp-accounting, core dependencies; the default), prv or rdp (Opacus: "
                        "pip install 'darrm[experiments]'), or all")
    p.add_argument("--target-eps", type=float, help="solve for the noise multiplier instead")
    p.add_argument("--tol", type=float, default=1e-4, help="epsilon tolerance of --target-eps")
    p.set_defaults(func=_cmd_dpsgd)

    p = common(sub.add_parser("gnmax", help="GNMax sigma for a per-query (eps, delta)"))
    p.add_argument("--eps", type=float, required=True)
    p.add_argument("--delta", type=float, required=True)
    p.set_defaults(func=_cmd_gnmax)

    p = common(sub.add_parser("paper-tables", help="reproduce the paper's privacy tables"))
    p.add_argument("--table", choices=(*paper.TABLES, "all"), default="all")
    p.add_argument("--m", type=count_arg, nargs="+", default=[3], help="privacy allowances (paper: 1 3 5 7)")
    p.set_defaults(func=_cmd_paper_tables)
