"""Conventions shared by every command line of the project, written once.

``darrm`` (and its plugin subcommands ``account``, ``shuffle``, ``account-votes``) and
``darrm-experiments`` build their parsers with :class:`OneLineErrorParser` and finish them with
:func:`finish_parser`, and run a command with :func:`run_main`:

* a usage error is one line and exit 2; every option's help shows its default
  (:class:`HelpFormatter`); every subcommand has a description;
* ``--progress``/``--no-progress``, ``-q``/``--quiet``, ``-v``/``--verbose`` and ``--debug`` are
  accepted before and after the subcommand (:func:`add_common_options`);
* ``--json`` output goes through :func:`print_json`, whose keys are the vocabulary of
  :mod:`darrm.json_vocabulary`;
* diagnostics and Python warnings go through :mod:`logging` to stderr (:mod:`darrm.logs`);
* a :class:`~darrm.errors.DarrmError` or OS error is one line and exit 2, a bug one line and exit 1.

This module imports only the standard library and light darrm modules, so parsers build fast.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable
from typing import Any, NoReturn

from .errors import DarrmError
from .json_vocabulary import canonical
from .logs import cli_logging, verbosity

#: the thread-count variables of the BLAS and OpenMP runtimes numpy, SciPy and torch may load
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")


def single_threaded_under_limits(environ: dict[str, str] | None = None) -> bool:
    """Under a finite process or address-space limit (``RLIMIT_NPROC``, ``RLIMIT_AS``: ``ulimit -u``,
    ``ulimit -v``), set the BLAS/OpenMP thread counts to 1 unless the user set them — *before*
    numpy loads, which is the only moment they count.  OpenBLAS starts one thread per core when
    it loads; when the limit makes that fail it raises SIGINT, which a command would report as
    "interrupted" (or a bare internal error).  Every command line calls this first thing.

    Args:
        environ: the environment to change (default: ``os.environ``).

    Returns:
        Whether a limit was found (and the unset variables were set to 1).
    """
    import os

    env = os.environ if environ is None else environ
    try:
        import resource

        limited = any(resource.getrlimit(r)[0] != resource.RLIM_INFINITY
                      for r in (resource.RLIMIT_NPROC, resource.RLIMIT_AS))
    except (ImportError, AttributeError, OSError, ValueError):  # pragma: no cover - not POSIX
        return False
    if limited:
        for var in THREAD_VARIABLES:
            env.setdefault(var, "1")
    return limited


class LazyChoices:
    """``choices`` for argparse read from a module only when a value is checked or a subcommand's
    help is shown (``module:attribute``; an attribute that is a function is called: a registry's
    names), so building the parser imports nothing heavy.  Options
    using it give an explicit ``metavar`` (argparse would otherwise list the choices at build time)."""

    def __init__(self, target: str):
        self.target = target

    def _values(self) -> tuple:
        import importlib

        module, _, attr = self.target.partition(":")
        found = getattr(importlib.import_module(module), attr)
        return tuple(found() if callable(found) else found)

    def __contains__(self, value: object) -> bool:
        return value in self._values()

    def __iter__(self):
        return iter(self._values())

    def __len__(self) -> int:
        return len(self._values())


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, showing every option's default.

    ``(default: X)`` is appended to an option's help unless the help already states its default
    (the word "default") or the option has none to show: flags (``store_true`` …, off unless
    given), required options, and options whose default is None — the help of those says what
    happens when they are omitted, as ``(default: …)`` in words (checked by the test walking every
    parser)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if ("%(default)" in text or "default" in text.lower() or not action.option_strings or action.required
                or action.nargs == 0 or action.default is None or action.default is argparse.SUPPRESS):
            return text
        return text + " (default: %(default)s)"


class OneLineErrorParser(argparse.ArgumentParser):
    """argparse with the command lines' conventions: a usage error is one line, exit 2; defaults are
    shown in the help (:class:`HelpFormatter`; subparsers inherit both)."""

    def __init__(self, *args: Any, **kwargs: Any):
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")

    def _get_values(self, action, arg_strings):
        """Refuse an empty value (``--out ""``: usually an unset shell variable) and ``--opt=--``
        (which Python < 3.12 turns into ``[]`` for any option) with a usage error."""
        if action.nargs in (argparse.PARSER, argparse.REMAINDER):
            # a subcommand's whole command line: its own parser checks its options, naming them
            return super()._get_values(action, arg_strings)
        name = "/".join(action.option_strings) or action.dest
        given = " ".join(arg_strings)  # before argparse drops a "--" from the list
        if any(s == "" for s in arg_strings):
            self.error(f"argument {name}: empty value")
        value = super()._get_values(action, arg_strings)
        if action.nargs is None and isinstance(value, list) and not isinstance(action.default, list):
            self.error(f"argument {name}: expected one value, got {given!r}")
        return value


def comma_list_type(convert: Callable[[str], Any], what: str) -> Callable[[str], tuple]:
    """An argparse ``type`` for a comma-separated option value: :func:`darrm.validation.comma_list`
    (empty items refused, never dropped), its refusal a one-line usage error naming the option."""
    from .validation import comma_list

    def parse(text: str) -> tuple:
        try:
            return comma_list("value", text, convert, what)
        except DarrmError as exc:
            raise argparse.ArgumentTypeError(str(exc).split(": ", 1)[-1]) from None

    return parse


def add_common_options(parser: argparse.ArgumentParser, top: bool) -> None:
    """``--progress/--no-progress``, ``-q/--quiet``, ``-v/--verbose`` and ``--debug``.

    On the top-level parser (``top``) they have their defaults; on a subcommand their default is
    ``SUPPRESS``, so a flag given after the subcommand overrides the same flag given before it
    and an absent one leaves the top-level value alone."""
    if any("--debug" in a.option_strings for a in parser._actions):
        return
    suppress: dict[str, Any] = {} if top else {"default": argparse.SUPPRESS}
    prog = parser.add_mutually_exclusive_group()
    prog.add_argument("--progress", dest="progress", action="store_true",
                      **({"default": None} if top else suppress),
                      help="always show progress bars and per-round lines (default: on a terminal only)")
    prog.add_argument("--no-progress", dest="progress", action="store_false", **suppress,
                      help="never show progress bars")
    talk = parser.add_mutually_exclusive_group()
    talk.add_argument("-q", "--quiet", action="store_true", **suppress,
                      help="only warnings and errors on stderr (progress bars only with --progress)")
    talk.add_argument("-v", "--verbose", action="store_true", **suppress,
                      help="also debug messages (e.g. every solver round, even off a terminal)")
    parser.add_argument("--debug", action="store_true", **suppress,
                        help="show the traceback of an unexpected error")


def subparsers_of(parser: argparse.ArgumentParser) -> Iterable[tuple[str, argparse.ArgumentParser]]:
    """Every (command path, parser) below ``parser``, depth first (e.g. ``("account compose", p)``)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield name, sub
                for deeper, p in subparsers_of(sub):
                    yield f"{name} {deeper}", p


