"""Every row of the budget-groups LP at once, sparse: the full LP when the rows are sparse.

**Why it is sparse.**  A configuration's law of the count vector is a product over the groups,
α(l) = Π_h A_h[n_h, l_h] (:mod:`darrm.models.weighted_shards`), so the matrix of every configuration's α
(configurations × cells, both in C order) is the Kronecker product A_1 ⊗ ⋯ ⊗ A_G of the groups'
law matrices, one of them the changed group's.  For non-private and (ε, Δ)-DP members the unchanged
members' ends are 0 and 1 (point masses: A_h is the identity) and the changed member moves one
group's count by at most one (two entries per row), so each configuration's row has at most four
non-zeros: Σ_g 4·C·K_g·Π_{h≠g}(K_h + 1) rows (≈ 1.8·10⁶ at K = 34 + 44 + 23) with ≈ 7·10⁶
non-zeros, which HiGHS solves in one go, while constraint generation over Π_g(K_g + 1)/2 dense
columns (18 900 there) holds every added row densely.  With randomised-response members the ends
are interior, A_h is dense and the product grows as Π_g(K_g + 1)²: :func:`row_nonzeros` tells the
solver which method fits (:data:`FULL_LP_NONZEROS`).

**The rows.**  For group g and a direction, D = A ⊗ … ⊗ A_g ⊗ … − e^{ε_g}·(A ⊗ … ⊗ A′_g ⊗ …) gives
Pr[A(D) = 1] − e^{ε_g}·Pr[A(D′) = 1] − δ_g = ½(1 − e^{ε_g}) − δ_g + ½ Σ_{u∈U} γ(u)·(D[u] − D[K⃗ − u])
for a table symmetric under the joint reflection (the flat C-order index of K⃗ − l is N − 1 minus
that of l), so the folded row is D[:, U] − D[:, mirror(U)] ≤ e^{ε_g} − 1 + 2δ_g (Lemma 3.4's form,
as :func:`darrm.models.groups.per_group.joint_folded_rows`), divided by that right-hand side; output 0 is
its negative and the other direction swaps A_g and A′_g.  These are exactly the rows of
:func:`darrm.models.weighted_shards.certificate.constraint_row` (tested), less those no point of the box
0 ≤ γ ≤ 1 can violate (Σ of a row's positive entries ≤ 1: :func:`darrm.solver.rows.possibly_binding`),
which leaves the feasible set unchanged.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ...prior import Prior
from ...privacy.condition import rhs
from ...solver.finalize import TableForm, certified_gamma_opt
from ...solver.full_lp import solve_sparse_rows
from ...solver.options import SolveOptions
from ...solver.restricted_lp import lagrangian_bound
from ...status import StopReason
from ...table import GammaTable
from ..groups.per_group import upper_mask
from .certificate import _layout, certify_weighted_shards, changed_laws, lp_variables, unchanged_laws
from .params import WeightedShardParams

if TYPE_CHECKING:
    import scipy.sparse as sp

#: "auto" builds the sparse full LP up to this many non-zeros of its unpruned rows
FULL_LP_NONZEROS = 40_000_000

#: peak bytes per non-zero of the unpruned rows (Kronecker products, CSC/CSR copies, HiGHS's own copy;
#: measured: 1.1 GiB peak for 7·10⁶ at K = 34 + 44 + 23, about 0.3 GiB of it the interpreter and libraries)
BYTES_PER_NONZERO = 120


def row_nonzeros(params: WeightedShardParams) -> int:
    """Non-zeros of every unpruned row (4 per configuration and group: two outputs, two directions),
    bounded by the products of the law matrices' non-zeros (before the fold, which at most doubles
    them)."""
    nnz = [int(np.count_nonzero(unchanged_laws(params, g.size)[0])) for g in params.groups]
    total = 0
    for gi in range(len(params.groups)):
        a, ap, _ = changed_laws(params, gi)
        changed = max(int(np.count_nonzero(a)), int(np.count_nonzero(ap)))
        total += 4 * 2 * 2 * changed * math.prod(n for h, n in enumerate(nnz) if h != gi)
    return total


def sparse_rows(params: WeightedShardParams) -> sp.csr_matrix:
    """Every possibly binding normalised row (module docstring) over the LP variables
    (:func:`darrm.models.weighted_shards.certificate.lp_variables`), as a CSR matrix."""
    import scipy.sparse as sp

    mask = upper_mask(_layout(params)).ravel()
    U = np.flatnonzero(mask)
    mirror = mask.size - 1 - U
    laws = [sp.csr_matrix(unchanged_laws(params, g.size)[0]) for g in params.groups]
    var = lp_variables(params)
    fold = sp.csr_matrix((np.ones(var.size), (np.arange(var.size), var)), shape=(var.size, int(var.max()) + 1))
    blocks = []
    for gi, grp in enumerate(params.groups):
        a, ap, _ = changed_laws(params, gi)
        mats = []
        for changed in (a, ap):
            k = sp.csr_matrix(np.ones((1, 1)))
            for h in range(len(params.groups)):
                k = sp.kron(k, sp.csr_matrix(changed) if h == gi else laws[h], format="csr")
            mats.append(k)
        e = math.exp(grp.target_eps)
        for P, Pp in ((mats[0], mats[1]), (mats[1], mats[0])):
            D = (P - e * Pp).tocsc()
            R = ((D[:, U] - D[:, mirror]) / rhs(grp.target_eps, grp.target_delta)).tocsr()
            if params.weights is not None:
                R = R @ fold
            for S in (R, -R):
                S.eliminate_zeros()
                keep = np.asarray(S.maximum(0.0).sum(axis=1)).ravel() > params.rhs
                blocks.append(S[keep])
    return sp.vstack(blocks, format="csr")


def solve_full_lp(params: WeightedShardParams, prior: Prior, opts: SolveOptions, form: TableForm,
                  tol: float | None = None) -> GammaTable:
    """γ_opt from the sparse full LP (every possibly binding row, :func:`darrm.solver.full_lp.solve_sparse_rows`),
    its proven lower bound the Lagrangian of the LP's own duals on the same rows
    (:func:`darrm.solver.restricted_lp.lagrangian_bound`: valid for any y ≥ 0), certified and
    labelled by :func:`darrm.solver.finalize.certified_gamma_opt`.  ``form`` is the LP's table form
    (:func:`darrm.models.weighted_shards.solver.table_form`).

    Raises:
        SolveError: the LP failed, or the proven gap exceeds ``gap_tol`` without ``accept_gap``.
    """
    t0 = time.perf_counter()
    c = form.costs
    R = sparse_rows(params)
    t_rows = time.perf_counter() - t0
    x, y = solve_sparse_rows(R, params.rhs, c)
    lb = lagrangian_bound(c, cast(Any, R), params.rhs, y)  # Rᵀy: sparse @ dense
    info = {"method": "weighted-shards-full-lp", "stop": StopReason.FULL_LP.value, "rounds": 1,
            "gamma_form": params.gamma_form, "lp_lower_bound": lb, "lp_rows": int(R.shape[0]),
            "lp_nonzeros": int(R.nnz), "seconds_rows": t_rows, "seconds_solve": time.perf_counter() - t0}
    return certified_gamma_opt(
        np.clip(x, 0.0, 1.0), params, prior,
        lambda g: certify_weighted_shards(g, params, tol=tol, max_memory=opts.max_memory), opts, info,
        lp_backend="highs", form=form)
