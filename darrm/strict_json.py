"""Strict, bounded JSON reading for the files darrm reads back (γ files, ledgers).

Python's :func:`json.loads` accepts what a hand-edited or hostile file can hold and what darrm
must never act on silently:

* duplicate keys — the last one wins, while another reader (or a human) sees the first: refused;
* integers of any length — one with more than 4,300 digits raises a bare ``ValueError``, one
  ≥ 10³⁰⁹ overflows to an ``OverflowError`` when used as a float: integers longer than
  :data:`MAX_INT_DIGITS` digits are refused;
* floats that overflow (``1e400`` → ``inf``) and the constants ``NaN``/``Infinity``: kept here as
  non-finite floats, for the caller's own field-naming check;
* deep nesting — thousands of levels raise ``RecursionError`` in the parser or in any later
  recursive walk: documents nested deeper than :data:`MAX_DEPTH` are refused;
* unbounded size — :func:`read_bounded` reads at most a given number of bytes, so a path that is
  (or links to) ``/dev/zero`` or a growing FIFO cannot exhaust memory.

Every refusal is a :class:`StrictJSONError` (a ``ValueError``) whose message says what is wrong;
the callers turn it into their own one-line error (:class:`~darrm.errors.GammaFileError`,
``SessionFileError``).
"""

from __future__ import annotations

import json
import os
import stat
from typing import BinaryIO

__all__ = ["MAX_DEPTH", "MAX_INT_DIGITS", "StrictJSONError", "loads_strict", "open_regular", "read_bounded"]

#: longest integer literal accepted (digits, sign excluded): far below 10³⁰⁸ and Python's 4,300
MAX_INT_DIGITS = 30
#: deepest nesting of objects and arrays accepted (darrm's own files nest at most 4 levels)
MAX_DEPTH = 64


class StrictJSONError(ValueError):
    """A JSON document darrm refuses to read (malformed, duplicate keys, huge integers, too deep)."""


def _pairs(pairs: list[tuple[str, object]]) -> dict:
    d: dict = {}
    for k, v in pairs:
        if k in d:
            raise StrictJSONError(f"duplicate key {k!r} (the file is ambiguous)")
        d[k] = v
    return d


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise StrictJSONError(f"an integer with {len(text.lstrip('-'))} digits (at most {MAX_INT_DIGITS} accepted)")
    return int(text)


def _depth_ok(obj: object) -> bool:
    """Whether ``obj`` nests objects/arrays at most :data:`MAX_DEPTH` deep (iterative: no recursion)."""
    stack: list[tuple[object, int]] = [(obj, 1)]
    while stack:
        o, depth = stack.pop()
        if isinstance(o, (dict, list)):
            if depth > MAX_DEPTH:
                return False
            stack.extend((c, depth + 1) for c in (o.values() if isinstance(o, dict) else o))
    return True


def loads_strict(raw: bytes | str) -> object:
    """Parse JSON refusing duplicate keys, integers over :data:`MAX_INT_DIGITS` digits and nesting
    deeper than :data:`MAX_DEPTH` (non-finite floats are returned as such).

    Raises:
        StrictJSONError: invalid UTF-8 or JSON, or any of the refusals above.
    """
    try:
        obj = json.loads(raw, object_pairs_hook=_pairs, parse_int=_int)
    except StrictJSONError:
        raise
    except RecursionError:
        raise StrictJSONError(f"nested more than {MAX_DEPTH} levels deep") from None
    except (UnicodeDecodeError, ValueError) as exc:  # JSONDecodeError is a ValueError
        raise StrictJSONError(f"not a valid JSON document ({exc})") from None
    if not _depth_ok(obj):
        raise StrictJSONError(f"nested more than {MAX_DEPTH} levels deep")
    return obj


def open_regular(path: str | os.PathLike) -> BinaryIO:
    """Open the regular file at ``path`` for reading (symlinks followed), refusing anything else.

    Opened ``O_NONBLOCK``, so a FIFO without a writer is refused at once instead of blocking the
    reader forever, and checked with ``fstat`` on the very descriptor read afterwards (no race
    between the check and the read): a device such as ``/dev/zero``, which would feed a reader
    without end, a FIFO, a socket or a folder is refused.

    Args:
        path: the file to read; symlinks are followed.

    Returns:
        The open binary file (the caller closes it, e.g. in a ``with`` block).

    Raises:
        StrictJSONError: ``path`` is no regular file.
        OSError: it cannot be opened.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:  # a socket cannot be opened at all (ENXIO): say what it is
        try:
            regular = stat.S_ISREG(os.stat(path).st_mode)
        except OSError:
            regular = True
        if not regular:
            raise StrictJSONError("not a regular file (a device, FIFO, socket or folder)") from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise StrictJSONError("not a regular file (a device, FIFO, socket or folder)")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bounded(path: str | os.PathLike, limit: int) -> bytes:
    """The bytes of the regular file at ``path`` (symlinks followed), at most ``limit`` of them.

    Raises:
        StrictJSONError: ``path`` is no regular file (a device such as ``/dev/zero``, a FIFO, a
            folder; :func:`open_regular`), or it holds more than ``limit`` bytes.
        OSError: it cannot be opened or read.
    """
    with open_regular(path) as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise StrictJSONError(f"larger than the {limit} bytes such a file can need")
    return data
