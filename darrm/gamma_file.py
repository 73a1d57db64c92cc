"""γ table files: JSON, written atomically, checksummed, re-certified on load.

Format (all keys required)::

    {"format": "darrm-gamma/1", "K", "m", "eps", "Delta", "delta", "prior", "family",
     "gamma": [K+1 floats], "solver", "status", "objective", "violation", "version",
     "info", "checksum": sha256 of the canonical JSON of every other key}

Tables for members on disjoint shards (:mod:`darrm.models.disjoint`) use the format
``"darrm-gamma-disjoint/1"``: the keys K, target_eps, target_delta and "model" (the
member-privacy model, e.g. ``{"kind": "rr", "eps0": 1.0}``) replace m, eps, Delta,
delta; :func:`load` dispatches on "format" and re-certifies with the recorded model.

Tables for grouped members (:mod:`darrm.models.groups`) use ``"darrm-gamma-groups/1"`` with the keys
K, groups, target_eps, target_delta; a per-group table γ(l_1, …, l_G) adds ``"gamma_form":
"per-group"`` and writes "gamma" as nested lists, one level per group.

The key "Delta" is the per-mechanism Δ (``PrivacyParams.member_delta``), kept for the format's
stability; "delta" is the target δ.

Floats are written with Python's shortest round-trip repr, so a loaded table is
bit-identical to the saved one.

Reading is strict (:mod:`darrm.strict_json`): a file that is no regular file (``/dev/zero``, a
FIFO) or larger than :data:`MAX_FILE_BYTES`, duplicate keys, integers of more than 30 digits,
nesting deeper than 64 levels, NaN/Infinity, and a ``status`` other than those a solve writes
(:data:`STATUSES`) are each a one-line :class:`~darrm.errors.GammaFileError`.

A valid checksum proves integrity, not truth: γ is re-certified on load, and the recorded
``objective`` (the expected error under the recorded ``prior``) is recomputed from a registered
prior and must agree to :data:`OBJECTIVE_TOL` (:func:`check_objective`); a ``prior`` of no
registered kind, or an ``objective`` with no prior, is refused.  A density prior (its density is
code, only its name is recorded) cannot be rebuilt: its objective is kept as recorded and marked
unverified (``info["objective_check"]``, :data:`UNVERIFIED_OBJECTIVE`), and every place that prints
it says so (``darrm verify``'s text, ``expected_error_verified: false`` in the JSON records).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from typing import Any

import numpy as np

from ._version import __version__
from .api import certify
from .atomic import atomic_write_bytes
from .errors import CertificationError, DarrmError, GammaFileError, ParameterError
from .models import MEMBER_MODELS, model_for_format, model_of
from .prior import DensityPrior, prior_from_dict
from .privacy.certify import validate_max_memory, validate_tol
from .status import GAP_BOUNDED, OPTIMAL
from .strict_json import StrictJSONError, loads_strict, read_bounded
from .table import GammaTable, validate_table_gamma
from .validation import flag, instance
from .validation import path as file_path

FORMAT = MEMBER_MODELS["shared"].gamma_format
FORMAT_DISJOINT = MEMBER_MODELS["disjoint"].gamma_format
_COMMON = ("prior", "family", "gamma", "solver", "status", "objective", "violation", "version", "info")


#: a table's status in a γ file: proven optimal, certified with a bounded gap, or none (a closed form)
STATUSES = (OPTIMAL, GAP_BOUNDED, None)

#: largest |recorded − recomputed| objective accepted on load (both are the same float64 sum of at
#: most K/2 + 1 terms in [−1, 1]; 1e-9 leaves room for a different BLAS summation order only)
OBJECTIVE_TOL = 1e-9

#: ``info["objective_check"]`` of a loaded table whose objective could not be recomputed
UNVERIFIED_OBJECTIVE = "unverified: a density prior is code, not in the file; the objective is as recorded"


def objective_verified(table: GammaTable) -> bool | None:
    """Whether ``table.objective`` is known to be γ's expected error under its prior: computed here,
    or recomputed when its file was loaded (None: no objective)."""
    if table.objective is None:
        return None
    return table.info.get("objective_check") != UNVERIFIED_OBJECTIVE


#: largest γ file accepted (a K = 10⁶ table is ~25 MB)
MAX_FILE_BYTES = 64 << 20


def check_objective(prior: object, objective: object, gamma: np.ndarray, params: object) -> None:
    """Refuse a recorded ``objective`` that is not γ's expected error under the recorded ``prior``.

    Args:
        prior: the file's ``prior`` field (a registered prior's description, or None).
        objective: the file's ``objective`` field (a number, or None).
        gamma: the file's table (γ(0..K), or a per-group table).
        params: the table's parameters: their member model's ``expected_error``
            (:class:`darrm.models.base.MemberModel`) gives the true value.

    Raises:
        ParameterError: naming ``objective`` (no prior, or off by more than :data:`OBJECTIVE_TOL`
            from the model's expected error) or ``prior`` (not a registered prior's description),
            or ``params`` (no registered model's parameters).
    """
    if objective is not None and (isinstance(objective, bool) or not isinstance(objective, (int, float))):
        raise ParameterError("objective", f"must be a number or null, got {type(objective).__name__}")
    if prior is None:
        if objective is not None:
            raise ParameterError("objective", "is recorded without a prior: an expected error needs one")
        return
    if _density(prior):
        return  # a density is code: its objective cannot be recomputed (module docstring: marked unverified)
    rebuilt = prior_from_dict(prior)
    if objective is None:
        return
    true = model_of(params).expected_error(gamma, params, rebuilt)
    if not abs(float(objective) - true) <= OBJECTIVE_TOL:
        raise ParameterError("objective", f"records {float(objective)!r}, but γ's expected error under its prior "
                                          f"{prior} is {true!r}")


def _density(prior: object) -> bool:
    return isinstance(prior, dict) and prior.get("kind") == DensityPrior.kind


def _non_finite(obj: object, path: str = "") -> str | None:
    """Dotted path of the first NaN/±Infinity in a parsed JSON value, else None."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return path or "<top>"
    if isinstance(obj, dict):
        for k, v in obj.items():
            hit = _non_finite(v, f"{path}.{k}" if path else str(k))
            if hit:
                return hit
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            hit = _non_finite(v, f"{path}[{i}]")
            if hit:
                return hit
    return None


def _numbers(obj: object, depth: int) -> bool:
    """``obj`` is a JSON list nest ``depth`` levels deep with numbers (no booleans) at the leaves
    (the lengths are the table validator's to check)."""
    if not isinstance(obj, list):
        return False
    if depth == 1:
        return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in obj)
    return all(_numbers(v, depth - 1) for v in obj)


