"""The table of shuffle bounds in the docs, written from the registry
(:data:`darrm.accounting.shuffle.best.METHODS`).

As an MkDocs hook, :func:`on_page_markdown` replaces the marker ``<!-- darrm:shuffle-methods -->``
in a page by :func:`methods_markdown`: a bound registered in ``accounting/shuffle/best.py`` appears
in the docs without editing them (``tests/accounting/shuffle/test_bound_registry.py`` checks it).
"""

from __future__ import annotations

from typing import Any

MARKER = "<!-- darrm:shuffle-methods -->"


def methods_markdown() -> str:
    """A Markdown table: every registered bound's name, kind, randomizers and notes."""
    from darrm.accounting.shuffle.best import METHODS

    rows = ["| method | kind | randomizer | assumptions, source, validity |", "|---|---|---|---|"]
    for m in METHODS:
        rows.append(f"| `{m.name}` | {m.kind} | {m.randomizers or '—'} | {m.notes or '—'} |")
    return "\n".join(rows)


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """MkDocs hook: the marker becomes the table of shuffle bounds."""
    return markdown.replace(MARKER, methods_markdown()) if MARKER in markdown else markdown
