"""The ``darrm`` command line: solve, verify, evaluate and use γ tables.

Every subcommand returns an exit code; bad input gives a one-line message on stderr
and exit code 2 (a :class:`~darrm.errors.DarrmError`).

The conventions shared with every other command line of the project (options accepted before
and after the subcommand, shown defaults, ``--json`` vocabulary, logging, the error contract) are
:mod:`darrm.cli_conventions`.  Heavy libraries (numpy, SciPy, cvxpy, matplotlib, torch, Dask) are
imported by the commands that need them, not at start-up: ``darrm --help`` loads none of them.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from ._version import __version__
from .cli_conventions import (
    LazyChoices,
    OneLineErrorParser,
    finish_parser,
    print_json,
    progress_setting,
    progress_shown,
    run_main,
    single_threaded_under_limits,
)
from .errors import ParameterError
from .families import REGISTRY
from .json_vocabulary import canonical
from .logs import get_logger
from .paths import check_outputs
from .solver.options import SolveOptions

if TYPE_CHECKING:
    import numpy as np

    from .budget.spec import TotalBudget
    from .models.base import MemberModel
    from .table import GammaTable

#: Entry-point group of subcommands other layers add through ``register(subparsers)``
#: (pyproject.toml; the core never names them, so it never imports upward).
COMMANDS_GROUP = "darrm.commands"

class _DemoParams(TypedDict):
    K: int
    m: float
    eps: float
    member_delta: float


DEMO: _DemoParams = {"K": 11, "m": 3.0, "eps": 0.1, "member_delta": 1e-5}


def _model(args: argparse.Namespace) -> MemberModel:
    """The member model ``solve`` asks for: ``--members``; without it, the model whose own selecting
    option is given (``MemberModel.cli_selector``: ``--groups``, ``--record-groups``,
    ``--budget-groups``), else members on shared data.  An option of another model that this one does
    not read (``MemberModel.cli_options``) is refused, naming it, instead of being ignored."""
    from .models import MEMBER_MODELS, model_named

    if args.members is not None:
        model = model_named(args.members)
    else:
        chosen = [m for m in MEMBER_MODELS.values() if m.cli_selector and getattr(args, m.cli_selector) is not None]
        model = chosen[0] if chosen else model_named("shared")
    model.require("cli", "members")
    for dest in dict.fromkeys(d for m in MEMBER_MODELS.values() for d in m.cli_options):
        if dest not in model.cli_options and getattr(args, dest, None) is not None:
            owners = " or ".join(m.name for m in MEMBER_MODELS.values() if dest in m.cli_options)
            raise ParameterError(dest.replace("_", "-"), f"applies to --members {owners}, not to --members "
                                                         f"{model.name}")
    return model


#: ``solve``'s total-budget options (all three or none); what they replace, each model declares
#: (:attr:`darrm.models.base.MemberModel.budget_replaces`)
BUDGET_OPTIONS = ("total_eps", "total_delta", "queries")


def _budget(args: argparse.Namespace, model: MemberModel) -> TotalBudget | None:
    """The :class:`~darrm.TotalBudget` of ``--total-eps/--total-delta/--queries`` (None without them);
    the per-query options the model's budget replaces are refused, then set to their placeholders."""
    given = [n for n in BUDGET_OPTIONS if getattr(args, n, None) is not None]
    if not given:
        return None
    from .budget.spec import TotalBudget

    for n in BUDGET_OPTIONS:
        if getattr(args, n) is None:
            raise ParameterError(n.replace("_", "-"), "is required with --" + given[0].replace("_", "-")
                                 + " (a total budget needs --total-eps, --total-delta and --queries)")
    model.require("total-budget", "members")
    for n, _ in model.budget_replaces:
        if getattr(args, n) is not None:
            raise ParameterError(n.replace("_", "-"), "does not apply with a total budget (--total-eps …): the "
                                                      "budget replaces the per-query target")
    names = {"epsilon": "total-eps", "delta": "total-delta", "queries": "queries"}
    try:
        return TotalBudget(args.total_eps, args.total_delta, args.queries)
    except ParameterError as exc:
        raise ParameterError(names.get(exc.parameter, exc.parameter), str(exc)[len(exc.parameter) + 2:]) from None


