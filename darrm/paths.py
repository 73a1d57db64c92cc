"""Output paths checked before any work: usable, and never one of the inputs.

A command that computes for minutes and then fails to write its result, or writes it over
its own input, loses data.  :func:`check_outputs` (files) and :func:`check_output_dirs`
(output folders, e.g. ``darrm-experiments … --out DIR --cache-dir DIR``) run first and raise a
one-line :class:`~darrm.errors.ParameterError` naming the option.

Inside :func:`hold_outputs` (every command line runs in one) the checked outputs are also
claimed (:mod:`darrm.locking`) until the command ends: a second command writing the same file
is refused before it computes anything, instead of overwriting the first one's result.
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path

from .atomic import name_output, naming_outputs, real_target
from .errors import ParameterError
from .locking import claim

_scope: contextvars.ContextVar[ExitStack | None] = contextvars.ContextVar("darrm_output_claims", default=None)


@contextmanager
def hold_outputs() -> Iterator[None]:
    """Outputs checked inside this block stay claimed until it ends (one command's run), and a
    write to one of them that fails names their option (:func:`darrm.atomic.option_for`)."""
    with ExitStack() as stack:
        stack.enter_context(naming_outputs())
        token = _scope.set(stack)
        try:
            yield
        finally:
            _scope.reset(token)


def _hold(name: str, path: Path) -> None:
    stack = _scope.get()
    if stack is not None:
        stack.enter_context(claim(name, path))
    name_output(name, path)

PathLike = str | os.PathLike


def _same(a: Path, b: Path) -> bool:
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:  # pragma: no cover - races
        return False


def check_writable(name: str, path: PathLike) -> Path:
    """``path`` can be written atomically: its folder exists and a file can be created there, and
    it is (or a symlink resolves to) no existing non-regular file (:func:`darrm.atomic.check_target`)."""
    from .atomic import check_target, resolve_target

    p = Path(path)
    if str(path) == "":
        raise ParameterError(name, "empty path")
    if p.is_dir():
        raise ParameterError(name, f"{path} is a directory; give a file path")
    resolve_target(p, name=name)
    parent = Path(os.path.abspath(p)).parent
    if not parent.exists():
        raise ParameterError(name, f"{path}: directory {parent} does not exist")
    if not parent.is_dir():
        raise ParameterError(name, f"{path}: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ParameterError(name, f"{path}: directory {parent} is not writable")
    check_target(p, name=name)
    return p


def check_output_dir(name: str, path: PathLike, *, hold: bool = True) -> Path:
    """``path`` can be an output folder: not empty, not an existing file, no symlink on the way that
    the kernel's protected-symlinks rule would not follow (:func:`darrm.atomic.real_target`), and
    its nearest existing ancestor is a writable folder (the command creates the missing levels).
    With ``hold`` (the default) it is claimed for the command's run (:func:`hold_outputs`); a folder
    that runs may share (a content-keyed cache, whose files are each written atomically under their
    own claim) is checked with ``hold=False``."""
    if str(path) == "":
        raise ParameterError(name, "empty path; give a folder")
    p = Path(path)
    real_target(p, name=name)  # a planted symlink on the way is refused now (darrm.atomic's target rule)
    if p.exists() and not p.is_dir():
        raise ParameterError(name, f"{path} exists and is not a directory")
    anc = Path(os.path.abspath(p))
    while not anc.exists():
        anc = anc.parent
    if not anc.is_dir():
        raise ParameterError(name, f"{path}: {anc} is not a directory")
    if not os.access(anc, os.W_OK | os.X_OK):
        raise ParameterError(name, f"{path}: directory {anc} is not writable")
    if hold and (anc == Path(os.path.abspath(p)) or anc == Path(os.path.abspath(p)).parent):
        _hold(name, p)  # the lock file goes next to the folder: its parent must exist
    return p


def check_outputs(outputs: Mapping[str, PathLike | None], inputs: Mapping[str, PathLike | None] = {}) -> None:
    """Every given output is writable, differs from every input and from the other outputs.

    Args:
        outputs: option name → path (None: option not given).
        inputs: option name → path read by the command.
    """
    outs = {k: Path(v) for k, v in outputs.items() if v is not None}
    ins = {k: Path(v) for k, v in inputs.items() if v is not None}
    for name, p in outs.items():
        check_writable(name, p)
        for iname, ip in ins.items():
            if _same(p, ip):
                raise ParameterError(
                    name, f"{p} is the same file as the input {iname} ({ip}); refusing to overwrite it"
                )
    names = list(outs)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            if _same(outs[a], outs[b]):
                raise ParameterError(b, f"{outs[b]} is the same file as the {a} output; give two different paths")
    for name, p in outs.items():
        _hold(name, p)


def check_input_dir(name: str, path: PathLike) -> Path:
    """``path`` is an existing directory this process can list (an input folder given explicitly):
    a folder without read or search permission is refused now, not after minutes of set-up."""
    p = Path(path)
    if str(path) == "" or not p.is_dir():
        raise ParameterError(name, f"{path!s}: no such directory" if not p.exists() or str(path) == ""
                             else f"{path}: not a directory")
    try:  # the effective ids decide, as for the reads to come (os.access asks for the real ones)
        with os.scandir(p) as entries:
            next(entries, None)  # read permission
        os.stat(p / ".")  # search permission
    except OSError as exc:
        raise ParameterError(name, f"{path}: cannot read the folder: {exc.strerror or exc}") from None
    return p


def check_output_dirs(outputs: Mapping[str, PathLike | None], inputs: Mapping[str, PathLike | None] = {}, *,
                      shared: tuple[str, ...] = ()) -> None:
    """Every given output folder is usable (:func:`check_output_dir`; those named in ``shared`` are not
    claimed), every given input folder exists (:func:`check_input_dir`), and no output folder is an
    input folder or another output's."""
    outs = {k: check_output_dir(k, v, hold=k not in shared) for k, v in outputs.items() if v is not None}
    ins = {k: check_input_dir(k, v) for k, v in inputs.items() if v is not None}
    for name, p in outs.items():
        for iname, ip in ins.items():
            if _same(p, ip):
                raise ParameterError(name, f"{p} is the input folder {iname} ({ip}); give a separate output folder")
    names = list(outs)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            if _same(outs[a], outs[b]):
                raise ParameterError(b, f"{outs[b]} is the same folder as {a}; give two different folders")