def finish_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the common options to ``parser`` and to every subcommand below it (plugins included)."""
    add_common_options(parser, top=True)
    for _, sub in subparsers_of(parser):
        add_common_options(sub, top=False)
    return parser


def progress_setting(args: argparse.Namespace) -> bool | None:
    """``--progress`` → True, ``--no-progress`` → False; neither: False with ``--quiet``, else None
    (tqdm's own rule: bars on a terminal)."""
    progress = getattr(args, "progress", None)
    if progress is None and getattr(args, "quiet", False):
        return False
    return progress


def progress_shown(progress: bool | None) -> bool:
    """Whether progress output is on for a :func:`progress_setting` value."""
    return bool(progress) or (progress is None and sys.stderr.isatty())


def print_json(obj: Any) -> None:
    """One JSON document on stdout, keys renamed to the CLI vocabulary (:func:`darrm.json_vocabulary.canonical`)."""
    json.dump(canonical(obj), sys.stdout, indent=2)
    sys.stdout.write("\n")


def _quiet_stdout() -> None:
    """Point stdout at /dev/null (its reader has gone) so the interpreter's final flush is silent."""
    import os

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # pragma: no cover - stdout without a file descriptor
        pass


def run_main(prog: str, args: argparse.Namespace) -> int:
    """Run ``args.func`` with the conventions of every darrm command line.

    Logging and warnings go to stderr for the run (:func:`darrm.logs.cli_logging`, at the level of
    ``--quiet``/``--verbose``).  A :class:`~darrm.errors.DarrmError` or an OS error (missing file,
    full disk): one line on stderr, exit 2.  Anything else is a bug: one line naming it and the
    ``--debug`` hint, exit 1 (``--debug``: the traceback).  A reader that closed the pipe early
    (``| head``) ends quietly.
    """
    with cli_logging(prog, verbosity(getattr(args, "quiet", False), getattr(args, "verbose", False))):
        return _run(prog, args)


def _run(prog: str, args: argparse.Namespace) -> int:
    from .paths import hold_outputs

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