@contextmanager
def _option_names(args: argparse.Namespace) -> Iterator[None]:
    """A refused argument named by the command's option (``max_memory`` → ``max-memory``) when the
    command has that option, so the one-line error names what the user typed."""
    try:
        yield
    except ParameterError as exc:
        name = exc.parameter
        if "_" in name and hasattr(args, name):
            raise type(exc)(name.replace("_", "-"), str(exc)[len(name) + 2:]) from None
        raise


def _stabilize(v: str) -> float | str:
    if v == "auto":
        return v
    try:
        return float(v)
    except ValueError:
        raise ParameterError("stabilize", f"must be 'auto' or a number in (0, 1], got {v!r}") from None


def _options(args: argparse.Namespace) -> SolveOptions:
    """SolveOptions from the parsed flags (argparse's defaults are SolveOptions' own); ``--warm-start``
    names a checkpoint file, read here (:meth:`darrm.WarmStart.from_checkpoint`)."""
    kw = {name: getattr(args, name) for name in SolveOptions.field_names() if hasattr(args, name)}
    if kw.get("warm_start") is not None:
        from .solver.warm_start import WarmStart

        kw["warm_start"] = WarmStart.from_checkpoint(kw["warm_start"])
    return SolveOptions(**kw)


def _round_log(progress: bool | None) -> Callable[[str], None]:
    """A solve's per-round lines: INFO when progress is shown (terminal or ``--progress``), else
    DEBUG (``--verbose`` shows them anyway, ``--quiet`` never)."""
    level = logging.INFO if progress_shown(progress) else logging.DEBUG
    log = get_logger("solve")
    return lambda line: log.log(level, line)


def _table_for(params: Any, family: str, prior_spec: str,
               progress: bool | None, args: argparse.Namespace | None = None,
               budget: TotalBudget | None = None) -> GammaTable:
    """The certified table the flags ask for (:func:`darrm.solve`)."""
    from . import api
    from .backends.executors import make_executor
    from .prior import parse_prior

    prior = parse_prior(prior_spec)
    options = _options(args) if args is not None else None
    executor = make_executor(getattr(args, "executor", None))
    checkpoint = getattr(args, "checkpoint", None)
    # every argument (and every one the solve would ignore) refused before any work
    api.check_request(params, prior, family=family, options=options, executor=executor, checkpoint=checkpoint,
                      budget=budget)
    if budget is not None:  # composed over queries by the accountant: through the facade (darrm/__init__.py)
        import darrm

        return darrm.design_for_budget(params, budget, prior, log=_round_log(progress)).table
    return api.solve(params, prior, family=family, options=options, executor=executor, checkpoint=checkpoint,
                     progress=progress, log=_round_log(progress))


def _describe(table: GammaTable) -> str:
    """``darrm solve``'s summary of a table: its parameters, guarantee, prior and how it was made."""
    from .models import model_of

    p = table.params
    eps_q, delta_q = p.query_budget
    model = model_of(p)
    lines = [
        f"DaRRM γ_{table.family}: {p.describe()}",
        f"  guarantee: ({eps_q:.6g}, {delta_q:.6g})-DP {model.per_query} "
        f"(certified over {model.scope}, both outputs, both directions; max violation {table.violation:.2e})",
    ]
    if table.prior is not None and table.objective is not None:
        from .gamma_file import objective_verified

        mark = "" if objective_verified(table) else f" ({table.info['objective_check']})"
        lines.append(f"  prior: {table.prior}; expected error under it: {table.objective:.6f}{mark}")
    if table.info:
        keys = ("method", "rounds", "lp_rows", "multisets", "stop", "repair_scale", "optimality_gap")
        status = f"status: {table.status}; " if table.status else ""
        lines.append("  " + status + ", ".join(f"{k}={table.info[k]}" for k in keys if k in table.info))
    return "\n".join(lines)


def _gamma_list(gamma: np.ndarray) -> list:
    """γ as JSON: a list of floats, nested one level per group for a per-group table."""
    import numpy as np

    return np.asarray(gamma, dtype=np.float64).tolist()


