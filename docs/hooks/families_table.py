"""The table of γ families in the docs, written from the registry (:mod:`darrm.families`).

As an MkDocs hook, :func:`on_page_markdown` replaces the marker ``<!-- darrm:families -->`` in a
page by :func:`families_markdown`: a family registered in ``darrm/families.py`` appears in the
docs without editing them (``tests/darrm/test_families.py`` checks it).
"""

from __future__ import annotations

from typing import Any

MARKER = "<!-- darrm:families -->"


def families_markdown() -> str:
    """A Markdown table: every registered family's name, what it is, where the paper has it."""
    from darrm import families

    rows = ["| family | γ | paper | options | members |", "|---|---|---|---|---|"]
    for f in families.REGISTRY.values():
        opts = ", ".join(f"`{o}`" for o in f.options) or "—"
        members = "every member model" if f.members is None else ", ".join(f.members)
        rows.append(f"| `{f.name}` | {f.summary} | {f.reference} | {opts} | {members} |")
    return "\n".join(rows)


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """MkDocs hook: the marker becomes the table of families."""
    return markdown.replace(MARKER, families_markdown()) if MARKER in markdown else markdown
