"""A local randomizer named in text (``darrm shuffle --randomizer``), built for any ε0.

Grammar: ``generic`` (an arbitrary ε0-LDP randomizer), ``rr:K`` (K-ary randomized response;
``rr:2`` is binary RR), ``rappor:K`` (basic one-time RAPPOR), ``oue:K`` (optimised unary
encoding), ``hadamard:K`` (Hadamard response), each over K inputs, optionally followed by
``@RATE`` for Poisson subsampling with participation probability RATE in (0, 1]
(``rr:2@0.1``).  The local ε0 is not part of the name: :meth:`RandomizerSpec.build` takes it,
so one spec serves every ε0 of a table, a calibration search or a composition.

Two kinds of protocol have their own bounds (:meth:`RandomizerSpec.build_protocol`, not
:meth:`~RandomizerSpec.build`): a specific family followed by ``+B`` (``rr:4+2``) is the
multi-message protocol in which every user also sends B messages uniform over the randomizer's
outputs (:func:`.multi_message.uniform_blankets`; ``rr:K+B`` is mixDUMP), and ``geo:K`` /
``grid:K`` are the clamped geometric mechanism on the line of K points / the K × K grid with the
ℓ1 metric, ε0 being the privacy per unit of distance (:mod:`.metric_ldp`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from darrm import validation as v
from darrm.errors import ParameterError

from .common_randomizers import MAX_OUTPUTS, hadamard_response, oue, poisson_subsampled, rappor
from .randomizers import FiniteRandomizer, GenericLDP, RandomizedResponse, Randomizer

if TYPE_CHECKING:
    from .metric_ldp import MetricRandomizer
    from .multi_message import MultiMessageProtocol

#: the family names and how many inputs each accepts at most
FAMILIES: dict[str, int] = {"rr": 1 << 20, "rappor": 16, "oue": 16, "hadamard": MAX_OUTPUTS - 1}
#: the metric families (ε0 per unit of distance) and their largest K (every pair is evaluated)
METRIC_FAMILIES: dict[str, int] = {"geo": 16, "grid": 4}
#: the most blanket messages per user ``+B`` accepts
MAX_BLANKETS = 1000
GRAMMAR = ("generic | rr:K | rappor:K | oue:K | hadamard:K, optionally @RATE or +B blanket messages "
           "(e.g. rr:2, oue:8@0.1, rr:4+2) | geo:K | grid:K")


@dataclass(frozen=True)
class RandomizerSpec:
    """A randomizer family with its number of inputs and sampling rate, without ε0.

    Attributes:
        family: "generic", a key of :data:`FAMILIES` or of :data:`METRIC_FAMILIES`.
        k: the number of inputs (None for "generic"; points per axis for "geo"/"grid").
        rate: Poisson participation probability in (0, 1] (1: every user reports).
        blankets: blanket messages per user (0: a single-message protocol).
    """

    family: str
    k: int | None = None
    rate: float = 1.0
    blankets: int = 0

    def __post_init__(self) -> None:
        v.choice("randomizer", self.family, ("generic", *FAMILIES, *METRIC_FAMILIES))
        object.__setattr__(self, "blankets", v.count("randomizer", self.blankets, minimum=0, maximum=MAX_BLANKETS))
        if self.blankets and (self.family not in FAMILIES or self.rate != 1.0):
            raise ParameterError("randomizer", "+B blanket messages need a specific single-message family "
                                 "(rr, rappor, oue, hadamard) without @RATE")
        if self.family in METRIC_FAMILIES:
            if self.rate != 1.0:
                raise ParameterError("randomizer", f"{self.family} takes no @RATE")
            object.__setattr__(self, "k", v.count("randomizer", self.k, minimum=2,
                                                  maximum=METRIC_FAMILIES[self.family]))
        elif self.family == "generic":
            if self.k is not None:
                raise ParameterError("randomizer", "a generic eps0-LDP randomizer has no number of inputs")
            if self.rate != 1.0:
                raise ParameterError("randomizer", "Poisson subsampling needs a specific randomizer, "
                                     "not a generic eps0-LDP one")
        else:
            object.__setattr__(self, "k", v.count("randomizer", self.k, minimum=2, maximum=FAMILIES[self.family]))
        object.__setattr__(self, "rate", v.sample_rate("randomizer", self.rate))

    @property
    def label(self) -> str:
        """The spec written back in the grammar (``rr:2@0.1``)."""
        name = self.family if self.k is None else f"{self.family}:{self.k}"
        name = name if self.rate == 1.0 else f"{name}@{self.rate:g}"
        return f"{name}+{self.blankets}" if self.blankets else name

    @property
    def own_bounds(self) -> bool:
        """True for a multi-message or metric spec: :meth:`build_protocol` builds it and its bounds are
        :mod:`.protocol_bounds`' (not the single-message methods')."""
        return bool(self.blankets) or self.family in METRIC_FAMILIES

    def build_protocol(self, eps0: float) -> "MultiMessageProtocol | MetricRandomizer":
        """The multi-message protocol or metric randomizer of a spec with :attr:`own_bounds`.

        Args:
            eps0: the input-dependent message's ε0, or the metric's ε per unit of distance (> 0).

        Returns:
            A :class:`~.multi_message.MultiMessageProtocol` or :class:`~.metric_ldp.MetricRandomizer`.

        Raises:
            ParameterError: ``eps0`` out of range, or a single-message spec (use :meth:`build`).
        """
        from .metric_ldp import geometric_grid, geometric_line
        from .multi_message import uniform_blankets

        eps0 = v.epsilon("eps0", eps0)
        if not self.own_bounds:
            raise ParameterError("randomizer", f"{self.label} is a single-message randomizer: use build()")
        assert self.k is not None
        if self.family == "geo":
            return geometric_line(self.k, eps0)
        if self.family == "grid":
            return geometric_grid(self.k, self.k, eps0)
        single = RandomizerSpec(self.family, self.k).build(eps0)
        assert isinstance(single, (FiniteRandomizer, RandomizedResponse))
        return uniform_blankets(single, self.blankets)

    def build(self, eps0: float) -> Randomizer:
        """The randomizer with local budget ``eps0``.

        Args:
            eps0: the local ε0 (> 0).

        Returns:
            A :class:`GenericLDP`, :class:`RandomizedResponse` or finite randomizer.

        Raises:
            ParameterError: ``eps0`` out of range, or a multi-message or metric spec (those are
                built by :meth:`build_protocol`).
        """
        eps0 = v.epsilon("eps0", eps0)
        if self.own_bounds:
            raise ParameterError("randomizer", f"{self.label} is a multi-message or metric protocol with its own "
                                 "bounds (darrm shuffle --eps0 ... prints them); rounds, --target-eps and --plot "
                                 "take single-message randomizers only")
        if self.family == "generic":
            return GenericLDP(eps0)
        assert self.k is not None
        r: Randomizer
        if self.family == "rr":
            r = RandomizedResponse(eps0, self.k)
        else:
            r = {"rappor": rappor, "oue": oue, "hadamard": hadamard_response}[self.family](self.k, eps0)
        return r if self.rate == 1.0 else poisson_subsampled(r, self.rate)


def parse_randomizer(text: str) -> RandomizerSpec:
    """Read a :class:`RandomizerSpec` from its text (module docstring's grammar).

    Args:
        text: e.g. ``"generic"``, ``"rr:10"``, ``"oue:8@0.05"``.

    Returns:
        The spec.

    Raises:
        ParameterError: (naming ``randomizer``) text outside the grammar, an unknown family, a
            number of inputs or a rate out of range.
    """
    if not isinstance(text, str) or not text.strip():
        raise ParameterError("randomizer", f"expected {GRAMMAR}, got {text!r}")
    head, plus, blankets_text = text.strip().partition("+")
    body, at, rate_text = head.partition("@")
    family, colon, k_text = body.partition(":")
    try:
        rate = float(rate_text) if at else 1.0
        k = int(k_text) if colon else None
        blankets = int(blankets_text) if plus else 0
    except ValueError:
        raise ParameterError("randomizer", f"expected {GRAMMAR}, got {text!r}") from None
    if plus and blankets < 1:
        raise ParameterError("randomizer", f"+B needs B >= 1 blanket messages, got {text!r}")
    if (family in FAMILIES or family in METRIC_FAMILIES) and k is None:
        raise ParameterError("randomizer", f"{family} needs its number of inputs, e.g. {family}:4")
    if family not in ("generic", *FAMILIES, *METRIC_FAMILIES):
        raise ParameterError("randomizer", f"unknown randomizer {family!r}: expected {GRAMMAR}")
    return RandomizerSpec(family, k, rate, blankets)
