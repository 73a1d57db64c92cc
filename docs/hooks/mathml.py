"""The formulas of the site as MathML, written at build time: no script, no network.

pymdownx.arithmatex (generic mode) marks each formula of a page, a guide's or a docstring's, as
``<span class="arithmatex">\\(…\\)</span>`` (inline) or ``<div class="arithmatex">\\[…\\]</div>``
(display).  As an MkDocs hook, :func:`on_page_content` replaces the TeX inside each mark by the
MathML that math-core writes (MathML Core, the subset every current browser draws natively), so a
page shows its formulas offline, from a saved copy or behind a firewall.  A formula math-core
cannot convert fails the build, naming the page and the formula (``tests/test_docs_site.py``
builds with ``--strict`` and checks that no page keeps raw TeX or loads an external script).
"""

from __future__ import annotations

import functools
import html
import re
from typing import Any

from mkdocs.exceptions import PluginError

MARK = re.compile(r'<(span|div) class="arithmatex">\s*\\([(\[])(.*?)\\([)\]])\s*</\1>', re.S)


@functools.cache
def _converter():
    import math_core

    return math_core.LatexToMathML(fancy_error=False)


def tex_to_mathml(tex: str, *, display: bool, where: str = "a page") -> str:
    """One formula as a ``<math>`` element.

    Args:
        tex: the formula's TeX source, without delimiters.
        display: a display formula (``<math display="block">``) rather than an inline one.
        where: what to name in the error (the page).

    Returns:
        The MathML markup.

    Raises:
        PluginError: math-core cannot convert ``tex`` (an unknown command, unbalanced braces).
    """
    import math_core

    try:
        return _converter().convert_with_local_state(tex.strip(), displaystyle=display)
    except math_core.LatexError as e:
        raise PluginError(f"{where}: formula {tex.strip()!r} cannot be written as MathML: {e}") from e


def render(page_html: str, where: str = "a page") -> str:
    """Every arithmatex mark in ``page_html`` with MathML inside instead of TeX."""
    def one(m: re.Match) -> str:
        tag, opening, tex = m.group(1), m.group(2), html.unescape(m.group(3))
        math = tex_to_mathml(tex, display=opening == "[", where=where)
        return f'<{tag} class="arithmatex">{math}</{tag}>'

    return MARK.sub(one, page_html)


def on_page_content(html_text: str, page: Any, **kwargs: Any) -> str:
    """MkDocs hook: the page's formulas become MathML."""
    return render(html_text, where=page.file.src_uri) if "arithmatex" in html_text else html_text
