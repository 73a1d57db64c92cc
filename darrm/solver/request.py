"""Requests for shared members (Problem 1.1): what each method uses, and the solve itself.

:func:`darrm.api.check_request` checks what every request shares (family, prior, options type,
executor, checkpoint path) and hands a shared-members request here: an option the chosen method
would ignore is refused, naming it, before any work.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import CertificationError, ParameterError
from ..families import Family
from ..locking import claim
from ..params import PrivacyParams
from ..prior import Prior
from ..table import GammaTable
from .full_lp import choose_method
from .options import SolveOptions

if TYPE_CHECKING:
    from ..backends import Executor, TorchDevice

#: :class:`SolveOptions` fields read only by constraint generation over corner multisets: the
#: full LP and the closed forms have no rounds, cuts, stabilisation or screening
CUTTING_PLANES_FIELDS = ("max_rounds", "cuts_per_round", "stabilize", "screen", "warm_start")

#: :class:`SolveOptions` fields a closed-form family uses (its certificate's memory budget)
CLOSED_FORM_FIELDS = ("max_memory",)


def check_shared(params: PrivacyParams, family: Family, opts: SolveOptions,
                 executor: Executor | TorchDevice | None, checkpoint: Path | None) -> None:
    """Refuse what a shared-members solve would drop silently.

    Args:
        params: the request's parameters.
        family: the γ family asked for.
        opts: the solve options (defaults filled in).
        executor: where the sweeps would run (every executor applies to shared members).
        checkpoint: the checkpoint file, if any.

    Raises:
        ParameterError: for a closed-form family a ``checkpoint`` or any option but
            :data:`CLOSED_FORM_FIELDS`; for the full LP (asked for, or picked by "auto" at this
            size) a ``checkpoint`` or the options of :data:`CUTTING_PLANES_FIELDS`.
    """
    if family.closed_form is not None:
        if checkpoint is not None:
            raise ParameterError("checkpoint", f"applies to γ_opt (family 'opt') only; the {family.name} family is a "
                                               "closed form, computed without rounds")
        ignored = opts.first_changed(tuple(n for n in SolveOptions.field_names() if n not in CLOSED_FORM_FIELDS))
        if ignored is not None:
            raise ParameterError(ignored, f"applies to γ_opt (family 'opt') only; the {family.name} family is a "
                                          "closed form (only max_memory applies, to its certificate)")
        return
    method = choose_method(params) if opts.method == "auto" else opts.method
    if method == "full":
        hint = (f"; at K={params.K} method 'auto' picks the full LP: pass method 'cutting-planes' "
                "(--method cutting-planes) to use it" if opts.method == "auto" else "")
        if checkpoint is not None:
            raise ParameterError("checkpoint", "applies to constraint generation only; the full LP is solved "
                                               f"in one step, with nothing to resume{hint}")
        ignored = opts.first_changed(CUTTING_PLANES_FIELDS)
        if ignored is not None:
            raise ParameterError(ignored, f"applies to constraint generation only, not to the full LP{hint}")


def solve_shared(params: PrivacyParams, prior: Prior, family: Family, opts: SolveOptions,
                 executor: Executor | TorchDevice | None, checkpoint: Path | None,
                 progress: bool | None, log: Callable[[str], None] | None) -> GammaTable:
    """A certified table for shared members: γ_opt (Section 5) or a certified closed form.

    Args:
        params: the checked parameters.
        prior: the objective's prior.
        family: the family (γ_opt when it has no closed form).
        opts: the solve options.
        executor: where the exhaustive sweeps run.
        checkpoint: the constraint-generation checkpoint (γ_opt only), claimed for the solve.
        progress: show progress bars (None: when stderr is a terminal).
        log: called with one line per constraint-generation round.

    Returns:
        The certified table (a closed form scaled by 1 − O(ρ) when exactly tight).

    Raises:
        SolveError: the LP failed or was not proven optimal.
        CertificationError: the closed form is not private for these parameters.
    """
    if family.closed_form is None:
        from .gamma_opt import solve_gamma_opt

        with claim("checkpoint", checkpoint) if checkpoint is not None else nullcontext():
            return solve_gamma_opt(params, prior, options=opts, progress=progress, executor=executor,
                                   checkpoint=checkpoint, log=log)
    from ..privacy.certify import certify_tight
    from .objective import expected_signed_error

    g = family.closed_form(params)
    # exactly tight families (γ_Sub at m = 1, …) need a 1 − O(ρ) scale before float64 can prove them
    g, cert, scale = certify_tight(g, params, progress=progress, executor=executor, max_memory=opts.max_memory)
    if not cert.certified:
        raise CertificationError(
            f"γ_{family.name} is not (mε, δ)-DP for these parameters (certificate bound {cert.violation:.3e})"
        )
    return GammaTable(params, g, family.name, cert.violation, prior.to_dict(), expected_signed_error(g, prior),
                      info={"repair_scale": scale} if scale != 1.0 else {})
