"""The documentation site builds with warnings as errors, documents every public name, and reads
the same offline: no external script, formulas written as MathML, a page per notebook.

``mkdocs build --strict`` (mkdocs.yml at the repository root) into a temporary folder: a broken
link, a missing page, a docstring griffe cannot parse, an object mkdocstrings cannot find or a
formula math-core cannot convert fails the build.  The `docs` extra (part of `all`) brings the
tools; without them the test is skipped, saying so.  Neither the build nor a reader needs a network.
"""

from __future__ import annotations

import html.parser
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import darrm
import darrm.accounting

ROOT = Path(__file__).resolve().parents[1]
GUIDES = ("examples", "solving", "disjoint", "groups", "accounting", "shuffle", "experiments", "simulations")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    for module in ("mkdocs", "mkdocstrings", "mkdocstrings_handlers.python", "material", "mkdocs_jupyter", "math_core"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (pip install -e '.[docs]')")
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # mkdocs-material's banner about its successor
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml"),
                        "--site-dir", str(out)], cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return out


def test_the_site_has_the_home_page_the_tutorial_and_every_guide(site):
    for page in ("index.html", "tutorial/index.html", *(f"{g}/index.html" for g in GUIDES)):
        assert (site / page).is_file(), page
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "private majority ensembling" in home and "Lemma 5.1" in home  # README's intro and paper map


@pytest.mark.parametrize("module,page", [(darrm, "api/darrm/index.html"),
                                         (darrm.accounting, "api/accounting/index.html")],
                         ids=["darrm", "darrm.accounting"])
def test_every_public_name_of_the_facades_is_documented(site, module, page):
    """mkdocstrings renders a member only when it has a docstring: an anchor means a documented name."""
    ids = set(re.findall(r'id="([^"]+)"', (site / page).read_text(encoding="utf-8")))
    missing = [name for name in module.__all__ if f"{module.__name__}.{name}" not in ids]
    assert not missing, f"{module.__name__}: no documentation for {missing}"


@pytest.mark.parametrize("modname,page", [("darrm.models.disjoint", "api/disjoint/index.html"),
                                          ("darrm.models.groups", "api/groups/index.html"),
                                          ("darrm.models.shard_groups", "api/shard_groups/index.html"),
                                          ("darrm.models.weighted_shards", "api/weighted_shards/index.html"),
                                          ("darrm.accounting.shuffle", "api/shuffle/index.html"),
                                          ("darrm.experiments.data.loader", "api/experiments/index.html"),
                                          ("darrm.experiments.releases", "api/experiments/index.html")])
def test_every_public_callable_of_the_sub_packages_a_user_imports_is_documented(site, modname, page):
    """The reference covers the sub-packages too (their callables; constants need no page)."""
    module = importlib.import_module(modname)
    ids = set(re.findall(r'id="([^"]+)"', (site / page).read_text(encoding="utf-8")))
    public = [n for n in module.__all__ if callable(getattr(module, n))]
    missing = [n for n in public if f"{modname}.{n}" not in ids]
    assert public and not missing, f"{modname}: no documentation for {missing}"
    assert not [i for i in ids if re.search(r"\._[^_]", i)], "a private name is in the reference"


def test_the_guides_formulas_are_mathml_written_at_build_time(site):
    """docs/hooks/mathml.py turns every formula arithmatex marks into MathML: no script draws it."""
    for page, blocks in (("tutorial", 2), ("solving", 1), ("accounting", 2)):
        text = (site / page / "index.html").read_text(encoding="utf-8")
        assert text.count('<div class="arithmatex"><math display="block">') == blocks, page
        assert re.search(r"<m(frac|under|sub|sup)\b", text), page  # structure, not a string of TeX
    assert not (site / "javascripts" / "mathjax.js").exists()


EXTERNAL = re.compile(r"^(https?:)?//", re.I)


