"""How much memory this process may still use: the smallest of the machine, its cgroup and ulimit.

Solves and certificates estimate their peak memory before any work and refuse what cannot fit
(a ``ParameterError`` naming the parameter), instead of being killed mid-sweep.  This module
answers the other half of that comparison; callers read :func:`available_memory` through the
module (``resources.available_memory()``) so that tests can simulate a small machine.
"""

from __future__ import annotations

import os

#: a cgroup memory limit at or above this is "no limit" (cgroup v1 writes 2^63 − 4096 for none)
UNLIMITED_BYTES = 1 << 60


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read()
    except (OSError, UnicodeDecodeError):
        return None


def _meminfo_available(meminfo: str = "/proc/meminfo") -> int | None:
    """MemAvailable of ``/proc/meminfo`` in bytes (the whole machine's), None if unknown."""
    text = _read(meminfo)
    for line in (text or "").splitlines():
        if line.startswith("MemAvailable:"):
            try:
                return int(line.split()[1]) * 1024
            except (IndexError, ValueError):
                return None
    return None


def _cgroup_dirs(root: str, rel: str) -> list[str]:
    """The cgroup folder ``rel`` under the mount ``root`` and its ancestors up to ``root`` (a limit
    set on any of them applies); only ``root`` when ``rel`` is not visible there (a namespace)."""
    parts = [p for p in rel.split("/") if p and p not in (".", "..")]
    dirs = [os.path.join(root, *parts[:i]) for i in range(len(parts), 0, -1)]
    return [d for d in dirs if os.path.isdir(d)] + [root]


def _cgroup_available(root: str = "/sys/fs/cgroup", self_cgroup: str = "/proc/self/cgroup") -> int | None:
    """Smallest (limit − usage) of this process's memory cgroup and its ancestors, in bytes: cgroup
    v2 ``memory.max`` − ``memory.current``, v1 ``memory.limit_in_bytes`` − ``memory.usage_in_bytes``;
    None when no limit is set ("max", or :data:`UNLIMITED_BYTES` and above) or nothing is readable."""
    text = _read(self_cgroup) or ""
    v2 = v1 = None
    for line in text.splitlines():
        fields = line.split(":", 2)
        if len(fields) == 3 and fields[0] == "0" and fields[1] == "":
            v2 = fields[2]
        elif len(fields) == 3 and "memory" in fields[1].split(","):
            v1 = fields[2]
    candidates = []
    if v2 is not None:
        candidates += [(d, "memory.max", "memory.current") for d in _cgroup_dirs(root, v2)]
    if v1 is not None:
        mount = os.path.join(root, "memory")
        candidates += [(d, "memory.limit_in_bytes", "memory.usage_in_bytes") for d in _cgroup_dirs(mount, v1)]
    best = None
    for d, limit_file, usage_file in candidates:
        limit, usage = _read(os.path.join(d, limit_file)), _read(os.path.join(d, usage_file))
        try:
            lim, use = int((limit or "").strip()), int((usage or "").strip())
        except ValueError:  # "max", missing, unreadable
            continue
        if lim >= UNLIMITED_BYTES:
            continue
        left = max(0, lim - use)
        best = left if best is None else min(best, left)
    return best


def _address_space_available(status: str = "/proc/self/status") -> int | None:
    """RLIMIT_AS's soft limit minus this process's address space now (VmSize), in bytes; None
    without a finite limit (or where the ``resource`` module does not exist)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY or soft < 0:
        return None
    used = 0
    for line in (_read(status) or "").splitlines():
        if line.startswith("VmSize:"):
            try:
                used = int(line.split()[1]) * 1024
            except (IndexError, ValueError):
                used = 0
    return max(0, soft - used)


def available_memory() -> int | None:
    """Bytes of memory this process may still use now, None if unknown: the smallest of the
    machine's MemAvailable (``/proc/meminfo``), what its memory cgroup (and its ancestors) have
    left below their limit, and what ``RLIMIT_AS`` (``ulimit -v``) leaves above its current address
    space.  A container or a ulimit is the limit that kills a process first (seen at K = 201,
    Δ > 0 under a 4 GB limit ran into MemoryError although the machine had memory to spare)."""
    found = [v for v in (_meminfo_available(), _cgroup_available(), _address_space_available()) if v is not None]
    return min(found) if found else None


#: the memory limit assumed where neither the caller nor the machine says one (no /proc, no cgroup)
FALLBACK_LIMIT_BYTES = 8 * 2**30


def memory_limit(max_memory: float | None) -> float:
    """The bytes a refusal up front compares an estimate with: ``max_memory`` when the caller gave
    one (it may exceed what is available: the caller's choice), else :func:`available_memory`
    (read through the module, so tests can simulate a small machine), else
    :data:`FALLBACK_LIMIT_BYTES`."""
    if max_memory is not None:
        return float(max_memory)
    have = available_memory()
    return float(FALLBACK_LIMIT_BYTES if have is None else have)
