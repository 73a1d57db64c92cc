"""``darrm account ...``: privacy accounting results as tables (or JSON).

Subcommands (each prints one library function's records):

* ``compose``      — :func:`darrm.accounting.composition.compare_bounds`;
* ``dpsgd``        — :func:`darrm.accounting.dpsgd.compare_accountants` (ε, or σ for a target ε);
* ``gnmax``        — :func:`darrm.accounting.gnmax.compare_methods`;
* ``paper-tables`` — :func:`darrm.accounting.paper.tables`;
* ``queries``      — :func:`darrm.accounting.queries.composed_epsilon` / ``composed_delta`` of a
  γ file's answers (the table's own privacy profile, PLD-composed, or the fixed members' bound),
  beside the generic bound; for record groups (copies on shards, or budget groups),
  :func:`darrm.accounting.queries.record_group_bounds` (each group's own total).

The numerical modules are imported when a subcommand runs, not when the parser is built.
``--json`` keys follow :mod:`darrm.json_vocabulary` (``epsilon``, ``epsilon_total`` …).
"""

from __future__ import annotations

import argparse

from darrm.cli_conventions import LazyChoices
from darrm.errors import ParameterError
from darrm.validation import count_arg

from . import print_json, print_table


def _cmd_compose(args: argparse.Namespace) -> int:
    from .. import composition

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
    from .. import dpsgd

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
        given = ({"target_eps": args.target_eps} if args.target_eps is not None
                 else {"noise_multiplier": args.noise_multiplier})
        print_json({"sample_rate": q, "steps": steps, "delta": args.delta, **given, "results": rows})
        return 0
    cols = list(rows[0])
    title = (f"noise multiplier for target eps={args.target_eps}" if args.target_eps is not None
             else f"DP-SGD noise multiplier={args.noise_multiplier}")
    print_table(cols, [[r[c] for c in cols] for r in rows], f"{title}, q={q:.6g}, steps={steps}, delta={args.delta}")
    return 0


def _cmd_gnmax(args: argparse.Namespace) -> int:
    from .. import gnmax

    res = gnmax.compare_methods(args.eps, args.delta)
    if args.json:
        print_json(res)
    else:
        print_table(["method", "sigma"], [[r["method"], r["sigma"]] for r in res["sigma"]],
                    f"GNMax sigma for one ({args.eps}, {args.delta})-DP query (L2 sensitivity sqrt 2); "
                    f"paper grid minimiser lambda={res['paper_grid_order']:.4g}")
    return 0


def _cmd_paper_tables(args: argparse.Namespace) -> int:
    from .. import paper

    result = paper.tables(paper.TABLES if args.table == "all" else (args.table,), tuple(args.m))
    if args.json:
        print_json(result)
        return 0
    for key, rows in result.items():
        cols = list(rows[0])
        print_table(cols, [[r[c] for c in cols] for r in rows], paper.TABLE_TITLES[key])
        print()
    return 0


def _cmd_queries(args: argparse.Namespace) -> int:
    from darrm.gamma_file import load

    from .. import queries

    if (args.delta_total is None) == (args.epsilon_total is None):
        raise ParameterError("delta-total", "give exactly one of --delta-total (prints epsilon_total) and "
                                            "--epsilon-total (prints delta_total)")
    from darrm import validation as v

    if args.delta_total is not None:
        v.open_unit("delta-total", args.delta_total)
    else:
        v.epsilon("epsilon-total", args.epsilon_total, allow_zero=True)
    if args.interval is not None:
        queries.check_interval(args.interval, "interval")
    table = load(args.file)
    try:
        mr = queries.derived_member_randomness(table, args.member_randomness)
    except ParameterError as exc:
        raise ParameterError("member-randomness", str(exc).split(": ", 1)[1]) from None
    opts = {"member_randomness": mr, "value_discretization_interval": args.interval}
    if queries.has_record_groups(table):
        return _record_group_queries(args, table, opts)  # record groups: each group's own total
    try:
        if args.delta_total is not None:
            b = queries.composed_epsilon(table, args.queries, delta_total=args.delta_total, **opts)
        else:
            b = queries.composed_delta(table, args.queries, epsilon_total=args.epsilon_total, **opts)
    except ParameterError as exc:  # the CLI's spelling of the options
        if exc.parameter != "value_discretization_interval":
            raise
        raise ParameterError("interval", str(exc).split(": ", 1)[1]) from None
    # the generic per-query composition is a comparison for fresh members only: for fixed members
    # no per-query composition applies, and printing one beside their bound would mislead
    generic = queries.generic_epsilon(table, args.queries, b.delta) \
        if args.delta_total is not None and b.member_randomness == "fresh" else None
    rec = {**b.to_dict(), "queries": args.queries}
    if generic is not None:
        rec["epsilon_total_generic"] = generic
    note = (FIXED_NOTE if b.member_randomness == "fixed" else None)
    if note is not None:
        rec["note"] = note
    if args.json:
        print_json(rec)
        return 0
    rows = [[b.bound, b.epsilon, b.delta, b.lower if b.member_randomness == "fresh" else b.upper]]
    if generic is not None:
        rows.append([queries.BOUND_GENERIC, generic, b.delta, generic])
    print_table(["accountant", "epsilon_total", "delta_total", "lower_bound"], rows,
                f"{args.queries} queries of {args.file}, members {b.member_randomness}")
    if note is not None:
        print(note)
    return 0


