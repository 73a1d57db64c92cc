"""Exceptions raised by darrm.

Every error names the offending parameter so that a user sees at once what to fix.
All are subclasses of :class:`DarrmError` (itself a ``ValueError``), so callers can
catch one type.
"""

from __future__ import annotations


class DarrmError(ValueError):
    """Base class of every error raised deliberately by darrm."""


class ParameterError(DarrmError):
    """A parameter is outside its domain (e.g. ``eps <= 0``, even ``K``)."""

    def __init__(self, name: str, message: str):
        self.parameter = name
        super().__init__(f"{name}: {message}")


class ParameterTypeError(ParameterError, TypeError):
    """A parameter of the wrong type (a table that is no :class:`~darrm.GammaTable`, a prior that is
    no :class:`~darrm.Prior`, …): a :class:`ParameterError` that ``except TypeError`` catches too."""


class SolveError(DarrmError):
    """The LP was infeasible, unbounded, or the solver failed."""


class WorkerLostError(DarrmError):
    """An executor lost blocks of an exhaustive sweep (a worker died) and retrying did not bring
    them back: no verdict is given for an incomplete sweep."""


class CertificationError(DarrmError):
    """A γ table does not satisfy the privacy constraints it claims."""


class GammaFileError(DarrmError):
    """A γ table file is unreadable, corrupt, or fails re-verification."""


class MissingDependencyError(DarrmError):
    """An optional dependency is not installed; the message names the extra to install."""


def require(module: str, extra: str, purpose: str):
    """Import ``module`` or raise :class:`MissingDependencyError` naming ``pip install 'darrm[extra]'``."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingDependencyError(f"{purpose} needs {module.split('.')[0]}: pip install 'darrm[{extra}]'") from None
