"""``darrm account ...``: print privacy accounting results as tables (or JSON).

Registered by the main CLI through :func:`register`.  Subcommands:

* ``compose``      — every composition bound for k-fold (ε, δ)-DP;
* ``dpsgd``        — DP-SGD ε under each accountant, or σ for a target ε;
* ``gnmax``        — GNMax σ for a per-query (ε, δ) under each calibration;
* ``paper-tables`` — the paper's teacher budgets and Tables 2–5, 7, 9.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Sequence
from typing import Any

from darrm.accounting import composition, dpsgd, gnmax, paper


def _print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None = None) -> None:
    def fmt(x: Any) -> str:
        if isinstance(x, float):
            return f"{x:.6g}" if abs(x) >= 1e-3 or x == 0 else f"{x:.4e}"
        return str(x)

    cells = [[fmt(c) for c in r] for r in rows]
    left = [not rows or isinstance(rows[0][i], str) for i in range(len(headers))]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    out = sys.stdout
    if title:
        out.write(title + "\n")
    out.write("  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip() + "\n")
    out.write("  ".join("-" * w for w in widths) + "\n")
    for r in cells:
        out.write("  ".join(c.ljust(w) if lj else c.rjust(w) for c, w, lj in zip(r, widths, left)).rstrip() + "\n")


def _emit_json(obj: Any) -> None:
    json.dump(obj, sys.stdout, indent=2)
    sys.stdout.write("\n")


# ----------------------------------------------------------------------- compose
def compose_results(eps: float, delta: float, k: int, delta_prime: float) -> list[dict[str, Any]]:
    """Every composition bound for the CLI; δ_total of the exact ones = Kairouz's δ_total."""
    e_s, d_s = composition.simple(eps, delta, k)
    e_dr, d_dr = composition.advanced_dwork_roth(eps, delta, k, delta_prime)
    e_k, d_k = composition.kairouz_general(eps, delta, k, delta_prime)
    return [
        {"method": "simple", "eps_total": e_s, "delta_total": d_s},
        {"method": "dwork-roth", "eps_total": e_dr, "delta_total": d_dr},
        {"method": "kairouz-general", "eps_total": e_k, "delta_total": d_k},
        {"method": "optimal-grid", "eps_total": composition.kairouz_optimal_discrete(eps, delta, k, d_k), "delta_total": d_k},
        {"method": "optimal", "eps_total": composition.optimal_homogeneous_epsilon(eps, delta, k, d_k), "delta_total": d_k},
    ]


def _cmd_compose(args: argparse.Namespace) -> int:
    res = compose_results(args.eps, args.delta, args.k, args.delta_prime)
    if args.json:
        _emit_json({"eps": args.eps, "delta": args.delta, "k": args.k, "delta_prime": args.delta_prime, "bounds": res})
    else:
        _print_table(["method", "eps_total", "delta_total"], [[r["method"], r["eps_total"], r["delta_total"]] for r in res],
                     f"{args.k}-fold composition of ({args.eps}, {args.delta})-DP, delta'={args.delta_prime}")
    return 0


# ------------------------------------------------------------------------- dpsgd
def _cmd_dpsgd(args: argparse.Namespace) -> int:
    if args.n_samples is not None:
        run = dpsgd.DPSGDRun.from_loader(args.sigma if args.sigma is not None else 1.0,
                                         args.n_samples, args.batch_size, args.epochs, args.delta)
        q, steps = run.sample_rate, run.steps
    else:
        q, steps = args.sample_rate, args.steps
    accs = dpsgd.ACCOUNTANTS if args.accountant == "all" else (args.accountant,)
    if args.target_eps is not None:
        rows = [{"accountant": a, "noise_multiplier": dpsgd.noise_multiplier_for(args.target_eps, q, steps, args.delta, a, tol=args.tol)}
                for a in accs]
        header = f"sigma for target eps={args.target_eps}, q={q:.6g}, steps={steps}, delta={args.delta}"
        cols = ["accountant", "noise_multiplier"]
    else:
        rows = [{"accountant": a, "epsilon": dpsgd.epsilon(args.sigma, q, steps, args.delta, a)} for a in accs]
        header = f"DP-SGD sigma={args.sigma}, q={q:.6g}, steps={steps}, delta={args.delta}"
        cols = ["accountant", "epsilon"]
    if args.json:
        _emit_json({"sample_rate": q, "steps": steps, "delta": args.delta, "results": rows})
    else:
        _print_table(cols, [[r[c] for c in cols] for r in rows], header)
    return 0