#: what ``account queries --member-randomness fixed`` says under its total
FIXED_NOTE = ("fixed members: the total is post-processing of the members' own guarantees and holds for any "
              "number of queries; no per-query composition applies to them (docs/accounting.md, "
              "'Which accounting applies to me')")


def _record_group_queries(args: argparse.Namespace, table, opts: dict) -> int:
    """``account queries`` for a table of record groups (copies on shards, or budget groups on one-group
    shards): each record group's own total (:func:`darrm.accounting.queries.record_group_bounds`), and the
    largest, which every record meets (a record's loss is its own group's): the number
    :func:`~darrm.accounting.queries.composed_epsilon` gives."""
    from .. import queries

    target = {"delta_total": args.delta_total} if args.delta_total is not None else \
        {"epsilon_total": args.epsilon_total}
    per = queries.record_group_bounds(table, args.queries, **target, **opts)
    worst = queries.largest_group_total(per)
    groups = table.params.groups
    rec = {**worst.to_dict(), "queries": args.queries,
           "record_group_totals": [{"record_group": g.to_list(), **b.to_dict()}
                                   for g, b in zip(groups, per, strict=True)]}
    if args.json:
        print_json(rec)
        return 0
    rows = [[f"{g.to_list()[0]}×({g.target_eps:g}, {g.target_delta:g})", b.bound, b.epsilon, b.delta,
             b.lower if b.bound == queries.BOUND_FRESH else b.upper] for g, b in zip(groups, per, strict=True)]
    rows.append(["every record", worst.bound, worst.epsilon, worst.delta,
                 worst.lower if worst.bound == queries.BOUND_FRESH else worst.upper])
    print_table(["record group count×(ε, δ)", "accountant", "epsilon_total", "delta_total", "lower_bound"], rows,
                f"{args.queries} queries of {args.file}, members {args.member_randomness}: each record group's total")
    return 0


