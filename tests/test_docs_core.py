"""The Python examples of the README, docs/solving.md and docs/tutorial.md run and print what their comments say."""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", ROOT / "docs" / "solving.md", ROOT / "docs" / "tutorial.md"]


def _blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), re.S)


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
            expected = [c.strip() for c in re.findall(r"^print\(.*\)[ \t]+#[ \t]*(.+)$", block, re.M)]
            assert printed == expected, (path.name, block[:80])
    finally:
        os.chdir(here)
