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
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

import numpy as np

from darrm.atomic import atomic_write_bytes, atomic_write_json
from darrm.experiments.data.locations import cache_dir
from darrm.strict_json import loads_strict, open_regular

__all__ = ["compute_shared", "default_cache_dir", "load_npy", "save_npy", "settings_key"]

K = TypeVar("K")


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


def _holder_alive(claim: Path) -> bool:
    """Whether the process named in ``claim`` still runs (a claim of a killed run is stale)."""
    try:
        text = claim.read_text().strip()
        if not text:  # created, its pid not yet written (or never: its process died at once)
            return time.time() - claim.stat().st_mtime < 60.0
        pid = int(text)
    except (OSError, ValueError):
        return False  # gone, or not a claim this cache writes: the caller looks again
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def compute_shared(jobs: Mapping[K, tuple[Path, Callable[[], dict]]], *, poll: float = 2.0) -> dict[K, dict]:
    """Each job's JSON result, computed once across the processes sharing the cache folder.

    A job is ``(path, compute)``: its result is read from ``path`` if written, else computed by the
    first process to create ``path`` + ``.claim`` (``O_EXCL``, holding its pid) and written there
    atomically.  A process first does every job it can claim, then waits for those another live
    process holds; a claim whose process has died is removed and the job taken over.  Two runs
    started together (e.g. one per data set) thus split the jobs between them and each reads the
    other's; a result never depends on which process computed it (``compute`` is deterministic).

    Args:
        jobs: key → (result file, function returning a JSON-serialisable dict).
        poll: seconds between looks at the jobs another process holds.

    Returns:
        key → result, for every job.

    Raises:
        darrm.strict_json.StrictJSONError: a result file is not the JSON dict this cache writes.
        OSError: a file cannot be written.
    """
    out: dict[K, dict] = {}
    pending = dict(jobs)
    while pending:
        progressed = False
        for key, (path, compute) in list(pending.items()):
            if path.exists():
                out[key] = _read_result(path)
                del pending[key]
                progressed = True
                continue
            claim = path.with_name(path.name + ".claim")
            try:
                fd = os.open(claim, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                if not _holder_alive(claim) and not path.exists():
                    claim.unlink(missing_ok=True)  # stale (or half-written: its holder re-creates nothing)
                continue
            try:
                os.write(fd, str(os.getpid()).encode())
                os.close(fd)
                if not path.exists():  # written between the look above and the claim
                    atomic_write_json(path, compute())
                out[key] = _read_result(path)
            finally:
                claim.unlink(missing_ok=True)
            del pending[key]
            progressed = True
        if pending and not progressed:
            time.sleep(poll)
    return out


def _read_result(path: Path) -> dict:
    with open_regular(path) as fh:
        value = loads_strict(fh.read())
    if not isinstance(value, dict):
        from darrm.strict_json import StrictJSONError

        raise StrictJSONError(f"{path}: not a JSON object")
    return value
