"""``darrm shuffle``: a table (or JSON) of every shuffle bound, and an ε-vs-n plot.

    darrm shuffle --n 1e6 --eps0 1,2,4 --delta 1e-6 [--classes 10] [--json] [--plot PNG]
    darrm shuffle --n 1e6 --eps0 1 --delta 1e-6 --rounds 100 [--json]
    darrm shuffle --n 1e6 --target-eps 0.5 --delta 1e-6 [--rounds 100] [--json]
    darrm shuffle --n 1e5 --eps0 1 --delta 1e-7 --randomizer oue:8@0.1 [--json]

Without ``--classes`` the randomizer is a generic ε0-LDP one; with ``--classes k`` it is k-ary
randomized response (k = 2: binary RR) and every bound, upper and lower, is for that
randomizer.  ``--randomizer SPEC`` names any supported randomizer instead
(:mod:`darrm.accounting.shuffle.randomizer_spec`: ``generic``, ``rr:K``, ``rappor:K``, ``oue:K``,
``hadamard:K``, each optionally ``@RATE`` for Poisson subsampling, or ``+B`` for B uniform blanket
messages per user; ``geo:K`` / ``grid:K`` for metric privacy on a line / grid, whose records carry
``distance``).  JSON output: the records
of :func:`darrm.accounting.shuffle.best.bound_records` in the CLI vocabulary (:mod:`darrm.json_vocabulary`),
``{"method", "kind", "valid", "epsilon", "delta", "epsilon0", "n", "note"}``, one per method and
ε0 (``kind``: "upper" or "lower"); records with ``"valid": false`` are published results whose
proof is known to be broken (or methods that do not apply, ``"epsilon": null``), shown for
comparison only.  ``--rounds T`` (T > 1) composes T rounds instead
(:mod:`darrm.accounting.shuffle.composition`): one record per ε0,
``{"epsilon0", "n", "rounds", "delta_total", "epsilon_total"}``.  ``--target-eps`` solves for the
largest ε0 meeting it (:mod:`darrm.accounting.shuffle.calibration`):
``{"target_epsilon", "n", "rounds", "delta_total", "epsilon0", "epsilon_total"}``.
"""

from __future__ import annotations

import argparse

from darrm import validation as v
from darrm.errors import ParameterError
from darrm.paths import check_outputs

from . import parse_count, print_json, print_table


def _parse_eps0(text: str) -> list[float]:
    return list(v.comma_list("eps0", text, lambda t: v.epsilon("eps0", float(t)), "numbers in (0, 700]"))


#: the most rounds composed (one self-composition of the round's pair: its cost grows like √T, and
#: beyond this ε_total is in the hundreds for any useful round)
MAX_ROUNDS = 10**7


def run(args: argparse.Namespace) -> int:
    check_outputs({"plot": args.plot})
    n = parse_count("n", args.n)
    delta = v.open_unit("delta", args.delta)
    classes = None if args.classes is None else v.count("classes", args.classes, minimum=2)
    spec = _spec(args.randomizer, classes)
    rounds = v.count("rounds", args.rounds, maximum=MAX_ROUNDS)
    if (args.eps0 is None) == (args.target_eps is None):
        raise ParameterError("eps0", "give exactly one of --eps0 and --target-eps")
    if args.target_eps is not None:
        return _target(args, n, delta, spec, rounds)
    eps0s = _parse_eps0(args.eps0)
    if rounds > 1:
        if args.plot:
            raise ParameterError("plot", "--plot draws one round; leave it out with --rounds")
        return _rounds(args, n, eps0s, delta, spec, rounds)
    if args.plot and (spec.family not in ("generic", "rr") or spec.rate != 1.0 or spec.blankets):
        raise ParameterError("plot", "--plot draws a generic randomizer or k-ary RR only")
    if spec.own_bounds:
        return _protocol(args, n, eps0s, delta, spec)
    from ..shuffle.best import bound_records

    recs = bound_records(n, eps0s, delta, spec=spec)
    if args.plot:  # the file first: a reader that stops early (`| head`) must not cost it
        from ..shuffle.plot import plot_eps_vs_n

        plot_eps_vs_n(args.plot, n, eps0s, delta, spec.k)
    if args.json:
        print_json(recs)
    else:
        print_table(["eps0", "method", "bound", "valid", "eps"],
                    [[r["eps0"], r["method"], r["bound"], str(r["valid"]), r["eps"]] for r in recs],
                    f"shuffle amplification, n={n}, delta={delta:g}, {_what(spec)}")
    return 0


def _protocol(args, n: int, eps0s: list[float], delta: float, spec) -> int:
    """A multi-message (``rr:4+2``) or metric (``geo:K``) spec: its own upper and lower bounds."""
    from ..shuffle.protocol_bounds import protocol_records

    recs = protocol_records(n, eps0s, delta, spec)
    if args.json:
        print_json(recs)
    else:
        extra = "distance" if spec.blankets == 0 else "blankets"
        print_table(["eps0", extra, "method", "bound", "valid", "eps"],
                    [[r["eps0"], r[extra], r["method"], r["bound"], str(r["valid"]), r["eps"]] for r in recs],
                    f"shuffle amplification, n={n}, delta={delta:g}, {_what(spec)}")
    return 0


