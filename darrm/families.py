"""The γ families of Algorithm 1, registered once: name → closed form, its options, its reference.

Every other list of family names is derived from :data:`REGISTRY`: ``darrm.FAMILIES``, the
``family`` values a :class:`darrm.GammaTable` accepts (:func:`table_names`), ``darrm solve
--family``'s choices, the JSON vocabulary's names (:mod:`darrm.json_vocabulary`) and the table
of families in the docs (``docs/hooks/families_table.py``).  Adding a family is one
:func:`register` call in this file with its function, plus a test (docs/contributing.md); the
contract test (``tests/darrm/test_families.py``) then runs it: certified, symmetric, in [0, 1].

Importing this module imports no numerics (the command line's start-up reads the names); a
closed form imports :mod:`darrm.gamma` when it runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .errors import ParameterError

if TYPE_CHECKING:
    import numpy as np

    from .params import PrivacyParams

#: a closed form: γ(0..K) for shared-data parameters and the family's options (None: defaults)
ClosedForm = Callable[..., "np.ndarray"]

#: the ``family`` of a hand-made table (:class:`darrm.GammaTable`): no solver made it
CUSTOM = "custom"
#: the ``family`` of a table designed for a total budget (:mod:`darrm.budget.design`): not a γ
#: family of Algorithm 1 with its own (mε, δ) problem, so not in :data:`REGISTRY`
BUDGET = "budget"


@dataclass(frozen=True)
class Family:
    """One γ family.

    Attributes:
        name: the family's name (``darrm solve --family NAME``, ``GammaTable.family``).
        summary: one line for the docs and ``--help``.
        reference: where the paper defines it (its own numbering).
        options: keyword options of :attr:`closed_form` (``darrm.family_gamma(name, params, **options)``).
        closed_form: ``f(params, **options) -> γ`` for a closed form; None for the LP optimum.
        members: the member models it is defined for (:data:`darrm.models.MEMBER_MODELS` keys); None:
            every registered model (γ_opt: each model solves its own LP).
        applies: ``f(params) -> bool``: whether its paper result covers these shared-data
            parameters with the default options (the baselines ``darrm demo``/``evaluate`` show);
            None: always.
    """

    name: str
    summary: str
    reference: str
    options: tuple[str, ...] = ()
    closed_form: ClosedForm | None = None
    members: tuple[str, ...] | None = ("shared",)
    applies: Callable[[PrivacyParams], bool] | None = None

    def defined_for(self, model: str) -> bool:
        """Whether the family is defined for the member model called ``model`` (:attr:`members`)."""
        return self.members is None or model in self.members

    def applies_to(self, params: PrivacyParams) -> bool:
        """Whether the family applies to ``params`` with its default options (:attr:`applies`)."""
        return True if self.applies is None else bool(self.applies(params))

    def __post_init__(self) -> None:
        if not self.name.isidentifier() or self.name in (CUSTOM, BUDGET):
            raise ParameterError("name", f"a family's name must be an identifier other than {CUSTOM!r} and {BUDGET!r}, "
                                         f"got {self.name!r}")


#: every family, by name, in registration order
REGISTRY: dict[str, Family] = {}


def register(family: Family) -> Family:
    """Add ``family`` to :data:`REGISTRY` (once per name).

    Args:
        family: the family to add.

    Returns:
        ``family`` itself.

    Raises:
        ParameterError: a family of that name is already registered.
    """
    if family.name in REGISTRY:
        raise ParameterError("name", f"the γ family {family.name!r} is already registered")
    REGISTRY[family.name] = family
    return family


def names() -> tuple[str, ...]:
    """The registered families' names, in registration order."""
    return tuple(REGISTRY)


def table_names() -> tuple[str, ...]:
    """What ``GammaTable.family`` may be: every family, :data:`CUSTOM` and :data:`BUDGET`."""
    return (*REGISTRY, CUSTOM, BUDGET)


def get(name: object) -> Family:
    """The family called ``name``.

    Raises:
        ParameterError: naming ``family``, when no family has that name.
    """
    fam = REGISTRY.get(name) if isinstance(name, str) else None
    if fam is None:
        raise ParameterError("family", f"must be one of {', '.join(REGISTRY)}; got {name!r}")
    return fam


# ----------------------------------------------------------------------------- the closed forms
def _subsample_size(family: str, params: PrivacyParams, size: int | None) -> int:
    from .validation import count

    m = params.m if size is None else count("size", size, 1, params.K)
    if float(m) != int(m):
        raise ParameterError("m", f"must be an integer for the {family} family, got {m}")
    return int(m)


def _sub(params: PrivacyParams, *, size: int | None = None) -> np.ndarray:
    from .gamma import gamma_sub

    return gamma_sub(params.K, _subsample_size("sub", params, size))


def _dsub(params: PrivacyParams, *, size: int | None = None) -> np.ndarray:
    from .gamma import gamma_dsub

    return gamma_dsub(params.K, _subsample_size("dsub", params, size))


def _const(params: PrivacyParams, *, tau: float | None = None, lam: float | None = None) -> np.ndarray:
    from .gamma import gamma_const

    return gamma_const(params, tau=tau, lam=lam)


register(Family("opt", "γ_opt: the optimum of the LP over corner multisets, certified",
                "Section 5 (the LP over Lemma 5.1's corner multisets)", members=None))
def _integer_m(params: PrivacyParams) -> bool:
    return float(params.m).is_integer()


def _pure_integer_m(params: PrivacyParams) -> bool:
    return _integer_m(params) and params.member_delta == 0 and params.delta == 0


register(Family("sub", "γ_Sub: the majority of a random subsample of m members",
                "Lemma 3.1", options=("size",), closed_form=_sub, applies=_integer_m))
register(Family("dsub", "double subsampling: γ_Sub with 2m − 1 members (γ ≡ 1 when m ≥ (K+1)/2)",
                "Theorem 4.1 (pure DP, i.i.d. members)", options=("size",), closed_form=_dsub,
                applies=_pure_integer_m))
register(Family("const", "γ_const ≡ p_const: randomised response (Algorithm 2) as a DaRRM instance",
                "Lemma A.1", options=("tau", "lam"), closed_form=_const))



def _threshold(params: PrivacyParams, *, scale: float | None = None) -> np.ndarray:
    """γ of the Gaussian threshold (:func:`darrm.gamma.gamma_threshold`).  Default ``scale``: the s
    with max_l γ(l) = γ(K) = t := tanh(mε/2)·(1 − 1e-12), which is mε-DP whatever the members do.

    *Proof.*  Pr[A = o] = ½ + ½·Σ_l α_l γ(l)·(±1) lies in [(1 − t)/2, (1 + t)/2] for every vote law α
    when γ ≤ t, so Pr[A(D) = o]/Pr[A(D′) = o] ≤ (1 + t)/(1 − t) ≤ e^{mε} (RR's ratio at t = tanh(mε/2)).
    The certificate then checks the table like any closed form.  ∎"""
    import math

    from scipy.special import erfinv

    from .gamma import gamma_threshold

    if scale is None:
        t = math.tanh(0.5 * params.m * params.eps) * (1.0 - 1e-12)
        scale = 0.5 * params.K / (math.sqrt(2.0) * float(erfinv(t)))
    return gamma_threshold(params.K, scale)


register(Family("threshold", "the Gaussian threshold (binary GNMax): γ(l) = 2Φ(|l − K/2|/s) − 1",
                "Papernot et al. 2018 (GNMax, two classes) as a DaRRM γ (darrm.gamma.gamma_threshold)",
                options=("scale",), closed_form=_threshold))
