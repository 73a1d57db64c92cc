"""The member model as one class: what every model declares, and what it must do.

A *member model* says which members one record can change (every member on shared data, one on a
disjoint shard, r_g copies of a record group, …) and therefore which γ tables are private.  Each
model is one subclass of :class:`MemberModel`, registered once in :mod:`darrm.models`; everything
that chooses between models (``darrm.solve``, ``darrm.certify``, γ files, the privacy profile, the
labelling session, the command line) asks :func:`darrm.models.model_of` and calls a method here,
never a chain of ``isinstance`` tests.

**What is declared.**  As cvxpy's solver classes do, each model states its facts as class
attributes: ``name`` (``params.members``, ``darrm solve --members NAME``), ``params_type``,
``gamma_format`` (its γ files), ``guarantee`` and ``scope`` (how its certificate is worded), and
its **capabilities** (dp_accounting's ``supports(event)``):

* ``"profile"`` — :meth:`profile`, the exact privacy profile of one query (what fresh members
  compose, :mod:`darrm.privacy.profile`);
* ``"fixed-members"`` — :meth:`exposures`, the members one record can change (what trained-once
  members' post-processing bound composes, :mod:`darrm.accounting.queries`);
* ``"cli"`` — :meth:`params_from_cli`, parameters from ``darrm solve``'s option values;
* ``"total-budget"`` — γ designed for a total budget of Q queries: one designer registered for the
  model in :mod:`darrm.accounting.budget` (``register_designer``), :attr:`budget_replaces` for the
  command line.

* ``"record-groups"`` — records of several groups, each owed its own total
  (:func:`darrm.accounting.queries.record_group_bounds`).

A missing capability is refused by :meth:`require`, naming the model and the capability.

**What is required.**  :meth:`example` (small parameters the contract test
``tests/darrm/test_member_models.py`` runs end to end), :meth:`check` (refuse what the solver would
drop), :meth:`solve`, :meth:`certify` (rigorous, from Algorithm 1's output probabilities, never
from LP rows) and :meth:`expected_error` (the objective the solver minimises).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ..errors import ParameterError

if TYPE_CHECKING:
    import numpy as np

    from ..families import Family
    from ..prior import Prior
    from ..privacy.certify import Certificate
    from ..privacy.profile import PrivacyProfile
    from ..solver.options import SolveOptions
    from ..table import GammaTable
    from .disjoint.members import MemberPrivacy

#: the capabilities a model may declare (module docstring)
CAPABILITIES = ("profile", "fixed-members", "cli", "total-budget", "record-groups")

#: what one record changes in trained-once members: ((count, member privacy), …), composed together
Exposures = tuple[tuple[int, "MemberPrivacy"], ...]


class MemberModel(ABC):
    """One member model (module docstring): its declared facts, capabilities and operations.

    Attributes:
        name: the model's name (``params.members``; ``darrm solve --members NAME``).
        params_type: its parameters class (:class:`~darrm.member_params.MemberParams`).
        gamma_format: the ``format`` of its γ files (:mod:`darrm.gamma_file`).
        guarantee: how its per-query guarantee is written in messages.
        scope: what its certificate ranges over (``darrm solve``'s summary).
        per_query: for whom the per-query guarantee holds (``darrm solve``'s summary).
        capabilities: the capabilities it implements (:data:`CAPABILITIES`).
        fixed_bound: the name of its fixed-members bound (:mod:`darrm.accounting.queries`).
        cli_options: ``darrm solve``'s option names (argparse ``dest``) this model reads; any
            other model's own option is refused with it.
        cli_selector: the option whose presence selects this model when ``--members`` is not given.
        cli_example: ``darrm solve`` flags that give :meth:`example`'s parameters.
        budget_replaces: with the ``"total-budget"`` capability, ``darrm solve``'s per-query options
            (argparse ``dest``) that a total budget replaces, each refused with a budget, with the
            placeholder :meth:`params_from_cli` receives in its place (the design does not read it).
            A model whose groups are owed their own totals (a ``GroupBudgets``, given in Python) leaves
            the budget options out of :attr:`cli_options`, so ``darrm solve --total-eps`` refuses it.
        max_rounds: its constraint-generation round limit when ``SolveOptions.max_rounds`` is None (the
            constant its loop reads; a round's cost differs by model).
    """

    name: ClassVar[str]
    params_type: ClassVar[type[Any]]
    gamma_format: ClassVar[str]
    guarantee: ClassVar[str]
    scope: ClassVar[str]
    per_query: ClassVar[str] = "per query"
    capabilities: ClassVar[frozenset[str]] = frozenset()
    fixed_bound: ClassVar[str] = ""
    cli_options: ClassVar[tuple[str, ...]] = ()
    cli_selector: ClassVar[str | None] = None
    cli_example: ClassVar[tuple[str, ...]] = ()
    budget_replaces: ClassVar[tuple[tuple[str, Any], ...]] = ()
    max_rounds: ClassVar[int]

    # ------------------------------------------------------------------ capabilities
    def supports(self, capability: str) -> bool:
        """Whether the model implements ``capability`` (one of :data:`CAPABILITIES`)."""
        if capability not in CAPABILITIES:
            raise ParameterError("capability", f"must be one of {', '.join(CAPABILITIES)}, got {capability!r}")
        return capability in self.capabilities

    def require(self, capability: str, parameter: str) -> None:
        """Refuse, naming ``parameter``, the model and the capability, when it is not supported.

        Raises:
            ParameterError: the model does not declare ``capability``.
        """
        if not self.supports(capability):
            raise ParameterError(parameter, f"the {self.name} member model has no {capability!r} capability "
                                            f"(it supports: {', '.join(sorted(self.capabilities)) or 'none'})")

    # ------------------------------------------------------------------ required
    @abstractmethod
    def example(self) -> Any:
        """Small parameters of this model (the contract test solves them in well under a second)."""

    @abstractmethod
    def check(self, params: Any, family: Family, options: SolveOptions, executor: Any,
              checkpoint: Path | None) -> None:
        """Refuse, naming it, what this model's solve would drop silently.

        Raises:
            ParameterError: an option, executor or checkpoint the solve would ignore.
        """

    @abstractmethod
    def solve(self, params: Any, prior: Prior, family: Family, options: SolveOptions, executor: Any,
              checkpoint: Path | None, progress: bool | None, log: Callable[[str], None] | None) -> GammaTable:
        """A certified table (the request was checked by :meth:`check`)."""

    @abstractmethod
    def certify(self, gamma: np.ndarray, params: Any, tol: float, progress: bool | None,
                max_memory: float | None, executor: Any = None) -> Certificate:
        """The rigorous certificate of ``gamma`` (validated) for ``params``; ``executor``: where its
        sweeps run (a model whose certificate is small runs in this process)."""

    def expected_error(self, gamma: np.ndarray, params: Any, prior: Prior) -> float:
        """A table's expected error under ``prior`` (Eq. 2's objective, the one the solver minimises;
        :func:`darrm.gamma_file.check_objective` checks a file's recorded value against it): γ(0..K)'s
        by :func:`darrm.solver.objective.expected_signed_error`."""
        from ..solver.objective import expected_signed_error

        return expected_signed_error(gamma, prior)

    # ------------------------------------------------------------------ capability "profile"
    def profile(self, gamma: Any, params: Any, executor: Any, method: str,
                max_memory: float | None) -> PrivacyProfile:
        """The exact privacy profile of one query, rounded outward (arguments checked by
        :func:`darrm.models.profile.privacy_profile`).

        Raises:
            ParameterError: the model has no ``"profile"`` capability.
        """
        self.require("profile", "params")
        raise NotImplementedError  # a model declaring the capability overrides this

    def in_process(self, executor: Any) -> None:
        """Refuse an executor other than the serial one: this model's profile runs in this process.

        Raises:
            ParameterError: naming ``executor``.
        """
        from ..backends.executors import SerialExecutor

        if executor is not None and not isinstance(executor, SerialExecutor):
            raise ParameterError("executor", f"the {self.name} profile runs in this process")

    # ------------------------------------------------------------------ capability "fixed-members"
    def exposures(self, params: Any) -> Exposures:
        """The trained-once members one record can change, as ((count, member privacy), …): one pair
        is ``count`` members of one guarantee (composed exactly), several are composed together.

        Raises:
            ParameterError: naming ``member_randomness``, the model has no ``"fixed-members"`` capability.
        """
        self.require("fixed-members", "member_randomness")
        raise NotImplementedError  # a model declaring the capability overrides this

    def fresh_only(self, params: Any) -> str | None:
        """Who can be accounted only per query, with fresh randomness (members with no privacy of
        their own to post-process, whose answers are randomised by DaRRM's coins alone), for the
        session's messages; None where the caller must say whether the members are fresh or fixed."""
        return None

    def fixed_members(self, params: Any) -> Hashable:
        """What identifies the trained members (two tables answered by the same fixed members have
        equal values); by default the exposures."""
        return repr(self.exposures(params))

    # ------------------------------------------------------------------ capability "cli"
    def params_from_cli(self, values: Mapping[str, Any], defaults: Mapping[str, Any]) -> Any:
        """Parameters from ``darrm solve``'s option values (argparse ``dest`` → value; None: not given),
        ``defaults`` the command line's own (K, m, eps, member_delta).

        Raises:
            ParameterError: naming the option, a missing or bad value; or no ``"cli"`` capability.
        """
        self.require("cli", "members")
        raise NotImplementedError  # a model declaring the capability overrides this

    # ------------------------------------------------------------------ tables
    def label_counts(self, params: Any) -> int:
        """How many counts one query's label reads: 1 (the vote count L) or G (one per group)."""
        return 1

    def counts(self, votes: object, params: Any) -> np.ndarray:
        """What γ reads of a (Q, K) 0/1 vote matrix: the Q vote counts L (:meth:`label_counts` per query).

        Raises:
            ParameterError: naming ``votes``.
        """
        from ..mechanism import vote_counts

        return vote_counts(votes, params.K)

    def check_counts(self, counts: object, params: Any) -> np.ndarray:
        """Q queries' counts, checked (:meth:`label_counts` per query).

        Raises:
            ParameterError: naming ``counts``.
        """
        from ..mechanism import check_counts

        return check_counts(counts, params.K)

    def release(self, counts: np.ndarray, gamma: np.ndarray, params: Any, rng: Any, secure: bool) -> np.ndarray:
        """Algorithm 1's labels for checked counts (the table certified by the caller)."""
        from ..mechanism import aggregate_counts

        return aggregate_counts(counts, gamma, rng, secure=secure)

    def table_text(self, table: GammaTable) -> str:
        """The table as text (``darrm solve``): γ(l) per vote count."""
        from ..report import gamma_table_text

        return gamma_table_text({table.family: table.gamma})

    def evaluation(self, table: GammaTable) -> tuple[dict[str, np.ndarray], dict[str, Any], str]:
        """(γ(0..K) tables whose i.i.d. error curves ``darrm evaluate`` shows, the plot's title
        arguments, the tables as text).

        Raises:
            ParameterError: naming ``file``: by default the model has no such curves.
        """
        raise ParameterError("file", "evaluate compares shared-data baselines; "
                                     f"not available for {self.name}-member tables")

    def __repr__(self) -> str:
        return f"<member model {self.name!r}>"
