"""Constraint generation's checkpoint: the working set, tied to its problem by a fingerprint."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import numpy as np

from ..atomic import atomic_write_bytes
from ..errors import ParameterError
from ..params import PrivacyParams


def fingerprint(params: PrivacyParams, c: np.ndarray) -> str:
    blob = json.dumps({"params": params.to_dict(), "c": [float(v) for v in c]}, sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def save_checkpoint(path: Path, fp: str, working: np.ndarray) -> None:


    buf = io.BytesIO()
    np.savez(buf, fingerprint=np.array(fp), working=working)
    atomic_write_bytes(path, buf.getvalue())


def load_checkpoint(path: Path, fp: str, C: int) -> np.ndarray | None:
    if not path.exists():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            if str(z["fingerprint"]) != fp:
                return None
            w = np.asarray(z["working"], dtype=np.int64)
    except (OSError, ValueError, KeyError) as exc:
        raise ParameterError("checkpoint", f"{path}: unreadable checkpoint ({exc}); delete it to start afresh") from None
    if w.ndim != 2 or w.shape[1] != C:
        raise ParameterError("checkpoint", f"{path}: working set has the wrong shape {w.shape}")
    return w
