"""Logging: library code logs to the ``darrm`` logger; the command lines decide where it goes.

The library never prints progress or diagnostics itself: it logs to ``logging.getLogger("darrm")``
(or a child, :func:`get_logger`), which has only a ``NullHandler`` until an application configures
it (the Python logging HOWTO's advice for libraries).  The command lines (``darrm``,
``darrm-experiments``) wrap each run in :func:`cli_logging`:

* messages of the ``darrm`` loggers go to stderr — INFO and DEBUG as written, WARNING and above
  as ``PROG: warning: …``; the level is WARNING with ``--quiet``, INFO by default and DEBUG with
  ``--verbose``;
* Python warnings (Opacus, torch, SciPy, …) are shown **once** each per run, keyed by message and
  category, on the same stream as ``PROG: warning: …`` lines, instead of once per teacher or per
  call site.  The ``warnings`` action ``"once"`` alone does not do it: CPython keeps "once" in the
  calling module's registry, which every change of the warning filters (libraries make them
  between calls) clears; the run's own ``showwarning`` remembers what it has shown.  Warnings
  filtered out (DeprecationWarning by default, ``-W ignore``) stay hidden.

Everything is undone when the run ends (handlers removed, warning filters restored), so calling
``main()`` repeatedly in one process (tests, notebooks) does not pile up handlers.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import warnings
from collections.abc import Iterator

#: the root of darrm's loggers (library modules use children: ``darrm.solver`` …)
LOGGER_NAME = "darrm"

#: ``--quiet`` / default / ``--verbose``
QUIET, NORMAL, VERBOSE = -1, 0, 1
_LEVELS = {QUIET: logging.WARNING, NORMAL: logging.INFO, VERBOSE: logging.DEBUG}


def get_logger(name: str | None = None) -> logging.Logger:
    """The ``darrm`` logger, or its child ``darrm.<name>`` (a dotted module name is kept as is)."""
    if not name or name == LOGGER_NAME:
        return logging.getLogger(LOGGER_NAME)
    return logging.getLogger(name if name.startswith(LOGGER_NAME + ".") else f"{LOGGER_NAME}.{name}")


class _StderrHandler(logging.StreamHandler):
    """A stream handler on whatever ``sys.stderr`` is when a record is emitted (redirections and
    pytest's capture replace it after the handler is made)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property
    def stream(self):  # noqa: D401 - property
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:  # StreamHandler.__init__ assigns it; the property wins
        pass


class _CliFormatter(logging.Formatter):
    """INFO/DEBUG: the message; WARNING and above: ``PROG: warning: message`` (first line only for
    Python warnings, whose second line repeats the source)."""

    def __init__(self, prog: str):
        super().__init__()
        self.prog = prog

    def format(self, record: logging.LogRecord) -> str:
        msg = record.getMessage()
        if record.levelno < logging.WARNING:
            return msg
        if record.name == "py.warnings":
            msg = msg.strip().splitlines()[0] if msg.strip() else msg
        return f"{self.prog}: {record.levelname.lower()}: {msg}"


def verbosity(quiet: bool, verbose: bool) -> int:
    """:data:`QUIET`, :data:`NORMAL` or :data:`VERBOSE` from the two flags (quiet wins)."""
    return QUIET if quiet else VERBOSE if verbose else NORMAL


@contextlib.contextmanager
def cli_logging(prog: str, level: int = NORMAL) -> Iterator[logging.Logger]:
    """Route the ``darrm`` loggers and Python warnings to stderr for one command-line run.

    Args:
        prog: the program name prefixed to warnings (``darrm``, ``darrm-experiments``).
        level: :data:`QUIET`, :data:`NORMAL` or :data:`VERBOSE`.

    Yields the ``darrm`` logger.
    """
    handler = _StderrHandler()
    handler.setFormatter(_CliFormatter(prog))
    loggers = [logging.getLogger(LOGGER_NAME), logging.getLogger("py.warnings")]
    saved = [(lg, lg.level, lg.propagate) for lg in loggers]
    for lg in loggers:
        lg.addHandler(handler)
        lg.propagate = False  # not twice when the application configured the root logger too
    loggers[0].setLevel(_LEVELS[level])
    loggers[1].setLevel(logging.WARNING)
    shown: set[tuple[str, type]] = set()

    def show_once(message, category, filename, lineno, file=None, line=None) -> None:
        """``warnings.showwarning`` for the run: one WARNING record per (message, category)."""
        key = (str(message), category)
        if key in shown:
            return
        shown.add(key)
        loggers[1].warning("%s", warnings.formatwarning(message, category, filename, lineno, line))

    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("once", append=True)  # after -W / PYTHONWARNINGS and the default ignores
            warnings.showwarning = show_once
            yield loggers[0]
    finally:
        for lg, lvl, prop in saved:
            lg.removeHandler(handler)
            lg.setLevel(lvl)
            lg.propagate = prop
