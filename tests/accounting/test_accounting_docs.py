"""The Python examples of docs/accounting.md run and print what their comments say."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "accounting.md"


def test_docs_examples_run_and_match_their_comments():
    text = DOC.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks
    for block in blocks:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(compile(block, str(DOC), "exec"), {})  # noqa: S102 - our own documentation
        printed = buf.getvalue().split("\n")
        # every `print(...)  # value` line that is not inside a loop must print `value` first
        comments = re.findall(r"^print\(.*\)[ \t]+#[ \t]*(.+)$", block, re.M)
        expected = [re.split(r"\s{2,}", c.strip())[0] for c in comments]
        assert all(expected)
        for value in expected:
            assert any(line.startswith(value) for line in printed), (value, printed)
