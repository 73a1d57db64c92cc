"""The notebook pages load nothing from the network.

mkdocs-jupyter renders a notebook with nbconvert's template, whose page head loads MathJax and,
when a notebook draws a Mermaid diagram, mermaid.js from CDNs.  This site writes its formulas as
MathML at build time (``docs/hooks/mathml.py``) and its notebooks draw no diagram, so, as an MkDocs
hook, :func:`on_page_content` removes both loaders from the notebook pages: a reader offline sees
the same page.  ``tests/test_docs_site.py`` fails if any page still names an external script, or
shows raw TeX (a notebook formula would need this hook to convert it first).
"""

from __future__ import annotations

import re
from typing import Any

from mkdocs.exceptions import PluginError

MATHJAX = re.compile(r"<!-- Load mathjax -->.*?<!-- End of mathjax configuration -->", re.S)
MERMAID = re.compile(r'<script type="module">(?:(?!</script>).)*?mermaid(?:(?!</script>).)*</script>', re.S)


def strip_loaders(page_html: str, where: str = "a notebook page") -> str:
    """``page_html`` without the MathJax and mermaid loaders of nbconvert's template.

    Raises:
        PluginError: the page draws a Mermaid diagram, which would then not render.
    """
    if 'class="jp-Mermaid' in page_html:
        raise PluginError(f"{where}: a Mermaid diagram needs mermaid.js, which this site does not load")
    return MERMAID.sub("", MATHJAX.sub("", page_html))


def on_page_content(html_text: str, page: Any, **kwargs: Any) -> str:
    """MkDocs hook: a notebook page (``.ipynb``) without the template's script loaders."""
    return strip_loaders(html_text, page.file.src_uri) if page.file.src_uri.endswith(".ipynb") else html_text
