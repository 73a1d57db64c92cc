"""Issue 23: a prior symmetric about ½ (or below it) never yields a meaningless objective.

For one common p (BetaPrior, DensityPrior) the LP's margins are folded onto [½, 1], so the
objective *is* the expected error E_p[|Pr[A = 1] − Pr[majority = 1]|]; checked here against an
independent quadrature of that definition.  For independent p_i a prior whose signed objective is
identically 0 or rewards noise is refused, naming ``prior``.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

import darrm
from darrm import cli
from darrm.mechanism import output_weights
from darrm.solver.objective import expected_signed_error

K = 11
P = darrm.PrivacyParams(K=K, m=3, eps=0.1, member_delta=1e-5)


def true_error(gamma: np.ndarray, density) -> float:
    """E_p[|Pr[A=1] − Pr[maj=1]|] with all members at one p ~ density, by quadrature."""
    w = output_weights(gamma)  # Pr[A = 1 | L = l]
    ls = np.arange(K + 1)

    def err(p: float) -> float:
        a = stats.binom.pmf(ls, K, p)
        return abs(float(a @ w) - float(a[(K + 1) // 2:].sum())) * density(p)

    return sum(integrate.quad(err, lo, hi, limit=200, epsabs=1e-13)[0] for lo, hi in ((0, 0.5), (0.5, 1)))


@pytest.mark.parametrize("a,b", [(0.5, 0.5), (2.0, 2.0), (1.0, 3.0), (3.0, 1.0)])
def test_a_common_p_prior_gives_the_true_expected_error_whatever_its_symmetry(a, b):
    prior = darrm.BetaPrior(a, b)
    t = darrm.solve(P, prior, progress=False)
    dens = stats.beta(a, b).pdf
    for g in (t.gamma, np.zeros(K + 1), darrm.gamma_sub(K, 3)):
        assert expected_signed_error(g, prior) == pytest.approx(true_error(g, dens), abs=1e-9)
    # the optimum beats the closed forms under the same (true) error
    assert t.objective <= expected_signed_error(darrm.gamma_sub(K, 3), prior) + 1e-9


def test_symmetric_beta_prior_prints_its_true_expected_error(capsys):
    """Beta(½, ½) used to give γ ≡ 0 with "expected error under it: 0.000000"."""
    rc = cli.main(["--no-progress", "solve", "--K", "11", "--prior", "beta:0.5,0.5"])
    out = capsys.readouterr().out
    printed = float(out.split("expected error under it: ")[1].split()[0])
    t = darrm.solve(darrm.PrivacyParams(K=11, m=3, eps=0.1, member_delta=1e-5), darrm.BetaPrior(0.5, 0.5),
                    progress=False)
    assert rc == 0 and printed == pytest.approx(t.objective, abs=1e-6)
    assert printed == pytest.approx(true_error(t.gamma, stats.beta(0.5, 0.5).pdf), abs=1e-6) and printed > 0
    assert np.max(t.gamma) > 0.5  # no longer γ ≡ 0


def test_a_density_prior_is_folded_the_same_way():
    dens = stats.beta(2.0, 2.0).pdf
    prior = darrm.DensityPrior(lambda p: float(dens(p)), name="beta22")
    g = darrm.gamma_sub(K, 3)
    assert expected_signed_error(g, prior) == pytest.approx(true_error(g, dens), abs=1e-9)


@pytest.mark.parametrize("prior,what", [(darrm.IIDPrior(0.5), "symmetric about ½"),
                                        (darrm.IIDPrior(0.3), "means below ½"),
                                        (darrm.PaperMCPrior(p_lower=0.0, T=200), "means below ½")])
def test_an_independent_prior_whose_signed_objective_is_not_the_error_is_refused(prior, what):
    with pytest.raises(darrm.ParameterError, match=f"^prior: .*{what}"):
        darrm.solve(P, prior, progress=False)
