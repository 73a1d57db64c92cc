"""Content-keyed, resumable on-disk cache with atomic writes (``data/cache/`` by default).

Every file is written to a temporary file in the same directory and moved into place with
``os.replace``, so an interrupted run leaves either the old file or none, never a torn one.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path

import numpy as np

from darrm.atomic import atomic_write_bytes

__all__ = ["REPO_ROOT", "default_cache_dir", "load_npy", "save_npy", "settings_key"]

REPO_ROOT = Path(__file__).resolve().parents[1]


def default_cache_dir() -> Path:
    """``$DARRM_CACHE`` if set, else ``<repo>/data/cache`` (gitignored)."""
    env = os.environ.get("DARRM_CACHE")
    return Path(env) if env else REPO_ROOT / "data" / "cache"


def settings_key(settings: dict, length: int = 16) -> str:
    """Stable hex key of a JSON-serialisable ``settings`` dict (sorted keys, SHA-256)."""
    blob = json.dumps(settings, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:length]


def save_npy(path: Path, arr: np.ndarray) -> None:
    buf = io.BytesIO()
    np.save(buf, np.asarray(arr), allow_pickle=False)
    atomic_write_bytes(path, buf.getvalue())


def load_npy(path: Path) -> np.ndarray:
    return np.load(Path(path), allow_pickle=False)
