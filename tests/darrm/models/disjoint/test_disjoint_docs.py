"""The Python examples of docs/disjoint.md run and print what their comments say."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[4] / "docs" / "disjoint.md"


def test_disjoint_docs_examples_print_their_comments():
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 6
    for block in blocks:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(compile(block, str(DOC), "exec"), {})  # noqa: S102 - our own documentation
        printed = buf.getvalue().splitlines()
        expected = [c.strip() for c in re.findall(r"^print\(.*\)[ \t]+#[ \t]*(.+)$", block, re.M)]
        assert expected and len(printed) == len(expected)
        assert printed == expected