def _spec(text: str | None, classes: int | None):
    """The randomizer: ``--randomizer`` parsed, ``--classes k`` as ``rr:k``, else generic."""
    from ..shuffle.randomizer_spec import FAMILIES, RandomizerSpec, parse_randomizer

    if text is not None and classes is not None:
        raise ParameterError("randomizer", "give --randomizer or --classes, not both (--classes k is rr:k)")
    if text is not None:
        return parse_randomizer(text)
    if classes is None:
        return RandomizerSpec("generic")
    return RandomizerSpec("rr", v.count("classes", classes, minimum=2, maximum=FAMILIES["rr"]))


def _what(spec) -> str:
    if spec.family == "generic":
        return "generic eps0-LDP"
    if spec.family == "rr" and spec.rate == 1.0 and not spec.blankets:
        return f"{spec.k}-ary randomized response"
    if spec.blankets:
        return f"multi-message {spec.label}: each user also sends {spec.blankets} uniform blanket message(s)"
    if spec.family in ("geo", "grid"):
        return f"metric {spec.label}: eps0 per unit of distance, worst pair at each distance"
    return f"randomizer {spec.label}"


def _rounds(args, n: int, eps0s: list[float], delta: float, spec, rounds: int) -> int:
    from ..shuffle.best import randomizer_for
    from ..shuffle.calibration import central_epsilon
    from ..shuffle.composition import round_profile_name

    recs = [{"eps0": e0, "n": n, "rounds": rounds, "delta_total": delta,
             "eps_total": central_epsilon(e0, n, delta, rounds=rounds, spec=spec),
             "composition": round_profile_name(randomizer_for(e0, None, spec))} for e0 in eps0s]
    if args.json:
        print_json(recs)
    else:
        print_table(["eps0", "eps_total", "round_profile"], [[r["eps0"], r["eps_total"], r["composition"]]
                                                             for r in recs],
                    f"{rounds} shuffled rounds composed, n={n}, delta_total={delta:g}, {_what(spec)}; each "
                    f"round's dominating pair from its round_profile")
    return 0


def _target(args, n: int, delta: float, spec, rounds: int) -> int:
    from ..shuffle.calibration import central_epsilon, eps0_for_target

    if args.plot:
        raise ParameterError("plot", "--plot needs --eps0, not --target-eps")
    target = v.epsilon("target_eps", args.target_eps)
    e0 = eps0_for_target(target, n, delta, rounds=rounds, spec=spec)
    rec = {"target_eps": target, "n": n, "rounds": rounds, "delta_total": delta, "eps0": e0,
           "eps_total": central_epsilon(e0, n, delta, rounds=rounds, spec=spec)}
    if args.json:
        print_json(rec)
    else:
        print_table(["target_eps", "eps0", "eps_total"], [[target, e0, rec["eps_total"]]],
                    f"largest eps0 for the target, n={n}, rounds={rounds}, delta_total={delta:g}, {_what(spec)}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``shuffle`` subcommand to the ``darrm`` CLI."""
    p = subparsers.add_parser(
        "shuffle", help="privacy amplification by shuffling: every bound",
        description="Central (ε, δ) of n users' ε0-LDP reports behind a shuffler, under every published "
                    "bound (upper and lower, validity stated), optionally plotted against n (docs/shuffle.md).")
    p.add_argument("--n", required=True, help="number of users (e.g. 1e6)")
    p.add_argument("--eps0", default=None,
                   help="local budget(s), comma-separated (e.g. 1,2,4) (default: none; required unless --target-eps)")
    p.add_argument("--delta", required=True, type=float, help="target delta of the shuffled protocol")
    p.add_argument("--classes", type=int, default=None,
                   help="k-ary randomized response over this many classes (default: generic eps0-LDP)")
    p.add_argument("--randomizer", default=None, metavar="SPEC",
                   help="the local randomizer: generic, rr:K, rappor:K, oue:K or hadamard:K over K inputs, "
                        "optionally @RATE for Poisson subsampling (e.g. oue:8@0.1) or +B for B uniform blanket "
                        "messages per user (multi-message, e.g. rr:4+2); geo:K / grid:K: the clamped geometric "
                        "mechanism on K points / a KxK grid, eps0 per unit of l1 distance, bounds per distance "
                        "(default: generic, or rr:K with --classes K)")
    p.add_argument("--rounds", type=v.count_arg, default=1,
                   help="compose this many shuffled rounds, delta being the total (default: 1, every bound)")
    p.add_argument("--target-eps", type=float, default=None,
                   help="solve for the largest eps0 whose central epsilon (over --rounds) meets this "
                        "(default: none; replaces --eps0)")
    p.add_argument("--json", action="store_true", help="print JSON records instead of a table")
    p.add_argument("--plot", metavar="PNG", default=None, help="also plot eps vs n per method (default: no plot)")
    p.set_defaults(func=run)
