"""The labelling session's state file and its append-only journal: reading strictly, never forgetting.

**What the ledger's checksum detects.**  The ``checksum`` key is an *unkeyed* sha256 of the other
keys: it detects accidental damage (a torn or bit-flipped file, a partial hand edit) and nothing
else — whoever can edit the file can recompute it.  It is no protection against a deliberate edit.

**Why a lowered count cannot be loaded silently.**  Every batch is first appended (``O_APPEND``,
fsynced) to the journal ``.<ledger name>.journal`` beside the ledger, *then* the ledger is saved,
*then* the labels are released.  The journal's running total can only grow.  On load the session
charges ``max(ledger queries, journal total)``: a ledger edited down (with a recomputed checksum), an
older copy of the ledger put back, or a crash between the two writes all load with the journal's
count, and a warning says so.  A ledger that names a journal which is missing, unreadable or not
increasing is refused (:class:`SessionFileError`): deleting or rewriting the journal is not a way
to reset the count either.

**Threat model.**  This defends against *accidents and against edits of one file*: a restored
backup of the ledger, a script or a person lowering ``queries``, a copied ledger whose journal did
not come along (refused).  It cannot defend against someone with the owner's own write access who
rewrites the ledger *and* the journal consistently — no file-based scheme can (a keyed MAC needs a
key the same user can read); an owner who must prove their spending to others needs an external
append-only log (e.g. a write-once store).  The journal, like every output, is written only as a
regular file that is not a symlink (:mod:`darrm.atomic` rule; opened ``O_NOFOLLOW``).

**Malformed ledgers** (missing keys, wrong types — a non-string fingerprint, ``"secure": "no"`` —,
duplicate keys, integers of more than 30 digits, deep nesting, a count above :data:`MAX_QUERIES`, a
path that is a device such as ``/dev/zero``) are each one :class:`SessionFileError` line; reads are
bounded (:data:`MAX_LEDGER_BYTES`).
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path

from darrm.atomic import FULL_WRITE_ERRNOS, option_for
from darrm.errors import DarrmError, ParameterError
from darrm.strict_json import StrictJSONError, loads_strict, read_bounded

__all__ = ["MAX_LEDGER_BYTES", "MAX_QUERIES", "SessionFileError", "append_journal", "journal_path",
           "journal_total", "read_ledger"]

#: largest ledger (or journal) read: a batch takes ~80 bytes, so millions of batches fit
MAX_LEDGER_BYTES = 256 << 20
#: most queries a ledger may record: a session's accountant composes that many at most
MAX_QUERIES = 10**9

_NUMBER = (int, float)


class SessionFileError(DarrmError):
    """A session state file is unreadable, corrupt, or belongs to another γ table."""


def journal_path(ledger: Path) -> Path:
    """The journal of a (resolved) ledger path: ``.<name>.journal`` in the same folder."""
    return ledger.parent / f".{ledger.name}.journal"


#: what a journal line records beside the count: the terms the count was charged under
JOURNAL_TERMS = ("accountant", "member_randomness", "budget_epsilon", "delta")


def append_journal(ledger: Path, fingerprint: str, n: int, total: int, terms: dict | None = None) -> None:
    """Append one batch (``n`` queries, running ``total``) to the journal and fsync it, before the
    ledger is saved, with the ``terms`` it was charged under (:data:`JOURNAL_TERMS`: the
    accountant, the member randomness, the budget and δ), so that a ledger edited to other terms
    (fresh to fixed, a larger budget: checksum recomputed) is refused (:func:`journal_terms`).
    Opened ``O_APPEND | O_NOFOLLOW``; a non-regular journal is refused.

    A failed append (a full disk, a quota, ``RLIMIT_FSIZE``, an I/O error) truncates the journal back to
    its length before the append, so that no torn line is left for the next append to extend.

    Raises:
        SessionFileError: the journal is a symlink or no regular file.
        ParameterError: naming ``path`` (or the command's option for it): the append failed for lack of
            room or an I/O error (:data:`darrm.atomic.FULL_WRITE_ERRNOS`); the batch is then refused
            and nothing released.
        OSError: any other failure to write it.
    """
    p = journal_path(ledger)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(p, flags, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SessionFileError(f"{p}: the ledger's journal is a symlink; refusing to follow it") from None
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise SessionFileError(f"{p}: the ledger's journal is not a regular file")
        rec = {"fingerprint": fingerprint, "n": int(n), "total": int(total)}
        rec.update({k: (terms or {})[k] for k in JOURNAL_TERMS if k in (terms or {})})
        data = (json.dumps(rec, separators=(",", ":")) + "\n").encode()
        size = os.fstat(fd).st_size
        try:
            done = 0
            while done < len(data):  # a short write is continued, not left torn
                done += os.write(fd, data[done:])
            os.fsync(fd)
        except OSError as exc:
            try:
                os.ftruncate(fd, size)
            except OSError:
                pass
            if exc.errno not in FULL_WRITE_ERRNOS:
                raise
            raise ParameterError(option_for(p, "path"), f"{p}: cannot append to the ledger's journal: "
                                                        f"{exc.strerror or exc}; the batch was refused and nothing "
                                                        f"released (the journal is unchanged)") from None
    finally:
        os.close(fd)


def journal_total(ledger: Path) -> int | None:
    """The journal's last running total (None: no journal).  A torn last line (a crash while
    appending) is ignored; any other malformed or decreasing line is refused.

    Raises:
        SessionFileError: unreadable, malformed, or not increasing.
    """
    p = journal_path(ledger)
    if not os.path.lexists(p):
        return None
    if os.path.islink(p):
        raise SessionFileError(f"{p}: the ledger's journal is a symlink; refusing to follow it")
    try:
        raw = read_bounded(p, MAX_LEDGER_BYTES)
    except (OSError, StrictJSONError) as exc:
        raise SessionFileError(f"{p}: cannot read the ledger's journal: {exc}") from None
    lines = raw.split(b"\n")
    complete = lines[:-1]  # the part after the last newline is torn (or empty)
    total = 0
    for i, line in enumerate(complete, 1):
        try:
            rec = loads_strict(line)
        except StrictJSONError:
            rec = None
        n = rec.get("n") if isinstance(rec, dict) else None
        new_total = rec.get("total") if isinstance(rec, dict) else None
        if not (type(n) is int and type(new_total) is int and n > 0 and new_total == total + n):
            raise SessionFileError(f"{p}: the ledger's journal is corrupt at line {i} (its totals must grow "
                                   "by each batch); refusing to guess the spent queries")
        total = new_total
    if total > MAX_QUERIES:
        raise SessionFileError(f"{p}: the journal records {total} queries, more than the {MAX_QUERIES} a session "
                               "may answer")
    return total


def journal_terms(ledger: Path) -> dict | None:
    """The terms (:data:`JOURNAL_TERMS`) the journal's batches were charged under (None: no journal,
    or only lines written before terms were recorded).  Every line that records terms must record
    the same ones.

    Raises:
        SessionFileError: unreadable, or two lines with different terms."""
    p = journal_path(ledger)
    if not os.path.lexists(p) or os.path.islink(p):
        return None
    try:
        raw = read_bounded(p, MAX_LEDGER_BYTES)
    except (OSError, StrictJSONError) as exc:
        raise SessionFileError(f"{p}: cannot read the ledger's journal: {exc}") from None
    seen: dict | None = None
    for i, line in enumerate(raw.split(b"\n")[:-1], 1):
        try:
            rec = loads_strict(line)
        except StrictJSONError:
            continue
        if not isinstance(rec, dict) or not any(k in rec for k in JOURNAL_TERMS):
            continue
        terms = {k: rec.get(k) for k in JOURNAL_TERMS}
        if seen is not None and terms != seen:
            raise SessionFileError(f"{p}: the journal's line {i} was charged under other terms ({terms}) than "
                                   f"the lines before ({seen}); refusing to guess which hold")
        seen = terms
    return seen


#: the keys of a ledger and the types their values must have (format /2; /1 lacks the last two)
_SCHEMA: dict[str, tuple[type, ...]] = {
    "format": (str,), "table_fingerprint": (str,), "params": (dict,), "per_query_epsilon": _NUMBER,
    "per_query_delta": _NUMBER, "budget_epsilon": _NUMBER, "delta": _NUMBER, "queries": (int,),
    "secure": (bool,), "checksum": (str,),
}
_SCHEMA_2: dict[str, tuple[type, ...]] = {"member_randomness": (str,), "batches": (list,)}


def read_ledger(path: Path, formats: tuple[str, ...]) -> dict:
    """The ledger at ``path``, read strictly and bounded, its keys of the right types.

    Raises:
        SessionFileError: not a regular file, too large, not strict JSON (:mod:`darrm.strict_json`),
            another format, a missing key or a value of the wrong type, or more than
            :data:`MAX_QUERIES` queries.
    """
    try:
        raw = read_bounded(path, MAX_LEDGER_BYTES)
        state = loads_strict(raw)
    except OSError as exc:
        raise SessionFileError(f"{path}: cannot read the session state: {exc.strerror or exc}") from None
    except StrictJSONError as exc:
        raise SessionFileError(f"{path}: not a session state file: {exc}") from None
    if not isinstance(state, dict) or state.get("format") not in formats:
        raise SessionFileError(f"{path}: not a {formats[-1]} file")
    schema = dict(_SCHEMA, **(_SCHEMA_2 if state["format"] == formats[-1] else {}))
    missing = [k for k in schema if k not in state]
    if missing:
        raise SessionFileError(f"{path}: the session state lacks the keys {missing}")
    for k, types in schema.items():
        val = state[k]
        if not isinstance(val, types) or (isinstance(val, bool) and bool not in types):
            raise SessionFileError(f"{path}: {k} must be {' or '.join(t.__name__ for t in types)}, "
                                   f"got {type(val).__name__}")
    if not 0 <= state["queries"] <= MAX_QUERIES:
        raise SessionFileError(f"{path}: queries must be an integer in [0, {MAX_QUERIES}], got {state['queries']}")
    if "journal" in state and not isinstance(state["journal"], bool):
        raise SessionFileError(f"{path}: journal must be true or false")
    return state
