"""Solver options: one frozen object, defaults written once (the CLI reads them from here)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

from ..errors import ParameterError
from ..validation import choice, count, flag, positive, real

if TYPE_CHECKING:
    from .warm_start import WarmStart

@dataclass(frozen=True)
class SolveOptions:
    """How γ_opt is solved (every field has its one default here).

    Attributes:
        method: "auto" (by problem size), "full" (every LP row) or "cutting-planes" (shared data).
        max_rounds: constraint-generation round limit; None picks the member model's
            (:attr:`darrm.models.base.MemberModel.max_rounds`, listed by :func:`darrm.models.round_limits`).
        gap_tol: stop once the certified table is proven within this of the optimum (expected
            error units); a table is labelled optimal only if its final gap meets it.
        accept_gap: at the round limit, return the certified table with its proven gap instead
            of raising :class:`~darrm.errors.SolveError`.
        cuts_per_round: most-violated multisets added per round (grouped members' per-group
            form: per (K + 1)/2 LP variables, :func:`darrm.models.groups.solver.cuts_per_round`).
        stabilize: in-out separation λ in (0, 1], or "auto" (plain cuts until the violation rises).
        lp_backend: "highs" (incremental highspy model) or "cvxpy" (rebuilt every round).
        screen: between exhaustive sweeps, look for cuts first in the blocks of the corner space
            where the last ones were found (:class:`darrm.solver.cutting_planes.SweepOracle`); the
            exhaustive sweep still runs whenever the screen finds nothing, and alone proves bounds.
        max_memory: bytes the sweeps may use (None: the memory available when the solve starts); the
            default executor runs as many workers as fit (:func:`darrm.privacy.sweep.sweep_memory`),
            and a solve that does not fit even serially is refused before any work.
        warm_start: a :class:`~darrm.WarmStart` (a nearby solve's multisets: other m, ε, Δ or K):
            its rows, derived for this problem, are the first cuts of constraint generation
            (:mod:`darrm.solver.warm_start`); fewer rounds, the same certificate and gap (None: none).
    """

    method: str = "auto"
    max_rounds: int | None = None
    gap_tol: float = 1e-9
    accept_gap: bool = False
    cuts_per_round: int = 256
    stabilize: float | str = "auto"
    lp_backend: str = "highs"
    screen: bool = True
    max_memory: float | None = None
    warm_start: WarmStart | None = None

    def __post_init__(self) -> None:
        choice("method", self.method, ("auto", "full", "cutting-planes"))
        if self.max_rounds is not None:
            object.__setattr__(self, "max_rounds", count("max_rounds", self.max_rounds))
        positive("gap_tol", self.gap_tol)
        flag("accept_gap", self.accept_gap)
        object.__setattr__(self, "cuts_per_round", count("cuts_per_round", self.cuts_per_round))
        if self.stabilize != "auto":
            if isinstance(self.stabilize, str):
                raise ParameterError("stabilize", f"must be 'auto' or a number in (0, 1], got {self.stabilize!r}")
            real("stabilize", self.stabilize, 0.0, 1.0, closed="right")
        choice("lp_backend", self.lp_backend, ("highs", "cvxpy"))
        if self.max_memory is not None:
            positive("max_memory", self.max_memory)
        flag("screen", self.screen)
        if self.warm_start is not None:
            from .warm_start import WarmStart

            if not isinstance(self.warm_start, WarmStart):
                raise ParameterError("warm_start", "must be a darrm.WarmStart (WarmStart.from_checkpoint(path), "
                                                   f"WarmStart.from_table(table)) or None, got "
                                                   f"{type(self.warm_start).__name__}")

    def rounds(self, default: int) -> int:
        """The round limit.

        Args:
            default: the member model's limit (:attr:`darrm.models.base.MemberModel.max_rounds`).

        Returns:
            ``max_rounds`` when set, else ``default``.
        """
        return self.max_rounds if self.max_rounds is not None else default

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """The option names, in declaration order.

        Returns:
            The names of the fields.
        """
        return tuple(f.name for f in fields(cls))

    def first_changed(self, names: tuple[str, ...]) -> str | None:
        """The first of ``names`` whose value here is not the default, else None.

        A request check names it when the chosen method would ignore it.

        Args:
            names: option names.

        Returns:
            The first changed option's name, or None.
        """
        default = SolveOptions()
        return next((n for n in names if getattr(self, n) != getattr(default, n)), None)