def _gamma_text(table: GammaTable) -> str:
    """The table as text: γ(l) per vote count, or per group count vector (the member model's)."""
    from .models import model_of

    return model_of(table.params).table_text(table)


def table_record(table: GammaTable, gamma_file: str | Path | None = None) -> dict[str, Any]:
    """A γ table as the JSON record of ``solve``/``verify``/``demo`` (keys: :mod:`darrm.json_vocabulary`).

    ``epsilon_query``/``delta_query`` is the per-query guarantee the table is certified for
    ((mε, δ) for shared data, the target for disjoint members); ``report`` is the typed
    :class:`~darrm.status.SolveReport`."""
    import dataclasses

    p = table.params
    eps_q, delta_q = p.query_budget
    rec: dict[str, Any] = {"family": table.family, "K": p.K, "members": p.members, **p.record_fields(),
                           "epsilon_query": eps_q, "delta_query": delta_q}
    report = {k: (str(v) if v is not None and k == "stop" else v) for k, v in dataclasses.asdict(table.report).items()}
    tb = table.info.get("total_budget")
    if isinstance(tb, dict):
        winner = table.info.get("design", {}).get("winner", {})
        rec["total_budget"] = {"epsilon_total": tb.get("epsilon"), "delta_total": tb.get("delta"),
                               "queries": tb.get("queries"), "member_randomness": tb.get("member_randomness"),
                               "epsilon_total_composed": tb.get("composed_epsilon"),
                               "value_discretization_interval": tb.get("discretization"),
                               "target": winner.get("family"), "parameter": winner.get("parameter")}
    from .gamma_file import objective_verified

    rec.update(prior=table.prior, expected_error=table.objective, expected_error_verified=objective_verified(table),
               certified=True, violation=table.violation,
               status=table.status, report=report, gamma=_gamma_list(table.gamma),
               gamma_file=None if gamma_file is None else str(gamma_file))
    return canonical(rec)


def cmd_demo(args: argparse.Namespace) -> int:
    check_outputs({"out": args.out, "plot": args.plot})
    import numpy as np

    from .api import solve
    from .gamma_file import save
    from .models.shared import baselines
    from .params import PrivacyParams
    from .prior import IIDPrior
    from .report import error_curve_text, gamma_table_text, plot_gammas
    from .utility import error_curve

    params = PrivacyParams(**DEMO)
    progress = progress_setting(args)
    table = solve(params, IIDPrior(), progress=progress, log=_round_log(progress))
    gammas = baselines(params, table.gamma)
    # files first: a reader that stops early (`| head`) must not cost the result
    if args.out:
        save(table, args.out)
    if args.plot:
        plot_gammas(gammas, args.plot, "demo", params=params)
    if args.json:
        ps = np.linspace(0, 1, 21)
        print_json({**table_record(table, args.out),
                    "error_curves": {"p": ps.tolist(), **{k: error_curve(v, ps).tolist() for k, v in gammas.items()}}})
        return 0
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


def cmd_solve(args: argparse.Namespace) -> int:
    check_outputs({"out": args.out, "checkpoint": args.checkpoint})
    if args.checkpoint is not None and Path(args.checkpoint).exists() and not Path(args.checkpoint).is_file():
        raise ParameterError("checkpoint", f"{args.checkpoint} is not a regular file")
    from .gamma_file import save

    model = _model(args)
    with _option_names(args):
        budget = _budget(args, model)
        if budget is not None:  # only K and the members' privacy are used: the design records its own per-query target
            for n, placeholder in model.budget_replaces:
                setattr(args, n, placeholder)
        params = model.params_from_cli(vars(args), DEMO)
        table = _table_for(params, args.family, args.prior, progress_setting(args), args, budget)
    if args.out:  # the file first: a reader that stops early (`| head`) must not cost the result
        save(table, args.out)
    if args.json:
        print_json(table_record(table, args.out))
        return 0
    print(_describe(table))
    if "total_budget" in table.info:
        print(_budget_text(table))
    print(_gamma_text(table))
    if args.out:
        print(f"wrote {args.out}")
    return 0


