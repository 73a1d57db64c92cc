"""Exclusive claims on output files: a second writer of the same target is refused, not raced.

Two processes writing one file (two ``darrm solve --out g.json``, two labelling sessions on one
ledger) would otherwise each succeed, and the last writer would silently win — for a privacy
ledger, the loser's spent queries would be forgotten.  A :func:`claim` takes an advisory lock
(``fcntl.flock``, exclusive, non-blocking) on a sidecar file ``.<name>.lock`` next to the target;
a second claim of the same target by another process fails at once with a one-line
:class:`~darrm.errors.ParameterError` naming the parameter, the path and the holder's pid.

* The kernel drops the lock when its holder dies (even by ``kill -9``), so a crash never leaves a
  target locked; the sidecar file is removed on release (a crashed holder's file is reused and
  removed by the next one).  Acquiring re-checks that the locked file is still the one at the
  sidecar path, so removing it cannot let two holders in.
* Within one process claims are counted, not locked twice: a command that claims its ``--out``
  for its whole run and then writes it through :func:`darrm.atomic.atomic_write_bytes` (which
  claims the target for the write) does not refuse itself.  ``reentrant=False`` refuses a second
  claim in the same process too (two sessions on one ledger).
* The sidecar is opened with ``O_NOFOLLOW`` and checked (``fstat``) before it is locked or
  written: a symlink, a device, FIFO, socket or folder at the sidecar path, or a sidecar owned by
  another user, is refused with a one-line ParameterError naming the parameter — a lock planted by
  another user can neither make this process truncate a file it names nor hold its output.  A
  sidecar that cannot be created (``/proc``, a read-only folder) is refused the same way.
* Once locked, nothing can leak the lock: the pid written into the sidecar (for the refusal's
  message only) is best effort — a full disk or ``RLIMIT_FSIZE`` leaves it empty — and any
  exception before the claim is handed out closes the descriptor, so the lock is released.
* POSIX only: where ``fcntl`` is missing (Windows), or a file system does not support ``flock``
  (some network mounts), claims are counted within the process but not enforced between processes.
"""

from __future__ import annotations

import errno
import os
import stat
import threading
from pathlib import Path

from .errors import ParameterError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["Claim", "claim", "is_claimed", "lock_file"]

#: flock not supported there: the claim is counted in this process only
_UNSUPPORTED = {errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EINVAL}

_held: dict[str, Claim] = {}
_mutex = threading.Lock()


def lock_file(path: str | os.PathLike) -> Path:
    """The sidecar lock file of ``path``: ``.<name>.lock`` in the (resolved) same folder."""
    real = Path(os.path.realpath(path))
    return real.parent / f".{real.name}.lock"


class Claim:
    """A held claim; :meth:`release` (or leaving the ``with`` block) gives it back."""

    def __init__(self, key: str, lock: Path, fd: int):
        self.key, self.lock, self.fd = key, lock, fd
        self.pid = os.getpid()
        self.count = 1
        #: no temporary file of this target can be live when the claim was just taken
        #: (:func:`darrm.atomic.atomic_write_bytes` sweeps every leftover then)
        self.fresh = True

    def release(self) -> None:
        with _mutex:
            if self.count <= 0:
                return
            self.count -= 1
            if self.count > 0 or os.getpid() != self.pid:
                return
            if _held.get(self.key) is self:
                del _held[self.key]
        try:
            if self.fd >= 0 and os.stat(self.lock, follow_symlinks=False).st_ino == os.fstat(self.fd).st_ino:
                os.unlink(self.lock)  # while still holding it: the next claimer re-checks the inode
        except OSError:
            pass
        finally:
            if self.fd >= 0:
                os.close(self.fd)
                self.fd = -1

    def __enter__(self) -> Claim:
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def is_claimed(path: str | os.PathLike) -> bool:
    """Whether this process holds a claim on ``path``."""
    c = _held.get(os.path.realpath(path))
    return c is not None and c.pid == os.getpid()


def claim(name: str, path: str | os.PathLike, *, reentrant: bool = True) -> Claim:
    """Claim ``path`` for writing; raise a one-line ParameterError naming ``name`` when another
    process holds it (or, with ``reentrant=False``, when this process does)."""
    key = os.path.realpath(path)
    with _mutex:
        held = _held.get(key)
        if held is not None and held.pid == os.getpid():
            if not reentrant:
                raise ParameterError(name, f"{path} is already in use by this process (another open session or "
                                           "writer of the same file); close it first")
            held.count += 1
            return held
    lock = lock_file(path)
    fd = -1
    if fcntl is not None:
        while fd < 0:
            fd = _open_lock(name, path, lock)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _holder(fd)
                os.close(fd)
                raise ParameterError(name, f"{path} is being written by another process"
                                           f"{f' (pid {holder})' if holder else ''}; wait for it to finish or "
                                           "choose another path") from None
            except OSError as exc:
                os.close(fd)
                if exc.errno in _UNSUPPORTED:  # a file system without flock (some network mounts)
                    lock.unlink(missing_ok=True)
                    fd = -1
                    break
                raise
            except BaseException:
                os.close(fd)
                raise
            try:
                try:  # the holder before us may have removed the file between our open and flock
                    same = os.stat(lock, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
                except FileNotFoundError:
                    same = False
                if not same:
                    os.close(fd)
                    fd = -1
                    continue
                try:  # the pid is only for another claimer's message: best effort
                    os.ftruncate(fd, 0)
                    os.write(fd, f"{os.getpid()}\n".encode())
                except OSError:
                    pass
            except BaseException:
                if fd >= 0:
                    os.close(fd)
                raise
            break
    c = Claim(key, lock, fd)
    with _mutex:
        _held[key] = c
    return c


def _open_lock(name: str, path: str | os.PathLike, lock: Path) -> int:
    """Open (creating it 0644) the sidecar ``lock`` without following a symlink; refuse one that
    is no regular file or belongs to another user (one-line ParameterError naming ``name``)."""
    flags = (os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
             | getattr(os, "O_NONBLOCK", 0))
    try:
        fd = os.open(lock, flags, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ParameterError(name, f"{path}: its lock file {lock} is a symlink; refusing to follow it "
                                       "(remove it if no darrm process is writing)") from None
        raise ParameterError(name, f"{path}: cannot create its lock file {lock}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ParameterError(name, f"{path}: its lock file {lock} is not a regular file; remove it")
        if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
            raise ParameterError(name, f"{path}: its lock file {lock} belongs to another user (uid {st.st_uid}); "
                                       "remove it if no darrm process of that user is writing")
    except BaseException:
        os.close(fd)
        raise
    return fd


def _holder(fd: int) -> int | None:
    try:
        return int(os.pread(fd, 32, 0).decode().strip() or 0) or None
    except (OSError, ValueError):
        return None
