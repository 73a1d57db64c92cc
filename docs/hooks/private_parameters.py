"""Private parameters stay out of the API reference's signatures.

A few constructors take keyword arguments that only the class itself passes (a session resumed
from its journal: ``LabellingSession(..., _queries=..., _resume=...)``); their names start with an
underscore, like the private names the reference leaves out (``filters`` in mkdocs.yml).  As a
griffe extension (loaded by mkdocstrings, mkdocs.yml), :class:`PrivateParameters` removes every
such parameter from the signature griffe reads, so the reference shows what a user may pass.
``tests/test_docs_site.py`` checks the rendered ``LabellingSession``.
"""

from __future__ import annotations

from typing import Any

import griffe


def is_private(name: str) -> bool:
    """``_x`` is private; ``__x__`` (a dunder) and ``_`` alone are not parameters a user reads as private."""
    return name.startswith("_") and not name.startswith("__") and name != "_"


class PrivateParameters(griffe.Extension):
    """Remove the private parameters of every function and method griffe loads."""

    def on_function_instance(self, *, func: griffe.Function, **kwargs: Any) -> None:
        for name in [p.name for p in func.parameters if is_private(p.name)]:
            del func.parameters[name]