# ------------------------------------------------------------------------- gnmax
def _cmd_gnmax(args: argparse.Namespace) -> int:
    grid = gnmax.paper_grid(args.eps, args.delta)
    rows = [{"method": m, "sigma": gnmax.calibrate_sigma(args.eps, args.delta, m)} for m in gnmax.METHODS]
    if args.json:
        _emit_json({"eps": args.eps, "delta": args.delta, "paper_grid_order": grid.order,
                    "paper_grid_order_min": grid.order_min, "sigma": rows})
    else:
        _print_table(["method", "sigma"], [[r["method"], r["sigma"]] for r in rows],
                     f"GNMax sigma for one ({args.eps}, {args.delta})-DP query (L2 sensitivity sqrt 2); "
                     f"paper grid minimiser lambda={grid.order:.4g}")
    return 0


# ------------------------------------------------------------------ paper-tables
def _rows_as_dicts(rows: Sequence[Any]) -> list[dict[str, Any]]:
    return [dataclasses.asdict(r) for r in rows]


def _cmd_paper_tables(args: argparse.Namespace) -> int:
    which = {args.table} if args.table != "all" else {"teachers", "totals", "table3", "gnmax"}
    result: dict[str, Any] = {}
    if "teachers" in which:
        runs = dpsgd.teacher_runs()
        result["teachers"] = [
            {"dataset": n, "sample_rate": r.sample_rate, "steps": r.steps, "delta": r.delta,
             **{f"eps_{a}": r.epsilon(a) for a in dpsgd.ACCOUNTANTS}}
            for n, r in runs.items()
        ]
    if "totals" in which:
        result["totals"] = _rows_as_dicts([row for m in args.m for row in paper.total_budget_rows(m)])
    if "table3" in which:
        result["table3"] = _rows_as_dicts(paper.table3_rows())
    if "gnmax" in which:
        result["gnmax"] = _rows_as_dicts(paper.gnmax_rows(tuple(args.m)))
    if args.json:
        _emit_json(result)
        return 0
    titles = {
        "teachers": "Teacher DP-SGD budgets (sigma=12, batch 32, 5 epochs, delta=1e-4; paper: 0.0892 / 0.0852 with PRV)",
        "totals": "Per-query and total budgets, Kairouz general composition, delta'=1e-4 (Tables 2, 5, 7, 9)",
        "table3": "Table 3: allowance m for M subsampled mechanisms (K=35, eps=0.1, Delta=1e-5, delta'=0.1)",
        "gnmax": "GNMax sigma per query (Table 4 and tighter calibrations)",
    }
    for key in ("teachers", "totals", "table3", "gnmax"):
        if key in result:
            rows = result[key]
            cols = list(rows[0])
            _print_table(cols, [[r[c] for c in cols] for r in rows], titles[key])
            sys.stdout.write("\n")
    return 0


# ---------------------------------------------------------------------- register
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
    p.add_argument("--k", type=int, required=True)
    p.add_argument("--delta-prime", type=float, default=1e-4)
    p.set_defaults(func=_cmd_compose)

    p = common(sub.add_parser("dpsgd", help="DP-SGD epsilon (or sigma for --target-eps)"))
    p.add_argument("--sigma", type=float, help="noise multiplier")
    p.add_argument("--sample-rate", type=float)
    p.add_argument("--steps", type=int)
    p.add_argument("--n-samples", type=int, help="derive q and steps from a loader: q=1/ceil(n/batch)")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--delta", type=float, required=True)
    p.add_argument("--accountant", choices=(*dpsgd.ACCOUNTANTS, "all"), default="all")
    p.add_argument("--target-eps", type=float, help="solve for the noise multiplier instead")
    p.add_argument("--tol", type=float, default=1e-4, help="epsilon tolerance of --target-eps")
    p.set_defaults(func=_checked_dpsgd)

    p = common(sub.add_parser("gnmax", help="GNMax sigma for a per-query (eps, delta)"))
    p.add_argument("--eps", type=float, required=True)
    p.add_argument("--delta", type=float, required=True)
    p.set_defaults(func=_cmd_gnmax)

    p = common(sub.add_parser("paper-tables", help="reproduce the paper's privacy tables"))
    p.add_argument("--table", choices=("teachers", "totals", "table3", "gnmax", "all"), default="all")
    p.add_argument("--m", type=int, nargs="+", default=[3], help="privacy allowances (paper: 1 3 5 7)")
    p.set_defaults(func=_cmd_paper_tables)


def _checked_dpsgd(args: argparse.Namespace) -> int:
    from darrm.errors import ParameterError

    if args.n_samples is None and (args.sample_rate is None or args.steps is None):
        raise ParameterError("sample_rate", "give --sample-rate and --steps, or --n-samples (with --batch-size, --epochs)")
    if args.target_eps is None and args.sigma is None:
        raise ParameterError("sigma", "give --sigma, or --target-eps to solve for it")
    return _cmd_dpsgd(args)
