"""Content-keyed, resumable on-disk cache with atomic writes, in
:func:`darrm.experiments.data.locations.cache_dir` (``--cache-dir``, ``$DARRM_CACHE``,
``<checkout>/data/cache``, or the user cache directory; never inside an installed package).

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
from darrm.experiments.data.locations import cache_dir
from darrm.strict_json import open_regular

__all__ = ["default_cache_dir", "load_npy", "save_npy", "settings_key"]


def default_cache_dir(override: str | os.PathLike | None = None) -> Path:
    """The cache folder (:func:`darrm.experiments.data.locations.cache_dir`): ``override``
    (``--cache-dir``), ``$DARRM_CACHE``, ``<checkout>/data/cache`` (gitignored) in a source
    checkout, else the user cache directory of platformdirs.

    Args:
        override: the folder the user named, or None.

    Returns:
        The folder (not created here).

    Raises:
        ImportError: the user folder is needed and platformdirs is missing.
    """
    return cache_dir(override)


def settings_key(settings: dict, length: int = 16) -> str:
    """Stable hex key of a JSON-serialisable ``settings`` dict (sorted keys, SHA-256).

    Args:
        settings: the settings (values that JSON cannot hold are written with ``str``).
        length: the number of hex digits kept.

    Returns:
        The key.

    Raises:
        ValueError: a circular reference in ``settings``.
    """
    blob = json.dumps(settings, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:length]


def save_npy(path: Path, arr: np.ndarray) -> None:
    """Write ``arr`` to ``path`` as ``.npy`` (no pickles), atomically.

    Args:
        path: the cache file.
        arr: the array (object arrays are refused).

    Raises:
        ValueError: an object array (``allow_pickle=False``).
        OSError: the file cannot be written.
    """
    buf = io.BytesIO()
    np.save(buf, np.asarray(arr), allow_pickle=False)
    atomic_write_bytes(path, buf.getvalue())


def load_npy(path: Path) -> np.ndarray:
    """The array in the cache file ``path``: a regular file only (a FIFO planted in the cache would
    block the run, a device feed it without end).

    Args:
        path: the cache file.

    Returns:
        The array.

    Raises:
        darrm.strict_json.StrictJSONError: ``path`` is no regular file.
        OSError, ValueError: it cannot be read as an ``.npy`` array.
    """
    with open_regular(path) as fh:
        return np.load(fh, allow_pickle=False)
