"""Atomic file writes: nothing is ever left half-written.

The data goes to a temporary file ``.<name>.<8 random chars>.tmp`` in the destination
folder, is flushed and fsynced, and then renamed over the destination (``os.replace`` is
atomic on POSIX and Windows).  On any error (an exception, ``KeyboardInterrupt``) the
temporary file is removed and the old destination, if any, is untouched.  A process killed
outright (``kill -9``, power loss) cannot clean up: the next write of the same destination
removes such leftovers (only files of exactly this naming pattern).

Every write claims its destination (:mod:`darrm.locking`): another process writing the same
file at the same moment is refused with a one-line :class:`~darrm.errors.ParameterError`
instead of racing.  Under a freshly taken claim no other writer can have a live temporary file,
so every leftover is removed; under a claim this process already held (a command that claimed
its ``--out`` for its whole run) only those older than :data:`STALE_AFTER_S` are.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from pathlib import Path

from .locking import claim

#: a temporary file of this age (seconds) is a leftover of a crashed writer
STALE_AFTER_S = 3600.0

_RANDOM = re.compile(r"[a-z0-9_]{8}")  # tempfile's names (tempfile._RandomNameSequence)


def _sweep_stale(path: Path, older_than: float = STALE_AFTER_S) -> None:
    """Remove earlier crashes' temporary files of ``path`` older than ``older_than`` seconds
    (best effort, never raises)."""
    prefix, suffix = f".{path.name}.", ".tmp"
    now = time.time()
    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return
    for e in entries:
        n = e.name
        if not (n.startswith(prefix) and n.endswith(suffix) and _RANDOM.fullmatch(n[len(prefix):-len(suffix)])):
            continue
        try:
            st = e.stat(follow_symlinks=False)
            if e.is_file(follow_symlinks=False) and now - st.st_mtime >= older_than:
                os.unlink(e.path)
        except OSError:
            pass


def atomic_write_bytes(path: str | os.PathLike, data: bytes, *, name: str = "path") -> None:
    """Write ``data`` to ``path`` atomically, with the usual (umask) file mode.

    Raises:
        ParameterError: (``name``) another process is writing ``path`` (:mod:`darrm.locking`).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with claim(name, path) as c:
        _sweep_stale(path, 0.0 if c.fresh else STALE_AFTER_S)
        c.fresh = False
        _write(path, data)


def _write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600
        with os.fdopen(fd, "wb") as fh:
            fd = -1  # owned (and closed) by fh now
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_json(path: str | os.PathLike, obj: object, *, name: str = "path") -> None:
    """JSON (indented, trailing newline), written atomically."""
    atomic_write_bytes(path, (json.dumps(obj, indent=2, sort_keys=False) + "\n").encode(), name=name)
