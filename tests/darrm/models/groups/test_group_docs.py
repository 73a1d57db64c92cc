"""The Python example of docs/groups.md runs and prints what its comments say."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[4] / "docs" / "groups.md"


def test_groups_docs_example_prints_its_comments():
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 1
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(blocks[0], str(DOC), "exec"), {})  # noqa: S102 - our own documentation
    expected = [c.strip() for c in re.findall(r"^print\(.*\)[ \t]+#[ \t]*(.+)$", blocks[0], re.M)]
    assert expected and buf.getvalue().splitlines() == expected
