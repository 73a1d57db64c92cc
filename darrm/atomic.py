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

**The target rule** (one rule for every output: γ files, labels, checkpoints, ledgers, plots,
experiment results, caches — all of them are written here).  An output is always a *regular
file*:

* a symlink is followed to the file it names (:func:`real_target`, once), and that file is
  replaced atomically in *its* folder; the link itself is never unlinked or replaced;
* but only where the kernel would follow it under ``fs.protected_symlinks = 1`` (Linux
  ``fs/namei.c``, ``may_follow_link``), whatever the host's setting: a symlink met on the way
  (the target or any folder above it) that sits in a *sticky world-writable* folder (``/tmp``)
  is followed only when the caller (effective uid) owns it or the folder's owner owns it;
  anywhere else every symlink is followed.  Otherwise the write is refused with a one-line
  :class:`~darrm.errors.ParameterError` naming the option and nothing is written.  The resolution
  is done once in user space and the file then replaced in its folder, so the kernel's own check
  never sees the link: without this rule a link planted in ``/tmp`` by another user would make a
  root command replace any file it names;
* an existing target that is not a regular file — a character or block device (``/dev/null``,
  ``/dev/stdout``), a FIFO, a socket, a directory, including what a symlink resolves to — is
  refused with a one-line :class:`~darrm.errors.ParameterError` naming the option, and nothing is
  written (an atomic rename would replace the device node by a file);
* a folder where no file can be created (``/proc``, ``/sys``, a read-only mount) is refused
  the same way (:func:`check_target` probes it, :mod:`darrm.paths` calls it before any work);
* an existing file keeps its permission bits (``rwx`` for owner, group and others: a ``chmod 444``
  ledger stays 0444; set-id and sticky bits are dropped) and, where the writer may, its owner and
  group; a new file gets the umask's mode.  Write permission on the *folder* is what a rename
  needs: a read-only file in a writable folder is replaced (as ``git`` and editors do), keeping
  its mode; make the folder read-only to forbid that.

