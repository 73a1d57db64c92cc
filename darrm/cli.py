"""The ``darrm`` command line: solve, verify, evaluate and use γ tables.

Every subcommand returns an exit code; bad input gives a one-line message on stderr
and exit code 2 (a :class:`~darrm.errors.DarrmError`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from importlib.metadata import entry_points
from pathlib import Path

import numpy as np

from . import (
    FAMILIES,
    DisjointParams,
    GammaTable,
    IIDPrior,
    PrivacyParams,
    SolveOptions,
    __version__,
    family_gamma,
    load,
    save,
    solve,
)
from . import aggregate as aggregate_certified
from . import aggregate_counts as aggregate_counts_certified
from .atomic import atomic_write_bytes
from .backends.executors import make_executor
from .disjoint.members import parse_member
from .errors import DarrmError, ParameterError
from .paths import check_outputs, hold_outputs
from .prior import parse_prior
from .report import error_curve_text, gamma_table_text, plot_gammas
from .solver.options import DEFAULT_MAX_ROUNDS
from .utility import error_curve
from .validation import count, unit

#: Entry-point group of subcommands other layers add through ``register(subparsers)``
#: (pyproject.toml; the core never names them, so it never imports upward).
COMMANDS_GROUP = "darrm.commands"

DEMO = {"K": 11, "m": 3.0, "eps": 0.1, "member_delta": 1e-5}


def _params(args: argparse.Namespace) -> PrivacyParams:
    return PrivacyParams(K=args.K, m=args.m, eps=args.eps, member_delta=args.member_delta, delta=args.delta)


def _stabilize(v: str) -> float | str:
    if v == "auto":
        return v
    try:
        return float(v)
    except ValueError:
        raise ParameterError("stabilize", f"must be 'auto' or a number in (0, 1], got {v!r}") from None


def _log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _options(args: argparse.Namespace) -> SolveOptions:
    """SolveOptions from the parsed flags (argparse's defaults are SolveOptions' own)."""
    return SolveOptions(**{name: getattr(args, name) for name in SolveOptions.field_names() if hasattr(args, name)})


def _table_for(params: PrivacyParams | DisjointParams, family: str, prior_spec: str, progress: bool | None,
               args: argparse.Namespace | None = None) -> GammaTable:
    """The certified table the flags ask for (:func:`darrm.solve`)."""
    return solve(
        params, parse_prior(prior_spec), family=family,
        options=_options(args) if args is not None else None,
        executor=make_executor(getattr(args, "executor", None)),
        checkpoint=getattr(args, "checkpoint", None), progress=progress,
        # one line per round on a terminal or with --progress (tqdm's own rule for its bars)
        log=_log if progress or (progress is None and sys.stderr.isatty()) else None,
    )


def _baselines(params: PrivacyParams, gamma_opt: np.ndarray) -> dict[str, np.ndarray]:
    """γ_opt beside the closed-form families that apply (for display)."""
    out = {"opt": gamma_opt}
    if float(params.m).is_integer():
        out["sub"] = family_gamma("sub", params)
        if params.member_delta == 0 and params.delta == 0:
            out["dsub"] = family_gamma("dsub", params)
    out["const"] = family_gamma("const", params)
    return out


def _describe_disjoint(table: GammaTable) -> str:
    p: DisjointParams = table.params  # type: ignore[assignment]
    lines = [
        f"DaRRM γ_{table.family} for K={p.K} {p.member.describe()} on disjoint shards",
        f"  guarantee: ({p.target_eps:.6g}, {p.target_delta:.6g})-DP per query (certified over every "
        f"(changed-member vertex, number of high members), both outputs, both directions; "
        f"max violation {table.violation:.2e})",
    ]
    if table.prior is not None and table.objective is not None:
        lines.append(f"  prior: {table.prior}; expected error under it: {table.objective:.6f}")
    if table.info:
        lines.append(f"  status: {table.status}; " + ", ".join(
            f"{k}={table.info[k]}" for k in ("rounds", "stop", "optimality_gap", "repair_scale") if k in table.info))
    return "\n".join(lines)


def _describe(table: GammaTable) -> str:
    p = table.params
    if isinstance(p, DisjointParams):
        return _describe_disjoint(table)
    lines = [
        f"DaRRM γ_{table.family}: K={p.K}, m={p.m:g}, eps={p.eps:g}, member_delta={p.member_delta:g}, delta={p.delta:.6g}",
        f"  guarantee: ({p.m * p.eps:.6g}, {p.delta:.6g})-DP per query "
        f"(certified over all corner multisets, both outputs, both directions; max violation {table.violation:.2e})",
    ]
    if table.prior is not None and table.objective is not None:
        lines.append(f"  prior: {table.prior}; expected error under it: {table.objective:.6f}")
    if table.info:
        keys = ("method", "rounds", "lp_rows", "multisets", "stop", "repair_scale", "optimality_gap")
        lines.append("  " + ", ".join(f"{k}={table.info[k]}" for k in keys if k in table.info))
    return "\n".join(lines)


def cmd_demo(args: argparse.Namespace) -> int:
    check_outputs({"out": args.out, "plot": args.plot})
    params = PrivacyParams(**DEMO)
    table = solve(params, IIDPrior(), progress=args.progress)
    gammas = _baselines(params, table.gamma)
    # files first: a reader that stops early (`| head`) must not cost the result
    if args.out:
        save(table, args.out)
    if args.plot:
        plot_gammas(gammas, args.plot, "K=11, m=3, ε=0.1, Δ=1e-5")
    print(_describe(table))
    print()
    print(gamma_table_text(gammas))
    print()
    print("Error curve for i.i.d. mechanisms (exact; E(p) = E(1-p)):")
    print(error_curve_text(gammas))
    if args.out:
        print(f"\nwrote {args.out}")
    if args.plot:
        print(f"wrote {args.plot}")
    return 0


def _disjoint_params(args: argparse.Namespace) -> DisjointParams:
    if args.member_privacy is None or args.target_eps is None:
        raise ParameterError("members", "disjoint members need --member-privacy and --target-eps")
    return DisjointParams(args.K, parse_member(args.member_privacy), args.target_eps, args.target_delta)


def cmd_solve(args: argparse.Namespace) -> int:
    check_outputs({"out": args.out, "checkpoint": args.checkpoint})
    if args.checkpoint is not None and Path(args.checkpoint).exists() and not Path(args.checkpoint).is_file():
        raise ParameterError("checkpoint", f"{args.checkpoint} is not a regular file")
    params = _disjoint_params(args) if args.members == "disjoint" else _params(args)
    table = _table_for(params, args.family, args.prior, args.progress, args)
    if args.out:  # the file first: a reader that stops early (`| head`) must not cost the result
        save(table, args.out)
    print(_describe(table))
    print(gamma_table_text({table.family: table.gamma}))
    if args.out:
        print(f"wrote {args.out}")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    table = load(args.file)
    print(f"{args.file}: OK (checksum and certificate re-checked)")
    print(_describe(table))
    return 0


def _p_grid(text: str | None) -> list[float] | None:
    if text is None:
        return None
    if not isinstance(text, str):  # Python 3.11's argparse turns `--p=--` into []
        raise ParameterError("p", f"expected comma-separated probabilities in [0, 1], got {text!r}")
    grid = []
    for item in text.split(","):
        try:
            v = float(item)
        except ValueError:
            raise ParameterError("p", f"expected comma-separated probabilities in [0, 1], got {item.strip()!r}") from None
        grid.append(unit("p", v))
    return grid


def cmd_evaluate(args: argparse.Namespace) -> int:
    check_outputs({"plot": args.plot}, {"file": args.file})
    grid = _p_grid(args.p)
    table = load(args.file)
    if isinstance(table.params, DisjointParams):
        raise ParameterError("file", "evaluate compares shared-data baselines; not available for disjoint-member tables")
    gammas = _baselines(table.params, table.gamma)
    if table.family != "opt":
        gammas = {table.family: table.gamma, **{k: v for k, v in gammas.items() if k != "opt"}}
    if args.plot:  # the file first: a reader that stops early (`| head`) must not cost it
        plot_gammas(gammas, args.plot, f"K={table.K}, m={table.params.m:g}, ε={table.params.eps:g}")
    if args.json:
        ps = np.array(grid if grid else np.linspace(0, 1, 21))
        print(json.dumps({"p": ps.tolist(), **{k: error_curve(v, ps).tolist() for k, v in gammas.items()}}))
        return 0
    print(_describe(table))
    print(gamma_table_text(gammas))
    print()
    print(error_curve_text(gammas, grid) if grid else error_curve_text(gammas))
    if args.plot:
        print(f"wrote {args.plot}")
    return 0


def read_votes(path: str, counts: bool = False) -> np.ndarray:
    """Votes from .npy or CSV (comma/whitespace separated; one query per row).

    Without ``counts``: a (Q, K) 0/1 matrix (a CSV row or a (1, K) .npy for one query).  A 1-D
    .npy or a one-column CSV is refused as ambiguous (one query's K votes, or counts?).  With
    ``counts``: Q vote counts, as a 1-D .npy, one CSV column or one CSV row.
    """
    p = Path(path)
    try:
        if p.suffix == ".npy":
            arr = np.load(p, allow_pickle=False)
        else:
            text = p.read_text()
    except (OSError, ValueError, EOFError, UnicodeDecodeError) as exc:
        raise ParameterError("votes", f"cannot read {path}: {exc}") from None
    if p.suffix != ".npy":
        try:
            rows = [[float(x) for x in line.replace(",", " ").split()] for line in text.splitlines() if line.strip()]
            arr = np.array(rows) if rows else np.zeros((0, 0))
        except ValueError as exc:
            raise ParameterError("votes", f"{path}: not numeric CSV ({exc})") from None
        if arr.ndim != 2:
            raise ParameterError("votes", f"{path}: rows must all have the same length")
    if arr.size == 0:
        raise ParameterError("votes", f"{path}: no votes (0 queries)")
    if counts:
        if sum(n > 1 for n in arr.shape) > 1:
            raise ParameterError("votes", f"{path}: --counts needs Q vote counts (a 1-D .npy, one CSV column or "
                                          f"one CSV row), got shape {arr.shape}")
        return arr.reshape(-1)
    if arr.ndim == 1 or (p.suffix != ".npy" and arr.shape[1] == 1 and arr.shape[0] > 1):
        raise ParameterError("votes", f"{path}: a single column/1-D array of {arr.shape[0]} numbers is ambiguous: "
                                      "pass a (1, K) matrix (one CSV row) for one query, or --counts for vote counts")
    return arr


def cmd_aggregate(args: argparse.Namespace) -> int:
    check_outputs({"out": args.out}, {"file": args.file, "votes": args.votes})
    seed = None if args.seed is None else count("seed", args.seed, minimum=0)
    table = load(args.file)
    votes = read_votes(args.votes, counts=args.counts)
    release = aggregate_counts_certified if args.counts else aggregate_certified
    if args.secure and seed is not None:
        raise ParameterError("seed", "--secure draws from the OS CSPRNG; a seed would be ignored, so pass one or the other")
    labels = release(votes, table, np.random.default_rng(seed), secure=args.secure)
    out = "\n".join(str(int(v)) for v in labels) + "\n"
    if args.out:
        atomic_write_bytes(args.out, out.encode())
    else:
        sys.stdout.write(out)
    return 0


def _add_param_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--K", type=int, default=DEMO["K"], help="number of mechanisms (odd); default 11")
    p.add_argument("--m", type=float, default=DEMO["m"], help="privacy allowance in [1, K]; default 3")
    p.add_argument("--eps", type=float, default=DEMO["eps"], help="per-mechanism ε > 0; default 0.1")
    p.add_argument("--member-delta", type=float, default=DEMO["member_delta"],
                   help="per-mechanism Δ in [0, 1) (the paper's Δ; default %(default)g)")
    p.add_argument("--delta", type=float, default=None, help="target δ in [Δ, 1); default 1-(1-Δ)^m")


class OneLineErrorParser(argparse.ArgumentParser):
    """argparse with the command lines' error contract: a usage error is one line, exit 2."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")

    def _get_values(self, action, arg_strings):
        """Refuse an empty value (``--out ""``: usually an unset shell variable) and ``--opt=--``
        (which Python < 3.12 turns into ``[]`` for any option) with a usage error."""
        name = "/".join(action.option_strings) or action.dest
        given = " ".join(arg_strings)  # before argparse drops a "--" from the list
        if any(s == "" for s in arg_strings):
            self.error(f"argument {name}: empty value")
        value = super()._get_values(action, arg_strings)
        if action.nargs is None and isinstance(value, list) and not isinstance(action.default, list):
            self.error(f"argument {name}: expected one value, got {given!r}")
        return value


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineErrorParser(prog="darrm", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"darrm {__version__}")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an unexpected error")
    prog = parser.add_mutually_exclusive_group()
    prog.add_argument("--progress", dest="progress", action="store_true", default=None, help="always show progress bars")
    prog.add_argument("--no-progress", dest="progress", action="store_false", help="never show progress bars")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("demo", help="solve, certify and show γ_opt for K=11, m=3, ε=0.1, Δ=1e-5")
    p.add_argument("--out", help="also write the γ file here")
    p.add_argument("--plot", help="write γ shapes and error curves as PNG")
    p.set_defaults(func=cmd_demo)

    D = SolveOptions()  # the defaults, written once (darrm.solver.options)
    p = sub.add_parser("solve", help="compute and certify a γ table and write it as a γ file")
    _add_param_args(p)
    p.add_argument("--family", choices=FAMILIES, default="opt",
                   help="opt: the LP optimum γ_opt; sub: γ_Sub (Lemma 3.1); dsub: Theorem 4.1's γ; const: RR (default: %(default)s)")
    p.add_argument("--members", choices=("shared", "disjoint"), default="shared",
                   help="shared: every member sees the record (the paper); disjoint: members on disjoint shards")
    p.add_argument("--member-privacy", default=None,
                   help="disjoint only: nonprivate | EPS,DELTA ((ε,Δ)-DP members) | rr:EPS0 (members behind ε0-RR)")
    p.add_argument("--target-eps", type=float, default=None, help="disjoint only: per-query target ε")
    p.add_argument("--target-delta", type=float, default=0.0, help="disjoint only: per-query target δ; default 0")
    p.add_argument("--prior", default="iid:0.75",
                   help="objective prior: iid:MU | means:M1,..,MK | beta:A,B | paper-mc[:P_LOWER,TAU,T,SEED]")
    p.add_argument("--out", help="γ file to write (atomically); omitted: print only")
    p.add_argument("--method", choices=("auto", "full", "cutting-planes"), default=D.method,
                   help="full LP over all corner multisets, or constraint generation (auto: by size; default %(default)s)")
    p.add_argument("--executor", default="serial",
                   help="where exhaustive sweeps run: serial | local[:N] (processes) | dask:ADDRESS | torch[:DEVICE]")
    p.add_argument("--checkpoint", help="constraint generation: save/resume the working set in this .npz file")
    p.add_argument("--max-rounds", type=int, default=D.max_rounds,
                   help="constraint generation: round limit (default "
                        f"{DEFAULT_MAX_ROUNDS['shared']} shared, {DEFAULT_MAX_ROUNDS['disjoint']} disjoint)")
    p.add_argument("--accept-gap", action="store_true", default=D.accept_gap,
                   help="at the round limit, write the certified table anyway with its optimality gap")
    p.add_argument("--cuts-per-round", type=int, default=D.cuts_per_round,
                   help="constraint generation: worst multisets added per round (default %(default)s)")
    p.add_argument("--stabilize", type=_stabilize, default=D.stabilize,
                   help="constraint generation: in-out separation λ in (0, 1] (1 = plain Kelley cuts) or auto "
                        "(Kelley until the violation oscillates, then 0.5; default %(default)s)")
    p.add_argument("--gap-tol", type=float, default=D.gap_tol,
                   help="stop once the certified table is proven this close to optimal (default %(default)g)")
    p.add_argument("--lp-backend", choices=("highs", "cvxpy"), default=D.lp_backend,
                   help="restricted LP: incremental warm-started highspy model, or rebuilt through cvxpy "
                        "(default %(default)s)")
    p.set_defaults(func=cmd_solve)

    p = sub.add_parser("verify", help="check a γ file's checksum and re-certify its privacy")
    p.add_argument("file")
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("evaluate", help="error table/curve of a γ file against γ_Sub and γ_const")
    p.add_argument("file")
    p.add_argument("--p", help="comma-separated p grid for the error table")
    p.add_argument("--plot", help="write a PNG")
    p.add_argument("--json", action="store_true", help="print the error curves as JSON")
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("aggregate", help="private labels for votes (Q×K 0/1, or Q counts with --counts) from a γ file")
    p.add_argument("file")
    p.add_argument("--votes", required=True,
                   help="votes as .npy or CSV: a Q×K 0/1 matrix, one row per query (one query: one row)")
    p.add_argument("--counts", action="store_true",
                   help="the --votes file holds Q vote counts in [0, K] (1-D .npy, one CSV column or row)")
    p.add_argument("--seed", type=int, default=None, help="seed for the mechanism's randomness (reproducible runs)")
    p.add_argument("--secure", action="store_true",
                   help="draw every coin from the OS CSPRNG (exact Bernoulli draws; for production releases)")
    p.add_argument("--out", help="write labels here (one per line) instead of stdout")
    p.set_defaults(func=cmd_aggregate)

    for ep in sorted(entry_points(group=COMMANDS_GROUP), key=lambda e: e.name):
        ep.load()(sub)
    return parser


def _quiet_stdout() -> None:
    """Point stdout at /dev/null (its reader has gone) so the interpreter's final flush is silent."""
    import os

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # pragma: no cover - stdout without a file descriptor
        pass


def run_main(prog: str, args: argparse.Namespace) -> int:
    """Run ``args.func`` with the error contract of every darrm command line.

    A :class:`~darrm.errors.DarrmError` or an OS error (missing file, full disk): one line on
    stderr, exit 2.  Anything else is a bug: one line naming it and the ``--debug`` hint, exit 1
    (``--debug``: the traceback).  A reader that closed the pipe early (``| head``) ends quietly.
    """
    try:
        with hold_outputs():  # outputs checked by the command stay claimed until it ends
            rc = int(args.func(args) or 0)
        sys.stdout.flush()
        return rc
    except BrokenPipeError:  # output piped into e.g. `head`: files were written before printing
        _quiet_stdout()
        return 0
    except DarrmError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:
        if getattr(args, "debug", False):
            raise
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except MemoryError as exc:  # inputs too extreme for this machine: a resource limit, not a bug
        if getattr(args, "debug", False):
            raise
        first = str(exc).splitlines()[0] if str(exc) else ""
        print(f"{prog}: error: not enough memory for these inputs ({first or 'MemoryError'}); "
              "use less extreme values", file=sys.stderr)
        return 2
    except Exception as exc:
        if getattr(args, "debug", False):
            raise
        first = str(exc).splitlines()[0] if str(exc) else ""
        print(f"{prog}: internal error: {type(exc).__name__}{': ' + first if first else ''} "
              f"(run `{prog} --debug ...` for the traceback; please report it)", file=sys.stderr)
        return 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    return run_main("darrm", args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