class _WithAll(LazyChoices):
    """A module's tuple of names, plus "all"."""

    def _values(self) -> tuple:
        return (*super()._values(), "all")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``account`` with its subcommands to the main ``darrm`` parser."""
    account = subparsers.add_parser(
        "account", help="privacy accounting (composition, DaRRM queries, DP-SGD, GNMax, paper tables)",
        description="Privacy accounting for private majority ensembles: composition bounds, DP-SGD "
                    "teachers, GNMax calibration and the paper's privacy tables (docs/accounting.md).")
    sub = account.add_subparsers(dest="account_command", required=True, metavar="ACCOUNTING")

    def common(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p.add_argument("--json", action="store_true", help="print JSON instead of a table")
        return p

    p = common(sub.add_parser(
        "compose", help="k-fold composition of (eps, delta)-DP mechanisms",
        description="Total (ε, δ) of k composed (ε, δ)-DP mechanisms under every bound: simple, "
                    "Dwork-Roth advanced, Kairouz et al.'s general bound (the paper's Theorem 2.3) and "
                    "the exact optimal composition."))
    p.add_argument("--eps", type=float, required=True, help="ε of each composed mechanism (> 0)")
    p.add_argument("--delta", type=float, default=0.0, help="δ of each composed mechanism, in [0, 1)")
    p.add_argument("--compositions", type=count_arg, required=True, help="number k of composed mechanisms")
    p.add_argument("--delta-prime", type=float, default=1e-4,
                   help="the extra δ' the advanced and Kairouz bounds spend (their slack), in (0, 1)")
    p.set_defaults(func=_cmd_compose)

    p = common(sub.add_parser(
        "dpsgd", help="DP-SGD epsilon (or noise multiplier for --target-eps)",
        description="ε of DP-SGD with Poisson sampling (add/remove-one adjacency) for a noise multiplier, "
                    "or the noise multiplier that meets --target-eps, under each accountant."))
    p.add_argument("--noise-multiplier", type=float,
                   help="noise std / clipping norm (Opacus's noise_multiplier) "
                        "(default: none; required unless --target-eps)")
    p.add_argument("--sample-rate", type=float,
                   help="Poisson sampling rate q per step (default: none; derived from --n-samples if given)")
    p.add_argument("--steps", type=count_arg,
                   help="number of noisy gradient steps (default: none; derived from --n-samples if given)")
    p.add_argument("--n-samples", type=count_arg,
                   help="derive q and steps from a loader: q=1/ceil(n/batch), steps=epochs·ceil(n/batch) "
                        "(default: none; give --sample-rate and --steps instead)")
    p.add_argument("--batch-size", type=count_arg, default=32, help="batch size, with --n-samples")
    p.add_argument("--epochs", type=count_arg, default=5, help="epochs, with --n-samples")
    p.add_argument("--delta", type=float, required=True, help="target δ of the whole training run, in (0, 1)")
    p.add_argument("--accountant", choices=_WithAll("darrm.accounting.dpsgd:ACCOUNTANTS"), metavar="ACCOUNTANT",
                   default="pld",
                   help="pld (dp-accounting, core dependencies), prv or rdp (Opacus: "
                        "pip install 'darrm[experiments]'), or all")
    p.add_argument("--target-eps", type=float,
                   help="solve for the noise multiplier meeting this ε instead (default: none; compute ε)")
    p.add_argument("--tol", type=float, default=1e-4, help="epsilon tolerance of --target-eps")
    p.set_defaults(func=_cmd_dpsgd)

    p = common(sub.add_parser(
        "gnmax", help="GNMax sigma for a per-query (eps, delta)",
        description="Noise σ of one GNMax query (L2 sensitivity √2) that is (ε, δ)-DP, under each "
                    "calibration method (the paper's RDP grid, optimal RDP, PLD)."))
    p.add_argument("--eps", type=float, required=True, help="per-query ε (> 0)")
    p.add_argument("--delta", type=float, required=True, help="per-query δ, in (0, 1)")
    p.set_defaults(func=_cmd_gnmax)

    p = common(sub.add_parser(
        "paper-tables", help="reproduce the paper's privacy tables",
        description="The DaRRM paper's privacy tables recomputed: teacher DP-SGD budgets, per-query and "
                    "total budgets (Tables 2, 5, 7, 9), Table 3 and the GNMax σ table."))
    p.add_argument("--table", choices=_WithAll("darrm.accounting.paper:TABLES"), metavar="TABLE", default="all",
                   help="which table: teachers, totals, table3, gnmax or all")
    p.add_argument("--m", type=count_arg, nargs="+", default=[3], help="privacy allowances (paper: 1 3 5 7)")
    p.set_defaults(func=_cmd_paper_tables)

    p = common(sub.add_parser(
        "queries", help="total (eps, delta) of Q answers of a gamma file",
        description="Total (ε, δ) of Q DaRRM answers of one γ file: with --member-randomness fresh, the "
                    "PLD composition of the table's own dominating pair (its exact privacy profile), "
                    "bracketed by optimistic and pessimistic discretisation; with fixed, the post-processing "
                    "bound of the members' own guarantees (any Q).  The generic bound (Q identical "
                    "(ε_q, δ_q) queries, Kairouz-Oh-Viswanath) is printed beside it (docs/accounting.md).  "
                    "For records copied into shards (darrm solve --record-groups) and budget groups on one-group "
                    "shards, each record group's own total is printed, and the largest, which every record "
                    "meets."))
    p.add_argument("file", help="the γ file (written by `darrm solve --out`)")
    p.add_argument("--queries", type=count_arg, required=True, help="number Q of answered queries")
    p.add_argument("--delta-total", type=float, help="total δ in (0, 1): print epsilon_total (default: none)")
    p.add_argument("--epsilon-total", type=float, help="total ε in [0, 700]: print delta_total (default: none)")
    p.add_argument("--member-randomness", choices=("fresh", "fixed"), default=None,
                   help="fresh: members answer each query with fresh randomness (per-query composition); "
                        "fixed: the same trained members answer every query (post-processing of their "
                        "guarantees only); default: none, say which holds, except for members on disjoint "
                        "shards with no privacy of their own (fresh: the randomness is DaRRM's coins)")
    p.add_argument("--interval", type=float, default=None,
                   help="PLD discretisation interval in [1e-7, 0.1] (default: chosen from Q: 1e-4, coarser "
                        "where the composed PLD would be large; connect-the-dots, beside the closed forms)")
    p.set_defaults(func=_cmd_queries)