def _canonical(d: dict) -> bytes:
    return json.dumps(d, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


def checksum(d: dict) -> str:
    """sha256 of the canonical JSON of ``d`` without its "checksum" key."""
    return hashlib.sha256(_canonical({k: v for k, v in d.items() if k != "checksum"})).hexdigest()


def table_to_dict(table: GammaTable) -> dict:
    d = {
        "format": model_of(table.params).gamma_format,
        **table.params.file_fields(),
        "prior": table.prior,
        "family": table.family,
        "gamma": np.asarray(table.gamma, dtype=np.float64).tolist(),  # nested for a per-group table
        "solver": table.solver,
        "status": table.status,
        "objective": table.objective,
        "violation": table.violation,
        "version": __version__,
        "info": table.info,
    }
    d["checksum"] = checksum(d)
    return d


def save(table: GammaTable, path: str | os.PathLike, *, tol: float | None = None) -> None:
    """Re-certify ``table`` and write it atomically; an uncertified table is never written.

    Args:
        table: the γ table.
        path: the γ file to write (JSON, with a checksum).
        tol: the certificate's tolerance (None: the default).

    Raises:
        GammaFileError: the table is not certified (nothing is written).
        ParameterError: ``table`` is no GammaTable, ``path`` no file path, or ``tol`` invalid.
    """
    instance("table", table, GammaTable, "a darrm.GammaTable")
    path = file_path("path", path)
    cert = certify(table.gamma, table.params, tol=tol)
    if not cert.certified:
        raise GammaFileError(f"refusing to write an uncertified table (violation {cert.violation:.3e})")
    d = table_to_dict(table)
    atomic_write_bytes(path, json.dumps(d, indent=1, allow_nan=False).encode() + b"\n")


def load(path: str | os.PathLike, *, tol: float | None = None, recertify: bool = True,
         max_memory: float | None = None, executor: Any = None) -> GammaTable:
    """Read a γ file, check format, checksum and parameters, and re-run the certificate, whose
    memory is estimated first and refused past ``max_memory`` bytes (None: the memory available),
    on ``executor`` (:func:`darrm.api.certify`: local processes, joblib, Dask, any
    ``concurrent.futures.Executor``; None: chosen by size).

    Args:
        path: the γ file.
        tol: the certificate's tolerance (None: the default).
        recertify: run the certificate again (False: trust the file's checksum and record).
        max_memory: the certificate's memory budget in bytes (None: the memory available).
        executor: where the certificate runs (None: chosen by size).

    Returns:
        The table, with the parameters of its member model.

    Raises:
        GammaFileError: unreadable, corrupt, tampered with, or not certified.
        ParameterError: ``path`` is no file path, ``tol``, ``recertify`` or ``max_memory`` are
            invalid, or the certificate would not fit the memory budget.
    """
    path = file_path("path", path)
    validate_tol(tol)
    max_memory = validate_max_memory(max_memory)
    recertify = flag("recertify", recertify)
    try:
        raw = read_bounded(path, MAX_FILE_BYTES)
    except OSError as exc:
        raise GammaFileError(f"{path}: cannot read γ file: {exc.strerror or exc}") from None
    except StrictJSONError as exc:
        raise GammaFileError(f"{path}: not a γ file: {exc}") from None
    try:
        d = loads_strict(raw)
    except StrictJSONError as exc:
        raise GammaFileError(f"{path}: not a valid JSON γ file ({exc})") from None
    if not isinstance(d, dict):
        raise GammaFileError(f"{path}: γ file must hold a JSON object")
    bad = _non_finite(d)
    if bad is not None:
        raise GammaFileError(f"{path}: field {bad!r} holds NaN or Infinity; a γ file has finite numbers only")
    fmt = d.get("format")
    model = model_for_format(fmt)
    if model is None:
        known = " or ".join(repr(m.gamma_format) for m in MEMBER_MODELS.values())
        raise GammaFileError(f"{path}: unsupported format {fmt!r} (expected {known})")
    missing = [k for k in ("format", *model.params_type.file_keys(), *_COMMON, "checksum") if k not in d]
    if missing:
        raise GammaFileError(f"{path}: γ file is missing keys {missing}")
    if checksum(d) != d["checksum"]:
        raise GammaFileError(f"{path}: checksum mismatch: the file is corrupt or was edited")
    if d["status"] not in STATUSES:
        raise GammaFileError(f"{path}: invalid γ file: status must be one of {', '.join(map(repr, STATUSES))}, "
                             f"got {str(d['status'])[:60]!r}")
    try:
        params = model.params_type.from_file_fields(d)
        if not _numbers(d["gamma"], len(getattr(params, "gamma_shape", (0,)))):
            raise ParameterError("gamma", "must be a list of numbers (nested, one level per group, for a "
                                          "per-group table)")
        gamma = validate_table_gamma(d["gamma"], params)
        if isinstance(d["violation"], bool) or not isinstance(d["violation"], (int, float)):
            raise ParameterError("violation", f"must be a number, got {d['violation']!r}")
        violation = float(d["violation"])
        if d["info"] is not None and not isinstance(d["info"], dict):
            raise ParameterError("info", f"must be a JSON object or null, got {type(d['info']).__name__}")
        table = GammaTable(
            params=params,
            gamma=np.array(gamma),
            family=str(d["family"]),
            violation=violation,
            prior=d["prior"],
            objective=d["objective"],
            solver=d["solver"],
            status=d["status"],
            info={**(d["info"] or {}), **({"objective_check": UNVERIFIED_OBJECTIVE}
                                           if _density(d["prior"]) and d["objective"] is not None else {})},
        )
    except (DarrmError, TypeError, ValueError, ArithmeticError, RecursionError) as exc:
        raise GammaFileError(f"{path}: invalid γ file: {exc}") from None
    if recertify:
        if "total_budget" in table.info:  # the record itself; its composition is the accountant's (darrm verify)
            from .budget.verify import recorded_budget

            try:
                recorded_budget(table)
            except CertificationError as exc:
                raise GammaFileError(f"{path}: total budget not met: {exc}") from None
        try:
            cert = certify(table.gamma, params, tol=tol, max_memory=max_memory, executor=executor)
        except MemoryError:
            raise GammaFileError(
                f"{path}: certifying a table for K={params.K} needs more memory than is available"
            ) from None
        if not cert.certified:
            raise GammaFileError(
                f"{path}: table is NOT {model.guarantee}-DP for its parameters: "
                f"certificate bound {cert.violation:.3e} > {cert.tol:g}"
            )
        table = GammaTable(**{**table.__dict__, "violation": cert.violation})
    try:  # after the certificate: a table that is not private says so first
        check_objective(d["prior"], d["objective"], table.gamma, params)
    except DarrmError as exc:
        raise GammaFileError(f"{path}: invalid γ file: {exc}") from None
    return table
