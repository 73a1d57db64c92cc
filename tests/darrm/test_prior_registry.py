"""The prior registry (darrm.prior.PRIORS): every registered prior honours the Prior contract, and
a prior added as one decorated class reaches ``--prior`` and the solver.

Contract, for every kind at K = 7, checked against definitions rather than the code under test:
E_T[α] is a pmf (≥ 0, sums to 1 within 1e-9), its margins are ≥ 0 and not all 0, ``to_dict``
carries the kind and is JSON, the command-line spelling parses back to the same kind, and the
objective of γ ≡ 0 equals ½ Σ margins (the definition of the expected error at γ = 0).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest

import darrm
from darrm import cli, prior
from darrm.solver.objective import expected_signed_error

K = 7


@pytest.mark.parametrize("kind", sorted(prior.PRIORS))
def test_every_registered_prior_honours_the_contract(kind):
    cls = prior.PRIORS[kind]
    p = cls.example()
    assert isinstance(p, darrm.Prior) and type(p) is cls
    pmf = np.asarray(p.expected_pmf(K))
    assert pmf.shape == (K + 1,) and np.all(pmf >= 0) and abs(pmf.sum() - 1) <= 1e-9
    d = np.asarray(p.expected_margins(K))
    assert d.shape == ((K + 1) // 2,) and np.all(d >= -1e-12) and d.max() > 0
    rec = p.to_dict()
    assert rec["kind"] == kind and json.loads(json.dumps(rec)) == rec
    assert expected_signed_error(np.zeros(K + 1), p) == pytest.approx(0.5 * d.sum(), abs=1e-12)
    if cls.cli is not None:
        name = cls.cli.split(":")[0].split("[")[0]
        assert type(prior.parse_prior(name + ":" + _spec_values(p))) is cls


def _spec_values(p: darrm.Prior) -> str:
    rec = {k: v for k, v in p.to_dict().items() if k != "kind"}
    flat = []
    for v in rec.values():
        flat.extend(v if isinstance(v, list) else [v])
    return ",".join(str(v) for v in flat)


def test_a_prior_without_an_example_cannot_be_created():
    """The interface is declared (an ABC): a subclass that forgets a method fails at construction."""
    class Incomplete(darrm.Prior):
        def expected_pmf(self, K):
            return np.ones(K + 1) / (K + 1)

    with pytest.raises(TypeError, match="abstract"):
        Incomplete()


@pytest.fixture
def point_prior():
    """A prior added the way a contributor adds one: one decorated class."""
    @prior.register_prior
    @dataclass(frozen=True)
    class PointPrior(darrm.Prior):
        """Every member votes 1 with the same known probability p."""

        p: float = 0.7
        kind: ClassVar[str] = "point"
        cli: ClassVar[str | None] = "point:P"

        def expected_pmf(self, K):
            return darrm.IIDPrior(self.p).expected_pmf(K)

        def to_dict(self):
            return {"kind": self.kind, "p": self.p}

        @classmethod
        def example(cls):
            return cls()

        @classmethod
        def from_spec(cls, values):
            return cls(float(values[0]))

    yield PointPrior
    del prior.PRIORS["point"]


def test_a_prior_registered_in_one_place_reaches_the_command_line(point_prior, capsys):
    assert cli.main(["--no-progress", "solve", "--K", "5", "--prior", "point:0.8", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["prior"] == {"kind": "point", "p": 0.8}


def test_the_registry_refuses_a_second_prior_of_one_kind():
    with pytest.raises(darrm.ParameterError, match="^kind: .*already registered"):
        prior.register_prior(darrm.IIDPrior)
