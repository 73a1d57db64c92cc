"""The table of member models in the docs, written from the registry (:mod:`darrm.models`).

As an MkDocs hook, :func:`on_page_markdown` replaces the marker ``<!-- darrm:models -->`` in a page
by :func:`models_markdown`: a model registered in ``darrm/models/__init__.py`` appears in the docs
without editing them (``tests/darrm/models/test_member_models.py`` checks it).
"""

from __future__ import annotations

from typing import Any

MARKER = "<!-- darrm:models -->"


def models_markdown() -> str:
    """A Markdown table: every registered model's name, parameters, γ file, guarantee and capabilities."""
    from darrm.models import MEMBER_MODELS

    rows = ["| `--members` | parameters | γ file format | guarantee | certified over | capabilities |",
            "|---|---|---|---|---|---|"]
    for m in MEMBER_MODELS.values():
        caps = ", ".join(f"`{c}`" for c in sorted(m.capabilities)) or "—"
        rows.append(f"| `{m.name}` | `{m.params_type.__name__}` | `{m.gamma_format}` | {m.guarantee} | {m.scope} "
                    f"| {caps} |")
    return "\n".join(rows)


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """MkDocs hook: the marker becomes the table of member models."""
    return markdown.replace(MARKER, models_markdown()) if MARKER in markdown else markdown
