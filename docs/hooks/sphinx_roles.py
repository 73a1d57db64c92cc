"""Sphinx roles in docstrings become links or code in the rendered reference (a griffe extension).

The docstrings use Sphinx's roles (``:func:`solve```, ``:class:`~darrm.GammaTable```), which
``help()`` and IDEs show well but mkdocstrings would print raw, and whose colon can make the
Google-style parser read "A :class:`X` whose …" under *Returns* as a name "A".  Before griffe
parses a docstring, :class:`SphinxRoles` rewrites every role:

* to an autorefs link ``[`X`][darrm.X]`` when the target is the very object a facade
  (``darrm``, ``darrm.accounting``) documents under that name: the link cannot dangle;
* to plain code ``X`` otherwise (``~`` keeps the last component, as in Sphinx).

Only the rendered text changes; the sources keep their roles.  ``tests/test_docs_site.py``
checks that the built HTML holds no role.
"""

from __future__ import annotations

import importlib
import re
from functools import cache
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:func|class|mod|meth|data|attr|exc|obj|const):`(~?)([^`<>]+?)(?:\(\))?`")
FACADES = ("darrm", "darrm.accounting")


@cache
def _facade_objects() -> dict[int, str]:
    """id(object) → the facade path documenting it (``darrm.solve``)."""
    out: dict[int, str] = {}
    for name in reversed(FACADES):  # darrm wins over darrm.accounting for a shared object
        mod = importlib.import_module(name)
        for public in mod.__all__:
            try:
                out[id(getattr(mod, public))] = f"{name}.{public}"
            except AttributeError:  # pragma: no cover - the facade tests catch it
                continue
    return out


@cache
def _resolve(target: str, context: str) -> Any:
    """The object ``target`` names, tried as written and then inside each package of ``context``."""
    parts = context.split(".")
    for cand in [target] + [".".join(parts[:i] + [target]) for i in range(len(parts), 0, -1)]:
        names = cand.split(".")
        for split in range(len(names), 0, -1):  # the longest importable prefix, then attributes
            try:
                obj: Any = importlib.import_module(".".join(names[:split]))
            except Exception:  # noqa: BLE001 - not a module: try a shorter prefix
                continue
            try:
                for attr in names[split:]:
                    obj = getattr(obj, attr)
            except AttributeError:
                break
            return obj
    return None


def convert(text: str, context: str) -> str:
    """``text`` with every Sphinx role replaced (module docstring); ``context`` is the documented
    object's path, against which relative targets are resolved."""
    def one(m: re.Match) -> str:
        tilde, target = m.group(1), m.group(2).strip()
        shown = target.rsplit(".", 1)[-1] if tilde else target
        obj = _resolve(target, context)
        path = _facade_objects().get(id(obj)) if obj is not None else None
        return f"[`{shown}`][{path}]" if path else f"`{shown}`"

    return ROLE.sub(one, text)


class SphinxRoles(griffe.Extension):
    """Rewrite the roles of every docstring griffe loads (see the module docstring)."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None and ":" in obj.docstring.value:
            obj.docstring.value = convert(obj.docstring.value, obj.path)
