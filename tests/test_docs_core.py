"""The Python examples of the README, the site's landing page (docs/index.md), docs/solving.md and
docs/tutorial.md run and print what their comments say."""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", ROOT / "docs" / "index.md", ROOT / "docs" / "solving.md", ROOT / "docs" / "tutorial.md"]


def _blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), re.S)


def _expected(block: str) -> list[str]:
    """What each ``print`` of a block says it prints: its trailing comment, or a long output on
    the next line as ``# → output``."""
    lines = block.splitlines()
    out = []
    for i, line in enumerate(lines):
        if line.startswith("print("):
            same = re.search(r"\)[ \t]+#[ \t]*(.+)$", line)
            nxt = re.match(r"#[ \t]*→[ \t]*(.+)$", lines[i + 1]) if i + 1 < len(lines) else None
            assert same or nxt, f"print without the output it shows: {line}"
            out.append((same or nxt).group(1).strip())
    return out


def test_a_print_shows_its_output_on_its_line_or_the_next():
    assert _expected('print(1)  # 1\nprint(22)\n# → 22\nx = 3  # not a print') == ["1", "22"]


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_python_examples_run_and_print_their_comments(path, tmp_path):
    blocks = _blocks(path)
    assert blocks
    here = os.getcwd()
    os.chdir(tmp_path)  # the examples write files
    try:
        scope: dict = {}
        for block in blocks:  # one namespace per document: later blocks reuse earlier names
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                exec(compile(block, str(path), "exec"), scope)  # noqa: S102 - our own documentation
            printed = buf.getvalue().splitlines()
            expected = _expected(block)
            assert printed == expected, (path.name, block[:80])
    finally:
        os.chdir(here)