class _Page(html.parser.HTMLParser):
    """The external resources a page loads, and its visible text outside code, maths and scripts."""

    SKIP = {"script", "style", "pre", "code", "math", "svg", "textarea"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.external: list[str] = []
        self.inline_script_urls: list[str] = []
        self.text: list[str] = []
        self._skip: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "script" and EXTERNAL.match(a.get("src") or ""):
            self.external.append(f"<script src={a['src']}>")
        if tag == "link" and "stylesheet" in (a.get("rel") or "") and EXTERNAL.match(a.get("href") or ""):
            self.external.append(f"<link stylesheet {a['href']}>")
        if tag in ("img", "iframe") and EXTERNAL.match(a.get("src") or ""):
            self.external.append(f"<{tag} src={a['src']}>")
        if tag in self.SKIP:
            self._skip.append(tag)
        self._in_script = tag == "script"

    def handle_endtag(self, tag):
        if self._skip and self._skip[-1] == tag:
            self._skip.pop()
        self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.inline_script_urls += re.findall(r"""import\(\s*["'](?:https?:)?//[^"']+""", data)
        elif not self._skip:
            self.text.append(data)


def _pages(site: Path) -> dict[str, _Page]:
    out = {}
    for path in sorted(site.rglob("*.html")):
        parsed = _Page()
        parsed.feed(path.read_text(encoding="utf-8"))
        out[str(path.relative_to(site))] = parsed
    return out


def test_no_page_loads_a_script_or_a_stylesheet_from_the_network(site):
    """Offline, behind a firewall or from a saved copy, a reader sees the whole page."""
    pages = _pages(site)
    assert len(pages) > 20
    found = {name: p.external + p.inline_script_urls for name, p in pages.items() if p.external or p.inline_script_urls}
    assert not found, found


#: display/inline delimiters, ``$…$`` holding a TeX command, or a common command on its own
TEX = re.compile(r"\$\$|\\\(|\\\)|\\\[|\\\]|\$[^$\n]*\\[A-Za-z]+[^$\n]*\$"
                 r"|\\(frac|sum|varepsilon|gamma|delta|mathbb|text)\b")


def test_no_page_shows_raw_tex(site):
    """A formula left as TeX (an unconverted mark, ``$…$`` arithmatex missed, a notebook's maths)
    would show its source; code blocks may quote TeX and are not looked at."""
    hits = {name: sorted({m.group(0) for m in TEX.finditer(" ".join(p.text))}) for name, p in _pages(site).items()}
    assert not {k: v for k, v in hits.items() if v}, {k: v for k, v in hits.items() if v}


def test_the_raw_tex_check_sees_tex_and_external_scripts():
    page = _Page()
    page.feed('<p>so $\\varepsilon$ and \\(x\\)</p><code>$$ is fine here</code>'
              '<script src="https://cdn.example/x.js"></script><script>import("//cdn.example/m.mjs")</script>')
    assert TEX.findall(" ".join(page.text)) and "$$" not in " ".join(page.text)
    assert page.external == ["<script src=https://cdn.example/x.js>"] and page.inline_script_urls


def test_every_notebook_is_a_page_with_its_figures_linked_from_the_examples(site):
    names = sorted(p.stem for p in (ROOT / "examples" / "notebooks").glob("*.ipynb"))
    assert len(names) == 4
    examples = (site / "examples" / "index.html").read_text(encoding="utf-8")
    for name in names:
        page = (site / "notebooks" / name / "index.html").read_text(encoding="utf-8")
        assert re.search(r'<img [^>]*src="data:image/png;base64,', page), name
        assert "jp-OutputArea-output" in page and "jp-CodeCell" in page, name
        assert (site / "notebooks" / name / f"{name}.ipynb").is_file(), name  # the download link's file
        assert f'<a href="{name}.ipynb" download>' in page and f"examples/notebooks/{name}.ipynb" in page, name
        assert f'href="../notebooks/{name}/"' in examples and f"examples/notebooks/{name}.ipynb" in examples, name


def test_no_guide_runs_a_list_into_the_paragraph_above_it():
    """Markdown needs a blank line before a list; without it the items render as one paragraph."""
    item = re.compile(r"^(?:[-*]|\d+\.) ")
    before_a_list = r"(?:[-*]|\d+\.) |  |\||<!--|#"  # an item, its continuation, a table, a comment, a title
    found = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        fenced, prev = False, ""
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            if line.startswith("```"):
                fenced = not fenced
            elif not fenced and item.match(line) and prev.strip() and not re.match(before_a_list, prev):
                found.append(f"{page.name}:{n}")
            prev = line
    assert not found, found


def test_the_reference_shows_no_raw_sphinx_role(site):
    """Roles in docstrings (``:func:`solve```) render as links or code (docs/hooks/sphinx_roles.py)."""
    raw = re.compile(r":(func|class|mod|meth|attr|data|exc|obj):")
    hits = {str(p.relative_to(site)): len(raw.findall(p.read_text(encoding="utf-8")))
            for p in site.rglob("*.html")}
    assert not {k: v for k, v in hits.items() if v}, hits
    reference = (site / "api" / "darrm" / "index.html").read_text(encoding="utf-8")
    assert 'href="#darrm.GammaTable"' in reference  # a role became a working link


def test_a_formula_math_core_cannot_write_fails_the_build_naming_it():
    pytest.importorskip("math_core")
    from mkdocs.exceptions import PluginError

    sys.path.insert(0, str(ROOT / "docs" / "hooks"))
    try:
        from mathml import render
    finally:
        sys.path.pop(0)
    html_in = '<p><span class="arithmatex">\\(a &lt; b\\)</span></p><div class="arithmatex">\\[\\tfrac12\\]</div>'
    out = render(html_in)
    assert "<math><mi>a</mi><mo>&lt;</mo><mi>b</mi></math>" in out and '<math display="block">' in out
    with pytest.raises(PluginError, match=r"guide\.md: formula '\\\\nocommand'"):
        render('<div class="arithmatex">\\[\\nocommand\\]</div>', where="guide.md")


def test_the_role_converter_links_only_to_documented_objects():
    sys.path.insert(0, str(ROOT / "docs" / "hooks"))
    try:
        from sphinx_roles import convert
    finally:
        sys.path.pop(0)
    out = convert("A :class:`~darrm.GammaTable` from :func:`solve`; :func:`darrm.privacy.certify.certify`; "
                  ":mod:`darrm.families`", "darrm.api.solve")
    assert out == ("A [`GammaTable`][darrm.GammaTable] from [`solve`][darrm.solve]; "
                   "`darrm.privacy.certify.certify`; `darrm.families`")


def test_the_reference_shows_no_private_parameter(site):
    """``LabellingSession(..., _queries=..., _resume=...)`` is how the class resumes itself; the
    reference shows only what a user passes (docs/hooks/private_parameters.py)."""
    page = (site / "api" / "accounting" / "index.html").read_text(encoding="utf-8")
    start = page.index('id="darrm.accounting.LabellingSession"')
    entry = re.sub(r"<[^>]+>", "", page[start:start + 20_000])
    assert "budget_epsilon" in entry and "member_randomness" in entry
    private = re.compile(r"\b_(?:queries|resume|claim|batches)\b")
    hits = {p.parent.name: private.findall(re.sub(r"<[^>]+>", "", p.read_text(encoding="utf-8")))
            for p in (site / "api").rglob("index.html")}
    assert not {k: v for k, v in hits.items() if v}