After the rename the folder is fsynced, so the new name survives a power loss.
"""

from __future__ import annotations

import contextvars
import errno
import json
import os
import re
import stat
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import ParameterError
from .locking import claim

#: resolved output file or folder → the option that named it, in the command running now
_option_names: contextvars.ContextVar[dict[str, str] | None] = contextvars.ContextVar("darrm_output_options",
                                                                                       default=None)


@contextmanager
def naming_outputs() -> Iterator[None]:
    """Inside this block (one command's run: :func:`darrm.paths.hold_outputs`) the outputs named by
    :func:`name_output` are known to :func:`option_for`."""
    token = _option_names.set({})
    try:
        yield
    finally:
        _option_names.reset(token)


def name_output(name: str, path: str | os.PathLike) -> None:
    """Record that the option ``name`` named the output file or folder ``path`` (inside
    :func:`naming_outputs`; a no-op outside)."""
    names = _option_names.get()
    if names is not None:
        names[os.path.realpath(path)] = name


def option_for(path: str | os.PathLike, default: str) -> str:
    """The option that named the output ``path`` (or a folder above it) in the command running
    now, else ``default``: a write that fails late (a full disk) still names what the user typed."""
    names = _option_names.get()
    if not names:
        return default
    p = os.path.realpath(path)
    while True:
        if p in names:
            return names[p]
        up = os.path.dirname(p)
        if up == p:
            return default
        p = up


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


def _kind(mode: int) -> str:
    for test, what in ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return what
    return "not a regular file"


#: Linux's limit on symlinks followed in one lookup (``MAXSYMLINKS``)
MAX_SYMLINKS = 40


def follow_allowed(link: os.stat_result, folder: os.stat_result, euid: int) -> bool:
    """The kernel's protected-symlinks rule (Linux ``fs/namei.c``, ``may_follow_link``): a
    symlink whose status is ``link``, sitting in a folder whose status is ``folder``, may be
    followed by effective uid ``euid``.

    Followed when the follower owns the link, or the folder is not both sticky and
    world-writable (the rule protects only such shared folders), or the folder's owner owns
    the link.  In a sticky world-writable folder every user can create names but not remove or
    rename other users' entries; a link there owned by somebody else is exactly the planted
    link the rule refuses (root is not exempt: ``CAP_DAC_OVERRIDE`` does not bypass it)."""
    if link.st_uid == euid:
        return True
    shared = stat.S_ISVTX | stat.S_IWOTH
    if folder.st_mode & shared != shared:
        return True
    return link.st_uid == folder.st_uid


def real_target(path: str | os.PathLike, *, name: str = "path") -> Path:
    """``os.path.realpath(path)``, following each symlink on the way only where
    :func:`follow_allowed` permits (the kernel's protected-symlinks rule).

    Components that do not exist are kept as written (as ``os.path.realpath`` does).

    Raises:
        ParameterError: (``name``) a symlink on the way sits in a sticky world-writable folder
            and is owned neither by the caller nor by the folder's owner, or there are more than
            :data:`MAX_SYMLINKS` links (a loop).
    """
    geteuid = getattr(os, "geteuid", None)
    if geteuid is None:  # pragma: no cover - not POSIX: no symlink ownership to check
        return Path(os.path.realpath(path))
    euid = geteuid()
    pending = os.fspath(os.path.abspath(path)).split(os.sep)[::-1]
    done = os.sep
    links = 0
    while pending:
        part = pending.pop()
        if part in ("", "."):
            continue
        if part == "..":
            done = os.path.dirname(done)
            continue
        here = os.path.join(done, part)
        try:
            st = os.lstat(here)
        except OSError:  # missing (or unreadable): the rest is kept as written
            done = here
            continue
        if not stat.S_ISLNK(st.st_mode):
            done = here
            continue
        folder = os.stat(done)
        if not follow_allowed(st, folder, euid):
            raise ParameterError(name, f"{path}: {here} is a symlink owned by uid {st.st_uid} in the sticky "
                                       f"world-writable folder {done} (owned by uid {folder.st_uid}); refusing to "
                                       "follow it (the kernel's protected-symlinks rule); give the real path")
        links += 1
        if links > MAX_SYMLINKS:
            raise ParameterError(name, f"{path}: too many levels of symbolic links")
        to = os.readlink(here)
        if os.path.isabs(to):
            done = os.sep
        pending.extend(to.split(os.sep)[::-1])
    return Path(done)


def resolve_target(path: str | os.PathLike, *, name: str = "path") -> Path:
    """The regular file an output ``path`` designates: symlinks followed, non-regular files refused.

    Args:
        path: the output path as given.
        name: the option or parameter named in an error.

    Returns:
        The resolved path (:func:`real_target`); it may not exist yet.

    Raises:
        ParameterError: (``name``) the path, or what a symlink resolves to, exists and is no
            regular file (a device, FIFO, socket or directory), or a symlink on the way is one the
            kernel's protected-symlinks rule would not follow (:func:`follow_allowed`).
    """
    if str(path) == "":
        raise ParameterError(name, "empty path")
    real = real_target(path, name=name)
    try:
        st = os.stat(real)
    except FileNotFoundError:
        return real
    except OSError as exc:
        raise ParameterError(name, f"{path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        via = f" (a symlink to {real})" if str(real) != os.path.abspath(path) else ""
        raise ParameterError(name, f"{path}{via} is {_kind(st.st_mode)}; darrm writes only regular files "
                                   "(give a file path)")
    return real


def check_target(path: str | os.PathLike, *, name: str = "path") -> Path:
    """:func:`resolve_target`, and a file can really be created in its folder (probed with a
    temporary file, removed at once): refuses ``/proc``, ``/sys`` and read-only folders up front.

    Raises:
        ParameterError: (``name``) as :func:`resolve_target`, or no file can be created there.
    """
    real = resolve_target(path, name=name)
    try:
        fd, tmp = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.", suffix=".tmp")
    except OSError as exc:
        raise ParameterError(name, f"{path}: cannot create a file in {real.parent}: "
                                   f"{exc.strerror or exc}") from None
    os.close(fd)
    os.unlink(tmp)
    return real


def atomic_write_bytes(path: str | os.PathLike, data: bytes, *, name: str = "path") -> None:
    """Write ``data`` to ``path`` atomically, by the target rule of this module.

    Raises:
        ParameterError: (``name``, or the command's option for ``path``: :func:`option_for`)
            another process is writing ``path`` (:mod:`darrm.locking`), the target is no regular
            file (:func:`resolve_target`), or the write fails for lack of room or an I/O error
            (ENOSPC, EDQUOT, EFBIG, EIO); the target is then unchanged.
    """
    real = resolve_target(path, name=name)
    real.parent.mkdir(parents=True, exist_ok=True)
    with claim(name, real) as c:
        real = resolve_target(real, name=name)  # re-checked under the claim
        _sweep_stale(real, 0.0 if c.fresh else STALE_AFTER_S)
        c.fresh = False
        try:
            _write(real, data, name)
        except OSError as exc:
            if exc.errno not in FULL_WRITE_ERRNOS:
                raise
            raise ParameterError(option_for(real, name), f"{path}: cannot write it: {exc.strerror or exc}; nothing "
                                                         "was written (an existing file is unchanged)") from None


#: a write that fails for lack of room (a full disk, a quota, ``RLIMIT_FSIZE``) or an I/O error:
#: refused naming the option, the target untouched
FULL_WRITE_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO)


def _write(path: Path, data: bytes, name: str) -> None:
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
            raise
        raise ParameterError(name, f"{path}: cannot create a file in {path.parent}: {exc.strerror or exc}") from None
    try:
        try:
            old = os.stat(path)
        except FileNotFoundError:
            old = None
        if old is None:
            umask = os.umask(0)
            os.umask(umask)
            os.fchmod(fd, 0o666 & ~umask)  # mkstemp creates 0600
        else:  # the replaced file keeps its mode (and, where we may, its owner)
            if (old.st_uid, old.st_gid) != (os.getuid(), os.getgid()):
                try:
                    os.fchown(fd, old.st_uid, old.st_gid)
                except OSError:
                    pass
            os.fchmod(fd, stat.S_IMODE(old.st_mode) & 0o777)
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
    _fsync_dir(path.parent)


def _fsync_dir(folder: Path) -> None:
    """fsync a folder so a rename in it is durable (POSIX; a no-op where folders cannot be opened
    or fsynced, e.g. Windows and some network file systems)."""
    try:
        dfd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EBADF):
            raise
    finally:
        os.close(dfd)


def atomic_write_json(path: str | os.PathLike, obj: object, *, name: str = "path") -> None:
    """JSON (indented, trailing newline), written atomically."""
    atomic_write_bytes(path, (json.dumps(obj, indent=2, sort_keys=False) + "\n").encode(), name=name)
