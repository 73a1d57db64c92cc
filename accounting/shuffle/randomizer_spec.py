"""A local randomizer named in text (``darrm shuffle --randomizer``), built for any ε0.

Grammar: ``generic`` (an arbitrary ε0-LDP randomizer), ``rr:K`` (K-ary randomized response;
``rr:2`` is binary RR), ``rappor:K`` (basic one-time RAPPOR), ``oue:K`` (optimised unary
encoding), ``hadamard:K`` (Hadamard response), each over K inputs, optionally followed by
``@RATE`` for Poisson subsampling with participation probability RATE in (0, 1]
(``rr:2@0.1``).  The local ε0 is not part of the name: :meth:`RandomizerSpec.build` takes it,
so one spec serves every ε0 of a table, a calibration search or a composition.
"""

from __future__ import annotations

from dataclasses import dataclass

from darrm import validation as v
from darrm.errors import ParameterError

from .common_randomizers import MAX_OUTPUTS, hadamard_response, oue, poisson_subsampled, rappor
from .randomizers import GenericLDP, RandomizedResponse, Randomizer

#: the family names and how many inputs each accepts at most
FAMILIES: dict[str, int] = {"rr": 1 << 20, "rappor": 16, "oue": 16, "hadamard": MAX_OUTPUTS - 1}
GRAMMAR = "generic | rr:K | rappor:K | oue:K | hadamard:K, optionally @RATE (e.g. rr:2, oue:8@0.1)"


@dataclass(frozen=True)
class RandomizerSpec:
    """A randomizer family with its number of inputs and sampling rate, without ε0.

    Attributes:
        family: "generic" or a key of :data:`FAMILIES`.
        k: the number of inputs (None for "generic").
        rate: Poisson participation probability in (0, 1] (1: every user reports).
    """

    family: str
    k: int | None = None
    rate: float = 1.0

    def __post_init__(self) -> None:
        v.choice("randomizer", self.family, ("generic", *FAMILIES))
        if self.family == "generic":
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
        return name if self.rate == 1.0 else f"{name}@{self.rate:g}"

    def build(self, eps0: float) -> Randomizer:
        """The randomizer with local budget ``eps0``.

        Args:
            eps0: the local ε0 (> 0).

        Returns:
            A :class:`GenericLDP`, :class:`RandomizedResponse` or finite randomizer.

        Raises:
            ParameterError: ``eps0`` out of range.
        """
        eps0 = v.epsilon("eps0", eps0)
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
    body, at, rate_text = text.strip().partition("@")
    family, colon, k_text = body.partition(":")
    try:
        rate = float(rate_text) if at else 1.0
        k = int(k_text) if colon else None
    except ValueError:
        raise ParameterError("randomizer", f"expected {GRAMMAR}, got {text!r}") from None
    if family in FAMILIES and k is None:
        raise ParameterError("randomizer", f"{family} needs its number of inputs, e.g. {family}:4")
    if family not in ("generic", *FAMILIES):
        raise ParameterError("randomizer", f"unknown randomizer {family!r}: expected {GRAMMAR}")
    return RandomizerSpec(family, k, rate)
