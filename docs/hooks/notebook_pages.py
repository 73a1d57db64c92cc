"""The notebook pages load nothing from the network.

mkdocs-jupyter renders a notebook with nbconvert's template, whose page head loads MathJax and,
when a notebook draws a Mermaid diagram, mermaid.js from CDNs.  This site writes its formulas as
MathML at build time (``docs/hooks/mathml.py``) and its notebooks draw no diagram, so, as an MkDocs
hook, :func:`on_page_content` removes both loaders from the notebook pages (a reader offline sees
the same page) and heads each page with its source in the repository and a link to the executed
notebook, which mkdocs-jupyter (``include_source``) copies beside the page.
``tests/test_docs_site.py`` fails if any page still names an external script, or shows raw TeX
(a notebook formula would need this hook to convert it first).
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


def source_line(name: str) -> str:
    """The line that heads a notebook page: where the notebook lives and its executed copy."""
    return (f'<p class="notebook-source">Source: <code>examples/notebooks/{name}</code> · '
            f'<a href="{name}" download>download the executed notebook</a></p>')


def on_page_content(html_text: str, page: Any, **kwargs: Any) -> str:
    """MkDocs hook: a notebook page (``.ipynb``) headed by its source, without the template's loaders."""
    if not page.file.src_uri.endswith(".ipynb"):
        return html_text
    return source_line(page.file.src_uri.rsplit("/", 1)[-1]) + strip_loaders(html_text, page.file.src_uri)