def _budget_text(table: GammaTable) -> str:
    """One line: the total a budget table was charged, by which accountant, and which shape won by how much."""
    tb, design = table.info["total_budget"], table.info.get("design", {})
    win = design.get("winner", {})
    text = (f"  total budget: {tb.get('queries')} queries compose to ε = {tb.get('composed_epsilon'):.6g} ≤ "
            f"{tb.get('epsilon'):g} at δ = {tb.get('delta'):g} ({tb.get('accountant', 'core composition')}); "
            f"winner {win.get('family')} (θ = {win.get('parameter'):.6g})")
    if design.get("majority_fits"):
        text += "; the plain majority (γ ≡ 1) fits"
    if design.get("improvement") is not None:
        text += f"; error {design['improvement']:.3g} below the best baseline ({design['baseline_error']:.6g})"
    return text


def cmd_verify(args: argparse.Namespace) -> int:
    from .backends.executors import make_executor
    from .gamma_file import load

    with _option_names(args):
        executor = None if args.executor is None else make_executor(args.executor)
        table = load(args.file, max_memory=args.max_memory, executor=executor)
    budgeted = "total_budget" in table.info or "group_budgets" in table.info
    if budgeted:  # the accountant's total too (load re-checks what the core can)
        import darrm

        try:
            darrm.verify_charged_total(table)
        except darrm.CertificationError as exc:
            raise darrm.GammaFileError(f"{args.file}: total budget not met: {exc}") from None
    if args.json:
        print_json({"verified": True, **table_record(table, args.file)})
        return 0
    extra = " and total budget (Q-fold composition)" if budgeted else ""
    print(f"{args.file}: OK (checksum and certificate{extra} re-checked)")
    print(_describe(table))
    return 0


def _p_grid(text: str | None) -> list[float] | None:
    from .validation import unit

    if text is None:
        return None
    if not isinstance(text, str):  # Python 3.11's argparse turns `--p=--` into []
        raise ParameterError("p", f"expected comma-separated probabilities in [0, 1], got {text!r}")
    grid = []
    for item in text.split(","):
        try:
            v = float(item)
        except ValueError:
            raise ParameterError("p", "expected comma-separated probabilities in [0, 1], "
                                      f"got {item.strip()!r}") from None
        grid.append(unit("p", v))
    return grid


def cmd_evaluate(args: argparse.Namespace) -> int:
    check_outputs({"plot": args.plot}, {"file": args.file})
    grid = _p_grid(args.p)
    import numpy as np

    from .gamma_file import load
    from .models import model_of
    from .report import error_curve_text, plot_gammas
    from .utility import error_curve

    table = load(args.file)
    gammas, title, text = model_of(table.params).evaluation(table)
    if args.plot:  # the file first: a reader that stops early (`| head`) must not cost it
        plot_gammas(gammas, args.plot, **title)
    if args.json:
        ps = np.array(grid if grid else np.linspace(0, 1, 21))
        print(json.dumps({"p": ps.tolist(), **{k: error_curve(v, ps).tolist() for k, v in gammas.items()}}))
        return 0
    print(_describe(table))
    print(text)
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
    import numpy as np

    from .strict_json import StrictJSONError, open_regular

    p = Path(path)
    try:  # a regular file only: a FIFO would block, /dev/zero feed the reader without end
        with open_regular(p) as fh:
            if p.suffix == ".npy":
                arr = np.load(fh, allow_pickle=False)
            else:
                text = fh.read().decode()
    except (OSError, StrictJSONError, ValueError, EOFError, UnicodeDecodeError) as exc:
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
    from .validation import count

    seed = None if args.seed is None else count("seed", args.seed, minimum=0)
    if args.secure and seed is not None:
        raise ParameterError("seed", "--secure draws from the OS CSPRNG; a seed would be ignored, "
                                     "so pass one or the other")
    import numpy as np

    from .atomic import atomic_write_bytes
    from .gamma_file import load
    from .models import model_of
    from .verification import aggregate, aggregate_counts

    table = load(args.file)
    one_count = model_of(table.params).label_counts(table.params) == 1  # else a (Q, G) matrix, a column per group
    votes = read_votes(args.votes, counts=args.counts and one_count)
    release = aggregate_counts if args.counts else aggregate
    labels = release(votes, table, np.random.default_rng(seed), secure=args.secure)
    out = "\n".join(str(int(v)) for v in labels) + "\n"
    if args.out:
        atomic_write_bytes(args.out, out.encode())
    if args.json:
        print_json({"labels": [int(v) for v in labels], "queries": len(labels), "seed": seed,
                    "secure": bool(args.secure), "gamma_file": str(args.file),
                    "labels_file": None if args.out is None else str(args.out)})
    elif not args.out:
        sys.stdout.write(out)
    return 0


