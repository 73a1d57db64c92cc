"""Lazy facades: a package's public names imported on first use (PEP 562).

``import darrm`` used to import the whole core (numpy, scipy.stats, the solvers) before the
command line could even print its help.  A facade built with :func:`lazy_exports` binds each
public name to the module that defines it and imports that module the first time the name is
read (then caches it in the package's namespace), so ``from darrm import solve`` and
``darrm.solve`` behave exactly as before while ``darrm --help`` imports almost nothing.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def lazy_exports(package: str, namespace: dict[str, Any], exports: Mapping[str, str],
                 public: Iterable[str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package`` whose public names come from ``exports``.

    Args:
        package: the package's ``__name__`` (relative module paths are resolved against it).
        namespace: the package's ``globals()``; a resolved name is stored there, so the lookup
            runs once per name.
        exports: public name → ``"module"`` or ``"module:attribute"`` (attribute defaults to the
            name), e.g. ``{"FAMILIES": ".api:FAMILIES"}``.
        public: the package's ``__all__``; it must list exactly the lazily exported names plus
            those already bound in ``namespace`` (checked here, so the two cannot drift apart).
    """
    missing = sorted(set(public) - set(exports) - set(namespace))
    extra = sorted(set(exports) - set(public))
    if missing or extra:
        raise ImportError(f"{package}: __all__ and the lazy export table differ (missing {missing}, extra {extra})")

    def __getattr__(name: str) -> Any:
        target = exports.get(name)
        if target is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attr = target.partition(":")
        value = getattr(importlib.import_module(module, package), attr or name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__
