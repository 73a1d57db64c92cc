"""Priors over the mechanisms' probabilities (p_1..p_K) for the γ_opt objective.

The expected error of DaRRM_γ is E_T[|Pr[A = 1] − Pr[majority = 1]|] (Section 5).  For one
vector p, Pr[majority = 1] − Pr[A = 1] = ½ Σ_{l≥mid} (α_l − α_{K−l})·(1 − γ(l)) for a symmetric γ
(α = PB(p)), so the LP objective (Eq. 201) is linear in γ with the *margins*

    d_l = E_T[α_l − α_{K−l}]   (l = mid..K),

and equals the expected error exactly when α_l ≥ α_{K−l} for every l ≥ mid under the prior (the
paper's p ∈ [½, 1] setting, Eq. 202).  A prior enters only through :meth:`Prior.expected_margins`.

* Independent p_i (:class:`IIDPrior`, :class:`IndependentPrior`, :class:`PaperMCPrior`): α_l is
  multilinear in (p_1..p_K), so E_T[α] is exactly the Poisson-binomial pmf at the means (the
  paper's Monte-Carlo grid estimator, Algorithm 5 of Appendix C.2.2, averages to
  Binomial(K, 0.745)).  Its margins are used as they are; a prior whose margins are negative
  somewhere (means below ½: the signed objective would reward noise) or identically 0 (means
  ½: every γ has the same signed objective) is refused, naming ``prior``.
* One common p for all members (:class:`BetaPrior`, :class:`DensityPrior`): for that p the
  sign of α_l − α_{K−l} (l ≥ mid) is the sign of p − ½, so the expected error is the objective
  with the *folded* margins d_l = E_T[sign(p − ½)·(α_l − α_{K−l})] ≥ 0 (equivalently, the prior
  folded onto [½, 1] by p ↦ max(p, 1 − p)).  A prior symmetric about ½, Beta(½, ½) say, then
  gets its true expected error instead of a signed objective that vanishes for every γ.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .errors import ParameterError, ParameterTypeError
from .numerics.binomial import binomial_pmf
from .numerics.poisson_binomial import pmf
from .validation import count, function, half_open_unit, instance, positive, unit

#: a margin below −MARGIN_TOL (or every |margin| at most MARGIN_TOL) makes an independent prior's
#: signed objective no expected error; float64 rounding of the pmfs is ~1e-16
MARGIN_TOL = 1e-12


def margins_of(pmf_: np.ndarray) -> np.ndarray:
    """d_l = α_l − α_{K−l} for l = mid..K of a pmf (length K+1)."""
    a = np.asarray(pmf_, dtype=np.float64)
    K = a.shape[0] - 1
    mid = (K + 1) // 2
    return a[mid:] - a[: K + 1 - mid][::-1]


class Prior(ABC):
    """A prior over the members' vote probabilities, for the γ_opt objective (Section 5).

    A prior implements :meth:`expected_pmf`, :meth:`to_dict` and :meth:`example`;
    :meth:`expected_margins` (the LP's margins), :meth:`from_spec` and :meth:`check_K` have
    defaults.  Decorated with :func:`register_prior`, it is known by its :attr:`kind` to
    ``--prior`` (:func:`parse_prior`), the docs and the contract test
    (``tests/darrm/test_prior_registry.py``): one class in one file (docs/contributing.md).
    """

    #: the prior's name: ``to_dict()["kind"]`` and the key of :data:`PRIORS`
    kind: ClassVar[str] = ""
    #: its command-line spelling (``--prior SPEC``), None when it cannot be written on a command line
    cli: ClassVar[str | None] = None

    @classmethod
    @abstractmethod
    def example(cls) -> "Prior":
        """A typical instance (the contract test runs it).

        Returns:
            An instance of this kind of prior.
        """

    @classmethod
    def from_spec(cls, values: list[str]) -> "Prior":
        """The prior ``--prior NAME:V1,V2,…`` describes (``values`` are the V's).

        Args:
            values: the V's, as the command line spells them.

        Returns:
            The prior, validated by its constructor.

        Raises:
            ParameterError: naming ``prior``, when this kind cannot be given on a command line or
                the values do not fit it.
        """
        raise ParameterError("prior", f"a {cls.kind} prior cannot be given on the command line")

    @abstractmethod
    def expected_pmf(self, K: int) -> np.ndarray:
        """E_T[α]: the expected Poisson-binomial pmf of the vote count L under the prior.

        Args:
            K: the number of members.

        Returns:
            The pmf of L over 0..K (length K+1).
        """

    @abstractmethod
    def to_dict(self) -> dict:
        """A JSON-ready description (``kind`` and parameters), stored in γ files.

        Returns:
            The description; :meth:`from_dict` rebuilds the prior from it.
        """

    @classmethod
    def from_dict(cls, d: dict) -> "Prior":
        """The prior :meth:`to_dict` described: ``cls(**fields)`` without ``kind`` (the default
        when :meth:`to_dict` lists the constructor's fields, as every prior here but
        :class:`DensityPrior` does).

        Args:
            d: a :meth:`to_dict` description of this kind.

        Returns:
            The prior, validated by its constructor.

        Raises:
            ParameterError: naming ``prior``, when ``d`` is not such a description.
        """
        fields = {k: v for k, v in d.items() if k != "kind"}
        try:
            return cls(**fields)
        except TypeError as exc:
            raise ParameterError("prior", f"{d!r} is not a {cls.kind} prior's description ({exc})") from None

    def expected_margins(self, K: int) -> np.ndarray:
        """The LP's margins d_l (l = mid..K): the expected error of γ is ½ Σ d_l (1 − γ(l)).

        Default (independent p_i): d_l = E_T[α_l − α_{K−l}] from :meth:`expected_pmf`.

        Args:
            K: the number of members.

        Returns:
            The margins d_mid..d_K.

        Raises:
            ParameterError: naming ``prior``, when a margin is below −:data:`MARGIN_TOL` (the
                signed objective would reward noise) or all are within :data:`MARGIN_TOL` of 0
                (every γ has the same objective): the objective would not be the expected error.
        """
        d = margins_of(self.expected_pmf(K))
        if d.size and float(np.max(np.abs(d))) <= MARGIN_TOL:
            raise ParameterError("prior", f"{self.to_dict()} is symmetric about ½: its signed objective is 0 for "
                                          "every γ, so it cannot choose one; give the members' probability of "
                                          "voting for the label they usually vote for (means above ½), or a "
                                          "prior over one common p (beta:A,B), which is folded onto [½, 1]")
        if d.size and float(np.min(d)) < -MARGIN_TOL:
            raise ParameterError("prior", f"{self.to_dict()} has means below ½: its signed objective rewards noise "
                                          "and is not the expected error; name the classes so that the members "
                                          "vote 1 more often than not (means ≥ ½; the error is symmetric, "
                                          "E(p) = E(1 − p))")
        return d

    def check_K(self, K: int) -> None:
        """Refuse a prior that cannot describe K members, before any work is done with it (every K by default).

        Args:
            K: the number of members.

        Raises:
            ParameterError: naming ``prior``, when this prior cannot describe K members.
        """
        return None


#: every prior, registered once by :func:`register_prior`: kind → class
PRIORS: dict[str, type[Prior]] = {}


def register_prior(cls: type[Prior]) -> type[Prior]:
    """Class decorator: add a :class:`Prior` subclass to :data:`PRIORS` under its ``kind``.

    Raises:
        ParameterError: no ``kind``, or a kind or command-line name already registered.
    """
    if not cls.kind:
        raise ParameterError("kind", f"{cls.__name__} must set the class attribute kind")
    taken = {c.cli for c in PRIORS.values() if c.cli}
    if cls.kind in PRIORS or (cls.cli is not None and cls.cli in taken):
        raise ParameterError("kind", f"a prior named {cls.kind!r} (or {cls.cli!r}) is already registered")
    PRIORS[cls.kind] = cls
    return cls


@register_prior
@dataclass(frozen=True)
class IIDPrior(Prior):
    """p_i i.i.d. with mean μ; E[α] = Binomial(K, μ).  μ = 0.75 is the paper's uniform
    prior on [0.5, 1] (Eq. 202); μ = 0.745 its τ = 50 left-endpoint grid.

    Attributes:
        mean: μ, the common mean of the p_i, in [0, 1].
    """

    kind: ClassVar[str] = "iid"
    cli: ClassVar[str | None] = "iid:MU"


    mean: float = 0.75

    def __post_init__(self) -> None:
        object.__setattr__(self, "mean", unit("prior.mean", self.mean))

    def expected_pmf(self, K: int) -> np.ndarray:
        """E_T[α] under this prior: Binomial(K, μ) (see :meth:`Prior.expected_pmf`).

        Args:
            K: the number of members.

        Returns:
            The pmf of L over 0..K (length K+1).
        """
        return binomial_pmf(K, self.mean)

    @classmethod
    def example(cls) -> "IIDPrior":
        """The paper's prior: mean 0.75 (uniform on [½, 1]).

        Returns:
            ``IIDPrior(0.75)``.
        """
        return cls(0.75)

    @classmethod
    def from_spec(cls, values: list[str]) -> "IIDPrior":
        """``iid`` (mean 0.75) or ``iid:MU`` (see :meth:`Prior.from_spec`).

        Args:
            values: none, or the mean μ.

        Returns:
            The prior.

        Raises:
            ParameterError: naming ``prior``, for more than one value; a mean outside [0, 1].
        """
        if len(values) > 1:
            raise ParameterError("prior", f"iid takes at most 1 value(s), got {len(values)}")
        return cls(float(values[0]) if values else 0.75)

    def to_dict(self) -> dict:
        """A JSON-ready description, stored in γ files (see :meth:`Prior.to_dict`).

        Returns:
            ``{"kind": "iid", "mean": μ}``.
        """
        return {"kind": self.kind, "mean": self.mean}


@register_prior
@dataclass(frozen=True)
class IndependentPrior(Prior):
    """Independent p_i with per-mechanism means μ_i; E[α] = PoissonBinomial(μ_1..μ_K).

    Attributes:
        means: μ_1..μ_K, one per mechanism.
    """

    kind: ClassVar[str] = "independent"
    cli: ClassVar[str | None] = "means:M1,...,MK"


    means: tuple[float, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if isinstance(self.means, (str, bytes)) or not hasattr(self.means, "__iter__"):
            raise ParameterTypeError("prior.means", f"must be a sequence of probabilities, got {self.means!r}")
        ms = tuple(unit("prior.means", v) for v in self.means)
        if not ms:
            raise ParameterError("prior.means", "needs one mean per mechanism")
        object.__setattr__(self, "means", ms)

    def check_K(self, K: int) -> None:
        """One mean per member: exactly K of them (see :meth:`Prior.check_K`).

        Args:
            K: the number of members.

        Raises:
            ParameterError: naming ``prior``, when there are not K means.
        """
        if len(self.means) != K:
            raise ParameterError("prior", f"means:M1,..,MK needs one mean per member, K={K} of them; "
                                          f"got {len(self.means)}")

    def expected_pmf(self, K: int) -> np.ndarray:
        """E_T[α] under this prior: the Poisson-binomial pmf of the means (see :meth:`Prior.expected_pmf`).

        Args:
            K: the number of members (the number of means).

        Returns:
            The pmf of L over 0..K (length K+1).

        Raises:
            ParameterError: naming ``prior``, when there are not K means.
        """
        self.check_K(K)
        return pmf(np.array(self.means))

    @classmethod
    def example(cls) -> "IndependentPrior":
        """Seven members of rising accuracy.

        Returns:
            The prior with means 0.55 … 0.9.
        """
        return cls((0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.9))

    @classmethod
    def from_spec(cls, values: list[str]) -> "IndependentPrior":
        """``means:M1,...,MK`` (see :meth:`Prior.from_spec`).

        Args:
            values: the K means.

        Returns:
            The prior.

        Raises:
            ParameterError: naming ``prior.means``, when there is no mean or one is outside [0, 1].
        """
        return cls(tuple(float(v) for v in values))

    def to_dict(self) -> dict:
        """A JSON-ready description, stored in γ files (see :meth:`Prior.to_dict`).

        Returns:
            ``{"kind": "independent", "means": [...]}``.
        """
        return {"kind": self.kind, "means": list(self.means)}


@register_prior
@dataclass(frozen=True)
class BetaPrior(Prior):
    """Perfectly correlated mechanisms: p_1 = … = p_K = p with p ~ Beta(a, b);
    E[α] is the beta-binomial pmf (exact).

    Attributes:
        a: the Beta distribution's first shape (> 0).
        b: its second shape (> 0).
    """

    kind: ClassVar[str] = "beta"
    cli: ClassVar[str | None] = "beta:A,B"


    a: float = 3.0
    b: float = 1.0

    def __post_init__(self) -> None:
        for n in ("a", "b"):
            object.__setattr__(self, n, positive(f"prior.{n}", getattr(self, n)))

    def expected_pmf(self, K: int) -> np.ndarray:
        """E_T[α] under this prior: the beta-binomial pmf (see :meth:`Prior.expected_pmf`).

        Args:
            K: the number of members.

        Returns:
            The pmf of L over 0..K (length K+1).
        """
        from scipy import stats  # scipy.stats costs ~0.3 s to import: only where it is used

        return stats.betabinom.pmf(np.arange(K + 1), K, self.a, self.b)

    def expected_margins(self, K: int) -> np.ndarray:
        """Folded margins E_T[sign(p − ½)(α_l − α_{K−l})] (module docstring), exact.

        With E[α_l] the beta-binomial pmf, E[α_l·1{p < ½}] = E[α_l]·I_½(a + l, b + K − l), the
        regularised incomplete beta of the posterior Beta(a + l, b + K − l).

        Args:
            K: the number of members.

        Returns:
            The margins d_mid..d_K.
        """
        from scipy import special

        ls = np.arange(K + 1)
        below = special.betainc(self.a + ls, self.b + K - ls, 0.5)
        return margins_of(self.expected_pmf(K) * (1.0 - 2.0 * below))

    @classmethod
    def example(cls) -> "BetaPrior":
        """Beta(½, ½): symmetric about ½, folded onto [½, 1] (module docstring).

        Returns:
            ``BetaPrior(0.5, 0.5)``.
        """
        return cls(0.5, 0.5)

    @classmethod
    def from_spec(cls, values: list[str]) -> "BetaPrior":
        """``beta:A,B`` (see :meth:`Prior.from_spec`).

        Args:
            values: the two shapes a and b.

        Returns:
            The prior.

        Raises:
            ParameterError: naming ``prior``, unless there are exactly two values; a shape ≤ 0.
        """
        if len(values) != 2:
            raise ParameterError("prior", "beta needs two parameters: beta:a,b")
        return cls(float(values[0]), float(values[1]))

    def to_dict(self) -> dict:
        """A JSON-ready description, stored in γ files (see :meth:`Prior.to_dict`).

        Returns:
            ``{"kind": "beta", "a": a, "b": b}``.
        """
        return {"kind": self.kind, "a": self.a, "b": self.b}


@register_prior
@dataclass(frozen=True)
class DensityPrior(Prior):
    """Perfectly correlated mechanisms with p drawn from a user density on [0, 1]
    (normalised here); E[α] = ∫ Binomial(K, p) π(p) dp by adaptive quadrature
    (scipy.integrate.quad_vec, absolute tolerance ``tol``).

    Attributes:
        density: π(p), a non-negative function on [0, 1] (normalised here).
        name: the name recorded with the table.
        tol: the quadrature's absolute tolerance (> 0).
    """

    kind: ClassVar[str] = "density"
    cli: ClassVar[str | None] = None


    density: Callable[[float], float] = field(compare=False)
    name: str = "density"
    tol: float = 1e-12

    def __post_init__(self) -> None:
        function("prior.density", self.density)
        instance("prior.name", self.name, str, "a string")
        object.__setattr__(self, "tol", positive("prior.tol", self.tol))

    def _integral(self, K: int, a: float, b: float) -> np.ndarray:
        """∫_a^b Binomial(K, p)·π(p) dp / ∫_0^1 π (adaptive quadrature, absolute tolerance ``tol``)."""
        def f(p: float) -> np.ndarray:
            d = float(self.density(p))
            if not math.isfinite(d) or d < 0:
                raise ParameterError("prior.density", f"must be finite and >= 0, got {d!r} at p={p}")
            return d * binomial_pmf(K, p)

        def g(p: float) -> float:
            return float(self.density(p))

        from scipy import integrate

        z, _ = integrate.quad(g, 0.0, 1.0, epsabs=self.tol, limit=200)
        if not (math.isfinite(z) and z > 0):
            raise ParameterError("prior.density", "must integrate to a positive finite mass on [0, 1]")
        v, _ = integrate.quad_vec(f, a, b, epsabs=self.tol, limit=200)
        return np.asarray(v) / z

    def expected_pmf(self, K: int) -> np.ndarray:
        """E_T[α] under this prior: ∫ Binomial(K, p) π(p) dp (see :meth:`Prior.expected_pmf`).

        Args:
            K: the number of members.

        Returns:
            The pmf of L over 0..K (length K+1).

        Raises:
            ParameterError: naming ``prior.density``, when the density is negative or not finite
                somewhere, or does not integrate to a positive finite mass.
        """
        return self._integral(K, 0.0, 1.0)

    def expected_margins(self, K: int) -> np.ndarray:
        """Folded margins E_T[sign(p − ½)(α_l − α_{K−l})] (module docstring).

        The integrals over [½, 1] minus those over [0, ½].

        Args:
            K: the number of members.

        Returns:
            The margins d_mid..d_K.

        Raises:
            ParameterError: naming ``prior.density``, as :meth:`expected_pmf`.
        """
        return margins_of(self._integral(K, 0.5, 1.0) - self._integral(K, 0.0, 0.5))

    @classmethod
    def example(cls) -> "DensityPrior":
        """The density 6p(1 − p) (Beta(2, 2)) on [0, 1].

        Returns:
            The prior, named ``beta(2,2)``.
        """
        return cls(lambda p: 6.0 * p * (1.0 - p), name="beta(2,2)", tol=1e-10)

    def to_dict(self) -> dict:
        """A JSON-ready description, stored in γ files (see :meth:`Prior.to_dict`).

        Returns:
            ``{"kind": "density", "name": name}``: the density itself is code and is not stored.
        """
        return {"kind": self.kind, "name": self.name}

    @classmethod
    def from_dict(cls, d: dict) -> "DensityPrior":
        """Never: a density is code, and its description keeps only its name.

        Args:
            d: a :meth:`to_dict` description.

        Returns:
            Nothing: it always raises.

        Raises:
            ParameterError: always, naming ``prior``.
        """
        raise ParameterError("prior", f"a density prior ({d.get('name')!r}) cannot be rebuilt from its "
                                      "description: its density is code")


@register_prior
@dataclass(frozen=True)
class PaperMCPrior(Prior):
    """The paper's Monte-Carlo grid objective (Algorithm 5, Appendix C.2.2), for reproduction.

    Each of T draws samples K coordinates i.i.d. uniformly from the τ left endpoints of
    [p_lower, 1) (as the reference code does) and averages the Poisson-binomial pmfs.
    Its expectation is Binomial(K, mean of the grid): 0.745 for p_lower = 0.5, τ = 50.
    The positive constant P·w/N of Algorithm 5 does not change the argmin and is omitted.

    Attributes:
        p_lower: the left end of the grid, in [0, 1).
        tau: the number τ of grid points.
        T: the number of Monte-Carlo draws.
        seed: the draws' seed.
    """

    kind: ClassVar[str] = "paper-mc"
    cli: ClassVar[str | None] = "paper-mc[:P_LOWER,TAU,T,SEED]"


    p_lower: float = 0.5
    tau: int = 50
    T: int = 10000
    seed: int = 0

    #: largest grid and number of draws (each draw is a K-point Poisson-binomial pmf)
    MAX_GRID: ClassVar[int] = 10**6
    MAX_DRAWS: ClassVar[int] = 10**6

    def __post_init__(self) -> None:
        object.__setattr__(self, "p_lower", half_open_unit("prior.p_lower", self.p_lower))
        object.__setattr__(self, "tau", count("prior.tau", self.tau, maximum=self.MAX_GRID))
        object.__setattr__(self, "T", count("prior.T", self.T, maximum=self.MAX_DRAWS))
        object.__setattr__(self, "seed", count("prior.seed", self.seed, minimum=0))

    def grid(self) -> np.ndarray:
        """The τ left endpoints of [p_lower, 1] the Monte-Carlo draws p_i from.

        Returns:
            The grid (length τ).
        """
        return np.linspace(self.p_lower, 1.0, self.tau + 1)[:-1]

    def expected_pmf(self, K: int) -> np.ndarray:
        """E_T[α] under this prior: the mean of T Monte-Carlo Poisson-binomial pmfs (see :meth:`Prior.expected_pmf`).

        Args:
            K: the number of members.

        Returns:
            The pmf of L over 0..K (length K+1).
        """
        rng = np.random.default_rng(self.seed)
        s = rng.choice(self.grid(), size=(self.T, K), replace=True)
        return pmf(s).mean(axis=0)

    @classmethod
    def example(cls) -> "PaperMCPrior":
        """The paper's grid on [½, 1) with fewer draws.

        Returns:
            ``PaperMCPrior(T=500)``.
        """
        return cls(T=500)

    @classmethod
    def from_spec(cls, values: list[str]) -> "PaperMCPrior":
        """``paper-mc[:P_LOWER[,TAU[,T[,SEED]]]]``: trailing values keep their defaults.

        Args:
            values: up to four values: p_lower, τ, T, seed.

        Returns:
            The prior.

        Raises:
            ParameterError: naming ``prior``, for more than four values; a value out of range.
        """
        keys, convs = ("p_lower", "tau", "T", "seed"), (float, int, int, int)
        if len(values) > len(keys):
            raise ParameterError("prior", "paper-mc takes at most 4 parameters: paper-mc:P_LOWER,TAU,T,SEED")
        n = len(values)
        kw: dict[str, Any] = {key: conv(v) for key, conv, v in zip(keys[:n], convs[:n], values, strict=True)}
        return cls(**kw)

    def to_dict(self) -> dict:
        """A JSON-ready description, stored in γ files (see :meth:`Prior.to_dict`).

        Returns:
            ``{"kind": "paper-mc", "p_lower": …, "tau": …, "T": …, "seed": …}``.
        """
        return {"kind": self.kind, "p_lower": self.p_lower, "tau": self.tau, "T": self.T, "seed": self.seed}


def prior_from_dict(d: object) -> Prior:
    """The registered prior a γ file's ``prior`` field describes (:meth:`Prior.from_dict` of its kind).

    Args:
        d: a :meth:`Prior.to_dict` description (a dict with a registered ``kind``).

    Returns:
        The prior.

    Raises:
        ParameterError: naming ``prior``: not a dict, an unknown kind, fields that do not fit it,
            or a kind that cannot be rebuilt (:class:`DensityPrior`).
    """
    if not isinstance(d, dict):
        raise ParameterError("prior", f"must be a prior's description (a JSON object), got {type(d).__name__}")
    kind = d.get("kind")
    if not isinstance(kind, str) or kind not in PRIORS:
        raise ParameterError("prior", f"unknown prior kind {str(kind)[:40]!r} (known: {', '.join(sorted(PRIORS))})")
    return PRIORS[kind].from_dict(d)


def parse_prior(spec: str) -> Prior:
    """The prior a command line's ``--prior NAME[:V1,V2,…]`` names (:data:`PRIORS`' ``cli`` spellings).

    Args:
        spec: e.g. ``iid:0.75``, ``means:0.6,0.7,...``, ``beta:3,1``, ``paper-mc[:p_lower[,tau[,T[,seed]]]]``.

    Returns:
        The prior.

    Raises:
        ParameterError: naming ``prior``, for an unknown name or values that do not fit it.
    """
    kind, _, rest = spec.partition(":")
    vals = [v for v in rest.split(",") if v.strip()] if rest else []
    spellings = [c.cli for c in PRIORS.values() if c.cli]
    by_cli = {c.cli.split(":")[0].split("[")[0]: c for c in PRIORS.values() if c.cli}
    cls = by_cli.get(kind)
    if cls is None:
        raise ParameterError("prior", f"unknown prior {spec!r}; use {', '.join(spellings[:-1])} or {spellings[-1]}")
    if len(vals) != len(rest.split(",")) and rest:
        raise ParameterError("prior", f"empty value in {spec!r}")
    try:
        return cls.from_spec(vals)
    except ValueError as exc:
        if isinstance(exc, ParameterError):
            raise
        raise ParameterError("prior", f"cannot parse {spec!r}: {exc}") from None
