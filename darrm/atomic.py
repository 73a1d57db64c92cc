"""Atomic file writes: nothing is ever left half-written.

The data goes to a temporary file ``.<name>.<8 random chars>.tmp`` in the destination
folder, is flushed and fsynced, and then renamed over the destination (``os.replace`` is
atomic on POSIX and Windows).  On any error (an exception, ``KeyboardInterrupt``) the
temporary file is removed and the old destination, if any, is untouched.  A process killed
outright (``kill -9``, power loss) cannot clean up: the next write of the same destination
removes such leftovers, only files of exactly this naming pattern and older than
:data:`STALE_AFTER_S` (a concurrent writer's live temporary file is younger).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from pathlib import Path

#: a temporary file of this age (seconds) is a leftover of a crashed writer
STALE_AFTER_S = 3600.0

_RANDOM = re.compile(r"[a-z0-9_]{8}")  # tempfile's names (tempfile._RandomNameSequence)


def _sweep_stale(path: Path) -> None:
    """Remove earlier crashes' temporary files of ``path`` (best effort, never raises)."""
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
            if e.is_file(follow_symlinks=False) and now - st.st_mtime > STALE_AFTER_S:
                os.unlink(e.path)
        except OSError:
            pass


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically, with the usual (umask) file mode."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _sweep_stale(path)
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


def atomic_write_json(path: str | os.PathLike, obj: object) -> None:
    """JSON (indented, trailing newline), written atomically."""
    atomic_write_bytes(path, (json.dumps(obj, indent=2, sort_keys=False) + "\n").encode())