def _add_param_args(p: argparse.ArgumentParser) -> None:
    # shared-only options default to None here (resolved by _params) so that one given with
    # --members disjoint is seen and refused
    p.add_argument("--K", type=int, default=None,
                   help=f"number of mechanisms (odd) (default: {DEMO['K']}; with --groups, the sum of their sizes)")
    p.add_argument("--m", type=float, default=None, help=f"privacy allowance in [1, K] (default: {DEMO['m']:g})")
    p.add_argument("--eps", type=float, default=None, help=f"per-mechanism ε > 0 (default: {DEMO['eps']:g})")
    p.add_argument("--member-delta", type=float, default=None,
                   help=f"per-mechanism Δ in [0, 1) (the paper's Δ) (default: {DEMO['member_delta']:g})")
    p.add_argument("--delta", type=float, default=None, help="target δ in [Δ, 1) (default: 1-(1-Δ)^m)")

def _memory_arg(text: str) -> float:
    """A size in bytes, with an optional K/M/G/T suffix (powers of 1024): 4G, 512M, 1e9."""
    units = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    scale = units.get(t[-1:], 1)
    try:
        v = float(t[:-1] if t[-1:] in units else t) * scale
    except ValueError:
        raise ParameterError("max-memory", f"must be a size such as 4G, 512M or 1e9 bytes, got {text!r}") from None
    if not (v > 0 and v < float("inf")):
        raise ParameterError("max-memory", f"must be a size > 0, got {text!r}")
    return v


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineErrorParser(prog="darrm", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"darrm {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def json_flag(p: argparse.ArgumentParser, what: str) -> None:
        p.add_argument("--json", action="store_true", help=f"print {what} as JSON (keys: README, 'JSON output')")

    p = sub.add_parser("demo", help="solve, certify and show γ_opt for K=11, m=3, ε=0.1, Δ=1e-5",
                       description="Solve and certify γ_opt for K=11, m=3, ε=0.1, Δ=1e-5 under the i.i.d. "
                                   "prior, and show it beside γ_Sub and γ_const with exact error curves.")
    p.add_argument("--out", help="also write the γ file here (default: no file)")
    p.add_argument("--plot", help="write γ shapes and error curves as PNG (default: no plot)")
    json_flag(p, "the table record and the error curves")
    p.set_defaults(func=cmd_demo)

    D = SolveOptions()  # the defaults, written once (darrm.solver.options)
    p = sub.add_parser("solve", help="compute and certify a γ table and write it as a γ file",
                       description="Compute a γ table (γ_opt by linear programming, or a closed-form "
                                   "family), certify it (Lemma 3.4's exact privacy condition) and "
                                   "optionally write it as a checksummed γ file.")
    _add_param_args(p)
    p.add_argument("--family", choices=LazyChoices("darrm.families:names"), metavar="FAMILY", default="opt",
                   help=f"the γ family: {', '.join(REGISTRY)} (darrm.families)")
    p.add_argument("--members", choices=LazyChoices("darrm.models:names"), metavar="MODEL", default=None,
                   help="the member model, one of %(choices)s (darrm.models): shared = every member sees the "
                        "record (the paper); disjoint = members on disjoint shards; groups, shard-groups, "
                        "weighted-shards = their options below (default: the model whose own option --groups, "
                        "--record-groups or --budget-groups is given, else shared)")
    p.add_argument("--member-privacy", default=None,
                   help="members on shards (disjoint, shard-groups, weighted-shards): nonprivate | EPS,DELTA "
                        "((ε,Δ)-DP members) | rr:EPS0 (members behind ε0-RR) (default: none; required with them)")
    p.add_argument("--groups", default=None,
                   help="members on shared data in groups of their own budgets: COUNT:EPS:DELTA per group, "
                        "comma-separated, e.g. 5:0.1:1e-5,6:0.3:1e-5 (K is their sum; the target is --target-eps "
                        "and --target-delta) (default: none)")
    p.add_argument("--gamma-form", choices=("total", "per-group"), default=None,
                   help="with --groups: total = γ(L) reads the total vote count (the paper's form); per-group = "
                        "γ(l_1, …, l_G) reads each group's count (never worse; the votes' columns are the members "
                        "in group order) (default: total)")
    p.add_argument("--record-groups", default=None,
                   help="disjoint members whose records carry their own budgets (Individualized PATE's "
                        "upsampling): COPIES:EPS:DELTA per record group, comma-separated, e.g. "
                        "1:1:1e-5,2:2:1e-5,3:3:1e-5 (each record of the group sits in COPIES shards and is owed a "
                        "per-query (EPS, DELTA); replaces --target-eps/--target-delta) (default: none)")
    p.add_argument("--budget-groups", default=None,
                   help="disjoint members trained on the records of one budget group each (Individualized PATE's "
                        "weighting model): SIZE:EPS:DELTA per group, comma-separated, e.g. 34:0.1:1e-7,44:0.2:1e-7 "
                        "(SIZE members, each on its own shard of the group's records, owed a per-query (EPS, "
                        "DELTA)); γ reads each group's vote count, the votes' columns are the members in group "
                        "order; K is the sum; replaces --target-eps/--target-delta (default: none)")
    p.add_argument("--vote-weights", default=None,
                   help="with --budget-groups: W1,W2,… one positive weight per group; γ then reads only the "
                        "weighted count Σ W_g·l_g (never better than γ per group count) (default: none, γ per "
                        "group count)")
    p.add_argument("--target-eps", type=float, default=None,
                   help="disjoint members and --groups: per-query target ε (default: none; required with them)")
    p.add_argument("--target-delta", type=float, default=None,
                   help="disjoint members and --groups: per-query target δ (default: 0)")
    p.add_argument("--prior", default="iid:0.75",
                   help="objective prior: iid:MU | means:M1,..,MK | beta:A,B | paper-mc[:P_LOWER,TAU,T,SEED]")
    p.add_argument("--out", help="γ file to write (atomically) (default: print only)")
    p.add_argument("--method", choices=("auto", "full", "cutting-planes"), default=D.method,
                   help="full LP over all corner multisets, or constraint generation (auto: by size)")
    p.add_argument("--executor", default="serial",
                   help="where exhaustive sweeps run: serial | local[:N] (processes) | joblib[:N] | dask:ADDRESS | "
                        "torch[:DEVICE] "
                        "(shared members only)")
    p.add_argument("--checkpoint",
                   help="constraint generation (shared members, --family opt, not the full LP): save/resume the "
                        "working set in this .npz file (default: none)")
    p.add_argument("--warm-start", default=None, metavar="CHECKPOINT",
                   help="constraint generation (shared members, --family opt, not the full LP): start from the "
                        "working set of another solve's --checkpoint file, at other m, ε, Δ or K; its rows are "
                        "derived afresh, so only the rounds change, never the certificate (default: none)")
    p.add_argument("--max-rounds", type=int, default=D.max_rounds,
                   help="constraint generation: round limit (default: the member model's own, "
                        "darrm.models.round_limits())")
    p.add_argument("--accept-gap", action="store_true", default=D.accept_gap,
                   help="at the round limit, write the certified table anyway with its optimality gap")
    p.add_argument("--cuts-per-round", type=int, default=D.cuts_per_round,
                   help="constraint generation: worst multisets added per round")
    p.add_argument("--stabilize", type=_stabilize, default=D.stabilize,
                   help="constraint generation: in-out separation λ in (0, 1] (1 = plain Kelley cuts) or auto "
                        "(Kelley until the violation oscillates, then 0.5)")
    p.add_argument("--gap-tol", type=float, default=D.gap_tol,
                   help="stop once the certified table is proven this close to optimal (expected-error units)")
    p.add_argument("--lp-backend", choices=("highs", "cvxpy"), default=D.lp_backend,
                   help="restricted LP: incremental warm-started highspy model, or rebuilt through cvxpy")
    p.add_argument("--screen", action=argparse.BooleanOptionalAction, default=D.screen,
                   help="constraint generation (Δ > 0): look for cuts near the last ones before sweeping "
                        "every multiset again (default: on)")
    p.add_argument("--max-memory", type=_memory_arg, default=D.max_memory, metavar="SIZE",
                   help="memory the sweeps may use, e.g. 4G or 512M (default: what is available at the start); "
                        "as many sweep workers as fit are used, and a solve that fits in none is refused first")
    p.add_argument("--total-eps", type=float, default=None,
                   help="design γ for a TOTAL budget: ε_total over --queries queries, members answering each "
                        "query with fresh randomness (with --total-delta and --queries; replaces --m and --delta; "
                        "default: none, one query at (mε, δ))")
    p.add_argument("--total-delta", type=float, default=None,
                   help="the total budget's δ_total in (0, 1) (default: none; required with --total-eps)")
    p.add_argument("--queries", type=int, default=None,
                   help="the total budget's number of queries Q ≥ 1 (default: none; required with --total-eps)")
    json_flag(p, "the certified table's record (parameters, guarantee, γ, report)")
    p.set_defaults(func=cmd_solve)

    p = sub.add_parser("verify", help="check a γ file's checksum and re-certify its privacy",
                       description="Check a γ file's checksum and re-run the full privacy certificate "
                                   "for the parameters it records; exit 2 if either fails.")
    p.add_argument("file", help="the γ file (written by `darrm solve --out`)")
    p.add_argument("--executor", default=None,
                   help="where the certificate's sweep runs: serial | local[:N] (processes) | joblib[:N] (joblib's "
                        "active backend, loky: local processes) | dask:ADDRESS | torch[:DEVICE] (default: local "
                        "processes as fit, serial for small K)")
    p.add_argument("--max-memory", type=_memory_arg, default=None, metavar="SIZE",
                   help="memory the certificate may use, e.g. 4G or 512M (default: what is available at the start); "
                        "a file whose certificate needs more is refused before any work (-v prints the estimate)")
    json_flag(p, "the verified table's record")
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("evaluate", help="error table/curve of a γ file against γ_Sub and γ_const",
                       description="Exact expected error of a γ file's table beside γ_Sub and γ_const "
                                   "(i.i.d. mechanisms), as a table, a JSON curve or a PNG.")
    p.add_argument("file", help="the γ file to evaluate")
    p.add_argument("--p", help="comma-separated p grid for the error table "
                               "(default: 0.5, 0.55, …, 1.0 for the table; 21 points in [0, 1] for --json)")
    p.add_argument("--plot", help="write a PNG (default: no plot)")
    json_flag(p, "the error curves ({\"p\": grid, family: errors})")
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("aggregate", help="private labels for votes (Q×K 0/1, or Q counts with --counts) from a γ file",
                       description="Release one private label per query with DaRRM (Algorithm 1) and the "
                                   "γ file's certified table.")
    p.add_argument("file", help="the γ file (re-certified before use)")
    p.add_argument("--votes", required=True,
                   help="votes as .npy or CSV: a Q×K 0/1 matrix, one row per query (one query: one row); "
                        "for grouped members the columns are the members in group order")
    p.add_argument("--counts", action="store_true",
                   help="the --votes file holds Q vote counts in [0, K] (1-D .npy, one CSV column or row); "
                        "for a per-group table a Q×G matrix, each group's count")
    p.add_argument("--seed", type=int, default=None,
                   help="seed for the mechanism's randomness (reproducible runs) (default: fresh entropy)")
    p.add_argument("--secure", action="store_true",
                   help="draw every coin from the OS CSPRNG (exact Bernoulli draws; for production releases)")
    p.add_argument("--out", help="write labels here (one per line) (default: stdout)")
    json_flag(p, "the labels and how they were drawn")
    p.set_defaults(func=cmd_aggregate)

    for ep in sorted(entry_points(group=COMMANDS_GROUP), key=lambda e: e.name):
        ep.load()(sub)
    return finish_parser(parser)


def main(argv: Sequence[str] | None = None) -> int:
    single_threaded_under_limits()  # before anything loads numpy
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    return run_main("darrm", args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
