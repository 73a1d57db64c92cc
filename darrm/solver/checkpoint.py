"""Constraint generation's checkpoint: the working set, tied to its problem by a fingerprint.

A checkpoint is read back only for the problem it was written for: a file for another
problem (other K, m, ε, Δ, δ or prior: another fingerprint) is refused, never silently
overwritten, and so is anything that is not a checkpoint this module wrote (empty,
truncated, corrupt or forged files).  Every refusal is a one-line
:class:`~darrm.errors.ParameterError` naming ``checkpoint``.

A forged file cannot make a resume run away: the row count its header declares is checked
before the rows are read — never more than the problem has distinct multisets, C(K + C − 1, C − 1)
(31,824 at K = 11 with 8 corners) — and repeated rows are dropped (first occurrence kept).
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..atomic import atomic_write_bytes
from ..errors import ParameterError
from ..params import PrivacyParams

#: most rows a checkpoint may hold (a working set is a few thousand multisets at most)
MAX_ROWS = 10_000_000


def fingerprint(params: PrivacyParams, c: np.ndarray) -> str:
    blob = json.dumps({"params": params.to_dict(), "c": [float(v) for v in c]}, sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def save_checkpoint(path: Path, fp: str, working: np.ndarray) -> None:
    buf = io.BytesIO()
    np.savez(buf, fingerprint=np.array(fp), working=working)
    atomic_write_bytes(path, buf.getvalue(), name="checkpoint")


def load_checkpoint(path: Path, fp: str, C: int, K: int | None = None) -> np.ndarray | None:
    """The working set saved at ``path`` for the problem ``fp``; None when there is no file.

    Raises:
        ParameterError: ("checkpoint") the file is unreadable, not a checkpoint, or belongs to
            another problem.
    """
    path = Path(path)
    if not path.exists():
        return None
    saved, w = read_working_set(path, "checkpoint", max_rows=None if K is None else multisets(K, C))
    if saved != fp:
        raise ParameterError("checkpoint", f"{path}: checkpoint of another problem (fingerprint {saved[:16]!r}, this "
                                           f"problem's is {fp!r}: other K, m, ε, Δ, δ or prior); refusing to "
                                           "overwrite it: delete it or choose another --checkpoint")
    if w.shape[1] != C:
        raise ParameterError("checkpoint", f"{path}: working set has the wrong shape {w.shape}")
    if K is not None and w.size and np.any(w.sum(axis=1) != K):
        raise ParameterError("checkpoint", f"{path}: working set rows must be corner counts >= 0 summing to K={K}")
    return w


def multisets(K: int, C: int) -> int:
    """How many multisets of K votes over C corners there are: C(K + C − 1, C − 1), the most
    distinct rows a working set of that problem can hold."""
    return math.comb(K + C - 1, C - 1)


def _declared_rows(path: Path, key: str) -> int | None:
    """The row count the header of array ``key`` in the archive ``path`` declares, read without the
    data (None when the header cannot be read: :func:`numpy.load` then reports the fault)."""
    try:
        with zipfile.ZipFile(path) as zf, zf.open(f"{key}.npy") as fh:
            version = np.lib.format.read_magic(fh)
            read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape = read(fh)[0]
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError,
            RuntimeError, TypeError):
        return None
    return int(shape[0]) if isinstance(shape, tuple) and shape and isinstance(shape[0], int) else None


def read_working_set(path: Path, name: str, C: int | None = None, *,
                     max_rows: int | None = None) -> tuple[str, np.ndarray]:
    """(fingerprint, working set) of the checkpoint at ``path``, whatever problem it was written for.

    Args:
        path: an existing checkpoint file (:func:`save_checkpoint`).
        name: the parameter named in errors ("checkpoint", "warm_start").
        C: the corners per multiset required (None: 4 or 8).
        max_rows: the most rows the problem can have (None: :data:`MAX_ROWS`), checked on the
            header's declared shape before any row is read.

    Returns:
        The fingerprint string and the int64 corner counts, one multiset per row, each row once
        (each row ≥ 0; the rows' sums are not checked here).

    Raises:
        ParameterError: (``name``) the file is missing, unreadable or not a checkpoint.
    """
    path = Path(path)
    hint = "delete it or choose another --checkpoint" if name == "checkpoint" else "choose another file"

    def bad(why: str) -> ParameterError:
        return ParameterError(name, f"{path}: {why}")

    if not path.is_file():
        raise bad("not a regular file" if path.exists() else "no such file")
    most = MAX_ROWS if max_rows is None else min(MAX_ROWS, max_rows)
    declared = _declared_rows(path, "working")
    if declared is not None and declared > most:
        raise bad(f"working set declares {declared:,} rows, more than the {most:,} this problem can have "
                  f"(distinct multisets); not a checkpoint darrm wrote: {hint}")
    f, w = _load_archive(path, bad, hint if name != "checkpoint" else "delete it to start afresh", hint)
    return f, _checked_rows(w, bad, C, most)


def _load_archive(path: Path, bad: Callable[[str], ParameterError], unreadable_hint: str,
                  hint: str) -> tuple[str, object]:
    """(fingerprint, raw working array) of a checkpoint archive; ``bad(why)`` builds the error."""
    try:
        z = np.load(path, allow_pickle=False)
        if not isinstance(z, np.lib.npyio.NpzFile):
            raise bad(f"not a darrm checkpoint (not an .npz archive); {hint}")
        with z:
            if set(z.files) != {"fingerprint", "working"}:
                raise bad(f"not a darrm checkpoint (expected the arrays 'fingerprint' and 'working'); {hint}")
            f = z["fingerprint"]
            if not isinstance(f, np.ndarray) or f.shape != () or f.dtype.kind != "U":
                raise bad(f"not a darrm checkpoint (malformed fingerprint); {hint}")
            return str(f), z["working"]
    except ParameterError:
        raise
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zipfile.LargeZipFile,
            NotImplementedError, RuntimeError) as exc:
        raise bad(f"unreadable checkpoint ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}); "
                  + unreadable_hint) from None


def _checked_rows(w: object, bad: Callable[[str], ParameterError], C: int | None, most: int) -> np.ndarray:
    """The working set as int64 corner counts, each row once in its first order (shape and signs checked)."""
    if not isinstance(w, np.ndarray) or w.dtype.kind not in "iu":
        raise bad(f"working set must be an integer array, got {getattr(w, 'dtype', type(w).__name__)}")
    if w.ndim != 2 or w.shape[1] not in ((4, 8) if C is None else (C,)) or w.shape[0] > most:
        raise bad(f"working set has the wrong shape {w.shape}")
    w = w.astype(np.int64)
    if w.size and w.min() < 0:
        raise bad("working set rows must be corner counts >= 0")
    if w.shape[0] > 1:
        first = np.unique(w, axis=0, return_index=True)[1]
        w = w[np.sort(first)]  # repeated rows once, in their first order
    return w
