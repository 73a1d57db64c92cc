"""Use only certified tables: the certificate of a table, and labels from a certified table.

The certificate itself is chosen by the table's member model in :func:`darrm.api.certify`
(memoised by content, so loading, saving and labelling with one table sweeps it once).
:func:`aggregate` labels votes with a table only after its certificate passes, as the table's member
model reads them (:meth:`darrm.models.base.MemberModel.counts`: the vote count, or each group's).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .api import certify
from .errors import CertificationError
from .models import model_of
from .privacy.certify import Certificate
from .table import GammaTable
from .validation import instance


def certify_table(table: GammaTable, *, tol: float | None = None, progress: bool | None = None,
                  executor: Any = None) -> Certificate:
    """[darrm.certify][] of a table's γ for its own parameters.

    Args:
        table: the table.
        tol: a threshold ≤ 0 that may only make the verdict stricter (default 0).
        progress: show a progress bar on long sweeps (None: when stderr is a terminal).
        executor: where the certificate's sweep runs ([darrm.certify][]; None: chosen by size).

    Returns:
        The table's [Certificate][darrm.Certificate].
    """
    return certify(table.gamma, table.params, tol=tol, progress=progress, executor=executor)


def aggregate(votes: object, table: GammaTable, rng: np.random.Generator | int | None = None, *,
              secure: bool = False, executor: Any = None) -> np.ndarray:
    """Private majority labels from a *certified* table (:func:`darrm.mechanism.aggregate`).

    ``votes`` is a (Q, K) 0/1 matrix (one query: (1, K)); counts go through :func:`aggregate_counts`.
    For a per-group table (``GroupParams(gamma_form="per-group")``, ``WeightedShardParams``) the
    columns are the members in group order and γ reads each group's count (:mod:`darrm.models.groups.labels`).
    ``secure=True`` draws every coin from the OS CSPRNG (:mod:`darrm.secure_random`, exact
    Bernoulli(γ(L)) draws) and ignores ``rng``.  ``executor``: where the table's certificate runs
    (:func:`certify_table`; the labels are drawn here).

    Args:
        votes: a (Q, K) 0/1 matrix, one row per query.
        table: a γ table; its certificate is run again before any label is drawn.
        rng: a numpy Generator or a seed for the coins (None: fresh entropy).
        secure: draw the coins from the OS CSPRNG instead of ``rng``.
        executor: where the certificate runs (None: chosen by size).

    Returns:
        The Q released labels (0/1 integers).

    Raises:
        CertificationError: the table is not (ε, δ)-DP for its parameters.
        ParameterError: ``table`` is no GammaTable, or ``votes`` is not a (Q, K) 0/1 matrix.

    Examples:
        Three queries to five members: unanimous votes are released as they are (γ = 1 at
        L = 0 and L = K), a 3-to-2 vote is released with probability ½ + ½·γ(3):

        >>> import numpy as np
        >>> import darrm
        >>> table = darrm.solve(darrm.PrivacyParams(K=5, m=1, eps=0.5, member_delta=1e-5))
        >>> votes = np.array([[1, 1, 1, 1, 1], [0, 0, 0, 0, 0], [1, 0, 1, 0, 1]])
        >>> darrm.aggregate(votes, table, rng=0)
        array([1, 0, 1])
    """
    _check_certified(table, executor)
    model = model_of(table.params)
    return model.release(model.counts(votes, table.params), table.gamma, table.params, rng, secure)


def _check_certified(table: GammaTable, executor: Any = None) -> None:
    instance("table", table, GammaTable, "a darrm.GammaTable (darrm.mechanism.aggregate takes a raw γ array)")
    cert = certify_table(table, executor=executor)
    if not cert.certified:
        raise CertificationError(
            f"refusing to label with a table that is not private for its parameters "
            f"(certificate bound {cert.violation:.3e} > 0)"
        )


def aggregate_counts(counts: object, table: GammaTable, rng: np.random.Generator | int | None = None, *,
                     secure: bool = False, executor: Any = None) -> np.ndarray:
    """:func:`aggregate` from Q vote counts L ∈ [0, K] (a 1-D array) instead of a vote matrix; for a
    per-group table of grouped members, a (Q, G) matrix of each group's count l_g ∈ [0, K_g].

    Args:
        counts: Q vote counts, integers in [0, K].
        table: a γ table; its certificate is run again before any label is drawn.
        rng: a numpy Generator or a seed for the coins (None: fresh entropy).
        secure: draw the coins from the OS CSPRNG instead of ``rng``.
        executor: where the certificate runs (None: chosen by size).

    Returns:
        The Q released labels (0/1 integers).

    Raises:
        CertificationError: the table is not (ε, δ)-DP for its parameters.
        ParameterError: ``table`` is no GammaTable, or ``counts`` is not a 1-D array of counts in [0, K].
    """
    _check_certified(table, executor)
    model = model_of(table.params)
    return model.release(model.check_counts(counts, table.params), table.gamma, table.params, rng, secure)
